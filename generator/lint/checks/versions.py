"""Checks for what the target Prometheus version does not accept or evaluates differently.

The target is ``--prometheus-version`` / ``prometheusVersion`` (default: both 2 and 3, i.e.
what works on either). Facts are in :mod:`generator.lint.versions`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import promql_parser as P

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.model import Fix, Rule, Severity
from generator.lint.names import is_recorded
from generator.lint.printer import matcher_text, walk_paths
from generator.lint.registry import Context, Hit, rule_check
from generator.lint.versions import EXPERIMENTAL, ONLY_IN, RENAMED, describe
from generator.promql import quote

EXPERIMENTAL_FLAG = "promql-experimental-functions"
# Functions that return nothing from fewer than two samples.
_TWO_SAMPLES = frozenset(
    {"rate", "irate", "increase", "delta", "idelta", "deriv", "predict_linear"}
)


def _function(node: q.Expr) -> str:
    """The function or aggregation name of ``node`` (``""`` for anything else)."""
    if isinstance(node, P.Call):
        return q.func_name(node)
    if isinstance(node, P.AggregateExpr):
        return q.op(node)
    return ""


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


_NEWLINE_AWARE = re.compile(r"\\n|\\r|[\n\r]|\(\?-?[a-zA-Z]*s")


def _dots_outside_classes(pattern: str) -> list[int]:
    """Positions of unescaped ``.`` outside character classes (``[...]``)."""
    found: list[int] = []
    index, in_class = 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            if char == "]":
                in_class = False
        elif char == "[":
            in_class = True
            if pattern.startswith("[^]", index) or pattern.startswith("[]", index):
                index += 2 if pattern[index + 1] == "]" else 3
                continue
        elif char == ".":
            found.append(index)
        index += 1
    return found


def single_line_dots(pattern: str) -> str:
    """``pattern`` with every ``.`` outside classes written ``[^\\n]``: the Prometheus 2
    meaning of ``.``, now spelled the same on both versions."""
    positions = set(_dots_outside_classes(pattern))
    return "".join("[^\\n]" if i in positions else c for i, c in enumerate(pattern))


@rule_check(
    "regex-dot-newline",
    Severity.INFO,
    "versions",
    "a regex about line breaks whose `.` means something else on Prometheus 3",
)
def regex_dot_newline(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """Prometheus 3 compiles matchers as ``(?s:…)``: ``.`` also matches a newline. Only
    regexes that mention line breaks (``\\n``, ``\\r``, an ``s`` flag) are reported: label
    values practically never hold one otherwise."""
    if "3" not in ctx.config.versions:
        return
    for path, node in walk_paths(tree):
        if not isinstance(node, P.VectorSelector) or node.matchers.or_matchers:
            continue
        for matcher in node.matchers.matchers:
            value = str(matcher.value)
            if not q.is_regex(matcher) or not _NEWLINE_AWARE.search(value):
                continue
            if not _dots_outside_classes(value):
                continue
            op = "=~" if matcher.op == P.MatchOp.Re else "!~"
            wanted = f"{matcher.name}{op}{quote(single_line_dots(value))}"
            kept = printer.selector_with(node, matcher.name, wanted)
            yield Hit(
                f"`{matcher_text(matcher)}` deals with line breaks, but on Prometheus 3 `.` "
                f"also matches a newline (on 2 it does not); write {wanted} to mean the same "
                "on both",
                fix=Fix(expr=printer.render(tree, selectors={path: kept})),
            )


def _recorded_interval(name: str, ctx: Context) -> float | None:
    """Seconds between samples of the recorded series ``name``: its group's ``interval``,
    else the default evaluation interval (taken as the scrape interval)."""
    rules = ctx.records.get(name)
    if not rules:
        return None
    intervals = set()
    for rule, _ in rules:
        try:
            written = rule.group_interval
            intervals.add(q.parse_duration(written) if written else ctx.config.scrape_interval)
        except ValueError:
            return None
    return max(intervals)


@rule_check(
    "range-left-open",
    Severity.WARNING,
    "versions",
    "a range that holds one sample fewer on Prometheus 3 (left-open) and so returns nothing",
)
def range_left_open(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """Prometheus 3 selects ``(t − range, t]`` instead of ``[t − range, t]``. A subquery or a
    recorded series (both sampled on an exact grid) read over a range equal to its step
    loses the sample at the start: ``rate(x[5m:5m])`` has one point and returns nothing."""
    if "3" not in ctx.config.versions:
        return
    for path, node in walk_paths(tree):
        call = q.as_call(node, *_TWO_SAMPLES)
        if call is None or not call.args:
            continue
        arg = call.args[0]
        if isinstance(arg, P.SubqueryExpr):
            window = q.seconds(arg.range)
            step = q.seconds(arg.step) if arg.step is not None else ctx.config.scrape_interval
            what = f"the subquery [{q.fmt_seconds(window)}:{q.fmt_seconds(step)}]"
        elif isinstance(arg, P.MatrixSelector) and is_recorded(q.selector_name(arg)):
            interval = _recorded_interval(q.selector_name(arg), ctx)
            if interval is None:
                continue
            window, step = q.seconds(arg.range), interval
            what = f"`{q.selector_name(arg)}` (recorded every {q.fmt_seconds(step)})"
        else:
            continue
        if window > step:
            continue
        seconds = max(2 * step, 4 * ctx.config.scrape_interval)  # range-too-short's minimum
        wider = printer.with_range(arg, seconds, (*path, 0))
        yield Hit(
            f"{call.func.name}() over {what} sees one sample on Prometheus 3, whose ranges "
            f"exclude their start, and returns nothing; use a range of at least two steps: "
            f"`{wider}`",
            fix=Fix(expr=printer.render(tree, {(*path, 0): wider})),
        )
