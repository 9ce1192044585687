"""Every suggestion a finding prints must itself pass when applied (issue 18).

Each check that can print a concrete suggestion carries it as a :class:`Fix`; here every
fix is applied to the rule file it came from and the file is linted again — by obsgen and by
the real promtool. The fixed finding must be gone and nothing new may appear. The cases come
from two places: the table below (one or more per check that can suggest), and every
reporting case of tests/lint/checks/.
"""

from __future__ import annotations

import copy
import inspect
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.lint import Finding, LintConfig, Report, Severity, lint_paths
from generator.lint.checks import all_checks

from .checks import all_cases
from .helpers import F, alert, is_dashboard, needs_promtool, record, rule_file

Docs = list[dict[str, Any]]


def _lint(tmp: Path, docs: Docs, config: LintConfig, promtool: bool) -> Report:
    paths = []
    for index, doc in enumerate(docs):
        if is_dashboard(doc):
            path = tmp / f"file{index}.json"
            path.write_text(json.dumps(doc, indent=2))
        else:
            path = tmp / f"file{index}.yaml"
            path.write_text(yaml.safe_dump(doc, sort_keys=False))
        paths.append(str(path))
    return lint_paths(paths, config, promtool=promtool)


def _rules(doc: dict[str, Any]) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """``(group, rules)`` of a plain rule file, a PrometheusRule or Helm values."""
    if doc.get("kind") == "PrometheusRule":
        doc = doc["spec"]
    elif "additionalPrometheusRulesMap" in doc:
        doc = next(iter(doc["additionalPrometheusRulesMap"].values()))
    return [(group, group.get("rules", [])) for group in doc.get("groups", [])]


def _apply(docs: Docs, finding: Finding, config: LintConfig) -> tuple[Docs, LintConfig]:
    """``docs`` and ``config`` with ``finding.fix`` applied (to a copy)."""
    fix = finding.fix
    assert fix is not None
    fixed = copy.deepcopy(docs)
    index = int(Path(finding.file).stem.removeprefix("file"))
    for group, rules in _rules(fixed[index]):
        for field, value in fix.fields:
            if field == "group.interval":
                group["interval"] = value
        for rule in list(rules):
            if finding.rule and finding.rule not in (rule.get("alert"), rule.get("record")):
                continue
            if fix.remove:
                rules.remove(rule)
                break
            if fix.expr is not None:
                rule["expr"] = fix.expr
            for field, value in fix.fields:
                if field == "group.interval":
                    continue
                target, key = (rule, field) if "." not in field else _nested(rule, field)
                if value is None:
                    target.pop(key, None)
                else:
                    target[key] = value
    for key, value in fix.settings:
        assert key == "enabledFeatures"
        config = replace(config, enabled_features=config.enabled_features | {value})
    return fixed, config


def _nested(rule: dict[str, Any], field: str) -> tuple[dict[str, Any], str]:
    outer, key = field.split(".", 1)
    return rule.setdefault(outer, {}), key


def _pairs(report: Report) -> set[tuple[str, str, str]]:
    """What was found; an info from promtool about its own age is not about the rules."""
    return {
        (Path(f.file).name, f.check, f.rule)
        for f in report.findings
        if not (f.check == "promtool" and f.severity is Severity.INFO)
    }


def _check_every_fix(tmp: Path, docs: Docs, config: LintConfig, check: str) -> int:
    """Apply each fix of ``check``'s findings and lint again; returns how many were tried."""
    before = _lint(tmp, docs, config, promtool=False)
    tried = 0
    for finding in before.findings:
        if finding.check != check or finding.fix is None:
            continue
        tried += 1
        fixed, fixed_config = _apply(docs, finding, config)
        after = _lint(tmp, fixed, fixed_config, promtool=True)
        gone = (Path(finding.file).name, finding.check, finding.rule)
        expected = _pairs(before) - {gone}
        new = _pairs(after) - expected
        assert not new and gone not in _pairs(after), (
            f"applying {finding.fix} for `{finding.message}` left or added "
            f"{[f'{f.check}: {f.message}' for f in after.findings]}"
        )
    return tried


