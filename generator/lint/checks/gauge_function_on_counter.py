"""``gauge-function-on-counter``: delta()/deriv()/idelta()/predict_linear() of a counter.

The gauge functions take every sample as it is: a counter reset (a restart: the value drops to
0) reads as a large fall, so ``delta(errors_total[30m])`` is negative for a while after each
restart and ``deriv()`` slopes down. ``increase()``/``rate()`` detect resets (Prometheus
"Functions": delta and deriv "should only be used with gauges"). Which names are counters:
:class:`generator.lint.names.SeriesNames` (suffixes, the presets, ``counters:``).
"""

from __future__ import annotations

from collections.abc import Iterator

import promql_parser as P

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.model import Fix, Rule, Severity
from generator.lint.printer import walk_paths
from generator.lint.registry import Context, Hit, rule_check

# The counter function answering the question each gauge function was asked.
_COUNTER_FUNCTION = {"delta": "increase", "deriv": "rate"}
_GAUGE_FUNCTIONS = frozenset({"delta", "deriv", "idelta", "predict_linear"})


@rule_check(
    "gauge-function-on-counter",
    Severity.WARNING,
    "counters",
    "delta()/deriv()/idelta()/predict_linear() of a counter: each reset reads as a fall",
)
def gauge_function_on_counter(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``delta(node_vmstat_oom_kill[30m]) > 0`` misses kills after a restart (the drop to 0)."""
    for path, node in walk_paths(tree):
        call = q.as_call(node, *_GAUGE_FUNCTIONS)
        if call is None or not call.args or not isinstance(call.args[0], P.MatrixSelector):
            continue
        name = q.selector_name(call.args[0])
        if not ctx.names.is_counter(name) or name.endswith("_created"):
            continue
        func = q.func_name(call)
        right = _COUNTER_FUNCTION.get(func)
        fix = None
        advice = "read it with increase() or rate(), which detect resets"
        if right is not None:
            text = printer.renamed_call(call, right, path)
            fix = Fix(expr=printer.render(tree, {path: text}))
            advice = f"write `{text}`"
        yield Hit(
            f"{func}({name}[…]): `{name}` is a counter; {func}() reads its resets (restarts, "
            f"when it drops to 0) as falls; {advice}",
            fix=fix,
        )


CHECK = gauge_function_on_counter
