"""Content negotiation of ``/metrics``: the exposition format that answers an ``Accept`` header.

:func:`negotiate` reads any header (RFC 9110 §12.5.1: q-values, wildcards, quoted parameters)
and returns one of :data:`OFFERS`, falling back to :data:`DEFAULT` when nothing offered is
acceptable; it never raises, and the ``Content-Type`` it gives names what the body really is.
More: docs/exporter.md, "Content negotiation".
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from prometheus_client.exposition import generate_latest
from prometheus_client.openmetrics.exposition import ALLOWUTF8, DOTS, UNDERSCORES, VALUES
from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics
from prometheus_client.registry import Collector

# Elements of a list header, and parameters of an element: runs of quoted strings (a trailing
# backslash or an unclosed quote included) and other characters; linear time, no backtracking.
_ELEMENTS = re.compile(r'(?:"(?:[^"\\]|\\.)*"?|\\|[^,"\\])+', re.DOTALL)
_PARAMS = re.compile(r'(?:"(?:[^"\\]|\\.)*"?|\\|[^;"\\])+', re.DOTALL)
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_QVALUE = re.compile(r"(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)")
ESCAPINGS = (UNDERSCORES, ALLOWUTF8, DOTS, VALUES)
"""Metric-name escaping schemes a client may ask for (``escaping=``); others mean underscores."""


@dataclass(frozen=True)
class Format:
    """One exposition format the exporter writes.

    Attributes:
        media_type: ``text/plain`` or ``application/openmetrics-text``.
        version: the format version the body is (``0.0.4``, ``1.0.0``).
        escaping: the metric-name escaping applied (one of :data:`ESCAPINGS`); None for a
            format without the parameter (text 0.0.4, whose names are always underscored).
    """

    media_type: str
    version: str
    escaping: str | None = None

    @property
    def content_type(self) -> str:
        """The ``Content-Type`` of a body in this format."""
        value = f"{self.media_type}; version={self.version}; charset=utf-8"
        return value if self.escaping is None else f"{value}; escaping={self.escaping}"

    def encode(self, collector: Collector) -> bytes:
        """``collector``'s families in this format, UTF-8 (prometheus-client's writers)."""
        escaping = self.escaping or UNDERSCORES
        if self.media_type == OPENMETRICS:
            body: bytes = generate_openmetrics(  # type: ignore[no-untyped-call]
                collector, escaping=escaping, version=self.version
            )
            return body
        return generate_latest(collector, escaping=escaping)

    def escaped(self, escaping: str) -> Format:
        """This format with ``escaping`` (unchanged for a format without the parameter)."""
        if self.escaping is None:
            return self
        return Format(self.media_type, self.version, escaping)


TEXT = "text/plain"
OPENMETRICS = "application/openmetrics-text"
TEXT_0_0_4 = Format(TEXT, "0.0.4")
TEXT_1_0_0 = Format(TEXT, "1.0.0", UNDERSCORES)
OPENMETRICS_1_0_0 = Format(OPENMETRICS, "1.0.0", UNDERSCORES)
OFFERS = (TEXT_0_0_4, TEXT_1_0_0, OPENMETRICS_1_0_0)
"""What the exporter writes, in its order of preference between equally acceptable ones (the
most widely read first). Not offered: protobuf and OpenMetrics 2.0 (experimental; Prometheus
3 refuses it without a feature flag), nor the pre-release OpenMetrics 0.0.1."""
DEFAULT = TEXT_0_0_4
"""The answer when no offer is acceptable (or no ``Accept`` is sent): every scraper reads it,
and RFC 9110 §12.5.1 lets a server disregard the header rather than answer 406."""


@dataclass(frozen=True)
class _Range:
    """One element of an ``Accept`` header."""

    type: str
    subtype: str
    params: dict[str, str]
    q: float
    position: int

    def specificity(self, offer: Format) -> int:
        """How precisely this range names ``offer``: -1 not at all, 0 ``*/*``, 1 ``type/*``,
        2 ``type/subtype``, 3 with the same ``version`` parameter."""
        media, sub = offer.media_type.split("/")
        if self.type == "*":
            return 0 if self.subtype == "*" else -1
        if self.type != media:
            return -1
        if self.subtype == "*":
            return 1
        if self.subtype != sub:
            return -1
        version = self.params.get("version")
        if version is None:
            return 2
        return 3 if version == offer.version else -1


def _unquote(value: str) -> str:
    value = value.strip()
    if value.startswith('"'):
        body = value[1:-1] if len(value) > 1 and value.endswith('"') else value[1:]
        return re.sub(r"\\(.)", r"\1", body, flags=re.DOTALL)
    return value


def ranges(header: str) -> Iterator[_Range]:
    """The well-formed media ranges of ``header``, in order; malformed elements (no
    ``type/subtype`` of tokens, a q-value outside 0–1 or not a number) are skipped."""
    for position, element in enumerate(_ELEMENTS.findall(header)):
        parts = _PARAMS.findall(element)
        if not parts:
            continue
        media, _, sub = parts[0].strip().lower().partition("/")
        if not (_TOKEN.fullmatch(media) and _TOKEN.fullmatch(sub)) or (media == "*" != sub):
            continue
        params: dict[str, str] = {}
        q = 1.0
        for part in parts[1:]:
            name, equals, value = part.partition("=")
            name = name.strip().lower()
            if not equals or not _TOKEN.fullmatch(name):
                continue
            if name == "q":
                text = value.strip()
                if not _QVALUE.fullmatch(text):
                    break
                q = float(text)
            else:
                params.setdefault(name, _unquote(value))
        else:
            yield _Range(media, sub, params, q, position)


def negotiate(header: str | None) -> Format:
    """The format to answer ``header`` (the ``Accept`` value, repeated headers joined by
    ``, ``; None when absent) with.

    Each offer takes the q-value of the most specific range that matches it (RFC 9110
    §12.5.1); the highest q above 0 wins, a tie going to the range listed first, then to
    :data:`OFFERS`' order. The winning range's ``escaping`` applies when it is one of
    :data:`ESCAPINGS` (else underscores). Nothing acceptable: :data:`DEFAULT`. Never raises.
    """
    if not header:
        return DEFAULT
    found = list(ranges(header))
    best: tuple[float, int, int] | None = None
    choice = DEFAULT
    for rank, offer in enumerate(OFFERS):
        deciding: _Range | None = None
        level = -1
        for r in found:
            s = r.specificity(offer)
            if s > level or (s == level and deciding is not None and r.q > deciding.q):
                deciding, level = r, s
        if deciding is None or deciding.q <= 0:
            continue
        key = (-deciding.q, deciding.position, rank)
        if best is None or key < best:
            best = key
            asked = deciding.params.get("escaping", UNDERSCORES)
            choice = offer.escaped(asked if asked in ESCAPINGS else UNDERSCORES)
    return choice
