"""The project's own code stays ruff-clean, ruff-formatted and mypy-strict clean (CI runs this)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["ruff", "check", "."], id="ruff finds nothing"),
        pytest.param(["ruff", "format", "--check", "."], id="every file is ruff-formatted"),
        pytest.param(["mypy", "generator", "nvml_exporter"], id="mypy strict is clean"),
    ],
)
def test_code_quality(command: list[str]) -> None:
    proc = subprocess.run(
        [str(BIN / command[0]), *command[1:]], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


# A citation of the founding design note, which is not in the repository (its name, then §).
_UNSHIPPED_NOTE = re.compile("DES" + r"IGN(\.md)?\s*§")
# One of this repository's Markdown files under docs/ (runbooks too) or nvml_exporter/.
_DOC_REFERENCE = re.compile(r"(?<![\w/.-])((?:docs/(?:runbooks/)?|nvml_exporter/)[\w-]+\.md)\b")


def _shipped_text_files() -> list[Path]:
    roots = [REPO / "generator", REPO / "nvml_exporter", REPO / "docs", REPO / "tests"]
    files = [p for root in roots for p in root.rglob("*") if p.suffix in {".py", ".md", ".j2"}]
    return sorted([*files, REPO / "README.md"])


def test_no_code_or_doc_cites_a_design_note_the_repository_lacks() -> None:
    found = [
        f"{path.relative_to(REPO)}:{n}"
        for path in _shipped_text_files()
        if "data" not in path.relative_to(REPO).parts
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _UNSHIPPED_NOTE.search(line)
    ]
    assert found == [], "point these at docs/ (docs/contracts.md) or say it in place"


def test_every_doc_that_code_points_to_exists() -> None:
    missing = sorted(
        {
            f"{path.relative_to(REPO)}: {ref}"
            for path in _shipped_text_files()
            if path.suffix == ".py" and "data" not in path.relative_to(REPO).parts
            for ref in _DOC_REFERENCE.findall(path.read_text(encoding="utf-8"))
            if "<" not in ref and not (REPO / ref).exists()
        }
    )
    assert missing == []


def test_no_test_skips_for_a_missing_tool_or_file() -> None:
    # make test installs every tool and the repository carries its test data: a missing one is
    # a failure that names the install command, never a skip.
    pattern = re.compile(r"pytest\.skip\(|importorskip\(")
    found = [
        f"{path.relative_to(REPO)}:{n}"
        for path in sorted((REPO / "tests").rglob("*.py"))
        if path != Path(__file__)
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []
