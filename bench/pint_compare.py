"""`obsgen lint` beside the real pint, finding by finding (shared rule corpus, lint fixtures).

Usage: ``.venv/bin/python bench/pint_compare.py [--corpus DIR] [--no-live] [--out FILE]``.
pint runs ``--offline`` and against a real Prometheus 3 on 127.0.0.1 scraping synthetic series
of every scraped name the rules read and evaluating the rules (a finding only that run makes
is ``live``); PrometheusRule files reach pint as plain rule files, line for line. Each pint
finding is paired with an equivalent obsgen finding on the same rule, else marked out of scope
(docs/lint.md, "Compared with pint") or ``MISSING``. Prints the Markdown tables and writes
them to ``--out`` (default bench/results/pint_compare.md); exits 1 when something is MISSING.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import promql_parser as P  # noqa: E402

from bench._common import Prometheus, command_line, machine, markdown_table  # noqa: E402
from generator.lint import (  # noqa: E402
    LintConfig,
    known,
    lint_paths,
)
from generator.lint import promql as q  # noqa: E402
from generator.lint.loader import load_inputs  # noqa: E402
from generator.lint.names import SeriesNames  # noqa: E402
from generator.lint.regex import literal_set  # noqa: E402

DEFAULT_CORPUS = Path("/work/shared/corpus/rules")
FIXTURES = ROOT / "tests" / "lint" / "data"
SCRAPE_INTERVAL = "30s"  # obsgen lint's default scrapeInterval: both tools judge ranges by it

# pint check -> obsgen checks that report the same mistake (a pair is made on the same rule).
EQUIVALENT: dict[str, frozenset[str]] = {
    "alerts/for": frozenset({"alert-for-value"}),
    "alerts/template": frozenset({"template-label", "alert-value-in-labels"}),
    "alerts/comparison": frozenset({"alert-without-comparison", "impossible-comparison"}),
    "alerts/absent": frozenset({"absent-without-for", "template-label"}),
    "promql/regexp": frozenset({"regex-plain-string", "regex-redundant-anchor"}),
    "promql/impossible": frozenset(
        {"vector-matching", "label-removed", "impossible-comparison", "template-label"}
    ),
    "promql/fragile": frozenset({"fragile-aggregation"}),
    "promql/nan": frozenset({"nan-in-aggregation"}),
    "promql/rate": frozenset(
        {"rate-on-gauge", "range-too-short", "rate-over-aggregated", "histogram-input"}
    ),
    "promql/counter": frozenset(
        {"counter-compared-raw", "bucket-without-rate", "gauge-function-on-counter"}
    ),
    "promql/vector_matching": frozenset({"vector-matching"}),
    "promql/syntax": frozenset({"promql-parse", "promtool"}),
    "promql/features": frozenset({"promql-function-version", "promql-experimental-function"}),
    "rule/duplicate": frozenset({"duplicate-rule"}),
    "rule/dependency": frozenset({"record-missing"}),
    "group/interval": frozenset({"group-interval-too-long"}),
    "yaml/parse": frozenset({"unreadable-input", "rule-shape", "promtool"}),
    "promql/series": frozenset({"record-missing", "histogram-input"}),
}
# Problems of a pint check that none of its equivalent obsgen checks reports (never paired).
NO_EQUIVALENT = (
    ("alerts/template", "use humanize filters"),
    ("promql/regexp", "smelly regexp selector"),
    ("promql/impossible", "redundant label"),
)
# (pint check, start of its problem text, text the rule's expression must hold) -> why obsgen
# does not report it (docs/lint.md, "Compared with pint", gives the full reasons).
OUT_OF_SCOPE: list[tuple[str, str, str, str]] = [
    ("promql/regexp", "smelly regexp selector", "", "label design advice, not a rule error"),
    (
        "promql/regexp",
        "redundant regexp anchors",
        'le=~"^',
        '`le=~"^(?:1|1\\.0)$"` is the documented both-spellings form',
    ),
    ("alerts/template", "use humanize filters", "", "formatting advice for annotation text"),
    (
        "alerts/template",
        "template uses non-existent label",
        "absent(",
        "the `absent()` branch lacking the label can never pass the comparison",
    ),
    (
        "promql/impossible",
        "redundant label",
        "group_left",
        "group_left overwriting a label the many side has changes its value",
    ),
    (
        "promql/fragile",
        "fragile query",
        "topk by (",
        "`topk by (…) (1, …)` keeps one series per group: a de-duplication",
    ),
    (
        "rule/dependency",
        "rule uses metric produced by a recording rule from a different group",
        "",
        "groups run concurrently: a reader sees the previous value, no mistake",
    ),
    ("promql/series", "", "", "whether series exist in your Prometheus now: `obsgen verify`"),
    ("alerts/count", "", "", "how often an alert would have fired on your data"),
    ("query/cost", "", "", "query cost on your data"),
    ("labels/conflict", "", "", "your server's external labels"),
    ("alerts/external_labels", "", "", "your server's external labels"),
    ("promql/range_query", "", "", "your server's retention"),
    ("promql/offset", "", "", "your server's retention"),
    ("rule/link", "", "", "fetches runbook links over the network"),
    (
        "promql/counter",
        "direct counter read",
        "== 0",
        "`x == 0` asks whether anything was counted yet (a state, not a threshold)",
    ),
]


@dataclass(frozen=True)
class PintFinding:
    """One problem pint reported, mapped back to the original file and rule."""

    file: str
    rule: str
    check: str
    problem: str
    severity: str
    mode: str


@dataclass
class Row:
    """One line of the finding-by-finding table."""

    file: str
    rule: str
    pint: str = ""
    obsgen: str = ""
    note: str = ""


def tool(name: str, command: str) -> Path:
    """A pinned tool of scripts/go-tools.tsv, as `make tools` builds it (exits when missing)."""
    base = os.environ.get("OBSGEN_TOOLS_DIR") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "obsgen" / "tools"
    )
    for line in (ROOT / "scripts" / "go-tools.tsv").read_text().splitlines():
        fields = line.split("\t")
        if fields and fields[0] == name and not line.startswith("#"):
            folder = Path(base) / f"{name}-{fields[2]}"
            if (folder / ".built").is_file() and (folder / command).is_file():
                return folder / command
            sys.exit(f"{name} is not built in {folder}: run `make tools`")
    sys.exit(f"{name} is not in scripts/go-tools.tsv")


def rule_files(corpus: Path) -> list[Path]:
    """The corpus's rule files and the lint fixtures, sorted."""
    found = sorted(p for p in corpus.iterdir() if p.suffix in (".yaml", ".yml"))
    return found + sorted(FIXTURES.glob("*.yaml"))


