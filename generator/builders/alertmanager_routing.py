"""Alert routing and inhibition, independent of the file format that carries them.

One table, :data:`ALERT_ROLES`, classifies every alert name obsgen emits; the inhibit rules
and the runbooks' "Where it goes" sections are derived from it, so a new alert is classified
in one place (a test fails until it is). Receivers are per team: ``<team>-page`` gets
``severity: critical``, ``<team>-ticket`` everything else of the team.

:mod:`generator.builders.alertmanager` writes these as an Alertmanager configuration file, a
kube-prometheus-stack values overlay and ``AlertmanagerConfig`` objects.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from generator import naming
from generator.builders.rulefile import alert_rules
from generator.errors import Diagnostic, Level, capped_list
from generator.families import FAMILIES
from generator.families.base import Role
from generator.families.kinds import KINDS
from generator.plan import ServicePlan
from generator.promql import Matcher
from generator.receivers import RECEIVERS_FILE, Receiver, ReceiversConfig, Timing

ALERT_ROLES: dict[str, Role] = {
    **{k.alert: k.role for k in KINDS},
    **{alert: f.role for f in FAMILIES for alert in f.alerts},
}

# Notifications are grouped per alert name, service and SLO: a new kind of problem of a
# service opens its own page (PagerDuty de-duplicates by group, so a problem merged into an
# acknowledged group would page nobody). `namespace` keeps two deployments of one service
# name apart; a label an alert lacks groups as empty, so it never splits anything.
GROUP_BY = ("alertname", "namespace", naming.SERVICE, naming.SLO)
# Labels telling two alerts of one name apart (besides service and namespace): a critical
# alert holds back the warning of the *same* thing only — SLO burn of the same SLO, the same
# pod or GPU, the same missing signal; Alertmanager treats a label both alerts lack as equal.
INSTANCE_LABELS = (
    naming.SLO,
    naming.INDICATOR,
    naming.SIGNAL,
    naming.METRIC,
    "pod",
    "container",
    "uuid",
)
PAGE_SEVERITY = "critical"
DEFAULT_RECEIVER = "obsgen-default"


def role(alert: str) -> Role:
    """The :class:`Role` of ``alert``.

    Raises:
        KeyError: ``alert`` is not in :data:`ALERT_ROLES` (a programming error: classify it).
    """
    try:
        return ALERT_ROLES[alert]
    except KeyError:
        raise KeyError(
            f"alert {alert!r} has no routing role: add it to ALERT_ROLES in {__name__}"
        ) from None


def alerts_with(*roles: Role) -> list[str]:
    """Alert names of the given roles, sorted."""
    return sorted(a for a, r in ALERT_ROLES.items() if r in roles)


_SLUG = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def team_slug(team: str) -> str:
    """The team in receiver names: itself when a DNS-1123 label, else a lowercase slug plus 6
    hex digits of its SHA-256 (so ``ML Platform`` and ``ml-platform`` stay apart)."""
    if _SLUG.match(team):
        return team
    slug = re.sub(r"[^a-z0-9]+", "-", team.lower()).strip("-")
    digest = hashlib.sha256(team.encode()).hexdigest()[:6]
    return f"{slug}-{digest}" if slug else f"team-{digest}"


def page_receiver(team: str) -> str:
    """Receiver name of the team's pages (``<team>-page``)."""
    return f"{team_slug(team)}-page"


def ticket_receiver(team: str) -> str:
    """Receiver name of the team's tickets (``<team>-ticket``)."""
    return f"{team_slug(team)}-ticket"


def receiver_for(team: str, severity: str) -> str:
    """Where an alert of ``team`` with ``severity`` goes: critical pages, the rest tickets."""
    return page_receiver(team) if severity == PAGE_SEVERITY else ticket_receiver(team)


@dataclass(frozen=True)
class Route:
    """A route: alerts matching every matcher go to ``receiver`` unless a child matches."""

    receiver: str
    matchers: tuple[Matcher, ...]
    timing: Timing
    routes: tuple[Route, ...] = ()