# check id, rule files, config, text the message and the fix must share
SUGGESTIONS: list[Any] = [
    ("histogram-quantile-without-le", [rule_file(record("service:lat:p99", "histogram_quantile(0.99, sum by (service) (rate(x_bucket[5m])))"))], {}, "sum by (le, service)"),
    ("histogram-quantile-without-le", [rule_file(record("service:lat:p99", "histogram_quantile(0.99, sum without (le) (rate(x_bucket[5m])))"))], {}, "sum by (le)"),
    ("histogram-input", [rule_file(alert("histogram_quantile(0.99, vllm:e2e_request_latency_seconds) > 30"))], {}, "histogram_quantile(0.99, rate(vllm:e2e_request_latency_seconds_bucket[5m])) > 30"),
    ("histogram-input", [rule_file(alert("histogram_quantile(0.99, sum by (le) (rate(x_seconds_sum[5m]))) > 1"))], {}, "sum by (le) (rate(x_seconds_bucket[5m]))"),
    ("histogram-input", [rule_file(alert("histogram_count(rate(x_seconds_count[5m])) > 1"))], {}, "rate(x_seconds_count[5m]) > 1"),
    ("bucket-without-rate", [rule_file(record("service:lat:p90", "histogram_quantile(0.9, sum by (le) (x_bucket))"))], {}, "rate(x_bucket[5m])"),
    ("le-not-a-number", [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le="500ms"}[5m]))'))], {"versions": ("3",)}, 'le="0.5"'),
    ("le-not-a-number", [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le="1s"}[5m]))'))], {}, r'le=~"^(?:1|1\\.0)$"'),
    ("le-spelling", [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le="1"}[5m]))'))], {}, r'le=~"^(?:1|1\\.0)$"'),
    ("le-spelling", [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le="1800000"}[5m]))'))], {}, r"1\\.8e\\+06"),
    ("le-spelling", [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le="1"}[5m]))'))], {"versions": ("3",)}, 'le="1.0"'),
    ("le-spelling", [rule_file(record("service:slow:rate5m", 'sum(rate(x_bucket{le=~"1\\\\.0"}[5m]))'))], {"versions": ("2",)}, r'le=~"^(?:1|1\\.0)$"'),
    ("le-spelling", [rule_file(record("job:gc:max", 'max(go_gc_duration_seconds{quantile="1"})'))], {}, r'quantile=~"^(?:1|1\\.0)$"'),
    ("bucket-sum-across-le", [rule_file(record("service:x:rate5m", "sum by (service) (rate(x_bucket[5m]))"))], {}, "sum by (le, service)"),
    ("bucket-sum-across-le", [rule_file(record("service:x:rate5m", 'sum by (service) (rate(x_bucket{le=~"1.0|1"}[5m]))'))], {}, "sum by (le, service)"),
    ("rate-on-gauge", [rule_file(record("job:q:deriv5m", "sum(rate(inference_queue_depth[5m]))"))], {}, "deriv(inference_queue_depth[5m])"),
    ("rate-on-gauge", [rule_file(record("job:q:delta5m", "sum(increase(inference_queue_depth[5m]))"))], {}, "delta(inference_queue_depth[5m])"),
    ("counter-compared-raw", [rule_file(alert("node_edac_uncorrectable_errors_total > 0", **{"for": "5m"}))], {}, "increase(node_edac_uncorrectable_errors_total[5m])"),
    ("rate-over-aggregated", [rule_file(record("job:x_total:sum", "sum by (job) (x_total)"), record("job:x:rate5m", "rate(job:x_total:sum[5m])"))], {}, "sum by (job) (rate(x_total[5m]))"),
    ("rate-over-aggregated", [rule_file(record("job:x:rate5m", "sum by (job) (rate(x_total[5m]))"), alert("rate(job:x:rate5m[5m]) > 1"))], {}, "job:x:rate5m"),
    ("averaged-ratio", [rule_file(record("job:bad:rate5m", "sum by (job) (rate(e_total[5m]))"), record("job:all:rate5m", "sum by (job) (rate(r_total[5m]))"), record("job:err:ratio_rate5m", "job:bad:rate5m / job:all:rate5m"), record("job:err:ratio_rate30d", "avg_over_time(job:err:ratio_rate5m[30d])"))], {}, "sum_over_time(job:bad:rate5m[30d]) / sum_over_time(job:all:rate5m[30d])"),
    ("burn-rate-below-budget", [rule_file(alert("slo:sli_error:ratio_rate1h > (0.5 * (1 - 0.999)) and slo:sli_error:ratio_rate5m > (0.5 * (1 - 0.999))", **{"for": None}))], {}, "14.4× over 1h"),
    ("burn-rate-window-mismatch", [rule_file(alert("slo:sli_error:ratio_rate1h > (14.4 * 0.001) and slo:sli_error:ratio_rate5m > (6 * 0.001)", **{"for": None}))], {}, "(14.4 * 0.001)"),
    ("burn-rate-window-mismatch", [rule_file(alert("sum(rate(e_total[1h])) / sum(rate(r_total[1h])) > (14.4 * 0.001) and sum(rate(e_total[1h])) / sum(rate(r_total[1h])) > (14.4 * 0.001)", **{"for": None}))], {}, "[5m]"),
    ("burn-rate-never-fires", [rule_file(alert("slo:sli_error:ratio_rate1h > (14.4 * (1 - 0.9)) and slo:sli_error:ratio_rate5m > (14.4 * (1 - 0.9))", **{"for": None}))], {}, "9.5× over 1h"),
    ("burn-rate-slow-reset", [rule_file(alert("slo:sli_error:ratio_rate1h > (14.4 * (1 - 0.999))", **{"for": None}), record("slo:sli_error:ratio_rate5m", "sum(rate(e_total[5m])) / sum(rate(r_total[5m]))"))], {}, "slo:sli_error:ratio_rate5m"),
    ("burn-rate-slow-reset", [rule_file(alert("sum(rate(e_total[1h])) / sum(rate(r_total[1h])) > 0.0144", **{"for": None}))], {}, "rate(e_total[5m])"),
    ("burn-rate-slow-reset", [rule_file(alert("slo:sli_error:ratio_rate6h > (6 * 0.001) and slo:sli_error:ratio_rate3h > (6 * 0.001)", **{"for": None}), record("slo:sli_error:ratio_rate30m", "sum(rate(e_total[30m])) / sum(rate(r_total[30m]))"))], {}, "slo:sli_error:ratio_rate30m"),
    ("burn-rate-budget-spend", [rule_file(alert("slo:sli_error:ratio_rate3d > (14.4 * (1 - 0.999)) and slo:sli_error:ratio_rate6h > (14.4 * (1 - 0.999))", **{"for": None}))], {}, "1× over 3d"),
    ("burn-rate-budget-spend", [rule_file(alert("slo:sli_error:ratio_rate1h > (1 * (1 - 0.999)) and slo:sli_error:ratio_rate5m > (1 * (1 - 0.999))", **{"for": None}))], {}, "14.4× over 1h"),
    ("burn-rate-budget-spend", [rule_file(alert("slo:sli_error:ratio_rate2h > (1 * (1 - 0.999)) and slo:sli_error:ratio_rate10m > (1 * (1 - 0.999))", **{"for": None}))], {}, "18× over 2h"),
    ("burn-rate-for-too-long", [rule_file(alert("slo:sli_error:ratio_rate1h > (14.4 * 0.001) and slo:sli_error:ratio_rate5m > (14.4 * 0.001)", **{"for": "1h"}))], {}, "drop `for`"),
    ("quantile-aggregated", [rule_file(alert("avg by (service) (service_pod:http_request_duration_seconds:p99_rate5m) > 1"))], {}, "histogram_quantile(0.99, sum by (le, service) (rate(http_request_duration_seconds_bucket[5m])))"),
    ("quantile-over-time", [rule_file(alert("avg_over_time(service:http_request_duration_seconds:p99_rate5m[6h]) > 1"))], {}, "histogram_quantile(0.99, sum by (le, service) (rate(http_request_duration_seconds_bucket[6h])))"),
    ("histogram-quantile-of-quantiles", [rule_file(record("service_pod:lat:p90", "histogram_quantile(0.9, sum by (le, service, pod) (rate(lat_seconds_bucket[5m])))"), record("service:lat:p90", "histogram_quantile(0.9, sum by (le, service) (service_pod:lat:p90))"))], {}, "histogram_quantile(0.9, sum by (le, service) (rate(lat_seconds_bucket[5m])))"),
    ("alert-value-in-labels", [rule_file(alert("up == 0", labels={"severity": "warning", "current": "{{ $value }}"}))], {}, "annotations.current"),
    ("alert-missing-for", [rule_file(alert("rate(node_disk_io_time_seconds_total[5m]) > 0.8", **{"for": None}))], {}, "for: 5m"),
    ("irate-in-alert", [rule_file(alert("irate(http_requests_total[5m]) > 1 and irate(x_total[5m]) > 2"))], {}, "rate()"),
    ("absent-without-for", [rule_file(alert('absent(up{job="demo"})', **{"for": None}))], {}, "for: 5m"),
    ("regex-plain-string", [rule_file(record("job:x:rate5m", 'sum by (job) (rate(http_requests_total{method=~"GET"}[5m]))'))], {}, 'method="GET"'),
    ("regex-plain-string", [rule_file(record("job:x:rate5m", 'sum by (job) (rate(http_requests_total{path!~"/a\\\\.b"}[5m]))'))], {}, 'path!="/a.b"'),
    ("regex-redundant-anchor", [rule_file(record("job:x:rate5m", 'sum by (job) (rate(http_requests_total{job=~"^api-.*$"}[5m]))'))], {}, 'job=~"api-.*"'),
    ("range-too-short", [rule_file(record("job:x:rate1m", "sum by (job) (rate(http_requests_total[1m]))"))], {}, "[2m]"),
    ("group-interval-too-long", [rule_file(record("job:x:rate5m", "sum(rate(x_total[5m]))"), interval="10m")], {}, "every 1m"),
    ("duplicate-rule", [rule_file(alert("up == 0")), rule_file(alert("up == 0"))], {}, "delete this copy"),
    ("promql-function-version", [rule_file(record("job:x:pred1h", "holt_winters(x[1h], 0.3, 0.3)"))], {"versions": ("3",)}, "double_exponential_smoothing(x[1h], 0.3, 0.3)"),
    ("promql-function-version", [rule_file(record("job:x:pred1h", "double_exponential_smoothing(x[1h], 0.3, 0.3)"))], {"versions": ("2",)}, "holt_winters(x[1h], 0.3, 0.3)"),
    ("promql-experimental-function", [rule_file(record("job:x:rate5m", 'sort_by_label(sum by (job) (rate(x_total[5m])), "job")'))], {}, "enabledFeatures: [promql-experimental-functions]"),
    ("regex-dot-newline", [rule_file(record("job:x:count", 'count(x{msg=~"a.b\\\\n"})'))], {}, r'msg=~"a[^\\n]b\\n"'),
    ("nan-in-aggregation", [rule_file(alert("avg(rate(x_seconds_sum[5m]) / rate(x_seconds_count[5m])) > 1"))], {}, "(rate(x_seconds_count[5m]) > 0)"),
    ("gauge-function-on-counter", [rule_file(alert("delta(node_vmstat_oom_kill[30m]) > 0"))], {}, "increase(node_vmstat_oom_kill[30m])"),
    ("gauge-function-on-counter", [rule_file(alert("deriv(vllm:num_preemptions_total[10m]) > 1"))], {}, "rate(vllm:num_preemptions_total[10m])"),
    ("threshold-unit", [rule_file(alert("max by (model_name) (vllm:kv_cache_usage_perc) >= 95"))], {}, "0.95"),
    ("threshold-unit", [rule_file(alert("histogram_quantile(0.99, sum by (le) (rate(vllm:inter_token_latency_seconds_bucket[5m]))) > 100"))], {}, "0.1"),
    ("vector-matching", [rule_file(alert('rate(http_requests_total{status=~"5.."}[5m]) / rate(http_requests_total[5m]) > 0.05'))], {}, 'sum without (status) (rate(http_requests_total{status=~"5.."}[5m])) / sum without (status) (rate(http_requests_total[5m]))'),
    ("vector-matching", [rule_file(alert('sum by (job, code) (rate(http_requests_total{code=~"5.."}[5m])) / sum by (job, code) (rate(http_requests_total[5m])) > 0.05'))], {}, "sum by (job) (rate(http_requests_total[5m]))"),
    ("range-left-open", [rule_file(record("job:x:rate10m", "rate(job:x_total:sum[5m:5m])"))], {}, "job:x_total:sum[10m:5m]"),
    ("range-left-open", [rule_file(record("job:x:sum", "sum by (job) (x)"), record("job:x:deriv2m", "deriv(job:x:sum[1m])"), interval="1m")], {}, "job:x:sum[2m]"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("check", "docs", "config", "printed"),
    [pytest.param(*case, id=f"{case[0]}: {case[3]}") for case in SUGGESTIONS],
)
def test_the_printed_suggestion_passes_when_applied(
    tmp_path: Path, check: str, docs: Docs, config: dict[str, Any], printed: str
) -> None:
    needs_promtool()
    lint_config = LintConfig(**config)
    report = _lint(tmp_path, docs, lint_config, promtool=False)
    hits = [f for f in report.findings if f.check == check]
    assert hits and all(f.fix is not None for f in hits), [f.message for f in report.findings]
    assert printed in hits[0].message
    fix = hits[0].fix
    assert fix is not None
    words = " ".join(
        [fix.expr or "", *(f"{k}: {v}" for k, v in fix.fields), *(v for _, v in fix.settings)]
    )
    if not fix.remove and "drop `for`" not in printed and "every 1m" not in printed:
        assert _core(printed) in words, (printed, fix)
    assert _check_every_fix(tmp_path, docs, lint_config, check) == len(hits)


