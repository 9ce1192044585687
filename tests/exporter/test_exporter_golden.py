"""The golden exposition of the 8-GPU fake, checked by the real ``promtool check metrics``.

Regenerate after an intended change (then review the diff)::

    .venv/bin/python -m nvml_exporter.fake > tests/exporter/golden/fake_8gpu.prom
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from prometheus_client.exposition import generate_latest

from nvml_exporter.fake import FakeNvml, default_fake, golden_exposition
from nvml_exporter.metrics import SPECS
from nvml_exporter.server import Exporter

GOLDEN = Path(__file__).parent / "golden" / "fake_8gpu.prom"
REGENERATE = ".venv/bin/python -m nvml_exporter.fake > tests/exporter/golden/fake_8gpu.prom"


def promtool() -> str:
    found = os.environ.get("PROMTOOL") or shutil.which("promtool")
    if not found:
        pytest.fail("promtool not found: run `make prometheus` or set $PROMTOOL")
    return found


def check_metrics(text: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [promtool(), "check", "metrics"],
        input=text,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_exposition_matches_the_golden_file() -> None:
    assert golden_exposition() == GOLDEN.read_text(), f"regenerate with: {REGENERATE}"


def test_golden_file_passes_promtool_check_metrics() -> None:
    result = check_metrics(GOLDEN.read_text())
    assert result.returncode == 0, result.stdout + result.stderr
    assert not (result.stdout + result.stderr).strip()  # not even a lint warning


def test_promtool_rejects_a_broken_exposition() -> None:
    """Guards the check above: promtool must be able to fail on our kind of output."""
    broken = GOLDEN.read_text().replace("# TYPE gpu_energy_joules_total counter", "# TYPE x y")
    assert check_metrics(broken).returncode != 0


def test_server_output_with_process_metrics_passes_promtool() -> None:
    fake: FakeNvml = default_fake()
    exporter = Exporter(fake, host="127.0.0.1", port=0)  # not started: gather() only
    assert exporter.collector.initialise()

    class _Scrape:
        def collect(self):
            return exporter.gather(None)

    try:
        text = generate_latest(_Scrape()).decode()  # type: ignore[arg-type]
    finally:
        exporter.collector.shutdown()
    assert "process_resident_memory_bytes" in text
    result = check_metrics(text)
    assert result.returncode == 0, result.stdout + result.stderr


def test_golden_file_shows_every_metric_family() -> None:
    text = GOLDEN.read_text()
    for spec in SPECS.values():
        assert f"# TYPE {spec.name} {spec.kind}" in text, spec.name


def test_readme_documents_every_metric() -> None:
    readme = (Path(__file__).parents[2] / "nvml_exporter" / "README.md").read_text()
    for name in SPECS:
        assert f"| `{name}` |" in readme, f"{name} missing from the README metrics table"
