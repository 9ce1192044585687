"""``spec.alerts.kvTransfer``: disaggregated prefill/decode's KV-cache transfers, read on the
role that pulls them (decode): ``ModelKVTransferFailing`` (failed / all transfers over 5m
above ``maxRatio``) and ``ModelKVTransferSlow`` (p99 transfer time over 5m above
``threshold``), both tickets held ``for``.

Series from the preset's ``kv_transfer`` (vLLM ≥ 0.11.1 NixlConnector: histogram
``vllm:nixl_xfer_time_seconds``, counter ``vllm:nixl_num_failed_transfers_total``); absent
without NIXL, so silent there. On by default with ``spec.roles``; docs/spec.md, "Roles".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator import naming, roles
from generator.families.base import Family, Role
from generator.parts.common import alert_rule, record_rule, recorded
from generator.parts.grafana_json import PanelDef, Query
from generator.parts.panel_parts import alert_steps, legend, panel_runbook, rec
from generator.parts.promtool_series import (
    agg_of,
    alert_test,
    expected_alert,
    promtool_group,
    series_text,
)
from generator.parts.series_parts import labels_of, up_labels
from generator.promql import Matcher, selector
from generator.units import decimal_str

if TYPE_CHECKING:
    from generator.parts.common import Rule
    from generator.plan import AlertPlan, ServicePlan

KEY = "kv_transfer"
ALERT_FAILING = naming.ALERT_KV_TRANSFER_FAILING
ALERT_SLOW = naming.ALERT_KV_TRANSFER_SLOW
FAILURES = "model_kv_transfer_failures"  # share (0–1) of transfers that failed
LATENCY = "model_kv_transfer_seconds"  # p99 transfer time (s)
TOP_BOUND_S = 5.0  # the largest finite bucket of vllm:nixl_xfer_time_seconds (v0.11.1 … v0.14.0)


@dataclass(frozen=True)
class Params:
    """``max_ratio``: the failed share (0–1) of transfers above which it alerts;
    ``threshold_seconds``: the p99 transfer time (s) above which it alerts."""

    max_ratio: float
    threshold_seconds: float


def params(alert: AlertPlan) -> Params:
    """The typed parameters of the plan's ``kv_transfer`` alert."""
    return Params(float(alert.params["max_ratio"]), float(alert.params["threshold_seconds"]))


def _matchers(plan: ServicePlan) -> tuple[Matcher, ...]:
    """The service selector on the decode role (the role that reads the KV cache)."""
    return roles.scoped(plan.roles, roles.DECODE, plan.matchers)


def failures_record(plan: ServicePlan) -> str:
    """Record of the failed share (0–1) of KV transfers over 5m."""
    return naming.record(plan.group_by, FAILURES, "ratio_rate5m")


def latency_record(plan: ServicePlan) -> str:
    """Record of the p99 KV transfer time (s) over 5m."""
    return naming.record(plan.group_by, LATENCY, "p99_rate5m")


def rules(plan: ServicePlan) -> list[Rule]:
    """The two records, then the two alerts (module docstring), where enabled."""
    alert = plan.alerts.get(KEY)
    series = plan.kv_transfer
    if alert is None or series is None:
        return []
    histogram, failed = series
    sel = _matchers(plan)

    def rate(name: str, *extra: str) -> str:
        return f"sum by ({', '.join((*plan.agg_labels, *extra))}) (rate({selector(name, sel)}[5m]))"

    done = rate(histogram + "_count")
    bad = rate(failed)
    share = f"{bad} / ({bad} + {done} > 0)"
    p99 = f"histogram_quantile(0.99, {rate(histogram + '_bucket', 'le')})"
    max_ratio = params(alert).max_ratio
    threshold = params(alert).threshold_seconds
    return [
        record_rule(plan, failures_record(plan), share),
        record_rule(plan, latency_record(plan), p99),
        alert_rule(
            plan,
            ALERT_FAILING,
            f"{recorded(plan, failures_record(plan))} > {decimal_str(max_ratio)}",
            alert.for_ms,
            alert.severity,
            max=decimal_str(max_ratio * 100),
            metric=failed,
        ),
        alert_rule(
            plan,
            ALERT_SLOW,
            f"{recorded(plan, latency_record(plan))} > {decimal_str(threshold)}",
            alert.for_ms,
            alert.severity,
            threshold=decimal_str(threshold),
            metric=histogram,
        ),
    ]


def _transfers(
    plan: ServicePlan, steps: int, per_min: int, failed: int, slow: bool
) -> list[dict[str, str]]:
    """The decode role's transfer series: ``per_min`` done (all at 5 ms, or at 5 s when
    ``slow``) and ``failed`` failed transfers a minute."""
    assert plan.kv_transfer is not None
    histogram, counter = plan.kv_transfer
    labels = labels_of(plan, _matchers(plan), model_name="m", engine="0")
    out = [{"series": series_text(counter, labels), "values": f"0+{failed}x{steps}"}]
    out.append(
        {"series": series_text(f"{histogram}_count", labels), "values": f"0+{per_min}x{steps}"}
    )
    for le in ("0.005", "1.0", "5.0", "+Inf"):
        n = per_min if (not slow or le in ("5.0", "+Inf")) else 0
        out.append(
            {
                "series": series_text(f"{histogram}_bucket", {**labels, "le": le}),
                "values": f"0+{n}x{steps}",
            }
        )
    return out