def _core(printed: str) -> str:
    """The part of a printed suggestion that appears in the fix itself."""
    if printed.endswith("()"):
        return printed.removesuffix(")")
    for prefix in ("for: ", "annotations.", "enabledFeatures: ["):
        if printed.startswith(prefix):
            return printed.removeprefix(prefix).rstrip("]")
    if "× over" in printed:
        return printed.split("×", 1)[0]
    return printed


def test_every_check_that_can_suggest_a_fix_has_a_case() -> None:
    suggesting = {
        check.id
        for check in all_checks()
        if (func := check.rule_func or check.set_func) is not None
        and "fix=" in inspect.getsource(func)
    }
    assert suggesting - {case[0] for case in SUGGESTIONS} == set()


@pytest.mark.parametrize(
    ("check", "docs", "config"),
    [
        pytest.param(p.values[0], p.values[1], p.values[3], id=p.id)
        for p in all_cases()
        if p.values[2] is F
    ],
)
def test_fixes_of_every_reporting_check_case_pass(
    tmp_path: Path, check: str, docs: Docs, config: dict[str, Any]
) -> None:
    needs_promtool()
    _check_every_fix(tmp_path, docs, LintConfig(**config), check)


@pytest.mark.parametrize(
    ("check", "expr"),
    [
        (
            "bucket-without-rate",
            'sum((x_bucket{le="0.5"} - x_bucket{le="0.5"} offset 1m) >= 0 '
            'or (x_bucket{le="1"} and x_bucket{le="0.5"} offset 1m))',
        ),
        (
            "counter-compared-raw",
            '(http_errors_total - http_errors_total{code="500"} offset 1m) > 5',
        ),
    ],
)
def test_a_rewrite_that_leaves_the_finding_is_not_offered(
    tmp_path: Path, check: str, expr: str
) -> None:
    """Wrapping the raw selector breaks the exact-increase shape its neighbour relied on, so the
    check would fire again: the finding is reported, without a fix."""
    doc = {"groups": [{"name": "g", "rules": [{"alert": "TestAlert", "expr": expr}]}]}
    report = _lint(tmp_path, [doc], LintConfig(), promtool=False)
    found = [f for f in report.findings if f.check == check]
    assert found
    assert all(f.fix is None for f in found)
