"""What ``obsgen verify`` counts as the same rule: :func:`generator.verify_bundle.normalised_expr`
equates the spellings Prometheus prints back (its parser's String(), seen on 2.42 in
tests/e2e/test_verify.py) and nothing else; :func:`rule_digest` changes with any rule part."""

from __future__ import annotations

import pytest

from generator.verify_bundle import (
    _difference,
    _rendered_rule,
    _served_rule,
    normalised_expr,
    rule_digest,
)


@pytest.mark.parametrize(
    ("written", "printed"),
    [
        ("sum(rate(x[30d]))", "sum(rate(x[4w2d]))"),  # model.Duration.String()
        ("a + 68719476736", "a + 6.8719476736e+10"),  # Go's %v of a float
        ('x{b="1", a="2"}', 'x{a="2",b="1"}'),  # selectors print matchers sorted
        ("sum by (le)\n  (rate(x[5m]))", "sum by (le) (rate(x[5m]))"),
        ("x[300s] offset 1h", "x[5m] offset 60m"),
        ("x{a=~'5..'}", 'x{a=~"5.."}'),
        ('x{a=~"\\\\d"}', "x{a=~`\\d`}"),
    ],
)
def test_spellings_prometheus_treats_alike_normalise_alike(written: str, printed: str) -> None:
    assert normalised_expr(written) == normalised_expr(printed)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("x > 0.05", "x > 0.5"),
        ("rate(x[5m])", "rate(x[10m])"),
        ('x{a="1"}', 'x{a="2"}'),
        ('x{a="1"}', 'x{a!="1"}'),
        ("sum by (a) (x)", "sum by (b) (x)"),
        ("a_1", "a_2"),
        ('x{a="b c"}', 'x{a="bc"}'),
    ],
)
def test_different_expressions_stay_different(one: str, other: str) -> None:
    assert normalised_expr(one) != normalised_expr(other)


RENDERED = {
    "alert": "A",
    "expr": "x > 1",
    "for": "5m",
    "labels": {"severity": "critical"},
    "annotations": {"summary": "s"},
}
SERVED = {
    "type": "alerting",
    "name": "A",
    "query": "x > 1",
    "duration": 300,
    "labels": {"severity": "critical"},
    "annotations": {"summary": "s"},
}


def test_a_rule_as_rendered_and_as_served_has_one_digest() -> None:
    assert rule_digest([_rendered_rule(RENDERED)]) == rule_digest([_served_rule(SERVED)])


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"duration": 600}, "for 10m loaded, 5m rendered"),
        ({"labels": {"severity": "warning"}}, "labels severity differ"),
        ({"annotations": {}}, "annotations summary differ"),
        ({"query": "x > 2"}, "expression differs"),
        ({"name": "B"}, "name differs"),
    ],
)
def test_any_changed_part_changes_the_digest_and_is_named(change: dict[str, object], named: str) -> None:
    mine, theirs = [_rendered_rule(RENDERED)], [_served_rule({**SERVED, **change})]
    assert rule_digest(mine) != rule_digest(theirs)
    assert named in _difference(mine, theirs)
