"""Running every check over the input and collecting findings.

Order of work: read all files (an unreadable one becomes an ``unreadable-input`` finding and
the run goes on), parse each expression once, run per-rule checks, then whole-input checks,
then promtool once over everything. Config
overrides (disabled checks, severities) and inline ``# obsgen-lint: disable=`` comments are
applied here, so checks never see them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from generator import promtool as promtool_binary
from generator.lint import limits, versions
from generator.lint import promql as q
from generator.lint.changes import Changes
from generator.lint.checks import all_checks
from generator.lint.checks.disable_comment import DISABLE_COMMENT
from generator.lint.checks.record_missing import RECORD_MISSING
from generator.lint.config import LintConfig
from generator.lint.dashboards import QUERY
from generator.lint.loader import InputProblem, LoadedFile, load_inputs
from generator.lint.model import Finding, Fix, Rule, Severity
from generator.lint.names import SeriesNames
from generator.lint.promtool_step import run_promtool
from generator.lint.registry import (
    PROMQL_PARSE,
    PROMTOOL,
    RULE_INVALID,
    RULE_SHAPE,
    UNREADABLE_INPUT,
    Check,
    Context,
)


@dataclass(frozen=True)
class Report:
    """The result of one lint run.

    Attributes:
        findings: sorted by file, line, check id.
        files: number of rule files read.
        rules: number of rules checked.
        unreadable: number of files that could not be linted (each also an
            ``unreadable-input`` finding); the command exits 2 when it is above 0.
    """

    findings: tuple[Finding, ...]
    files: int
    rules: int
    unreadable: int = 0

    def count(self, severity: Severity) -> int:
        """Number of findings at exactly ``severity``."""
        return sum(1 for f in self.findings if f.severity is severity)

    def fails(self, threshold: Severity | None) -> bool:
        """True when some finding is at or above ``threshold`` (never when ``None``)."""
        return threshold is not None and any(
            f.severity.rank >= threshold.rank for f in self.findings
        )


class _Collector:
    def __init__(self, config: LintConfig, checks: Sequence[Check]) -> None:
        self.config = config
        self.checks = {check.id: check for check in checks}
        self.day = config.day
        self.findings: list[Finding] = []

    def add(
        self,
        check_id: str,
        file: str,
        line: int,
        message: str,
        rule: Rule | None,
        severity: Severity | None = None,
        fix: Fix | None = None,
    ) -> None:
        if check_id in self.config.disabled:
            return
        if (
            rule is not None
            and check_id != DISABLE_COMMENT
            and rule.switched_off(check_id, self.day)
        ):
            return
        base = severity or self.checks[check_id].severity
        final = self.config.severities.get(check_id, base)
        self.findings.append(
            Finding(file, line, check_id, final, message, rule.name if rule else "", fix)
        )


def _parse_all(
    files: Sequence[LoadedFile],
) -> tuple[dict[Rule, q.Expr | None], dict[Rule, str], list[Finding]]:
    """Parse every rule's expression once.

    Returns:
        Trees by rule (``None`` where parsing failed or was refused), parse errors by
        rule, and an ``unreadable-input`` finding for each expression refused by
        :func:`generator.lint.limits.check_expression` (too long or too deep to analyse).
    """
    trees: dict[Rule, q.Expr | None] = {}
    errors: dict[Rule, str] = {}
    refused: list[Finding] = []
    for loaded in files:
        for rule in loaded.source.rules:
            trees[rule] = None
            try:
                limits.check_expression(rule.expr)
            except limits.Refused as refusal:
                refused.append(
                    Finding(
                        rule.file,
                        rule.expr_line,
                        UNREADABLE_INPUT,
                        Severity.ERROR,
                        refusal.message,
                        rule.name,
                    )
                )
                continue
            try:
                trees[rule] = q.parse(rule.expr)
            except ValueError as err:
                errors[rule] = str(err).splitlines()[0] if str(err) else "parse error"
    return trees, errors, refused


def _context(
    files: Sequence[LoadedFile],
    trees: dict[Rule, q.Expr | None],
    config: LintConfig,
    checks: Sequence[Check],
) -> Context:
    records: dict[str, list[tuple[Rule, q.Expr | None]]] = {}
    for loaded in files:
        for rule in loaded.source.rules:
            if rule.kind == "record":
                records.setdefault(rule.name, []).append((rule, trees[rule]))
    return Context(
        config=config,
        names=SeriesNames(config.counters, written=records),
        records=records,
        check_ids=frozenset(check.id for check in checks),
    )


def _run_checks(
    checks: Iterable[Check],
    files: Sequence[LoadedFile],
    trees: dict[Rule, q.Expr | None],
    ctx: Context,
    out: _Collector,
) -> None:
    sources = [loaded.source for loaded in files]
    for check in checks:
        if check.id in ctx.config.disabled:
            continue
        if check.rule_func is not None:
            for source in sources:
                for rule in source.rules:
                    tree = trees[rule]
                    if tree is None:
                        continue
                    for hit in check.rule_func(rule, tree, ctx):
                        line = rule.expr_line if hit.line is None else hit.line
                        # A dashboard query's fix is written with Grafana's variables
                        # replaced: it guides, but is not offered for applying.
                        fix = None if rule.kind == QUERY else hit.fix
                        if fix is not None and not _fix_clears(check, rule, fix, ctx):
                            fix = None
                        out.add(check.id, rule.file, line, hit.message, rule, fix=fix)
        if check.set_func is not None:
            for source, maybe_rule, hit in check.set_func(sources, trees, ctx):
                line = hit.line if hit.line is not None else (maybe_rule.line if maybe_rule else 0)
                out.add(check.id, source.display, line, hit.message, maybe_rule, fix=hit.fix)


def _fix_clears(check: Check, rule: Rule, fix: Fix, ctx: Context) -> bool:
    """True when ``check`` no longer fires on the expression ``fix`` writes (or the fix writes
    none). A rewrite that leaves the finding (a raw selector whose neighbour only counted as an
    exact increase beside it) is not offered: applying a suggestion must remove what it is for."""
    if fix.expr is None or check.rule_func is None:
        return True
    try:
        fixed = q.parse(fix.expr)
    except ValueError:  # a suggestion that does not parse is no suggestion
        return False
    return next(iter(check.rule_func(rule, fixed, ctx)), None) is None


_UNKNOWN_FUNCTION = re.compile(r'unknown function with name "(?P<name>[a-z_]+)"')


def _newer_function(message: str, config: LintConfig) -> str:
    """The function promtool rejects only because it is older than the target version.

    Called for expressions obsgen's parser (Prometheus 3 grammar) accepted: an unknown
    function there is one newer than the installed promtool, unless the target lacks it
    (``promql-function-version`` reports that).
    """
    match = _UNKNOWN_FUNCTION.search(message)
    if match is None:
        return ""
    name = match.group("name")
    only = versions.ONLY_IN.get(name)
    return name if only is None or only in config.versions else ""


def _quoted_names_unread(message: str, config: LintConfig) -> bool:
    """True when promtool refused a quoted name (``unexpected string``) only because it is
    older than 3.0, for rules that target Prometheus 3 alone (Prometheus 2 cannot read them
    either: there the refusal stands)."""
    if "unexpected string" not in message or "2" in config.versions:
        return False
    return not promtool_binary.reads_utf8_names(promtool_binary.find_promtool())


def _touched(
    files: Sequence[LoadedFile], trees: dict[Rule, q.Expr | None], changes: Changes
) -> dict[str, list[tuple[int, int, str, bool]]]:
    """Per file display name: ``(first, last, rule name, touched)`` of every rule, where
    ``first..last`` runs from the end of the previous rule (its comments included) and a rule
    is touched when a changed line is in it, in its group's header, or in a rule recording a
    series it reads."""
    spans: dict[str, list[tuple[int, int, Rule, bool]]] = {}
    for loaded in files:
        path = loaded.source.path
        found = spans.setdefault(loaded.source.display, [])
        for group in loaded.source.groups:
            if not group.rules:
                continue
            header = changes.touches(path, group.line, group.rules[0].line - 1)
            start = group.line
            for rule in group.rules:
                found.append(
                    (
                        start,
                        rule.end_line,
                        rule,
                        header or changes.touches(path, start, rule.end_line),
                    )
                )
                start = rule.end_line + 1
    changed = {
        r.name
        for spans_of in spans.values()
        for _, _, r, hit in spans_of
        if hit and r.kind == "record"
    }
    while changed:
        more: set[str] = set()
        for spans_of in spans.values():
            for index, (first, last, rule, hit) in enumerate(spans_of):
                tree = trees.get(rule)
                if hit or tree is None:
                    continue
                if any(q.selector_name(node) in changed for node, _ in q.walk(tree)):
                    spans_of[index] = (first, last, rule, True)
                    if rule.kind == "record":
                        more.add(rule.name)
        changed = more
    return {
        display: [(first, last, rule.name, hit) for first, last, rule, hit in spans_of]
        for display, spans_of in spans.items()
    }


def _first_name(message: str) -> str:
    """The first back-quoted name of a message (the record of a ``record-missing``)."""
    parts = message.split("`")
    return parts[1] if len(parts) > 2 else ""


def _changed_only(
    findings: Sequence[Finding],
    files: Sequence[LoadedFile],
    trees: dict[Rule, q.Expr | None],
    changes: Changes,
) -> list[Finding]:
    """The findings on what ``changes`` touched (see :mod:`generator.lint.changes`)."""
    spans = _touched(files, trees, changes)
    paths = {loaded.source.display: loaded.source.path for loaded in files}
    kept = []
    for finding in findings:
        if finding.check == UNREADABLE_INPUT or (
            finding.check == RECORD_MISSING and changes.removed_name(_first_name(finding.message))
        ):
            kept.append(finding)
            continue
        owner = [
            hit
            for first, last, name, hit in spans.get(finding.file, ())
            if name == finding.rule and first <= finding.line <= last
        ]
        path = paths.get(finding.file, finding.file)
        if owner:
            touched = owner[0]
        elif finding.line == 0:
            touched = changes.touches_file(path)
        else:
            touched = changes.touches(path, finding.line, finding.line)
        if touched:
            kept.append(finding)
    return kept


def lint_files(
    files: Sequence[LoadedFile],
    config: LintConfig,
    promtool: bool = True,
    problems: Sequence[InputProblem] = (),
    changes: Changes | None = None,
) -> Report:
    """Lint already-loaded files.

    Args:
        files: from :func:`generator.lint.loader.load_inputs`.
        config: resolved config.
        promtool: run ``promtool check rules`` once over everything.
        problems: files that could not be read; each is reported as ``unreadable-input``
            (an error that neither the config nor an inline comment can turn off, because it
            means those files were not checked at all).
        changes: when given, only the findings on what the change touched are reported
            (every file is still read and checked: a rule may depend on an unchanged one).

    Raises:
        ObsgenError: promtool is requested but not installed (exit 2).
    """
    with q.run_scope():
        return _lint(files, config, promtool, problems, changes)


def _lint(
    files: Sequence[LoadedFile],
    config: LintConfig,
    promtool: bool,
    problems: Sequence[InputProblem],
    changes: Changes | None,
) -> Report:
    trees, parse_errors, refused = _parse_all(files)
    checks = all_checks()
    ctx = _context(files, trees, config, checks)
    out = _Collector(config, checks)
    _run_checks(checks, files, trees, ctx, out)
    rejected: set[Rule] = set()
    if promtool:
        for problem in run_promtool(files):
            parsed = problem.rule is not None and trees.get(problem.rule) is not None
            newer = _newer_function(problem.message, config) if parsed else ""
            if parsed and _quoted_names_unread(problem.message, config):
                message = (
                    "the promtool installed here predates Prometheus 3's quoted UTF-8 names "
                    '(`{"a.b"}`, `"a.b"="x"`), which this rule uses; obsgen\'s checks ran, '
                    "check the file with promtool 3 too"
                )
                out.add(PROMTOOL, problem.file, problem.line, message, problem.rule, Severity.INFO)
                continue
            if newer:
                message = (
                    f"the promtool installed here is older than `{newer}`, which "
                    f"{versions.describe(config.versions)} has; obsgen's checks ran, check "
                    "the file with a newer promtool too"
                )
                out.add(PROMTOOL, problem.file, problem.line, message, problem.rule, Severity.INFO)
                continue
            if problem.rule is not None:
                rejected.add(problem.rule)
            out.add(
                PROMTOOL, problem.file, problem.line, f"promtool: {problem.message}", problem.rule
            )
    else:
        for loaded in files:
            for line, message in loaded.invalid:
                out.add(RULE_INVALID, loaded.source.display, line, message, None)
    for loaded in files:
        for check_id, line, message in loaded.dashboard_findings:
            out.add(check_id, loaded.source.display, line, message, None)
        for shape in loaded.shapes:
            if not (promtool and shape.promtool_sees):
                out.add(RULE_SHAPE, loaded.source.display, shape.line, shape.message, None)
    for loaded in files:
        for rule in loaded.source.rules:
            error = parse_errors.get(rule)
            if error is None or rule in rejected:
                continue
            if promtool:
                message = (
                    f"promtool accepts this expression but obsgen's PromQL parser does not "
                    f"({error}); obsgen checks skipped for this rule"
                )
                out.add(PROMQL_PARSE, rule.file, rule.expr_line, message, rule, Severity.INFO)
            else:
                out.add(PROMQL_PARSE, rule.file, rule.expr_line, f"cannot parse: {error}", rule)
    unreadable = [
        Finding(p.file, p.line, UNREADABLE_INPUT, Severity.ERROR, p.message) for p in problems
    ]
    unreadable += refused
    # One expression can trip the same check on the same name several times: report it once
    # (the first fix found is kept).
    unique: dict[tuple[str, int, str, str, str], Finding] = {}
    for finding in [*out.findings, *unreadable]:
        unique.setdefault((*finding.sort_key(), finding.rule), finding)
    kept = list(unique.values())
    if changes is not None:
        kept = _changed_only(kept, files, trees, changes)
    findings = tuple(sorted(kept, key=Finding.sort_key))
    rules = sum(len(loaded.source.rules) for loaded in files)
    unread_files = len({p.file for p in problems} | {f.file for f in refused})
    return Report(findings, len(files), rules, unread_files)


def lint_paths(
    paths: Sequence[str],
    config: LintConfig,
    promtool: bool = True,
    changes: Changes | None = None,
) -> Report:
    """Read every rule file under ``paths`` and lint them (see :func:`lint_files`).

    A file that cannot be read (not UTF-8, not YAML, named explicitly but holding no rule
    groups) is reported as an ``unreadable-input`` finding and counted in
    :attr:`Report.unreadable`; every other file is still linted.

    Raises:
        ObsgenError: a path does not exist, or promtool is missing while requested (exit 2).
    """
    inputs = load_inputs(paths, config.scrape_interval)
    return lint_files(
        inputs.files, config, promtool=promtool, problems=inputs.problems, changes=changes
    )
