"""docs/spec.md's field tables and docs/spec.schema.json are generated from the code and current."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from tests.factories import good_spec, set_path

REPO = Path(__file__).resolve().parent.parent


def test_reference_and_schema_are_up_to_date() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "spec_reference.py"), "--check"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(
    "alert",
    [
        "kvCache",
        "memoryExhaustion",
        "oomKilled",
        "targetDown",
        "gpuMemoryHeadroom",
        "gpuTemperature",
        "gpuXidErrors",
        "gpuExporterDown",
    ],
)
def test_every_alert_is_documented(alert: str) -> None:
    assert f"| `{alert}` |" in (REPO / "docs" / "spec.md").read_text(encoding="utf-8")


def test_no_reference_to_design_notes_users_do_not_have() -> None:
    assert "DESIGN" not in (REPO / "docs" / "spec.md").read_text(encoding="utf-8")


def _validator() -> object:
    schema = json.loads((REPO / "docs" / "spec.schema.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("spec", sorted((REPO / "specs").glob("*.yaml")), ids=lambda p: p.name)
def test_example_specs_satisfy_the_schema(spec: Path) -> None:
    errors = list(_validator().iter_errors(yaml.safe_load(spec.read_text())))  # type: ignore[attr-defined]
    assert errors == [], [e.message for e in errors]


@pytest.mark.parametrize(
    ("path", "value"),
    [
        pytest.param("spec.alerts.queueDepth.maxx", 1, id="an unknown key breaks the schema"),
        pytest.param("spec.slos[0].window", "30 days", id="a bad duration breaks the schema"),
        pytest.param("spec.server", "vlm", id="an unknown server breaks the schema"),
    ],
)
def test_schema_refuses_what_the_spec_refuses(path: str, value: object) -> None:
    assert list(_validator().iter_errors(set_path(good_spec(), path, value)))  # type: ignore[attr-defined]
