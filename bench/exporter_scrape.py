"""Scrape latency and memory of the NVML exporter on the scripted 8-GPU fake.

Measures, and prints as a Markdown table with the command used:

1. **collector time**: ``NvmlCollector.collect()`` fully consumed, in process (no HTTP);
2. **HTTP, 1 scraper**: ``GET /metrics`` against ``python -m nvml_exporter --backend fake``
   run as a subprocess, one keep-alive connection; the collector time of each of these
   scrapes is read back from ``gpu_exporter_scrape_duration_seconds`` in the response;
3. **HTTP, N concurrent scrapers** (default 4), each on its own connection;
4. **HTTP, 1 scraper, while 300 connections are held open**: 300 keep-alive
   connections that made one request and stay idle, then 300 that sent half a request and
   stay silent (both well inside the idle and header timeouts), each on its own socket;
5. **peak RSS** of the exporter subprocess (``VmHWM`` in ``/proc/<pid>/status``), after all
   scrapes, and its RSS while the 300 connections are held.

Targets: p99 collector time <= 5 ms, RSS <= 40 MB.

Usage::

    .venv/bin/python bench/exporter_scrape.py [--requests 2000] [--concurrency 4] [--held 300]
"""

from __future__ import annotations

import argparse
import datetime
import http.client
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from nvml_exporter.collector import NvmlCollector
from nvml_exporter.fake import default_fake

DURATION = re.compile(rb"^gpu_exporter_scrape_duration_seconds ([0-9.e+-]+)$", re.M)


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0-1) of ``values``, nearest-rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def row(name: str, seconds: list[float]) -> str:
    ms = [s * 1000 for s in seconds]
    return (
        f"| {name} | {len(ms)} | {statistics.median(ms):.3f} | {percentile(ms, 0.99):.3f} "
        f"| {max(ms):.3f} |"
    )


def bench_collector(n: int) -> tuple[list[float], list[float]]:
    """Wall time and CPU time (this thread) of ``n`` full ``collect()`` calls, in seconds."""
    fake = default_fake()
    collector = NvmlCollector(fake)
    assert collector.initialise()
    for _ in range(min(100, n)):
        list(collector.collect())
    wall, cpu = [], []
    for _ in range(n):
        start, start_cpu = time.perf_counter(), time.thread_time()
        list(collector.collect())
        cpu.append(time.thread_time() - start_cpu)
        wall.append(time.perf_counter() - start)
    collector.shutdown()
    return wall, cpu


