"""Shared fixtures: the repository root."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo() -> Path:
    """The repository root (where specs/, rules/, dashboards/ live)."""
    return REPO
