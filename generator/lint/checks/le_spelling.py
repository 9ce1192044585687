"""``le-spelling``: an `le`/`quantile` matcher that misses a spelling the target Prometheus stores
(`le="1"` vs `"1.0"`)."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import bounds, printer
from generator.lint import promql as q
from generator.lint.checks.histograms import _spelled_matchers, _spelling_words
from generator.lint.model import Fix, Rule, Severity
from generator.lint.printer import matcher_text
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "le-spelling",
    Severity.WARNING,
    "histograms",
    "an `le`/`quantile` matcher that misses a spelling the target Prometheus stores "
    '(`le="1"` vs `"1.0"`)',
)
def le_spelling(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """Prometheus 3 stores ``le="1.0"``; 2 stores what the exporter wrote (``1`` from Go
    clients, ``1.0`` from Python and Java ones). Regexes are decided by evaluating them with
    RE2 (:mod:`generator.lint.bounds`)."""
    versions = ctx.config.versions
    for path, node, matcher in _spelled_matchers(tree, ctx.names):
        selection = bounds.select(str(matcher.value), q.is_regex(matcher), versions)
        if selection is None or not selection.missed or not selection.intended:
            continue
        wanted = bounds.matcher_for(selection.intended, versions, label=matcher.name)
        fixed = printer.render(
            tree, selectors={path: printer.selector_with(node, matcher.name, wanted)}
        )
        yield Hit(
            f"`{matcher_text(matcher)}` misses spellings of the bound it selects: "
            f"{_spelling_words(selection.missed)}; write {wanted}",
            fix=Fix(expr=fixed),
        )


CHECK = le_spelling
