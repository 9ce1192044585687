"""``template-label``: alert text naming a label the expression's series can never carry."""

from __future__ import annotations

import re
from collections.abc import Iterator

from generator.lint import promql as q
from generator.lint.model import Rule, Severity
from generator.lint.registry import Check, Context, Hit

# $labels.x, .Labels.x, index $labels "x" (Prometheus' alert template data).
_REFERENCE = re.compile(
    r"(?:\$labels|\.Labels)\.(?P<dot>[A-Za-z_][A-Za-z0-9_]*)"
    r"|index\s+(?:\$labels|\.Labels)\s+\"(?P<index>[^\"]+)\""
)


def label_references(text: str) -> list[str]:
    """Label names a template reads from ``$labels`` (in order of first use, no repeats)."""
    found: list[str] = []
    for block in re.findall(r"\{\{.*?\}\}", text, flags=re.S):
        for match in _REFERENCE.finditer(block):
            name = match.group("dot") or match.group("index")
            if name not in found:
                found.append(name)
    return found


def _run(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    if rule.kind != "alert":
        return
    result = ctx.analysis(tree).labels
    if result.scalar:
        return
    fields = [(f"annotations.{k}", v) for k, v in sorted(rule.annotations.items())]
    fields += [(f"labels.{k}", v) for k, v in sorted(rule.labels.items())]
    for key, text in fields:
        for label in label_references(text):
            if result.can(label):
                continue
            why = f": {result.reason(label)} removed it" if result.reason(label) else ""
            yield Hit(
                f"{key} uses `$labels.{label}`, but the expression's series carry "
                f"{result.describe()}{why}: it always renders empty; keep `{label}` in the "
                "query (`by (…)`, a matcher for `absent()`) or drop it from the text",
                line=rule.line_of(key),
            )


CHECK = Check(
    "template-label",
    Severity.ERROR,
    "labels",
    "an alert template reads a $labels.x that the expression's series can never carry",
    rule_func=_run,
)
