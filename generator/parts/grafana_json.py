"""Panels as data, laid out and built with grafanalib, then normalised to modern Grafana JSON.

What is normalised from grafanalib's output, and how it is checked: docs/dashboards.md, "How the
JSON is built".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import grafanalib.core as g
from grafanalib._gen import DashboardEncoder

SCHEMA_VERSION = 39
DATASOURCE: dict[str, str] = {"type": "prometheus", "uid": "${datasource}"}
GRID_WIDTH = 24

# Keys Grafana no longer reads (or grafanalib fills with defaults only): dropped everywhere.
_LEGACY_KEYS = frozenset(
    {
        "rows",
        "span",
        "hideControls",
        "sharedCrosshair",
        "style",
        "gnetId",
        "__inputs",
        "height",
        "minSpan",
        "error",
        "cacheTimeout",
        "editable",
        "maxPerRow",
        "repeatDirection",
        "hideTimeOverride",
        "transparent",
    }
)
_LEGACY_TARGET_KEYS = frozenset({"query", "target", "metric", "step", "intervalFactor", "hide"})
_LEGACY_HEATMAP_KEYS = frozenset(
    {
        "cards",
        "color",
        "dataFormat",
        "heatmap",
        "hideZeroBuckets",
        "highlightCards",
        "legend",
        "reverseYBuckets",
        "tooltip",
        "xAxis",
        "xBucketNumber",
        "xBucketSize",
        "yAxis",
        "yBucketBound",
        "yBucketNumber",
        "yBucketSize",
    }
)


@dataclass(frozen=True)
class Query:
    """One PromQL target: ``expr``, its legend, whether it is an instant table query, and its
    format (``time_series``; ``heatmap`` for bucket series)."""

    expr: str
    legend: str = ""
    instant: bool = False
    fmt: str = "time_series"


@dataclass(frozen=True)
class Step:
    """A threshold step: ``value`` (``None`` for the base step) and its colour."""

    value: float | None
    color: str


@dataclass(frozen=True)
class PanelDef:
    """A panel before layout.

    Attributes:
        title, description: shown in Grafana; the description names the metric read.
        key: stable identity of the panel within its row (``slo/<name>/sli``), from which its
            ``id`` is derived: keep it when the title changes, or bookmarked links break.
        kind: ``timeseries``, ``stat``, ``heatmap`` or ``table``.
        queries: targets, given refIds ``A``, ``B``, … in order.
        unit: Grafana unit id (``s``, ``bytes``, ``percentunit``, ``reqps``, ``suffix:…``).
        runbook: ``(alert name, url)`` of the alert this panel explains.
        steps: thresholds, base step first; drawn as lines on time series.
        width, height: grid cells (24 columns); ``extra``: panel keys merged last.
    """

    title: str
    description: str
    kind: str
    queries: tuple[Query, ...]
    unit: str
    runbook: tuple[str, str]
    key: str
    steps: tuple[Step, ...] = (Step(None, "green"),)
    width: int = 8
    height: int = 8
    extra: dict[str, Any] = field(default_factory=dict)
    overrides: tuple[dict[str, Any], ...] = ()
    decimals: int | None = None
    min_value: float | None = None
    max_value: float | None = None


@dataclass(frozen=True)
class RowDef:
    """A dashboard row: a title and its panels, laid out left to right. ``key`` (default: the
    title) is the row's stable identity; its panels' ids derive from it and their own keys."""

    title: str
    panels: tuple[PanelDef, ...]
    key: str = ""

    @property
    def ident(self) -> str:
        """The row's key, or its title when it has none."""
        return self.key or self.title


# Grafana types panel ids as integers unique within a dashboard (its schema; the old CUE schema
# said uint32). Ids stay below 2**31 so every consumer (int32 included) reads them exactly.
PANEL_ID_LIMIT = 2**31 - 1


