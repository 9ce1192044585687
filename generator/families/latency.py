"""What the latency families (``latencyP99``, ``slowRequests``) resolve alike: the histogram
their ``indicator`` names, and why a server without latency histograms has neither alert.

Their own checks of the threshold against the histogram's bounds are in their modules
(``check``); the bound checks themselves in :mod:`generator.plan_metrics`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from generator import naming
from generator.plan_metrics import _no_histogram
from generator.spec import INDICATOR_ALIASES

if TYPE_CHECKING:
    from generator.families.base import Resolving
    from generator.plan_types import HistogramPlan
    from generator.release_bounds import Releases


def _upcoming_histogram(releases: Releases | None) -> str | None:
    """The first latency histogram key a later release than the declared one exposes."""
    if releases is None:
        return None
    return next((k for k in naming.INDICATOR_LABEL if releases.upcoming(k) is not None), None)


def unavailable(alert: str) -> Callable[[Resolving], str | None]:
    """Why ``alert`` is left out of a service with no latency histogram in its release
    (Triton before 24.11): the indicator asked for, or the first a later release has."""

    def why(r: Resolving) -> str | None:
        if r.histograms:
            return None
        indicator = INDICATOR_ALIASES.get(str(getattr(r.given, "indicator", None) or ""))
        indicator = indicator or _upcoming_histogram(r.releases) or "requestDuration"
        reason = _no_histogram(r.body.server, indicator, r.histograms, r.releases)
        return f"{alert} alert left out: {reason}"

    return why


def histogram(r: Resolving) -> HistogramPlan | None:
    """The histogram of ``params["indicator"]`` (an alias resolved to its key in place), or
    None with the problem reported. A default indicator the server lacks (Triton has no e2e
    histogram) falls back to the first it has: e2e before ttft before itl."""
    merged, plan_hist = r.params, r.histograms
    indicator = INDICATOR_ALIASES.get(str(merged["indicator"]))
    if indicator is None:
        r.problems.add(
            f"{r.path}.indicator",
            f"{merged['indicator']!r} is not a latency indicator; expected one of "
            f"{', '.join(INDICATOR_ALIASES)}",
        )
        return None
    merged["indicator"] = indicator
    found = plan_hist.get(indicator)
    if found is None and (r.given is None or r.given.indicator is None):
        indicator = next(k for k in naming.INDICATOR_LABEL if k in plan_hist)
        merged["indicator"] = indicator
        found = plan_hist[indicator]
    if found is None:
        r.problems.add(
            f"{r.path}.indicator",
            _no_histogram(r.body.server, indicator, plan_hist, r.releases),
        )
    return found
