"""Test data carried by the repository (``tests/data/``): corpora and CRD schemas.

Every file there is vendored with its source and licence (tests/data/README.md), so a plain clone's
``make test`` needs nothing beside the repository and no test skips for missing data.
"""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def data_path(*parts: str) -> Path:
    """``tests/data/<parts>``; a missing path is a failure, never a skip."""
    path = DATA.joinpath(*parts)
    assert path.exists(), f"{path} is missing from the repository's test data"
    return path
