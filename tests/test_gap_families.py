"""Every counter-based alert family across a hole in the samples longer than the 5m lookback
(docs/spec.md, "Gaps in the samples"; the SLO counters' own proof: tests/test_gap_accounting.py).

The gap cases are generated from each family's own promtool cases (``Family.cases``), so a
new family gets them without writing any: every series of a case loses the samples of
``HOLE_MIN`` minutes (Prometheus down: no sample at all, the servers counting on meanwhile)
placed over the case's failure — the first step where a series departs from its steady
course (an OOM kill, an Xid, a restart), or the start of a failure that runs from the first
sample (an error ratio, preemptions). Then

- a case that fires still pages, at the latest ``LATE_MIN`` minutes after samples resume
  ("a page may come late, never not at all");
- a case that stays quiet (the healthy control) stays silent throughout, hole included.

:data:`COUNTER_FAMILIES` is the registry of families whose alerts read a counter; the
registry test fails for a family in neither it nor :data:`NOT_COUNTER`, so a new family must
be classified (and a counter family gets its gap cases by construction).
"""

from __future__ import annotations

import itertools
import re
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import core
from generator.families import FAMILIES
from generator.plan import ServicePlan
from generator.render import load_plans
from tests import toolchain

ROOT = Path(__file__).resolve().parents[1]
HOLE_MIN = 7  # past the 5m lookback
LONG_HOLE_MIN = 15  # past the 10m/15m windows of the event families
LATE_MIN = 25  # the page may come this long after samples resume (for + windows refill)

# Families whose alerts read a counter (increase, rate, max − min of a counter over a window).
COUNTER_FAMILIES = {
    "error_ratio": "requests and failures",
    "slow_requests": "histogram bucket and count counters",
    "preemptions": "vllm:num_preemptions_total",
    "prefix_cache": "prefix cache hits and queries",
    "oom_killed": "container_oom_events_total, kube-state-metrics restarts",
    "crash_loop": "kube_pod_container_status_restarts_total",
    "gpu_xid_errors": "Xid counter",
    "gpu_xid_reboot": "Xid counter",
    "gpu_xid_reset": "Xid counter",
    "gpu_xid_application": "Xid counter",
    "gpu_ecc_errors": "ECC error counters",
    "gpu_nv_link_errors": "NVLink error counters",
    "gpu_pcie_replays": "PCIe replay counter",
    "gpu_uncorrectable_remaps": "remapped-row counter (uncorrectable cause)",
    "gpu_pages_retired": "retired-page counter (double-bit cause)",
    "spec_decode": "accepted and draft token counters",
}
# Counter families without a case of their own that stays quiet (the healthy control shares the
# firing case: another model that must not page).
NO_QUIET_CASE = {"spec_decode": "one model's acceptance drops, the other's does not"}
# Families on gauges (or on up/absence), with what they read.
NOT_COUNTER = {
    "latency_p99": "histogram_quantile of bucket rates: a percentile, no event count",
    "queue_depth": "gauge",
    "kv_cache": "gauge",
    "memory_headroom": "gauge",
    "memory_exhaustion": "gauge (predict_linear)",
    "target_down": "up",
    "replicas_unavailable": "kube-state-metrics gauges",
    "cold_start": "gauges",
    "gpu_memory_headroom": "gauge",
    "gpu_temperature": "gauge",
    "gpu_exporter_down": "up",
    "gpu_device_lost": "gauge",
    "gpu_hardware_slowdown": "gauge (clock event flags)",
    "gpu_row_remap_failure": "gauge",
    "gpu_row_remap_pending": "gauge",
    "lora_pool": "info gauge (the adapter pool's label set)",
    "gpu_page_retirement_pending": "gauge (pages pending retirement)",
    "efficiency_regression": "1h averages of recorded ratios against a day ago (opt-in)",
}
# Counter families no committed spec enables (their gap cases need a committed plan): listed
# so that a new family is still classified; their windows are rates over 5m like error_ratio.
COUNTER_WITHOUT_EXAMPLE = {
    "kv_transfer": "NIXL transfer and failed-transfer counters (disaggregated vLLM only)",
}

