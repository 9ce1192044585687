"""The e2e engine-timing table: filled by the package fixture, printed after the run (by the
pytest-xdist controller from what its worker hands over, under ``make test``)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

TIMINGS: dict[tuple[str, str], dict[str, float]] = {}
"""The last run's engine timings: {(service, event): {engine: seconds from the fault}}."""
WORKER_OUTPUT_KEY = "e2e-timings"
"""Where a pytest-xdist worker leaves :func:`timing_lines` for the controller."""


def timing_lines() -> list[str]:
    """The table of :data:`TIMINGS`, one line per service and awaited event."""
    return [
        f"{service:18} {event:48} "
        + "  ".join(f"{engine} {seconds:5.1f}" for engine, seconds in sorted(took.items()))
        for (service, event), took in sorted(TIMINGS.items())
    ]


def print_timings(terminalreporter: pytest.TerminalReporter, lines: Sequence[str]) -> None:
    """Print the table (lines of :func:`timing_lines`) under its heading."""
    terminalreporter.write_sep("-", "e2e engine timings (seconds from the fault)")
    for line in lines:
        terminalreporter.write_line(line)
