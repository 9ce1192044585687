"""``irate-in-alert``: ``irate``/``idelta`` (the last two samples only) in an alert."""

from __future__ import annotations

from collections.abc import Iterator

import promql_parser as P

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.model import Fix, Rule, Severity
from generator.lint.registry import Check, Context, Hit

# Two-sample function -> the whole-window function to use instead.
INSTANT = {"irate": "rate", "idelta": "delta"}


def _has_for(rule: Rule) -> bool:
    try:
        return rule.for_ is not None and q.parse_duration(rule.for_) > 0
    except ValueError:
        return False


def _records_using(tree: q.Expr, ctx: Context) -> list[str]:
    """Recorded series the expression reads whose recording rules call irate/idelta."""
    found = []
    for node, _ in q.walk(tree):
        name = q.selector_name(node)
        if name and name not in found and _instant_recorded(name, ctx):
            found.append(name)
    return found


def _instant_recorded(name: str, ctx: Context) -> bool:
    """True when a recording rule writing ``name`` calls irate/idelta (remembered for the
    run: many alerts read the same records)."""
    return q.memo(
        "irate-in-alert records",
        (id(ctx), name),
        lambda: any(
            q.func_name(sub) in INSTANT
            for recorded in ctx.recorded_trees(name)
            for sub, _ in q.walk(recorded)
        ),
    )


def _run(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    if rule.kind != "alert":
        return
    effect = (
        f"between two samples the value swings, the alert falls back to pending and `for: "
        f"{rule.for_}` restarts, so it may never fire even at twice the threshold on average"
        if _has_for(rule)
        else "the value swings between two samples, so the alert flaps"
    )
    calls = [
        (path, node)
        for path, node in printer.walk_paths(tree)
        if isinstance(node, P.Call) and q.func_name(node) in INSTANT
    ]
    renames = {
        path: printer.renamed_call(node, INSTANT[q.func_name(node)], path) for path, node in calls
    }
    fix = Fix(expr=printer.render(tree, replace=renames)) if renames else None
    for _, node in calls:
        name = q.func_name(node)
        yield Hit(
            f"`{name}()` reads only the last two samples of its window: {effect}; use "
            f"`{INSTANT[name]}()`, which averages the whole window",
            fix=fix,
        )
    for name in _records_using(tree, ctx):
        yield Hit(
            f"`{name}` is recorded with `irate()`/`idelta()` (the last two samples only): "
            f"{effect}; record it with `rate()`/`delta()`"
        )


CHECK = Check(
    "irate-in-alert",
    Severity.WARNING,
    "alerts",
    "irate()/idelta() in an alert: it flaps, and with `for` may never fire",
    rule_func=_run,
)
