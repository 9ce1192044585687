"""Shared fixtures (the repository root; each test's own render cache) and how the pytest-xdist
workers of `make test` share the tests out."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import pytest

from tests import toolchain
from tests.e2e.e2e_timings import WORKER_OUTPUT_KEY, print_timings

REPO = Path(__file__).resolve().parent.parent
_RELAYED: list[str] = []
"""The e2e engine-timing table a pytest-xdist worker handed over."""


def pytest_configure(config: pytest.Config) -> None:
    """Every test runs on the pinned stack (tests/toolchain.py): Prometheus 3, promtool 3,
    Alertmanager and VictoriaMetrics first on ``PATH``. A tool not built stops the run with
    the command that builds it (never a skip)."""
    try:
        toolchain.activate()
    except toolchain.ToolMissing as missing:
        pytest.exit(f"obsgen tests: {missing}", returncode=4)


@pytest.fixture
def repo() -> Path:
    """The repository root (where specs/, rules/, dashboards/ live)."""
    return REPO


@pytest.fixture(autouse=True)
def _own_render_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Renders through the CLI record into a cache of this test's own (generator.fleet.cache): no
    test reuses another's outputs or promtool proofs, nor the developer's."""
    monkeypatch.setenv("OBSGEN_CACHE_DIR", str(tmp_path_factory.mktemp("obsgen-cache")))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``make test``'s ``--dist loadscope``: :class:`SharedFixtureScheduling`."""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SharedFixtureScheduling(LoadScopeScheduling):  # type: ignore[misc]
        """Each test goes to whichever worker is free, but the tests of tests/e2e (which share
        the package fixture that starts the servers and scenarios) stay together on one
        worker, and so do those of a module declaring a module-scoped fixture: the fixture runs
        once. The largest groups are sent first."""

        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::")[0]
            if path.startswith("tests/e2e/"):
                return "tests/e2e"
            return path if _declares_shared_fixture(path) else nodeid

    return SharedFixtureScheduling(config, log)


@functools.cache
def _declares_shared_fixture(path: str) -> bool:
    """Whether the test module at ``path`` (relative to the repository) declares a fixture of
    module, package or session scope."""
    text = (REPO / path).read_text(encoding="utf-8")
    return re.search(r"""scope=["'](module|package|session)["']""", text) is not None


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """pytest-xdist controller: keep the e2e timing table a worker handed over."""
    _RELAYED.extend(getattr(node, "workeroutput", {}).get(WORKER_OUTPUT_KEY, ()))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print the e2e timing table the workers handed over (a serial run prints its own)."""
    if _RELAYED:
        print_timings(terminalreporter, _RELAYED)
