"""The read-only ``shared/`` folder beside the repository (corpus, CRD schemas).

Tests that need it skip with a clear reason in a user's own clone, where it is absent, and
fail instead of skipping when ``CI`` is set: there it must be present.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"


def shared_path(*parts: str) -> Path:
    """``shared/<parts>``; skips the test when absent (fails it under ``CI``)."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        reason = f"{path} is absent (the shared/ folder beside the repository)"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI must provide it")
        pytest.skip(reason)
    return path