@dataclass(frozen=True)
class InhibitRule:
    """While an alert matching ``source`` fires, alerts matching ``target`` whose ``equal``
    labels have the same values are not notified. ``why`` is the reason, for the comment."""

    why: str
    source: tuple[Matcher, ...]
    target: tuple[Matcher, ...]
    equal: tuple[str, ...]


@dataclass(frozen=True)
class NamedReceiver:
    """A receiver of the configuration: its integrations (none: a placeholder)."""

    name: str
    integrations: tuple[Receiver, ...]


def _names_regex(names: Iterable[str]) -> str:
    # Alert names are identifiers ([A-Za-z0-9_]), so they need no regex escaping.
    return "|".join(sorted(names))


def team_route(team: str, receivers: ReceiversConfig, scope: tuple[Matcher, ...]) -> Route:
    """The route of ``team``'s alerts matching ``scope``: tickets, with a child for pages."""
    page = Route(
        page_receiver(team),
        (Matcher(naming.SEVERITY, "=", PAGE_SEVERITY),),
        receivers.timing.page,
    )
    return Route(ticket_receiver(team), scope, receivers.timing.ticket, (page,))


def _symptoms(goodput: bool) -> list[str]:
    """The alerts ``ModelTargetDown`` holds back; ``GoodputBudgetLow`` only where some spec has
    a goodput SLO (configurations and runbooks without one stay as they were)."""
    return [
        a
        for a in alerts_with(Role.SYMPTOM, Role.GUARD)
        if goodput or a != naming.ALERT_GOODPUT_BUDGET_LOW
    ]


SLO_PAGE_HOLDS: tuple[tuple[str, str, str], ...] = (
    (
        naming.ALERT_ERROR_BUDGET_BURN,
        naming.ALERT_ERROR_BUDGET_LOW,
        "A fast SLO-burn page (ErrorBudgetBurn, critical) holds back the budget-left "
        "ticket (ErrorBudgetLow) of the same SLO: while the budget burns fast enough to "
        "page, the page already says it is going. Once the page resolves, the ticket is "
        "delivered if the budget left is still low.",
    ),
    (
        naming.ALERT_ERROR_BUDGET_BURN,
        naming.ALERT_BURN_BY_MODEL,
        "A service-level SLO-burn page (ErrorBudgetBurn, critical) holds back the per-model "
        "burn alerts (ErrorBudgetBurnByModel) of the same SLO: while the whole service "
        "pages, one page per model only repeats it (the runbook breaks the burn down by "
        "model). A model burning alone, with the service within its budget, still pages.",
    ),
    (
        naming.ALERT_GOODPUT_BURN,
        naming.ALERT_GOODPUT_BUDGET_LOW,
        "A fast goodput-burn page (GoodputBudgetBurn, critical) holds back the "
        "goodput budget-left ticket (GoodputBudgetLow) of the same SLO, as for the "
        "other SLOs.",
    ),
)
"""(page, the alert it holds back, why): a critical SLO page and an alert of the same SLO that
only repeats it while the page fires, in the order of the configuration's rules."""


def _slo_page_holds(
    scope: tuple[Matcher, ...], cluster_labels: Sequence[str], goodput: bool
) -> list[InhibitRule]:
    """One rule per :data:`SLO_PAGE_HOLDS` entry: the page (critical) holds back the other
    alert of the same namespace, service, SLO (and cluster); the goodput page's only where
    some spec has a goodput SLO."""
    return [
        InhibitRule(
            why,
            (
                *scope,
                Matcher("alertname", "=", page),
                Matcher(naming.SEVERITY, "=", "critical"),
            ),
            (*scope, Matcher("alertname", "=", held)),
            ("namespace", naming.SERVICE, naming.SLO, *cluster_labels),
        )
        for page, held, why in SLO_PAGE_HOLDS
        if goodput or page != naming.ALERT_GOODPUT_BURN
    ]


