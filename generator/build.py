"""Build every output in memory: each service's own files, then the fleet-wide files.

A service's own files (:func:`generator.naming.owned_by`) depend on its plan alone. They are
built once per plan — its rule groups built once, serialised once and spliced into the rule
file, the PrometheusRule and the Helm values file (:class:`~generator.yamlio.YamlText`) — and
taken from the :class:`~generator.cache.OutputCache` when the plan is unchanged. When many
services need building, worker processes build them (one per core). The fleet-wide files
(runbooks, the fleet overview, the all-services values) are built afterwards from every plan
and the services' rule texts, never rebuilding a service's rule groups.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from generator import naming
from generator.builders.alertmanager import alertmanager_outputs
from generator.builders.alertmanager_routing import ALERT_LABELS, alert_labels
from generator.builders.dashboard import (
    FLEET_NAME,
    check_dashboard_names,
    fleet_dashboard_output,
    service_dashboard_output,
)
from generator.builders.mimir import mimir_rule_file
from generator.builders.overlay import Dashboard, check_overlay, fleet_overlay, service_overlay
from generator.builders.rulefile import alert_rules, rule_groups
from generator.builders.runbooks import (
    RUNBOOK_CONTEXT,
    runbook_outputs,
    service_context,
    service_runbook_outputs,
)
from generator.cases.rule_tests import service_rule_tests
from generator.errors import Diagnostic
from generator.filebacked import (
    FileBacked,
    Identity,
    kept_identity_of,
    size_of,
    spool,
    spool_changes,
    spooled_file,
)
from generator.plan import ServicePlan
from generator.receivers import ReceiversConfig
from generator.slow_page import SLOW_PAGE_WARNINGS, plan_slow_page_warnings
from generator.yamlio import YamlText, comment_lines, dump_yaml, generated_header

if TYPE_CHECKING:
    from generator.cache import OutputCache

Outputs = dict[str, str]

# Below this many services to build, worker processes cost more than they save (start-up and
# shipping each service's ~0.5 MB of text back).
PARALLEL_FROM = 16

# The ``render.outputs`` kinds :func:`generator.builders.overlay.service_overlay` and
# :func:`~generator.builders.overlay.fleet_overlay` build files for.
OVERLAY_KINDS = ("helm", "helm-per-service", "manifests")


def variant(dashboards_via: str, mimir: bool, outputs: Collection[str] | None = None) -> str:
    """The render options a service's own files depend on, as one string (part of each
    service's cache key): with ``outputs`` (``render.outputs``), the files it records too."""
    kinds = "" if outputs is None else "+" + ",".join(sorted(outputs))
    return f"{dashboards_via}{'+mimir' if mimir else ''}{kinds}"


@dataclass(frozen=True)
class BuildOptions:
    """What the built files depend on besides the plans and the receivers.

    Attributes:
        dashboards_via: ``configmaps`` or ``values`` (``render.dashboardsVia``).
        mimir: also each service's ``mimir/<service>.yaml``.
        fleet_name: ``render.fleetName`` (None: from the services' namespaces).
        outputs: ``render.outputs`` (None: every install path). Every file but the tests is
            built whatever it says; it is part of each service's cache key, with what it
            records.
        tests: build the promtool test files. False only when nothing reads them: they are
            not among ``outputs`` and promtool does not run (:meth:`for_render`).
    """

    dashboards_via: str = "configmaps"
    mimir: bool = False
    fleet_name: str | None = None
    outputs: tuple[str, ...] | None = None
    tests: bool = True

    @property
    def overlay(self) -> bool:
        """Whether the install overlays (``helm/`` and ``manifests/`` files) are built: False
        when ``outputs`` names none of :data:`OVERLAY_KINDS`, so nothing would write them
        (on the realistic fleet, about a fifth of a service's build)."""
        return self.outputs is None or any(kind in OVERLAY_KINDS for kind in self.outputs)

    @classmethod
    def for_render(
        cls,
        dashboards_via: str,
        mimir: bool,
        fleet_name: str | None,
        outputs: tuple[str, ...] | None,
        proved: bool,
    ) -> BuildOptions:
        """The options of a render writing ``outputs`` and, with ``proved``, running
        promtool: the tests are built when written or proved, else not at all."""
        tests = proved or outputs is None or "tests" in outputs
        return cls(dashboards_via, mimir, fleet_name, outputs, tests)

    def variant(self) -> str:
        """:func:`variant` of these options; ``+untested`` when the tests are not built, so a
        service recorded by such a render (``--skip-promtool``, tests not written) is reused
        only by another one, never by a render that writes or proves its tests."""
        return variant(self.dashboards_via, self.mimir, self.outputs) + (
            "" if self.tests else "+untested"
        )