def panel_ids(keys: Sequence[str]) -> list[int]:
    """A stable id in ``1 … 2**31 - 1`` for each key: the first 4 bytes of its SHA-256, so a
    panel keeps its id whatever is added or removed around it (viewPanel= links, embedded
    panels and panel-linked alerts stay valid). Two keys whose hashes collide (about one
    dashboard in 10⁶) are told apart by rehashing the later one with a counter.

    Raises:
        ValueError: the same key twice (two panels would claim one identity).
    """
    if len(set(keys)) != len(keys):
        dupes = sorted({k for k in keys if keys.count(k) > 1})
        raise ValueError(f"panel keys must be unique within a dashboard: {dupes}")
    taken: set[int] = set()
    ids = []
    for key in keys:
        salt = 0
        while True:
            seed = key if salt == 0 else f"{key}#{salt}"
            digest = hashlib.sha256(seed.encode("utf-8")).digest()
            candidate = int.from_bytes(digest[:4], "big") % PANEL_ID_LIMIT + 1
            if candidate not in taken:
                break
            salt += 1
        taken.add(candidate)
        ids.append(candidate)
    return ids


def layout_keys(rows: Sequence[RowDef]) -> list[str]:
    """The key of every panel :func:`layout` emits, rows included, in its order."""
    keys = []
    for row in rows:
        if row.panels:
            keys.append(f"row/{row.ident}")
            keys.extend(f"{row.ident}/{p.key}" for p in row.panels)
    return keys


def datasource_variable() -> g.Template:
    """The ``datasource`` variable every panel and target reads (type ``prometheus``)."""
    return g.Template(name="datasource", label="Data source", query="prometheus", type="datasource")


def query_variable(name: str, label: str, query: str) -> g.Template:
    """A multi-value query variable ``name`` over ``query`` (``label_values(…)``), "All" first."""
    # allValue ".*" keeps `label=~"$var"` true for series without the label when "All" is chosen.
    return g.Template(
        name=name,
        label=label,
        query=query,
        dataSource="${datasource}",
        multi=True,
        includeAll=True,
        allValue=".*",
        default="$__all",
        refresh=2,
        sort=1,
    )


def cluster_variable(label: str, series: str) -> g.Template:
    """The ``cluster`` variable: the values of cluster label ``label`` on ``series``."""
    return query_variable("cluster", "Cluster", f"label_values({series}, {label})")


def _thresholds(steps: Sequence[Step]) -> list[g.Threshold]:
    # grafanalib writes index 0 as the base step ("null"); its value is ignored there.
    return [
        g.Threshold(s.color, i, 0.0 if s.value is None else float(s.value))
        for i, s in enumerate(steps)
    ]


def _targets(queries: Sequence[Query]) -> list[g.Target]:
    return [
        g.Target(
            expr=q.expr,
            legendFormat=q.legend,
            refId=chr(ord("A") + i),
            instant=q.instant,
            format="table" if q.instant else q.fmt,
            datasource=DATASOURCE,
        )
        for i, q in enumerate(queries)
    ]


def _grafanalib_panel(p: PanelDef, pos: g.GridPos) -> g.Panel:
    common: dict[str, Any] = {
        "title": p.title,
        "description": p.description,
        "dataSource": DATASOURCE,
        "targets": _targets(p.queries),
        "gridPos": pos,
        "links": [{"title": f"Runbook: {p.runbook[0]}", "url": p.runbook[1], "targetBlank": True}],
    }
    if p.kind == "timeseries":
        return g.TimeSeries(
            **common,
            unit=p.unit,
            thresholds=_thresholds(p.steps),
            thresholdsStyleMode="line" if len(p.steps) > 1 else "off",
            legendDisplayMode="table",
            legendCalcs=["lastNotNull", "max"],
            tooltipMode="multi",
            tooltipSort="desc",
            valueMin=p.min_value,
            valueMax=p.max_value,
            valueDecimals=p.decimals,
        )
    if p.kind == "stat":
        return g.Stat(
            **common,
            format=p.unit,
            thresholds=_thresholds(p.steps),
            reduceCalc="lastNotNull",
            colorMode="background",
            graphMode="area",
            decimals=p.decimals,
        )
    if p.kind == "heatmap":
        return g.Heatmap(**common)
    if p.kind == "table":
        return g.Table(**common, unit=p.unit, thresholds=_thresholds(p.steps))
    raise ValueError(f"unknown panel kind {p.kind!r}")


