"""check ≡ render (issue 15, case 9): specs that ``obsgen check`` accepts and whose generated
promtool tests used to fail — now they render and pass the real ``promtool test rules``."""

from __future__ import annotations

from pathlib import Path

from generator import core
from generator.core.prove import promtool_problems
from generator.render import load_plans
from tests.factories import good_spec, write_spec


def test_edge_specs_that_check_accepts_pass_their_promtool_tests(tmp_path: Path) -> None:
    data = good_spec()
    body = data["spec"]
    # Two availability SLOs whose thresholds tie: 6 × (1 − 99.36 %) × 1.05 = 14.4 × (1 − 99.72 %);
    # at that exact ratio float rounding decided whether the 99.72 % page fired.
    body["slos"] = [
        {"name": "avail-a", "objective": 99.36},
        {"name": "avail-b", "objective": 99.72},
    ]
    body["alerts"]["errorRatio"]["minEvents"] = 1_000_000_000  # more than the test traffic had
    body["alerts"]["memoryHeadroom"]["minFree"] = 0.9  # the healthy case had 75 % free
    body["alerts"]["gpuMemoryHeadroom"] = {"minFree": 0.8}  # the healthy GPU had 50 % free
    spec = write_spec(tmp_path / "specs", data)
    plans = load_plans([spec], tmp_path)  # check accepts it
    problems = promtool_problems(core.build(plans))
    assert not problems, "\n".join(str(p) for p in problems)