def inhibit_rules(
    group_by_labels: Sequence[str],
    service: str | None = None,
    cluster_labels: Sequence[str] = (),
    goodput: bool = False,
) -> list[InhibitRule]:
    """The inhibit rules; with ``service``, each side also matches ``service=<service>``.

    ``group_by_labels`` are the specs' ``groupBy`` labels (per-model series), added to the
    labels that must be equal for the severity rule. ``cluster_labels`` (the specs'
    ``clusterLabel``) must be equal in every rule: one cluster's outage never holds back
    another cluster's alerts. ``goodput``: some spec has a goodput SLO, whose page
    (``GoodputBudgetBurn``) holds back its budget-left ticket (``GoodputBudgetLow``) as for the
    other SLOs (a rule only then, so configurations without goodput stay as they were).
    """
    scope = (Matcher(naming.SERVICE, "=", service),) if service else ()
    symptoms = _symptoms(goodput)
    gpu = alerts_with(Role.GPU)
    instance = tuple(dict.fromkeys((*INSTANCE_LABELS, *sorted(group_by_labels))))
    return [
        InhibitRule(
            "No target of the service can be scraped (ModelTargetDown, critical): its latency, "
            "error, queue, SLO-burn and input-guard alerts only echo that blindness, so only "
            "ModelTargetDown pages. The warning (some targets down) holds nothing back: the "
            "targets still up serve traffic, and their symptoms are real. Memory and OOM "
            "alerts are not held back: they often say why the targets are down.",
            (
                *scope,
                Matcher("alertname", "=", naming.ALERT_TARGET_DOWN),
                Matcher(naming.SEVERITY, "=", PAGE_SEVERITY),
            ),
            (*scope, Matcher("alertname", "=~", _names_regex(symptoms))),
            ("namespace", naming.SERVICE, *cluster_labels),
        ),
        InhibitRule(
            "The pod's NVML sidecar is down or cannot read NVML (GPUExporterDown): that pod's "
            "GPU alerts read stale or missing series, so they are held back; other pods' GPU "
            "alerts are not (equal pod).",
            (*scope, Matcher("alertname", "=", naming.ALERT_GPU_EXPORTER_DOWN)),
            (*scope, Matcher("alertname", "=~", _names_regex(gpu))),
            ("namespace", naming.SERVICE, "pod", *cluster_labels),
        ),
        InhibitRule(
            "A critical alert holds back the warning and info alerts of the same alert name, "
            "service and instance (same SLO, indicator, signal, pod, GPU): the fast SLO-burn page "
            "already covers the slow-burn ticket of the same SLO.",
            (*scope, Matcher(naming.SEVERITY, "=", "critical")),
            (*scope, Matcher(naming.SEVERITY, "=~", "warning|info")),
            ("alertname", "namespace", naming.SERVICE, *instance, *cluster_labels),
        ),
        *_slo_page_holds(scope, cluster_labels, goodput),
        InhibitRule(
            "A warning holds back the info alert of the same alert name, service and instance.",
            (*scope, Matcher(naming.SEVERITY, "=", "warning")),
            (*scope, Matcher(naming.SEVERITY, "=", "info")),
            ("alertname", "namespace", naming.SERVICE, *instance, *cluster_labels),
        ),
    ]


def teams_of(plans: Sequence[ServicePlan]) -> list[str]:
    """The distinct teams of ``plans``, sorted."""
    return sorted({p.team for p in plans})


def team_receivers(team: str, receivers: ReceiversConfig) -> list[NamedReceiver]:
    """``<team>-page`` and ``<team>-ticket``; placeholders (no integration) when
    ``receivers`` does not list the team."""
    entry = receivers.team(team)
    return [
        NamedReceiver(page_receiver(team), tuple(entry.page) if entry else ()),
        NamedReceiver(ticket_receiver(team), tuple(entry.ticket) if entry else ()),
    ]


def default_receiver(receivers: ReceiversConfig) -> NamedReceiver:
    """The root receiver: alerts of no known team (``default`` in the file, else none)."""
    return NamedReceiver(DEFAULT_RECEIVER, tuple(receivers.default))


