#!/usr/bin/env bash
# GPU smoke test of nvml-exporter on a machine with an NVIDIA GPU and driver (never run by the
# tests against a GPU; tests/exporter/test_exporter_smoke.py runs it on the fake backend).
#
#   scripts/gpu-smoke.sh        # uses/creates .venv; PYTHON=python3.11 to choose the interpreter
#
# Within 3 minutes (each step has its own time limit, and the whole script stops at 180 s):
#   1. installs the project into .venv (skipped with SKIP_INSTALL=1);
#   2. starts the exporter on the real NVML backend on 127.0.0.1 (a free port), waits for /readyz;
#   3. prints a side-by-side table of its readings against `nvidia-smi --query-gpu=...` (memory,
#      temperature, power, clocks, utilisation, identity) with the difference, the relative
#      difference and the tolerance (python -m nvml_exporter.smoke; tolerances in its CHECKS);
#   4. prints per-call NVML latencies through the exporter's own backend;
#   5. stops the exporter with SIGTERM and checks it exits 0 after nvmlShutdown.
# Exits 1 on any mismatch beyond tolerance or failed step. Paste the table into BENCHMARKS.md.
#
# For tests only: SMOKE_BACKEND=fake and NVIDIA_SMI=<a stand-in> run the same steps without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${SMOKE_DEADLINE_SET:-}" ]; then
  SMOKE_DEADLINE_SET=1 exec timeout --foreground -k 10 180 "$0" "$@"
fi

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
BACKEND=${SMOKE_BACKEND:-nvml}
NVIDIA_SMI=${NVIDIA_SMI:-nvidia-smi}

if [ -z "${SKIP_INSTALL:-}" ]; then
  [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
  timeout 100 "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e .
fi
command -v "$NVIDIA_SMI" >/dev/null || { echo "FAIL: $NVIDIA_SMI not found"; exit 1; }

LOG=$(mktemp)
"$VENV/bin/python" -m nvml_exporter --backend "$BACKEND" --listen-address 127.0.0.1:0 \
  --log-level info 2>"$LOG" &
PID=$!
cleanup() {
  kill -TERM "$PID" 2>/dev/null || true
  wait "$PID" 2>/dev/null || true
  rm -f "$LOG"
}
trap cleanup EXIT

PORT=""
for _ in $(seq 150); do  # 30 s
  PORT=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p' "$LOG")
  [ -n "$PORT" ] && break
  sleep 0.2
done
[ -n "$PORT" ] || { echo "FAIL: the exporter did not start"; cat "$LOG"; exit 1; }
echo "== nvml-exporter (backend $BACKEND) pid $PID on 127.0.0.1:$PORT"

READY=""
for _ in $(seq 120); do  # 60 s
  if "$VENV/bin/python" -c 'import sys, urllib.request
try:
    urllib.request.urlopen(sys.argv[1], timeout=2)
except Exception:
    sys.exit(1)' "http://127.0.0.1:$PORT/readyz"; then READY=1; break; fi
  sleep 0.5
done
[ -n "$READY" ] || { echo "FAIL: /readyz never answered 200 (NVML init failed?)"; cat "$LOG"; exit 1; }

echo "== exporter vs $NVIDIA_SMI"
timeout 60 "$VENV/bin/python" -m nvml_exporter.smoke \
  --url "http://127.0.0.1:$PORT/metrics" --nvidia-smi "$NVIDIA_SMI" || {
  echo "FAIL: readings differ from nvidia-smi (or could not be compared)"; cat "$LOG"; exit 1; }

if [ "$BACKEND" = nvml ]; then
  echo "== per-call NVML latency (this process, the exporter's backend; 20 calls each)"
  timeout 30 "$VENV/bin/python" - <<'PY'
import statistics
import time

from nvml_exporter import nvml
from nvml_exporter.nvml import PynvmlBackend

backend = PynvmlBackend()
backend.init()
calls = {
    "device_memory_info_v2": lambda h: backend.device_memory_info_v2(h),
    "device_utilization": lambda h: backend.device_utilization(h),
    "device_temperature_v": lambda h: backend.device_temperature_v(h, nvml.TEMPERATURE_GPU),
    "device_temperature_legacy": lambda h: backend.device_temperature_legacy(h, nvml.TEMPERATURE_GPU),
    "device_power_usage": lambda h: backend.device_power_usage(h),
    "device_total_energy_consumption": lambda h: backend.device_total_energy_consumption(h),
    "device_clock(SM)": lambda h: backend.device_clock(h, nvml.CLOCK_SM),
    "device_current_clock_event_reasons": lambda h: backend.device_current_clock_event_reasons(h),
    "device_total_ecc_errors": lambda h: backend.device_total_ecc_errors(
        h, nvml.MEMORY_ERROR_CORRECTED, nvml.AGGREGATE_ECC),
    "device_remapped_rows": lambda h: backend.device_remapped_rows(h),
    "device_mig_mode": lambda h: backend.device_mig_mode(h),
}
print(f"| call | gpu | p50 µs | max µs | result |\n|---|---:|---:|---:|---|")
for index in range(backend.device_count()):
    handle = backend.device_handle_by_index(index)
    for name, fn in calls.items():
        times, result = [], ""
        for _ in range(20):
            start = time.perf_counter()
            try:
                result = repr(fn(handle))[:40]
            except Exception as exc:  # noqa: BLE001 - reported, e.g. NotSupported
                result = nvml.error_name(exc)
            times.append((time.perf_counter() - start) * 1e6)
        print(f"| {name} | {index} | {statistics.median(times):.1f} | {max(times):.1f} | {result} |")
backend.shutdown()
PY
fi

kill -TERM "$PID"
if wait "$PID"; then
  echo "== SIGTERM: exporter exited 0"
else
  echo "FAIL: exporter exited $? after SIGTERM"; cat "$LOG"; exit 1
fi
grep -q "NVML shut down" "$LOG" || { echo "FAIL: no nvmlShutdown"; cat "$LOG"; exit 1; }
echo "== nvmlShutdown called"
trap - EXIT
rm -f "$LOG"
echo "PASS"
