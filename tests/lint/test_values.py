"""Small value helpers: Prometheus 3 `le` spellings, Go float parsing, regex expansion, names."""

from __future__ import annotations

import pytest

from generator.lint.names import SeriesNames, parse_go_float
from generator.lint.promql import parse_duration
from generator.lint.regex import is_anchored, is_plain, literal_set
from generator.promql import prometheus3_le


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        pytest.param(1, "1.0", id="whole numbers get .0"),
        pytest.param(0.25, "0.25", id="decimals stay"),
        pytest.param(100000, "100000.0", id="below 1e6 no exponent"),
        pytest.param(1800000, "1.8e+06", id="1e6 and above in exponent form"),
        pytest.param(0.00005, "5e-05", id="below 1e-4 in exponent form"),
        pytest.param(0.0001, "0.0001", id="1e-4 stays decimal"),
        pytest.param(float("inf"), "+Inf", id="infinity"),
    ],
)
def test_prometheus3_le(value: float, stored: str) -> None:
    assert prometheus3_le(value) == stored


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("0.5", 0.5, id="decimal"),
        pytest.param("+Inf", float("inf"), id="plus Inf"),
        pytest.param("1e3", 1000.0, id="exponent"),
        pytest.param("0.5s", None, id="unit suffix is not a number"),
        pytest.param("1_0", None, id="underscores are not Go floats"),
        pytest.param("", None, id="empty"),
    ],
)
def test_parse_go_float(text: str, value: float | None) -> None:
    assert parse_go_float(text) == value


@pytest.mark.parametrize(
    ("pattern", "strings"),
    [
        pytest.param("1(\\.0)?", {"1", "1.0"}, id="optional .0 group"),
        pytest.param("^(?:1|1\\.0)$", {"1", "1.0"}, id="anchored non-capturing alternation"),
        pytest.param(".*etcd.*", None, id="star is not finite"),
        pytest.param("a[bc]", None, id="classes are not expanded"),
    ],
)
def test_literal_set(pattern: str, strings: set[str] | None) -> None:
    assert literal_set(pattern) == strings


def test_plain_and_anchored_regexes() -> None:
    assert is_plain("GET") and is_plain("1\\.0") and not is_plain("GET|POST")
    assert is_anchored("^api") and is_anchored("api$") and not is_anchored("api\\$")


def test_names() -> None:
    names = SeriesNames(["my_.*"])
    assert names.is_counter("http_requests_total")
    assert names.is_counter("node_vmstat_pgmajfault")
    assert names.is_counter("my_legacy")
    assert not names.is_counter("queue_depth")
    assert not names.is_counter("job:x_total:sum")  # recorded, not raw
    assert names.says_rate("service:http_requests:rate5m")
    assert not names.says_rate("job:x:sum")
    assert names.says_ratio("slo:sli_error:ratio_rate5m")
    assert not names.says_ratio("a:request_duration_seconds_bucket:increase1h")
    assert names.window("slo:sli_error:ratio_rate30m") == 1800
    assert parse_duration("0m") == 0 and parse_duration("1h30m") == 5400
    with pytest.raises(ValueError):
        parse_duration("5 minutes")
