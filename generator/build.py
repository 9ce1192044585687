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

import multiprocessing
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING

from generator import naming
from generator.builders.alertmanager import alertmanager_outputs
from generator.builders.dashboard import (
    FLEET_NAME,
    check_dashboard_names,
    fleet_dashboard_output,
    service_dashboard_output,
)
from generator.builders.overlay import (
    Dashboard,
    check_overlay,
    dashboard_too_large,
    fleet_overlay,
    service_overlay,
)
from generator.builders.rule_tests import service_rule_tests
from generator.builders.rulefile import rule_groups
from generator.builders.runbooks import runbook_outputs
from generator.errors import ObsgenError
from generator.plan import ServicePlan
from generator.receivers import ReceiversConfig
from generator.yamlio import YamlText, dump_yaml, generated_header

if TYPE_CHECKING:
    from generator.cache import OutputCache

Outputs = dict[str, str]

# Below this many services to build, worker processes cost more than they save (start-up and
# shipping each service's ~0.5 MB of text back).
PARALLEL_FROM = 16


def _dashboard_problem(outputs: Mapping[str, str], path: str) -> None:
    problem = dashboard_too_large(path, outputs[path])
    if problem is not None:
        raise ObsgenError([problem], exit_code=1)


def service_outputs(plan: ServicePlan, dashboards_via: str = "configmaps") -> Outputs:
    """Every file of ``plan`` alone: rule file, promtool tests, dashboard, Helm values,
    sidecar values and manifests, by repository path.

    Raises:
        ObsgenError: no test can be generated for a matcher (exit 2), or the dashboard is too
            large for a ConfigMap (exit 1).
    """
    groups = rule_groups(plan)
    text = YamlText.of(groups) if groups else None
    header = generated_header(plan.source)
    out: Outputs = {naming.rules_file(plan.name): dump_yaml({"groups": text or []}, header=header)}
    out.update(service_rule_tests(plan))
    out.update(service_dashboard_output(plan))
    path = naming.dashboard_file(plan.name)
    _dashboard_problem(out, path)
    dashboard = Dashboard(plan.name, out[path], plan.namespace)
    out.update(service_overlay(plan, dashboard, dashboards_via, text or groups))
    return out


def rule_groups_text(rules_file: str) -> YamlText | list[object]:
    """The ``groups`` of a rendered rule file, as text to splice into other documents.

    Raises:
        ValueError: the text is not a rule file rendered by obsgen.
    """
    body = "".join(line for line in rules_file.splitlines(keepends=True) if line[:1] != "#")
    if body == "groups: []\n":
        return []
    if not body.startswith("groups:\n"):
        raise ValueError("not a rule file rendered by obsgen")
    return YamlText(body.removeprefix("groups:\n"))


def fleet_outputs(
    plans: Sequence[ServicePlan], services: Mapping[str, Outputs], dashboards_via: str
) -> Outputs:
    """Files of every service together: runbooks, the fleet overview (dashboard and its
    manifest) and :data:`naming.ALL_SERVICES_VALUES`, given each service's own files.

    Raises:
        ObsgenError: the fleet overview is too large for a ConfigMap (exit 1).
    """
    out = runbook_outputs(plans)
    if not plans:
        return out
    out.update(fleet_dashboard_output(plans))
    _dashboard_problem(out, naming.fleet_dashboard_file())
    per_service = {
        p.name: Dashboard(p.name, services[p.name][naming.dashboard_file(p.name)], p.namespace)
        for p in plans
    }
    shared = [Dashboard(FLEET_NAME, out[naming.fleet_dashboard_file()], None)]
    groups = {p.name: rule_groups_text(services[p.name][naming.rules_file(p.name)]) for p in plans}
    out.update(fleet_overlay(plans, per_service, shared, dashboards_via, groups))
    return out


def _build_one(job: tuple[ServicePlan, str]) -> tuple[str, Outputs]:
    plan, dashboards_via = job
    return plan.name, service_outputs(plan, dashboards_via)


def _workers(jobs: int | None) -> int:
    if jobs is not None:
        return max(1, jobs)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def build_services(
    plans: Sequence[ServicePlan],
    dashboards_via: str = "configmaps",
    cache: OutputCache | None = None,
    progress: Callable[[int], None] | None = None,
    jobs: int | None = None,
) -> dict[str, Outputs]:
    """Each plan's own files by service name: read back through ``cache`` when the plan is
    unchanged since they were written, else built (in ``jobs`` worker processes, default one
    per usable core, when :data:`PARALLEL_FROM` or more need building).

    ``progress`` is called with the number of services finished since its last call.

    Raises:
        ObsgenError: from :func:`service_outputs` (the first failing service's).
    """
    done: dict[str, Outputs] = {}
    todo: list[ServicePlan] = []
    keys: dict[str, str] = {}
    for plan in plans:
        if cache is not None:
            keys[plan.name] = cache.key(plan, dashboards_via)
            found = cache.get(plan.name, keys[plan.name])
            if found is not None:
                done[plan.name] = found
                continue
        todo.append(plan)
    if progress is not None and done:
        progress(len(done))
    workers = min(_workers(jobs), len(todo) // max(1, PARALLEL_FROM // 2))
    built: Iterable[tuple[str, Outputs]]
    if workers >= 2 and len(todo) >= PARALLEL_FROM:
        # fork: workers inherit the imported modules instead of importing them again.
        context = multiprocessing.get_context("fork" if sys.platform == "linux" else None)
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
        chunk = max(1, min(16, len(todo) // (workers * 4)))
        built = pool.map(_build_one, [(p, dashboards_via) for p in todo], chunksize=chunk)
    else:
        pool = None
        built = (_build_one((p, dashboards_via)) for p in todo)
    try:
        for name, outputs in built:
            done[name] = outputs
            if progress is not None:
                progress(1)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return done


def build_outputs(
    plans: Sequence[ServicePlan],
    dashboards_via: str = "configmaps",
    receivers: ReceiversConfig | None = None,
    *,
    fleet: bool = True,
    cache: OutputCache | None = None,
    progress: Callable[[int], None] | None = None,
    jobs: int | None = None,
) -> Outputs:
    """Render every output of every plan in memory, sorted by repository path.

    ``dashboards_via`` is ``configmaps`` or ``values``; ``receivers``
    (``alertmanager/receivers.yaml``; None: placeholders) feed the Alertmanager outputs;
    ``fleet=False`` leaves out the fleet-wide files (a render of named spec files writes only
    those services' own files).
    ``cache``, ``progress`` and ``jobs``: see :func:`build_services`.

    Raises:
        ValueError: an unknown ``dashboards_via``.
        ObsgenError: reserved service names, a failing test generation, oversized dashboards.
    """
    check_dashboard_names(plans)
    check_overlay(plans, dashboards_via)
    services = build_services(plans, dashboards_via, cache, progress, jobs)
    outputs: Outputs = {}
    for plan in plans:
        outputs.update(services[plan.name])
    if fleet:
        fleet_files = {
            **fleet_outputs(plans, services, dashboards_via),
            **alertmanager_outputs(plans, receivers),
        }
        for path, content in fleet_files.items():
            if path in outputs:
                raise ValueError(f"two builders produce {path}")
            outputs[path] = content
    return dict(sorted(outputs.items()))
