"""PromQL building blocks: escaping, selectors, ``le`` spellings and rate expressions.

Every value that reaches PromQL from a spec goes through :func:`quote` (string literals) or
:func:`regex_escape` (literal text inside a regex). Expressions follow docs/contracts.md, rule 3:
rate first, then sum; ``histogram_quantile`` keeps ``le`` in ``sum by (le, …)``; ratios divide
a summed numerator by a summed denominator.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

LEGACY_METRIC_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
LEGACY_LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_PROMQL_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"})
_RE2_META = re.compile(r"([\\.+*?()|\[\]{}^$])")


def quote(value: str) -> str:
    """Return ``value`` as a double-quoted PromQL string literal, escaped.

    A ``"`` or ``\\`` in a label value can never end the literal or change the query.
    """
    return '"' + value.translate(_PROMQL_ESCAPES) + '"'


def metric_name_problem(name: str, version: str) -> str | None:
    """Why ``name`` cannot be a metric name on a Prometheus of ``version`` (``"2"``, ``"3"``,
    ``"compat"``), or None when it can.

    Legacy names (``[a-zA-Z_:][a-zA-Z0-9_:]*``) are valid everywhere. Prometheus 3 accepts
    any UTF-8 string (prometheus.io/docs/guides/utf8), written quoted in PromQL
    (:func:`selector`); obsgen refuses control characters there too, as no exporter writes
    them. On ``2`` and ``compat`` the answer names the scrape setting that stores the escaped
    name, and that name.
    """
    if LEGACY_METRIC_NAME.fullmatch(name):
        return None
    if not name:
        return "is empty; expected a metric name"
    if not name.isprintable():
        return "contains a control character or line break; expected a printable metric name"
    if "$" in name or "{{" in name or "}}" in name:
        return (
            "contains $, {{ or }}, which Grafana variables or alert templates would expand; "
            "expected a metric name without them"
        )
    if version == "3":
        return None
    escaped = escape_underscores(name)
    return (
        "is not a legacy Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*). Prometheus 3 "
        'stores it as written: set spec.prometheus.version: "3" and obsgen writes quoted '
        "selectors for it; a Prometheus before 3.0 (version 2 or compat) stores it only "
        "escaped — scrape it with metric_name_escaping_scheme: underscores (or OTLP "
        "translation_strategy: UnderscoreEscapingWithSuffixes) and give the escaped name "
        f"{escaped}"
    )


def label_name_problem(label: str, version: str) -> str | None:
    """Why ``label`` cannot be a label name on a Prometheus of ``version``, or None: as
    :func:`metric_name_problem`, for the legacy set ``[a-zA-Z_][a-zA-Z0-9_]*``; names
    starting with ``__`` are Prometheus's own on every version."""
    if label.startswith("__"):
        return "starts with __, which Prometheus reserves for its own labels"
    if LEGACY_LABEL_NAME.fullmatch(label):
        return None
    why = metric_name_problem(label, "3")  # empty, control characters, $ {{ }}
    if why is not None:
        return why.replace("metric name", "label name")
    if version == "3":
        return None
    escaped = escape_underscores(label).replace(":", "_")
    return (
        "is not a legacy Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*). Prometheus 3 stores "
        'it as written: set spec.prometheus.version: "3" and obsgen quotes it; a Prometheus '
        "before 3.0 (version 2 or compat) stores it only escaped — scrape with "
        "metric_name_escaping_scheme: underscores (or OTLP translation_strategy: "
        f"UnderscoreEscapingWithSuffixes) and give the escaped name {escaped}"
    )


def escape_underscores(name: str) -> str:
    """``name`` as Prometheus's ``underscores`` escaping scheme stores it: every character
    outside the legacy set (a digit too, when first) becomes ``_`` (``gen_ai.server`` →
    ``gen_ai_server``; prometheus.io/docs/instrumenting/escaping_schemes)."""
    return "".join(
        c if LEGACY_METRIC_NAME.match(c if i == 0 else "a" + c) else "_" for i, c in enumerate(name)
    )


def regex_escape(text: str) -> str:
    """Escape ``text`` so an RE2 regex matches it literally (``a.b`` → ``a\\.b``)."""
    return _RE2_META.sub(r"\\\1", text)


# RE2 metacharacters: a pattern without any matches exactly its text.
_REGEX_META = frozenset(".^$*+?()[]{}|\\")


