"""Running promtool once over everything linted, and mapping its messages back to rules.

Plain rule files are checked in place (promtool's line numbers are then the user's). Each
PrometheusRule object or Helm map entry is written to a temp rule file; its messages name
``group "g", rule N`` and are mapped back to that rule's line in the original file.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from generator.errors import Diagnostic
from generator.lint.loader import LoadedFile, Unit, plain_groups
from generator.lint.model import Rule
from generator.promtool import check_rules

_GROUP_RULE = re.compile(r'group "(?P<group>(?:[^"\\]|\\.)*)", rule (?P<index>\d+)')
_LINE = re.compile(r"^line (?P<line>\d+)$")
# promtool's duplicate-rules lint flags one record name with equal static labels even when the
# expressions select disjoint series (kubernetes-mixin records one name per status class).
# obsgen's `duplicate-rule` check replaces it: it flags only rules that are really the same.
_DUPLICATE_LINT = re.compile(r"^lint error \d+ duplicate rule\(s\) found")


@dataclass(frozen=True)
class PromtoolProblem:
    """One promtool complaint placed in a source file.

    Attributes:
        file: display name of the source file.
        line: 1-based line in it (0 when unknown).
        message: promtool's words, on one line.
        rule: the rule it is about, when known.
    """

    file: str
    line: int
    message: str
    rule: Rule | None


def _rule_at(unit: Unit, group: str, index: int) -> Rule | None:
    for candidate in unit.groups:
        if candidate.name == group:
            for rule in candidate.rules:
                if rule.index == index:
                    return rule
    return None


def _place(unit: Unit, diagnostic: Diagnostic) -> PromtoolProblem:
    match = _GROUP_RULE.search(diagnostic.message)
    rule = _rule_at(unit, match.group("group"), int(match.group("index"))) if match else None
    line_match = _LINE.match(diagnostic.path)
    if rule is not None:
        line = rule.expr_line if "expression" in diagnostic.message else rule.line
    elif unit.direct and line_match:
        line = int(line_match.group("line"))
    else:
        line = unit.groups[0].line if unit.groups else 0
    return PromtoolProblem(unit.file, line, diagnostic.message, rule)


def _merge(diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    """Join the continuation lines promtool prints under one error (lint reports, YAML)."""
    merged: list[Diagnostic] = []
    for diagnostic in diagnostics:
        starts = bool(diagnostic.path) or _GROUP_RULE.search(diagnostic.message) is not None
        if (
            merged
            and merged[-1].file == diagnostic.file
            and not starts
            and not _starts_block(diagnostic)
        ):
            last = merged[-1]
            merged[-1] = Diagnostic(last.file, last.path, f"{last.message}; {diagnostic.message}")
        else:
            merged.append(diagnostic)
    return merged


def _starts_block(diagnostic: Diagnostic) -> bool:
    return diagnostic.message.startswith(("lint error", "yaml:")) or ": yaml:" in diagnostic.message


def run_promtool(files: Sequence[LoadedFile]) -> list[PromtoolProblem]:
    """Run ``promtool check rules --lint=all --lint-fatal`` once over every unit of ``files``.

    Returns:
        promtool's complaints placed in the source files (empty when all pass).

    Raises:
        ObsgenError: promtool is not installed (exit 2, with the install hint).
    """
    units = [unit for loaded in files for unit in loaded.units]
    if not units:
        return []
    with tempfile.TemporaryDirectory(prefix="obsgen-lint-") as tmp:
        paths: list[Path] = []
        for number, unit in enumerate(units):
            if unit.direct:
                source = next(f.source for f in files if f.source.display == unit.file)
                paths.append(Path(source.path))
            else:
                path = Path(tmp) / f"unit-{number:04d}.rules.yaml"
                path.write_text(
                    yaml.safe_dump(plain_groups(unit), sort_keys=False), encoding="utf-8"
                )
                paths.append(path)
        result = check_rules(paths, [str(n) for n in range(len(units))])
    problems: list[PromtoolProblem] = []
    for diagnostic in _merge(result.diagnostics):
        if _DUPLICATE_LINT.match(diagnostic.message):
            continue
        if diagnostic.file.isdigit() and int(diagnostic.file) < len(units):
            problems.append(_place(units[int(diagnostic.file)], diagnostic))
        else:
            problems.append(PromtoolProblem(diagnostic.file, 0, diagnostic.message, None))
    return problems
