"""``promql-function-version``: a function the target Prometheus does not have (holt_winters on 3,
info() on 2)."""

from __future__ import annotations

from collections.abc import Iterator

import promql_parser as P

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.checks.versions import EXPERIMENTAL_FLAG, _function
from generator.lint.model import Fix, Rule, Severity
from generator.lint.printer import walk_paths
from generator.lint.registry import Context, Hit, rule_check
from generator.lint.versions import EXPERIMENTAL, ONLY_IN, RENAMED, describe


@rule_check(
    "promql-function-version",
    Severity.ERROR,
    "versions",
    "a function the target Prometheus does not have (holt_winters on 3, info() on 2)",
)
def function_version(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """Prometheus 3 renamed ``holt_winters`` to ``double_exponential_smoothing``; functions
    added in 3 do not exist on 2. A rule file using either fails to load there."""
    versions = ctx.config.versions
    for path, node in walk_paths(tree):
        name = _function(node)
        only = ONLY_IN.get(name)
        if only is None or set(versions) <= {only}:
            continue
        lacking = describe(v for v in versions if v != only)
        other = RENAMED.get(name)
        if other is None:
            yield Hit(
                f"`{name}` does not exist in {lacking} (added in Prometheus {only}); "
                "the rule file fails to load there"
            )
        elif len(versions) == 1 and isinstance(node, P.Call):
            fixed = printer.render(tree, {path: printer.renamed_call(node, other, path)})
            flag = (
                f" and run Prometheus with --enable-feature={EXPERIMENTAL_FLAG} (declared as "
                f"`enabledFeatures: [{EXPERIMENTAL_FLAG}]` in .obsgen-lint.yaml)"
                if other in EXPERIMENTAL[versions[0]]
                else ""
            )
            settings = (("enabledFeatures", EXPERIMENTAL_FLAG),) if flag else ()
            yield Hit(
                f"`{name}` does not exist in {lacking}: it is `{other}` there; write "
                f"`{printer.renamed_call(node, other, path)}`{flag}",
                fix=Fix(expr=fixed, settings=settings),
            )
        else:
            yield Hit(
                f"`{name}` does not exist in Prometheus {'3' if only == '2' else '2'}, where "
                f"it is `{other}`: no spelling works on both versions; lint with "
                "--prometheus-version (or `prometheusVersion`) set to the one you run"
            )


CHECK = function_version
