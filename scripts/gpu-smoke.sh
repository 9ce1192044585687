#!/usr/bin/env bash
# Smoke test of nvml-exporter on a machine with an NVIDIA GPU and driver (never run by the tests).
#
#   scripts/gpu-smoke.sh            # uses/creates .venv; PYTHON=python3.11 to choose the interpreter
#
# Installs the project, starts the exporter on 127.0.0.1 (a free port), waits for /readyz, scrapes
# /metrics twice, checks the core metrics (memory total > 0, temperature 0-120 °C, power > 0,
# device up), prints per-call NVML latencies measured through the same backend the exporter uses,
# then stops the exporter with SIGTERM and checks it exits 0. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -e .

PORT=$("$VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
LOG=$(mktemp)
"$VENV/bin/nvml-exporter" --listen-address "127.0.0.1:$PORT" --log-level info 2>"$LOG" &
PID=$!
cleanup() {
  kill -TERM "$PID" 2>/dev/null || true
  wait "$PID" 2>/dev/null || true
  rm -f "$LOG"
}
trap cleanup EXIT

echo "== nvml-exporter pid $PID on 127.0.0.1:$PORT"
"$VENV/bin/python" - "$PORT" <<'PY'
import statistics
import sys
import time
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from nvml_exporter import nvml
from nvml_exporter.nvml import PynvmlBackend

port = int(sys.argv[1])
base = f"http://127.0.0.1:{port}"


def get(path):
    try:
        with urllib.request.urlopen(base + path, timeout=15) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()
    except OSError:
        return None, ""


deadline = time.monotonic() + 60
while get("/readyz")[0] != 200:
    if time.monotonic() > deadline:
        status, body = get("/metrics")
        sys.exit(f"FAIL: /readyz never became 200 (NVML init failed?)\n{body}")
    time.sleep(0.5)

failures = []
for attempt in (1, 2):
    status, body = get("/metrics")
    if status != 200:
        sys.exit(f"FAIL: /metrics answered {status}")
    values = {}
    for family in text_string_to_metric_families(body):
        for s in family.samples:
            values.setdefault(s.name, []).append((s.labels, s.value))
    print(f"== scrape {attempt}: {sum(len(v) for v in values.values())} samples, "
          f"collector time {values['gpu_exporter_scrape_duration_seconds'][0][1] * 1000:.2f} ms")

    def each(name):
        return values.get(name, [])

    if each("gpu_exporter_nvml_up") != [({}, 1.0)]:
        failures.append("gpu_exporter_nvml_up is not 1")
    if not each("gpu_device_up"):
        failures.append("no GPU reported")
    for labels, v in each("gpu_device_up"):
        if v != 1:
            failures.append(f"GPU {labels['uuid']} is down")
    checks = [
        ("gpu_memory_total_bytes", lambda v: v > 0, "> 0"),
        ("gpu_temperature_celsius", lambda v: 0 <= v <= 120, "in 0-120"),
        ("gpu_power_usage_watts", lambda v: v > 0, "> 0"),
    ]
    for name, ok, want in checks:
        if not each(name):
            failures.append(f"{name} missing")
        for labels, v in each(name):
            mark = "ok" if ok(v) else "FAIL"
            if attempt == 1 or not ok(v):
                print(f"   {mark:4} {name}{{gpu={labels['gpu']}}} = {v:g} (want {want})")
            if not ok(v):
                failures.append(f"{name} gpu={labels['gpu']} = {v:g}, want {want}")
    for labels, v in each("gpu_exporter_collector_errors_total"):
        print(f"   note: {labels} errors = {v:g}")
    if attempt == 1:
        time.sleep(1)

print("== per-call NVML latency (this process, same backend as the exporter; 50 calls each)")
backend = PynvmlBackend()
backend.init()
calls = {
    "device_memory_info_v2": lambda h: backend.device_memory_info_v2(h),
    "device_memory_info_v1": lambda h: backend.device_memory_info_v1(h),
    "device_utilization": lambda h: backend.device_utilization(h),
    "device_temperature_v": lambda h: backend.device_temperature_v(h, nvml.TEMPERATURE_GPU),
    "device_temperature_legacy": lambda h: backend.device_temperature_legacy(h, nvml.TEMPERATURE_GPU),
    "device_power_usage": lambda h: backend.device_power_usage(h),
    "device_enforced_power_limit": lambda h: backend.device_enforced_power_limit(h),
    "device_total_energy_consumption": lambda h: backend.device_total_energy_consumption(h),
    "device_clock(SM)": lambda h: backend.device_clock(h, nvml.CLOCK_SM),
    "device_clock(MEM)": lambda h: backend.device_clock(h, nvml.CLOCK_MEM),
    "device_current_clock_event_reasons": lambda h: backend.device_current_clock_event_reasons(h),
    "device_supported_clock_event_reasons": lambda h: backend.device_supported_clock_event_reasons(h),
    "device_total_ecc_errors": lambda h: backend.device_total_ecc_errors(
        h, nvml.MEMORY_ERROR_CORRECTED, nvml.AGGREGATE_ECC),
    "device_remapped_rows": lambda h: backend.device_remapped_rows(h),
    "device_pcie_replay_counter": lambda h: backend.device_pcie_replay_counter(h),
    "device_mig_mode": lambda h: backend.device_mig_mode(h),
}
print(f"   {'call':40} {'gpu':>3} {'p50 us':>9} {'max us':>9}  result")
for index in range(backend.device_count()):
    handle = backend.device_handle_by_index(index)
    for name, fn in calls.items():
        times, result = [], ""
        for _ in range(50):
            start = time.perf_counter()
            try:
                value = fn(handle)
                result = repr(value)[:40]
            except Exception as exc:  # noqa: BLE001 - report, e.g. NotSupported
                result = f"{type(exc).__name__}"
            times.append((time.perf_counter() - start) * 1e6)
        print(f"   {name:40} {index:>3} {statistics.median(times):9.1f} {max(times):9.1f}  {result}")
backend.shutdown()

if failures:
    print("FAIL:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("== core metrics OK")
PY

kill -TERM "$PID"
if wait "$PID"; then
  echo "== SIGTERM: exporter exited 0"
else
  echo "FAIL: exporter exited $? after SIGTERM"; cat "$LOG"; exit 1
fi
grep -q "NVML shut down" "$LOG" && echo "== nvmlShutdown called" || { echo "FAIL: no nvmlShutdown"; cat "$LOG"; exit 1; }
trap - EXIT
rm -f "$LOG"
echo "PASS"
