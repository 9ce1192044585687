"""Grafana dashboard JSON as lint input: the dashboard checks and the PromQL checks.

The dashboard checks are ordinary checks (``generator/lint/checks/dashboard_*.py``);
:func:`lint_dashboards` runs them on dashboards held in memory. More: docs/lint.md,
"Dashboards as lint input".
"""

from __future__ import annotations

import bisect
import json
import re
import tempfile
from collections.abc import Iterator, Mapping
from json import decoder, scanner
from pathlib import Path
from typing import Any

from generator import promtool
from generator.errors import Diagnostic
from generator.lint import limits
from generator.lint import promql as q
from generator.lint.checks import CHECKS
from generator.lint.checks import dashboards as grafana
from generator.lint.model import Rule, RuleGroup, SourceFile
from generator.lint.registry import DashboardFunc
from generator.yamlio import dump_yaml

DASHBOARD_SUFFIXES = (".json",)
QUERY = "query"
# (check id, function) of every dashboard check, in registry order.
DASHBOARD_CHECKS: tuple[tuple[str, DashboardFunc], ...] = tuple(
    (c.id, c.dashboard_func) for c in CHECKS if c.dashboard_func is not None
)
# What a dashboard check raises on a model of the wrong shape (reported as ``rule-shape``).
_SHAPE_ERRORS = (TypeError, ValueError, AttributeError, KeyError)
_VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)(?::\w+)?\]\]")
_BUILTIN_NUMBERS = {"__range_s": "3600", "__range_ms": "3600000", "__interval_ms": "60000"}
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*$")


# The pure-Python scanner calls back `parse_object`, so objects' offsets can be recorded
# (the C scanner cannot be hooked). Both are undocumented but stable parts of `json`.
_JSON_OBJECT: Any = getattr(decoder, "JSONObject")  # noqa: B009
_PY_SCANNER: Any = getattr(scanner, "py_make_scanner")  # noqa: B009


class _Positions(json.JSONDecoder):
    """A JSON decoder that remembers where each object starts (character offsets)."""

    def __init__(self) -> None:
        super().__init__()
        self.starts: dict[int, int] = {}
        self.objects: list[Any] = []  # keeps ids unique while the offsets are used

        def parse_object(state: tuple[str, int], *args: Any) -> tuple[Any, int]:
            value, end = _JSON_OBJECT(state, *args)
            self.starts[id(value)] = state[1] - 1
            self.objects.append(value)
            return value, end

        self.parse_object = parse_object  # type: ignore[assignment]
        self.scan_once = _PY_SCANNER(self)


def _name(match: re.Match[str]) -> str:
    return next(group for group in match.groups() if group)


def grafana_to_promql(expr: str, scrape_interval: float) -> str:
    """``expr`` with Grafana's variables replaced so it parses as PromQL (module doc)."""
    interval = q.fmt_seconds(4 * scrape_interval)
    out: list[str] = []
    last = 0
    for string in grafana.STRING.finditer(expr):
        out.append(_outside(expr[last : string.start()], "".join(out), interval))
        literal = string.group(0)
        if _VARIABLE.search(literal):
            literal = _VARIABLE.sub(".*", literal)
            joined = "".join(out).rstrip()
            if joined.endswith("!="):
                out[-1] = out[-1].rstrip()[:-2] + "!~"
            elif joined.endswith("=") and not joined.endswith(("=~", "==", "!=", "<=", ">=")):
                out[-1] = out[-1].rstrip()[:-1] + "=~"
        out.append(literal)
        last = string.end()
    out.append(_outside(expr[last:], "".join(out), interval))
    return "".join(out)


def _outside(text: str, before: str, interval: str) -> str:
    """Variables outside string literals, by what the text around them expects."""

    def replace(match: re.Match[str]) -> str:
        name = _name(match)
        if name in ("__rate_interval", "__interval"):
            return interval
        if name == "__range":
            return "1h"
        if name in _BUILTIN_NUMBERS:
            return _BUILTIN_NUMBERS[name]
        context = before + text[: match.start()]
        if context.count("[") > context.count("]"):
            return interval
        if _GROUPING.search(context):
            return "grafana_variable"
        if text[match.end() :].lstrip().startswith(("{", "[")):
            return "grafana_variable"  # a metric name
        return "1"

    return _VARIABLE.sub(replace, text)


class _Lines:
    def __init__(self, text: str) -> None:
        self.breaks = [i for i, char in enumerate(text) if char == "\n"]

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self.breaks, offset - 1) + 1 if offset >= 0 else 0


def _dashboard(doc: Any) -> dict[str, Any] | None:
    """The dashboard model in ``doc`` (also inside an API export), else ``None``."""
    if isinstance(doc, dict) and isinstance(doc.get("dashboard"), dict):
        doc = doc["dashboard"]
    if isinstance(doc, dict) and isinstance(doc.get("panels"), list):
        return doc
    return None


