"""The fast (libyaml) dumper behind ``dump_yaml`` writes exactly what the pure-Python one does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from generator import yamlio
from generator.builders.rulefile import rule_file
from generator.render import find_specs, load_plans

REPO = Path(__file__).resolve().parents[1]


class _PurePythonDumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


_PurePythonDumper.add_representer(str, yamlio._str)


def _pure(data: Any) -> str:
    return yaml.dump(
        data,
        Dumper=_PurePythonDumper,
        sort_keys=False,
        width=4096,
        allow_unicode=True,
        default_flow_style=False,
    )


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("line1\nline2", id="multi-line text becomes a literal block"),
        pytest.param("multi\n  indented\n", id="indented block with trailing newline"),
        pytest.param("x: y", id="colon-space is quoted"),
        pytest.param("'q' \"dq\"", id="both quote kinds"),
        pytest.param("ünï °C ×", id="non-ASCII stays unescaped"),
        pytest.param("", id="empty string"),
        pytest.param("yes", id="YAML 1.1 boolean word is quoted"),
        pytest.param("1.0", id="number-like text is quoted"),
        pytest.param(" lead", id="leading space"),
        pytest.param("a #b", id="comment marker"),
        pytest.param("{{ $value | humanizePercentage }}", id="Go template braces"),
        pytest.param("tab\tx", id="tab is escaped"),
        pytest.param('rate(x{le=~"^(?:0\\\\.5)$"}[5m]) > 0', id="PromQL with regex escapes"),
    ],
)
def test_dump_yaml_matches_pure_python_emitter(value: str) -> None:
    data = {"k": value, "list": [value, {"nested": value}]}
    assert yamlio.dump_yaml(data) == _pure(data)


def test_rendered_rule_files_match_pure_python_emitter() -> None:
    plans = load_plans(find_specs([], REPO), REPO)
    assert plans, "no specs under specs/"
    for plan in plans:
        document = rule_file(plan)
        assert yamlio.dump_yaml(document) == _pure(document), plan.name


def test_libyaml_emitter_is_used_when_available() -> None:
    # PyPI's PyYAML wheels carry libyaml; make test installs one.
    assert yaml.__with_libyaml__, "PyYAML without libyaml: pip install --force-reinstall pyyaml"
    assert issubclass(yamlio._Dumper, yaml.CSafeDumper)
