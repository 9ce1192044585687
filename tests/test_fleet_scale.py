"""Fleet scale (issue 19): parallel builds equal serial ones, unchanged services and proofs are
reused from disk and rebuilt when anything they depend on changes, the fleet overview does not
grow with the fleet, a progress line only on a terminal, repeated warnings printed once."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import re
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from generator import core, naming, writer
from generator.builders.dashboard import fleet_dashboard_output
from generator.cli import main
from generator.core import outputs as core_outputs
from generator.errors import Diagnostic, Level, ObsgenError, summarise
from generator.fleet import cache, pool
from generator.fleet.cache import plan_digest
from generator.fleet.engine import Fleet
from generator.fleet.filebacked import identity
from generator.fleet.progress import Progress
from generator.fleet.services import FleetOptions, build_services
from generator.plan import ServicePlan
from generator.render import find_specs, load_plans
from tests.helpers_promtool import logging_promtool, promtool

REPO = Path(__file__).resolve().parent.parent


def _clone_specs(folder: Path, count: int, example: str = "triton-trtllm") -> list[Path]:
    """``count`` copies of an example spec, each with its own service, job and deployment."""
    text = (REPO / "specs" / f"{example}.yaml").read_text(encoding="utf-8")
    name = re.search(r"^metadata:\s*\{?\s*name: ([a-z0-9-]+)", text, re.M)
    assert name is not None
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        path = folder / f"{example}-{i:02d}.yaml"
        path.write_text(re.sub(rf"\b{name.group(1)}\b", f"svc-{i:02d}", text), encoding="utf-8")
        paths.append(path)
    return paths


def _fleet_build(plans: list[ServicePlan], jobs: int) -> dict[str, str]:
    """Every file of ``plans`` as the fleet layer builds them with ``jobs`` workers."""
    return dict(Fleet(fleet=FleetOptions(jobs=jobs)).build(plans, None).files().items())


@pytest.fixture
def parallel_from_4(monkeypatch: pytest.MonkeyPatch) -> int:
    """Worker processes from 4 services on (16 by default): small cases take the parallel path."""
    monkeypatch.setattr(pool, "PARALLEL_FROM", 4)
    return 4


def test_worker_processes_build_exactly_what_one_process_builds(
    tmp_path: Path, parallel_from_4: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    plans = load_plans(_clone_specs(tmp_path / "specs", parallel_from_4), tmp_path)
    serial = core.build(plans)
    pools: list[int] = []
    original = pool.ProcessPoolExecutor

    def counted(max_workers: int, **kwargs: object) -> object:
        pools.append(max_workers)
        return original(max_workers=max_workers, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pool, "ProcessPoolExecutor", counted)
    assert _fleet_build(plans, jobs=2) == serial
    assert pools == [1, 2]  # the Alertmanager files' own process, then the two workers


def test_a_render_in_worker_processes_writes_what_one_process_writes(
    tmp_path: Path, parallel_from_4: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """Services, Alertmanager files (built in a process of their own) and fleet files alike."""
    one, many = tmp_path / "one", tmp_path / "many"
    _clone_specs(one / "specs", parallel_from_4)
    shutil.copytree(one / "specs", many / "specs")
    assert _render(one, "--jobs=1") == 0
    assert _render(many, "--jobs=2") == 0

    def files(root: Path) -> dict[Path, bytes]:
        return {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}

    assert files(one) == files(many)
    assert any(p.parts[0] == "alertmanager" for p in files(many))


def test_work_in_its_own_process_gives_its_result_or_its_error() -> None:
    with pool.in_own_process(os.getpid) as result:
        assert result() != os.getpid()
    with pool.in_own_process(os.getpid, enabled=False) as result:
        assert result() == os.getpid()

    def failing() -> None:
        raise ObsgenError([Diagnostic("specs/a.yaml", "spec.alerts", "bad")], exit_code=2)

    with pytest.raises(ObsgenError) as caught, pool.in_own_process(failing) as result:
        result()
    assert [str(d) for d in caught.value.diagnostics] == ["specs/a.yaml: spec.alerts: bad"]
    assert caught.value.exit_code == 2


def test_a_spec_error_in_a_worker_reaches_the_parent_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parallel_from_4: int
) -> None:
    plans = load_plans(_clone_specs(tmp_path / "specs", parallel_from_4), tmp_path)
    original = core_outputs.service_rule_tests

    def failing(plan: ServicePlan, groups: Any = None) -> dict[str, str]:
        if plan.name == "svc-03":
            raise ObsgenError([Diagnostic(plan.source, "spec.metrics", "no example value")])
        return original(plan, groups)

    monkeypatch.setattr(core_outputs, "service_rule_tests", failing)  # inherited by forked workers
    with pytest.raises(ObsgenError) as caught:
        _fleet_build(plans, jobs=2)
    assert caught.value.exit_code == 2
    assert [str(d) for d in caught.value.diagnostics] == [
        f"{plans[3].source}: spec.metrics: no example value"
    ]


# --- reuse from disk -----------------------------------------------------------------------


def _render(root: Path, *args: str) -> int:
    """Render ``root``'s specs (its ``specs/`` folder unless ``args`` name specs) into it."""
    named = [a for a in args if not a.startswith("-")]
    specs = [] if named else [str(root / "specs")]
    _write_tests(root)
    return main(["render", "--skip-promtool", "--out", str(root), *args, *specs])