def layout(rows: Sequence[RowDef]) -> list[g.Panel]:
    """grafanalib panels with explicit, non-overlapping ``gridPos``: each row is a full-width
    row panel (height 1) followed by its panels packed left to right, wrapping at 24 columns."""
    panels: list[g.Panel] = []
    y = 0
    for row in rows:
        if not row.panels:
            continue
        panels.append(g.RowPanel(title=row.title, gridPos=g.GridPos(h=1, w=GRID_WIDTH, x=0, y=y)))
        y += 1
        x = 0
        line_height = 0
        for p in row.panels:
            if x + p.width > GRID_WIDTH:
                y += line_height
                x, line_height = 0, 0
            panels.append(_grafanalib_panel(p, g.GridPos(h=p.height, w=p.width, x=x, y=y)))
            x += p.width
            line_height = max(line_height, p.height)
        y += line_height
    return panels


def _drop_nulls(value: Any) -> Any:
    """``value`` (parsed JSON: dicts, lists, scalars) without null values, empty objects and
    :data:`_LEGACY_KEYS` in any object, at any depth; an object emptied by this stays ``{}``.
    Only containers are walked into (a dashboard has ~150,000 values, most of them scalars)."""
    kind = type(value)
    if kind is dict:
        out = {}
        for key, item in value.items():
            if item is None or key in _LEGACY_KEYS:
                continue
            inner = type(item)
            if inner is dict:
                if item:
                    out[key] = _drop_nulls(item)
            elif inner is list:
                out[key] = _drop_nulls(item)
            elif isinstance(item, dict | list):  # a subclass: walked as its base class
                if item != {}:
                    out[key] = _drop_nulls(item)
            else:
                out[key] = item
        return out
    if kind is list:
        return [_drop_nulls(v) for v in value]
    if isinstance(value, dict | list):  # a subclass: walked as its base class
        return _drop_nulls(dict(value) if isinstance(value, dict) else list(value))
    return value


def _fix_thresholds(defaults: dict[str, Any]) -> None:
    thresholds = defaults.get("thresholds")
    steps = thresholds.get("steps") if isinstance(thresholds, dict) else None
    if not isinstance(steps, list) or not steps:
        defaults["thresholds"] = {"mode": "absolute", "steps": [{"color": "green", "value": None}]}
        return
    defaults["thresholds"] = {
        "mode": "absolute",
        "steps": [
            {"color": s["color"], "value": None if i == 0 else s["value"]}
            for i, s in enumerate(steps)
        ],
    }