_NUMBER = r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?Inf|NaN"
_RAMP = re.compile(rf"^(?P<a>{_NUMBER})(?P<sign>[+-])(?P<b>{_NUMBER})x(?P<n>\d+)$")
_REPEAT = re.compile(rf"^(?P<a>{_NUMBER}|_|stale)x(?P<n>\d+)$")


def expand(values: str) -> list[str]:
    """promtool's expanding notation as one token a step: numbers, ``_`` and ``stale``."""
    out: list[str] = []
    for token in values.split():
        if (m := _RAMP.match(token)) is not None:
            a, b, n = float(m["a"]), float(m["b"]), int(m["n"])
            step = b if m["sign"] == "+" else -b
            out += [repr(a + step * i) for i in range(n + 1)]
        elif (m := _REPEAT.match(token)) is not None:
            out += [m["a"]] * (int(m["n"]) + (0 if m["a"] in ("_", "stale") else 1))
        else:
            out.append(token)
    return out


def _value(token: str) -> float | None:
    return None if token in ("_", "stale") else float(token)


def _steady(tokens: list[str]) -> bool:
    """Whether a series keeps one course from its first sample: a constant step, no hole."""
    values = [_value(t) for t in tokens]
    if any(v is None for v in values) or len(values) < 2:
        return all(v is None for v in values) or len(values) < 2
    deltas = {round(b - a, 9) for a, b in itertools.pairwise(values)}  # type: ignore[operator]
    return len(deltas) == 1


def _onset(series: list[list[str]]) -> int:
    """The first step where a series leaves a steady course (the failure's onset: its step
    changes, or it appears or vanishes), or 1 when every series keeps one course."""
    first = None
    for tokens in series:
        if _steady(tokens):
            continue
        values = [_value(t) for t in tokens]
        step0 = None if None in values[:2] else values[1] - values[0]  # type: ignore[operator]
        for i in range(1, len(values)):
            a, b = values[i - 1], values[i]
            if (a is None) != (b is None) or (
                a is not None and b is not None and step0 is not None and b - a != step0
            ):
                first = i if first is None else min(first, i)
                break
    return first or 1


def _extend(tokens: list[str], steps: int) -> list[str]:
    """``tokens`` continued ``steps`` further on their last course (a hole stays one)."""
    values = [_value(t) for t in tokens]
    if values[-1] is None:
        return tokens + ["_"] * steps
    prev = values[-2] if len(values) >= 2 and values[-2] is not None else values[-1]
    step = values[-1] - prev  # type: ignore[operator]
    return tokens + [repr(values[-1] + step * (i + 1)) for i in range(steps)]  # type: ignore[operator]


def with_hole(
    group: dict[str, Any], alert: str, hole: int = HOLE_MIN
) -> tuple[dict[str, Any], bool, int]:
    """``group`` with a :data:`HOLE_MIN`-minute hole over its failure, its series run on
    :data:`LATE_MIN` minutes after it; (the group, whether it fires, where the hole ends, min)."""
    names = [s["series"] for s in group["input_series"]]
    tokens = [expand(s["values"]) for s in group["input_series"]]
    start = max(1, _onset(tokens) - 2)
    end = start + hole
    length = max(len(t) for t in tokens)
    total = max(length, end) + LATE_MIN + 1
    holed = []
    for name, series in zip(names, tokens, strict=True):
        series = _extend(series, total - len(series)) if len(series) < total else series
        series = [("_" if start <= i < end else t) for i, t in enumerate(series)]
        holed.append({"series": name, "values": " ".join(series)})
    tests = group.get("alert_rule_test", [])
    fires = any(t["alertname"] == alert and t["exp_alerts"] for t in tests)
    firing = f'ALERTS{{alertname="{alert}",alertstate="firing"}}'
    check: dict[str, Any]
    if fires:
        window = f"{total - 1 - end}m"
        check = {
            "expr": f"clamp_max(count(max_over_time({firing}[{window}])), 1)",
            "eval_time": f"{total - 1}m",
            "exp_samples": [{"labels": "{}", "value": 1}],
        }
    else:
        # Silent from the case's own check on (a quiet case may fire before it: crash-looping
        # pods later scaled to zero), which for a healthy control is right after the hole.
        since = min(_minutes(t["eval_time"]) for t in tests if t["alertname"] == alert)
        check = {
            "expr": f"max_over_time({firing}[{total - 1 - since}m])",
            "eval_time": f"{total - 1}m",
            "exp_samples": [],
        }
    out = {
        "name": f"{group['name']} — {hole}m hole from {start}m",
        "interval": group["interval"],
        "input_series": holed,
        "promql_expr_test": [check],
    }
    return out, fires, end


