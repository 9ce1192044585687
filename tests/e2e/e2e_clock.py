"""The e2e world's clock: the intervals both engines, the fakes and the Alertmanager run at,
and every bound the suite waits with, derived from them (seconds throughout).

A bound is the time a condition needs on an idle machine (scrapes, offsets, evaluations,
``for``) times :data:`LOAD_FACTOR`: a poll returns as soon as its condition holds, so only a
failing run waits a bound out. The specs in ``specs/`` are written for this clock; the suite
checks that they agree with it (``test_clock.py``).
"""

from __future__ import annotations

SCRAPE_INTERVAL_S = 2.0
"""Both engines scrape every fake target this often. At 1 s, with the rules of 12 services
evaluated every second, Prometheus' own share of a 2-core machine at a load average of 15–20
ran out: its scrapes of fakes answering in under 25 ms took up to 2.8 s (8 % over the 1 s
timeout), and healthy services paged ``ModelTargetDown``; at 2 s, at most 0.44 s
(docs/scale-out.md, "The end-to-end suite")."""
SCRAPE_TIMEOUT_S = SCRAPE_INTERVAL_S
"""Scrape timeout: the largest Prometheus allows."""
EVALUATION_INTERVAL_S = SCRAPE_INTERVAL_S
"""Prometheus' and vmalert's rule evaluation interval (the specs' ``evaluationInterval``)."""
RULE_QUERY_OFFSET_S = SCRAPE_TIMEOUT_S
"""Prometheus' ``rule_query_offset``. A scraped sample is stamped with its scrape's start and
stored when the answer is in, up to a scrape timeout later; a rule reading "now" misses a
sample still in flight and reads it one evaluation later in the past, so ``x - x offset <interval>``
counts the increment of that scrape at neither evaluation (events lost from the SLO counts).
Reading ``now - timeout``, every scrape stamped at or before that instant has been stored."""
POLL_S = SCRAPE_INTERVAL_S / 2
"""Seconds between two polls of an HTTP API."""
RENDER_S = SCRAPE_INTERVAL_S / 4
"""The fakes render their exposition this often (and at once on each change), so a scrape
only copies bytes (``e2e_fakes``)."""
GROUP_WAIT_S = EVALUATION_INTERVAL_S / 2
"""The Alertmanager's ``group_wait`` for the suite's receivers."""
GROUP_INTERVAL_S = EVALUATION_INTERVAL_S / 2
"""The Alertmanager's ``group_interval`` for the suite's receivers."""

FLUSH_INTERVAL_S = EVALUATION_INTERVAL_S
"""vmalert's ``-remoteWrite.flushInterval``."""
INGESTION_LAG_S = 4.0
"""Until VictoriaMetrics 1.151 makes an ingested row searchable, at most: rows wait in a
shard until 2 s after its first row and are moved on a 2 s ticker (``lib/storage/raw_row.go``,
``pendingRowsFlushInterval``)."""
LATENCY_OFFSET_S = SCRAPE_TIMEOUT_S + INGESTION_LAG_S + SCRAPE_INTERVAL_S
"""VictoriaMetrics' ``-search.latencyOffset`` and vmalert's ``-rule.evalDelay``: a scraped
sample is stored within a scrape timeout and searchable within :data:`INGESTION_LAG_S`; one
scrape interval of margin (``e2e_victoriametrics``)."""

LOAD_FACTOR = 4.0
"""How much longer than on an idle machine a condition may take on a loaded 2-core one
(scrapes, evaluations and polls all run late there)."""
START_S = 60.0
"""Bound for a server process (Prometheus, VictoriaMetrics, vmalert, Alertmanager) to answer
its readiness endpoint: process start-up, not the clock above."""
API_S = 30.0
"""Bound for one answer of a server's HTTP API (a query, the alert list) on a loaded machine."""


def bound(seconds: float) -> float:
    """A wait's deadline: ``seconds`` (the condition's time on an idle machine) times
    :data:`LOAD_FACTOR`."""
    return seconds * LOAD_FACTOR


def react_s(for_s: float = 0.0) -> float:
    """Seconds from a change of a fake until an alert of ``for`` ``for_s`` shows it on
    Prometheus, on an idle machine: the fake's next render and scrape, the scrape's timeout,
    the rule query offset, the next evaluation, ``for`` (counted in evaluations, so one
    more), and the suite's poll."""
    return (
        RENDER_S
        + SCRAPE_INTERVAL_S
        + SCRAPE_TIMEOUT_S
        + RULE_QUERY_OFFSET_S
        + EVALUATION_INTERVAL_S
        + for_s
        + EVALUATION_INTERVAL_S
        + POLL_S
    )


DISCOVERY_RELOAD_S = 5.0
"""Prometheus starts scraping the targets it has discovered on a 5 s ticker
(``scrape/manager.go``, ``reloader``): a fresh server's first scrape comes that late."""
TARGETS_UP_S = bound(DISCOVERY_RELOAD_S + SCRAPE_INTERVAL_S + SCRAPE_TIMEOUT_S + POLL_S)
"""Bound for a fresh Prometheus' first successful scrape of every target."""
VISIBLE_S = bound(SCRAPE_INTERVAL_S + SCRAPE_TIMEOUT_S + LATENCY_OFFSET_S + POLL_S)
"""Bound for a scrape to be seen by a query of VictoriaMetrics (latency offset included)."""
