"""Label-set inference (generator/lint/labels.py): which labels each expression can carry."""

from __future__ import annotations

import pytest

from generator.lint import promql as q
from generator.lint.labels import analyse

OPEN = None


@pytest.mark.parametrize(
    ("expr", "only", "can", "cannot"),
    [
        ('up{job="a"}', OPEN, ["job", "pod"], []),
        ('up{pod=""}', OPEN, ["job"], ["pod"]),
        ("sum by (a, b) (x)", {"a", "b"}, ["a"], ["c"]),
        ("sum without (a) (x)", OPEN, ["b"], ["a"]),
        ("sum(x)", set(), [], ["a"]),
        ("topk(3, sum by (a) (x))", {"a"}, ["a"], ["b"]),
        ('count_values("version", x)', {"version"}, ["version"], ["a"]),
        ('absent(up{job="a", pod=~"p.*"})', {"job"}, ["job"], ["pod"]),
        ('absent_over_time(up{job="a"}[5m])', {"job"}, ["job"], ["instance"]),
        ('absent(sum(up{job="a"}))', set(), [], ["job"]),
        ("vector(1)", set(), [], ["a"]),
        ('label_replace(sum(x), "pod", "$1", "", "")', {"pod"}, ["pod"], ["a"]),
        ('label_join(sum by (a) (x), "c", ",", "a")', {"a", "c"}, ["c"], ["b"]),
        (
            "histogram_quantile(0.9, sum by (le, svc) (rate(x_bucket[5m])))",
            {"svc"},
            ["svc"],
            ["le"],
        ),
        ("rate(x[5m]) * on (a) group_left (b) sum by (a, b) (y)", OPEN, ["b", "c"], []),
        ("sum by (a) (x) / on (a) sum by (a, b) (y)", {"a"}, ["a"], ["b"]),
        ("sum by (a, b) (x) / ignoring (b) group_left sum by (a) (y)", {"a", "b"}, ["b"], ["c"]),
        ("sum by (a) (x) or sum by (b) (y)", {"a", "b"}, ["a", "b"], ["c"]),
        ("sum by (a) (x) and sum by (a) (y)", {"a"}, ["a"], ["b"]),
        ("max_over_time(sum by (a) (x)[1h:5m])", {"a"}, ["a"], ["b"]),
        ("time() - sum by (a) (x_timestamp)", {"a"}, ["a"], ["b"]),
        ("-sum by (a) (x)", {"a"}, ["a"], ["b"]),
    ],
)
def test_labels_of(expr: str, only: set[str] | None, can: list[str], cannot: list[str]) -> None:
    labels = analyse(q.parse(expr)).labels
    assert labels.only == (None if only is None else frozenset(only))
    assert all(labels.can(label) for label in can)
    assert not any(labels.can(label) for label in cannot)


def test_scalars_have_no_labels_and_match_anything() -> None:
    assert analyse(q.parse("scalar(x) * 2")).labels.scalar
    assert analyse(q.parse("sum by (a) (x) > scalar(sum(y))")).problems == []


@pytest.mark.parametrize(
    ("expr", "kind"),
    [
        ("sum by (job) (a) / sum(b)", "never-matches"),
        ("sum by (job) (a) > 0 and sum(b) > 0", "never-matches"),
        ('a{job="x"} / sum by (instance) (b)', "never-matches"),
        ("sum(a) / on (cluster) count(b)", "label-removed label-removed"),
        ("sum(a) / on (cluster) sum by (cluster) (b)", "label-removed never-matches"),
        ("count by (cluster) (sum by (job) (a))", "label-removed"),
        ('x{a="1"} / x{a="2"}', "never-matches"),
        ('x{a=~"1|2"} unless x{a="3"}', "never-matches"),
        ('sum by (a) (x{a="1"}) / sum by (a) (x{a="2"})', "never-matches"),
        ('absent(x{a="1"}) and y{a="2"}', "never-matches"),
        ('rate(x_bucket{le="1"}[5m]) / rate(x_count[5m])', "never-matches"),
        (
            "sum by (le) (rate(x_bucket[5m])) > sum by (le) (rate(x_sum[5m]))",
            "label-removed never-matches",
        ),
        ("sum by (cluster) (a) + sum by (cluster) (b or vector(0))", "never-matches"),
        ("(sum by (cluster) (b) or vector(0)) - sum by (cluster) (a)", "never-matches"),
        ("sum by (c) (a) > 0 and sum by (c) (b or vector(0)) == 0", "never-matches"),
    ],
)
def test_impossible_joins_and_groupings(expr: str, kind: str) -> None:
    assert [p.kind for p in analyse(q.parse(expr)).problems] == kind.split()


@pytest.mark.parametrize(
    "expr",
    [
        "sum by (job) (a) / on () group_left sum(b)",
        'a{job="x"} / b',
        "sum by (job) (a) / sum by (job) (b)",
        "sum by (job) (a) or sum(b)",
        "sum by (a, b) (x) / ignoring (b) group_left sum by (a) (y)",
        "rate(x[5m]) / on (job) group_left sum by (job) (rate(y[5m]))",
        'x{a="1"} / ignoring (a) x{a="2"}',
        'x{a=~"1|2"} / x{a="2"}',
        'x{a="1"} / on (b) x{a="2"}',
        'sum by (b) (x{a="1"}) / sum by (b) (x{a="2"})',
        'x{a="1"} or x{a="2"}',
        'rate(x_bucket{le="1"}[5m]) / ignoring (le) rate(x_count[5m])',
        'rate(job:x_bucket:rate5m{le="1"}[5m]) / rate(job:x_count:rate5m[5m])',
        "sum by (c) (a or vector(0)) + sum by (c) (b or vector(0))",
        "sum(a) + sum(b or vector(0))",
        "sum by (c) (a) + on () group_left sum(b or vector(0))",
        "sum by (c) (a) / sum by (c) (b) or vector(0)",
    ],
)
def test_joins_that_can_match_are_not_reported(expr: str) -> None:
    assert analyse(q.parse(expr)).problems == []