def _modern_panel(panel: dict[str, Any], source: PanelDef | None, panel_id: int) -> dict[str, Any]:
    panel = _drop_nulls(panel)
    panel["id"] = panel_id
    if panel.get("type") == "row":
        for key in ("targets", "links", "transformations", "fieldConfig", "maxDataPoints"):
            panel.pop(key, None)
        return panel
    if source is None:
        raise ValueError(f"panel {panel.get('title')!r} has no PanelDef")
    panel["datasource"] = dict(DATASOURCE)
    panel.pop("repeat", None)
    panel.pop("interval", None)
    panel["targets"] = [
        {k: v for k, v in t.items() if k not in _LEGACY_TARGET_KEYS and v != ""}
        | {"datasource": dict(DATASOURCE)}
        for t in panel.get("targets", [])
    ]
    field_config = panel.setdefault("fieldConfig", {})
    defaults = field_config.setdefault("defaults", {})
    field_config["overrides"] = json.loads(json.dumps(list(source.overrides)))
    defaults["unit"] = source.unit
    if source.decimals is not None:
        defaults["decimals"] = source.decimals
    _fix_thresholds(defaults)
    if panel["type"] == "timeseries":
        panel["options"]["legend"]["showLegend"] = True
    if panel["type"] == "stat":
        defaults.pop("noValue", None)
        defaults["color"] = {"mode": "thresholds"}
        panel["options"]["reduceOptions"]["fields"] = ""
    if panel["type"] == "heatmap":
        for key in _LEGACY_HEATMAP_KEYS:
            panel.pop(key, None)
        defaults["custom"] = {"scaleDistribution": {"type": "linear"}}
        panel["options"] = {
            "calculate": False,
            "cellGap": 1,
            "color": {
                "mode": "scheme",
                "scheme": "Oranges",
                "fill": "dark-orange",
                "scale": "exponential",
                "exponent": 0.5,
                "steps": 64,
                "reverse": False,
            },
            "filterValues": {"le": 1e-9},
            "legend": {"show": True},
            "rowsFrame": {"layout": "le"},
            "tooltip": {"mode": "single", "yHistogram": True},
            "yAxis": {"axisPlacement": "left", "unit": source.unit},
            "cellValues": {"unit": "reqps"},
        }
    if panel["type"] == "table":
        panel.pop("columns", None)
        panel.pop("mappings", None)
        panel.pop("fontSize", None)
        panel.pop("color", None)
    panel.update(json.loads(json.dumps(source.extra)))
    return panel


def to_modern(dashboard: g.Dashboard, rows: Sequence[RowDef], generated_by: str) -> dict[str, Any]:
    """Serialise a grafanalib dashboard and normalise it to Grafana ``schemaVersion`` 39.

    Args:
        dashboard: built with ``layout(rows)`` as its panels.
        rows: the rows it was laid out from (their panel definitions and keys).
        generated_by: the "generated, do not edit" sentence, written as the first key
            (``description``) so the writer's stale-file check finds it in the first bytes.

    Returns:
        The dashboard as JSON-ready dict, keys ordered for stable output. It has no
        dashboard ``id`` (that is the database key of one Grafana instance; ``uid`` names it).

    Raises:
        ValueError: two panels share a key.
    """
    raw = json.loads(json.dumps(dashboard.to_json_data(), cls=DashboardEncoder))
    remaining = [p for row in rows for p in row.panels]
    ids = iter(panel_ids(layout_keys(rows)))
    panels = []
    for panel in raw.get("panels", []):
        source = None if panel.get("type") == "row" else remaining.pop(0)
        panels.append(_modern_panel(panel, source, next(ids)))
    templating = []
    for var in raw.get("templating", {}).get("list", []):
        var = _drop_nulls(var)
        for key in ("useTags", "auto", "auto_min", "auto_count", "tags"):
            var.pop(key, None)
        var.get("current", {}).pop("tags", None)
        if "value" not in var.get("current", {}):
            var.pop("current", None)  # Grafana picks the default; no value is no valid option
        if var["type"] == "datasource":
            var.pop("datasource", None)
        else:
            var["datasource"] = dict(DATASOURCE)
            var["query"] = {"query": var["query"], "refId": "PrometheusVariableQueryEditor"}
        templating.append(var)
    # The panels and variables are normalised above, one by one.
    body = _drop_nulls({k: v for k, v in raw.items() if k not in ("panels", "templating")})
    timepicker = body.get("timepicker", {})
    timepicker.pop("time_options", None)
    timepicker.pop("nowDelay", None)
    # "editable" is dropped from panels as legacy, but on the dashboard it still counts.
    body["editable"] = bool(raw.get("editable", True))
    body.pop("id", None)
    out: dict[str, Any] = {"description": generated_by}
    for key in sorted({*body, "panels", "templating", "schemaVersion"} - {"description"}):
        if key == "panels":
            out["panels"] = panels
        elif key == "templating":
            out["templating"] = {"list": templating}
        elif key == "schemaVersion":
            out["schemaVersion"] = SCHEMA_VERSION
        else:
            out[key] = body[key]
    return out