def _write_tests(root: Path) -> None:
    """An ``obsgen.yaml`` writing the tests, unless ``root`` has one: what is reused from
    disk here is a written, unproved render's (without the tests written, a render with
    ``--skip-promtool`` records nothing to reuse)."""
    config = root / "obsgen.yaml"
    if not config.exists():
        root.mkdir(parents=True, exist_ok=True)
        config.write_text("render: {writeTests: true}\n", encoding="utf-8")


def _counting_builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    built: list[str] = []
    original = core_outputs.service_outputs

    def counting(
        plan: ServicePlan,
        dashboards_via: str = "configmaps",
        mimir: bool = False,
        warn: Any = None,
        tests: bool = True,
        overlay: bool = True,
    ) -> dict[str, str]:
        built.append(plan.name)
        return original(plan, dashboards_via, mimir, warn, tests, overlay)

    monkeypatch.setattr(core_outputs, "service_outputs", counting)
    return built


def test_unchanged_services_are_read_back_and_changed_ones_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    specs = _clone_specs(tmp_path / "specs", 3)
    assert _render(tmp_path) == 0
    first = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    built = _counting_builds(monkeypatch)

    assert _render(tmp_path) == 0
    assert built == []  # every service from the cache
    assert "0 changed" in capsys.readouterr().out

    specs[1].write_text(specs[1].read_text().replace("objective: 95", "objective: 96"))
    assert _render(tmp_path) == 0
    assert built == ["svc-01"]
    changed = capsys.readouterr().out
    assert "rules/svc-01.rules.yaml" in changed and "svc-00" not in changed

    # An output edited by hand is rebuilt from its spec, not trusted.
    rules = tmp_path / "rules" / "svc-02.rules.yaml"
    rules.write_text(rules.read_text().replace("> 0", "> 1"))
    built.clear()
    assert _render(tmp_path) == 0
    assert built == ["svc-02"]
    assert rules.read_bytes() == first[rules]

    # The whole bundle is what a render without the cache writes.
    again = tmp_path.parent / f"{tmp_path.name}-again"
    shutil.copytree(tmp_path / "specs", again / "specs")
    assert _render(again, "--no-cache") == 0

    def files(root: Path) -> dict[Path, bytes]:
        return {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}

    assert files(tmp_path) == files(again)


def test_files_moved_in_from_the_spool_are_reused_whole_by_the_next_render(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    parallel_from_4: int,
) -> None:
    _clone_specs(tmp_path / "specs", parallel_from_4)
    assert _render(tmp_path) == 0  # built in workers, spooled, moved into place
    assert not list(tmp_path.glob(".obsgen-spool-*"))
    built = _counting_builds(monkeypatch)
    assert _render(tmp_path, "--jobs=1") == 0  # a rebuild would happen in this process
    assert built == []
    assert "0 changed" in capsys.readouterr().out