def plain_copy(path: Path, into: Path) -> Path:
    """``path`` as a plain rule file with the same line numbers: a PrometheusRule's header
    lines become comments and its ``spec:`` body is dedented (pint reads only ``groups:``)."""
    lines = path.read_text().splitlines()
    spec = next((i for i, line in enumerate(lines) if line.rstrip() == "spec:"), None)
    if spec is None:
        return path
    head = ["#" for _ in lines[: spec + 1]]
    body = [line[2:] if line.startswith("  ") else line for line in lines[spec + 1 :]]
    out = into / path.name
    out.write_text("\n".join(head + body) + "\n")
    return out


def run_pint(pint: Path, files: list[Path], cwd: Path, config: Path | None) -> list[dict]:
    """pint's JSON report over ``files`` (offline without ``config``)."""
    report = cwd / f"pint-{'live' if config else 'offline'}.json"
    args = [str(pint), "--no-color", "--show-duplicates"]
    args += ["-c", str(config)] if config else ["--offline"]
    args += ["lint", "--min-severity", "info", "--json", str(report), *map(str, files)]
    result = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=600)
    if not report.is_file():
        sys.exit(f"pint wrote no report:\n{result.stderr[-2000:]}")
    found: list[dict] = json.loads(report.read_text() or "[]")
    return found


