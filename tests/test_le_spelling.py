"""``le`` spellings per Prometheus version, and the compat regex (docs/contracts.md, rule 1)."""

from __future__ import annotations

import re

import pytest

from generator.promql import go_float, le_matcher, prometheus3_le

# (bound, Go client / Prometheus 2 spelling, Prometheus 3 spelling, other spellings clients write)
TABLE = [
    (0.005, "0.005", "0.005", ()),
    (0.01, "0.01", "0.01", ()),
    (0.025, "0.025", "0.025", ()),
    (0.1, "0.1", "0.1", ()),
    (0.25, "0.25", "0.25", ()),
    (0.5, "0.5", "0.5", ()),
    (1, "1", "1.0", ()),
    (2.5, "2.5", "2.5", ()),
    (5, "5", "5.0", ()),
    (10, "10", "10.0", ()),
    (30, "30", "30.0", ()),
    (60, "60", "60.0", ()),
    (120, "120", "120.0", ()),
    (300, "300", "300.0", ()),
    (86400, "86400", "86400.0", ()),
    (100000, "100000", "100000.0", ()),
    (1e6, "1e+06", "1e+06", ("1000000", "1000000.0")),
    (1.8e6, "1.8e+06", "1.8e+06", ("1800000", "1800000.0")),
    (2.5e7, "2.5e+07", "2.5e+07", ("25000000",)),
    (5e-05, "5e-05", "5e-05", ("0.00005",)),
    (1e-04, "0.0001", "0.0001", ()),
    (0.001, "0.001", "0.001", ()),
]
IDS = [f"le {b!r}" for b, *_ in TABLE]


@pytest.mark.parametrize(("bound", "go", "p3", "others"), TABLE, ids=IDS)
def test_spellings(bound: float, go: str, p3: str, others: tuple[str, ...]) -> None:
    assert go_float(bound) == go
    assert prometheus3_le(bound) == p3
    assert le_matcher(bound, "3").op == "=" and le_matcher(bound, "3").value == p3


@pytest.mark.parametrize("version", ["2", "compat"])
@pytest.mark.parametrize(("bound", "go", "p3", "others"), TABLE, ids=IDS)
def test_regex_matches_every_spelling_of_the_number_and_nothing_else(
    version: str, bound: float, go: str, p3: str, others: tuple[str, ...]
) -> None:
    m = le_matcher(bound, version)
    assert m.op == "=~"
    pattern = re.compile(m.value)
    for spelling in {go, p3, *others}:
        assert pattern.fullmatch(spelling), spelling
    for other, ogo, op3, more in TABLE:
        if other != bound:
            for spelling in {ogo, op3, *more}:
                assert not pattern.fullmatch(spelling), (bound, spelling)
    for near in (go + "1", "1" + go, "+Inf", go.replace(".", "x", 1) if "." in go else go + "x"):
        assert not pattern.fullmatch(near), near
