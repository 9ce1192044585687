"""The load stage in worker processes: from :data:`generator.fleet.pool.PARALLEL_FROM` specs
on, forked workers load and resolve them (:func:`generator.core.load.load_one`), derive each
plan's digest (the cache asks for it next) and, in a render, build the service at once
(:meth:`generator.fleet.engine.Fleet.prebuild`): one round of workers loads and builds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from generator.core import load
from generator.core.load import Job, Loaded
from generator.errors import Diagnostic
from generator.fleet.cache import plan_digest
from generator.fleet.pool import chunk_size, fork_pool, parallel_workers
from generator.plan import ServicePlan
from generator.text import compile_all as compile_templates

# What a loading worker does with each plan it loaded, besides sending it back (set in the
# worker by the pool's initializer, whose arguments a forked worker inherits).
_then: Callable[[ServicePlan], object] | None = None


def _use_then(then: Callable[[ServicePlan], object] | None) -> None:
    global _then
    _then = then


def _load_one(job: Job) -> ServicePlan | list[Diagnostic]:
    """:func:`generator.core.load.load_one`, the plan's digest derived too."""
    found = load.load_one(*job)
    if not isinstance(found, list):
        plan_digest(found)
    return found


def _load_in_worker(job: Job) -> Loaded | None:
    """:func:`_load_one` and what :data:`_then` gave for the plan (None without), or None
    when loading raised something unexpected: the parent loads that spec again itself, so the
    error reaches the CLI tagged with its file."""
    try:
        found = _load_one(job)
    except Exception:
        return None
    extra = _then(found) if _then is not None and not isinstance(found, list) else None
    return found, extra


def load_plans(
    spec_paths: Iterable[Path],
    root: Path,
    progress: Callable[[int], None] | None = None,
    jobs: int | None = None,
    parallel_from: int | None = None,
    others: Iterable[tuple[str, str | None]] = (),
    then: Callable[[ServicePlan], object] | None = None,
) -> tuple[list[ServicePlan], dict[tuple[str, str], object]]:
    """Load and resolve every spec, collecting all errors before failing
    (:func:`generator.core.load.collect`); and where worker processes load them,
    ``then(plan)`` in the worker right after loading each plan.

    Returns the plans, and ``then``'s result by ``(plan.source, plan.stem)`` for each plan a
    worker loaded. ``then`` runs in the worker, on the plan before it is sent back: what it
    adds to or drops from the plan's derived values travels with it. From ``parallel_from``
    specs on (default :data:`generator.fleet.pool.PARALLEL_FROM`), worker processes load them
    (``jobs`` of them, default one per usable core). ``progress`` and ``others``: as for
    :func:`generator.core.load.collect`.

    Raises:
        ObsgenError: every problem in every file (exit code 2), including two specs that
            declare the same service name.
    """
    jobs_args = [(path, root) for path in spec_paths]
    workers = parallel_workers(len(jobs_args), jobs, parallel_from)
    if not workers:
        loaded = ((_load_one(job), None) for job in jobs_args)
        return load.collect(jobs_args, loaded, _load_one, progress, others)
    if then is not None:  # the workers build: they inherit the templates compiled
        compile_templates()
    pool = fork_pool(workers, initializer=_use_then, initargs=(then,))
    try:
        in_workers = pool.map(
            _load_in_worker, jobs_args, chunksize=chunk_size(len(jobs_args), workers)
        )
        return load.collect(jobs_args, in_workers, _load_one, progress, others)
    finally:
        pool.shutdown(cancel_futures=True)