def cases(plan: ServicePlan) -> list[dict[str, Any]]:
    """One group each: healthy transfers (fast, none failing) silent; a quarter failing fires
    ``ModelKVTransferFailing``; all at 5 s fires ``ModelKVTransferSlow``."""
    alert = plan.alerts.get(KEY)
    if alert is None or plan.kv_transfer is None:
        return []
    if params(alert).max_ratio >= 0.25 or params(alert).threshold_seconds >= 4.5:
        return []  # the cases' failures and delays would not reach such limits
    steps = alert.for_ms // 60_000 + 20
    at = (alert.for_ms // 60_000 + 15) * 60_000
    up = {"series": series_text("up", up_labels(plan)), "values": f"1+0x{steps}"}
    by_rule = {r["alert"]: r for r in rules(plan) if "alert" in r}
    labels = {**agg_of(plan, _matchers(plan)), naming.SERVICE: plan.name}

    def fired(name: str, value: float | None = None) -> list[dict[str, Any]]:
        return [expected_alert(by_rule[name], labels, value)]

    return [
        promtool_group(
            f"{ALERT_FAILING}, {ALERT_SLOW}: fast transfers, none failing: silent",
            [up, *_transfers(plan, steps, 100, 0, slow=False)],
            [alert_test(at, ALERT_FAILING, []), alert_test(at, ALERT_SLOW, [])],
        ),
        promtool_group(
            f"{ALERT_FAILING}: a quarter of the transfers fail",
            [up, *_transfers(plan, steps, 75, 25, slow=False)],
            [
                alert_test(at, ALERT_FAILING, fired(ALERT_FAILING, 0.25)),
                alert_test(at, ALERT_SLOW, []),
            ],
        ),
        promtool_group(
            f"{ALERT_SLOW}: every transfer takes 5s",
            [up, *_transfers(plan, steps, 100, 0, slow=True)],
            [alert_test(at, ALERT_SLOW, fired(ALERT_SLOW)), alert_test(at, ALERT_FAILING, [])],
        ),
    ]


def panels(plan: ServicePlan) -> list[PanelDef]:
    """The failed share (0–1) and the p99 transfer time (s) over 5m, each with its alert's
    limit drawn; none where the alerts are off or the server exports no transfer series."""
    if plan.alerts.get(KEY) is None or plan.kv_transfer is None:
        return []
    histogram, failed = plan.kv_transfer
    return [
        PanelDef(
            title="KV transfers failing",
            key="kv-transfer/failures",
            description="Share (0–1) of the decode role's KV-cache transfers that failed over "
            f"5m ({failures_record(plan)}: {failed} over failed + {histogram}_count); "
            f"{ALERT_FAILING} fires above the line.",
            kind="timeseries",
            queries=(Query(rec(plan, failures_record(plan)), legend(plan, "failed")),),
            unit="percentunit",
            min_value=0,
            max_value=1,
            steps=alert_steps(plan, KEY, "max_ratio"),
            runbook=panel_runbook(plan, ALERT_FAILING),
            width=12,
        ),
        PanelDef(
            title="KV transfer time p99",
            key="kv-transfer/p99",
            description="99th percentile of the decode role's KV-cache transfer time over 5m "
            f"({latency_record(plan)}, from {histogram}; its largest finite bucket is "
            f"{decimal_str(TOP_BOUND_S)}s); {ALERT_SLOW} fires above the line.",
            kind="timeseries",
            queries=(Query(rec(plan, latency_record(plan)), legend(plan, "p99")),),
            unit="s",
            min_value=0,
            steps=alert_steps(plan, KEY, "threshold_seconds"),
            runbook=panel_runbook(plan, ALERT_SLOW),
            width=12,
        ),
    ]


def runbook_queries(plan: ServicePlan, record: Callable[..., str]) -> dict[str, str | None]:
    """The failed share and the p99 transfer time records (None without the series)."""
    if plan.kv_transfer is None:
        return {"kv_transfer_failures": None, "kv_transfer_p99": None}
    return {
        "kv_transfer_failures": record(failures_record(plan)),
        "kv_transfer_p99": record(latency_record(plan)),
    }


FAMILY = Family(
    key=KEY,
    spec_field="kvTransfer",
    alerts=(ALERT_FAILING, ALERT_SLOW),
    for_ms=600_000,
    severity="warning",
    params={"max_ratio": 0.05, "threshold_seconds": 1.0},
    role=Role.SYMPTOM,
    group="traffic",
    rules=rules,
    cases=cases,
    signals=("kv_transfer",),
    runbook_queries=runbook_queries,
    row="traffic",
    rank=90,
    panels=panels,
    # On by default only for disaggregated (spec.roles) services.
    default_on=lambda body: body.roles is not None,
)
