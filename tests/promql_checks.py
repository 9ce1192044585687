"""PromQL shapes the tests of rendered expressions agree on, parsed with the linter's parser
(:mod:`generator.lint.promql`)."""

from __future__ import annotations

import promql_parser as P

from generator.lint import promql


def reads_no_series(node: P.Expr) -> bool:
    """Whether ``node`` reads no series (its result has no labels: ``vector(time() % 3600)``)."""
    return not any(
        isinstance(n, (P.VectorSelector, P.MatrixSelector)) for n, _ in promql.walk(node)
    )


def is_label_less_filter(node: P.Expr) -> bool:
    """Whether ``node`` is a set-operator filter (``and``/``unless``) matching on no labels
    whose right operand reads no series: it keeps or drops the whole left side (an hourly
    tile's ``and on () (vector(time() % 3600) < e)``), so it groups nothing."""
    if not isinstance(node, P.BinaryExpr) or node.modifier is None:
        return False
    matching = node.modifier.matching
    return (
        matching is not None
        and str(node.op) in ("and", "unless")
        and not list(matching.labels)
        and reads_no_series(node.rhs)
    )
