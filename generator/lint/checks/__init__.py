"""Check families; importing this package registers every check in the registry."""

from generator.lint.checks import (
    alerts,
    counters,
    histograms,
    hygiene,
    quantiles,
    slo,
    versions,
)

__all__ = ["alerts", "counters", "histograms", "hygiene", "quantiles", "slo", "versions"]
