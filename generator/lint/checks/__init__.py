"""Check families; importing this package registers every check in the registry."""

from generator.lint.checks import (
    alerts,
    burn_rate,
    counters,
    histograms,
    hygiene,
    quantiles,
    slo,
    versions,
)

__all__ = [
    "alerts",
    "burn_rate",
    "counters",
    "histograms",
    "hygiene",
    "quantiles",
    "slo",
    "versions",
]
