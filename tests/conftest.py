"""Shared fixtures: the repository root, the shared/ folder, and a runner for the CLI."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


@pytest.fixture
def repo() -> Path:
    """The repository root (where specs/, rules/, dashboards/ live)."""
    return REPO


@pytest.fixture
def shared() -> Path:
    """``../shared`` beside the repository; skipped outside CI when absent, a failure in CI."""
    if not SHARED.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"{SHARED} is missing in CI; these tests must not skip there")
        pytest.skip(f"{SHARED} is absent (a user's own clone): corpus/schema tests skipped")
    return SHARED