@dataclass(frozen=True)
class FleetOptions:
    """How the fleet layer builds (never what: the files are the core's).

    Attributes:
        cache: reuse unchanged services' files (:class:`~generator.cache.OutputCache`).
        jobs: worker processes at most (None: one per usable core).
        parallel_from: worker processes from this many services to build on (None:
            :data:`PARALLEL_FROM`).
        spool_to: a folder under which services built in workers are written and held as
            files, not in memory.
        beside: the repository whose files, when byte for byte those built, stay where they
            are instead of being spooled (:func:`generator.filebacked.spool_changes`).
    """

    cache: OutputCache | None = None
    jobs: int | None = None
    parallel_from: int | None = None
    spool_to: Path | None = None
    beside: Path | None = None


def only(part: Mapping[str, str], wanted: Callable[[str], bool]) -> Mapping[str, str]:
    """The files of ``part`` (a dict, :class:`FileBacked` or :class:`BundleFiles`) whose path
    ``wanted`` accepts, held as ``part`` holds them."""
    if isinstance(part, BundleFiles):
        return BundleFiles([only(p, wanted) for p in part._parts])
    if isinstance(part, FileBacked):
        return FileBacked(
            part.base,
            {rel: found for rel, found in part.identities.items() if wanted(rel)},
            part.on_disk,
            {rel: size for rel, size in part.sizes.items() if wanted(rel)},
        )
    return {rel: part[rel] for rel in part if wanted(rel)}


def service_outputs(
    plan: ServicePlan,
    dashboards_via: str = "configmaps",
    mimir: bool = False,
    warn: Callable[[Diagnostic], None] | None = None,
    tests: bool = True,
    overlay: bool = True,
) -> Outputs:
    """Every file of ``plan`` alone: rule file, promtool tests, its runbook pages, dashboard,
    Helm values, sidecar values and manifests (and with ``mimir`` its Mimir rule file), by
    repository path. ``warn`` receives the install overlays' size warnings; ``tests`` False
    leaves the promtool tests out (not generated at all: :attr:`BuildOptions.tests`);
    ``overlay`` False the Helm values, sidecar values and manifests
    (:attr:`BuildOptions.overlay`).

    Raises:
        ObsgenError: no test can be generated for a matcher (exit 2, only with ``tests``), or
            the dashboard is too large for a ConfigMap (exit 1).
    """
    groups = rule_groups(plan)
    alert_rules(plan, groups)  # kept on the plan: the tests, runbooks and routes read them
    text = YamlText.of(groups) if groups else None
    header = generated_header(plan.source)
    rules = naming.rules_file(plan.stem)
    out: Outputs = {rules: dump_yaml({"groups": text or []}, header=header)}
    if mimir:
        out[naming.mimir_file(plan.stem)] = mimir_rule_file(plan, out[rules])
    if tests:
        out.update(service_rule_tests(plan, groups))
    out.update(service_runbook_outputs(plan))
    out.update(service_dashboard_output(plan))
    if not overlay:
        return out
    uid = naming.dashboard_uid(plan.name, plan.namespace, plan.cluster_label)
    dashboard = Dashboard(plan.stem, out[naming.dashboard_file(plan.stem)], plan.namespace, uid)
    out.update(service_overlay(plan, dashboard, dashboards_via, text or groups, warn))
    return out


# Where str.splitlines ends a line.
_LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"


def rule_groups_text(rules_file: str, source: str | None = None) -> YamlText | list[object]:
    """The ``groups`` of a rendered rule file, as text to splice into other documents: the
    file without its comment lines. ``source``: the spec the file was rendered from, when
    known; a file starting with that spec's header and holding no other comment line is cut
    after the header, without going through its lines (1,000 services: ~0.5 s).

    Raises:
        ValueError: the text is not a rule file rendered by obsgen.
    """
    header = comment_lines(generated_header(source)) if source is not None else ""
    plain_header = len(header.splitlines()) == header.count("\n")
    if header and plain_header and rules_file.startswith(header):
        body = rules_file[len(header) :]
        if _has_comment_line(body):
            body = _without_comment_lines(body)
    else:
        body = _without_comment_lines(rules_file)
    if body == "groups: []\n":
        return []
    if not body.startswith("groups:\n"):
        raise ValueError("not a rule file rendered by obsgen")
    return YamlText(body.removeprefix("groups:\n"))


