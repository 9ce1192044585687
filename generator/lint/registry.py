"""The check registry: every check's id, default severity, family, one-line summary and doc.

A check module registers its functions with :func:`rule_check` (one rule at a time) or
:func:`set_check` (all rules of all files at once, e.g. duplicates). Importing
:mod:`generator.lint.checks` registers them all. ``docs/lint.md`` holds one entry per id,
under a heading equal to the id (a test keeps the two in step).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from generator.lint.config import LintConfig
from generator.lint.model import Fix, Rule, Severity, SourceFile
from generator.lint.names import CounterNames
from generator.lint.promql import Expr

DOCS = "docs/lint.md"


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
        counters: decides which raw names are counters.
        records: recording rules by record name, across every linted file.
        trees: parsed expression of each recorded name's rules (same order as ``records``),
            ``None`` where the parser failed.
    """

    config: LintConfig
    counters: CounterNames
    records: Mapping[str, Sequence[tuple[Rule, Expr | None]]] = field(default_factory=dict)

    def recorded_trees(self, name: str) -> list[Expr]:
        """Parsed expressions of the recording rules writing ``name`` (empty when none here)."""
        return [tree for _, tree in self.records.get(name, ()) if tree is not None]


RuleFunc = Callable[[Rule, Expr, Context], Iterable[Hit]]
SetFunc = Callable[
    [Sequence[SourceFile], Mapping[int, Expr | None], Context],
    Iterable[tuple[SourceFile, Rule | None, Hit]],
]


@dataclass(frozen=True)
class Check:
    """One registered check.

    Attributes:
        id: kebab-case id, used in config, inline comments and output.
        severity: default severity.
        family: ``histograms``, ``quantiles``, ``counters``, ``slo``, ``alerts``,
            ``versions``, ``hygiene``, ``dashboards`` or ``input``.
        summary: one line saying what it catches.
        rule_func: per-rule function (given the parsed tree), or ``None``.
        set_func: whole-input function (given all files and trees by ``id(rule)``), or ``None``.
    """

    id: str
    severity: Severity
    family: str
    summary: str
    rule_func: RuleFunc | None = None
    set_func: SetFunc | None = None

    @property
    def doc(self) -> str:
        """Where the check is documented: ``docs/lint.md#<id>``."""
        return f"{DOCS}#{self.id}"


REGISTRY: dict[str, Check] = {}


def _add(check: Check) -> None:
    if check.id in REGISTRY:
        raise RuntimeError(f"check id {check.id!r} registered twice")
    REGISTRY[check.id] = check


def rule_check(
    id: str, severity: Severity, family: str, summary: str
) -> Callable[[RuleFunc], RuleFunc]:
    """Register a per-rule check (decorator)."""

    def register(func: RuleFunc) -> RuleFunc:
        _add(Check(id, severity, family, summary, rule_func=func))
        return func

    return register


def set_check(
    id: str, severity: Severity, family: str, summary: str
) -> Callable[[SetFunc], SetFunc]:
    """Register a check over every file at once (decorator)."""

    def register(func: SetFunc) -> SetFunc:
        _add(Check(id, severity, family, summary, set_func=func))
        return func

    return register


# Checks the engine itself reports (no function): input problems and promtool's verdict.
PROMTOOL = "promtool"
PROMQL_PARSE = "promql-parse"
RULE_INVALID = "rule-invalid"
_add(Check(PROMTOOL, Severity.ERROR, "input", "promtool check rules rejects the file"))
_add(
    Check(
        PROMQL_PARSE,
        Severity.ERROR,
        "input",
        "the expression does not parse (info when promtool accepts it: obsgen checks skipped)",
    )
)
_add(Check(RULE_INVALID, Severity.ERROR, "input", "a rule lacks expr, or alert/record"))
DASHBOARD_CHECKS = {
    "dashboard-panel-id": "panel ids are not unique (or not all null)",
    "dashboard-grid": "panels overlap or leave the 24-column grid",
    "dashboard-unit": "a panel without fieldConfig.defaults.unit",
    "dashboard-datasource": "a panel or target without a datasource",
    "dashboard-rate-interval": "a range that is not [$__rate_interval]",
    "dashboard-unused-variable": "a templating variable nothing uses",
}
for _id, _summary in DASHBOARD_CHECKS.items():
    _add(Check(_id, Severity.WARNING, "dashboards", _summary))
RULE_SHAPE = "rule-shape"
_add(
    Check(
        RULE_SHAPE,
        Severity.ERROR,
        "input",
        "a rule file whose structure is wrong (spec.groups a mapping, a group not a mapping)",
    )
)
UNREADABLE_INPUT = "unreadable-input"
_add(
    Check(
        UNREADABLE_INPUT,
        Severity.ERROR,
        "input",
        "a file cannot be read or is not YAML; the other files are still linted (exit 2)",
    )
)


def all_checks() -> list[Check]:
    """Every check, importing the check modules first; sorted by family then id."""
    import generator.lint.checks  # noqa: F401  (registers on import)

    return sorted(REGISTRY.values(), key=lambda c: (_FAMILY_ORDER.get(c.family, 9), c.id))


_FAMILY_ORDER = {
    "histograms": 0,
    "quantiles": 1,
    "counters": 2,
    "slo": 3,
    "alerts": 4,
    "versions": 5,
    "hygiene": 6,
    "dashboards": 7,
    "input": 8,
}