def _minutes(duration: str) -> int:
    """Whole minutes of a promtool ``eval_time`` (``18m``, ``1h5m``)."""
    m = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?", duration)
    assert m is not None and duration, duration
    return int(m[1] or 0) * 60 + int(m[2] or 0)


@cache
def _plans() -> dict[str, ServicePlan]:
    return {p.name: p for p in load_plans(sorted((ROOT / "specs").glob("*.yaml")), ROOT)}


def _plan_for(key: str) -> ServicePlan | None:
    family = next(f for f in FAMILIES if f.key == key)
    return next((p for p in _plans().values() if family.cases(p)), None)


def test_every_family_is_classified() -> None:
    keys = {f.key for f in FAMILIES}
    unclassified = keys - set(COUNTER_FAMILIES) - set(NOT_COUNTER) - set(COUNTER_WITHOUT_EXAMPLE)
    assert not unclassified, f"classify in COUNTER_FAMILIES or NOT_COUNTER: {sorted(unclassified)}"
    assert not (set(COUNTER_FAMILIES) | set(NOT_COUNTER) | set(COUNTER_WITHOUT_EXAMPLE)) - keys


def test_every_counter_family_has_generated_gap_cases() -> None:
    """Each counter family is enabled by some committed spec, and its cases yield gap cases
    that fire and gap cases that stay quiet."""
    for key in COUNTER_FAMILIES:
        plan = _plan_for(key)
        assert plan is not None, f"{key}: no committed spec enables it"
        family = next(f for f in FAMILIES if f.key == key)
        kinds = set()
        for group in family.cases(plan):
            for alert in family.alerts:
                if any(t["alertname"] == alert for t in group.get("alert_rule_test", [])):
                    kinds.add(with_hole(group, alert)[1])
        want = {True} if key in NO_QUIET_CASE else {True, False}
        assert kinds == want, f"{key}: gap cases {kinds} (want a firing and a quiet)"


# Event families whose window (10m, 15m) a longer hole spans: bridged by
# generator.gap_bridge (spec.prometheus.maxGap). ModelContainerOOMKilled bridges its restarts,
# its OOM events and its "older kill" exception (the counter's last value before the window:
# after the hole the window holds only the new container's series).
BRIDGED = (
    "crash_loop",
    "gpu_ecc_errors",
    "gpu_uncorrectable_remaps",
    "gpu_pages_retired",
    "gpu_xid_application",
    "gpu_xid_errors",
    "gpu_xid_reboot",
    "gpu_xid_reset",
    "oom_killed",
)
CASES = [pytest.param(key, HOLE_MIN, id=f"{key}-{HOLE_MIN}m") for key in sorted(COUNTER_FAMILIES)]
CASES += [pytest.param(key, LONG_HOLE_MIN, id=f"{key}-{LONG_HOLE_MIN}m") for key in BRIDGED]


@pytest.mark.parametrize(("key", "hole"), CASES)
def test_a_hole_past_the_lookback_still_pages_and_the_control_stays_silent(
    key: str, hole: int, tmp_path: Path
) -> None:
    plan = _plan_for(key)
    assert plan is not None
    family = next(f for f in FAMILIES if f.key == key)
    outputs = core.build([plan])
    rules = next(rel for rel in outputs if rel.endswith(".rules.yaml"))
    (tmp_path / "rules.yaml").write_text(outputs[rules], encoding="utf-8")
    groups = []
    for group in family.cases(plan):
        if group.get("interval") not in (None, "1m"):
            continue
        for alert in family.alerts:
            if any(t["alertname"] == alert for t in group.get("alert_rule_test", [])):
                groups.append(with_hole(group, alert, hole)[0])
    assert groups
    doc = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": groups}
    path = tmp_path / "gap.test.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False, width=100_000), encoding="utf-8")
    out = subprocess.run(
        [toolchain.binary("prometheus3", "promtool"), "test", "rules", path.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
