"""The render pipeline: specs → plans → outputs (in memory) → promtool → disk.

Nothing is written until every spec has loaded and resolved and every rendered rule file has
passed ``promtool check rules`` and every generated test file ``promtool test rules`` (each run
once over all files), and the Alertmanager configurations ``amtool check-config`` and their
route tests ``amtool config routes test``. Then :mod:`generator.writer` replaces files
atomically. Building is :mod:`generator.build`'s (per service, cached, in parallel), reuse
:mod:`generator.cache`'s.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from generator import amtool, naming, promtool, writer
from generator.build import (
    BundleFiles,
    Outputs,
    build_outputs,
    build_services,
    chunk_size,
    fleet_outputs,
    fleet_plan_outputs,
    fork_pool,
    in_own_process,
    only,
    parallel_workers,
    variant,
)
from generator.builders import alertmanager
from generator.builders.alertmanager import retention_warnings
from generator.builders.alertmanager_routing import routing_warnings
from generator.builders.chart_names import check_chart_names, configured_release
from generator.builders.dashboard import check_dashboard_names
from generator.builders.operator_selection import check_selection
from generator.builders.overlay import check_overlay
from generator.builders.rulefile import rule_file
from generator.builders.runbooks import runbook_outputs
from generator.cache import OutputCache, plan_digest, proof_key
from generator.errors import Diagnostic, Level, ObsgenError, processing
from generator.filebacked import FileBacked
from generator.plan import ServicePlan, resolve
from generator.progress import Progress
from generator.project_config import load_project_config
from generator.proof_split import RuleFiles, assertion_keys, estimated_cost, split_test_file
from generator.receivers import load_receivers
from generator.spec import find_spec_files, load_spec
from generator.yamlio import dump_yaml, generated_header

__all__ = [
    "Bundle",
    "RenderOptions",
    "build_outputs",
    "find_specs",
    "load_plans",
    "render",
    "render_bundle",
    "rules_outputs",
]


# Spec discovery lives with the spec loader; kept here under its pipeline name.
find_specs = find_spec_files


def display_path(path: Path, root: Path) -> str:
    """How errors and headers name a spec: relative to ``root`` (the output repository) when
    inside it, else relative to the working directory when inside that, else as given."""
    for base in (root, Path.cwd()):
        try:
            return path.resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            continue
    return str(path)


def _load_one(job: tuple[Path, Path]) -> ServicePlan | list[Diagnostic]:
    """One spec's plan (its digest derived too: the cache asks for it next), or its
    problems."""
    path, root = job
    shown = display_path(path, root)
    try:
        with processing(shown):
            plan = resolve(load_spec(path, shown), shown)
    except ObsgenError as err:
        return list(err.diagnostics)
    plan_digest(plan)
    return plan


def _load_in_worker(job: tuple[Path, Path]) -> ServicePlan | list[Diagnostic] | None:
    """:func:`_load_one`, or None when it raised something unexpected: the parent loads that
    spec again itself, so the error reaches the CLI tagged with its file."""
    try:
        return _load_one(job)
    except Exception:
        return None


def load_plans(
    spec_paths: Iterable[Path],
    root: Path,
    progress: Callable[[int], None] | None = None,
    jobs: int | None = None,
) -> list[ServicePlan]:
    """Load and resolve every spec, collecting all errors before failing.

    ``progress`` is called with 1 after each spec. From :data:`generator.build.PARALLEL_FROM`
    specs on, worker processes load them (``jobs`` of them, default one per usable core).

    Raises:
        ObsgenError: every problem in every file (exit code 2), including two specs that
            declare the same service name.
    """
    jobs_args = [(path, root) for path in spec_paths]
    workers = parallel_workers(len(jobs_args), jobs)
    loaded: Iterable[ServicePlan | list[Diagnostic] | None]
    pool = None
    if workers:
        pool = fork_pool(workers)
        loaded = pool.map(_load_in_worker, jobs_args, chunksize=chunk_size(len(jobs_args), workers))
    else:
        loaded = map(_load_one, jobs_args)
    problems: list[Diagnostic] = []
    plans: list[ServicePlan] = []
    owners: dict[str, str] = {}
    try:
        for job, found in zip(jobs_args, loaded, strict=True):
            if found is None:
                found = _load_one(job)
            if isinstance(found, list):
                problems.extend(found)
                continue
            plan = found
            if plan.name in owners:
                problems.append(
                    Diagnostic(
                        plan.source,
                        "metadata.name",
                        f"service {plan.name!r} is already defined in {owners[plan.name]}",
                    )
                )
                continue
            owners[plan.name] = plan.source
            plans.append(plan)
            if progress is not None:
                progress(1)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    if problems:
        raise ObsgenError(problems)
    return sorted(plans, key=lambda p: p.name)


def rules_outputs(plans: Sequence[ServicePlan]) -> Outputs:
    """``rules/<service>.rules.yaml`` for each plan (alone: a render builds them with the rest
    of each service's files, :func:`generator.build.service_outputs`)."""
    return {
        naming.rules_file(p.name): dump_yaml(rule_file(p), header=generated_header(p.source))
        for p in plans
    }


@dataclass
class Bundle:
    """What a render produced, before anything is written.

    Attributes:
        outputs: every rendered file by repository path, sorted (services reused or spooled
            are read from their files when asked for).
        stale: generated files on disk that no spec produces any more.
        services: each service's own files by service name (a subset of ``outputs``).
        keys: each service's :meth:`OutputCache.key`, when rendered with a cache.
        partial: only named spec files were rendered (no fleet-wide files, nothing stale).
        warnings: each service's size warnings by name (recorded with it in the cache).
    """

    outputs: BundleFiles
    stale: list[str]
    services: dict[str, Mapping[str, str]]
    keys: dict[str, str] = field(default_factory=dict)
    partial: bool = False
    warnings: dict[str, list[Diagnostic]] = field(default_factory=dict)


def promtool_problems(
    outputs: Mapping[str, str],
    root: Path | None = None,
    services: Mapping[str, Mapping[str, str]] | None = None,
    cache: OutputCache | None = None,
    progress: Progress | None = None,
    unproved: Collection[str] = (),
) -> list[Diagnostic]:
    """Run ``promtool check rules`` over all rule files and, beside it, ``promtool test
    rules`` over the generated test files, in a temp copy of the outputs. Returns the problems
    found: the check's when it fails, else the tests'.

    A service's tests are not run again when its rule and test files are byte-identical to
    those on disk under ``root`` (they passed when that render wrote them; the test suite
    re-runs every committed test file), or when ``cache`` holds a passed proof of exactly
    these files (:func:`generator.cache.proof_key`); proofs that pass are recorded there.
    ``services`` (each service's own files by name) saves finding them in ``outputs``.
    ``promtool check rules`` runs over every rule file but those of services whose proof the
    cache records for these very files and this promtool (that proof checked them: at 1,000
    services reused from the cache, 22 s of checking saved). Each test file runs split by the
    rule groups its test groups observe (:func:`generator.proof_split.split_test_file`).
    With ``cache``, an assertion (one ``alert_rule_test`` or ``promql_expr_test`` entry) whose
    inputs are those of an assertion of the service's test files on disk under ``root`` is not
    run again: those files passed when a render wrote them, and the test suite re-runs them.

    ``unproved``: services left out of both (their rules use syntax this promtool cannot
    parse, :func:`utf8_unproved`); nothing is recorded as proved for them.

    Raises:
        ObsgenError: promtool is missing.
    """
    rules = sorted(p for p in outputs if p.startswith("rules/") and p.endswith(".rules.yaml"))
    if services is None:
        services = _by_service(outputs)
    tool = promtool.find_promtool() if cache is not None else ""
    proofs: dict[str, str] = {}
    to_prove: list[str] = []
    proven: set[str] = set()  # checked and tested by this promtool already, as the cache says
    for name, own in sorted(services.items()):
        if name in unproved:
            continue
        mine = [p for p in own if p.startswith("rules/") and p.endswith(".test.yaml")]
        key = proof_key(own, name, tool) if cache is not None and mine else None
        if cache is not None and key is not None and cache.proven(name, key):
            proven.add(name)
            continue
        if not mine or (isinstance(own, FileBacked) and own.on_disk):
            continue  # the files on disk, unchanged since a render wrote them
        if root is not None and _unchanged_on_disk(own, root, name):
            continue
        if key is not None:
            proofs[name] = key
        to_prove.append(name)
    skipped = {*proven, *unproved}
    rules = [r for r in rules if r.removeprefix("rules/").split(".")[0] not in skipped]
    if not rules:
        return []
    owner = {
        p: name
        for name in to_prove
        for p in services[name]
        if p.startswith("rules/") and p.endswith(".test.yaml")
    }
    tests = sorted(owner)
    # Assertions of the files on disk passed when a render wrote them: only those whose
    # inputs changed run again (generator/proof_split.py; --no-cache runs every one).
    passed: dict[str, set[str]] = {}
    if root is not None and cache is not None:
        on_disk: RuleFiles = {}
        for rel in tests:
            passed.setdefault(owner[rel], set()).update(assertion_keys(root / rel, on_disk))
    with tempfile.TemporaryDirectory(prefix="obsgen-check-") as tmp:
        base = Path(tmp)
        for rel in (*rules, *tests):
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            (base / rel).write_text(outputs[rel], encoding="utf-8")
        # The check runs beside the split and the tests (a one-service proof waits ~0.2 s
        # less); its verdict comes first: the parts assume that every rule loads.
        with ThreadPoolExecutor(max_workers=1) as beside:
            checking = beside.submit(promtool.check_rules, [base / r for r in rules], rules)
            costs: dict[Path, int] = {}
            read: RuleFiles = {}
            parts = [
                (part, t)
                for t in tests
                for part in split_test_file(base / t, costs, passed.get(owner[t], ()), read)
            ]
            if progress is not None:
                progress.phase("promtool test rules", len(parts))
            tested = promtool.test_rules(
                [part for part, _ in parts],
                [t for _, t in parts],
                on_done=(lambda n: progress.advance(n)) if progress is not None else None,
                cost=lambda part: costs[part] if part in costs else estimated_cost(part),
            )
            checked = checking.result()
        if not checked.ok:
            return list(checked.diagnostics)
        if tested.ok and cache is not None:
            for name, key in proofs.items():
                cache.prove(name, key)
        return list(tested.diagnostics)


def _by_service(outputs: Mapping[str, str]) -> dict[str, Mapping[str, str]]:
    """Each service's rule and test files, by the service name in ``rules/<service>.…``."""
    found: dict[str, dict[str, str]] = {}
    for path, text in outputs.items():
        if path.startswith("rules/") and path.endswith(".yaml"):
            found.setdefault(path[6:].split(".")[0], {})[path] = text
    return dict(found)


def _unchanged_on_disk(own: Mapping[str, str], root: Path, service: str) -> bool:
    """True when every ``rules/<service>.*`` file of ``own`` equals the file on disk."""
    mine = [p for p in own if p.startswith(f"rules/{service}.")]
    for rel in mine:
        path = root / rel
        try:
            if path.read_text(encoding="utf-8") != own[rel]:
                return False
        except (OSError, UnicodeDecodeError):
            return False
    return bool(mine)


def amtool_problems(outputs: Mapping[str, str], root: Path | None = None) -> list[Diagnostic]:
    """Run ``amtool check-config`` over the Alertmanager configurations among ``outputs`` (the
    standalone file and the kube-prometheus-stack values' ``alertmanager.config``), then
    ``amtool config routes test`` for every case of ``alertmanager/routes.test.yaml`` that the
    routing tree can tell from the others (:func:`generator.amtool.distinct_cases`).

    With ``root``, the route tests are skipped when the configuration and the tests are
    byte-identical to those on disk (they passed when that render wrote them; the test suite
    re-runs them). ``check-config`` always runs.

    Raises:
        ObsgenError: amtool is missing.
    """
    config_path, values_path = alertmanager.CONFIG_FILE, alertmanager.VALUES_FILE
    tests_path = alertmanager.ROUTE_TESTS_FILE
    if config_path not in outputs:
        return []
    with tempfile.TemporaryDirectory(prefix="obsgen-amtool-") as tmp:
        files, names = [Path(tmp) / "alertmanager.yaml"], [config_path]
        files[0].write_text(outputs[config_path], encoding="utf-8")
        if values_path in outputs:
            values = yaml.load(outputs[values_path], Loader=yaml.CSafeLoader)
            files.append(Path(tmp) / "values-config.yaml")
            files[1].write_text(yaml.safe_dump(values["alertmanager"]["config"]), "utf-8")
            names.append(f"{values_path} (alertmanager.config)")
        problems = amtool.check_config(files, names)
        if problems or tests_path not in outputs:
            return problems
        if root is not None and all(
            (root / p).is_file() and (root / p).read_text(encoding="utf-8") == outputs[p]
            for p in (config_path, tests_path)
        ):
            return []
        listed = yaml.load(outputs[tests_path], Loader=yaml.CSafeLoader)["cases"]
        cases = [(c["labels"], c["receiver"]) for c in listed]
        # Cases the routing tree cannot tell apart (they differ only in labels no route reads,
        # such as `service`: 39,500 cases at 1,000 services) are tested once.
        read = amtool.routing_labels(yaml.load(outputs[config_path], Loader=yaml.CSafeLoader))
        chosen = amtool.distinct_cases(cases, read)
        return amtool.test_routes(files[0], tests_path, [cases[i] for i in chosen], chosen)


# A link from a service's runbook page to a page of every service (``](../ModelTargetDown.md)``).
_FLEET_PAGE_LINK = re.compile(r"\]\(\.\./([A-Za-z0-9]+\.md)\)")


def linked_runbooks(
    plans: Sequence[ServicePlan], services: Mapping[str, Mapping[str, str]], root: Path
) -> Outputs:
    """The pages of every service (``docs/runbooks/<Alert>.md``) that the runbook pages of
    ``plans`` link to and that do not exist under ``root`` yet.

    A render of some spec files owns no fleet-wide file, but a page must not link to one that
    is missing: a new repository's first ``obsgen render specs/x.yaml`` gets them. A page that
    exists is the full render's (it lists every service) and is left alone.
    """
    linked: set[str] = set()
    for plan in plans:
        own = services[plan.name]
        prefix = f"{naming.RUNBOOKS_DIR}/{plan.name}/"
        for rel in own:
            if rel.startswith(prefix) and rel.endswith(".md"):
                linked.update(
                    f"{naming.RUNBOOKS_DIR}/{page}" for page in _FLEET_PAGE_LINK.findall(own[rel])
                )
    missing = sorted(p for p in linked if not (root / p).exists())
    if not missing:
        return {}
    pages = runbook_outputs(plans)
    return {p: pages[p] for p in missing if p in pages}


@dataclass(frozen=True)
class RenderOptions:
    """What a render is asked for, in one place: the CLI fills it from its flags and
    ``obsgen.yaml``; nothing else carries these choices.

    Attributes:
        run_promtool: prove with promtool and amtool before returning.
        dashboards_via: ``configmaps`` or ``values`` (``render.dashboardsVia``).
        fleet_name: ``render.fleetName`` (None: from the services' namespaces).
        mimir: also ``mimir/<service>.yaml``.
        outputs: ``render.outputs`` (None: every install path): the bundle holds only the
            files of those paths (:func:`naming.output_kind`); the others are still built and
            proved. Without the tests on disk nothing shows that a service reused later was
            proved: without ``run_promtool`` nothing is recorded in the cache then, so the next
            render builds and proves those services again.
        jobs: worker processes at most (None: one per usable core).
    """

    run_promtool: bool = True
    dashboards_via: str = "configmaps"
    fleet_name: str | None = None
    mimir: bool = False
    outputs: tuple[str, ...] | None = None
    jobs: int | None = None


def utf8_unproved(
    plans: Sequence[ServicePlan], warn: Callable[[Diagnostic], None] | None = None
) -> set[str]:
    """Services whose rules read UTF-8 metric names (``prometheus.version: "3"``) when the
    installed promtool predates Prometheus 3's quoted syntax (:data:`promtool.UTF8_SINCE`):
    it cannot parse them, so their promtool proof is not run, and ``warn`` says so per spec.
    Empty when no plan reads such names or promtool is 3.0 or later.

    Raises:
        ObsgenError: promtool is missing (only asked when a plan reads such names).
    """
    quoted = [p for p in plans if p.utf8_names]
    if not quoted:
        return set()
    tool = promtool.find_promtool()
    if promtool.reads_utf8_names(tool):
        return set()
    found = promtool.version(tool)
    shown = ".".join(map(str, found)) if found else "of unknown version"
    for plan in quoted:
        more = f" (and {len(plan.utf8_names) - 1} more)" if len(plan.utf8_names) > 1 else ""
        message = (
            f"promtool proof NOT run for this spec: its rules read {plan.utf8_names[0]!r}{more} "
            f"with Prometheus 3 quoted selectors, and the installed promtool {shown} predates "
            "that syntax (it needs promtool 3.0 or later); its rules and generated tests are "
            "written unproved — run `promtool check rules` and `promtool test rules` with "
            "promtool 3 before deploying them"
        )
        if warn is not None:
            warn(Diagnostic(plan.source, "spec.prometheus.version", message, Level.WARNING))
    return {p.name for p in quoted}


def render_bundle(
    root: Path,
    spec_args: Sequence[str],
    options: RenderOptions = RenderOptions(),
    warn: Callable[[Diagnostic], None] | None = None,
    cache: OutputCache | None = None,
    progress: Progress | None = None,
    spool_to: Path | None = None,
) -> Bundle:
    """Load, resolve, build and (with ``options.run_promtool``) check everything with
    promtool and amtool; write nothing.

    ``root`` is the repository the outputs belong to (``--out``); specs named in
    ``spec_args`` are paths as given (relative to the working directory), and without any the
    working directory's ``specs/`` folder is read. Spec *files* named in ``spec_args`` render
    those services' own files only. ``warn`` receives each spec's warnings (alerts left out,
    relative links) and the receivers' (teams without receivers) before building, then the
    install overlays' size warnings. ``cache`` reuses unchanged services' outputs and proofs
    (:mod:`generator.cache`); ``progress`` shows the phases on a terminal; ``spool_to`` (a
    folder that outlives the bundle) keeps many built services as files, not in memory.

    Raises:
        ObsgenError: bad specs or receivers (exit 2), or promtool/amtool failures on the
            outputs (exit 1).
    """
    run_promtool, dashboards_via, jobs = options.run_promtool, options.dashboards_via, options.jobs
    fleet_name, mimir, outputs = options.fleet_name, options.mimir, options.outputs
    paths = find_specs(spec_args, Path("."))
    if progress is not None:
        progress.phase("loading specs", len(paths))
    plans = load_plans(paths, root, progress.advance if progress is not None else None, jobs)
    receivers = load_receivers(root)
    # Spec *files* named on the command line render those services' own files only: fleet-wide
    # files (overview dashboard, values-observability, runbooks) and other services' outputs
    # must not be rewritten from a partial set of specs, nor deleted as stale.
    partial = bool(spec_args) and all(Path(arg).is_file() for arg in spec_args)
    if warn is not None:
        for plan in plans:
            for warning in plan.warnings:
                warn(warning)
        for warning in routing_warnings(plans, receivers, complete=not partial):
            warn(warning)
        for warning in retention_warnings(receivers):
            warn(warning)
    check_dashboard_names(plans)
    check_overlay(plans, dashboards_via)
    install = load_project_config(root).install
    check_chart_names(plans, configured_release(install), warn)
    check_selection(plans, install, outputs or naming.OUTPUT_KINDS, warn or _no_warning)
    if progress is not None:
        progress.phase("building services", len(plans))
    service_warnings: dict[str, list[Diagnostic]] = {}
    from_plans: Outputs = {}

    def build_fleet_files() -> None:
        # From the plans alone: built in this process while workers build the services.
        if not partial:
            from_plans.update(fleet_plan_outputs(plans, fleet_name))

    # The Alertmanager files need only the plans and the receivers: at fleet size a process of
    # their own builds them beside everything else.
    with in_own_process(
        lambda: alertmanager.alertmanager_outputs(plans, receivers),
        enabled=parallel_workers(len(plans), jobs) > 0,
    ) as alertmanager_files:
        services = build_services(
            plans,
            dashboards_via,
            cache,
            progress.advance if progress is not None else None,
            jobs,
            spool_to,
            mimir,
            service_warnings,
            build_fleet_files,
            beside=root,
            outputs=outputs,
        )
        if spool_to is not None:
            writer.flush_soon(spool_to)
        if warn is not None:
            for plan in plans:
                for warning in service_warnings.get(plan.name, []):
                    warn(warning)
        if progress is not None:
            progress.phase("building fleet files", 1)
        if partial:
            fleet = linked_runbooks(plans, services, root)
        else:
            fleet = fleet_outputs(plans, services, dashboards_via, fleet_name, warn, from_plans)
        for path, text in alertmanager_files().items():
            # Of a partial render, only the named services' AlertmanagerConfig files.
            if not partial or any(naming.owned_by(path, plan.name) for plan in plans):
                fleet[path] = text
    parts: list[Mapping[str, str]] = [services[plan.name] for plan in plans]
    parts.append(fleet)
    built = BundleFiles(parts)
    key_variant = variant(dashboards_via, mimir, outputs)
    keys = {p.name: cache.key(p, key_variant) for p in plans} if cache is not None else {}
    if run_promtool:
        unproved = utf8_unproved(plans, warn)
        problems = promtool_problems(built, root, services, cache, progress, unproved)
        problems += amtool_problems(built, root)
        if problems:
            raise ObsgenError(problems, exit_code=1)
    if outputs is not None:
        kinds = {*outputs, *(("mimir",) if mimir else ())}

        def wanted(rel: str) -> bool:
            return naming.output_kind(rel) in kinds

        services = {name: only(own, wanted) for name, own in services.items()}
        built = BundleFiles([*(services[plan.name] for plan in plans), only(fleet, wanted)])
        if "tests" not in kinds and not run_promtool:
            keys = {}
    stale = [] if partial else writer.stale_outputs(root, built, naming.OUTPUT_DIRS)
    return Bundle(built, stale, services, keys, partial, service_warnings)


def render(
    root: Path,
    spec_args: Sequence[str],
    run_promtool: bool = True,
    dashboards_via: str = "configmaps",
    warn: Callable[[Diagnostic], None] | None = None,
    fleet_name: str | None = None,
    mimir: bool = False,
) -> tuple[Outputs, list[str]]:
    """:func:`render_bundle` without a cache: ``(outputs, stale)``: rendered files by
    repository path, and generated files on disk that no spec produces any more.

    Raises:
        ObsgenError: bad specs or receivers (exit 2), or promtool/amtool failures on the
            outputs (exit 1).
    """
    options = RenderOptions(run_promtool, dashboards_via, fleet_name, mimir)
    bundle = render_bundle(root, spec_args, options, warn)
    return dict(bundle.outputs), bundle.stale


def _no_warning(_: Diagnostic) -> None:
    return None
