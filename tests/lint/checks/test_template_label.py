"""``template-label``: rule files it must report and rule files it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.lint.helpers import (
    F,
    LintFn,
    P,
    alert,
    case_result,
    doc_case,
    record,
    rule_file,
    summary,
)

CASES = [
    doc_case(
        "template-label",
        rule_file(
            alert(
                "sum by (frontend) (rate(haproxy_frontend_denied_total[5m])) > 0",
                **summary("{{ $labels.proxy }} blocked requests"),
            )
        ),
        F,
        "issue: $labels.proxy on sum by (frontend)",
    ),
    doc_case(
        "template-label",
        rule_file(
            alert(
                "sum by (frontend, proxy) (rate(haproxy_frontend_denied_total[5m])) > 0",
                **summary("{{ $labels.proxy }} blocked requests"),
            )
        ),
        P,
        "fixed twin: sum by (frontend, proxy) keeps proxy",
    ),
    doc_case(
        "template-label",
        rule_file(alert('absent(up{job="api"})', **summary("{{ $labels.pod }} is gone"))),
        F,
        "issue: $labels.pod on absent()",
    ),
    doc_case(
        "template-label",
        rule_file(alert('absent(up{job="api"})', **summary("{{ $labels.job }} is gone"))),
        P,
        "fixed twin: $labels.job, an equality matcher of absent()",
    ),
    doc_case(
        "template-label",
        rule_file(alert('absent(up{job=~"api|web"})', **summary("{{ $labels.job }} is gone"))),
        F,
        "absent() drops a regex-matched label",
    ),
    doc_case(
        "template-label",
        rule_file(alert("sum(rate(errors_total[5m])) > 1", **summary("{{ .Labels.instance }}"))),
        F,
        ".Labels.instance after sum()",
    ),
    doc_case(
        "template-label",
        rule_file(
            alert(
                "sum by (instance) (rate(errors_total[5m])) > 1",
                **summary("{{ .Labels.instance }}"),
            )
        ),
        P,
        ".Labels.instance kept by sum by (instance)",
    ),
    doc_case(
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
    doc_case(
        "template-label",
        rule_file(
            alert(
                "sum without (pod) (rate(errors_total[5m])) > 1",
                **summary('{{ index $labels "pod" }}'),
            )
        ),
        F,
        "index $labels after sum without (pod)",
    ),
    doc_case(
        "template-label",
        rule_file(
            alert(
                "sum without (pod) (rate(errors_total[5m])) > 1",
                **summary('{{ index $labels "instance" }}'),
            )
        ),
        P,
        "index $labels of a label sum without (pod) keeps",
    ),
    doc_case(
        "template-label",
        rule_file(
            record("service:errors:rate5m", "sum by (service) (rate(errors_total[5m]))"),
            alert("service:errors:rate5m > 1", **summary("{{ $labels.pod }}")),
        ),
        F,
        "a recorded series whose recording rule removed the label",
    ),
    doc_case(
        "template-label",
        rule_file(
            record(
                "service:errors:rate5m",
                "sum by (service) (rate(errors_total[5m]))",
                labels={"team": "ml"},
            ),
            alert(
                "service:errors:rate5m > 1", **summary("{{ $labels.service }} {{ $labels.team }}")
            ),
        ),
        P,
        "a recorded series keeps its by labels and its rule's static labels",
    ),
    doc_case(
        "template-label",
        rule_file(
            alert(
                'sum by (job) (up{job="a"}) == 0 or absent(up{job="a"})',
                **summary("{{ $labels.job }}"),
            )
        ),
        P,
        "either side of `or` carries the label",
    ),
    doc_case(
        "template-label",
        rule_file(
            alert(
                'label_replace(sum(rate(x_total[5m])), "pod", "all", "", "") > 1',
                **summary("{{ $labels.pod }}"),
            )
        ),
        P,
        "label_replace adds the label back",
    ),
]


@pytest.mark.parametrize(("check", "docs", "expected", "config"), CASES)
def test_check(
    lint: LintFn,
    check: str,
    docs: list[dict[str, Any] | str],
    expected: bool,
    config: dict[str, Any],
) -> None:
    case_result(lint, check, docs, expected, config)