def group_by_labels(plans: Sequence[ServicePlan]) -> list[str]:
    """Every ``groupBy`` label of ``plans``, sorted."""
    return sorted({label for p in plans for label in p.group_by})


def cluster_labels(plans: Sequence[ServicePlan]) -> list[str]:
    """Every ``spec.prometheus.clusterLabel`` of ``plans``, sorted: notifications are grouped
    per cluster too, and inhibition never crosses clusters."""
    return sorted({p.cluster_label for p in plans if p.cluster_label})


@dataclass(frozen=True)
class RouteCase:
    """An alert a spec can emit (its fixed labels) and the receiver it must reach."""

    labels: tuple[tuple[str, str], ...]
    receiver: str


def alert_labels(plan: ServicePlan) -> list[dict[str, str]]:
    """The fixed labels of every alerting rule of ``plan``: ``alertname`` and the rule's own
    labels, exactly as the rules set them (the service's ``namespace`` among them when the
    spec's selector fixes it, :func:`generator.parts.common.identity`). Kept on the plan."""
    return plan.derive(ALERT_LABELS, lambda: _alert_labels(plan))


def _alert_labels(plan: ServicePlan) -> list[dict[str, str]]:
    found = []
    for rule in alert_rules(plan):
        labels = {"alertname": rule["alert"], **rule["labels"]}
        found.append(dict(sorted(labels.items())))
    return found


ALERT_LABELS = "alert_labels"  # the ServicePlan.derive key of alert_labels


def route_cases(plans: Sequence[ServicePlan]) -> list[RouteCase]:
    """One case per distinct alert of ``plans``: its labels and ``<team>-page`` for critical
    alerts, ``<team>-ticket`` for the others.

    Raises:
        KeyError: an alert name without a role in :data:`ALERT_ROLES`.
    """
    cases: dict[tuple[tuple[str, str], ...], RouteCase] = {}
    for plan in sorted(plans, key=lambda p: p.name):
        for labels in alert_labels(plan):
            role(labels["alertname"])
            key = tuple(labels.items())
            cases.setdefault(key, RouteCase(key, receiver_for(plan.team, labels[naming.SEVERITY])))
    return list(cases.values())


def routing_warnings(
    plans: Sequence[ServicePlan], receivers: ReceiversConfig | None, complete: bool
) -> list[Diagnostic]:
    """Warnings about the receivers: a team of a spec that has none (placeholders), a team in
    the file that owns no spec (only when ``complete``: every spec was loaded), a service
    whose spec names no namespace (no ``AlertmanagerConfig`` for it)."""
    warnings = []
    for team in teams_of(plans):
        sources = capped_list(sorted(p.source for p in plans if p.team == team))
        if receivers is None:
            where, path = f"{RECEIVERS_FILE} (no such file)", ""
        elif receivers.team(team) is None:
            where, path = RECEIVERS_FILE, "teams"
        else:
            continue
        warnings.append(
            Diagnostic(
                where,
                path,
                f"no receivers for team {team!r} ({sources}): its pages and tickets go to "
                f"placeholder receivers {page_receiver(team)} and {ticket_receiver(team)} that "
                "deliver nothing; add the team (docs/alerting.md)",
                Level.WARNING,
            )
        )
    if receivers is not None and complete:
        known = set(teams_of(plans))
        shown = capped_list(sorted(known)) or "none"
        for i, entry in enumerate(receivers.teams):
            if entry.name not in known:
                near = difflib.get_close_matches(entry.name, sorted(known), n=1)
                hint = f"did you mean {near[0]!r}?" if near else "check the spelling"
                warnings.append(
                    Diagnostic(
                        RECEIVERS_FILE,
                        f"teams[{i}].name",
                        f"team {entry.name!r} owns no spec (teams of the specs: {shown}); {hint}",
                        Level.WARNING,
                    )
                )
    for plan in plans:
        if not plan.namespace:
            warnings.append(
                Diagnostic(
                    plan.source,
                    "spec.selector.namespace",
                    "not set: no AlertmanagerConfig is rendered for this service (the operator "
                    "routes only alerts of the object's own namespace); use "
                    "alertmanager/alertmanager.yaml. Its records and alerts are told apart from "
                    "another service of the same name by the service label alone",
                    Level.WARNING,
                )
            )
    return warnings