def _without_comment_lines(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if line[:1] != "#")


def _has_comment_line(text: str) -> bool:
    """True when a line of ``text`` (as :meth:`str.splitlines` cuts it) starts with ``#``."""
    at = text.find("#")
    while at != -1:
        if at == 0 or text[at - 1] in _LINE_BREAKS:
            return True
        at = text.find("#", at + 1)
    return False


def fleet_plan_outputs(plans: Sequence[ServicePlan], fleet_name: str | None = None) -> Outputs:
    """The fleet-wide files that depend on the plans alone: runbooks and the fleet overview
    (dashboard and its manifest). ``fleet_name``: as for :func:`fleet_outputs`.

    Raises:
        ObsgenError: the fleet overview too large for its ConfigMap (exit 1).
    """
    out = runbook_outputs(plans)
    if plans:
        out.update(fleet_dashboard_output(plans, fleet_name))
    return out


def fleet_outputs(
    plans: Sequence[ServicePlan],
    services: Mapping[str, Mapping[str, str]],
    dashboards_via: str,
    fleet_name: str | None = None,
    warn: Callable[[Diagnostic], None] | None = None,
    from_plans: Outputs | None = None,
    overlay: bool = True,
) -> Outputs:
    """Files of every service together: runbooks, the fleet overview (dashboard and its
    manifest) and :data:`naming.ALL_SERVICES_VALUES`, given each service's own files.
    ``fleet_name``: ``render.fleetName`` of obsgen.yaml (None: from the namespaces); ``warn``
    receives the overlays' size warnings; ``from_plans``: :func:`fleet_plan_outputs` of the
    same plans, when already built (render builds them while the services build);
    ``overlay`` False leaves out the Helm values and manifests (:attr:`BuildOptions.overlay`).

    Raises:
        ObsgenError: a dashboard too large for the ConfigMap that would carry it (exit 1).
    """
    out = dict(from_plans) if from_plans is not None else fleet_plan_outputs(plans, fleet_name)
    if not plans or not overlay:
        return out
    fleet_path = naming.fleet_dashboard_file()
    fleet_text = out[fleet_path]
    fleet_uid = json.loads(fleet_text)["uid"]
    # Installed through ConfigMaps, the services' dashboards are not part of the values file:
    # at 1,000 services, reading them back cost a second.
    per_service = (
        {}
        if dashboards_via == "configmaps"
        else {
            p.stem: Dashboard(
                p.stem,
                services[p.stem][naming.dashboard_file(p.stem)],
                p.namespace,
                naming.dashboard_uid(p.name, p.namespace, p.cluster_label),
            )
            for p in plans
        }
    )
    shared = [Dashboard(FLEET_NAME, fleet_text, None, fleet_uid)]
    groups = {
        p.stem: rule_groups_text(services[p.stem][naming.rules_file(p.stem)], p.source)
        for p in plans
    }
    out.update(fleet_overlay(plans, per_service, shared, dashboards_via, groups, warn))
    return out


Built = tuple[str, Mapping[str, str], list[Diagnostic]]


# The plans of the render in progress and how to build them, in a worker process: set there by
# the pool's initializer, whose arguments a forked worker inherits (never pickled); this process
# never sets them. Jobs name a plan by its index: a plan is never pickled while ``meanwhile``
# may be adding to its derived values in this process.
_plans: Sequence[ServicePlan] = ()
_options = BuildOptions()


def _use_plans(plans: Sequence[ServicePlan], options: BuildOptions) -> None:
    global _plans, _options
    _plans, _options = plans, options


def _build_in_worker(job: tuple[int, Path | None, Path | None]) -> Built:
    return _build_one(_plans, _options, job)


def _build_one(
    plans: Sequence[ServicePlan], options: BuildOptions, job: tuple[int, Path | None, Path | None]
) -> Built:
    index, spool_to, beside = job
    plan = plans[index]
    warnings: list[Diagnostic] = []
    via, mimir, tests = options.dashboards_via, options.mimir, options.tests
    outputs = service_outputs(plan, via, mimir, warnings.append, tests, options.overlay)
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


