"""Every committed rule file and generated promtool test also passes on the Prometheus 2 line:
promtool 2.53.3 (the 2.x LTS) and Debian's 2.42 (what `make render` installs and proves with on a
user's machine). The suite proves everything on promtool 3 (tests/toolchain.py); these prove the
same files on 2.x, whose range selectors are closed on the left."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests import toolchain

ROOT = Path(__file__).resolve().parent.parent
SERVICES = sorted(p.name.removesuffix(".rules.yaml") for p in (ROOT / "rules").glob("*.rules.yaml"))


LINES = {
    "2.53": lambda: toolchain.binary("prometheus2", "promtool"),
    "2.42": toolchain.debian_promtool,
}


def _promtool2(
    *args: str | Path, cwd: Path, line: str = "2.53"
) -> subprocess.CompletedProcess[str]:
    tool = LINES[line]()
    return subprocess.run(
        [tool, *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env={**os.environ, "GOGC": "off", "GOMEMLIMIT": "256MiB"},
    )


@pytest.mark.parametrize("line", sorted(LINES))
def test_the_2x_line_is_a_2x_promtool(line: str) -> None:
    out = _promtool2("--version", cwd=ROOT, line=line)
    assert f"version {line}." in out.stdout + out.stderr


@pytest.mark.parametrize("line", sorted(LINES))
def test_every_committed_rule_file_passes_promtool_2_lint(line: str) -> None:
    files = sorted((ROOT / "rules").glob("*.rules.yaml"))
    assert len(files) == len(SERVICES) >= 6
    out = _promtool2("check", "rules", "--lint=all", "--lint-fatal", *files, cwd=ROOT, line=line)
    assert out.returncode == 0, out.stdout + out.stderr


def _prove_service(service: str, line: str) -> None:
    tests = sorted((ROOT / "rules").glob(f"{service}.*test.yaml"))
    assert tests, f"no committed promtool tests for {service}"
    out = _promtool2("test", "rules", *(t.name for t in tests), cwd=ROOT / "rules", line=line)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-6000:]
    assert out.stdout.count("SUCCESS") == len(tests)


# One class per line: `make test` distributes tests by module and class (--dist loadscope),
# so the two lines' proofs (each about a minute per service) run on different workers.
class TestEveryGeneratedTestPassesPromtool253:
    """Every committed promtool test of each service passes promtool 2.53.3."""

    @pytest.mark.parametrize("service", SERVICES)
    def test_service(self, service: str) -> None:
        _prove_service(service, "2.53")


class TestEveryGeneratedTestPassesPromtool242:
    """Every committed promtool test of each service passes Debian's promtool 2.42."""

    @pytest.mark.parametrize("service", SERVICES)
    def test_service(self, service: str) -> None:
        _prove_service(service, "2.42")


def test_both_lines_prove_every_service() -> None:
    """The two classes above cover every line of :data:`LINES`."""
    classes = [TestEveryGeneratedTestPassesPromtool253, TestEveryGeneratedTestPassesPromtool242]
    assert {c.__name__.removeprefix("TestEveryGeneratedTestPassesPromtool") for c in classes} == {
        line.replace(".", "") for line in LINES
    }
