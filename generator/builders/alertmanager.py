"""Alertmanager outputs: the standalone configuration, a kube-prometheus-stack overlay, one
``AlertmanagerConfig`` per service, and the route tests ``obsgen render`` runs with amtool.

More: docs/alerting.md, "The files obsgen writes".
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from typing import Any

from generator import naming
from generator.builders.alertmanager_routing import (
    DEFAULT_RECEIVER,
    GROUP_BY,
    InhibitRule,
    NamedReceiver,
    Route,
    cluster_labels,
    default_receiver,
    group_by_labels,
    inhibit_rules,
    route_cases,
    team_receivers,
    team_route,
    teams_of,
)
from generator.builders.kube import common_labels, install
from generator.errors import Diagnostic, Level
from generator.plan import ServicePlan
from generator.promql import Matcher
from generator.receivers import EMPTY, RECEIVERS_FILE, ReceiversConfig, Timing
from generator.units import format_duration_ms
from generator.yamlio import dump_yaml, generated_header

Obj = dict[str, Any]

CONFIG_FILE = "alertmanager/alertmanager.yaml"
VALUES_FILE = "alertmanager/values-kube-prometheus-stack.yaml"
ROUTE_TESTS_FILE = naming.ROUTE_TESTS_FILE
API_ALERTMANAGER_CONFIG = "monitoring.coreos.com/v1alpha1"
# Alertmanager's --data.retention default: how long it remembers a notification, in ms.
DEFAULT_RETENTION_MS = 120 * 3_600_000
# kube-prometheus-stack's default configuration routes these to its `null` receiver.
CHART_NULL_RECEIVER = "null"
CHART_QUIET_ALERTS = "InfoInhibitor|Watchdog"

# -- the standalone configuration ------------------------------------------------------------


def _timing(timing: Timing, keys: tuple[str, str, str]) -> Obj:
    values = (timing.group_wait, timing.group_interval, timing.repeat_interval)
    return {k: format_duration_ms(v) for k, v in zip(keys, values, strict=True)}


def _route(route: Route, root: bool = False, clusters: Sequence[str] = ()) -> Obj:
    obj: Obj = {"receiver": route.receiver}
    if root:
        obj["group_by"] = [*GROUP_BY, *clusters]
    if route.matchers:
        obj["matchers"] = [m.render() for m in route.matchers]
    obj.update(_timing(route.timing, ("group_wait", "group_interval", "repeat_interval")))
    if route.routes:
        obj["routes"] = [_route(child) for child in route.routes]
    return obj


def _receiver(receiver: NamedReceiver, secrets_dir: str) -> Obj:
    obj: Obj = {"name": receiver.name}
    for integration in receiver.integrations:
        key, entry = integration.standalone(secrets_dir)
        obj.setdefault(key, []).append(entry)
    return obj


def _inhibit(rule: InhibitRule, why_index: int | None = None) -> Obj:
    obj: Obj = {} if why_index is None else {"__why__": why_index}
    obj["source_matchers"] = [m.render() for m in rule.source]
    obj["target_matchers"] = [m.render() for m in rule.target]
    obj["equal"] = list(rule.equal)
    return obj


def _all_receivers(plans: Sequence[ServicePlan], receivers: ReceiversConfig) -> list[NamedReceiver]:
    found = [default_receiver(receivers)]
    for team in teams_of(plans):
        found.extend(team_receivers(team, receivers))
    return found


def root_route(plans: Sequence[ServicePlan], receivers: ReceiversConfig) -> Route:
    """The route tree: alerts of no known team to ``obsgen-default``, one route per team."""
    return Route(
        DEFAULT_RECEIVER,
        (),
        receivers.timing.ticket,
        tuple(
            team_route(team, receivers, (Matcher(naming.TEAM, "=", team),))
            for team in teams_of(plans)
        ),
    )


def _inhibit_rules_of(plans: Sequence[ServicePlan]) -> list[InhibitRule]:
    """The inhibit rules of the whole configuration of ``plans``."""
    return inhibit_rules(
        group_by_labels(plans),
        cluster_labels=cluster_labels(plans),
        goodput=any(p.goodput for p in plans),
    )


def config(plans: Sequence[ServicePlan], receivers: ReceiversConfig) -> Obj:
    """The standalone Alertmanager configuration of ``plans`` (``__why__`` markers in the
    inhibit rules index :func:`inhibit_rules`; :func:`with_reasons` turns them into comments)."""
    return {
        "global": {"resolve_timeout": "5m"},
        "route": _route(root_route(plans, receivers), root=True, clusters=cluster_labels(plans)),
        "inhibit_rules": [_inhibit(rule, i) for i, rule in enumerate(_inhibit_rules_of(plans))],
        "receivers": [
            _receiver(r, receivers.secrets_dir) for r in _all_receivers(plans, receivers)
        ],
    }


_WHY = re.compile(r"^(?P<indent> *)- __why__: (?P<index>\d+)\n(?P=indent)  ", re.M)


def with_reasons(text: str, reasons: Sequence[str]) -> str:
    """Replace each ``- __why__: <i>`` list-item marker in dumped YAML by a comment holding
    ``reasons[i]`` (wrapped at 96 columns) above the item."""

    def comment(match: re.Match[str]) -> str:
        indent = match.group("indent")
        lines = textwrap.wrap(
            reasons[int(match.group("index"))], 96 - len(indent), break_on_hyphens=False
        )
        return "".join(f"{indent}# {line}\n" for line in lines) + f"{indent}- "

    return _WHY.sub(comment, text)


def config_text(plans: Sequence[ServicePlan], receivers: ReceiversConfig) -> str:
    """``alertmanager/alertmanager.yaml``: header, then the configuration with the reason of
    each inhibit rule as a comment."""
    reasons = [r.why for r in _inhibit_rules_of(plans)]
    sources = ", ".join(sorted(p.source for p in plans))
    header = (
        f"{generated_header(sources + ', alertmanager/receivers.yaml')}\n"
        "Use: alertmanager --config.file=alertmanager/alertmanager.yaml (see docs/alerting.md)"
    )
    return with_reasons(dump_yaml(config(plans, receivers), header=header), reasons)


def needed_retention_ms(receivers: ReceiversConfig) -> int | None:
    """The notification-log retention ``receivers`` need when a ``repeatInterval`` is longer
    than Alertmanager's default (:data:`DEFAULT_RETENTION_MS`), in ms; else None. Alertmanager
    forgets a notification after its retention and sends it again then (it warns at start-up:
    "repeat_interval is greater than the data retention period")."""
    longest = max(receivers.timing.page.repeat_interval, receivers.timing.ticket.repeat_interval)
    return longest if longest > DEFAULT_RETENTION_MS else None


def retention_warnings(receivers: ReceiversConfig | None) -> list[Diagnostic]:
    """A warning per ``timing.<kind>.repeatInterval`` longer than Alertmanager's default
    retention, naming the flag the standalone configuration needs and the chart value
    :func:`values` sets."""
    if receivers is None:
        return []
    found = []
    for kind in ("page", "ticket"):
        repeat = getattr(receivers.timing, kind).repeat_interval
        if repeat > DEFAULT_RETENTION_MS:
            found.append(
                Diagnostic(
                    RECEIVERS_FILE,
                    f"timing.{kind}.repeatInterval",
                    f"{format_duration_ms(repeat)} is longer than the "
                    f"{format_duration_ms(DEFAULT_RETENTION_MS)} Alertmanager keeps "
                    "notifications by default (--data.retention): it would forget them and "
                    f"repeat after {format_duration_ms(DEFAULT_RETENTION_MS)}. {VALUES_FILE} "
                    f"sets alertmanager.alertmanagerSpec.retention: {_go_duration(repeat)}; "
                    f"run {CONFIG_FILE} with --data.retention={_go_duration(repeat)}",
                    Level.WARNING,
                )
            )
    return found


def _go_duration(ms: int) -> str:
    """``ms`` in hours, minutes, seconds: the operator's ``GoDuration`` has no ``d``."""
    text = ""
    for unit, size in (("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1)):
        if ms >= size:
            text += f"{ms // size}{unit}"
            ms %= size
    return text or "0"


# -- kube-prometheus-stack -------------------------------------------------------------------


def values(plans: Sequence[ServicePlan], receivers: ReceiversConfig) -> Obj:
    """kube-prometheus-stack values: ``alertmanager.config`` (this configuration plus the chart
    default's ``null`` receiver, its route of Watchdog/InfoInhibitor there and its two
    InfoInhibitor rules), ``alertmanagerSpec.secrets`` (the Secrets the receivers read) and,
    when a ``repeatInterval`` needs it, ``alertmanagerSpec.retention``
    (:func:`needed_retention_ms`)."""
    cfg = config(plans, receivers)
    cfg["route"]["routes"].insert(
        0,
        {
            "receiver": CHART_NULL_RECEIVER,
            "matchers": [Matcher("alertname", "=~", CHART_QUIET_ALERTS).render()],
        },
    )
    reasons = len(cfg["inhibit_rules"])
    cfg["inhibit_rules"].extend(
        [
            {
                "__why__": reasons,
                "source_matchers": [Matcher("alertname", "=", "InfoInhibitor").render()],
                "target_matchers": [Matcher(naming.SEVERITY, "=", "info").render()],
                "equal": ["namespace"],
            },
            {
                "__why__": reasons + 1,
                "target_matchers": [Matcher("alertname", "=", "InfoInhibitor").render()],
            },
        ]
    )
    cfg["receivers"].append({"name": CHART_NULL_RECEIVER})
    cfg["templates"] = ["/etc/alertmanager/config/*.tmpl"]
    secrets = sorted(
        {
            ref.secret
            for team in receivers.teams
            for r in (*team.page, *team.ticket)
            for ref in r.secrets()
        }
        | {ref.secret for r in receivers.default for ref in r.secrets()}
    )
    result: Obj = {"alertmanager": {"config": cfg}}
    spec: Obj = {}
    retention = needed_retention_ms(receivers)
    if retention is not None:
        spec["retention"] = _go_duration(retention)
    if secrets:
        spec["secrets"] = secrets
    if spec:
        result["alertmanager"]["alertmanagerSpec"] = spec
    return result


CHART_REASONS = (
    "kube-prometheus-stack's default: its InfoInhibitor alert fires while info alerts fire "
    "with no warning or critical alert in their namespace, and holds those info alerts back, "
    "so info alerts are only notified beside a real problem.",
    "kube-prometheus-stack's default: InfoInhibitor itself is never notified.",
)


def values_text(plans: Sequence[ServicePlan], receivers: ReceiversConfig) -> str:
    """``alertmanager/values-kube-prometheus-stack.yaml`` with its header and comments."""
    reasons = [
        *(r.why for r in _inhibit_rules_of(plans)),
        *CHART_REASONS,
    ]
    sources = ", ".join(sorted(p.source for p in plans))
    header = (
        f"{generated_header(sources + ', alertmanager/receivers.yaml')}\n"
        "Opt-in: replaces alertmanager.config's routes, receivers and inhibit rules (Helm "
        "replaces lists).\n"
        "Use: helm upgrade --install <release> prometheus-community/kube-prometheus-stack "
        f"-f <your values> -f {VALUES_FILE}"
    )
    return with_reasons(dump_yaml(values(plans, receivers), header=header), reasons)


# -- AlertmanagerConfig ----------------------------------------------------------------------


def _crd_matcher(m: Matcher) -> Obj:
    return {"name": m.label, "value": m.value, "matchType": m.op}


def _crd_route(route: Route, top: bool = False, clusters: Sequence[str] = ()) -> Obj:
    obj: Obj = {"receiver": route.receiver}
    if top:
        obj["groupBy"] = [*GROUP_BY, *clusters]
    if route.matchers:
        obj["matchers"] = [_crd_matcher(m) for m in route.matchers]
    obj.update(_timing(route.timing, ("groupWait", "groupInterval", "repeatInterval")))
    if route.routes:
        obj["routes"] = [_crd_route(child) for child in route.routes]
    return obj


def _crd_receiver(receiver: NamedReceiver) -> Obj:
    obj: Obj = {"name": receiver.name}
    for integration in receiver.integrations:
        key, entry = integration.crd()
        obj.setdefault(key, []).append(entry)
    return obj


def alertmanager_config(plan: ServicePlan, receivers: ReceiversConfig) -> Obj:
    """The ``AlertmanagerConfig`` of ``plan``: the service's alerts (``service=<name>``; the
    operator adds ``namespace=<ns>``) to its team's ticket receiver, critical ones to its page
    receiver; the inhibit rules scoped to the service. ``__why__`` markers as in :func:`config`.
    Labelled ``release: <kube-prometheus-stack release>`` like the PrometheusRule, for an
    ``alertmanagerConfigSelector`` that selects by release.
    """
    route = team_route(plan.team, receivers, (Matcher(naming.SERVICE, "=", plan.name),))
    clusters = cluster_labels([plan])
    rules = inhibit_rules(
        plan.group_by, service=plan.name, cluster_labels=clusters, goodput=bool(plan.goodput)
    )
    return {
        "apiVersion": API_ALERTMANAGER_CONFIG,
        "kind": "AlertmanagerConfig",
        "metadata": {
            "name": naming.k8s_name(plan.stem),
            "namespace": plan.namespace,
            "labels": {**common_labels(plan), "release": install(plan).release},
        },
        "spec": {
            "route": _crd_route(route, top=True, clusters=clusters),
            "inhibitRules": [
                {
                    "__why__": i,
                    "sourceMatch": [_crd_matcher(m) for m in rule.source],
                    "targetMatch": [_crd_matcher(m) for m in rule.target],
                    "equal": list(rule.equal),
                }
                for i, rule in enumerate(rules)
            ],
            "receivers": [_crd_receiver(r) for r in team_receivers(plan.team, receivers)],
        },
    }


def alertmanager_config_text(plan: ServicePlan, receivers: ReceiversConfig) -> str:
    """``manifests/<service>/alertmanagerconfig.yaml`` with its header and comments."""
    rules = inhibit_rules(
        plan.group_by,
        service=plan.name,
        cluster_labels=cluster_labels([plan]),
        goodput=bool(plan.goodput),
    )
    reasons = [r.why for r in rules]
    header = generated_header(f"{plan.source}, alertmanager/receivers.yaml")
    return with_reasons(dump_yaml(alertmanager_config(plan, receivers), header=header), reasons)


# -- route tests -----------------------------------------------------------------------------


def route_tests_text(plans: Sequence[ServicePlan]) -> str:
    """``alertmanager/routes.test.yaml``: ``cases`` of ``{receiver, labels}``."""
    sources = ", ".join(sorted(p.source for p in plans))
    header = (
        f"{generated_header(sources)}\n"
        "Every alert the specs can emit (its fixed labels) and the receiver it must reach.\n"
        "`obsgen render` checks each case with: amtool config routes test "
        f"--config.file={CONFIG_FILE} --verify.receivers=<receiver> <labels>"
    )
    cases = [{"receiver": c.receiver, "labels": dict(c.labels)} for c in route_cases(plans)]
    return dump_yaml({"config": CONFIG_FILE, "cases": cases}, header=header)


def alertmanager_outputs(
    plans: Sequence[ServicePlan],
    receivers: ReceiversConfig | None = None,
    *,
    tests: bool = True,
    manifests: bool = True,
) -> dict[str, str]:
    """Every Alertmanager output of ``plans``; ``receivers`` None: placeholders for every team.
    ``tests`` False leaves out the route tests and ``manifests`` False the AlertmanagerConfig
    manifests, when nothing writes or proves them (:attr:`generator.core.outputs.BuildOptions.tests`
    and :attr:`~generator.core.outputs.BuildOptions.overlay`: at 1,000 services the route tests are
    15 MB of YAML, two thirds of this function's time).

    Raises:
        KeyError: an alert without a routing role (see ``ALERT_ROLES``).
    """
    if not plans:
        return {}
    chosen = receivers if receivers is not None else EMPTY
    files = {
        CONFIG_FILE: config_text(plans, chosen),
        VALUES_FILE: values_text(plans, chosen),
    }
    if tests:
        files[ROUTE_TESTS_FILE] = route_tests_text(plans)
    for plan in plans:
        if plan.namespace and manifests:
            path = naming.manifest_file(plan.stem, "alertmanagerconfig")
            files[path] = alertmanager_config_text(plan, chosen)
    return dict(sorted(files.items()))