def test_a_render_without_a_cache_writes_only_what_differs_and_records_every_service(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    parallel_from_4: int,
) -> None:
    """A fresh clone in CI: outputs committed, no cache. Files already right are kept in place
    (compared in the workers); edited and deleted ones are written back; the cache then holds
    every service, also those whose files were all kept."""
    _clone_specs(tmp_path / "specs", parallel_from_4)
    assert _render(tmp_path) == 0
    first = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    monkeypatch.setenv("OBSGEN_CACHE_DIR", str(tmp_path.parent / f"{tmp_path.name}-cache"))
    edited = tmp_path / "rules" / "svc-01.rules.yaml"
    edited.write_bytes(edited.read_bytes().replace(b"> 0", b"> 1", 1))  # same size
    removed = tmp_path / "dashboards" / "svc-02.json"
    removed.unlink()
    kept = tmp_path / "rules" / "svc-00.rules.yaml"
    kept_identity = identity(kept)
    capsys.readouterr()

    assert _render(tmp_path) == 0

    out = capsys.readouterr().out
    assert out.splitlines()[1:] == ["  dashboards/svc-02.json", "  rules/svc-01.rules.yaml"]
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == first
    assert identity(kept) == kept_identity  # not rewritten
    assert not list(tmp_path.glob(".obsgen-spool-*"))
    built = _counting_builds(monkeypatch)
    assert _render(tmp_path, "--jobs=1") == 0
    assert built == []  # every service recorded, kept in place or not
    assert "0 changed" in capsys.readouterr().out


def test_files_kept_in_place_with_a_new_identity_are_recorded_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parallel_from_4: int
) -> None:
    """A checkout rewrites every output with the same bytes: the render that finds them right
    records their new identities, and the next one builds nothing."""
    _clone_specs(tmp_path / "specs", parallel_from_4)
    assert _render(tmp_path) == 0
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.parts[len(tmp_path.parts)] != "specs":
            data = path.read_bytes()
            path.unlink()
            path.write_bytes(data)
    assert _render(tmp_path) == 0  # the cache's identities are stale: built, and all kept
    built = _counting_builds(monkeypatch)
    assert _render(tmp_path, "--jobs=1") == 0
    assert built == []


@pytest.mark.parametrize("change", ["edited", "deleted"])
def test_a_file_kept_in_place_that_changes_during_the_render_stops_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    parallel_from_4: int,
    change: str,
) -> None:
    """Its text is not held, so it cannot be written back: the render says so and changes
    nothing, records nothing, and the next render puts the file right."""
    _clone_specs(tmp_path / "specs", parallel_from_4)
    assert _render(tmp_path, "--no-cache") == 0
    board = tmp_path / "dashboards" / "svc-01.json"
    good = board.read_bytes()
    original = writer.stale_outputs

    def changing(*args: Any, **kwargs: Any) -> list[str]:  # someone saves a file meanwhile
        if change == "edited":
            board.write_bytes(good.replace(b'"title"', b'"TITLE"', 1))
        else:
            board.unlink()
        return original(*args, **kwargs)

    monkeypatch.setattr(writer, "stale_outputs", changing)
    capsys.readouterr()
    assert _render(tmp_path) == 1
    assert "dashboards/svc-01.json: changed on disk during the render; render again" in (
        capsys.readouterr().err
    )
    monkeypatch.setattr(writer, "stale_outputs", original)
    assert _render(tmp_path) == 0
    assert "  dashboards/svc-01.json" in capsys.readouterr().out.splitlines()
    assert board.read_bytes() == good


def test_pool_workers_leave_ctrl_c_to_the_parent() -> None:
    """A worker interrupted while sending its result would leave the parent waiting."""
    # The parent takes Ctrl-C as Python does, whatever this test process inherited (a
    # background job of a non-interactive shell starts with SIGINT ignored).
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pool.in_own_process(lambda: signal.getsignal(signal.SIGINT)) as handler:
            assert handler() == signal.SIG_IGN
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, inherited)