@dataclass(frozen=True, order=True)
class Matcher:
    """One label matcher; ``op`` is ``=``, ``!=``, ``=~`` or ``!~``; ``value`` is unescaped."""

    label: str
    op: str
    value: str

    def render(self) -> str:
        """``label<op>"escaped value"``; a label name outside the legacy set quoted
        (``"gen_ai.system"="openai"``, Prometheus 3 only)."""
        return f"{label_name(self.label)}{self.op}{quote(self.value)}"

    @classmethod
    def regex(cls, label: str, pattern: str, *, negate: bool = False) -> Matcher:
        """``label=~pattern`` (``!~`` with ``negate``), or ``=`` / ``!=`` when ``pattern`` has
        no regex metacharacter: the same series (Prometheus anchors regexes fully), said
        plainly as pint's and ``obsgen lint``'s regex-plain-string check asks."""
        if _REGEX_META.isdisjoint(pattern):
            return cls(label, "!=" if negate else "=", pattern)
        return cls(label, "!~" if negate else "=~", pattern)


def equals(labels: Mapping[str, str]) -> tuple[Matcher, ...]:
    """Equality matchers for a label mapping, sorted by label."""
    return tuple(sorted(Matcher(k, "=", v) for k, v in labels.items()))


def label_name(label: str) -> str:
    """``label`` as PromQL writes a label name: bare when legacy (``[a-zA-Z_][a-zA-Z0-9_]*``),
    else a quoted, escaped string (``"gen_ai.system"``), which only Prometheus 3 parses."""
    return label if LEGACY_LABEL_NAME.fullmatch(label) else quote(label)


def selector_text(metric: str, matchers: Sequence[str]) -> str:
    """A selector from ``metric`` and already rendered ``matchers``, kept in their order.

    A legacy name is written in front, ``metric{a="x"}``; any other (a Prometheus 3 UTF-8
    name) goes quoted and escaped as the first item inside the braces,
    ``{"gen_ai.server.request.duration_seconds_bucket",le="0.5"}`` (prometheus.io/docs/guides/utf8).
    The one place obsgen spells a metric name in PromQL, test series notation included.
    """
    if not metric or LEGACY_METRIC_NAME.fullmatch(metric):
        return f"{metric}{{{','.join(matchers)}}}"
    return "{" + ",".join((quote(metric), *matchers)) + "}"


_QUOTED_NAME = re.compile(r'\{\s*"((?:[^"\\]|\\.)*)"\s*(?=[,}])')
_UNESCAPES = {"n": "\n", "r": "\r", "t": "\t"}
_IDENTIFIER = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")


def unquote(body: str) -> str:
    """The text of a PromQL string literal's ``body`` (between its quotes): the inverse of
    :func:`quote`."""
    return re.sub(r"\\(.)", lambda m: _UNESCAPES.get(m.group(1), m.group(1)), body)


def series_metric(series: str) -> str:
    """The metric name of selector or series text as :func:`selector_text` writes it
    (``a{…}`` → ``a``, ``{"a.b",…}`` → ``a.b``); ``""`` when it names none."""
    found = _QUOTED_NAME.match(series)
    if found:
        return unquote(found.group(1))
    return series.split("{", 1)[0].strip()


def names_in(expr: str) -> set[str]:
    """Every metric name ``expr`` may read: each identifier (label names, functions and
    keywords too: a superset) and each quoted name leading a selector's braces."""
    return {*_IDENTIFIER.findall(expr), *(unquote(b) for b in _QUOTED_NAME.findall(expr))}


# Each matcher's text, rendered once per process: a fleet's services render the same few
# hundred matchers tens of thousands of times (bounded: cleared when it grows past the limit).
_RENDERED: dict[Matcher, str] = {}
_RENDERED_LIMIT = 65536


def _matcher_key(matcher: Matcher) -> tuple[str, str, str]:
    # The order of Matcher's own (dataclass) comparison, without its per-call tuples.
    return (matcher.label, matcher.op, matcher.value)


def _rendered(matcher: Matcher) -> str:
    text = _RENDERED.get(matcher)
    if text is None:
        if len(_RENDERED) >= _RENDERED_LIMIT:
            _RENDERED.clear()
        text = _RENDERED[matcher] = matcher.render()
    return text


def selector(metric: str, matchers: Iterable[Matcher]) -> str:
    """Render ``metric{a="x",b=~"y"}`` with matchers sorted (deterministic output); a UTF-8
    metric or label name is quoted (:func:`selector_text`, :func:`label_name`)."""
    return selector_text(metric, [_rendered(m) for m in sorted(set(matchers), key=_matcher_key)])