def inhibition_note(alert: str, goodput: bool = False) -> str:
    """One Markdown paragraph for ``alert``'s runbook: what holds it back, what it holds back
    (``goodput``: some spec of the page has a goodput SLO, :func:`inhibit_rules`).

    Raises:
        KeyError: ``alert`` has no role in :data:`ALERT_ROLES`.
    """
    own = role(alert)
    if own is Role.TARGETS_DOWN:
        held = ", ".join(f"`{a}`" for a in _symptoms(goodput))
        note = (
            f"While the `critical` rule fires (no target scraped), it holds back the same "
            f"service's {held}: they only echo the blindness. The `warning` rule (some targets "
            "down) holds nothing back. Memory and OOM alerts are never held back: they often "
            "say why the targets are down."
        )
    elif own is Role.GPU_EXPORTER_DOWN:
        held = ", ".join(f"`{a}`" for a in alerts_with(Role.GPU))
        note = f"While it fires for a pod, it holds back that pod's {held}."
    elif own in (Role.SYMPTOM, Role.GUARD):
        note = (
            f"Held back while `{naming.ALERT_TARGET_DOWN}` (`critical`) fires for the same "
            "service: with no target scraped, this alert only echoes that."
        )
    elif own is Role.GPU:
        note = f"Held back while `{naming.ALERT_GPU_EXPORTER_DOWN}` fires for the same pod."
    else:
        note = (
            f"Never held back by `{naming.ALERT_TARGET_DOWN}`: memory pressure and OOM kills "
            "are often why the targets are down."
        )
    if alert == naming.ALERT_ERROR_BUDGET_LOW:
        note += (
            f" Held back while `{naming.ALERT_ERROR_BUDGET_BURN}` pages (`critical`) for the same"
            " SLO: the page already says the budget is going; this ticket follows once the page"
            " resolves, if the budget left is still low."
        )
    elif alert == naming.ALERT_ERROR_BUDGET_BURN:
        note += (
            f" Its `critical` page holds back `{naming.ALERT_ERROR_BUDGET_LOW}` of the same SLO."
        )
    elif alert == naming.ALERT_BURN_BY_MODEL:
        note += (
            f" Held back while `{naming.ALERT_ERROR_BUDGET_BURN}` pages (`critical`) for the same"
            " SLO: the service's page covers every model; a model burning alone still pages."
        )
    elif alert == naming.ALERT_GOODPUT_BUDGET_LOW:
        note += (
            f" Held back while `{naming.ALERT_GOODPUT_BURN}` pages (`critical`) for the same"
            " SLO; this ticket follows once the page resolves, if the budget left is still low."
        )
    elif alert == naming.ALERT_GOODPUT_BURN and goodput:
        note += (
            f" Its `critical` page holds back `{naming.ALERT_GOODPUT_BUDGET_LOW}` of the same SLO."
        )
    return (
        f"{note} A `critical` alert of this name holds back the `warning` of the same "
        "service and instance (SLO, pod, GPU)."
    )


def alert_routes(plans: Sequence[ServicePlan]) -> dict[str, list[tuple[str, str, str]]]:
    """``{alert: [(service, severity, receiver), …]}`` over every alert ``plans`` emit, sorted."""
    found: dict[str, set[tuple[str, str, str]]] = {}
    for plan in plans:
        for labels in alert_labels(plan):
            severity = labels[naming.SEVERITY]
            found.setdefault(labels["alertname"], set()).add(
                (plan.name, severity, receiver_for(plan.team, severity))
            )
    return {alert: sorted(rows) for alert, rows in sorted(found.items())}