def _panels(dashboard: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for i, panel in enumerate(dashboard.get("panels", [])):
        if not isinstance(panel, dict):
            continue
        path = f'panels[{i}] "{panel.get("title", "")}"'
        yield path, panel
        inner = panel.get("panels")
        for j, sub in enumerate(inner if isinstance(inner, list) else []):
            if isinstance(sub, dict):
                yield f'{path}.panels[{j}] "{sub.get("title", "")}"', sub


def _resolve(dashboard: Mapping[str, Any], path: str) -> Any:
    """The object a dashboard check's path names (``panels[2] "T".targets[0]``), else ``None``."""
    node: Any = dashboard
    if path.startswith("templating."):
        node = dashboard.get("templating")
    for key, index in re.findall(r'(\w+)\[(\d+)\](?: "(?:[^"\\]|\\.)*")?', path):
        container = node.get(key) if isinstance(node, dict) else None
        if not isinstance(container, list) or int(index) >= len(container):
            return None
        node = container[int(index)]
    return node


class DashboardFile:
    """One dashboard read for lint: its queries as rules and its dashboard findings.

    Attributes:
        source: the file, with one group ``dashboard`` holding a ``query`` rule per target.
        raw_group: that group as a plain rule file group, for promtool.
        findings: ``(check id, line, message, where)`` of the dashboard checks.
    """

    def __init__(self, text: str, path: str, display: str, scrape_interval: float) -> None:
        limits.check_json_nesting(text)
        positions = _Positions()
        document = positions.decode(text)
        dashboard = _dashboard(document)
        if dashboard is None:
            raise ValueError("not a Grafana dashboard (no `panels` list)")
        lines = _Lines(text)

        def line_of(value: Any) -> int:
            return lines.line(positions.starts.get(id(value), -1))

        rules: list[Rule] = []
        raw_rules: list[dict[str, str]] = []
        for panel_path, panel in _panels(dashboard):
            targets = panel.get("targets")
            for k, target in enumerate(targets if isinstance(targets, list) else []):
                expr = target.get("expr") if isinstance(target, dict) else None
                if not isinstance(expr, str) or not expr.strip():
                    continue
                query = grafana_to_promql(expr, scrape_interval)
                line = line_of(target) or line_of(panel)
                rules.append(
                    Rule(
                        file=display,
                        group="dashboard",
                        group_interval=None,
                        index=len(rules) + 1,
                        kind=QUERY,
                        name=f"{panel_path}.targets[{k}]",
                        expr=query,
                        labels={},
                        annotations={},
                        for_=None,
                        line=line,
                        end_line=line,
                        key_lines={"expr": line},
                    )
                )
                raw_rules.append({"record": f"dashboard:query_{len(raw_rules)}", "expr": query})
        self.raw_group = {"name": "dashboard", "rules": raw_rules}
        group = RuleGroup("dashboard", 1, self.raw_group, tuple(rules))
        self.source = SourceFile(path, display, "dashboard", (group,))
        self.findings: list[tuple[str, int, str, str]] = []
        for check_id, check in DASHBOARD_CHECKS:
            try:
                hits = list(check(dashboard))
            except _SHAPE_ERRORS as err:
                self.findings.append(("rule-shape", 0, f"dashboard: cannot check: {err}", ""))
                continue
            for hit in hits:
                line = line_of(_resolve(dashboard, hit.path))
                where = f" ({hit.path})" if hit.path else ""
                self.findings.append((check_id, line, hit.message + where, hit.path))


def lint_dashboards(
    dashboards: Mapping[str, Mapping[str, Any]], run_promtool: bool = True
) -> list[Diagnostic]:
    """Every dashboard check's findings over ``dashboards`` (file name → parsed JSON model,
    held in memory: generated ones), as ``<check id>: <message>`` at the panel's path, and
    with ``run_promtool`` every target parsed by promtool (``promql: …``); sorted.

    Raises:
        ObsgenError: ``run_promtool`` and promtool is missing.
    """
    found: list[Diagnostic] = []
    for file, dashboard in sorted(dashboards.items()):
        for check_id, check in DASHBOARD_CHECKS:
            for hit in check(dashboard):
                found.append(Diagnostic(file, hit.path, f"{check_id}: {hit.message}"))
    if run_promtool:
        found.extend(check_promql(dashboards))
    return sorted(found)


def promql_for_promtool(expr: str) -> str:
    """``expr`` with Grafana variables replaced so promtool can parse it.

    ``$__rate_interval``, ``$__interval`` and ``$__range`` become ``5m``; every other variable
    (``$pod``, ``${namespace}``, ``[[x]]``) becomes ``.*`` (they only appear inside regex
    matchers in obsgen's dashboards).
    """

    def replace(match: re.Match[str]) -> str:
        name = next(g for g in match.groups() if g)
        return "5m" if name in ("__rate_interval", "__interval", "__range") else ".*"

    return grafana.VARIABLE.sub(replace, expr)


_RULE_INDEX = re.compile(r"rule (\d+)")


def check_promql(dashboards: Mapping[str, Mapping[str, Any]]) -> list[Diagnostic]:
    """Parse every target expression of every dashboard with one ``promtool check rules`` run.

    Raises:
        ObsgenError: promtool is missing.
    """
    where: list[tuple[str, str]] = []
    rules: list[dict[str, str]] = []
    for file in sorted(dashboards):
        for path, target in grafana.targets(dashboards[file]):
            expr = str(target.get("expr", "")).strip()
            if not expr:
                continue
            where.append((file, path))
            rules.append(
                {"record": f"dashboard_lint:query_{len(rules)}", "expr": promql_for_promtool(expr)}
            )
    if not rules:
        return []
    with tempfile.TemporaryDirectory(prefix="obsgen-dashboard-lint-") as tmp:
        rule_file = Path(tmp) / "dashboard-queries.rules.yaml"
        rule_file.write_text(
            dump_yaml({"groups": [{"name": "dashboard-queries", "rules": rules}]}),
            encoding="utf-8",
        )
        result = promtool.check_rules([rule_file], ["dashboard queries"])
    found: list[Diagnostic] = []
    for diag in result.diagnostics:
        match = _RULE_INDEX.search(diag.message)
        if match and 0 < int(match.group(1)) <= len(where):
            file, path = where[int(match.group(1)) - 1]
            found.append(Diagnostic(file, path, f"promql: {diag.message}"))
        else:
            found.append(Diagnostic(diag.file, diag.path, f"promql: {diag.message}"))
    return found
