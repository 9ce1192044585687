"""Each service's own files, built by the fleet layer: taken from the cache when the plan is
unchanged, else built in worker processes (one per core) when many need building, spooled to
disk rather than held in memory. The files are the core's (:mod:`generator.core.outputs`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from generator import naming
from generator.builders.alertmanager_routing import ALERT_LABELS, alert_labels
from generator.builders.runbooks import RUNBOOK_CONTEXT, service_context
from generator.core import outputs as core
from generator.core.outputs import BuildOptions
from generator.errors import Diagnostic
from generator.fleet import pool as fleet_pool
from generator.fleet.bundle import BundleFiles
from generator.fleet.cache import OutputCache
from generator.fleet.filebacked import spool, spool_changes
from generator.plan import ServicePlan
from generator.slow_page import SLOW_PAGE_WARNINGS, plan_slow_page_warnings


@dataclass(frozen=True)
class FleetOptions:
    """How the fleet layer builds (never what: the files are the core's).

    Attributes:
        cache: reuse unchanged services' files (:class:`~generator.fleet.cache.OutputCache`).
        jobs: worker processes at most (None: one per usable core).
        parallel_from: worker processes from this many services to build on (None:
            :data:`generator.fleet.pool.PARALLEL_FROM`).
        spool_to: a folder under which services built in workers are written and held as
            files, not in memory.
        beside: the repository whose files, when byte for byte those built, stay where they
            are instead of being spooled (:func:`generator.fleet.filebacked.spool_changes`).
    """

    cache: OutputCache | None = None
    jobs: int | None = None
    parallel_from: int | None = None
    spool_to: Path | None = None
    beside: Path | None = None


BuiltService = tuple[str, Mapping[str, str], list[Diagnostic]]


# The plans of the render in progress and how to build them, in a worker process: set there by
# the pool's initializer, whose arguments a forked worker inherits (never pickled); this process
# never sets them. Jobs name a plan by its index: a plan is never pickled while ``meanwhile``
# may be adding to its derived values in this process.
_plans: Sequence[ServicePlan] = ()
_options = BuildOptions()


def _use_plans(plans: Sequence[ServicePlan], options: BuildOptions) -> None:
    global _plans, _options
    _plans, _options = plans, options


def _build_in_worker(job: tuple[int, Path | None, Path | None]) -> BuiltService:
    return _build_one(_plans, _options, job)


def _build_one(
    plans: Sequence[ServicePlan], options: BuildOptions, job: tuple[int, Path | None, Path | None]
) -> BuiltService:
    index, spool_to, beside = job
    plan = plans[index]
    warnings: list[Diagnostic] = []
    via, mimir, tests = options.dashboards_via, options.mimir, options.tests
    outputs = core.service_outputs(plan, via, mimir, warnings.append, tests, options.overlay)
    if spool_to is None:
        return plan.stem, outputs, warnings
    # Only the paths travel back to the parent.
    if beside is None:
        return plan.stem, spool(spool_to, outputs), warnings
    parts = spool_changes(spool_to, beside, outputs)
    return plan.stem, parts[0] if len(parts) == 1 else BundleFiles(parts), warnings


# The derived values of a plan (:meth:`ServicePlan.derive`) that a worker which built it sends
# back with it: small (about 13 KB together), and read in the parent for the fleet-wide files
# (alert labels: routes, runbooks, Alertmanager; the runbook context: the page of every
# service), the warnings (slow fastest pages) and the cache (digest). The others (the alerting
# rules) are large to pickle and read by the service's own files only.
SENT_BACK = ("plan_digest", ALERT_LABELS, RUNBOOK_CONTEXT, SLOW_PAGE_WARNINGS)


def prebuild_service(
    plan: ServicePlan, options: BuildOptions, fleet: FleetOptions
) -> BuiltService | None:
    """In the worker that has just loaded ``plan``: its own files as :func:`build_services`
    builds them (spooled under ``fleet.spool_to``), or None when ``fleet.cache`` holds them
    (the parent reuses them) or building raised (the parent builds it again and reports what
    it raises as without this). Leaves on the plan only the derived values of
    :data:`SENT_BACK`, computed here."""
    built: BuiltService | None = None
    cache = fleet.cache
    try:
        if cache is None or cache.get(plan.stem, cache.key(plan, options.variant())) is None:
            built = _build_one([plan], options, (0, fleet.spool_to, fleet.beside))
        alert_labels(plan)
        service_context(plan)
        plan_slow_page_warnings(plan)
    except Exception:
        pass
    kept = {key: plan.derived[key] for key in SENT_BACK if key in plan.derived}
    plan.derived.clear()
    plan.derived.update(kept)
    return built


ServiceFiles = dict[str, Mapping[str, str]]


def build_services(
    plans: Sequence[ServicePlan],
    options: BuildOptions | None = None,
    fleet: FleetOptions = FleetOptions(),
    progress: Callable[[int], None] | None = None,
    meanwhile: Callable[[], object] | None = None,
    prebuilt: Mapping[tuple[str, str], BuiltService] | None = None,
) -> tuple[ServiceFiles, dict[str, list[Diagnostic]]]:
    """Each plan's own files by stem (:attr:`generator.plan.ServicePlan.stem`), and their
    size warnings.

    A plan the ``fleet.cache`` recorded unchanged gives the files in the repository
    (:class:`FileBacked`, read when asked for) and the warnings recorded with them; the others
    are built, in worker processes when ``fleet.parallel_from`` or more need building. With
    ``fleet.spool_to``, many services built are written under that folder and held as files;
    those that ``fleet.beside`` already holds byte for byte stay there instead.

    ``progress`` is called with the number of services finished since its last call.
    ``meanwhile`` (when given) is called once in this process while worker processes build
    (or after building, without workers): work that needs only the plans overlaps the builds.
    ``prebuilt``: services already built (:func:`prebuild_service`) by ``(source, stem)`` of
    their plan, taken as built (a cached service is never among them).

    Raises:
        ObsgenError: from :func:`generator.core.outputs.service_outputs` (the first failing
            service's).
    """
    options = options if options is not None else BuildOptions()
    done: ServiceFiles = {}
    found_warnings: dict[str, list[Diagnostic]] = {}
    todo: list[ServicePlan] = []
    cache = fleet.cache
    for plan in plans:
        if cache is not None:
            found = cache.get(plan.stem, cache.key(plan, options.variant()))
            if found is not None:
                done[plan.stem] = found
                found_warnings[plan.stem] = cache.warnings(plan.stem)
                continue
        ready = prebuilt.get((plan.source, plan.stem)) if prebuilt else None
        if ready is not None:
            done[plan.stem], found_warnings[plan.stem] = ready[1], ready[2]
            continue
        todo.append(plan)
    if progress is not None and done:
        progress(len(done))
    workers = fleet_pool.parallel_workers(len(todo), fleet.jobs, fleet.parallel_from)
    many = len(todo) >= (
        fleet_pool.PARALLEL_FROM if fleet.parallel_from is None else fleet.parallel_from
    )
    jobs_args = [(i, fleet.spool_to if many else None, fleet.beside) for i in range(len(todo))]
    built: Iterable[BuiltService]
    if workers:
        pool = fleet_pool.fork_pool(workers, initializer=_use_plans, initargs=(todo, options))
        built = pool.map(
            _build_in_worker, jobs_args, chunksize=fleet_pool.chunk_size(len(todo), workers)
        )
    else:
        pool = None
        built = (_build_one(todo, options, job) for job in jobs_args)
    try:
        if meanwhile is not None and pool is not None:
            meanwhile()
        for name, outputs, service_warnings in built:
            done[name] = outputs
            found_warnings[name] = service_warnings
            if progress is not None:
                progress(1)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    if meanwhile is not None and pool is None:
        meanwhile()
    return done, found_warnings


def rule_files_back(plans: Sequence[ServicePlan], services: dict[str, Mapping[str, str]]) -> None:
    """Give back the rule file of each service the cache reused without it.

    A reused service holds the files a render wrote; where ``render.install`` writes no rule
    files (``manifests``, ``helm``), the fleet-wide files and the check still read each
    service's rule file: it is built again from the plan (the promtool tests are not: the
    render that recorded the service proved them)."""
    for plan in plans:
        own = services[plan.stem]
        rules = naming.rules_file(plan.stem)
        if rules not in set(own):
            services[plan.stem] = BundleFiles([own, {rules: core.service_rule_file(plan)}])
