"""Every check, listed explicitly: :data:`CHECKS` is the one place a check is switched on.

Each entry is a :class:`~generator.lint.registry.Check`; the label-set checks have one file
each (the older families share a module per family). :func:`all_checks` adds the checks the
engine reports itself (promtool, input problems, dashboards).
"""

from __future__ import annotations

from generator.lint.checks import (
    alert_for_value,
    alerts,
    burn_rate,
    counters,
    disable_comment,
    fragile_aggregation,
    histograms,
    hygiene,
    impossible_comparison,
    irate_in_alert,
    label_removed,
    quantiles,
    record_missing,
    slo,
    template_label,
    vector_matching,
    versions,
)
from generator.lint.registry import ENGINE_CHECKS, FAMILY_ORDER, Check

CHECKS: tuple[Check, ...] = (
    template_label.CHECK,
    vector_matching.CHECK,
    label_removed.CHECK,
    irate_in_alert.CHECK,
    disable_comment.CHECK,
    record_missing.CHECK,
    impossible_comparison.CHECK,
    fragile_aggregation.CHECK,
    alert_for_value.CHECK,
    histograms.quantile_without_le,
    histograms.bucket_without_rate,
    histograms.le_not_a_number,
    histograms.le_spelling,
    histograms.filter_before_quantile,
    histograms.bucket_sum_across_le,
    quantiles.quantile_aggregated,
    quantiles.quantile_over_time,
    quantiles.histogram_quantile_of_quantiles,
    counters.rate_on_gauge,
    counters.counter_compared_raw,
    counters.rate_over_aggregated,
    slo.averaged_ratio,
    burn_rate.burn_rate_never_fires,
    burn_rate.burn_rate_slow_reset,
    burn_rate.burn_rate_budget_spend,
    burn_rate.burn_rate_below_budget,
    burn_rate.burn_rate_window_mismatch,
    burn_rate.burn_rate_for_too_long,
    alerts.alert_without_comparison,
    alerts.value_in_labels,
    alerts.missing_label,
    alerts.missing_annotation,
    alerts.severity_value,
    alerts.missing_for,
    alerts.absent_without_for,
    versions.function_version,
    versions.experimental_function,
    versions.regex_dot_newline,
    versions.range_left_open,
    hygiene.record_name_format,
    hygiene.regex_plain_string,
    hygiene.regex_redundant_anchor,
    hygiene.range_too_short,
    hygiene.group_interval_too_long,
    hygiene.duplicate_rule,
)


def all_checks() -> list[Check]:
    """:data:`CHECKS` and the engine's own checks, sorted by family then id.

    Raises:
        RuntimeError: two checks share an id.
    """
    found = [*CHECKS, *ENGINE_CHECKS]
    ids = [check.id for check in found]
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise RuntimeError(f"check ids listed twice: {', '.join(twice)}")
    return sorted(found, key=lambda c: (FAMILY_ORDER.get(c.family, 99), c.id))


def by_id() -> dict[str, Check]:
    """Every check by id."""
    return {check.id: check for check in all_checks()}
