"""The render pipeline, five stages a newcomer can draw (docs/architecture.md):

    specs ─load─▶ plans ─build─▶ files ─prove─▶ Bundle ─write (generator.writer)─▶ disk

:func:`render_bundle` runs the first four and writes nothing; the load, the build and the proof
are an :class:`~generator.core.engine.Engine`'s, the core or the fleet layer, chosen in
:func:`engine`.
Nothing is written unless every spec loaded and every file passed promtool and amtool.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from generator import naming, writer
from generator.builders.alertmanager import retention_warnings
from generator.builders.alertmanager_routing import routing_warnings
from generator.builders.chart_names import check_chart_names, configured_release
from generator.builders.dashboard import check_dashboard_names
from generator.builders.operator_selection import check_selection
from generator.builders.overlay import check_overlay
from generator.builders.rulefile import rule_file
from generator.builders.runbooks import runbook_outputs
from generator.core.engine import Built, Core, Engine
from generator.core.outputs import BuildOptions, Outputs
from generator.core.prove import promtool3_unproved
from generator.errors import Diagnostic, Level, ObsgenError
from generator.fleet import load as fleet_load
from generator.fleet.bundle import BundleFiles, only
from generator.fleet.cache import OutputCache
from generator.fleet.engine import Fleet
from generator.fleet.progress import Progress
from generator.fleet.services import FleetOptions
from generator.plan import ServicePlan
from generator.project_config import load_project_config
from generator.receivers import ReceiversConfig, load_receivers
from generator.slow_page import plan_slow_page_warnings
from generator.spec import find_spec_files, parse_yaml
from generator.yamlio import dump_yaml, generated_header

__all__ = [
    "Bundle",
    "RenderOptions",
    "engine",
    "find_specs",
    "load_plans",
    "render",
    "render_bundle",
    "rules_outputs",
]


# Spec discovery lives with the spec loader; kept here under its pipeline name.
find_specs = find_spec_files


def load_plans(
    spec_paths: Iterable[Path],
    root: Path,
    progress: Callable[[int], None] | None = None,
    jobs: int | None = None,
    parallel_from: int | None = None,
    others: Iterable[tuple[str, str | None]] = (),
) -> list[ServicePlan]:
    """Load and resolve every spec, collecting all errors before failing; in worker processes
    when many (:func:`generator.fleet.load.load_plans`, nothing built after loading).

    Raises:
        ObsgenError: every problem in every file (exit code 2).
    """
    return fleet_load.load_plans(spec_paths, root, progress, jobs, parallel_from, others)[0]


def rules_outputs(plans: Sequence[ServicePlan]) -> Outputs:
    """``rules/<service>.rules.yaml`` for each plan (alone: a render builds them with the rest
    of each service's files, :func:`generator.core.outputs.service_outputs`)."""
    return {
        naming.rules_file(p.stem): dump_yaml(rule_file(p), header=generated_header(p.source))
        for p in plans
    }


@dataclass
class Bundle:
    """What a render produced, before anything is written.

    Attributes:
        outputs: every rendered file by repository path, sorted (services reused or spooled
            are read from their files when asked for).
        stale: generated files on disk that no spec produces any more.
        services: each service's own files by stem (:attr:`ServicePlan.stem`; a subset of
            ``outputs``).
        keys: each service's :meth:`OutputCache.key`, when rendered with a cache.
        partial: only named spec files were rendered (no fleet-wide files, nothing stale).
        warnings: each service's size warnings by stem (recorded with it in the cache).
    """

    outputs: BundleFiles
    stale: list[str]
    services: dict[str, Mapping[str, str]]
    keys: dict[str, str] = field(default_factory=dict)
    partial: bool = False
    warnings: dict[str, list[Diagnostic]] = field(default_factory=dict)


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
        own = services[plan.stem]
        prefix = f"{naming.RUNBOOKS_DIR}/{plan.stem}/"
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
        outputs: the install paths written (``render.install``'s, or ``render.outputs``:
            :attr:`generator.project_config.RenderConfig.kinds`; None: every install path
            and the tests, as the API's callers and the full layout get them): the bundle
            holds only the files of those paths (:func:`naming.output_kind`); the others are
            still built and proved, but for the promtool tests: left out and not proved
            (without ``run_promtool``), nothing reads them, so they are not built
            (:meth:`BuildOptions.for_render`). Without the tests on disk nothing shows that a
            service reused later was proved: such a render records its services under a key
            of their own (:meth:`BuildOptions.variant`, ``+untested``), which only another
            such render reuses; the next render that proves builds and proves them again.
        jobs: worker processes at most (None: one per usable core).
        fleet: build and prove through the fleet layer (:class:`generator.fleet.engine.Fleet`:
            workers, cache, spooled files); False: the core (:class:`generator.core.engine.Core`),
            in this process, nothing reused. Same bytes, same verdicts.
        parallel_from: worker processes from this many services to build or specs to load on
            (None: :data:`generator.fleet.pool.PARALLEL_FROM`).
    """

    run_promtool: bool = True
    dashboards_via: str = "configmaps"
    fleet_name: str | None = None
    mimir: bool = False
    outputs: tuple[str, ...] | None = None
    jobs: int | None = None
    fleet: bool = True
    parallel_from: int | None = None

    def build_options(self) -> BuildOptions:
        """What the built files depend on."""
        return BuildOptions.for_render(
            self.dashboards_via, self.mimir, self.fleet_name, self.outputs, self.run_promtool
        )


def engine(
    options: RenderOptions,
    root: Path,
    cache: OutputCache | None = None,
    progress: Progress | None = None,
    spool_to: Path | None = None,
) -> Engine:
    """The one place a render chooses how to load, build and prove: the fleet layer, or with
    ``options.fleet`` False the core (``cache``, ``progress`` and ``spool_to`` unused)."""
    if not options.fleet:
        return Core(options.build_options())
    means = FleetOptions(cache, options.jobs, options.parallel_from, spool_to, root)
    return Fleet(options.build_options(), means, root, progress)


def render_bundle(
    root: Path,
    spec_args: Sequence[str],
    options: RenderOptions = RenderOptions(),
    warn: Callable[[Diagnostic], None] | None = None,
    cache: OutputCache | None = None,
    progress: Progress | None = None,
    spool_to: Path | None = None,
) -> Bundle:
    """Load, resolve, build and (with ``options.run_promtool``) prove everything; write
    nothing. spec → plan → build → prove → the bundle the writer writes.

    ``root`` is the repository the outputs belong to (``--out``); specs named in
    ``spec_args`` are paths as given (relative to the working directory), and without any the
    working directory's ``specs/`` folder is read. Spec *files* named in ``spec_args`` render
    those services' own files only. ``warn`` receives each spec's warnings (alerts left out,
    relative links) and the receivers' (teams without receivers) before building, then the
    install overlays' size warnings. ``cache`` reuses unchanged services' outputs and proofs
    (:mod:`generator.fleet.cache`); ``progress`` shows the phases on a terminal; ``spool_to`` (a
    folder that outlives the bundle) keeps many built services as files, not in memory.

    Raises:
        ObsgenError: bad specs or receivers (exit 2), or promtool/amtool failures on the
            outputs (exit 1).
    """
    # Spec *files* named on the command line render those services' own files only: fleet-wide
    # files (overview dashboard, values-observability, runbooks) and other services' outputs
    # must not be rewritten from a partial set of specs, nor deleted as stale.
    partial = bool(spec_args) and all(Path(arg).is_file() for arg in spec_args)
    runs = engine(options, root, cache, progress, spool_to)
    try:
        paths = find_specs(spec_args, Path("."))
        plans = runs.load(paths, root, spec_identities(paths) if partial else ())
    except ObsgenError as err:  # with the receivers' problems: every input's in one pass
        raise ObsgenError([*err.diagnostics, *receivers_problems(root)]) from None
    if warn is not None:
        for warning in outside_specs(spec_args, root):
            warn(warning)
    receivers = load_receivers(root)
    _check_plans(root, plans, receivers, options, partial, warn)
    built = runs.build(plans, receivers, fleet=not partial)
    if warn is not None:
        for warning in [w for p in plans for w in built.warnings.get(p.stem, [])]:
            warn(warning)
        for warning in built.fleet_warnings:
            warn(warning)
    if partial:
        _own_fleet_files(built, plans, root)
    files = built.files()
    if options.run_promtool:
        problems = runs.prove(files, built, promtool3_unproved(plans, warn))
        if problems:
            raise ObsgenError(problems, exit_code=1)
    return _bundle(root, plans, built, options, partial)


def receivers_problems(root: Path) -> list[Diagnostic]:
    """The problems of ``<root>/alertmanager/receivers.yaml`` (none when it loads or is
    absent), to report with the specs' own."""
    try:
        load_receivers(root)
    except ObsgenError as err:
        return list(err.diagnostics)
    return []


def outside_specs(spec_args: Sequence[str], root: Path) -> list[Diagnostic]:
    """A warning for each named spec file or folder outside ``<root>/specs/``: the next
    render of the repository (``obsgen render``, ``make render``: specs/ alone) finds no spec
    for the files this one writes from it and removes them as stale."""
    specs = (root / "specs").resolve()
    out = []
    for arg in spec_args:
        where = Path(arg).resolve()
        if where == specs or specs in where.parents:
            continue
        out.append(
            Diagnostic(
                arg,
                "",
                f"outside {(root / 'specs').as_posix()}/: the next `obsgen render` "
                "reads specs/ alone and removes the files rendered from it as stale; move the "
                "spec into specs/",
                Level.WARNING,
            )
        )
    return out


def spec_identities(rendered: Sequence[Path]) -> list[tuple[str, str | None]]:
    """``(metadata.name, spec.selector.namespace)`` of each spec in ``specs/`` that is not in
    ``rendered``, read without resolving it (a broken one is skipped): a render of named spec
    files names their files as the full render does, which qualifies a name that another spec
    shares (:func:`generator.core.load.qualify_shared_names`)."""
    try:
        every = find_specs([], Path("."))
    except ObsgenError:
        return []
    named = {p.resolve() for p in rendered}
    out = []
    for path in every:
        if path.resolve() in named:
            continue
        try:
            data = parse_yaml(path.read_text(encoding="utf-8"), str(path))
        except (ObsgenError, OSError, UnicodeDecodeError):
            continue
        meta = data.get("metadata") if isinstance(data, dict) else None
        spec = data.get("spec") if isinstance(data, dict) else None
        selector = spec.get("selector") if isinstance(spec, dict) else None
        name = meta.get("name") if isinstance(meta, dict) else None
        namespace = selector.get("namespace") if isinstance(selector, dict) else None
        if isinstance(name, str):
            out.append((name, namespace if isinstance(namespace, str) else None))
    return out


def _check_plans(
    root: Path,
    plans: Sequence[ServicePlan],
    receivers: ReceiversConfig | None,
    options: RenderOptions,
    partial: bool,
    warn: Callable[[Diagnostic], None] | None,
) -> None:
    """Pass on the specs' and the receivers' warnings; refuse, before building, names that
    clash (dashboards, charts) and overlays too large to install.

    Raises:
        ObsgenError: from the checks of dashboard names, overlays and chart names.
    """
    if warn is not None:
        for plan in plans:
            for warning in (*plan.warnings, *plan_slow_page_warnings(plan)):
                warn(warning)
        for warning in routing_warnings(plans, receivers, complete=not partial):
            warn(warning)
        for warning in retention_warnings(receivers):
            warn(warning)
    check_dashboard_names(plans)
    check_overlay(plans, options.dashboards_via)
    outputs = options.outputs
    install = load_project_config(root).install
    check_chart_names(plans, configured_release(install), warn)
    check_selection(plans, install, outputs or naming.OUTPUT_KINDS, warn or _no_warning)


def _own_fleet_files(built: Built, plans: Sequence[ServicePlan], root: Path) -> None:
    """Of a partial render's fleet-wide files, keep only the named services' Alertmanager
    files and the missing pages their runbooks link to (:func:`linked_runbooks`)."""
    kept = {
        path: text
        for path, text in built.fleet.items()
        if any(naming.owned_by(path, plan.stem) for plan in plans)
    }
    built.fleet = {**linked_runbooks(plans, built.services, root), **kept}


def _bundle(
    root: Path, plans: Sequence[ServicePlan], built: Built, options: RenderOptions, partial: bool
) -> Bundle:
    """The files a render writes: with ``render.outputs``, only those install paths; and
    the generated files on disk no spec produces any more."""
    services, fleet, keys = built.services, built.fleet, built.keys
    if options.outputs is not None:
        kinds = {*options.outputs, *(("mimir",) if options.mimir else ())}

        def wanted(rel: str) -> bool:
            return naming.output_kind(rel) in kinds

        services = {name: only(own, wanted) for name, own in services.items()}
        fleet = dict(only(fleet, wanted))
    files = BundleFiles([*(services[plan.stem] for plan in plans), fleet])
    stale = [] if partial else writer.stale_outputs(root, files, naming.OUTPUT_DIRS)
    return Bundle(files, stale, services, keys, partial, built.warnings)


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
