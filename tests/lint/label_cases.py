"""Table cases of the label-set checks (and the other pint-depth checks), for test_checks.py.

Each mistake is one of pint's documented examples (or an issue's report) rewritten as an
obsgen rule file, next to its fixed twin that must stay clean.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from .helpers import alert, record, rule_file

F = True
P = False
NO_FOR: dict[str, Any] = {"for": None}

# The numbered reports: (check, bad expr, fixed expr, alert fields).
ISSUE_ERRORS = (
    'sum by (handler, status) (rate(http_requests_total{status="5xx"}[5m])) '
    "/ sum by (handler) (rate(http_requests_total[5m])) > 0.05"
)
ISSUE_ERRORS_FIXED = (
    'sum by (handler) (rate(http_requests_total{status="5xx"}[5m])) '
    "/ sum by (handler) (rate(http_requests_total[5m])) > 0.05"
)
ISSUE_IRATE = "irate(http_requests_total[5m]) > 1"
ISSUE_IRATE_FIXED = "rate(http_requests_total[5m]) > 1"


def _summary(text: str) -> dict[str, Any]:
    return {"annotations": {"summary": text, "runbook_url": "https://r/x"}}


def _case(check: str, doc: dict[str, Any], expected: bool, name: str) -> Any:
    return pytest.param(check, [doc], expected, {}, id=name)


LABEL_CASES = [
    # --- template-label
    _case(
        "template-label",
        rule_file(
            alert(
                "sum by (frontend) (rate(haproxy_frontend_denied_total[5m])) > 0",
                **_summary("{{ $labels.proxy }} blocked requests"),
            )
        ),
        F,
        "issue: $labels.proxy on sum by (frontend)",
    ),
    _case(
        "template-label",
        rule_file(
            alert(
                "sum by (frontend, proxy) (rate(haproxy_frontend_denied_total[5m])) > 0",
                **_summary("{{ $labels.proxy }} blocked requests"),
            )
        ),
        P,
        "fixed twin: sum by (frontend, proxy) keeps proxy",
    ),
    _case(
        "template-label",
        rule_file(alert('absent(up{job="api"})', **_summary("{{ $labels.pod }} is gone"))),
        F,
        "issue: $labels.pod on absent()",
    ),
    _case(
        "template-label",
        rule_file(alert('absent(up{job="api"})', **_summary("{{ $labels.job }} is gone"))),
        P,
        "fixed twin: $labels.job, an equality matcher of absent()",
    ),
    _case(
        "template-label",
        rule_file(alert('absent(up{job=~"api|web"})', **_summary("{{ $labels.job }} is gone"))),
        F,
        "absent() drops a regex-matched label",
    ),
    _case(
        "template-label",
        rule_file(alert("sum(rate(errors_total[5m])) > 1", **_summary("{{ .Labels.instance }}"))),
        F,
        ".Labels.instance after sum()",
    ),
    _case(
        "template-label",
        rule_file(
            alert(
                "sum by (instance) (rate(errors_total[5m])) > 1",
                **_summary("{{ .Labels.instance }}"),
            )
        ),
        P,
        ".Labels.instance kept by sum by (instance)",
    ),
    _case(
        "template-label",
        rule_file(
            alert(
                "sum(rate(errors_total[5m])) > 1",
                labels={"severity": "warning", "team": "{{ $labels.team }}"},
            )
        ),
        F,
        "a label template reads a removed label",
    ),
    _case(
        "template-label",
        rule_file(
            alert(
                "sum without (pod) (rate(errors_total[5m])) > 1",
                **_summary('{{ index $labels "pod" }}'),
            )
        ),
        F,
        "index $labels after sum without (pod)",
    ),
    _case(
        "template-label",
        rule_file(
            alert(
                "sum without (pod) (rate(errors_total[5m])) > 1",
                **_summary('{{ index $labels "instance" }}'),
            )
        ),
        P,
        "index $labels of a label sum without (pod) keeps",
    ),
    _case(
        "template-label",
        rule_file(
            record("service:errors:rate5m", "sum by (service) (rate(errors_total[5m]))"),
            alert("service:errors:rate5m > 1", **_summary("{{ $labels.pod }}")),
        ),
        F,
        "a recorded series whose recording rule removed the label",
    ),
    _case(
        "template-label",
        rule_file(
            record(
                "service:errors:rate5m",
                "sum by (service) (rate(errors_total[5m]))",
                labels={"team": "ml"},
            ),
            alert(
                "service:errors:rate5m > 1", **_summary("{{ $labels.service }} {{ $labels.team }}")
            ),
        ),
        P,
        "a recorded series keeps its by labels and its rule's static labels",
    ),
    _case(
        "template-label",
        rule_file(
            alert(
                'sum by (job) (up{job="a"}) == 0 or absent(up{job="a"})',
                **_summary("{{ $labels.job }}"),
            )
        ),
        P,
        "either side of `or` carries the label",
    ),
    _case(
        "template-label",
        rule_file(
            alert(
                'label_replace(sum(rate(x_total[5m])), "pod", "all", "", "") > 1',
                **_summary("{{ $labels.pod }}"),
            )
        ),
        P,
        "label_replace adds the label back",
    ),
    # --- vector-matching
    _case(
        "vector-matching",
        rule_file(alert(ISSUE_ERRORS)),
        F,
        "issue: sum by (handler, status) / sum by (handler)",
    ),
    _case(
        "vector-matching", rule_file(alert(ISSUE_ERRORS_FIXED)), P, "fixed twin: both by (handler)"
    ),
    _case(
        "vector-matching",
        rule_file(
            alert(
                'sum by (handler, status) (rate(http_requests_total{status="5xx"}[5m])) '
                "/ ignoring (status) group_left sum by (handler) (rate(http_requests_total[5m])) "
                "> 0.05"
            )
        ),
        P,
        "fixed twin: ignoring (status) group_left",
    ),
    _case(
        "vector-matching",
        rule_file(
            alert(
                'rate(http_errors_total{instance="a"}[5m]) '
                "/ sum by (cluster) (rate(http_errors_total[5m])) > 0.1"
            )
        ),
        F,
        "pint: an instance series over a cluster aggregate",
    ),
    _case(
        "vector-matching",
        rule_file(
            alert(
                'sum by (cluster, instance) (rate(http_errors_total{instance="a"}[5m])) '
                "/ ignoring (instance) group_left sum by (cluster) (rate(http_errors_total[5m])) "
                "> 0.1"
            )
        ),
        P,
        "pint's fix: ignoring (instance)",
    ),
    _case(
        "vector-matching",
        rule_file(alert('foo{job="bar"} unless sum(foo)')),
        F,
        "pint: unless against sum() never removes anything",
    ),
    _case(
        "vector-matching",
        rule_file(alert('foo{job="bar"} unless on (job) sum by (job) (foo)')),
        P,
        "unless on (job) against sum by (job)",
    ),
    _case(
        "vector-matching",
        rule_file(
            record("job:up:sum", "sum by (job) (up)"),
            alert('up{instance="a"} == 0 and job:up:sum > 0'),
        ),
        F,
        "and with a recorded series that dropped the matched label",
    ),
    _case(
        "vector-matching",
        rule_file(
            record("job:up:sum", "sum by (job) (up)"),
            alert('up{instance="a"} == 0 and on (job) job:up:sum > 0'),
        ),
        P,
        "and on (job) with the recorded series",
    ),
    # --- label-removed
    _case(
        "label-removed",
        rule_file(record("cluster:errors:group", "group by (cluster) (sum(errors_total))")),
        F,
        "pint: group by (cluster) over sum()",
    ),
    _case(
        "label-removed",
        rule_file(
            record("cluster:errors:group", "group by (cluster) (sum by (cluster) (errors_total))")
        ),
        P,
        "group by (cluster) over sum by (cluster)",
    ),
    _case(
        "label-removed",
        rule_file(record("cluster:foo_bar:ratio", "sum(foo) / on (cluster) count(bar)")),
        F,
        "pint: on (cluster) between two sum()s",
    ),
    _case(
        "label-removed",
        rule_file(
            record(
                "cluster:foo_bar:ratio",
                "sum by (cluster) (foo) / on (cluster) count by (cluster) (bar)",
            )
        ),
        P,
        "on (cluster) between two by (cluster)",
    ),
    _case(
        "label-removed",
        rule_file(
            alert(
                "service_ready and on (instance) (service_errors == 0) "
                "* on (cluster) group_left (env, location) cluster_info"
            )
        ),
        F,
        "pint: group_left labels on the right of and never reach the result",
    ),
    _case(
        "label-removed",
        rule_file(
            alert(
                "(service_ready and on (instance) (service_errors == 0)) "
                "* on (cluster) group_left (env, location) cluster_info"
            )
        ),
        P,
        "pint's fix: the and in parentheses before the join",
    ),
    _case(
        "label-removed",
        rule_file(alert("up * on (cluster) group_left (env) sum by (cluster) (cluster_info) == 0")),
        F,
        "group_left copies a label the right side summed away",
    ),
    _case(
        "label-removed",
        rule_file(
            alert("up * on (cluster) group_left (env) max by (cluster, env) (cluster_info) == 0")
        ),
        P,
        "group_left copies a label the right side keeps",
    ),
    # --- irate-in-alert
    _case(
        "irate-in-alert", rule_file(alert(ISSUE_IRATE, **{"for": "5m"})), F, "issue: irate with for"
    ),
    _case("irate-in-alert", rule_file(alert(ISSUE_IRATE_FIXED)), P, "fixed twin: rate"),
    _case(
        "irate-in-alert",
        rule_file(alert("idelta(queue_depth[5m]) > 10", **NO_FOR)),
        F,
        "idelta without for flaps",
    ),
    _case(
        "irate-in-alert",
        rule_file(
            record("job:http_requests:irate5m", "sum by (job) (irate(http_requests_total[5m]))"),
            alert("job:http_requests:irate5m > 1"),
        ),
        F,
        "an alert on a series recorded with irate",
    ),
    _case(
        "irate-in-alert",
        rule_file(
            record("job:http_requests:irate5m", "sum by (job) (irate(http_requests_total[5m]))")
        ),
        P,
        "irate in a recording rule no alert reads (for dashboards)",
    ),
]


def _commented(comment: str) -> str:
    """A rule file whose irate alert carries ``comment`` above it."""
    return f"""groups:
