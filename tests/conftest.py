"""Shared fixtures: the repository root, the shared/ folder, and a runner for the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.shared_dir import shared_path

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo() -> Path:
    """The repository root (where specs/, rules/, dashboards/ live)."""
    return REPO


@pytest.fixture
def shared() -> Path:
    """``../shared`` beside the repository; skipped outside CI when absent, a failure in CI."""
    return shared_path()
