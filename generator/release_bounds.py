"""Bucket bounds per server release: whether a latency threshold holds on the releases a spec
names, and the fix where it does not.

A preset entry's bounds are those of the releases from its ``since_version`` up to the next
entry's (:func:`generator.presets.spans`). A threshold is checked on the declared
``serverVersion``'s entry; a version written as a line (``0.8``) on every entry of that line;
no version on the newest entry, with a warning naming older releases it fails on. Rules and
table: docs/spec.md, "Bucket bounds per release".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from generator.presets import VARIANTS, HistogramDef, Preset, spans
from generator.versions import Release, parse_release


@dataclass(frozen=True)
class Reach:
    """Consecutive preset entries whose histogram of one key has the same bounds: releases
    ``since`` up to, not including, ``until`` (None: every later one); ``histogram`` is None
    where those releases expose none, and ``preset`` is the reach's first entry."""

    since: Release
    until: Release | None
    histogram: HistogramDef | None
    preset: Preset

    def holds(self, numbers: tuple[int, ...]) -> bool:
        """Whether release ``numbers`` (trailing zeros dropped) is in this reach."""
        return self.since.numbers <= numbers and (
            self.until is None or numbers < self.until.numbers
        )


@dataclass(frozen=True)
class Test:
    """What a threshold must be on a histogram: ``holds(histogram)``; ``what`` says it in
    words (``a bucket bound``) and ``effect`` what happens on releases where it fails."""

    holds: Callable[[HistogramDef], bool]
    what: str
    effect: str


def _same(a: HistogramDef | None, b: HistogramDef | None) -> bool:
    if a is None or b is None:
        return a is b
    return (a.buckets, a.seconds_per_unit, a.native) == (b.buckets, b.seconds_per_unit, b.native)


@cache
def _reaches(server: str, variant: str | None, scheme: str | None, key: str) -> tuple[Reach, ...]:
    out: list[Reach] = []
    for span in spans(server, variant, scheme):
        h = span.preset.latency.get(key)
        if out and _same(out[-1].histogram, h):
            out[-1] = Reach(out[-1].since, span.until, h, out[-1].preset)
        else:
            out.append(Reach(span.since, span.until, h, span.preset))
    return tuple(out)


def bounds_text(histogram: HistogramDef) -> str:
    """``histogram``'s bounds in seconds, all of them (``0.3, 0.5, …, 60 s`` written out)."""
    return ", ".join(f"{b * histogram.seconds_per_unit:.6g}" for b in histogram.buckets) + " s"


