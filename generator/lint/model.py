"""Values the linter passes around: severities, findings, and rules as read from a file.

A :class:`Rule` keeps the 1-based line numbers of the rule and of its keys in the file the
user wrote (not in a temp copy), so every :class:`Finding` points at the real source line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from enum import Enum
from functools import cached_property
from typing import Any


class Severity(Enum):
    """How bad a finding is; ordered ``INFO < WARNING < ERROR``."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        """0 for info, 1 for warning, 2 for error."""
        return _RANKS[self]

    @classmethod
    def parse(cls, text: str) -> Severity:
        """Return the severity spelled ``text`` (``"error"``, ``"warning"``, ``"info"``).

        Raises:
            ValueError: ``text`` is not one of them.
        """
        try:
            return cls(text)
        except ValueError:
            choices = ", ".join(s.value for s in cls)
            raise ValueError(f"unknown severity {text!r}; expected one of {choices}") from None


_RANKS = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}


@dataclass(frozen=True)
class Fix:
    """A concrete change that resolves a finding.

    Attributes:
        expr: the rule's whole new expression, or ``None`` to keep it.
        fields: rule keys to set, as ``(key, value)``: ``"for"``, ``"labels.<name>"``,
            ``"annotations.<name>"``, or ``"group.interval"`` for the rule's group; a ``None``
            value removes the key.
        remove: delete the rule (a duplicate).
        settings: ``.obsgen-lint.yaml`` entries to add, as ``(key, list item)``, when the
            finding is about how your servers run (``enabledFeatures``).
    """

    expr: str | None = None
    fields: tuple[tuple[str, str | None], ...] = ()
    remove: bool = False
    settings: tuple[tuple[str, str], ...] = ()

    def as_dict(self) -> dict[str, object]:
        """JSON form: ``{"expr": …, "set": {key: value}, "remove": true, "config": {…}}``
        (keys present only when used)."""
        out: dict[str, object] = {}
        if self.expr is not None:
            out["expr"] = self.expr
        if self.fields:
            out["set"] = dict(self.fields)
        if self.remove:
            out["remove"] = True
        if self.settings:
            out["config"] = {key: [value] for key, value in self.settings}
        return out


@dataclass(frozen=True)
class Finding:
    """One problem found by a check.

    Attributes:
        file: the file as named on the command line (or below a folder named there).
        line: 1-based line in that file; 0 when the problem has no line (a whole file).
        check: the check id, e.g. ``histogram-quantile-without-le``.
        severity: after the config's overrides.
        message: one line: what is wrong and what to write instead.
        rule: the rule's alert or record name, ``""`` when not about one rule.
        fix: the change the message suggests, when it is concrete.
    """

    file: str
    line: int
    check: str
    severity: Severity
    message: str
    rule: str = ""
    fix: Fix | None = None

    def sort_key(self) -> tuple[str, int, str, str]:
        """Findings are reported by file, then line, then check id."""
        return (self.file, self.line, self.check, self.message)


@dataclass(frozen=True)
class Disable:
    """One check switched off for one rule by a comment.

    Attributes:
        check: the check id as written (``all`` for every check).
        line: 1-based line of the comment.
        until: the last day the comment holds (``until 2027-01-31``), ``None`` for no end.
        bad_date: the text after ``until`` when it is not a ``YYYY-MM-DD`` date (the check
            then stays on).
    """

    check: str
    line: int
    until: date | None = None
    bad_date: str = ""

    def holds(self, today: date) -> bool:
        """True while the comment switches its check off: no end, or ``today <= until``."""
        if self.bad_date:
            return False
        return self.until is None or today <= self.until


@dataclass(frozen=True, eq=False)
class Rule:
    """One alerting or recording rule with where it was written.

    Rules compare and hash by identity: each is the rule read at one place of one file, and
    the engine keys the rule's parsed tree by it.

    Attributes:
        file: display name of the source file.
        group: the rule group's name.
        group_interval: the group's ``interval`` as written (``"30s"``), or ``None``.
        index: 1-based position of the rule inside its group (promtool numbers them so).
        kind: ``"alert"`` or ``"record"``.
        name: the alert or record name.
        expr: the PromQL expression text.
        labels: static labels (values as strings).
        annotations: annotations (alerts only; values as strings).
        for_: the ``for`` duration as written, or ``None``.
        keep_firing_for: the ``keep_firing_for`` duration as written, or ``None``.
        line: line of the rule's first key (the ``- alert:`` / ``- record:`` item).
        end_line: last line belonging to the rule.
        key_lines: line of each top-level key and of each ``labels.<k>``/``annotations.<k>``.
        disables: the ``# obsgen lint disable …`` comments on or directly above the rule.
        packaging: how the rule is shipped: ``"rules"`` (a plain rule file),
            ``"prometheusrule"`` or ``"helm"`` (kube-prometheus-stack values).
        deployed_as: the object the rule's unit becomes once deployed
            (``namespace/name`` of a PrometheusRule, ``map:<key>`` of a Helm rules-map
            entry); ``""`` when every file is its own (plain rule files, unnamed objects).
    """

    file: str
    group: str
    group_interval: str | None
    index: int
    kind: str
    name: str
    expr: str
    labels: dict[str, str]
    annotations: dict[str, str]
    for_: str | None
    line: int
    end_line: int
    key_lines: dict[str, int] = field(default_factory=dict)
    disables: tuple[Disable, ...] = ()
    keep_firing_for: str | None = None
    packaging: str = "rules"
    deployed_as: str = ""

    @property
    def expr_line(self) -> int:
        """Line where the expression starts (the ``expr:`` key), else the rule's line."""
        return self.key_lines.get("expr", self.line)

    def switched_off(self, check: str, today: date) -> bool:
        """True when a comment that still holds on ``today`` names ``check`` (or ``all``)."""
        return any(d.check in (check, "all") and d.holds(today) for d in self.disables)

    def line_of(self, key: str) -> int:
        """Line of ``key`` (``"for"``, ``"labels.severity"``), falling back to the rule's line."""
        return self.key_lines.get(key, self.line)


@dataclass(frozen=True)
class RuleGroup:
    """A rule group as written, for re-serialising it to a temp file for promtool.

    Attributes:
        name: the group's name.
        line: line of the group's ``name`` item.
        raw: the group mapping as loaded (plain Python values).
        rules: the group's rules with their lines.
    """

    name: str
    line: int
    raw: dict[str, Any]
    rules: tuple[Rule, ...]


@dataclass(frozen=True)
class SourceFile:
    """One input file and the rule groups found in it.

    Attributes:
        path: where to read it.
        display: the name to report (as given on the command line).
        format: ``"rules"`` (a plain Prometheus rule file), ``"prometheusrule"`` or ``"helm"``.
        groups: the groups, in file order (every document, every rules map entry).
    """

    path: str
    display: str
    format: str
    groups: tuple[RuleGroup, ...]

    @cached_property
    def rules(self) -> tuple[Rule, ...]:
        """Every rule of every group, in file order."""
        return tuple(rule for group in self.groups for rule in group.rules)
