"""Generated promtool cases fed duplicate series (``ruler.deduplication: rules``): an HA pair
and a duplicated target under every case, the expected alerts unchanged but for a per-target
alert expected for the second target too.

More: docs/architecture.md, "Generated cases fed duplicate series".
"""

from __future__ import annotations

from typing import Any

import promql_parser as P

from generator.builders.promtool_series import series_text
from generator.dedup import RULER_MADE
from generator.lint import promql as q
from generator.plan import ServicePlan

REPLICAS = ("replica-0", "replica-1")
COPY_SUFFIX = "-copy"


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
    return {**group, "input_series": inputs, "alert_rule_test": tests}