@dataclass(frozen=True)
class Releases:
    """The release a spec declares, and the histograms whose bounds come from its preset.

    Attributes:
        server: ``spec.server``; ``variant``: ``spec.serverVariant`` (None: the default).
        release: ``spec.serverVersion`` parsed, or None when unset (the newest entry).
        preset_keys: histogram keys (``requestDuration``) whose bounds are the preset's, not
            ``spec.metrics.<key>.buckets``: only those depend on the release.
    """

    server: str
    variant: str | None
    release: Release | None
    preset_keys: frozenset[str]

    @classmethod
    def of(
        cls, server: str, version: str | None, variant: str | None, keys: frozenset[str]
    ) -> Releases:
        """From the spec's fields (``version`` already validated by the spec's loader)."""
        release = None if version is None else parse_release(server, version)
        return cls(server, variant, release, keys)

    def reaches(self, key: str) -> tuple[Reach, ...]:
        """The runs of entries with the same ``key`` histogram bounds, oldest first."""
        scheme = self.release.scheme if self.release is not None else None
        return _reaches(self.server, self.variant, scheme, key)

    def _chosen(self, reaches: tuple[Reach, ...]) -> int:
        if self.release is None:
            return len(reaches) - 1
        return next(
            (i for i, r in enumerate(reaches) if r.holds(self.release.numbers)),
            len(reaches) - 1,
        )

    def label(self, reach: Reach) -> str:
        """``vllm ≥ 0.8, < 0.8.4``: the server (and a variant other than the default) and the
        reach's releases in the declared numbering."""
        variants = VARIANTS.get(self.server, {})
        named = self.variant is not None and self.variant != next(iter(variants), None)
        who = f"{self.server} {self.variant}" if named else self.server
        if reach.since.numbers == (0,) and reach.until is None:
            return f"{who} (every release)"
        upper = f", < {reach.until.text}" if reach.until is not None else ""
        return f"{who} ≥ {reach.since.text}{upper}"

    def _declared(self) -> str:
        if self.release is None:
            return "spec.serverVersion unset: the newest"
        return f'spec.serverVersion "{self.release.text}"'

    def refusal(self, key: str, test: Test) -> str:
        """The end of an error about a threshold that fails on the declared release's bounds
        of ``key``: those releases, their bounds, and the fix (the release from which it
        would hold, or spec.metrics.<key>.buckets)."""
        reaches = self.reaches(key)
        i = self._chosen(reaches)
        chosen = reaches[i]
        assert chosen.histogram is not None
        said = (
            f"{self.label(chosen)} ({self._declared()}) exposes {chosen.histogram.name} with "
            f"the bounds {bounds_text(chosen.histogram)}"
        )
        declare = (
            f"declare spec.metrics.{key}.buckets (seconds) with the bounds your pods expose "
            "if they run with other buckets"
        )
        later = next(
            (r for r in reaches[i + 1 :] if r.histogram is not None and test.holds(r.histogram)),
            None,
        )
        if later is not None:
            return (
                f"{said}; from {self.server} {later.since.text} on it is {test.what} — upgrade "
                f"the pods to {later.since.text} or later and set spec.serverVersion to their "
                f"release, or {declare}"
            )
        return f"{said} — use one of those, or {declare}"

    def line_problem(self, key: str, test: Test, threshold: str) -> str | None:
        """Why ``threshold``, which holds on the declared release's entry, fails on another
        entry of the line the declared version names (``0.5`` names every 0.5.x), or None."""
        if self.release is None:
            return None
        release = self.release
        reaches = self.reaches(key)
        i = self._chosen(reaches)
        for reach in reaches[i + 1 :]:
            if not release.covers(reach.since.numbers):
                break
            if reach.histogram is not None and test.holds(reach.histogram):
                continue
            has = (
                f"exposes {reach.histogram.name} with the bounds {bounds_text(reach.histogram)}"
                if reach.histogram is not None
                else "exposes no such histogram"
            )
            return (
                f'spec.serverVersion "{release.text}" names every {self.server} '
                f"{release.text}.x release, and {self.label(reach)} {has}, where {threshold} "
                f"is not {test.what}: on those pods {test.effect} — write in full the release "
                f"your pods run (it is {test.what} before {reach.since.text}, not from "
                f"{reach.since.text} on), or choose a threshold that is {test.what} on both, or "
                f"declare spec.metrics.{key}.buckets"
            )
        return None

    def upgrade_warning(self, key: str, test: Test, threshold: str) -> str | None:
        """Why ``threshold``, which holds on the declared release, fails on a later release
        outside the line it names (the pods' next upgrade, or the newer half of a fleet in the
        middle of one), or None."""
        if self.release is None:
            return None
        release = self.release
        reaches = self.reaches(key)
        i = self._chosen(reaches)
        for reach in reaches[i + 1 :]:
            if release.covers(reach.since.numbers) or reach.histogram is None:
                continue
            if not test.holds(reach.histogram):
                return (
                    f"{threshold} is {test.what} of {self.label(reaches[i])}, not of "
                    f"{self.label(reach)} ({reach.histogram.name}: {bounds_text(reach.histogram)}"
                    f"): once pods run {reach.since.text} or later {test.effect} — choose a "
                    f"threshold that is {test.what} on both before the upgrade, and set "
                    "spec.serverVersion to the release the pods run"
                )
        return None

    def unset_warning(self, key: str, test: Test, threshold: str) -> str | None:
        """With no ``serverVersion``: the older releases on whose bounds ``threshold`` fails,
        with the fix, or None."""
        if self.release is not None:
            return None
        reaches = self.reaches(key)
        failing = [
            r for r in reaches[:-1] if r.histogram is not None and not test.holds(r.histogram)
        ]
        if not failing:
            return None
        shown = "; ".join(
            f"{self.label(r)} exposes {r.histogram.name} with the bounds {bounds_text(r.histogram)}"
            for r in failing
            if r.histogram is not None
        )
        return (
            f"spec.serverVersion is unset, so {threshold} was checked against the newest "
            f"{self.server} bounds; {shown}, where it is not {test.what} ({test.effect} on "
            "those pods) — set spec.serverVersion to the release your pods run"
        )

    def upcoming(self, key: str) -> Reach | None:
        """The first reach after the declared release's that exposes a ``key`` histogram."""
        reaches = self.reaches(key)
        i = self._chosen(reaches)
        return next((r for r in reaches[i + 1 :] if r.histogram is not None), None)

    def absent(self, key: str) -> str | None:
        """Why the declared release has no ``key`` histogram (the preset's words), and from
        which release on the server has one; None when the preset says nothing."""
        reaches = self.reaches(key)
        reason = reaches[self._chosen(reaches)].preset.absent.get(key)
        later = self.upcoming(key)
        if later is not None and later.histogram is not None:
            upgrade = (
                f"{self.label(later)} exposes {later.histogram.name}: upgrade the pods and set "
                "spec.serverVersion to their release"
            )
            reason = f"{reason}; {upgrade}" if reason else upgrade
        return reason
