"""Generated ``promtool test rules`` files: proof that every rendered alert fires and stays quiet.

For each plan this builds ``rules/<service>.test.yaml`` (promtool unit-test format, rule file
named relative to the test file). Every series name, selector, ``le`` spelling and threshold is
read from the plan, so the tests follow any spec and preset.

The traffic model, the cases of each tier and guard, and why their expectations are exact:
docs/architecture.md, "Generated promtool tests".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from generator import naming
from generator.builders.common import Group, Rule
from generator.builders.detection_cases import detection_groups
from generator.builders.guard_cases import (
    expected_guards,
    guard_groups,
    long_healthy_group,
    quiet_except_native,
)
from generator.builders.guard_rules import signal_inputs
from generator.builders.pods import (
    replica_metrics,
)
from generator.builders.promtool_series import (
    BASE_PER_MIN,
    CHECK_MS,
    INTERVAL_MS,
    UUID,
    Klass,
    Series,
    alert_test,
    expected_alert,
    family_case,
    fire_and_quiet,
    healthy,
    promtool_group,
    sidecar_labels,
    steps_until,
    up_labels,
)
from generator.builders.rulefile import alert_rules, rule_groups
from generator.builders.slo_cases import slo_groups
from generator.builders.test_merge import merge_cases, reads
from generator.builders.windowed_series import (
    Minutes,
    cycle,
    first_firing,
    gauge_group,
    held_seconds,
    sample,
    values_text,
    without,
)
from generator.errors import Diagnostic, ObsgenError
from generator.families import FAMILIES
from generator.families.gpu import GPU_LABELS
from generator.plan import ServicePlan
from generator.units import format_duration_ms
from generator.yamlio import dump_yaml, generated_header


def _rule(plan: ServicePlan, alert: str, severity: str | None = None) -> Rule:
    return next(
        r
        for r in alert_rules(plan)
        if r["alert"] == alert and (severity is None or r["labels"][naming.SEVERITY] == severity)
    )


def family_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """A firing and a quiet case for every non-SLO alert family the plan enables."""
    base = [Klass(BASE_PER_MIN)]
    groups: list[dict[str, Any]] = []
    alerts = plan.alerts

    def case(
        key: str, alert: str, fire: Series, quiet: Series, expected: list[dict[str, Any]]
    ) -> None:
        groups.extend(fire_and_quiet(plan, key, alert, fire, quiet, expected))

    for family in FAMILIES:
        if family.group != "gpu":
            groups += family.cases(plan)
    groups += replicas_groups(plan)
    if plan.gpu_exporter:
        gpu = sidecar_labels(plan)
        gpu_out = {k: gpu[k] for k in plan.keeping(*GPU_LABELS) if k in gpu} | {"uuid": UUID}
        for family in FAMILIES:
            if family.group == "gpu":
                groups += family.cases(plan)
        if "gpu_xid_errors" in alerts:
            fire = healthy(plan, base)
            fire.gauge(naming.GPU_XID_ERRORS, {**gpu, "uuid": UUID, "xid": "79"}, "0x10 1x50")
            rule = _rule(plan, naming.ALERT_GPU_XID)
            case(
                "gpu_xid_errors",
                rule["alert"],
                fire,
                healthy(plan, base),
                [expected_alert(rule, gpu_out | {"xid": "79"}, None)],
            )
        if "gpu_exporter_down" in alerts:
            fire = healthy(plan, base)
            fire.gauge(naming.GPU_EXPORTER_UP, gpu, "0+0x60")
            rule = _rule(plan, naming.ALERT_GPU_EXPORTER_DOWN)
            out: dict[str, str] = {k: gpu[k] for k in plan.keeping("namespace", "pod") if k in gpu}
            case(
                "gpu_exporter_down",
                rule["alert"],
                fire,
                healthy(plan, base),
                [expected_alert(rule, out, None)],
            )
        if "gpu_device_lost" in alerts:
            groups += device_lost_groups(plan)
        groups += slowdown_groups(plan)
        groups += unsupported_reading_groups(plan)
    return groups


# --- capacity, GPU devices and MIG ----------------------------------------------------------


def replicas_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """``ModelReplicasUnavailable``: one replica short by kube-state-metrics fires; without
    kube-state-metrics, fewer targets up than ``deployment.replicas`` fires (two or more
    replicas); a replica that flaps between available and crashed (short 3 of every 4
    minutes) fires although a ``for`` would be reset; a rolling restart (each pod back within
    two minutes, one at a time) stays quiet. All replicas available stays quiet although only
    one target is scraped: :func:`long_healthy_group`."""
    alert = plan.alerts.get("replicas_unavailable")
    if alert is None:
        return []
    window = int(alert.params["window_ms"])
    least = max(alert.for_ms, plan.scrape_interval_ms) / 1000
    at = alert.for_ms + INTERVAL_MS  # gauges from the first sample: one evaluation past `for`
    # Long enough for the flapping and rolling-restart cases whatever the window.
    length = steps_until(max(at + window, 30 * INTERVAL_MS))
    rule = _rule(plan, naming.ALERT_REPLICAS_UNAVAILABLE)
    name = rule["alert"]
    ns = {k: v for k, v in up_labels(plan).items() if k in plan.keeping("namespace")}
    _, available, workload = replica_metrics(plan)
    series_labels = {**ns, workload: plan.deployment_name}
    r = float(plan.replicas)

    def short(values: Minutes) -> Series:
        s = healthy(plan, [Klass(BASE_PER_MIN)], length)
        s.gauge(available, series_labels, values_text(values))
        return s

    def below(values: Minutes) -> Callable[[int], bool]:
        def held(t: int) -> bool:
            v = sample(values, t)
            return v is not None and v < r

        return held

    def expect(t: int, values: Minutes) -> dict[str, Any]:
        value = held_seconds(plan, below(values), t, window)
        if value < least:
            raise ValueError(f"{name} case would not fire at {t} ms")
        return alert_test(t, name, [expected_alert(rule, ns, value)])

    one_short: Minutes = [r - 1] * length
    groups = [
        gauge_group(
            f"{name}: one of {plan.replicas} replicas unavailable (kube-state-metrics) tickets",
            short(one_short),
            length,
            [expect(at, one_short)],
        ),
    ]
    if plan.replicas >= 2:
        no_ksm = healthy(plan, [Klass(BASE_PER_MIN)], length)
        for metric in replica_metrics(plan)[:2]:
            without(no_ksm, metric)
        value = held_seconds(plan, lambda _: True, at, window)
        groups.append(
            gauge_group(
                f"{name}: without kube-state-metrics, 1 target up of {plan.replicas} tickets",
                no_ksm,
                length,
                [alert_test(at, name, [expected_alert(rule, ns, value)])],
            )
        )
    flapping = cycle(5, r - 1, r, 3, 1, length)
    fire = first_firing(plan, below(flapping), window, least, length)
    groups.append(
        gauge_group(
            f"{name}: a replica short 3 of every 4 minutes tickets (each return would reset a for)",
            short(flapping),
            length,
            [expect(fire, flapping)],
        )
    )
    pods = min(plan.replicas, 3)
    rolling: Minutes = [r] * 10 + [r - 1] * (2 * pods) + [r] * (length - 10 - 2 * pods)
    if (
        held_seconds(
            plan, lambda u: (sample(rolling, u) or r) < r, (10 + 2 * pods) * INTERVAL_MS, window
        )
        < least
    ):
        groups.append(
            gauge_group(
                f"{name}: a rolling restart of {pods} pod(s), each back within two minutes, stays quiet",
                short(rolling),
                length,
                [
                    alert_test(t * INTERVAL_MS, name, [])
                    for t in (12, 10 + 2 * pods, 10 + 2 * pods + 5)
                ],
            )
        )
    return groups


def slowdown_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """``GPUHardwareSlowdown``: a power brake active 2 of every 3 minutes fires (a ``for``
    would be reset each time it lifts); a brake of two minutes once, and a software power cap
    held throughout, stay quiet."""
    alert = plan.alerts.get("gpu_hardware_slowdown")
    if alert is None:
        return []
    window = int(alert.params["window_ms"])
    least = max(alert.for_ms, plan.scrape_interval_ms) / 1000
    rule = _rule(plan, naming.ALERT_GPU_SLOWDOWN)
    name = rule["alert"]
    gpu = {**sidecar_labels(plan), "uuid": UUID}
    length = steps_until(5 * INTERVAL_MS + 2 * window)

    def braking(values: Minutes, reason: str = "hw_power_brake_slowdown") -> Series:
        s = healthy(plan, [Klass(BASE_PER_MIN)], length)
        s.gauge(naming.GPU_CLOCK_EVENT_ACTIVE, {**gpu, "reason": reason}, values_text(values))
        return s

    flapping = cycle(5, 1.0, 0.0, 2, 1, length)

    def held(t: int) -> bool:
        return sample(flapping, t) == 1

    fire = first_firing(plan, held, window, least, length)
    labels = {k: v for k, v in gpu.items() if k in plan.keeping(*GPU_LABELS)}
    labels["reason"] = "hw_power_brake_slowdown"
    once: Minutes = [0.0] * 5 + [1.0] * 2 + [0.0] * (length - 7)
    quiet = braking(once)
    quiet.gauge(naming.GPU_CLOCK_EVENT_ACTIVE, {**gpu, "reason": "sw_power_cap"}, f"1+0x{length}")
    groups = [
        gauge_group(
            f"{name}: a power brake active 2 of every 3 minutes fires",
            braking(flapping),
            length,
            [
                alert_test(
                    fire,
                    name,
                    [expected_alert(rule, labels, held_seconds(plan, held, fire, window))],
                )
            ],
        )
    ]
    if held_seconds(plan, lambda t: sample(once, t) == 1, 7 * INTERVAL_MS, window) < least:
        groups.append(
            gauge_group(
                f"{name}: a brake of two minutes once, and a software power cap, stay quiet",
                quiet,
                length,
                [alert_test(t * INTERVAL_MS, name, []) for t in (7, 10, 20)],
            )
        )
    return groups


def unsupported_reading_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """A unified-memory GPU (GB10): no frame-buffer memory series, and the exporter reports
    ``memory_info`` unsupported there: the ``gpuMemory`` guard stays quiet (its missing
    series with no such report fires it: :func:`guard_groups`). Likewise a GPU without a
    temperature reading and one without clock event reasons."""
    inputs = {i.signal: i for i in signal_inputs(plan)}
    readings = {
        "gpuMemory": ("memory_info", (naming.GPU_MEMORY_FREE, naming.GPU_MEMORY_TOTAL)),
        "gpuTemperature": ("temperature", (naming.GPU_TEMPERATURE,)),
        "gpuClockEvents": ("supported_reasons", (naming.GPU_CLOCK_EVENT_ACTIVE,)),
    }
    found = [(signal, readings[signal]) for signal in readings if signal in inputs]
    if not found:
        return []
    gpu = {**sidecar_labels(plan), "uuid": UUID}
    s = healthy(plan, [Klass(BASE_PER_MIN)])
    for _signal, (reading, metrics) in found:
        for metric in metrics:
            without(s, metric)
        s.gauge(naming.GPU_READING_UNSUPPORTED, {**gpu, "reading": reading}, "1+0x60")
    expected = expected_guards(plan, s)
    if any(a["exp_labels"].get(naming.SIGNAL) in readings for a in expected):
        raise ValueError("a guard would fire on a reading the exporter reports unsupported")
    at = plan.alerts["signal_missing"].for_ms + INTERVAL_MS
    names = ", ".join(f"{r} ({sig})" for sig, (r, _) in found)
    return [
        family_case(
            plan,
            f"{naming.ALERT_SIGNAL_MISSING}: readings the exporter reports unsupported on a GPU "
            f"(memory_info on a unified-memory GB10; {names}) stay quiet",
            s,
            naming.ALERT_SIGNAL_MISSING,
            expected,
            at,
        )
    ]


def device_lost_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """``GPUDeviceLost``: NVML reports the GPU lost (its readings gone, identity kept) under a
    working exporter — fires; the same with NVML itself down — quiet (GPUExporterDown's).
    Every GPU up stays quiet: :func:`long_healthy_group`."""
    rule = _rule(plan, naming.ALERT_GPU_LOST)
    gpu = sidecar_labels(plan)
    up_steps = 5
    lost_at = (up_steps + 1) * INTERVAL_MS  # `1x5` is six samples: the first 0 is at 6m
    # Pending from the evaluation that first sees the loss; firing at the first one at least
    # `for` later (a `for` that is no whole number of test steps rounds up to one).
    at = lost_at + -(-plan.alerts["gpu_device_lost"].for_ms // INTERVAL_MS) * INTERVAL_MS

    def lost(nvml_up: int) -> Series:
        s = healthy(plan, [Klass(BASE_PER_MIN)])
        for metric in (naming.GPU_MEMORY_FREE, naming.GPU_MEMORY_TOTAL, naming.GPU_TEMPERATURE):
            without(s, metric)
        s.gauge(naming.GPU_DEVICE_UP, {**gpu, "uuid": UUID}, f"1x{up_steps} 0x{60 - up_steps}")
        s.gauge(naming.GPU_EXPORTER_UP, gpu, f"{nvml_up}+0x60")
        return s

    out = {k: v for k, v in {**gpu, "uuid": UUID}.items() if k in plan.keeping(*GPU_LABELS)}
    return [
        family_case(
            plan,
            f"{rule['alert']}: a GPU lost under a healthy exporter fires",
            lost(1),
            rule["alert"],
            [expected_alert(rule, out, None)],
            at,
        ),
        family_case(
            plan,
            f"{rule['alert']}: NVML down (no device readings to trust) stays quiet",
            lost(0),
            rule["alert"],
            [],
            at,
        ),
    ]


def zero_traffic_group(plan: ServicePlan) -> dict[str, Any]:
    """Counters that never move (and no native-histogram series): every alert stays quiet
    (the guard of a native histogram, which has no series here, excepted)."""
    at = CHECK_MS + max([a.for_ms for a in plan.alerts.values()] + [0])
    names = sorted({r["alert"] for r in alert_rules(plan)})
    s = healthy(plan, [Klass(0)])
    series = s.render(steps_until(at))
    return promtool_group(
        "zero traffic raises no alert",
        series,
        [alert_test(at, n, quiet_except_native(plan, n, s)) for n in names],
    )


def native_note(plan: ServicePlan) -> list[str]:
    """Names of SLOs whose burn cases promtool 2.42 cannot express (native histograms)."""
    return [s.name for s in plan.slos if s.histogram is not None and s.histogram.native]


def rule_test_files(plan: ServicePlan) -> dict[str, dict[str, Any]]:
    """The promtool test documents for ``plan`` by repository path: the main file (1m) and one
    per coarser evaluation interval of the detection cases."""
    detection = detection_groups(plan)
    rules_file = naming.rules_file(plan.name).split("/")[-1]
    out = {
        naming.rule_tests_file(plan.name): {
            "rule_files": [rules_file],
            "evaluation_interval": format_duration_ms(INTERVAL_MS),
            "tests": [
                zero_traffic_group(plan),
                long_healthy_group(plan),
                *slo_groups(plan),
                *detection.pop(INTERVAL_MS, []),
                *family_groups(plan),
                *guard_groups(plan),
            ],
        }
    }
    for e, groups in sorted(detection.items()):
        out[naming.rule_tests_file(plan.name, format_duration_ms(e))] = {
            "rule_files": [rules_file],
            "evaluation_interval": format_duration_ms(e),
            "tests": groups,
        }
    return out


def service_rule_tests(plan: ServicePlan, groups: list[Group] | None = None) -> dict[str, str]:
    """``rules/<service>.test.yaml`` (and ``rules/<service>.slow-<interval>.test.yaml``) of one
    plan, cases that can share an input block merged (:mod:`generator.builders.test_merge`).
    ``groups``: the plan's rule groups when already built.

    Raises:
        ObsgenError: an error matcher with no printable example value.
    """
    header = generated_header(plan.source)
    skipped = native_note(plan)
    if skipped:
        header += (
            "\nNative-histogram SLOs "
            + ", ".join(skipped)
            + ": promtool 2.42 test series cannot express native histograms,\n"
            "so only the zero-traffic case covers them; their burn cases are not generated,\n"
            "and their input guard is expected to fire (no series) where others stay quiet."
        )
    alert_rules(plan, groups)  # kept on the plan from the groups the caller already built
    try:
        files = rule_test_files(plan)
    except ValueError as err:  # an error matcher with no printable example value
        raise ObsgenError(
            [Diagnostic(plan.source, "spec.metrics", f"cannot generate promtool tests: {err}")]
        ) from None
    alert_reads = reads(rule_groups(plan) if groups is None else groups)
    for doc in files.values():
        doc["tests"] = merge_cases(doc["tests"], alert_reads)
    return {path: dump_yaml(doc, header=header) for path, doc in files.items()}


def rule_tests_outputs(plans: Sequence[ServicePlan]) -> dict[str, str]:
    """``rules/<service>.test.yaml`` (and ``rules/<service>.slow-<interval>.test.yaml``) per plan."""
    out = {}
    for p in plans:
        out.update(service_rule_tests(p))
    return out