def test_a_folder_leading_out_of_the_root_is_refused_even_when_every_file_in_it_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], parallel_from_4: int
) -> None:
    other, root = tmp_path / "other", tmp_path / "root"
    _clone_specs(root / "specs", parallel_from_4)
    shutil.copytree(root / "specs", other / "specs")
    assert _render(other) == 0
    assert _render(root) == 0
    shutil.rmtree(root / "rules")
    (root / "rules").symlink_to(other / "rules", target_is_directory=True)  # the same files
    capsys.readouterr()
    assert _render(root) == 2
    err = capsys.readouterr().err
    assert f"{root}/rules: resolves to {other.resolve()}/rules, outside the output root" in err


def test_new_obsgen_code_rebuilds_every_service(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _clone_specs(tmp_path / "specs", 2)
    assert _render(tmp_path) == 0
    built = _counting_builds(monkeypatch)
    monkeypatch.setattr(cache, "code_digest", lambda: "another obsgen")
    assert _render(tmp_path) == 0
    assert built == ["svc-00", "svc-01"]


def test_a_reused_service_repeats_the_warnings_it_was_built_with(tmp_path: Path) -> None:
    """Size warnings come from building a service (in a worker); one read back from the cache
    is not built again, so the cache keeps its warnings with its files."""
    root, folder = tmp_path / "root", tmp_path / "records"
    rel = "rules/a.rules.yaml"
    (root / "rules").mkdir(parents=True)
    (root / rel).write_text("groups: []\n", encoding="utf-8")
    warning = Diagnostic("manifests/a/dashboard.yaml", "", "too large for client-side apply")
    warning = dataclasses.replace(warning, level=Level.WARNING)
    records = cache.OutputCache(root, folder)
    records.remember({"a": "key-1"}, {"a": {rel: "groups: []\n"}}, {"a": [warning]})
    records.save()
    again = cache.OutputCache(root, folder)
    assert again.get("a", "key-1") is not None
    assert again.warnings("a") == [warning]
    assert again.warnings("b") == []


def test_build_services_reports_each_services_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    plans = load_plans(find_specs([], REPO), REPO)[:2]
    original = core_outputs.service_outputs

    def warning(
        plan: ServicePlan,
        via: str,
        mimir: bool,
        warn: Any = None,
        tests: bool = True,
        overlay: bool = True,
    ) -> dict[str, str]:
        if warn is not None:
            warn(Diagnostic(plan.source, "", "big", Level.WARNING))
        return original(plan, via, mimir, warn, tests, overlay)

    monkeypatch.setattr(core_outputs, "service_outputs", warning)
    _, found = build_services(plans)
    assert {name: [d.message for d in ds] for name, ds in found.items()} == {
        p.name: ["big"] for p in plans
    }


_SMALL_SPEC = """\
apiVersion: obsgen/v1alpha1
kind: ModelService
metadata: {name: small, team: t}
spec:
  server: openai-http
  selector: {namespace: ns, job: small}
  alerts:
    errorRatio: {maxRatio: 0.05, for: 5m}
    latencyP99: {enabled: false}
    slowRequests: {enabled: false}
  deployment: {name: small, container: small}
"""


def _small_repo(tmp_path: Path) -> tuple[Path, Path]:
    """A repository holding one small spec (few generated tests: a short proof), and the spec."""
    repo = tmp_path / "repo"
    spec = repo / "specs" / "small.yaml"
    spec.parent.mkdir(parents=True)
    spec.write_text(_SMALL_SPEC, encoding="utf-8")
    _write_tests(repo)  # the assertions the written test files passed are not run again
    return repo, spec


def _render_proved(repo: Path) -> int:
    """Render ``repo``'s specs into it with their promtool proof (as ``make render`` does)."""
    return main(["render", "--out", str(repo), str(repo / "specs")])


def _move_error_threshold(spec: Path) -> None:
    """Move the small spec's error-ratio threshold from 0.05 to 0.06."""
    spec.write_text(spec.read_text().replace("maxRatio: 0.05", "maxRatio: 0.06"))


def test_a_passed_promtool_proof_is_not_run_again_for_the_same_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = logging_promtool(tmp_path, monkeypatch)
    repo, spec = _small_repo(tmp_path)
    assert _render_proved(repo) == 0
    assert "test rules" in log.read_text()

    # Outputs gone (a fresh checkout of another branch): rebuilt, but the proof is reused.
    for path in (repo / "rules").iterdir():
        path.unlink()
    log.write_text("")
    assert _render_proved(repo) == 0
    assert log.read_text() == ""  # the recorded proof checked and tested these very files

    # Other rules: proved again.
    _move_error_threshold(spec)
    log.write_text("")
    assert _render_proved(repo) == 0
    assert "test rules" in log.read_text()


def test_rule_files_no_recorded_proof_covers_are_checked_on_every_render(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = logging_promtool(tmp_path, monkeypatch)
    repo, _ = _small_repo(tmp_path)
    assert _render(repo) == 0  # written with --skip-promtool: never checked
    assert not log.exists()
    assert _render_proved(repo) == 0
    assert log.read_text().startswith("check rules")


def _asserting_promtool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Make obsgen run promtool through a wrapper that logs the alert names each
    ``promtool test rules`` run asserts on, one ``alertname: X`` line per assertion."""
    real = promtool()
    log = tmp_path / "asserted.log"
    log.write_text("")
    wrapper = tmp_path / "promtool"
    wrapper.write_text(
        f'#!/bin/sh\nif [ "$1" = test ]; then shift 2; grep -h "alertname:" "$@" >> "{log}"; '
        f'set -- test rules "$@"; fi\nexec "{real}" "$@"\n'
    )
    wrapper.chmod(0o755)
    monkeypatch.setenv("PROMTOOL", str(wrapper))
    return log


def test_after_an_edit_only_the_assertions_it_can_reach_are_proved_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _asserting_promtool(tmp_path, monkeypatch)
    repo, spec = _small_repo(tmp_path)
    assert _render_proved(repo) == 0
    everything = re.findall(r"alertname: (\S+)", log.read_text())
    assert {"ModelErrorRatioHigh", "ModelSignalMissing", "ModelTargetDown"} <= set(everything)

    # The error-ratio threshold moved: the files on disk passed, so only the assertions that
    # observe that alert (the healthy and zero-traffic cases' included) run again, and those
    # sharing a test group with its cases, whose input series moved with the threshold.
    _move_error_threshold(spec)
    log.write_text("")
    assert _render_proved(repo) == 0
    again = re.findall(r"alertname: (\S+)", log.read_text())
    assert again.count("ModelErrorRatioHigh") == everything.count("ModelErrorRatioHigh")
    assert not {"ModelTargetDown", "ModelSignalMissing"} & set(again)
    assert len(again) < len(everything) / 2

    # --no-cache: every assertion of the changed files.
    spec.write_text(spec.read_text().replace("maxRatio: 0.06", "maxRatio: 0.07"))
    log.write_text("")
    assert main(["render", "--no-cache", "--out", str(repo), str(repo / "specs")]) == 0
    assert sorted(re.findall(r"alertname: (\S+)", log.read_text())) == sorted(everything)


# --- the fleet overview ---------------------------------------------------------------------


def _fleet(plans: list[ServicePlan], count: int) -> list[ServicePlan]:
    return [
        dataclasses.replace(plans[i % len(plans)], name=f"svc-{i:04d}", team=f"team-{i % 7}")
        for i in range(count)
    ]


def test_the_fleet_overview_does_not_grow_with_the_fleet() -> None:
    plans = load_plans(find_specs([], REPO), REPO)
    small = fleet_dashboard_output(_fleet(plans, 40))
    large = fleet_dashboard_output(_fleet(plans, 1000))
    (small_text,) = small.values()
    (large_text,) = large.values()
    assert len(large_text) == len(small_text) < 20_000
    dashboard = json.loads(large_text)
    assert [v["name"] for v in dashboard["templating"]["list"]] == ["datasource", "team", "service"]
    queries = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    assert queries and not any("svc-" in q for q in queries)
    assert all('service=~"$service"' in q for q in queries)


# --- terminal output -------------------------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_drawn_on_a_terminal_only() -> None:
    terminal, pipe = _Terminal(), io.StringIO()
    for stream in (terminal, pipe):
        progress = Progress(stream)
        progress.phase("building services", 3)
        progress.advance(3)
        progress.clear()
    assert "\robsgen: building services 3/3" in terminal.getvalue()
    assert terminal.getvalue().endswith("\r")  # erased again
    assert pipe.getvalue() == ""
    quiet = _Terminal()
    Progress(quiet, enabled=False).phase("building services", 3)
    assert quiet.getvalue() == ""


def test_render_shows_progress_on_a_terminal_unless_quiet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _clone_specs(tmp_path / "specs", 2)
    for args, shown in (([], True), (["--quiet"], False)):
        terminal = _Terminal()
        monkeypatch.setattr(sys, "stderr", terminal)
        assert _render(tmp_path / "out", str(tmp_path / "specs"), *args) == 0
        assert ("obsgen: building services 2/2" in terminal.getvalue()) is shown


def test_a_warning_repeated_across_specs_is_printed_once_with_a_count() -> None:
    same = "not set: alert runbook_url annotations are relative"
    diagnostics = [
        Diagnostic(f"specs/s{i:04d}.yaml", "metadata.runbookBaseUrl", same, Level.WARNING)
        for i in range(1000)
    ]
    diagnostics.append(
        Diagnostic("specs/x.yaml", "spec.alerts.kvCache", "only here", Level.WARNING)
    )
    assert summarise(diagnostics) == [
        "metadata.runbookBaseUrl: warning: not set: alert runbook_url annotations are relative "
        "(in 1,000 specs: specs/s0000.yaml, specs/s0001.yaml, specs/s0002.yaml and 997 more)",
        "specs/x.yaml: spec.alerts.kvCache: warning: only here",
    ]


def test_fleet_records_are_in_every_rule_file_under_shared_names() -> None:
    for plan in load_plans(find_specs([], REPO), REPO):
        text = (REPO / naming.rules_file(plan.name)).read_text(encoding="utf-8")
        for record in (naming.FLEET_INFO, naming.FLEET_SLI, naming.FLEET_ERROR_RATIO):
            assert f"record: {record}\n" in text, (plan.name, record)


def _fleet_with_problems(folder: Path) -> list[Path]:
    """20 specs (enough for worker processes to load them): one invalid, one that repeats
    another's service name."""
    paths = _clone_specs(folder, 20)
    paths[3].write_text(paths[3].read_text().replace("metadata:", "metadata: 7\nnope:"))
    paths[11].write_text(paths[11].read_text().replace("svc-11", "svc-05"))
    return paths


def test_specs_loaded_by_workers_give_the_plans_and_problems_of_one_process(
    tmp_path: Path,
) -> None:
    paths = _clone_specs(tmp_path / "ok", 20)
    serial, parallel = load_plans(paths, tmp_path, jobs=1), load_plans(paths, tmp_path, jobs=2)
    assert [p.name for p in parallel] == [p.name for p in serial]
    assert [repr(p) for p in parallel] == [repr(p) for p in serial]
    # The digest a worker computed (the cache key's input) is that of the plan received here.
    assert all("plan_digest" in p.derived for p in parallel)
    fresh = [hashlib.sha256(repr(p).encode()).hexdigest() for p in parallel]
    assert [plan_digest(p) for p in parallel] == fresh == [plan_digest(p) for p in serial]
    bad = _fleet_with_problems(tmp_path / "bad")
    found = []
    for jobs in (1, 2):
        with pytest.raises(ObsgenError) as err:
            load_plans(bad, tmp_path, jobs=jobs)
        found.append(err.value.diagnostics)
    assert found[0] == found[1]
    assert any("already defined" in d.message for d in found[1])
    assert len(found[1]) >= 2


def test_a_crash_in_a_loading_worker_names_its_spec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import generator.core.load as load_module
    from generator.errors import input_of

    paths = _clone_specs(tmp_path / "specs", 20)
    resolve = load_module.resolve

    def crash_on_seven(spec: Any, source: str) -> ServicePlan:
        if source.endswith("-07.yaml"):
            raise RuntimeError("boom")
        return resolve(spec, source)

    monkeypatch.setattr(load_module, "resolve", crash_on_seven)
    with pytest.raises(RuntimeError) as err:
        load_plans(paths, tmp_path, jobs=2)
    assert input_of(err.value) == "specs/triton-trtllm-07.yaml"