def rule_spans(
    files: list[Path],
) -> tuple[dict[str, list[tuple[int, int, str]]], dict[tuple[str, str], str]]:
    """Per file: ``(first line, last line, rule name)`` of every rule, as obsgen reads it;
    and each ``(file, rule)``'s expressions (joined)."""
    spans: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
    exprs: dict[tuple[str, str], str] = defaultdict(str)
    for loaded in load_inputs([str(p) for p in files], 30.0).files:
        for rule in loaded.source.rules:
            spans[loaded.source.display].append((rule.line, rule.end_line, rule.name))
            exprs[(loaded.source.display, rule.name)] += rule.expr + "\n"
    return spans, exprs


def rule_at(spans: list[tuple[int, int, str]], line: int) -> str:
    """The rule whose lines hold ``line``, ``""`` for none (the file itself)."""
    for first, last, name in spans:
        if first <= line <= last:
            return name
    return ""


# --- the synthetic series a live Prometheus scrapes


def _selectors(files: list[Path]) -> Iterator[q.Expr]:
    for loaded in load_inputs([str(p) for p in files], 30.0).files:
        for rule in loaded.source.rules:
            try:
                tree = q.parse(rule.expr)
            except ValueError:
                continue
            for node, _ in q.walk(tree):
                if q.selector_name(node) and isinstance(node, P.VectorSelector):
                    yield node


_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")


def exposition(files: list[Path]) -> tuple[str, int]:
    """Prometheus text exposition of every scraped name the rules read, one series per
    selector's matcher values, each also carrying every label the rules group or join by
    (``synthetic``), so the sides of a join meet as on a real server; TYPE lines guessed from
    the name: ``_bucket``/``_count``/``_sum`` histograms, counters by suffix and the presets'
    counter list, gauges otherwise. Returns the text and its number of series."""
    written = set()
    for loaded in load_inputs([str(p) for p in files], 30.0).files:
        written |= {rule.name for rule in loaded.source.rules if rule.kind == "record"}
    names = SeriesNames(written=written)
    label_sets: dict[str, set[tuple[tuple[str, str], ...]]] = defaultdict(set)
    identity = _grouped_labels(files)
    for node in _selectors(files):
        name = q.selector_name(node)
        if names.is_recorded(name) or not _NAME.match(name):
            continue
        labels = dict.fromkeys(identity, "synthetic")
        for matcher in q.matchers(node):
            label = str(matcher.name)
            if label == "__name__" or not _NAME.match(label) or ":" in label:
                continue
            value = _matching_value(matcher)
            if value:
                labels[label] = value
        label_sets[name].add(tuple(sorted(labels.items())))
    histograms: dict[str, set[tuple[tuple[str, str], ...]]] = defaultdict(set)
    for name, sets in label_sets.items():
        if known.histogram(name) is not None:  # a classic histogram's bare name: no series
            histograms[name] |= {tuple(kv for kv in labels if kv[0] != "le") for labels in sets}
        for suffix in ("_bucket", "_count", "_sum"):
            base = name.removesuffix(suffix)
            if name.endswith(suffix) and (
                suffix == "_bucket" or base + "_bucket" in label_sets or base + "_sum" in label_sets
            ):
                for labels in sets:
                    histograms[base].add(tuple(kv for kv in labels if kv[0] != "le"))
    out: list[str] = []
    count = 0
    for base, sets in sorted(histograms.items()):
        out.append(f"# TYPE {base} histogram")
        bounds = sorted(
            {
                value
                for labels in label_sets.get(base + "_bucket", set())
                for key, value in labels
                if key == "le" and value != "+Inf"
            }
            | {"0.1", "1"},
            key=float,
        )
        for labels in sorted(sets):
            text = ",".join(f'{k}="{_escape(v)}"' for k, v in labels)
            sep = "," if text else ""
            for index, bound in enumerate([*bounds, "+Inf"]):
                out.append(f'{base}_bucket{{{text}{sep}le="{bound}"}} {index + 1}')
            out.append(f"{base}_sum{{{text}}} 2")
            out.append(f"{base}_count{{{text}}} {len(bounds) + 1}")
            count += len(bounds) + 3
    done = {f"{base}{suffix}" for base in histograms for suffix in ("_bucket", "_count", "_sum")}
    for name, sets in sorted(label_sets.items()):
        if name in done or name in histograms:
            continue
        kind = "counter" if names.is_counter(name) else "gauge"
        out.append(f"# TYPE {name} {kind}")
        for labels in sorted(sets):
            text = ",".join(f'{k}="{_escape(v)}"' for k, v in labels)
            out.append(f"{name}{{{text}}} {100 if kind == 'counter' else 1}")
            count += 1
    return "\n".join(out) + "\n", count


