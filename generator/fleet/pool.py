"""Worker processes, forked: the pool that builds services and loads specs, and a process of
its own for one piece of work.

Workers receive what they need as arguments of the pool's initializer, inherited through
``fork`` (never pickled); no module state is set in the parent for them.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

# Below this many services to build, worker processes cost more than they save (start-up and
# shipping each service's ~0.5 MB of text back).
PARALLEL_FROM = 16


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
