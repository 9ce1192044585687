"""Every check, listed explicitly: :data:`CHECKS` is the one place a check is switched on.

Each check is one module of this package exposing ``CHECK``, a
:class:`~generator.lint.registry.Check`; the family modules (``histograms``, ``alerts`` …)
hold the helpers checks of a family share. :func:`all_checks` adds the checks the engine
reports itself (promtool, input problems).
"""

from __future__ import annotations

from generator.lint.checks import (
    absent_without_for,
    alert_for_value,
    alert_missing_annotation,
    alert_missing_for,
    alert_missing_label,
    alert_severity_value,
    alert_value_in_labels,
    alert_without_comparison,
    averaged_ratio,
    bucket_sum_across_le,
    bucket_without_rate,
    burn_rate_below_budget,
    burn_rate_budget_spend,
    burn_rate_for_too_long,
    burn_rate_never_fires,
    burn_rate_slow_reset,
    burn_rate_window_mismatch,
    counter_compared_raw,
    dashboard_datasource,
    dashboard_grid,
    dashboard_panel_id,
    dashboard_rate_interval,
    dashboard_unit,
    dashboard_unused_variable,
    disable_comment,
    duplicate_rule,
    fragile_aggregation,
    gauge_function_on_counter,
    group_interval_too_long,
    histogram_input,
    histogram_quantile_of_quantiles,
    histogram_quantile_without_le,
    impossible_comparison,
    irate_in_alert,
    label_removed,
    le_not_a_number,
    le_spelling,
    nan_in_aggregation,
    promql_experimental_function,
    promql_function_version,
    quantile_aggregated,
    quantile_over_time,
    range_left_open,
    range_too_short,
    rate_filter_before_quantile,
    rate_on_gauge,
    rate_over_aggregated,
    record_missing,
    record_name_format,
    regex_dot_newline,
    regex_plain_string,
    regex_redundant_anchor,
    template_label,
    threshold_unit,
    vector_matching,
)
from generator.lint.registry import ENGINE_CHECKS, FAMILY_ORDER, Check

CHECKS: tuple[Check, ...] = (
    histogram_quantile_without_le.CHECK,
    bucket_without_rate.CHECK,
    le_not_a_number.CHECK,
    le_spelling.CHECK,
    rate_filter_before_quantile.CHECK,
    bucket_sum_across_le.CHECK,
    histogram_input.CHECK,
    quantile_aggregated.CHECK,
    quantile_over_time.CHECK,
    histogram_quantile_of_quantiles.CHECK,
    rate_on_gauge.CHECK,
    counter_compared_raw.CHECK,
    rate_over_aggregated.CHECK,
    gauge_function_on_counter.CHECK,
    averaged_ratio.CHECK,
    nan_in_aggregation.CHECK,
    burn_rate_never_fires.CHECK,
    burn_rate_slow_reset.CHECK,
    burn_rate_budget_spend.CHECK,
    burn_rate_below_budget.CHECK,
    burn_rate_window_mismatch.CHECK,
    burn_rate_for_too_long.CHECK,
    alert_without_comparison.CHECK,
    alert_value_in_labels.CHECK,
    alert_missing_label.CHECK,
    alert_missing_annotation.CHECK,
    alert_severity_value.CHECK,
    alert_missing_for.CHECK,
    absent_without_for.CHECK,
    promql_function_version.CHECK,
    promql_experimental_function.CHECK,
    regex_dot_newline.CHECK,
    range_left_open.CHECK,
    record_name_format.CHECK,
    regex_plain_string.CHECK,
    regex_redundant_anchor.CHECK,
    range_too_short.CHECK,
    group_interval_too_long.CHECK,
    duplicate_rule.CHECK,
    template_label.CHECK,
    vector_matching.CHECK,
    label_removed.CHECK,
    irate_in_alert.CHECK,
    disable_comment.CHECK,
    record_missing.CHECK,
    impossible_comparison.CHECK,
    fragile_aggregation.CHECK,
    alert_for_value.CHECK,
    threshold_unit.CHECK,
    dashboard_panel_id.CHECK,
    dashboard_grid.CHECK,
    dashboard_unit.CHECK,
    dashboard_datasource.CHECK,
    dashboard_rate_interval.CHECK,
    dashboard_unused_variable.CHECK,
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
