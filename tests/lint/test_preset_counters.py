"""Model-server counters without a ``_total`` suffix are counters, and findings are not repeated."""

from __future__ import annotations

import pytest

from .helpers import LintFn, record, rule_file


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("tgi_request_success", id="TGI's success counter has no _total suffix"),
        pytest.param(
            "nv_inference_request_failure", id="Triton's failure counter has no _total suffix"
        ),
    ],
)
def test_preset_counters_are_not_gauges(lint: LintFn, name: str) -> None:
    doc = rule_file(record("service:x:rate5m", f"sum by (namespace) (rate({name}[5m]))"))
    report = lint(doc)
    assert not [f for f in report.findings if f.check == "rate-on-gauge"], report.findings


def test_a_gauge_rated_twice_in_one_rule_is_reported_once(lint: LintFn) -> None:
    expr = "sum(rate(queue_depth[5m])) or 0 * sum(rate(queue_depth[5m]))"
    report = lint(rule_file(record("service:x:rate5m", expr)))
    hits = [f for f in report.findings if f.check == "rate-on-gauge"]
    assert len(hits) == 1, hits
