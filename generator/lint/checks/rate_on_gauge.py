"""``rate-on-gauge``: rate()/increase()/irate() of a name that looks like a gauge."""

from __future__ import annotations

from collections.abc import Iterator

from generator.lint import known, printer
from generator.lint import promql as q
from generator.lint.checks.counters import _GAUGE_FUNCTION, _rated_selectors
from generator.lint.model import Fix, Rule, Severity
from generator.lint.printer import Path, walk_paths
from generator.lint.registry import Context, Hit, rule_check


@rule_check(
    "rate-on-gauge",
    Severity.WARNING,
    "counters",
    "rate()/increase()/irate() of a name that looks like a gauge",
)
def rate_on_gauge(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``rate(queue_depth[5m])``: drops of a gauge are read as counter resets. A rate read by
    a histogram function is a native histogram's (rate() of one is right), and a preset's
    classic histogram name is ``histogram-input``'s: neither is reported here."""
    found: dict[tuple[str, str], dict[Path, str]] = {}
    histogram_calls = [
        path for path, node in walk_paths(tree) if q.func_name(node).startswith("histogram_")
    ]
    for path, call, name in _rated_selectors(tree):
        func = call.func.name
        if any(path[: len(h)] == h for h in histogram_calls) or known.histogram(name):
            continue
        if name and not ctx.names.is_recorded(name) and not ctx.names.is_counter(name):
            gauge = printer.renamed_call(call, _GAUGE_FUNCTION[func], path)
            found.setdefault((func, name), {})[path] = gauge
    for (func, name), replace in found.items():
        yield Hit(
            f"{func}({name}[…]): `{name}` looks like a gauge (no _total/_count/_sum/_bucket "
            f"suffix); for a gauge write `{next(iter(replace.values()))}`, or list it under "
            "`counters:` in .obsgen-lint.yaml if it is a counter",
            fix=Fix(expr=printer.render(tree, replace)),
        )


CHECK = rate_on_gauge
