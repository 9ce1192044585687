"""Inline disable comments: which checks they switch off, for which rule, until when."""

from __future__ import annotations

from datetime import date

import pytest

from generator.lint import LintConfig

from .helpers import LintFn, commented


@pytest.mark.parametrize(
    ("comment", "today", "checks"),
    [
        ("# obsgen lint disable irate-in-alert", date(2026, 12, 3), []),
        ("# obsgen lint disable irate-in-alert until 2027-01-31", date(2027, 1, 31), []),
        (
            "# obsgen lint disable irate-in-alert until 2027-01-31",
            date(2027, 2, 1),
            ["disable-comment", "irate-in-alert"],
        ),
        ("# obsgen lint disable alert-missing-for, irate-in-alert  (bursty by design)", None, []),
        ("# obsgen lint disable all", None, []),
        ("# obsgen-lint: disable=irate-in-alert", None, []),
        ("# obsgen lint disable rate-on-gauge", None, ["irate-in-alert"]),
        ("# obsgen lint disable irate", None, ["disable-comment", "irate-in-alert"]),
        ("# a comment", None, ["irate-in-alert"]),
    ],
)
def test_a_comment_above_a_rule_switches_its_checks_off_until_its_date(
    lint: LintFn, comment: str, today: date | None, checks: list[str]
) -> None:
    report = lint(commented(comment), config=LintConfig(today=today))
    assert sorted(f.check for f in report.findings) == checks


def test_a_comment_covers_only_the_rule_it_belongs_to(lint: LintFn) -> None:
    text = commented("# obsgen lint disable irate-in-alert")
    rule = text.split("\n", 4)[4]  # the rule below the comment
    report = lint(text + rule.replace("RequestRateHigh", "Other"))
    assert [(f.check, f.rule) for f in report.findings] == [("irate-in-alert", "Other")]


def test_the_finding_points_at_the_comment(lint: LintFn) -> None:
    report = lint(commented("# obsgen lint disable nope"))
    found = [f for f in report.findings if f.check == "disable-comment"]
    assert [f.line for f in found] == [4]
    assert "`nope`, which is no check" in found[0].message
