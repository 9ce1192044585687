"""Shared fixtures: the repository root; each test's own render cache."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo() -> Path:
    """The repository root (where specs/, rules/, dashboards/ live)."""
    return REPO


@pytest.fixture(autouse=True)
def _own_render_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Renders through the CLI record into a cache of this test's own (generator.cache): no
    test reuses another's outputs or promtool proofs, nor the developer's."""
    monkeypatch.setenv("OBSGEN_CACHE_DIR", str(tmp_path_factory.mktemp("obsgen-cache")))
