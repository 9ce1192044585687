"""Bucket bounds per release: latency thresholds are checked against the bounds of the release
``spec.serverVersion`` names (docs/spec.md, "Bucket bounds per release").

The issue's case (an older vLLM release: a p99 alert above its top bucket, a TTFT SLO on a
bound only newer releases have) is refused through the CLI with file, field, release, bounds
and fix; unseen instances cover every server whose bounds changed (SGLang e2e and queue,
Triton's missing histogram, vLLM's V0 engine), thresholds valid on both releases, declared
buckets, a version written as a line, and no version. The real promtool shows why: over the
0.8.3 exposition, the rule written for the newest bounds selects no bucket.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.builders.rulefile import rule_file
from generator.cli import main
from generator.errors import ObsgenError
from generator.plan import ServicePlan, resolve
from generator.presets import PRESETS, spans
from generator.release_bounds import Releases
from generator.spec import parse_spec
from generator.versions import parse_release
from generator.yamlio import dump_yaml
from tests.helpers_promtool import run_promtool
from tests.test_preset_fixtures import input_series, load_fixture

ROOT = Path(__file__).resolve().parents[1]


def spec_data(server: str, **body: Any) -> dict[str, Any]:
    """A minimal valid spec for ``server``; keyword arguments set keys of ``spec``."""
    data: dict[str, Any] = {
        "server": server,
        "selector": {"namespace": "ns", "job": "svc"},
        "deployment": {"name": "svc", "container": "server", "memoryLimit": "32Gi"},
        **body,
    }
    return {
        "apiVersion": "obsgen/v1alpha1",
        "kind": "ModelService",
        "metadata": {"name": "svc", "team": "t", "runbookBaseUrl": "https://x.invalid/rb"},
        "spec": data,
    }


def slo(indicator: str, threshold: str) -> list[dict[str, Any]]:
    return [
        {"name": "lat", "indicator": indicator, "threshold": threshold, "objective": 99, "window": "30d"}
    ]  # fmt: skip


def plan_of(data: dict[str, Any]) -> ServicePlan:
    return resolve(parse_spec(copy.deepcopy(data), "svc.yaml"), "svc.yaml")


def errors_of(data: dict[str, Any]) -> list[str]:
    with pytest.raises(ObsgenError) as caught:
        plan_of(data)
    return [f"{d.path}: {d.message}" for d in caught.value.diagnostics]


def warnings_of(data: dict[str, Any]) -> list[str]:
    return [
        f"{w.path}: {w.message}"
        for w in plan_of(data).warnings
        if w.path not in ("metadata.runbookBaseUrl", "metadata.grafanaUrl")
    ]


def cli_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], data: dict[str, Any]) -> str:
    """Render ``data`` through the CLI: exit 2, no traceback, nothing written; stderr."""
    spec = tmp_path / "specs" / "svc.yaml"
    spec.parent.mkdir(parents=True, exist_ok=True)
    spec.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    code = main(["render", "--out", str(tmp_path / "out"), str(spec)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.yaml"))
    return err


# --- the case: an older vLLM release -------------------------------------------------


def test_a_p99_alert_above_the_old_top_bucket_is_refused_with_release_bounds_and_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = spec_data("vllm", serverVersion="0.8.2", alerts={"latencyP99": {"threshold": "90s"}})
    err = cli_error(tmp_path, capsys, data)
    (line,) = [x for x in err.splitlines() if "spec.alerts.latencyP99.threshold" in x]
    spec = tmp_path / "specs" / "svc.yaml"
    assert line.startswith(f"{spec}: spec.alerts.latencyP99.threshold: 90s is not below ")
    for part in (
        "the largest bucket bound 60s",
        'vllm ≥ 0.8, < 0.8.4 (spec.serverVersion "0.8.2")',
        "vllm:e2e_request_latency_seconds with the bounds 0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, "
        "10, 15, 20, 30, 40, 50, 60 s",
        "upgrade the pods to 0.8.4 or later",
        "declare spec.metrics.requestDuration.buckets",
    ):
        assert part in line, line
    # The same alert on the release that has the bucket renders.
    plan = plan_of(
        spec_data("vllm", serverVersion="0.8.4", alerts={"latencyP99": {"threshold": "90s"}})
    )
    assert plan.alerts["latency_p99"].params["threshold_seconds"] == 90.0


def test_a_ttft_slo_on_a_bound_only_newer_releases_have_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = cli_error(
        tmp_path, capsys, spec_data("vllm", serverVersion="0.8.3", slos=slo("ttft", "20s"))
    )
    assert (
        f"{tmp_path / 'specs' / 'svc.yaml'}: spec.slos[0].threshold: 20s is not a bucket bound of "
        "vllm:time_to_first_token_seconds (nearest: below 10s); the SLI would select no bucket"
    ) in err
    assert (
        'vllm ≥ 0.8, < 0.8.4 (spec.serverVersion "0.8.3") exposes vllm:time_to_first_token' in err
    )
    assert "0.75, 1, 2.5, 5, 7.5, 10 s; from vllm 0.8.4 on it is a bucket bound" in err
    assert "declare spec.metrics.timeToFirstToken.buckets" in err


def test_over_the_old_exposition_the_newest_bounds_rule_selects_no_bucket(tmp_path: Path) -> None:
    """Why the refusal matters: the SLI written for 20s reads nothing on 0.8.3's series."""
    data = spec_data("vllm", slos=slo("ttft", "20s"))
    rules = rule_file(plan_of(data))
    # The series that read the threshold's bucket: the slow-request ratio, the SLO's bad events.
    records = sorted(
        {
            r["record"] + ('{events="bad"}' if '"events", "bad"' in r["expr"] else "")
            for g in rules["groups"]
            for r in g["rules"]
            if "record" in r
            and re.search(r"time_to_first_token_seconds_bucket\{[^}]*le=~", r["expr"])
        }
    )
    assert len(records) == 2, records
    (tmp_path / "rules.yaml").write_text(dump_yaml(rules), encoding="utf-8")
    target = {"namespace": "ns", "job": "svc"}
    expected = {"vllm-0.8.3.prom": 0, "vllm-0.8.prom": 1}
    suite = {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": input_series(load_fixture(fixture), target),
                "promql_expr_test": [
                    {
                        "expr": f"(count({record}) > bool 0) or vector(0)",
                        "eval_time": "20m",
                        "exp_samples": [{"labels": "{}", "value": value}],
                    }
                    for record in records
                ],
            }
            for fixture, value in expected.items()
        ],
    }
    (tmp_path / "t.yaml").write_text(dump_yaml(suite), encoding="utf-8")
    done = run_promtool("test", "rules", "t.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


# --- every server whose bounds changed --------------------------------------------------------

REFUSED = [
    pytest.param(
        spec_data("sglang", serverVersion="0.5.1", slos=slo("e2e", "1200s")),
        "spec.slos[0].threshold",
        ["sglang ≥ 0.4.7, < 0.5.2", "200, 400, 800 s", "from sglang 0.5.2 on it is a bucket bound"],
        id="sglang 0.5.1: 1200s e2e exists from 0.5.2 on",
    ),
    pytest.param(
        spec_data("sglang", serverVersion="0.5.2", slos=slo("e2e", "800s")),
        "spec.slos[0].threshold",
        ["sglang ≥ 0.5.2 (", "400, 600, 1200, 1800, 2400 s — use one of those"],
        id="sglang 0.5.2 dropped the 800s bound: no upgrade brings it back",
    ),
    pytest.param(
        spec_data("sglang", serverVersion="0.5.11", slos=slo("queue", "10ms")),
        "spec.slos[0].threshold",
        ["sglang ≥ 0.5.2, < 0.5.12", "from sglang 0.5.12 on", "spec.metrics.requestQueueTime.buckets"],
        id="sglang 0.5.11: a 10ms queue bound exists from 0.5.12 on",
    ),
    pytest.param(
        spec_data("triton", serverVersion="24.08", slos=slo("ttft", "2s")),
        "spec.slos[0].indicator",
        ["Triton before 24.11", "triton ≥ 24.11 exposes nv_inference_first_response_histogram_ms: upgrade"],
        id="triton 24.08 has no first-response histogram: a TTFT SLO would read nothing",
    ),
    pytest.param(
        spec_data("triton", serverVersion="2.49.0", slos=slo("ttft", "2s")),
        "spec.slos[0].indicator",
        ["triton ≥ 2.52.0 exposes"],
        id="the same in Triton's server numbering",
    ),
    pytest.param(
        spec_data("vllm", serverVersion="0.8.0", serverVariant="v0", alerts={"slowRequests": {"indicator": "itl", "threshold": "5s"}}),
        "spec.alerts.slowRequests.threshold",
        ["vllm v0 ≥ 0.8, < 0.8.4", "0.75, 1, 2.5 s", "from vllm 0.8.4 on it is a bucket bound"],
        id="vllm V0 0.8.0: a 5s ITL bound exists from 0.8.4 on",
    ),
    pytest.param(
        spec_data("vllm", serverVersion="0.8.1", alerts={"latencyP99": {"indicator": "itl", "threshold": "3s"}}),
        "spec.alerts.latencyP99.threshold",
        ["not below the largest bucket bound 2.5s", "vllm:time_per_output_token_seconds with the bounds"],
        id="vllm 0.8.1: an ITL p99 above 2.5s could never fire",
    ),
    pytest.param(
        spec_data("vllm", serverVersion="0.8.2", metrics={"prefix": "ray_"}, slos=slo("ttft", "20s")),
        "spec.slos[0].threshold",
        ["ray_vllm:time_to_first_token_seconds (nearest: below 10s)", "from vllm 0.8.4 on"],
        id="a prefixed preset keeps its release's bounds",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("data", "path", "parts"), REFUSED)
def test_a_threshold_the_declared_release_cannot_serve_is_refused(
    data: dict[str, Any], path: str, parts: list[str]
) -> None:
    errors = errors_of(data)
    matching = [e for e in errors if e.startswith(f"{path}: ")]
    assert matching, errors
    for part in parts:
        assert part in matching[0], matching[0]


ACCEPTED = [
    pytest.param(spec_data("vllm", serverVersion="0.8.2", slos=slo("ttft", "2500ms"), alerts={"latencyP99": {"threshold": "30s"}}), id="vllm: thresholds that are bounds of 0.8.2 and 0.11 pass on 0.8.2"),
    pytest.param(spec_data("vllm", serverVersion="0.11", slos=slo("ttft", "2500ms"), alerts={"latencyP99": {"threshold": "30s"}}), id="vllm: the same thresholds pass on 0.11"),
    pytest.param(spec_data("sglang", serverVersion="0.5", slos=slo("e2e", "400s")), id="sglang: 400s is a bound of the whole 0.5 line"),
    pytest.param(spec_data("sglang", serverVersion="0.5.12", slos=slo("queue", "10ms")), id="sglang 0.5.12 has the 10ms queue bound"),
    pytest.param(spec_data("triton", serverVersion="24.11", slos=slo("ttft", "2s"), alerts={"latencyP99": {"threshold": "3s"}}), id="triton 24.11 has the first-response histogram"),
    pytest.param(spec_data("vllm", serverVersion="0.8.2", metrics={"timeToFirstToken": {"buckets": [1, 5, 20, 60]}}, slos=slo("ttft", "20s")), id="declared buckets replace the release's"),
    pytest.param(spec_data("vllm", serverVersion="0.8.2", metrics={"requestDuration": {"buckets": [1, 10, 60, 120]}}, alerts={"latencyP99": {"threshold": "90s"}}), id="declared buckets lift the p99 ceiling"),
    pytest.param(spec_data("tgi", serverVersion="3.3.7", slos=slo("e2e", "8522ms")), id="tgi: one list in every release"),
]  # fmt: skip


@pytest.mark.parametrize("data", ACCEPTED)
def test_a_threshold_every_declared_release_serves_is_accepted_quietly(
    data: dict[str, Any],
) -> None:
    assert [w for w in warnings_of(data) if "threshold" in w] == []


# --- a version that names several releases, or none -----------------------------------------


def test_a_version_line_spanning_different_bounds_is_refused_with_the_fix() -> None:
    (error,) = errors_of(spec_data("sglang", serverVersion="0.5", slos=slo("e2e", "800s")))
    assert error.startswith(
        'spec.slos[0].threshold: spec.serverVersion "0.5" names every sglang 0.5.x release, '
        "and sglang ≥ 0.5.2 exposes sglang:e2e_request_latency_seconds with the bounds"
    )
    assert "write in full the release your pods run" in error
    # Written in full, each side of the change gets its own answer.
    assert plan_of(spec_data("sglang", serverVersion="0.5.1", slos=slo("e2e", "800s")))
    assert errors_of(spec_data("sglang", serverVersion="0.5.2", slos=slo("e2e", "800s")))


def test_a_vllm_line_is_checked_from_its_first_release() -> None:
    (error,) = errors_of(spec_data("vllm", serverVersion="0.8", slos=slo("ttft", "20s")))
    assert 'vllm ≥ 0.8, < 0.8.4 (spec.serverVersion "0.8")' in error
    assert warnings_of(spec_data("vllm", serverVersion="0.8", slos=slo("ttft", "5s"))) == []


def test_a_threshold_a_later_release_drops_is_accepted_with_a_warning() -> None:
    (warning,) = warnings_of(spec_data("sglang", serverVersion="0.5.1", slos=slo("e2e", "800s")))
    assert warning.startswith(
        "spec.slos[0].threshold: 800s is a bucket bound of sglang ≥ 0.4.7, < 0.5.2, not of "
        "sglang ≥ 0.5.2"
    )
    assert "once pods run 0.5.2 or later the SLI would select no bucket" in warning


def test_without_a_version_the_newest_bounds_hold_and_older_releases_warn() -> None:
    data = spec_data("vllm", slos=slo("ttft", "20s"))
    assert plan_of(data).slos[0].threshold_bound == 20.0
    (warning,) = warnings_of(data)
    assert warning.startswith(
        "spec.slos[0].threshold: spec.serverVersion is unset, so 20s was checked against the "
        "newest vllm bounds; vllm ≥ 0.8, < 0.8.4 exposes vllm:time_to_first_token_seconds"
    )
    assert warning.endswith("set spec.serverVersion to the release your pods run")
    # A bound of every release: nothing to say.
    assert warnings_of(spec_data("vllm", slos=slo("ttft", "2500ms"))) == []
    # Above every top: refused against the newest bounds, as before.
    (error,) = errors_of(spec_data("vllm", alerts={"latencyP99": {"threshold": "8000s"}}))
    assert "vllm ≥ 0.8.4 (spec.serverVersion unset: the newest)" in error
    assert "use one of those" in error


# --- the data behind it -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("server", "variant", "expected"),
    [
        pytest.param("vllm", None, [("0.8", "0.8.3"), ("0.8.3", "0.8.4"), ("0.8.4", "0.9.2"), ("0.9.2", "0.11"), ("0.11", "0.13"), ("0.13", None)], id="vllm V1 entries"),
        pytest.param("vllm", "v0", [("0.8", "0.8.4"), ("0.8.4", "0.11")], id="vllm V0 ends where 0.11 removed it"),
        pytest.param("sglang", None, [("0.4.7", "0.5.2"), ("0.5.2", "0.5.3"), ("0.5.3", "0.5.12"), ("0.5.12", None)], id="sglang"),
        pytest.param("triton", None, [("23.04", "24.11"), ("24.11", None)], id="triton"),
    ],
)  # fmt: skip
def test_entries_span_the_releases_up_to_the_next(
    server: str, variant: str | None, expected: list[tuple[str, str | None]]
) -> None:
    got = [(s.since.text, s.until.text if s.until else None) for s in spans(server, variant)]
    assert got == expected


@pytest.mark.parametrize(
    ("server", "key", "tops"),
    [
        pytest.param("vllm", "requestDuration", [60.0, 7680.0], id="vllm e2e"),
        pytest.param("vllm", "timeToFirstToken", [10.0, 2560.0], id="vllm ttft"),
        pytest.param("vllm", "interTokenLatency", [2.5, 80.0], id="vllm itl"),
        pytest.param("sglang", "requestDuration", [800.0, 2400.0], id="sglang e2e"),
        pytest.param("triton", "timeToFirstToken", [None, 5.0], id="triton ttft"),
    ],
)
def test_releases_with_different_bounds_are_told_apart(
    server: str, key: str, tops: list[float | None]
) -> None:
    reaches = Releases(server, None, None, frozenset()).reaches(key)
    got = [
        None if r.histogram is None else r.histogram.buckets[-1] * r.histogram.seconds_per_unit
        for r in reaches
    ]
    assert got == tops


def test_a_release_written_short_covers_its_line() -> None:
    line = parse_release("vllm", "0.8")
    assert line.covers((0, 8, 4)) and line.covers((0, 8)) and not line.covers((0, 9))
    exact = parse_release("vllm", "0.8.0")
    assert exact.covers((0, 8)) and not exact.covers((0, 8, 4))
    assert parse_release("triton", "24.08").covers((24, 8)) and not parse_release(
        "triton", "24.08"
    ).covers((24, 11))


PRESETS_DOC = (ROOT / "docs" / "presets.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("server", sorted(PRESETS))
def test_the_docs_table_lists_every_bucket_list_of_every_release(server: str) -> None:
    section = PRESETS_DOC.split("## Bucket bounds per release", 1)[1].split("\n## ", 1)[0]
    rows = [r for r in section.splitlines() if r.startswith(f"| {server} ")]
    assert rows
    keys = {k for p in PRESETS[server] for k in p.latency}
    for key in sorted(keys):
        reaches = Releases(server, None, None, frozenset()).reaches(key)
        if len(reaches) == 1:
            continue
        for reach in reaches:
            releases = f"≥ {reach.since.text}" + (f", < {reach.until.text}" if reach.until else "")
            found = [
                r for r in rows if re.match(rf"\| {server}[^|]* \| [^|]*{re.escape(releases)}", r)
            ]
            assert found, (key, releases)
            if reach.histogram is not None:
                assert any(f"({len(reach.histogram.buckets)})" in r for r in found), (key, releases)
