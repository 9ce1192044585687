"""Hygiene checks: naming, matchers, windows, group intervals, duplicates."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import promql_parser as P

from generator.lint import printer
from generator.lint import promql as q
from generator.lint.model import Fix, Rule, Severity, SourceFile
from generator.lint.names import split_recorded
from generator.lint.printer import Path, matcher_text, walk_paths
from generator.lint.regex import is_anchored, is_plain
from generator.lint.registry import Context, Hit, rule_check, set_check
from generator.promql import quote

# Labels whose anchored regexes are a deliberate, documented form (bucket/quantile spelling
# across Prometheus 2 and 3: le=~"^(?:1|1\\.0)$").
_ANCHOR_EXEMPT = frozenset({"le", "quantile"})
# Longest group interval (seconds): beyond the 5m lookback, recorded series go stale between
# evaluations and alerts see gaps.
MAX_GROUP_INTERVAL = 300.0
SUGGESTED_INTERVAL = "1m"  # Prometheus' default evaluation_interval
_WINDOW_FACTOR = 4


@rule_check(
    "record-name-format",
    Severity.INFO,
    "hygiene",
    "a recording rule name not of the form level:metric:operations",
)
def record_name_format(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``record: http_errors_rate`` hides its level and operations; see Prometheus docs."""
    if rule.kind == "record" and split_recorded(rule.name) is None:
        yield Hit(
            f"record name `{rule.name}` is not `level:metric:operations` (e.g. "
            "`job:http_requests:rate5m`)",
            line=rule.line_of("record"),
        )


def _regex_matchers(tree: q.Expr) -> Iterator[tuple[Path, P.VectorSelector, P.Matcher]]:
    for path, node in walk_paths(tree):
        if isinstance(node, P.VectorSelector) and not node.matchers.or_matchers:
            for matcher in node.matchers.matchers:
                if q.is_regex(matcher):
                    yield path, node, matcher


def _with_matcher(
    tree: q.Expr, path: Path, node: P.VectorSelector, old: P.Matcher, new: str
) -> str:
    """The expression with ``old`` (one matcher of the selector at ``path``) replaced."""
    kept = [
        new
        if m is old or (m.name == old.name and m.op == old.op and m.value == old.value)
        else matcher_text(m)
        for m in node.matchers.matchers
        if not (node.name and m.name == "__name__")
    ]
    name = str(node.name) if node.name else ""
    return printer.render(tree, selectors={path: f"{name}{{{','.join(kept)}}}"})


