"""Generated ``promtool test rules`` files: proof that every rendered alert fires and stays quiet.

For each plan this builds ``rules/<service>.test.yaml`` (promtool unit-test format, rule file
named relative to the test file). Every series name, selector, ``le`` spelling and threshold is
read from the plan, so the tests follow any spec and preset.

The traffic model, the cases of each tier and guard, and why their expectations are exact:
docs/proof.md, "Generated promtool tests".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from generator import naming
from generator.builders.guard_rules import signal_inputs
from generator.builders.rulefile import alert_rules, rule_groups
from generator.cases.detection_cases import detection_groups
from generator.cases.duplicate_cases import with_copies
from generator.cases.goodput_cases import goodput_groups
from generator.cases.guard_cases import (
    expected_guards,
    guard_groups,
    long_healthy_group,
)
from generator.cases.model_cases import model_groups
from generator.cases.slo_cases import slo_groups
from generator.cases.test_merge import merge_cases, reads
from generator.errors import Diagnostic, ObsgenError
from generator.families import FAMILIES
from generator.parts.common import Group
from generator.parts.promtool_series import (
    BASE_PER_MIN,
    CHECK_MS,
    INTERVAL_MS,
    Klass,
    alert_test,
    family_case,
    promtool_group,
    steps_until,
)
from generator.parts.series_parts import UUID, sidecar_labels
from generator.parts.windowed_series import (
    without,
)
from generator.plan import ServicePlan
from generator.signals.healthy import healthy
from generator.units import format_duration_ms, parse_duration_ms
from generator.yamlio import dump_yaml, generated_header


def family_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """A firing and a quiet case for every non-SLO alert family the plan enables."""
    groups: list[dict[str, Any]] = []
    for family in FAMILIES:
        if family.group != "gpu":
            groups += family.cases(plan)
    if plan.gpu_exporter:
        for family in FAMILIES:
            if family.group == "gpu":
                groups += family.cases(plan)
        if plan.gpu_source == "sidecar":  # dcgm-exporter omits what DCGM cannot read
            groups += unsupported_reading_groups(plan)
    return groups


# --- capacity, GPU devices and MIG ----------------------------------------------------------


def unsupported_reading_groups(plan: ServicePlan) -> list[dict[str, Any]]:
    """A unified-memory GPU (GB10): no frame-buffer memory series, and the exporter reports
    ``memory_info`` unsupported there: the ``gpuMemory`` guard stays quiet (its missing
    series with no such report fires it: :func:`guard_groups`). Likewise a GPU without a
    temperature reading, clock event reasons, ECC, row remapper, NVLink or PCIe replay count."""
    inputs = {i.signal: i for i in signal_inputs(plan)}
    readings: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
        "gpuMemory": (("memory_info", (naming.GPU_MEMORY_FREE, naming.GPU_MEMORY_TOTAL)),),
        "gpuTemperature": (("temperature", (naming.GPU_TEMPERATURE,)),),
        "gpuClockEvents": (("supported_reasons", (naming.GPU_CLOCK_EVENT_ACTIVE,)),),
        "gpuEcc": (
            ("ecc_uncorrected", (naming.GPU_ECC_ERRORS,)),
            ("ecc_volatile_uncorrected", (naming.GPU_ECC_VOLATILE_ERRORS,)),
        ),
        "gpuRowRemap": (
            (
                "remapped_rows",
                (
                    naming.GPU_ROW_REMAP_FAILURE,
                    naming.GPU_ROW_REMAP_PENDING,
                    naming.GPU_REMAPPED_ROWS,
                ),
            ),
        ),
        "gpuRetiredPages": (
            ("retired_pages", (naming.GPU_RETIRED_PAGES, naming.GPU_RETIRED_PAGES_PENDING)),
        ),
        "gpuNvLink": (("nvlink", (naming.GPU_NVLINK_ERRORS,)),),
        "gpuPcieReplays": (("pcie_replays", (naming.GPU_PCIE_REPLAYS,)),),
    }
    found = [
        (signal, reading, metrics)
        for signal in readings
        if signal in inputs
        for reading, metrics in readings[signal]
    ]
    if not found:
        return []
    gpu = {**sidecar_labels(plan), "uuid": UUID}
    s = healthy(plan, [Klass(BASE_PER_MIN)])
    for _signal, reading, metrics in found:
        for metric in metrics:
            without(s, metric)
        s.gauge(naming.GPU_READING_UNSUPPORTED, {**gpu, "reading": reading}, "1+0x60")
    expected = expected_guards(plan, s)
    if any(a["exp_labels"].get(naming.SIGNAL) in readings for a in expected):
        raise ValueError("a guard would fire on a reading the exporter reports unsupported")
    at = plan.alerts["signal_missing"].for_ms + INTERVAL_MS
    names = ", ".join(f"{r} ({sig})" for sig, r, _ in found)
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


def zero_traffic_group(plan: ServicePlan) -> dict[str, Any]:
    """Counters and native histograms that never move: every alert stays quiet."""
    at = CHECK_MS + max([a.for_ms for a in plan.alerts.values()] + [0])
    names = sorted({r["alert"] for r in alert_rules(plan)})
    s = healthy(plan, [Klass(0)])
    series = s.render(steps_until(at))
    return promtool_group(
        "zero traffic raises no alert",
        series,
        [alert_test(at, n, []) for n in names],
    )


def rule_test_files(plan: ServicePlan) -> dict[str, dict[str, Any]]:
    """The promtool test documents for ``plan`` by repository path: the main file (1m) and one
    per coarser evaluation interval of the detection cases."""
    detection = detection_groups(plan)
    rules_file = naming.rules_file(plan.stem).split("/")[-1]
    out = {
        naming.rule_tests_file(plan.stem): {
            "rule_files": [rules_file],
            "evaluation_interval": format_duration_ms(INTERVAL_MS),
            "tests": [
                zero_traffic_group(plan),
                long_healthy_group(plan),
                *slo_groups(plan),
                *goodput_groups(plan),
                *model_groups(plan),
                *detection.pop(INTERVAL_MS, []),
                *family_groups(plan),
                *guard_groups(plan),
            ],
        }
    }
    for e, groups in sorted(detection.items()):
        out[naming.rule_tests_file(plan.stem, format_duration_ms(e))] = {
            "rule_files": [rules_file],
            "evaluation_interval": format_duration_ms(e),
            "tests": groups,
        }
    if plan.copy_labels:
        for doc in out.values():
            plain: list[dict[str, Any]] = doc["tests"]  # type: ignore[assignment]
            doc["tests"] = [with_copies(group, plan) for group in plain]
    if plan.query_offset_ms:
        for doc in out.values():
            groups_of: list[dict[str, Any]] = doc["tests"]  # type: ignore[assignment]
            doc["tests"] = [shifted(group, plan.query_offset_ms) for group in groups_of]
    return out


def shifted(group: dict[str, Any], offset_ms: int) -> dict[str, Any]:
    """``group`` with every check ``offset_ms`` later: rules whose groups have that
    ``query_offset`` evaluate at each step what they evaluated ``offset_ms`` earlier without
    it (their records are written at the earlier time, so chains of records keep it), so each
    expected alert holds exactly that much later — the promised detection time plus the
    offset. The series need not grow: what the rules read stays where it was."""
    tests = [
        {**t, "eval_time": format_duration_ms(parse_duration_ms(t["eval_time"]) + offset_ms)}
        for t in group["alert_rule_test"]
    ]
    return {**group, "alert_rule_test": tests}


def service_rule_tests(plan: ServicePlan, groups: list[Group] | None = None) -> dict[str, str]:
    """``rules/<service>.test.yaml`` (and ``rules/<service>.slow-<interval>.test.yaml``) of one
    plan, cases that can share an input block merged (:mod:`generator.cases.test_merge`).
    ``groups``: the plan's rule groups when already built.

    Raises:
        ObsgenError: an error matcher with no printable example value.
    """
    header = generated_header(plan.source)
    if plan.reads_native:
        header += (
            "\nNative histograms: these tests feed them in promtool 3's notation (custom bounds),"
            "\nso they need promtool 3.0 or later; promtool 2 cannot read them."
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