def _grouped_labels(files: list[Path]) -> list[str]:
    """Every label the rules aggregate (``by``) or join (``on``) by, but none they remove
    anywhere (``without``, ``ignoring``: labels only some series have), nor ``le``,
    ``quantile``, ``job``, ``instance`` (the bounds, and what the scrape sets)."""
    found: set[str] = set()
    removed: set[str] = set()
    for loaded in load_inputs([str(p) for p in files], 30.0).files:
        for rule in loaded.source.rules:
            try:
                tree = q.parse(rule.expr)
            except ValueError:
                continue
            for node, _ in q.walk(tree):
                kind, grouped = q.grouping(node)
                (found if kind == "by" else removed).update(grouped)
                modifier = node.modifier if isinstance(node, P.BinaryExpr) else None
                if modifier is not None and modifier.matching is not None:
                    on = modifier.matching.type == P.LabelModifierType.Include
                    (found if on else removed).update(map(str, modifier.matching.labels))
    skipped = removed | {"le", "quantile", "job", "instance", "__name__"}
    return sorted(label for label in found - skipped if _NAME.match(label) and ":" not in label)


def _matching_value(matcher: P.Matcher) -> str:
    """A label value the matcher accepts (``""``: leave the label out, or none found): the
    ``=`` value, an alternative of a regex, the regex with ``.*``/``.+`` filled in, or a
    value a negative matcher leaves."""
    value = str(matcher.value)
    if matcher.op == P.MatchOp.Equal:
        return value
    if matcher.op == P.MatchOp.NotEqual:
        return "synthetic" if value != "synthetic" and not value else ""
    if matcher.op == P.MatchOp.NotRe:
        candidates = ["synthetic"]
    else:
        options = literal_set(value)
        candidates = sorted(options) if options else []
        candidates.append(re.sub(r"\.\*|\.\+", "x", value.strip("^$")).replace("\\.", "."))
    for candidate in candidates:
        try:
            hit = re.fullmatch(value, candidate) is not None
        except re.error:
            return ""
        if candidate and hit is (matcher.op == P.MatchOp.Re):
            return candidate
    return ""


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def serve(text: str) -> tuple[http.server.ThreadingHTTPServer, int]:
    """Serve ``text`` at ``/metrics`` on 127.0.0.1 (an ephemeral port)."""
    body = text.encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def live_pint(
    pint: Path, prometheus_bin: Path, plain: list[Path], files: list[Path], work: Path
) -> tuple[list[dict], str]:
    """pint's report against a real Prometheus scraping the synthetic series and evaluating
    the rules; also a line saying what was served."""
    text, series = exposition(files)
    server, port = serve(text)
    loadable = [p for p in plain if _loads(p, prometheus_bin)]
    config = work / "prometheus.yml"
    config.write_text(
        json.dumps(
            {
                "global": {"scrape_interval": SCRAPE_INTERVAL, "evaluation_interval": "5s"},
                "rule_files": [str(p) for p in loadable],
                "scrape_configs": [
                    {
                        "job_name": "synthetic",
                        "scrape_interval": "2s",
                        "honor_labels": True,
                        "static_configs": [{"targets": [f"127.0.0.1:{port}"]}],
                    }
                ],
            }
        )
    )
    data = work / "tsdb"
    data.mkdir()
    with Prometheus(config, data, work / "prometheus.log", binary=str(prometheus_bin)) as prom:
        _wait_until_loaded(prom, series)
        pint_config = work / "pint.hcl"
        # The synthetic series are minutes old: look back over them at a fine step.
        pint_config.write_text(
            f'prometheus "live" {{\n  uri = "{prom.url}"\n  timeout = "60s"\n}}\n'
            'check "promql/series" {\n  lookbackRange = "15m"\n  lookbackStep = "10s"\n}\n'
        )
        found = run_pint(pint, plain, work, pint_config)
    server.shutdown()
    served = (
        f"{series} synthetic series of {text.count('# TYPE')} metric families; "
        f"{len(loadable)} of {len(plain)} rule files evaluated"
    )
    return found, served


