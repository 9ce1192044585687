"""A real TSDB with history for the bench: OpenMetrics import, recording-rule backfill, a live
tail on 127.0.0.1, and each rule group's ``last_duration_seconds`` read from ``/metrics``.

:func:`build_history` fills a data folder the way bench/rule_eval.py and bench/sloth_compare.py
need it: raw history (``promtool tsdb create-blocks-from openmetrics``, a few files at a time)
while a first Prometheus scrapes the live tail, then the recorded series that long windows read
(``promtool tsdb create-blocks-from rules`` against a Prometheus over the raw blocks).
"""

from __future__ import annotations

import json
import re
import resource
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from _common import Prometheus


def serve_exposition(body: Callable[[float], str]) -> ThreadingHTTPServer:
    """Serve ``body(time.time())`` as a Prometheus text exposition on 127.0.0.1:<ephemeral>;
    stop it with ``shutdown()``."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            payload = body(time.time()).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def run_checked(args: list[str], what: str) -> str:
    """Run a command; return its output or raise ``RuntimeError`` with it."""
    proc = subprocess.run(args, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout + proc.stderr


def backfill_rules(docs: Iterable[dict[str, Any]], records: set[str]) -> dict[str, Any]:
    """The rules of ``docs`` (rule file documents) recording any of ``records``, one group per
    source group, for ``create-blocks-from rules``.

    promtool cannot read a series another rule of the same backfill records, so a picked rule
    that reads one gets that rule's expression inline instead: the same values.
    """
    groups = []
    for doc in docs:
        for g in doc["groups"]:
            picked = [dict(r) for r in g["rules"] if r.get("record") in records]
            for rule in picked:
                for other in picked:
                    if other is not rule:
                        selector = re.escape(other["record"]) + r"\{[^}]*\}"
                        inline = "(" + other["expr"] + ")"
                        rule["expr"] = re.sub(selector, lambda _m, x=inline: x, rule["expr"])
            if picked:
                groups.append({"name": f"backfill.{g['name']}", "rules": picked})
    return {"groups": groups}


def wait_for_compaction(prom: Prometheus, timeout_s: float) -> float:
    """Wait until the startup compaction of overlapping blocks is done; return seconds waited.

    Prometheus merges overlapping blocks (raw + backfilled) about a minute after start; rule
    timings taken during that merge would measure the compaction, not the rules.
    """
    start = time.monotonic()
    pattern = re.compile(r"^prometheus_tsdb_blocks_loaded (\S+)$", re.M)
    first = None
    while time.monotonic() - start < timeout_s:
        match = pattern.search(prom.metrics_text())
        loaded = float(match.group(1)) if match else 0.0
        if first is None:
            first = loaded
        if loaded <= 1 or loaded < first:
            return time.monotonic() - start
        time.sleep(2)
    return time.monotonic() - start


_DURATION = re.compile(
    r"^prometheus_rule_group_last_(duration_seconds|evaluation_timestamp_seconds)"
    r'\{rule_group="([^"]+)"\} (\S+)$',
    re.M,
)


def collect_durations(
    prom: Prometheus, samples: int, timeout_s: float, after: float = 0.0
) -> dict[str, list[float]]:
    """Per rule group (``file;group``), ``last_duration_seconds`` of each evaluation seen.

    Polls ``/metrics`` every second; one value per distinct evaluation timestamp later than
    ``after`` (seconds since the epoch); the first (cold) one of each group is dropped. Stops
    when every group has ``samples`` values or after ``timeout_s``.
    """
    seen: dict[str, dict[float, float]] = {}
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        durations: dict[str, float] = {}
        stamps: dict[str, float] = {}
        for kind, group, value in _DURATION.findall(prom.metrics_text()):
            (durations if kind == "duration_seconds" else stamps)[group] = float(value)
        for group, stamp in stamps.items():
            if stamp > after and group in durations:
                seen.setdefault(group, {})[stamp] = durations[group]
        if seen and all(len(v) > samples for v in seen.values()):
            break
        time.sleep(1)
    return {g: [v[k] for k in sorted(v)][1:] for g, v in seen.items()}


@dataclass
class History:
    """What :func:`build_history` did: raw samples imported, peak promtool RSS (MiB), and the
    seconds each step took (insertion order)."""

    samples: int = 0
    peak_import_mib: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)


def build_history(
    *,
    config: Path,
    data: Path,
    log: Path,
    write_chunk: Callable[[Path, int], int],
    chunks: int,
    backfill: Path,
    start: int,
    end: int,
    step_s: int,
    promtool: str = "promtool",
    prometheus: str | None = None,
) -> History:
    """Fill ``data`` with raw history and backfilled records; return what it took.

    A Prometheus over ``data`` (configuration ``config``: it scrapes the live tail, no rules)
    runs while ``write_chunk(path, i)`` writes OpenMetrics chunk ``i`` of ``chunks`` (returning
    its sample count) and promtool turns each into blocks: with hundreds of series the import
    takes minutes, and a gap in the data would count in windows read from raw counters but in
    no recorded window. Then the rules of file ``backfill`` are evaluated every ``step_s`` from
    ``start`` to ``end`` (seconds since the epoch) against a Prometheus over the raw blocks,
    and their blocks join ``data``. ``prometheus`` is the server binary (None: on ``PATH``).
    """
    history = data.parent / "history"
    done = History()
    done.timings["write OpenMetrics"] = done.timings["create-blocks-from openmetrics"] = 0.0
    scraper = Prometheus(config, data, log, binary=prometheus)
    scraper.start()
    try:
        for i in range(chunks):
            clock = time.monotonic()
            om = data.parent / "history.om"
            done.samples += write_chunk(om, i)
            done.timings["write OpenMetrics"] += time.monotonic() - clock
            clock = time.monotonic()
            # 162h blocks: one block for the whole history instead of one per 2h (hidden flag).
            run_checked(
                [
                    promtool,
                    "tsdb",
                    "create-blocks-from",
                    "openmetrics",
                    "-q",
                    "--max-block-duration=162h",
                    str(om),
                    str(history),
                ],
                "create-blocks-from openmetrics",
            )
            om.unlink()
            done.timings["create-blocks-from openmetrics"] += time.monotonic() - clock
        done.peak_import_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    finally:
        scraper.stop()
    _move_blocks(history, data)

    clock = time.monotonic()
    out = data.parent / "backfill"
    with Prometheus(config, data, log, binary=prometheus) as prom:
        run_checked(
            [
                promtool,
                "tsdb",
                "create-blocks-from",
                "rules",
                "-q",
                f"--url={prom.url}",
                f"--start={start}",
                f"--end={end}",
                f"--eval-interval={step_s}s",
                f"--output-dir={out}",
                str(backfill),
            ],
            "create-blocks-from rules",
        )
    _move_blocks(out, data)
    done.timings["create-blocks-from rules (backfill)"] = time.monotonic() - clock
    return done


def extend_back(
    *,
    config: Path,
    data: Path,
    log: Path,
    records: set[str],
    at: int,
    average_s: int,
    start: int,
    end: int,
    step_s: int,
    promtool: str = "promtool",
    prometheus: str | None = None,
    queries: dict[str, str] | None = None,
) -> int:
    """Write every series of ``records`` over ``start`` … ``end`` (seconds since the epoch),
    every ``step_s``, at its average over the ``average_s`` before ``at``, as blocks in
    ``data``; return the samples written. ``queries`` (record → PromQL) gives a record's
    value by another query instead (its result's labels, named ``record``): a record that is
    not yet there, e.g. hourly tiles written from the average of what they sum.

    For a steady scenario, whose recorded series are constant but for the rounding of the
    counters (averaged out): windows longer than the raw history (a 30-day SLO window) then
    read a full window of recorded samples, as on a server that has run that long, without
    importing (and backfilling from) that much raw history.
    """
    result = []
    with Prometheus(config, data, log, binary=prometheus) as prom:
        for record in sorted(records):
            query = (queries or {}).get(record) or f"avg_over_time({record}[{average_s}s])"
            found = prom.api("query", query=query, time=str(at))["result"]
            if not found:
                raise RuntimeError(f"no series of {record} before {at}")
            result += [({**r["metric"], "__name__": record}, r["value"][1]) for r in found]
    om = data.parent / "recorded.om"
    stamps = range(start, end + 1, step_s)
    with om.open("w", encoding="utf-8") as out:
        for labels, value in result:
            name = labels.pop("__name__")
            inner = ",".join(f"{k}={json.dumps(v)}" for k, v in sorted(labels.items()))
            out.write("".join(f"{name}{{{inner}}} {value} {t}\n" for t in stamps))
        out.write("# EOF\n")
    history = data.parent / "recorded"
    run_checked(
        [
            promtool,
            "tsdb",
            "create-blocks-from",
            "openmetrics",
            "-q",
            "--max-block-duration=162h",
            str(om),
            str(history),
        ],
        "create-blocks-from openmetrics (recorded series)",
    )
    om.unlink()
    _move_blocks(history, data)
    return len(result) * len(stamps)


def _move_blocks(source: Path, data: Path) -> None:
    for block in source.iterdir():
        shutil.move(str(block), data / block.name)


def scrape_config(
    job: str,
    port: int,
    rule_files: Sequence[Path],
    scrape_s: int,
    interval_s: int,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Prometheus configuration: scrape 127.0.0.1:``port`` every ``scrape_s`` keeping the
    exposed labels (and ``labels`` on each series), evaluate ``rule_files`` every
    ``interval_s``."""
    target: dict[str, Any] = {"targets": [f"127.0.0.1:{port}"]}
    if labels:
        target["labels"] = labels
    return {
        "global": {"scrape_interval": f"{scrape_s}s", "evaluation_interval": f"{interval_s}s"},
        "rule_files": [str(p) for p in rule_files],
        "scrape_configs": [{"job_name": job, "honor_labels": True, "static_configs": [target]}],
    }