class Server:
    """The exporter with the fake backend, as a subprocess on 127.0.0.1 (ephemeral port)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "nvml_exporter",
                "--backend",
                "fake",
                "--listen-address",
                "127.0.0.1:0",
                "--log-level",
                "info",
            ],
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stderr is not None
        self.port = 0
        for line in self.proc.stderr:
            match = re.search(r"listening on http://127\.0\.0\.1:(\d+)/", line)
            if match:
                self.port = int(match.group(1))
                break
        if not self.port:
            raise SystemExit("exporter did not start")
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()
        deadline = time.monotonic() + 30
        while self.get(http.client.HTTPConnection("127.0.0.1", self.port))[0] != 200:
            if time.monotonic() > deadline:
                raise SystemExit("exporter never became ready")
            time.sleep(0.05)

    def get(self, conn: http.client.HTTPConnection, path: str = "/readyz") -> tuple[int, bytes]:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read()

    def peak_rss_bytes(self, field: str = "VmHWM") -> int:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        match = re.search(rf"^{field}:\s+(\d+) kB", status, re.M)
        return int(match.group(1)) * 1024 if match else -1

    def hold(self, count: int, *, half_sent: bool) -> list[socket.socket]:
        """Open ``count`` connections: idle keep-alive ones after one ``/healthz``, or ones
        that sent half a request line and headers."""
        held = []
        for _ in range(count):
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
            if half_sent:
                sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: bench\r\n")
            else:
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: bench\r\n\r\n")
                response = b""
                while not response.endswith(b"ok\n"):
                    response += sock.recv(4096)
            held.append(sock)
        return held

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


def scrape_loop(server: Server, n: int, http_times: list[float], collect_times: list[float]):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    for _ in range(n):
        start = time.perf_counter()
        status, body = server.get(conn, "/metrics")
        http_times.append(time.perf_counter() - start)
        assert status == 200
        match = DURATION.search(body)
        assert match, "no gpu_exporter_scrape_duration_seconds in the response"
        collect_times.append(float(match.group(1)))
    conn.close()


def bench_http(server: Server, n: int, concurrency: int) -> tuple[list[float], list[float]]:
    http_times: list[float] = []
    collect_times: list[float] = []
    threads = [
        threading.Thread(
            target=scrape_loop, args=(server, n // concurrency, http_times, collect_times)
        )
        for _ in range(concurrency)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return http_times, collect_times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000, help="scrapes per measurement")
    parser.add_argument("--concurrency", type=int, default=4, help="concurrent scrapers")
    parser.add_argument("--held", type=int, default=300, help="connections held open")
    args = parser.parse_args()
    command = "python bench/exporter_scrape.py " + " ".join(sys.argv[1:])

    load_before = os.getloadavg()
    collector, collector_cpu = bench_collector(args.requests)
    server = Server()
    try:
        rss_start = server.peak_rss_bytes()
        bench_http(server, min(100, args.requests), 1)  # warm-up
        http_1, coll_1 = bench_http(server, args.requests, 1)
        http_n, coll_n = bench_http(server, args.requests, args.concurrency)
        held_results = {}
        for half_sent in (False, True):
            held = server.hold(args.held, half_sent=half_sent)
            # within the 10 s header timeout for the half-sent ones
            held_results[half_sent] = (
                *bench_http(server, min(500, args.requests), 1),
                server.peak_rss_bytes("VmRSS"),
            )
            for sock in held:
                sock.close()
        rss_peak = server.peak_rss_bytes()
    finally:
        server.stop()

    n = args.concurrency
    print(f"date: {datetime.date.today().isoformat()}")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs visible, "
        f"Python {platform.python_version()}, {platform.system()} {platform.release()}"
    )
    print(
        "load average (1/5/15 min) before: "
        + "/".join(f"{x:.2f}" for x in load_before)
        + ", after: "
        + "/".join(f"{x:.2f}" for x in os.getloadavg())
    )
    print(f"command: {command.strip()}")
    print()
    print("| measurement | scrapes | p50 ms | p99 ms | max ms |")
    print("|---|---:|---:|---:|---:|")
    print(row("collector time, in process (collect())", collector))
    print(row("collector CPU time, in process (thread_time)", collector_cpu))
    print(
        row("collector time, HTTP, 1 scraper (from gpu_exporter_scrape_duration_seconds)", coll_1)
    )
    print(row("HTTP GET /metrics, 1 scraper", http_1))
    print(row(f"collector time, HTTP, {n} concurrent scrapers", coll_n))
    print(row(f"HTTP GET /metrics, {n} concurrent scrapers", http_n))
    for half_sent, (http_h, _, _) in held_results.items():
        kind = "half-sent requests" if half_sent else "idle keep-alive connections"
        print(row(f"HTTP GET /metrics, 1 scraper, {args.held} {kind} held", http_h))
    print()
    for half_sent, (_, _, rss) in held_results.items():
        kind = "half-sent requests" if half_sent else "idle keep-alive connections"
        print(f"exporter RSS while {args.held} {kind} are held: {rss / 2**20:.1f} MiB")
    print(f"exporter RSS after start: {rss_start / 2**20:.1f} MiB")
    print(f"exporter peak RSS (VmHWM) after all scrapes: {rss_peak / 2**20:.1f} MiB")
    # Wall time includes preemption by other processes on a shared machine; CPU time does not.
    p99 = percentile(collector, 0.99) * 1000
    print()
    print(
        f"targets: p99 collector time (wall) <= 5 ms: {'met' if p99 <= 5 else 'MISSED'} "
        f"({p99:.3f} ms; CPU p99 {percentile(collector_cpu, 0.99) * 1000:.3f} ms); "
        f"RSS <= 40 MB: {'met' if rss_peak <= 40e6 else 'MISSED'} ({rss_peak / 1e6:.1f} MB)"
    )


if __name__ == "__main__":
    main()