def prebuild_service(plan: ServicePlan, options: BuildOptions, fleet: FleetOptions) -> Built | None:
    """In the worker that has just loaded ``plan``: its own files as :func:`build_services`
    builds them (spooled under ``fleet.spool_to``), or None when ``fleet.cache`` holds them
    (the parent reuses them) or building raised (the parent builds it again and reports what
    it raises as without this). Leaves on the plan only the derived values of
    :data:`SENT_BACK`, computed here."""
    built: Built | None = None
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


def worker_count(jobs: int | None) -> int:
    """``jobs`` (at least 1), or the cores this process may use when None."""
    if jobs is not None:
        return max(1, jobs)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def parallel_workers(count: int, jobs: int | None, parallel_from: int | None = None) -> int:
    """Worker processes for ``count`` jobs: ``jobs`` (default: the usable cores), at most one
    per ``parallel_from // 2`` jobs; 0 when fewer than two would run or ``count`` is below
    ``parallel_from`` (default :data:`PARALLEL_FROM`; the jobs then run in this process)."""
    least = PARALLEL_FROM if parallel_from is None else parallel_from
    workers = min(worker_count(jobs), count // max(1, least // 2))
    return workers if workers >= 2 and count >= least else 0


def fork_pool(
    workers: int, initializer: Callable[..., object] | None = None, initargs: tuple[Any, ...] = ()
) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes, forked where the platform allows it: workers inherit
    the imported modules (and whatever this process set up) instead of importing them again.
    Each worker ignores Ctrl-C (SIGINT), then runs ``initializer(*initargs)`` when given: the
    parent stops the pool on Ctrl-C, and a worker interrupted while sending a result would
    leave the parent waiting for the rest of it."""
    context = multiprocessing.get_context("fork" if sys.platform == "linux" else None)
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=_start_worker,
        initargs=(initializer, initargs),
    )


def _start_worker(initializer: Callable[..., object] | None, initargs: tuple[Any, ...]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if initializer is not None:
        initializer(*initargs)


T = TypeVar("T")

# The work of the process :func:`in_own_process` forks: set in that process by the pool's
# initializer, whose arguments it inherits (and all they read) instead of receiving them pickled.
_own_work: Callable[[], Any] | None = None


def _set_own_work(work: Callable[[], Any]) -> None:
    global _own_work
    _own_work = work


def _run_own_work() -> Any:
    assert _own_work is not None, "in_own_process sets the work first"
    return _own_work()


@contextlib.contextmanager
def in_own_process(work: Callable[[], T], enabled: bool = True) -> Iterator[Callable[[], T]]:
    """Start ``work`` in a forked process of its own and give a function that waits for its
    result (raising what ``work`` raised); with ``enabled`` False, or off Linux, that function
    runs ``work`` in this process instead. Only the result is pickled: the process inherits
    everything ``work`` reads. Leaving the block waits for the process."""
    if not enabled or sys.platform != "linux":
        yield work
        return
    pool = fork_pool(1, initializer=_set_own_work, initargs=(work,))
    try:
        future = pool.submit(_run_own_work)  # forks here

        def result() -> T:
            try:
                done: T = future.result()
                return done
            finally:
                pool.shutdown()  # the process ends as soon as its work is taken

        yield result
    finally:
        pool.shutdown(cancel_futures=True)


def chunk_size(count: int, workers: int) -> int:
    """Jobs per task sent to a worker: about four tasks per worker, at most 16 jobs each."""
    return max(1, min(16, count // (workers * 4)))


ServiceFiles = dict[str, Mapping[str, str]]


def build_services(
    plans: Sequence[ServicePlan],
    options: BuildOptions = BuildOptions(),
    fleet: FleetOptions = FleetOptions(),
    progress: Callable[[int], None] | None = None,
    meanwhile: Callable[[], object] | None = None,
    prebuilt: Mapping[tuple[str, str], Built] | None = None,
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
        ObsgenError: from :func:`service_outputs` (the first failing service's).
    """
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
    workers = parallel_workers(len(todo), fleet.jobs, fleet.parallel_from)
    many = len(todo) >= (PARALLEL_FROM if fleet.parallel_from is None else fleet.parallel_from)
    jobs_args = [(i, fleet.spool_to if many else None, fleet.beside) for i in range(len(todo))]
    built: Iterable[Built]
    if workers:
        pool = fork_pool(workers, initializer=_use_plans, initargs=(todo, options))
        built = pool.map(_build_in_worker, jobs_args, chunksize=chunk_size(len(todo), workers))
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


def build_outputs(
    plans: Sequence[ServicePlan],
    dashboards_via: str = "configmaps",
    receivers: ReceiversConfig | None = None,
    fleet_name: str | None = None,
    warn: Callable[[Diagnostic], None] | None = None,
    mimir: bool = False,
    *,
    fleet: bool = True,
    cache: OutputCache | None = None,
    progress: Callable[[int], None] | None = None,
    jobs: int | None = None,
    parallel_from: int | None = None,
) -> Outputs:
    """Render every output of every plan in memory, sorted by repository path.

    ``dashboards_via`` is ``configmaps`` or ``values``; ``receivers``
    (``alertmanager/receivers.yaml``; None: placeholders) feed the Alertmanager outputs;
    ``fleet_name`` is ``render.fleetName`` of obsgen.yaml (None: derived from namespaces);
    ``warn`` receives the install overlays' size warnings; with ``mimir``,
    ``mimir/<service>.yaml`` too: the rule files in the namespace layout of ``mimirtool rules
    load|sync`` (:mod:`generator.builders.mimir`). ``fleet=False`` leaves out the fleet-wide
    files (a render of named spec files writes only those services' own files).
    ``cache``, ``jobs`` and ``parallel_from``: see :class:`FleetOptions`; ``progress``: see
    :func:`build_services`.

    Raises:
        ValueError: an unknown ``dashboards_via``.
        ObsgenError: reserved service names, a failing test generation, oversized dashboards.
    """
    check_dashboard_names(plans)
    check_overlay(plans, dashboards_via)
    services, warnings = build_services(
        plans,
        BuildOptions(dashboards_via, mimir, fleet_name),
        FleetOptions(cache, jobs, parallel_from),
        progress,
    )
    outputs: Outputs = {}
    for plan in plans:
        outputs.update(services[plan.stem])
        for warning in warnings.get(plan.stem, []):
            if warn is not None:
                warn(warning)
    if fleet:
        fleet_files = {
            **fleet_outputs(plans, services, dashboards_via, fleet_name, warn),
            **alertmanager_outputs(plans, receivers),
        }
        for path, content in fleet_files.items():
            if path in outputs:
                raise ValueError(f"two builders produce {path}")
            outputs[path] = content
    return dict(sorted(outputs.items()))


class BundleFiles(Mapping[str, str]):
    """Every file of a render by repository path (sorted), over the services' own files
    (in memory or :class:`FileBacked`) and the fleet-wide ones.

    Raises (on construction):
        ValueError: two parts produce the same path.
    """

    def __init__(self, parts: Iterable[Mapping[str, str]]) -> None:
        self._parts = list(parts)
        self._where: dict[str, Mapping[str, str]] = {}
        for part in self._parts:
            for rel in part:
                if rel in self._where:
                    raise ValueError(f"two builders produce {rel}")
                self._where[rel] = part
        self._order = sorted(self._where)

    def __getitem__(self, rel: str) -> str:
        return self._where[rel][rel]

    def __contains__(self, rel: object) -> bool:
        return rel in self._where

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)

    def spooled(self, rel: str) -> str | None:
        """The spooled file holding ``rel`` (:func:`generator.filebacked.spooled_file`)."""
        return spooled_file(self._where[rel], rel)

    def size(self, rel: str) -> int:
        """Size in bytes of ``rel`` (:func:`generator.filebacked.size_of`)."""
        return size_of(self._where[rel], rel)

    def kept_identity(self, rel: str) -> Identity | None:
        """The identity ``rel`` must still have (:func:`generator.filebacked.kept_identity_of`)."""
        return kept_identity_of(self._where[rel], rel)

    def moved_in_place(self) -> list[str]:
        """The files held in place on disk (found unchanged there) that changed since, sorted:
        edited, replaced or deleted during the render (:meth:`FileBacked.moved`)."""
        found: list[str] = []
        for part in self._parts:
            if isinstance(part, BundleFiles):
                found += part.moved_in_place()
            elif isinstance(part, FileBacked):
                found += part.moved()
        return sorted(found)

    def to_write(self) -> BundleFiles:
        """The files that may differ from the repository: all but those in place on disk
        (:meth:`generator.cache.OutputCache.get` or
        :func:`generator.filebacked.spool_changes` found them unchanged there)."""
        return BundleFiles(self._changeable())

    def _changeable(self) -> Iterator[Mapping[str, str]]:
        for part in self._parts:
            if isinstance(part, BundleFiles):
                yield from part._changeable()
            elif not (isinstance(part, FileBacked) and part.on_disk):
                yield part