def _loads(path: Path, prometheus_bin: Path) -> bool:
    """True when Prometheus' promtool accepts the rule file (so the server starts with it)."""
    promtool = prometheus_bin.parent / "promtool"
    result = subprocess.run(
        [str(promtool), "check", "rules", "--lint=none", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return result.returncode == 0


def _wait_until_loaded(prom: Prometheus, series: int, timeout: float = 180) -> None:
    """Wait until every synthetic series is scraped and every rule group has evaluated."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        scraped = prom.api("query", query='scrape_samples_scraped{job="synthetic"}')["result"]
        groups = prom.api("rules")["groups"]
        evaluated = all(not g.get("lastEvaluation", "0001").startswith("0001") for g in groups)
        if scraped and int(float(scraped[0]["value"][1])) >= series and evaluated:
            return
        time.sleep(0.5)
    raise RuntimeError("the synthetic series or the rules did not load in time")


# --- pairing


def pint_findings(
    raw: list[dict],
    originals: dict[str, Path],
    spans: dict[str, list[tuple[int, int, str]]],
    mode: str,
) -> list[PintFinding]:
    found = []
    for item in raw:
        original = originals.get(item["path"], Path(item["path"]))
        display = str(original)
        lines = item.get("lines") or [0]
        found.append(
            PintFinding(
                display,
                rule_at(spans.get(display, []), int(lines[0])),
                item["reporter"],
                item["problem"],
                item["severity"],
                mode,
            )
        )
    return found


def status(finding: PintFinding, expr: str) -> str:
    """Why an unpaired pint finding is not an obsgen finding, or ``MISSING``."""
    for check, start, holds, why in OUT_OF_SCOPE:
        if finding.check == check and finding.problem.startswith(start) and holds in expr:
            return f"out of scope: {why}"
    return "MISSING"


def pair(
    pint: list[PintFinding], obsgen: list[tuple[str, str, str]], exprs: dict[tuple[str, str], str]
) -> tuple[list[Row], Counter[str]]:
    """Rows of the table: each pint finding next to an equivalent obsgen finding of the same
    rule (each used once), then obsgen's remaining findings; and the status counts. A pint
    finding on a rule where an equivalent obsgen finding is already paired (pint repeats a
    mistake per diagnostic, obsgen reports it per operation) is a repeat."""
    left: dict[tuple[str, str], list[str]] = defaultdict(list)
    for file, rule, check in obsgen:
        left[(file, rule)].append(check)
    rows: list[Row] = []
    statuses: Counter[str] = Counter()
    paired: dict[tuple[str, str], set[str]] = defaultdict(set)
    for finding in pint:
        equivalent = EQUIVALENT.get(finding.check, frozenset())
        if any(finding.check == c and finding.problem.startswith(p) for c, p in NO_EQUIVALENT):
            equivalent = frozenset()
        mine = left[(finding.file, finding.rule)]
        match = next((c for c in mine if c in equivalent), None)
        label = f"{finding.check} ({finding.mode}): {finding.problem}"
        if match is not None:
            mine.remove(match)
            rows.append(Row(finding.file, finding.rule, label, match, "both"))
            statuses["both"] += 1
            paired[(finding.file, finding.rule)].add(match)
            continue
        why = status(finding, exprs.get((finding.file, finding.rule), ""))
        if why == "MISSING" and paired[(finding.file, finding.rule)] & equivalent:
            rows.append(Row(finding.file, finding.rule, label, "(above)", "repeat"))
            statuses["repeat"] += 1
        else:
            rows.append(Row(finding.file, finding.rule, label, "—", why))
            statuses[why.split(":")[0]] += 1
    for (file, rule), checks in left.items():
        for check in checks:
            rows.append(Row(file, rule, "—", check, "obsgen only"))
            statuses["obsgen only"] += 1
    rows.sort(key=lambda r: (r.file, r.rule, r.pint == "—", r.pint, r.obsgen))
    return rows, statuses


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--no-live", action="store_true", help="skip the live Prometheus run")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "pint_compare.md")
    args = parser.parse_args(argv)
    pint = tool("pint", "pint")
    prometheus_bin = tool("prometheus3", "prometheus")
    os.environ["PATH"] = f"{prometheus_bin.parent}{os.pathsep}{os.environ.get('PATH', '')}"
    files = rule_files(args.corpus)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pint-compare-") as tmp:
        work = Path(tmp)
        plain_dir = work / "plain"
        plain_dir.mkdir()
        plain = [plain_copy(p, plain_dir) for p in files]
        originals = {str(copy): original for copy, original in zip(plain, files, strict=True)}
        spans, exprs = rule_spans(files)
        offline = pint_findings(run_pint(pint, plain, work, None), originals, spans, "offline")
        served = "not run (--no-live)"
        live: list[PintFinding] = []
        if not args.no_live:
            raw, served = live_pint(pint, prometheus_bin, plain, files, work)
            seen = Counter((f.file, f.rule, f.check, f.problem) for f in offline)
            for finding in pint_findings(raw, originals, spans, "live"):
                key = (finding.file, finding.rule, finding.check, finding.problem)
                if seen[key]:
                    seen[key] -= 1
                else:
                    live.append(finding)
    report = lint_paths([str(p) for p in files], LintConfig(), promtool=True)
    obsgen = [(f.file, f.rule, f.check) for f in report.findings]
    rows, statuses = pair(offline + live, obsgen, exprs)
    elapsed = time.monotonic() - started
    text = _render(files, rows, statuses, offline, live, obsgen, served, elapsed, pint)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n")
    return 1 if statuses["MISSING"] else 0


def _short(path: str) -> str:
    return Path(path).name


def _render(
    files: list[Path],
    rows: list[Row],
    statuses: Counter[str],
    offline: list[PintFinding],
    live: list[PintFinding],
    obsgen: list[tuple[str, str, str]],
    served: str,
    elapsed: float,
    pint: Path,
) -> str:
    version = subprocess.run([str(pint), "version"], capture_output=True, text=True).stdout.strip()
    by_check: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for row in rows:
        if row.pint == "—":
            continue
        check, rest = row.pint.split(" (", 1)
        mode, problem = rest.split("): ", 1)
        by_check[(check, problem)][mode] += 1
        by_check[(check, problem)][row.note if row.note == "both" else row.note.split(":")[0]] += 1
    summary = [
        (
            check,
            problem,
            counts["offline"],
            counts["live"],
            counts["both"],
            counts["repeat"],
            counts["out of scope"],
            counts["MISSING"],
        )
        for (check, problem), counts in sorted(by_check.items())
    ]
    mine = Counter(check for _, _, check in obsgen)
    paired = Counter(row.obsgen for row in rows if row.note == "both")
    obsgen_rows = [(c, n, paired[c], n - paired[c]) for c, n in sorted(mine.items())]
    lines = [
        f"Command: `{command_line()}`. pint {version} (offline, and live against Prometheus 3 "
        f"on 127.0.0.1: {served}); obsgen lint with promtool 3, default config. "
        f"{len(files)} files. {machine()}. {elapsed:.0f} s.",
        "",
        f"pint findings: {len(offline)} offline, {len(live)} more live; obsgen findings: "
        f"{len(obsgen)}. Paired (same rule, equivalent check): {statuses['both']}; pint "
        f"repeating a paired finding: {statuses['repeat']}; pint only, out of scope: "
        f"{statuses['out of scope']}; pint only, MISSING: {statuses['MISSING']}; obsgen only: "
        f"{statuses['obsgen only']}.",
        "",
        "pint's findings by check:",
        "",
        markdown_table(
            [
                "pint check",
                "problem",
                "offline",
                "live",
                "obsgen too",
                "repeat",
                "out of scope",
                "MISSING",
            ],
            summary,
        ),
        "",
        "obsgen's findings by check:",
        "",
        markdown_table(["obsgen check", "findings", "pint too", "obsgen only"], obsgen_rows),
        "",
        "Every finding:",
        "",
        markdown_table(
            ["file", "rule", "pint check (mode): problem", "obsgen check", "status"],
            [(_short(r.file), r.rule or "(file)", r.pint, r.obsgen, r.note) for r in rows],
        ),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
