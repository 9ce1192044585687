"""Alert summaries print humanised values (``{{ $value | humanize }}``): the generated tests'
expected annotations come from :func:`generator.parts.go_templates.humanize`, which must
print what the real promtool's template engine prints, for counts, rates and temperatures."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from generator.parts.go_templates import humanize, render_template
from tests.helpers_promtool import assert_ok, run_promtool

VALUES = [0, 1, 3, 150, 999.96, 1234, 1234567, 2.5e12, 0.5, 0.0123, 3.0000000001, 87.25, -4200]


@pytest.mark.parametrize(
    ("value", "text"),
    [(0, "0"), (150, "150"), (1234567, "1.235M"), (0.0123, "12.3m"), (3.0000000001, "3")],
)
def test_humanize_reads_as_a_person_would(value: float, text: str) -> None:
    assert humanize(value) == text
    assert render_template("{{ $value | humanize }}", {}, value) == text


def test_humanize_prints_what_promtool_prints(tmp_path: Path) -> None:
    rules = {
        "groups": [
            {
                "name": "humanize",
                "rules": [
                    {
                        "alert": f"V{i}",
                        "expr": f"vector({v!r})",
                        "annotations": {"summary": "{{ $value | humanize }}"},
                    }
                    for i, v in enumerate(VALUES)
                ],
            }
        ]
    }
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(rules), encoding="utf-8")
    test = {
        "rule_files": ["r.yaml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [],
                "alert_rule_test": [
                    {
                        "eval_time": "1m",
                        "alertname": f"V{i}",
                        "exp_alerts": [
                            {"exp_labels": {}, "exp_annotations": {"summary": humanize(v)}}
                        ],
                    }
                    for i, v in enumerate(VALUES)
                ],
            }
        ],
    }
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(test), encoding="utf-8")
    assert_ok(run_promtool("test", "rules", "t.yaml", cwd=tmp_path), ["humanize"])


def test_no_summary_prints_a_raw_value() -> None:
    templates = Path(__file__).resolve().parent.parent / "generator/templates/alerts"
    raw = [p.name for p in sorted(templates.glob("*.j2")) if "{{ $value }}" in p.read_text()]
    assert not raw, raw
