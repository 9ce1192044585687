"""``duplicate-rule``: the same rule (name, labels, expression) loaded twice into one Prometheus."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from generator.lint import promql as q
from generator.lint.checks.hygiene import _identity, _same_rule_deployed_once
from generator.lint.model import Fix, Rule, Severity, SourceFile
from generator.lint.registry import Context, Hit, set_check


@set_check(
    "duplicate-rule",
    Severity.WARNING,
    "hygiene",
    "the same rule (name, labels, expression) loaded twice into one Prometheus",
)
def duplicate_rule(
    files: Sequence[SourceFile], trees: Mapping[Rule, q.Expr | None], ctx: Context
) -> Iterator[tuple[SourceFile, Rule | None, Hit]]:
    """Two copies of one alert page twice; two copies of one record write the same series.

    Copies that are one rule deployed two ways are not reported: see
    :func:`_same_rule_deployed_once` and docs/lint/duplicate-rule.md.
    """
    seen: dict[tuple[str, str, tuple[tuple[str, str], ...], str], list[Rule]] = {}
    for source in files:
        for rule in source.rules:
            if rule.kind not in ("alert", "record"):
                continue  # dashboard queries are not loaded into Prometheus
            earlier = seen.setdefault(_identity(rule, trees.get(rule)), [])
            original = next((r for r in earlier if not _same_rule_deployed_once(r, rule)), None)
            earlier.append(rule)
            if original is not None:
                yield (
                    source,
                    rule,
                    Hit(
                        f"{rule.kind} `{rule.name}` duplicates {original.file}:{original.line} "
                        "(same labels and expression); delete this copy",
                        line=rule.line,
                        fix=Fix(remove=True),
                    ),
                )


CHECK = duplicate_rule
