"""Server presets: metric names, label names and bucket lists per model server and version.

Presets are data. Each server module defines :data:`PRESETS` entries keyed by the first
server version they apply to (and, for vLLM, by engine variant); :func:`select_preset` picks
the newest entry not newer than the spec's ``serverVersion`` (or the newest entry when none is
given). Release strings are parsed by :mod:`generator.versions` (PEP 440, Triton releases and
NGC container tags). Sources are cited in each module. Bucket bounds are in the metric's own
unit (``seconds_per_unit`` converts).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from generator.presets import openai_http, sglang, tgi, triton, trtllm, vllm
from generator.presets.model import (
    GaugeDef,
    HistogramDef,
    MeanLatencyDef,
    Preset,
    RequestsDef,
    prefixed,
)
from generator.versions import Release, parse_release

__all__ = [
    "CHECKED_THROUGH",
    "PRESETS",
    "VARIANTS",
    "GaugeDef",
    "HistogramDef",
    "MeanLatencyDef",
    "Preset",
    "PresetError",
    "RequestsDef",
    "Selection",
    "Span",
    "get_preset",
    "renames",
    "select_preset",
    "spans",
]

PRESETS: dict[str, list[Preset]] = {
    "openai-http": openai_http.PRESETS,
    "sglang": sglang.PRESETS,
    "tgi": tgi.PRESETS,
    "triton": triton.PRESETS,
    "trtllm": trtllm.PRESETS,
    "vllm": vllm.PRESETS,
}
# Newest release (line) each server's entries were checked against; later ones warn.
CHECKED_THROUGH: dict[str, tuple[str, ...]] = {
    "openai-http": openai_http.CHECKED_THROUGH,
    "sglang": sglang.CHECKED_THROUGH,
    "tgi": tgi.CHECKED_THROUGH,
    "triton": triton.CHECKED_THROUGH,
    "trtllm": trtllm.CHECKED_THROUGH,
    "vllm": vllm.CHECKED_THROUGH,
}
# Runtime variants per server (spec.serverVariant), default first; absent: none.
VARIANTS: dict[str, dict[str, str]] = {"vllm": vllm.VARIANTS}
_VARIANT_UNTIL: dict[str, dict[str, tuple[str, str]]] = {"vllm": vllm.VARIANT_UNTIL}


class PresetError(LookupError):
    """No preset entry fits; ``field`` is the spec field to blame (``serverVersion`` or
    ``serverVariant``) and the message says what would fit."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Selection:
    """The chosen entry, and a warning when the version is newer than obsgen has checked."""

    preset: Preset
    warning: str | None = None


def _since(server: str, preset: Preset, scheme: str) -> Release | None:
    for text in (preset.since_version, *preset.since_aliases):
        release = parse_release(server, text)
        if release.scheme == scheme:
            return release
    return None


def _key(server: str, preset: Preset, scheme: str) -> tuple[int, ...] | None:
    since = _since(server, preset, scheme)
    return None if since is None else since.numbers


@dataclass(frozen=True)
class Span:
    """One preset entry and the releases it describes: from ``since`` up to, not including,
    ``until`` (None: every later release), in one numbering (:mod:`generator.versions`)."""

    preset: Preset
    since: Release
    until: Release | None

    def holds(self, numbers: tuple[int, ...]) -> bool:
        """Whether release ``numbers`` (trailing zeros dropped) is one this entry describes."""
        return self.since.numbers <= numbers and (
            self.until is None or numbers < self.until.numbers
        )


@cache
def spans(server: str, variant: str | None = None, scheme: str | None = None) -> tuple[Span, ...]:
    """The entries of ``server``'s runtime ``variant`` (None: its default) in release order,
    each with the releases it describes, numbered in ``scheme`` (None: the entries' own);
    an entry with no release in that numbering is left out. A variant that ended (vLLM
    ``v0``) ends its last span at the first release without it."""
    chosen = variant or next(iter(VARIANTS.get(server, {})), None)
    entries = [p for p in PRESETS[server] if p.variant == chosen]
    scheme = scheme or parse_release(server, entries[0].since_version).scheme
    keyed = sorted(
        ((since, p) for p in entries if (since := _since(server, p, scheme)) is not None),
        key=lambda sp: sp[0].numbers,
    )
    until = _VARIANT_UNTIL.get(server, {}).get(chosen or "")
    end = parse_release(server, until[0]) if until is not None else None
    return tuple(
        Span(p, since, keyed[i + 1][0] if i + 1 < len(keyed) else end)
        for i, (since, p) in enumerate(keyed)
    )


