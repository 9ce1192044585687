"""The pure build: each service's own files from its plan, then the fleet-wide files.

A service's own files (:func:`generator.naming.owned_by`) depend on its plan alone: its rule
groups built once, serialised once and spliced into the rule file, the PrometheusRule and the
Helm values file (:class:`~generator.yamlio.YamlText`). The fleet-wide files (runbooks, the
fleet overview, the all-services values) are built afterwards from every plan and the
services' rule texts, never rebuilding a service's rule groups. No cache, worker or disk here:
that is :mod:`generator.fleet`'s (docs/architecture.md, "The seam: the core and the fleet layer").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from generator import naming
from generator.builders.dashboard import (
    FLEET_NAME,
    fleet_dashboard_output,
    service_dashboard_output,
)
from generator.builders.mimir import mimir_rule_file
from generator.builders.overlay import Dashboard, fleet_overlay, service_overlay
from generator.builders.rulefile import alert_rules, rule_groups
from generator.builders.runbooks import runbook_outputs, service_runbook_outputs
from generator.cases.rule_tests import service_rule_tests
from generator.errors import Diagnostic
from generator.plan import ServicePlan
from generator.yamlio import YamlText, comment_lines, dump_yaml, generated_header

Outputs = dict[str, str]

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


def service_rule_file(plan: ServicePlan) -> str:
    """``rules/<service>.rules.yaml`` of ``plan``, byte for byte as :func:`service_outputs`
    writes it."""
    groups = rule_groups(plan)
    text = YamlText.of(groups) if groups else None
    return dump_yaml({"groups": text or []}, header=generated_header(plan.source))
