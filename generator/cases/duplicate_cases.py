"""Generated promtool cases fed duplicate series (``ruler.deduplication: rules``): an HA pair
whose second replica scrapes a sixth of an interval earlier and loses one sample, and a duplicated
target, under every case; the expected alerts unchanged but for a per-target alert expected for
the second target too.

More: docs/proof.md, "Generated cases fed duplicate series".
"""

from __future__ import annotations

import re
from typing import Any

import promql_parser as P

from generator.dedup import RULER_MADE
from generator.lint import promql as q
from generator.parts.promtool_series import series_text
from generator.plan import ServicePlan
from generator.promql import go_float
from generator.units import format_duration_ms, parse_duration_ms

REPLICAS = ("replica-0", "replica-1")
COPY_SUFFIX = "-copy"
PHASES = 6
"""Steps per scrape interval in a phased case: replica-1 scrapes one step (a sixth of the
interval, 10 s at 1 m) before replica-0 and the second target."""

_NUMBER = r"[-+]?(?:[0-9.]+(?:e[-+]?[0-9]+)?|Inf|NaN)"
_TERM = re.compile(rf"(?P<start>_|{_NUMBER})(?:(?P<sign>[-+])(?P<inc>{_NUMBER}))?x(?P<n>[0-9]+)")


def _parsed(series: str) -> tuple[str, dict[str, str]] | None:
    """``(name, labels)`` of a promtool series, or None when it is not a plain one."""
    node = q.parse(series)
    if not isinstance(node, P.VectorSelector):
        return None
    name = q.selector_name(node)
    labels = {
        str(m.name): str(m.value)
        for m in node.matchers.matchers
        if m.op == P.MatchOp.Equal and m.name != "__name__"
    }
    return name, labels


def copies(series: str, replica_label: str) -> list[str]:
    """The series a non-deduplicating ruler sees for ``series`` (module docstring), in a fixed
    order; ``series`` itself alone when it is a record or the ruler's own."""
    parsed = _parsed(series)
    if parsed is None:
        return [series]
    name, labels = parsed
    if not name or ":" in name or name in RULER_MADE:
        return [series]
    out = [series_text(name, {**labels, replica_label: r}) for r in REPLICAS]
    if any(label in labels for label in ("job", "instance")):
        out.append(series_text(name, {**second_target(labels), replica_label: REPLICAS[0]}))
    return out


def second_target(labels: dict[str, str]) -> dict[str, str]:
    """``labels`` as a second scrape configuration of the same job writes them: another
    ``instance`` (the same pod on another port), and another ``endpoint`` where one is set."""
    out = {**labels, "instance": labels.get("instance", "target") + COPY_SUFFIX}
    if "endpoint" in labels:
        out["endpoint"] = labels["endpoint"] + COPY_SUFFIX
    return out


def _expected(alert: dict[str, Any]) -> list[dict[str, Any]]:
    """An expected alert, and the same alert of the second target when it names its target
    (``instance``): an alert about one scrape target reports each scrape configuration's."""
    labels = alert.get("exp_labels", {})
    if "instance" not in labels:
        return [alert]
    old, new = labels["instance"], second_target(labels)["instance"]
    copy = {**alert, "exp_labels": second_target(labels)}
    if "exp_annotations" in alert:
        copy["exp_annotations"] = {
            k: v.replace(old, new) for k, v in alert["exp_annotations"].items()
        }
    return [alert, copy]


def steps(values: str) -> list[str]:
    """One token per step of promtool notation (a number, ``_`` or ``stale``): ``a+bxn`` and
    ``axn`` are n+1 steps, ``_xn`` is n. Numbers keep their text where written, else Go's.

    Raises:
        ValueError: ``values`` holds a native histogram (``{{…}}``), which is not expanded.
    """
    if "{" in values:
        raise ValueError(f"histogram values are not expanded: {values[:40]!r}")
    out: list[str] = []
    for token in values.split():
        term = _TERM.fullmatch(token)
        if term is None:
            out.append(token)
        elif term["start"] == "_":
            out += ["_"] * int(term["n"])
        else:
            start = float(term["start"])
            inc = float(term["inc"] or 0) * (-1 if term["sign"] == "-" else 1)
            out += [go_float(start + inc * k) for k in range(int(term["n"]) + 1)]
    return out


def phased(values: str, shift: int = 0, lose: int | None = None) -> str:
    """``values`` (one sample per scrape interval) on a grid :data:`PHASES` times finer, each
    sample ``shift`` steps after its scrape's time (before it when negative; never before the
    case begins), and the sample of scrape ``lose`` lost — ``_``, as a sample dropped on its
    way to the ruler leaves no marker."""
    tokens = steps(values)
    out = ["_"] * (len(tokens) * PHASES + max(0, shift))
    for i, token in enumerate(tokens):
        sample = "_" if i == lose and token not in ("_", "stale") else token
        out[max(0, i * PHASES + shift)] = sample
    while out and out[-1] == "_":
        out.pop()
    return _compact(out)


def _phase_inputs(inputs: list[dict[str, Any]], replica: str) -> list[dict[str, Any]]:
    """The copies of ``inputs`` on the finer grid: ``replica-1``'s one step early, its middle
    sample lost; the others at the scrape's own time."""
    out = []
    for entry in inputs:
        early = f'{replica}="{REPLICAS[1]}"' in entry["series"]
        samples = [i for i, t in enumerate(steps(entry["values"])) if t not in ("_", "stale")]
        lose = samples[len(samples) // 2] if early and len(samples) >= 3 else None
        out.append({**entry, "values": phased(entry["values"], -1 if early else 0, lose)})
    return out


def _compact(tokens: list[str]) -> str:
    """``tokens`` as promtool values, each run of two or more ``_`` written ``_xN``."""
    out: list[str] = []
    run = 0
    for token in [*tokens, ""]:
        if token == "_":
            run += 1
            continue
        if run:
            out.append("_" if run == 1 else f"_x{run}")
            run = 0
        if token:
            out.append(token)
    return " ".join(out) if out else "_"


def with_copies(group: dict[str, Any], plan: ServicePlan) -> dict[str, Any]:
    """The promtool test group ``group`` with its inputs duplicated (module docstring); its
    expectations unchanged. Unchanged when the plan does not collapse copies."""
    if not plan.copy_labels:
        return group
    replica = plan.replica_labels[0]
    inputs = [
        {**entry, "series": text}
        for entry in group["input_series"]
        for text in copies(entry["series"], replica)
    ]
    tests = [
        {**t, "exp_alerts": [e for alert in t["exp_alerts"] for e in _expected(alert)]}
        for t in group["alert_rule_test"]
    ]
    out = {**group, "input_series": inputs, "alert_rule_test": tests}
    interval = parse_duration_ms(group.get("interval", "1m"))
    if interval % PHASES or any("{" in entry["values"] for entry in inputs):
        return out  # native histograms stay in phase (their notation is not expanded)
    out["interval"] = format_duration_ms(interval // PHASES)
    out["input_series"] = _phase_inputs(inputs, replica)
    return out