@rule_check(
    "regex-plain-string",
    Severity.INFO,
    "hygiene",
    'a regex matcher on a plain string (`=~"GET"` instead of `="GET"`)',
)
def regex_plain_string(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``method=~"GET"`` runs the regex engine for an equality test."""
    for path, node, matcher in _regex_matchers(tree):
        value = str(matcher.value)
        if is_plain(value):
            equal = "=" if matcher.op == P.MatchOp.Re else "!="
            wanted = f"{matcher.name}{equal}{quote(value.replace(chr(92), ''))}"
            yield Hit(
                f"`{matcher_text(matcher)}` has no regex operator; write {wanted}",
                fix=Fix(expr=_with_matcher(tree, path, node, matcher, wanted)),
            )


def _strip_anchors(pattern: str) -> str:
    if pattern.startswith("^"):
        pattern = pattern[1:]
    if is_anchored(pattern) and pattern.endswith("$"):
        pattern = pattern[:-1]
    return pattern


@rule_check(
    "regex-redundant-anchor",
    Severity.INFO,
    "hygiene",
    "a regex matcher anchored with ^ or $ (Prometheus anchors every matcher)",
)
def regex_redundant_anchor(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``job=~"^api$"``: the anchors are implied and suggest an unanchored match elsewhere."""
    for path, node, matcher in _regex_matchers(tree):
        value = str(matcher.value)
        if matcher.name in _ANCHOR_EXEMPT or not is_anchored(value):
            continue
        stripped = _strip_anchors(value)
        if is_plain(stripped):  # what is left is a literal: an equality says it plainly
            op = "=" if matcher.op == P.MatchOp.Re else "!="
            stripped = stripped.replace("\\", "")
        else:
            op = "=~" if matcher.op == P.MatchOp.Re else "!~"
        wanted = f"{matcher.name}{op}{quote(stripped)}"
        yield Hit(
            f"`{matcher_text(matcher)}`: Prometheus already anchors regex matchers; write {wanted}",
            fix=Fix(expr=_with_matcher(tree, path, node, matcher, wanted)),
        )


@rule_check(
    "range-too-short",
    Severity.WARNING,
    "hygiene",
    "a rate-like range window shorter than 4x the scrape interval",
)
def range_too_short(rule: Rule, tree: q.Expr, ctx: Context) -> Iterator[Hit]:
    """``rate(x[1m])`` at a 30s scrape sees two samples; one missed scrape empties it."""
    minimum = _WINDOW_FACTOR * ctx.config.scrape_interval
    replace: dict[Path, str] = {}
    found: list[tuple[str, float]] = []
    for path, node in walk_paths(tree):
        call = q.as_call(node, *q.SAMPLE_HUNGRY_FUNCS)
        if call is None or not call.args:
            continue
        func, arg = call.func.name, call.args[0]
        if not isinstance(arg, P.MatrixSelector):
            continue
        window = q.seconds(arg.range)
        if window < minimum:
            replace[(*path, 0)] = printer.with_range(arg, minimum, (*path, 0))
            if (func, window) not in found:
                found.append((func, window))
    fix = Fix(expr=printer.render(tree, replace)) if replace else None
    for func, window in found:
        yield Hit(
            f"{func}(…[{q.fmt_seconds(window)}]) is shorter than 4 × the "
            f"{q.fmt_seconds(ctx.config.scrape_interval)} scrape interval; use "
            f"[{q.fmt_seconds(minimum)}] (or set `scrapeInterval` in .obsgen-lint.yaml)",
            fix=fix,
        )


@set_check(
    "group-interval-too-long",
    Severity.WARNING,
    "hygiene",
    "a rule group `interval` of 5m or more (above 5m on Prometheus 2): recorded series go stale",
)
def group_interval_too_long(
    files: Sequence[SourceFile], trees: Mapping[Rule, q.Expr | None], ctx: Context
) -> Iterator[tuple[SourceFile, Rule | None, Hit]]:
    """``interval: 10m`` outlives the 5m lookback: queries see gaps, alerts flap."""
    for source in files:
        for group in source.groups:
            interval = group.raw.get("interval")
            if interval is None:
                continue
            try:
                seconds = q.parse_duration(str(interval))
            except ValueError:
                continue  # promtool reports it
            # Prometheus 3's lookback is left-open: a sample exactly 5m old is not found.
            left_open = "3" in ctx.config.versions
            if seconds > MAX_GROUP_INTERVAL or (left_open and seconds == MAX_GROUP_INTERVAL):
                limit = "below 5m" if left_open else "5m or less"
                yield (
                    source,
                    None,
                    Hit(
                        f"group {group.name!r} is evaluated every {interval}: its recorded "
                        "series go stale between evaluations (the 5m lookback"
                        f"{' excludes a sample exactly 5m old on Prometheus 3' if left_open else ''}"
                        f"); evaluate it every {SUGGESTED_INTERVAL} (anything {limit} works)",
                        line=group.line,
                        fix=Fix(fields=(("group.interval", SUGGESTED_INTERVAL),)),
                    ),
                )


def _identity(rule: Rule, tree: q.Expr | None) -> tuple[str, str, tuple[tuple[str, str], ...], str]:
    expr = str(tree) if tree is not None else " ".join(rule.expr.split())
    return rule.kind, rule.name, tuple(sorted(rule.labels.items())), expr


def _same_rule_deployed_once(a: Rule, b: Rule) -> bool:
    """True when two identical rules never load into one Prometheus side by side.

    Two cases: the same object written to two files (a PrometheusRule of the same
    ``namespace/name``, a Helm rules-map entry of the same key: applying or merging them
    keeps one), or the same group shipped in two packagings (a plain rule file and a
    PrometheusRule or Helm entry holding a group of the same name), which are alternatives.
    """
    if a.packaging != b.packaging:
        return a.group == b.group
    return a.file != b.file and a.deployed_as != "" and a.deployed_as == b.deployed_as


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
