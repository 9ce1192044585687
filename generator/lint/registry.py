"""The check registry: every check's id, default severity, family, one-line summary and doc.

A check is a :class:`Check` value: a per-rule function, a whole-input function or a
per-dashboard function with its metadata. :data:`generator.lint.checks.CHECKS` lists every check explicitly (nothing registers
on import). ``docs/lint/<id>.md`` documents each id (a test keeps the two in step).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from generator.lint.config import LintConfig
from generator.lint.labels import Analysis, Labels, analyse, union
from generator.lint.model import Fix, Rule, Severity, SourceFile
from generator.lint.names import SeriesNames
from generator.lint.promql import Expr, memo

DOCS = "docs/lint"


@dataclass(frozen=True)
class Hit:
    """What a check reports; the engine adds file, id and severity.

    Attributes:
        message: one line, naming the offending part and what to write instead.
        line: 1-based line; ``None`` means the rule's ``expr`` line.
        fix: the change the message suggests, when it is a concrete one (tests apply every
            fix and lint the result again: a suggestion must itself pass).
    """

    message: str
    line: int | None = None
    fix: Fix | None = None


@dataclass(frozen=True)
class Context:
    """What checks may read besides the rule itself.

    Attributes:
        config: the resolved lint config.
        names: the one classifier of series names: recorded or scraped, counter or not.
        records: recording rules by record name, across every linted file,
            with each rule's parsed expression (``None`` where the parser failed).
        check_ids: every check id of this run (for disable comments naming an unknown one).
    """

    config: LintConfig
    names: SeriesNames
    records: Mapping[str, Sequence[tuple[Rule, Expr | None]]] = field(default_factory=dict)
    check_ids: frozenset[str] = frozenset()
    _record_labels: dict[str, Labels | None] = field(default_factory=dict, compare=False)

    def recorded_trees(self, name: str) -> list[Expr]:
        """Parsed expressions of the recording rules writing ``name`` (empty when none here)."""
        return [tree for _, tree in self.records.get(name, ()) if tree is not None]

    def analysis(self, tree: Expr) -> Analysis:
        """:func:`generator.lint.labels.analyse` of ``tree`` with this run's records
        (remembered for the run: several checks read it)."""
        return memo("labels", tree, lambda: analyse(tree, self.record_labels))

    def record_labels(self, name: str) -> Labels | None:
        """Labels the series recorded as ``name`` can carry: the union over its recording
        rules here of their expression's labels and static labels; ``None`` when no rule here
        writes it, one does not parse, or the records refer to each other in a cycle.
        Computed once per name and run."""
        if name in self._record_labels:
            return self._record_labels[name]
        rules = self.records.get(name, ())
        self._record_labels[name] = None  # a cycle reads as unknown
        found: Labels | None = None
        for rule, tree in rules:
            if tree is None:
                found = None
                break
            own = analyse(tree, self.record_labels).labels
            if own.scalar:
                own = Labels(only=frozenset())
            static = frozenset(rule.labels)
            fixed = {**dict(own.values), **{k: frozenset({v}) for k, v in rule.labels.items()}}
            own = replace(
                own,
                only=None if own.only is None else own.only | static,
                never=own.never - static,
                expected=own.expected | static,
                values=tuple(sorted(fixed.items())),
            )
            found = own if found is None else union(found, own)
        self._record_labels[name] = found
        return found


@dataclass(frozen=True)
class DashboardHit:
    """What a dashboard check reports; the loader adds file, line, id and severity.

    Attributes:
        path: the panel, target or variable, as ``panels[3] "Latency".targets[0]`` or
            ``templating.list[2]`` (the finding is on its line, the path follows the message).
        message: one line, naming what is wrong.
    """

    path: str
    message: str


RuleFunc = Callable[[Rule, Expr, Context], Iterable[Hit]]
SetFunc = Callable[
    [Sequence[SourceFile], Mapping[Rule, Expr | None], Context],
    Iterable[tuple[SourceFile, Rule | None, Hit]],
]
# Given one Grafana dashboard model (parsed JSON); may raise TypeError, ValueError,
# AttributeError or KeyError on a model of the wrong shape (reported as ``rule-shape``).
DashboardFunc = Callable[[Mapping[str, Any]], Iterable[DashboardHit]]


@dataclass(frozen=True)
class Check:
    """One registered check.

    Attributes:
        id: kebab-case id, used in config, inline comments and output.
        severity: default severity.
        family: ``histograms``, ``quantiles``, ``counters``, ``units``, ``slo``, ``alerts``,
            ``labels``, ``versions``, ``hygiene``, ``dashboards`` or ``input``.
        summary: one line saying what it catches.
        rule_func: per-rule function (given the parsed tree), or ``None``.
        set_func: whole-input function (given all files and trees by rule), or ``None``.
        dashboard_func: per-dashboard function (given a Grafana dashboard's JSON model; its
            panel queries are rules too, checked by the per-rule functions), or ``None``.
    """

    id: str
    severity: Severity
    family: str
    summary: str
    rule_func: RuleFunc | None = None
    set_func: SetFunc | None = None
    dashboard_func: DashboardFunc | None = None

    @property
    def doc(self) -> str:
        """Where the check is documented: ``docs/lint/<id>.md``."""
        return f"{DOCS}/{self.id}.md"


def rule_check(
    id: str, severity: Severity, family: str, summary: str
) -> Callable[[RuleFunc], Check]:
    """Make a per-rule check of the decorated function: the name is bound to the
    :class:`Check` (it is listed in :data:`generator.lint.checks.CHECKS`, nothing registers)."""

    def build(func: RuleFunc) -> Check:
        return Check(id, severity, family, summary, rule_func=func)

    return build


def set_check(id: str, severity: Severity, family: str, summary: str) -> Callable[[SetFunc], Check]:
    """Make a check over every file at once of the decorated function (see :func:`rule_check`)."""

    def build(func: SetFunc) -> Check:
        return Check(id, severity, family, summary, set_func=func)

    return build


def dashboard_check(
    id: str, severity: Severity, family: str, summary: str
) -> Callable[[DashboardFunc], Check]:
    """Make a check of one Grafana dashboard of the decorated function (see :func:`rule_check`)."""

    def build(func: DashboardFunc) -> Check:
        return Check(id, severity, family, summary, dashboard_func=func)

    return build


# Checks the engine itself reports (no function): input problems and promtool's verdict.
PROMTOOL = "promtool"
PROMQL_PARSE = "promql-parse"
RULE_INVALID = "rule-invalid"
RULE_SHAPE = "rule-shape"
UNREADABLE_INPUT = "unreadable-input"
ENGINE_CHECKS: tuple[Check, ...] = (
    Check(PROMTOOL, Severity.ERROR, "input", "promtool check rules rejects the file"),
    Check(
        PROMQL_PARSE,
        Severity.ERROR,
        "input",
        "the expression does not parse (info when promtool accepts it: obsgen checks skipped)",
    ),
    Check(RULE_INVALID, Severity.ERROR, "input", "a rule lacks expr, or alert/record"),
    Check(
        RULE_SHAPE,
        Severity.ERROR,
        "input",
        "a rule file whose structure is wrong (spec.groups a mapping, a group not a mapping)",
    ),
    Check(
        UNREADABLE_INPUT,
        Severity.ERROR,
        "input",
        "a file cannot be read or is not YAML; the other files are still linted (exit 2)",
    ),
)

FAMILY_ORDER = {
    "histograms": 0,
    "quantiles": 1,
    "counters": 2,
    "units": 3,
    "slo": 4,
    "alerts": 5,
    "labels": 6,
    "versions": 7,
    "hygiene": 8,
    "dashboards": 9,
    "input": 10,
}
