"""The realistic fleet of bench/: deterministic, every spec valid, no two alike but for the name."""

from __future__ import annotations

import sys
from pathlib import Path

from generator.render import load_plans

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from _fleet_specs import realistic_specs


def test_the_realistic_fleet_is_valid_distinct_and_the_same_from_one_seed(tmp_path: Path) -> None:
    paths = realistic_specs(tmp_path / "a", 24)
    again = realistic_specs(tmp_path / "b", 24)
    assert [p.read_bytes() for p in paths] == [p.read_bytes() for p in again]
    assert realistic_specs(tmp_path / "c", 24, seed=35)[0].read_bytes() != paths[0].read_bytes()
    plans = load_plans(paths, tmp_path)
    assert {p.server for p in plans} == {"vllm", "tgi", "triton", "openai-http"}
    assert len({p.namespace for p in plans}) == len(plans) == 24
    # Not copies: with its own name taken out, each spec still differs from every other.
    assert len({p.read_text().replace(p.stem, "NAME") for p in paths}) == 24