def _newer_than_checked(server: str, release: Release) -> str | None:
    for text in CHECKED_THROUGH[server]:
        checked = parse_release(server, text)
        if checked.scheme != release.scheme:
            continue
        length = len(text.split("."))
        if release.line(length) > checked.line(length):
            return (
                f"{release.text} is newer than {text}, the newest {server} release obsgen's "
                f"preset was checked against; using the {text} metric names — run "
                "`obsgen verify` against your Prometheus to confirm them"
            )
    return None


def select_preset(server: str, version: str | None, variant: str | None = None) -> Selection:
    """The preset entry of ``server`` for release ``version`` and runtime ``variant``.

    Args:
        server: ``vllm``, ``sglang``, ``trtllm``, ``tgi``, ``triton`` or ``openai-http``.
        version: the spec's ``serverVersion`` (any form :mod:`generator.versions` parses), or
            None for the newest entry.
        variant: the spec's ``serverVariant``, or None for the server's default.

    Raises:
        KeyError: no preset for that server.
        ValueError: ``version`` is not a release string of that server.
        PresetError: the server has no such variant, the variant does not exist in that
            release, or ``version`` is older than every entry.
    """
    entries = PRESETS[server]
    variants = VARIANTS.get(server, {})
    if variant is not None and variant not in variants:
        known = ", ".join(variants) if variants else "none"
        raise PresetError(
            "serverVariant",
            f"server {server} has no variant {variant!r} (its variants: {known})"
            + ("; remove spec.serverVariant" if not variants else ""),
        )
    chosen_variant = variant or next(iter(variants), None)
    entries = [p for p in entries if p.variant == chosen_variant]
    if version is None:
        release = None
        scheme = parse_release(server, entries[0].since_version).scheme
    else:
        release = parse_release(server, version)
        scheme = release.scheme
    keyed = sorted(
        ((key, p) for p in entries if (key := _key(server, p, scheme)) is not None),
        key=lambda kp: kp[0],
    )
    until = _VARIANT_UNTIL.get(server, {}).get(chosen_variant or "")
    if until is not None:
        end = parse_release(server, until[0])
        if release is None or release.numbers >= end.numbers:
            given = "unset (the newest)" if release is None else release.text
            raise PresetError(
                "serverVariant" if release is None else "serverVersion",
                f"variant {chosen_variant} does not exist in {server} {until[0]} and later "
                f"({until[1]}); serverVersion is {given} — set the release you run "
                f"(from {keyed[0][1].since_version}, before {until[0]}), or drop serverVariant",
            )
    if release is None:
        return Selection(keyed[-1][1])
    fitting = [p for key, p in keyed if key <= release.numbers]
    if not fitting:
        oldest = keyed[0][1]
        raise PresetError(
            "serverVersion",
            f"no {server} preset for version {release.text}; the oldest supported is "
            f"{oldest.since_version}",
        )
    return Selection(fitting[-1], _newer_than_checked(server, release))


def get_preset(server: str, version: str | None, variant: str | None = None) -> Preset:
    """:func:`select_preset`'s entry alone (the warning dropped).

    Raises:
        KeyError, ValueError, PresetError: as :func:`select_preset`.
    """
    return select_preset(server, version, variant).preset


def renames(server: str, prefix: str = "") -> dict[str, tuple[str, ...]]:
    """Every gauge and histogram name of ``server``'s presets that was renamed in some release,
    mapped to its other names (``vllm:gpu_cache_usage_perc`` → ``vllm:kv_cache_usage_perc``);
    with ``prefix`` (``spec.metrics.prefix``) on every name."""
    found: dict[str, set[str]] = {}
    for preset in (prefixed(p, prefix) for p in PRESETS.get(server, [])):
        defs = [*preset.latency.values(), preset.queue_depth, preset.running_requests]
        defs.append(preset.kv_cache_usage)
        for d in defs:
            if d is not None and d.also:
                found.setdefault(d.name, set()).update(d.also)
                for other in d.also:
                    found.setdefault(other, set()).add(d.name)
    return {name: tuple(sorted(others)) for name, others in sorted(found.items())}