def by(labels: Iterable[str]) -> str:
    """``by (a, b)`` for the sorted, de-duplicated labels; ``""`` when there are none."""
    names = sorted(set(labels))
    return f" by ({', '.join(label_name(n) for n in names)})" if names else ""


def sum_rate(
    series: str,
    window: str,
    group: Iterable[str],
    target: Target | None = None,
    window_seconds: float = 0.0,
) -> str:
    """``sum by (group) (rate(series[window]))``: rate first, then sum; with ``target`` (a
    counter), plus the first values of series born in the window (:func:`born_rate`)."""
    inner = f"rate({series}[{window}])"
    if target is not None:
        inner += f" or {born_rate(series, window, window_seconds, target)}"
    return f"sum{by(group)} ({inner})"


def any_of(names: Sequence[str], matchers: Iterable[Matcher]) -> str:
    """``a{m} or b{m}``: the series of the first name, and of later names where the first has
    no series with the same labels (``or`` matches label sets without the metric name).

    Reads a renamed metric whichever name a pod exposes, and only once where it exposes both.
    One name gives the plain selector.
    """
    found = tuple(matchers)
    return " or ".join(selector(name, found) for name in names)


def sum_rate_any(
    names: Sequence[str], matchers: Iterable[Matcher], window: str, group: Iterable[str]
) -> str:
    """``sum by (group) (rate(a{m}[w]) or rate(b{m}[w]))``: :func:`sum_rate` over a renamed
    counter, de-duplicated per series *before* summing, so pods on either side of the rename
    all count, once. One name gives exactly :func:`sum_rate`."""
    found = tuple(matchers)
    rates = " or ".join(f"rate({selector(name, found)}[{window}])" for name in names)
    return f"sum{by(group)} ({rates})"


@dataclass(frozen=True)
class Target:
    """The scrape targets a counter's series come from, to tell a series created during its
    target's life (its first value is all new events) from one that came with its target.

    ``up``: selector of the targets' ``up`` series (the counter's own selector labels);
    ``labels``: the labels naming one target on both (``instance``, ``job``, ``namespace`` and
    the cluster label), each kept on every scraped series by Prometheus itself.
    """

    up: str
    labels: tuple[str, ...]

    @property
    def on(self) -> str:
        """``on (labels…)``."""
        return f"on ({', '.join(label_name(n) for n in self.labels)})"


def increments(
    at: Callable[[Callable[[str], str]], str],
    interval: str,
    target: Target | None = None,
    bridge: str | None = None,
) -> str:
    """Events each series of a counter gained over the last ``interval``, exactly (unsummed).

    ``at(wrap)`` renders the per-series counter value with each raw selector ``wrap``-ped:
    the value now (``wrap`` leaves the selector as it is) and before (the last sample up to
    ``interval`` ago; for a selector, ``lambda w: w(sel)``). Per series: ``now − before``
    while the counter did not drop; ``now`` when it did (a reset: counting restarted from 0).
    A series with no sample before counts ``now`` when its ``target`` was up ``interval`` ago
    (that scrape succeeded without it: the client created it since, at its first event) and
    nothing otherwise (it came with its target: a new pod — as ``rate`` ignores a series'
    first sample); docs/spec.md, "Counters born late". ``or`` adds only label sets the earlier
    terms lack, so each series counts once. Unlike ``increase(x[interval])`` nothing is
    extrapolated, so increments recorded every ``interval`` add up exactly (they telescope) over
    any window that holds a whole number of them.

    ``bridge``: "before" is the last sample within ``bridge`` before ``interval`` ago
    (``last_over_time(x[bridge] offset interval)``, which skips staleness markers) instead of
    the sample ``interval`` ago within the 5m lookback (``x offset interval``): a hole in the
    samples up to ``bridge`` long (failed scrapes, a Prometheus restart, a remote-write
    backlog) then loses nothing — the events inside it are booked at the first evaluation
    after it, as ``increase()`` over a window holding the hole books them. docs/spec.md,
    "Gaps in the samples".
    """
    now = at(lambda sel: sel)
    if bridge is None:
        then = at(lambda sel: f"{sel} offset {interval}")
    else:
        then = at(lambda sel: f"last_over_time({sel}[{bridge}] offset {interval})")
    out = f"({now} - {then}) >= 0 or ({now} and {then})"
    if target is not None:
        out += f" or ({now} and {target.on} ({target.up} offset {interval} == 1))"
    return out


