"""Every generated dashboard against Grafana's own published schema, oldest and newest release.

The schemas are Grafana Labs' JSON Schema form of Grafana's CUE schemas (tests/data/grafana-schema,
README there): the dashboard model, each panel plugin's ``options`` and ``fieldConfig.defaults.
custom``, and the Prometheus query of every target. Where that generated JSON Schema says
something Grafana itself does not do, :data:`ADJUSTMENTS` changes the schema in memory, each with
its reason (docs/dashboards.md repeats them), and a test fails once an adjustment changes nothing.

Panel ids (issue 21, case 1) are checked here too: integers, unique, and stable when a panel is
added.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from generator import naming
from generator.builders import dashboard_panels
from generator.builders.dashboard import dashboard_outputs, service_dashboard
from generator.parts.grafana_json import PANEL_ID_LIMIT, PanelDef, RowDef, panel_ids
from generator.plan import ServicePlan
from generator.render import find_specs, load_plans
from tests.data_dir import data_path

ROOT = Path(__file__).resolve().parents[1]
RELEASES = ("v10.4", "newest")
Schema = dict[str, Any]


# --- schema adjustments ----------------------------------------------------------------------


def _walk_schemas(node: Any) -> Iterator[Schema]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk_schemas(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk_schemas(value)


def _defaults_are_optional(schemas: dict[str, Schema]) -> int:
    changed = 0
    for schema in schemas.values():
        for node in _walk_schemas(schema):
            required, props = node.get("required"), node.get("properties")
            if not isinstance(required, list) or not isinstance(props, dict):
                continue
            kept = [r for r in required if "default" not in props.get(r, {})]
            changed += len(required) - len(kept)
            node["required"] = kept
    return changed


# dashboardv2beta1.jsonschema.json, definitions.DataLink (PanelSpec.links items).
DATA_LINK: Schema = {
    "type": "object",
    "additionalProperties": False,
    "required": ["title", "url"],
    "properties": {
        "title": {"type": "string"},
        "url": {"type": "string"},
        "targetBlank": {"type": "boolean"},
    },
}


def _panel_links_are_data_links(schemas: dict[str, Schema]) -> int:
    links = schemas["dashboard"]["definitions"]["Panel"]["properties"]["links"]
    if links["items"] == DATA_LINK:
        return 0
    links["items"] = copy.deepcopy(DATA_LINK)
    return 1


def _cue_top_is_any(schemas: dict[str, Schema]) -> int:
    definitions = schemas["dashboard"]["definitions"]
    places = [
        (definitions["MatcherConfig"]["properties"], "options"),
        (definitions["DynamicConfigValue"]["properties"], "value"),
        (definitions["VariableModel"]["properties"]["query"]["oneOf"][1], "additionalProperties"),
    ]
    changed = 0
    for parent, key in places:
        node = parent[key]
        if node.get("type") == "object":
            parent[key] = {k: v for k, v in node.items() if k == "description"}
            changed += 1
    return changed


def _null_base_threshold(schemas: dict[str, Schema]) -> int:
    value = schemas["dashboard"]["definitions"]["Threshold"]["properties"]["value"]
    if value.get("type") != "number":
        return 0
    value.pop("type")
    value["anyOf"] = [{"type": "number"}, {"type": "null"}]
    return 1


@dataclasses.dataclass(frozen=True)
class Adjustment:
    """One change to the published schema, why it is right, and the releases it applies to."""

    name: str
    why: str
    apply: Callable[[dict[str, Schema]], int]
    releases: tuple[str, ...] = RELEASES


ADJUSTMENTS = (
    Adjustment(
        "a field with a default may be omitted",
        "CUE `field: T | *default` is filled with its default when absent; cog lists such fields "
        "as required. Grafana fills them on load (dashboard model defaults; a panel's options "
        "are merged over its plugin's defaults), and a field one release adds (stat "
        "percentChangeColorMode in 11.x) cannot be written without breaking the older schema, "
        "which forbids unknown fields.",
        _defaults_are_optional,
    ),
    Adjustment(
        "panel links are data links",
        "dashboard_kind.cue types Panel.links as DashboardLink (dashboard-header links, nine "
        "required fields); Grafana reads panel links as DataLink {title, url, targetBlank}, and "
        "its v2 dashboard schema types them so (PanelSpec.links → DataLink).",
        _panel_links_are_data_links,
    ),
    Adjustment(
        "CUE `_` accepts any value",
        "MatcherConfig.options, DynamicConfigValue.value and the object form of "
        "VariableModel.query are `_` (any value) in dashboard_kind.cue; cog writes `_` as "
        "'an object'. Grafana stores strings there (byName matcher options, unit overrides).",
        _cue_top_is_any,
    ),
    Adjustment(
        "the base threshold step is null",
        "Grafana writes the base step's value as null (its own schema text: 'Nulls currently "
        "appear here when serializing -Infinity to JSON'); the 10.4 schema types it as a "
        "number, the newest allows null.",
        _null_base_threshold,
        releases=("v10.4",),
    ),
)

SCHEMA_FILES = ("dashboard", "timeseries", "stat", "table", "heatmap", "prometheus")


def _published(release: str) -> dict[str, Schema]:
    folder = data_path("grafana-schema", release)
    return {
        name: json.loads((folder / f"{name}.jsonschema.json").read_text("utf-8"))
        for name in SCHEMA_FILES
    }


@cache
def _adjusted(release: str) -> tuple[dict[str, Schema], tuple[int, ...]]:
    schemas = _published(release)
    counts = tuple(adj.apply(schemas) if release in adj.releases else -1 for adj in ADJUSTMENTS)
    return schemas, counts


def _validator(schema: Schema, definition: str | None = None) -> jsonschema.Draft7Validator:
    if definition is not None:
        schema = {**schema, "$ref": f"#/definitions/{definition}"}
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


@cache
def _validators(release: str) -> dict[str, jsonschema.Draft7Validator]:
    schemas, _ = _adjusted(release)
    found = {
        "dashboard": _validator(schemas["dashboard"]),
        "panel": _validator(schemas["dashboard"], "Panel"),
        "row": _validator(schemas["dashboard"], "RowPanel"),
        "target": _validator(schemas["prometheus"]),
    }
    for plugin in ("timeseries", "stat", "table", "heatmap"):
        definitions = schemas[plugin]["definitions"]
        found[f"{plugin}.options"] = _validator(schemas[plugin], "Options")
        if "FieldConfig" in definitions:
            found[f"{plugin}.custom"] = _validator(schemas[plugin], "FieldConfig")
    return found


def schema_errors(dashboard: dict[str, Any], release: str) -> list[str]:
    """Every place ``dashboard`` breaks the (adjusted) schema of ``release``, as
    ``where: message`` lines. Panels, their options and targets are checked one by one, so a
    message names the field rather than "not valid under any of the given schemas"."""
    validators = _validators(release)
    found: list[str] = []

    def check(kind: str, where: str, value: Any) -> None:
        for err in validators[kind].iter_errors(value):
            path = "/".join(str(p) for p in err.absolute_path)
            found.append(f"{where}{'/' + path if path else ''}: {err.message}")

    check("dashboard", "", {**dashboard, "panels": []})
    for i, panel in enumerate(dashboard.get("panels", [])):
        where = f"panels/{i} ({panel.get('type')} {panel.get('title')!r})"
        if panel.get("type") == "row":
            check("row", where, panel)
            continue
        check("panel", where, panel)
        check(f"{panel['type']}.options", f"{where}/options", panel.get("options", {}))
        custom = panel.get("fieldConfig", {}).get("defaults", {}).get("custom")
        if f"{panel['type']}.custom" in validators and custom is not None:
            check(f"{panel['type']}.custom", f"{where}/fieldConfig/defaults/custom", custom)
        for j, target in enumerate(panel.get("targets", [])):
            check("target", f"{where}/targets/{j}", target)
    return found


# --- fixtures ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def plans() -> list[ServicePlan]:
    return load_plans(find_specs([], ROOT), ROOT)


@pytest.fixture(scope="module")
def dashboards(plans: list[ServicePlan]) -> dict[str, dict[str, Any]]:
    return {path: json.loads(text) for path, text in dashboard_outputs(plans).items()}


# --- the schema ---------------------------------------------------------------------------------


@pytest.mark.parametrize("release", RELEASES)
def test_every_dashboard_validates_against_grafanas_schema(
    release: str, dashboards: dict[str, dict[str, Any]]
) -> None:
    assert len(dashboards) >= 5
    for path, dashboard in dashboards.items():
        assert schema_errors(dashboard, release) == [], path


@pytest.mark.parametrize("release", RELEASES)
def test_every_adjustment_still_changes_the_published_schema(release: str) -> None:
    _, counts = _adjusted(release)
    for adjustment, count in zip(ADJUSTMENTS, counts, strict=True):
        if release in adjustment.releases:
            assert count > 0, f"{release}: {adjustment.name!r} changes nothing; remove it"


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize(
    ("break_it", "expected"),
    [
        pytest.param(lambda d: d["panels"][1].update(id=None), "None is not of type 'integer'", id="null panel id"),
        pytest.param(lambda d: d["panels"][0].update(id="1"), "'1' is not of type 'integer'", id="string row id"),
        pytest.param(lambda d: d["panels"][1]["gridPos"].update(w="12"), "'12' is not of type 'integer'", id="a string width"),
        pytest.param(lambda d: d["panels"][1].update(span=4), "'span' was unexpected", id="a Grafana 5 key"),
        pytest.param(lambda d: d["panels"][1]["options"].update(legend={"displayMode": "sideways"}), "'sideways' is not one of", id="unknown legend mode"),
        pytest.param(lambda d: d["panels"][1]["targets"][0].update(format="csv"), "'csv' is not one of", id="unknown target format"),
        pytest.param(lambda d: d.update(graphTooltip=7), "7 is not one of", id="unknown tooltip mode"),
    ],
)  # fmt: skip
def test_the_schema_rejects_what_grafana_would_not_load(
    release: str,
    dashboards: dict[str, dict[str, Any]],
    break_it: Callable[[dict[str, Any]], None],
    expected: str,
) -> None:
    dashboard = copy.deepcopy(dashboards[naming.dashboard_file("o1-preview")])
    # panel 0 is a row; make panel 1 a time series so the plugin cases hit its schema
    dashboard["panels"][1] = next(p for p in dashboard["panels"] if p["type"] == "timeseries")
    break_it(dashboard)
    errors = schema_errors(dashboard, release)
    assert any(expected in e for e in errors), errors


# --- panel ids -------------------------------------------------------------


def test_every_panel_and_row_has_a_unique_integer_id(
    dashboards: dict[str, dict[str, Any]],
) -> None:
    for path, dashboard in dashboards.items():
        ids = [p["id"] for p in dashboard["panels"]]
        assert all(isinstance(i, int) and 1 <= i <= PANEL_ID_LIMIT for i in ids), path
        assert len(set(ids)) == len(ids), path
        assert "id" not in dashboard, path


def _ids_by_key(dashboard: dict[str, Any]) -> dict[str, int]:
    return {f"{p['type']}:{p['title']}": p["id"] for p in dashboard["panels"]}


def test_adding_a_panel_renumbers_no_other_panel(
    plans: list[ServicePlan], monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = next(p for p in plans if p.name == "o1-preview")
    before = _ids_by_key(service_dashboard(plan))
    original = dashboard_panels.service_rows

    def with_one_more(p: ServicePlan) -> list[RowDef]:
        rows = original(p)
        first = rows[0]
        extra = dataclasses.replace(first.panels[0], title="A new first panel", key="new-panel")
        return [dataclasses.replace(first, panels=(extra, *first.panels)), *rows[1:]]

    monkeypatch.setattr("generator.builders.dashboard.service_rows", with_one_more)
    after = _ids_by_key(service_dashboard(plan))
    assert len(after) == len(before) + 1
    assert {k: after[k] for k in before} == before


def test_a_panel_keeps_its_id_when_its_title_changes(plans: list[ServicePlan]) -> None:
    # Titles carry thresholds and objectives; the id derives from the key, not the title.
    plan = next(p for p in plans if p.name == "o1-preview")
    changed = dataclasses.replace(
        plan, slos=tuple(dataclasses.replace(s, objective=99.5) for s in plan.slos)
    )
    before = [p["id"] for p in service_dashboard(plan)["panels"]]
    after = [p["id"] for p in service_dashboard(changed)["panels"]]
    assert before == after


def test_duplicate_panel_keys_are_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unique"):
        panel_ids(["slo/a/sli", "slo/a/sli"])


def test_colliding_hashes_still_give_unique_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    # 40 keys into 50 ids: collisions are certain, and each is resolved by rehashing.
    monkeypatch.setattr("generator.parts.grafana_json.PANEL_ID_LIMIT", 50)
    keys = [f"panel-{i}" for i in range(40)]
    ids = panel_ids(keys)
    assert len(set(ids)) == len(ids) and all(1 <= i <= 50 for i in ids)
    assert panel_ids(keys[:10]) == ids[:10]  # a key's id depends only on the keys before it


def test_every_panel_definition_has_a_key() -> None:
    assert "key" in {
        f.name for f in dataclasses.fields(PanelDef) if f.default is dataclasses.MISSING
    }
