"""``promql-experimental-function``: an experimental function: rule files using it load only with a
feature flag."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import promql as q
from generator.lint.checks.versions import EXPERIMENTAL_FLAG, _function
from generator.lint.model import Fix, Rule, Severity
from generator.lint.registry import Context, Hit, rule_check
from generator.lint.versions import EXPERIMENTAL, describe


@rule_check(
    "promql-experimental-function",
    Severity.WARNING,
    "versions",
    "an experimental function: rule files using it load only with a feature flag",
)
def experimental_function(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``sort_by_label``, ``limitk``, ``double_exponential_smoothing``… need
    ``--enable-feature=promql-experimental-functions``; without it the whole rule file is
    rejected at load."""
    if EXPERIMENTAL_FLAG in ctx.config.enabled_features:
        return
    seen: set[str] = set()
    for node, _ in q.walk(tree):
        name = _function(node)
        flagged = [v for v in ctx.config.versions if name in EXPERIMENTAL[v]]
        if flagged and name not in seen:
            seen.add(name)
            yield Hit(
                f"`{name}` is experimental in {describe(flagged)}: a rule file using it loads "
                f"only with --enable-feature={EXPERIMENTAL_FLAG}; if your Prometheus runs "
                f"with it, add `enabledFeatures: [{EXPERIMENTAL_FLAG}]` to .obsgen-lint.yaml",
                fix=Fix(settings=(("enabledFeatures", EXPERIMENTAL_FLAG),)),
            )


CHECK = experimental_function