- name: g
  rules:
  {comment}
  - alert: RequestRateHigh
    expr: irate(http_requests_total[5m]) > 1
    for: 5m
    labels: {{severity: warning}}
    annotations: {{summary: s, runbook_url: https://r/x}}
"""


TODAY = {"today": date(2026, 12, 3)}
DISABLE_CASES = [
    pytest.param(
        "disable-comment",
        [_commented("# obsgen lint disable irate-in-alrt")],
        F,
        TODAY,
        id="a misspelt check id",
    ),
    pytest.param(
        "disable-comment",
        [_commented("# obsgen lint disable irate-in-alert until 2026-12-02")],
        F,
        TODAY,
        id="an expired disable comment",
    ),
    pytest.param(
        "disable-comment",
        [_commented("# obsgen lint disable irate-in-alert until 2026-31-12")],
        F,
        TODAY,
        id="a date that is no date",
    ),
    pytest.param(
        "disable-comment",
        [_commented("# obsgen lint disable irate-in-alert until 2027-01-31")],
        P,
        TODAY,
        id="a disable comment still in force",
    ),
]


MORE_CASES = [
    # --- record-missing
    _case(
        "record-missing",
        rule_file(alert("job:http_errors:rate5m > 1")),
        F,
        "an alert on a record no linted rule writes",
    ),
    pytest.param(
        "record-missing",
        [
            rule_file(record("job:http_errors:rate5m", "sum by (job) (rate(errors_total[5m]))")),
            rule_file(alert("job:http_errors:rate5m > 1")),
        ],
        P,
        {},
        id="the record is written in another linted file",
    ),
    _case(
        "record-missing",
        rule_file(alert("rate(vllm:request_success_total[5m]) > 1")),
        P,
        "a scraped name with one colon (vLLM) is no record",
    ),
]

MORE_CASES += [
    # --- impossible-comparison
    _case(
        "impossible-comparison",
        rule_file(alert('count(up{job="api"} == 1) == 0')),
        F,
        "count() == 0 never holds: count of nothing is nothing",
    ),
    _case(
        "impossible-comparison",
        rule_file(alert('(count(up{job="api"} == 1) or vector(0)) == 0')),
        P,
        "fixed twin: or vector(0) before == 0",
    ),
    _case(
        "impossible-comparison",
        rule_file(alert('absent(up{job="api"}) > 1')),
        F,
        "absent() is 1: > 1 never holds",
    ),
    _case("impossible-comparison", rule_file(alert('absent(up{job="api"})')), P, "plain absent()"),
    _case(
        "impossible-comparison",
        rule_file(alert("rate(errors_total[5m]) < 0")),
        F,
        "rate() is never negative",
    ),
    _case(
        "impossible-comparison",
        rule_file(alert("0.5 < rate(errors_total[5m])")),
        P,
        "a threshold on the left of a rate",
    ),
    _case(
        "impossible-comparison",
        rule_file(alert("vector(1) > 2")),
        P,
        "vector(1) > 2: no constant pair, watchdog-style (not reported here)",
    ),
    _case(
        "impossible-comparison",
        rule_file(record("job:x:never", "1 > bool 2")),
        F,
        "two constants",
    ),
    _case(
        "impossible-comparison",
        rule_file(alert("rate(errors_total[5m]) > bool 1")),
        F,
        "an alert with bool fires for every series",
    ),
    _case(
        "impossible-comparison",
        rule_file(record("job:errors:above", "rate(errors_total[5m]) > bool 1")),
        P,
        "a recording rule may record 0/1 with bool",
    ),
    # --- fragile-aggregation
    _case(
        "fragile-aggregation",
        rule_file(alert("topk(10, rate(http_requests_total[5m]) > 0)")),
        F,
        "pint: topk(10, …) in an alert",
    ),
    _case(
        "fragile-aggregation",
        rule_file(alert("rate(http_requests_total[5m]) > 100")),
        P,
        "fixed twin: a threshold over every series",
    ),
    _case(
        "fragile-aggregation",
        rule_file(alert("topk by (namespace) (1, max without (instance) (kube_quota)) > 0.9")),
        P,
        "topk by (…) (1, …) de-duplicates",
    ),
    _case(
        "fragile-aggregation",
        rule_file(alert("count(topk(3, rate(x_total[5m]))) > 2")),
        P,
        "topk merged again by count()",
    ),
    # --- alert-for-value
    _case("alert-for-value", rule_file(alert("up == 0", **{"for": "0m"})), F, "for: 0m"),
    _case("alert-for-value", rule_file(alert("up == 0", **{"for": "5m"})), P, "for: 5m"),
    _case(
        "alert-for-value",
        rule_file(alert("up == 0", keep_firing_for="0s")),
        F,
        "keep_firing_for: 0s",
    ),
    _case(
        "alert-for-value",
        rule_file(alert("up == 0", keep_firing_for="10m")),
        P,
        "keep_firing_for: 10m",
    ),
    _case(
        "alert-for-value",
        rule_file(alert("up == 0", **{"for": "1m"}), interval="5m"),
        F,
        "for shorter than the group interval",
    ),
    _case(
        "alert-for-value",
        rule_file(alert("up == 0", **{"for": "10m"}), interval="5m"),
        P,
        "for longer than the group interval",
    ),
]
