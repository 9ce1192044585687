"""The load stage, pure: each spec file loaded and resolved into a plan, every problem of every
file collected before failing, names shared across namespaces qualified. One process, one
spec after another; the fleet layer loads in worker processes (:mod:`generator.fleet.load`)
and hands the same plans to :func:`collect`.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from generator import kube_names, naming
from generator.errors import Diagnostic, ObsgenError, processing
from generator.plan import ServicePlan, resolve
from generator.project_config import RulerConfig, config_path, load_project_config
from generator.ruler import apply_ruler
from generator.spec import load_spec

# A spec's plan or its problems, and what the loading worker gave for the plan (None without).
Loaded = tuple[ServicePlan | list[Diagnostic], object]
Job = tuple[Path, Path]


def display_path(path: Path, root: Path) -> str:
    """How errors and headers name a spec: relative to ``root`` (the output repository) when
    inside it, else relative to the working directory when inside that, else as given."""
    for base in (root, Path.cwd()):
        try:
            return path.resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            continue
    return str(path)


def load_one(path: Path, root: Path) -> ServicePlan | list[Diagnostic]:
    """The plan of the spec at ``path``, with obsgen.yaml's ``ruler`` section at ``root``
    applied, or its problems."""
    shown = display_path(path, root)
    try:
        with processing(shown):
            spec = load_spec(path, shown)
            plan = resolve(spec, shown)
    except ObsgenError as err:
        return list(err.diagnostics)
    try:
        ruled = apply_ruler(plan, spec, _ruler(root))
    except ObsgenError:
        # A bad obsgen.yaml is reported once, beside every spec's problems, by the caller
        # (load_project_config in check and render); each spec does not repeat it.
        ruled = plan
    if isinstance(ruled, list):
        return ruled
    return ruled


def _ruler(root: Path) -> RulerConfig:
    """``obsgen.yaml``'s ``ruler`` section at ``root``, read once per process while the file
    stays as it is.

    Raises:
        ObsgenError: the file is invalid.
    """
    try:
        stat = config_path(root).stat()
        stamp: tuple[int, int] | None = (stat.st_mtime_ns, stat.st_size)
    except OSError:
        stamp = None
    return _ruler_at(root.resolve(), stamp)


@functools.lru_cache(maxsize=8)
def _ruler_at(root: Path, stamp: tuple[int, int] | None) -> RulerConfig:
    return load_project_config(root).ruler


def load_plans(
    spec_paths: Iterable[Path],
    root: Path,
    progress: Callable[[int], None] | None = None,
    others: Iterable[tuple[str, str | None]] = (),
) -> list[ServicePlan]:
    """Load and resolve every spec in this process (:func:`collect`)."""
    jobs = [(path, root) for path in spec_paths]
    loaded = ((load_one(*job), None) for job in jobs)
    return collect(jobs, loaded, lambda job: load_one(*job), progress, others)[0]


def collect(
    jobs: Sequence[Job],
    loaded: Iterable[Loaded | None],
    again: Callable[[Job], ServicePlan | list[Diagnostic]],
    progress: Callable[[int], None] | None = None,
    others: Iterable[tuple[str, str | None]] = (),
) -> tuple[list[ServicePlan], dict[tuple[str, str], object]]:
    """The plans of ``jobs`` (``(spec path, root)`` each) from what loading them gave, in
    order (``loaded``; None where loading raised something unexpected: ``again`` loads that
    spec in this process, so the error reaches the CLI tagged with its file), sorted by name
    and stem; and what the loader gave with each plan, by ``(plan.source, plan.stem)`` (the
    stem as loaded: a plan whose stem is qualified here has none under its new stem).

    ``others``: the (name, namespace) of specs of the repository not loaded here
    (:func:`generator.render.spec_identities`): a name one of them shares is qualified as in
    a full render. ``progress`` is called with 1 after each spec.

    Raises:
        ObsgenError: every problem in every file (exit code 2), including two specs that
            declare the same service name.
    """
    problems: list[Diagnostic] = []
    plans: list[ServicePlan] = []
    extras: dict[tuple[str, str], object] = {}
    owners: dict[tuple[str, str | None], str] = {}
    for job, result in zip(jobs, loaded, strict=True):
        found, extra = result if result is not None else (again(job), None)
        if isinstance(found, list):
            problems.extend(found)
            continue
        plan = found
        identity = (plan.name, plan.namespace)
        if identity in owners:
            where = f" in namespace {plan.namespace!r}" if plan.namespace else ""
            problems.append(
                Diagnostic(
                    plan.source,
                    "metadata.name",
                    f"service {plan.name!r}{where} is already defined in {owners[identity]}"
                    + ("" if plan.namespace else "; give each spec its spec.selector.namespace"),
                )
            )
            continue
        owners[identity] = plan.source
        plans.append(plan)
        if extra is not None:
            extras[(plan.source, plan.stem)] = extra
        if progress is not None:
            progress(1)
    plans = qualify_shared_names(plans, problems, others)
    if problems:
        raise ObsgenError(problems)
    return sorted(plans, key=lambda p: (p.name, p.stem)), extras


def qualify_shared_names(
    plans: list[ServicePlan],
    problems: list[Diagnostic],
    others: Iterable[tuple[str, str | None]] = (),
) -> list[ServicePlan]:
    """``plans`` with each name that several specs share (in different namespaces) given
    :func:`naming.qualified_stem` as its stem; a stem that another spec's stem already is (a
    service named ``chat--team-a`` beside ``chat`` in ``team-a``), one too long for a
    Kubernetes name, and a shared name without a namespace are added to ``problems``."""
    identities = {(p.name, p.namespace) for p in plans} | set(others)
    count = Counter(name for name, _ in identities)
    out = [
        replace(p, file_stem=naming.qualified_stem(p.name, p.namespace))
        if count[p.name] > 1 and p.namespace
        else p
        for p in plans
    ]
    seen: dict[str, str] = {}
    for plan in out:
        if count[plan.name] > 1 and not plan.namespace:
            problems.append(
                Diagnostic(
                    plan.source,
                    "spec.selector.namespace",
                    f"not set, and another spec's service is named {plan.name!r} too: without "
                    "a namespace this service's records and alerts are told apart by name "
                    "alone and would read the other's; set its namespace",
                )
            )
        if plan.stem != plan.name and len(plan.stem) > kube_names.LABEL_MAX:
            problems.append(
                Diagnostic(
                    plan.source,
                    "metadata.name",
                    f"{plan.name!r} is also the name of another spec's service, so its files "
                    f"are named {plan.stem!r}, longer than {kube_names.LABEL_MAX} characters; "
                    "shorten metadata.name or spec.selector.namespace",
                )
            )
        if plan.stem in seen:
            problems.append(
                Diagnostic(
                    plan.source,
                    "metadata.name",
                    f"files named {plan.stem!r} are already those of {seen[plan.stem]}; rename "
                    "one service (a name shared across namespaces is written "
                    f"<name>{naming.STEM_SEPARATOR}<namespace>)",
                )
            )
        seen.setdefault(plan.stem, plan.source)
    return out