def sum_increments(
    ats: Sequence[Callable[[Callable[[str], str]], str]],
    interval: str,
    group: Iterable[str],
    target: Target | None = None,
    bridge: str | None = None,
) -> str:
    """``sum by (group)`` of :func:`increments` of a counter known by several names (a
    rename): per series the first name's, later names' only where it has none (as
    :func:`sum_rate_any`), so pods on either side of the rename all count, once."""
    parts = [increments(at, interval, target, bridge) for at in ats]
    inner = parts[0] if len(parts) == 1 else " or ".join(f"({x})" for x in parts)
    return f"sum{by(group)} ({inner})"


BORN_LABEL = "obsgen_born"  # marks born series' first values inside a sum: never recorded


def born(series: str, window: str, target: Target) -> str:
    """The first value of each series of a counter born during its target's life in the last
    ``window``: absent ``window`` ago, and fewer samples in the window than its target had
    successful scrapes (``sum_over_time(up)``), so a scrape succeeded without it and its first
    value is all events since. A series that came with its target (a new pod, a scrape gap, a
    Prometheus restart) has as many samples as the target's successful scrapes: left out. The
    first value is ``min_over_time`` (equal to it unless the counter reset in the window)."""
    first = f"min_over_time({series}[{window}]) unless {series} offset {window}"
    scraped = (
        f"count_over_time({series}[{window}]) < {target.on} group_left "
        f"sum_over_time({target.up}[{window}])"
    )
    return f"({first}) and ({scraped})"


def born_rate(series: str, window: str, window_seconds: float, target: Target) -> str:
    """:func:`born` per second over ``window`` (what ``rate`` misses: it starts from a
    series' first sample), labelled ``obsgen_born="1"`` so that ``rate(…) or born_rate(…)``
    keeps both inside a sum."""
    first = born(series, window, target)
    return f'label_replace({first}, "{BORN_LABEL}", "1", "", "") / {window_seconds:g}'


# --- `le` spellings (docs/contracts.md, rule 1) ---------------------------------------------------------


@functools.cache
def go_float(value: float) -> str:
    """Format like Go's ``strconv.FormatFloat(v, 'g', -1, 64)``: ``1``, ``0.5``, ``1.8e+06``, ``5e-05``.

    Shortest round-trip digits; exponent form when the decimal exponent is < -4 or >= 6
    (Go uses precision 6 for that decision in shortest mode). Go clients expose bucket
    bounds this way and Prometheus 3 normalises to it.
    """
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    sign, digit_tuple, _ = Decimal(repr(float(value))).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    exponent = Decimal(repr(float(value))).adjusted()
    prefix = "-" if sign else ""
    if exponent < -4 or exponent >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    return prefix + format(Decimal(repr(abs(float(value)))).normalize(), "f")


def prometheus3_le(value: float) -> str:
    """How Prometheus 3 stores a classic-histogram bound: Go float with ``.0`` on whole numbers.

    ``1`` → ``1.0``, ``2.5`` → ``2.5``, ``1800000`` → ``1.8e+06``, ``0.00005`` → ``5e-05``.
    """
    text = go_float(value)
    if re.fullmatch(r"-?\d+", text):
        text += ".0"
    return text


def le_spellings(value: float) -> tuple[str, ...]:
    """Every spelling of bound ``value`` that a client or Prometheus version stores, sorted.

    Covers Go clients (``1``, ``1.8e+06``), client_python and Prometheus 3 (``1.0``), and the
    plain decimal form some clients write (``1800000``, ``0.00005``).
    """
    go = go_float(value)
    plain = format(Decimal(repr(float(value))).normalize(), "f")  # exact, never rounded
    spellings = {go, prometheus3_le(value), plain}
    if re.fullmatch(r"-?\d+", plain):
        spellings.add(plain + ".0")
    return tuple(sorted(spellings))


def le_matcher(value: float, version: str) -> Matcher:
    """The ``le`` matcher for bound ``value`` (docs/contracts.md, rule 1).

    Args:
        value: bucket upper bound in the metric's unit.
        version: ``"3"`` → exact ``le="1.0"`` as Prometheus 3 stores it; ``"2"`` or ``"compat"``
            → one anchored regex matching every spelling of the same number and nothing else.
    """
    if version == "3":
        return Matcher("le", "=", prometheus3_le(value))
    spellings = le_spellings(value)
    return Matcher("le", "=~", "^(?:" + "|".join(regex_escape(s) for s in spellings) + ")$")
