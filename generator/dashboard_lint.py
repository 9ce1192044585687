"""Lint Grafana dashboard JSON models (the ones obsgen generates, or any schemaVersion ≥ 27).

More: docs/lint.md, "Dashboard checks".
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from generator import promtool
from generator.errors import Diagnostic
from generator.yamlio import dump_yaml

# Grafana's built-in interval variables, replaced by a fixed range for promtool.
_INTERVALS = ("__rate_interval", "__interval", "__range")
_VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_RANGE = re.compile(r"\[([^\]\[]*)\]")
_RULE_INDEX = re.compile(r"rule (\d+)")


def _panels(dashboard: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every panel, including those nested in collapsed rows, with a readable path."""
    for i, panel in enumerate(dashboard.get("panels", [])):
        path = f'panels[{i}] "{panel.get("title", "")}"'
        yield path, panel
        for j, inner in enumerate(panel.get("panels", []) or []):
            yield f'{path}.panels[{j}] "{inner.get("title", "")}"', inner


def _targets(dashboard: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, panel in _panels(dashboard):
        for k, target in enumerate(panel.get("targets", []) or []):
            yield f"{path}.targets[{k}]", target


def check_ids(file: str, dashboard: Mapping[str, Any]) -> list[Diagnostic]:
    """Panel ids unique, or null on every panel."""
    ids = [(path, p.get("id")) for path, p in _panels(dashboard)]
    if all(i is None for _, i in ids):
        return []
    found: list[Diagnostic] = []
    seen: dict[Any, str] = {}
    for path, panel_id in ids:
        if panel_id is None:
            found.append(Diagnostic(file, path, "panel-id: null id mixed with numeric ids"))
        elif panel_id in seen:
            found.append(
                Diagnostic(file, path, f"panel-id: id {panel_id} already used by {seen[panel_id]}")
            )
        else:
            seen[panel_id] = path
    return found


def check_grid(file: str, dashboard: Mapping[str, Any]) -> list[Diagnostic]:
    """Every top-level panel has a ``gridPos``; no two rectangles overlap."""
    found: list[Diagnostic] = []
    boxes: list[tuple[str, int, int, int, int]] = []
    for i, panel in enumerate(dashboard.get("panels", [])):
        path = f'panels[{i}] "{panel.get("title", "")}"'
        pos = panel.get("gridPos")
        if not isinstance(pos, dict) or not all(k in pos for k in ("x", "y", "w", "h")):
            found.append(Diagnostic(file, path, "grid-overlap: no gridPos {x, y, w, h}"))
            continue
        x, y, w, h = (int(pos[k]) for k in ("x", "y", "w", "h"))
        if x < 0 or w <= 0 or h <= 0 or x + w > 24:
            found.append(
                Diagnostic(file, path, f"grid-overlap: gridPos {pos} is outside the 24-column grid")
            )
        for other, ox, oy, ow, oh in boxes:
            if x < ox + ow and ox < x + w and y < oy + oh and oy < y + h:
                found.append(Diagnostic(file, path, f"grid-overlap: gridPos overlaps {other}"))
        boxes.append((path, x, y, w, h))
    return found


def check_units_and_datasources(file: str, dashboard: Mapping[str, Any]) -> list[Diagnostic]:
    """A unit and a datasource on every non-row panel, a datasource on every target."""
    found: list[Diagnostic] = []
    for path, panel in _panels(dashboard):
        if panel.get("type") == "row":
            continue
        unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit")
        if not unit:
            found.append(Diagnostic(file, path, "unit: fieldConfig.defaults.unit is not set"))
        if not panel.get("datasource"):
            found.append(Diagnostic(file, path, "datasource: panel has no datasource"))
        for k, target in enumerate(panel.get("targets", []) or []):
            if not target.get("datasource"):
                found.append(
                    Diagnostic(file, f"{path}.targets[{k}]", "datasource: target has no datasource")
                )
    return found


def _without_strings(expr: str) -> str:
    return _STRING.sub('""', expr)


def check_rate_interval(file: str, dashboard: Mapping[str, Any]) -> list[Diagnostic]:
    """Every range selector in a target is ``[$__rate_interval]`` (string literals ignored)."""
    found: list[Diagnostic] = []
    for path, target in _targets(dashboard):
        for match in _RANGE.finditer(_without_strings(str(target.get("expr", "")))):
            if match.group(1).strip() not in ("$__rate_interval", "${__rate_interval}"):
                found.append(
                    Diagnostic(
                        file,
                        path,
                        f"rate-interval: range [{match.group(1)}] should be [$__rate_interval]",
                    )
                )
    return found


def _names(text: str) -> set[str]:
    return {next(g for g in m.groups() if g) for m in _VARIABLE.finditer(text)}


def check_variables(file: str, dashboard: Mapping[str, Any]) -> list[Diagnostic]:
    """Every templating variable is referenced by a panel, a target, a link or another variable."""
    variables = dashboard.get("templating", {}).get("list", [])
    found: list[Diagnostic] = []
    rest = json.dumps({k: v for k, v in dashboard.items() if k != "templating"})
    for i, var in enumerate(variables):
        others = json.dumps([v for j, v in enumerate(variables) if j != i])
        if var.get("name") not in _names(rest) | _names(others):
            found.append(
                Diagnostic(
                    file,
                    f"templating.list[{i}]",
                    f"unused-variable: ${var.get('name')} is never used",
                )
            )
    return found


def promql_for_promtool(expr: str) -> str:
    """``expr`` with Grafana variables replaced so promtool can parse it.

    ``$__rate_interval``, ``$__interval`` and ``$__range`` become ``5m``; every other variable
    (``$pod``, ``${namespace}``, ``[[x]]``) becomes ``.*`` (they only appear inside regex
    matchers in obsgen's dashboards).
    """

    def replace(match: re.Match[str]) -> str:
        name = next(g for g in match.groups() if g)
        return "5m" if name in _INTERVALS else ".*"

    return _VARIABLE.sub(replace, expr)


def check_promql(dashboards: Mapping[str, Mapping[str, Any]]) -> list[Diagnostic]:
    """Parse every target expression of every dashboard with one ``promtool check rules`` run.

    Raises:
        ObsgenError: promtool is missing.
    """
    where: list[tuple[str, str]] = []
    rules: list[dict[str, str]] = []
    for file in sorted(dashboards):
        for path, target in _targets(dashboards[file]):
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


def lint_dashboards(
    dashboards: Mapping[str, Mapping[str, Any]], run_promtool: bool = True
) -> list[Diagnostic]:
    """Every finding of every check over ``dashboards`` (file name → parsed JSON), sorted.

    Raises:
        ObsgenError: ``run_promtool`` and promtool is missing.
    """
    found: list[Diagnostic] = []
    for file, dashboard in sorted(dashboards.items()):
        for check in (
            check_ids,
            check_grid,
            check_units_and_datasources,
            check_rate_interval,
            check_variables,
        ):
            found.extend(check(file, dashboard))
    if run_promtool:
        found.extend(check_promql(dashboards))
    return sorted(found)
