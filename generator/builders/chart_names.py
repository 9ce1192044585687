"""The names kube-prometheus-stack derives from obsgen's values, as its templates derive them.

``kube-prometheus-stack.fullname`` (templates/_helpers.tpl): ``fullnameOverride``, else the
release name when it contains the chart name (or ``nameOverride``), else
``<release>-<name>``; cut to 26 characters, one trailing ``-`` trimmed. Each
``additionalPrometheusRulesMap`` entry becomes a PrometheusRule named
``<fullname>-<key>`` cut to 63, one trailing ``-`` trimmed
(templates/prometheus/additionalPrometheusRules.yaml): two keys that agree in their first
characters get one name, and one service's rules silently replace the other's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from generator import naming
from generator.errors import Diagnostic, Level, ObsgenError
from generator.plan import ServicePlan
from generator.project_config import InstallConfig

CHART_NAME = "kube-prometheus-stack"
COMMON_RELEASES = ("kube-prometheus-stack", "prometheus", "monitoring", "kps", "prometheus-stack")
"""Release names checked when obsgen.yaml does not name the release (the chart's README uses
the first; the others are the common choices of install guides)."""
CONFIG_FILE = "obsgen.yaml"


@dataclass(frozen=True)
class Release:
    """A kube-prometheus-stack release: its name and the chart's two name overrides."""

    name: str
    fullname_override: str | None = None
    name_override: str | None = None


def configured_release(install: InstallConfig) -> Release | None:
    """The release ``install`` (obsgen.yaml) names, or None when it names none."""
    if install.release is None:
        return None
    return Release(install.release, install.fullname_override, install.name_override)


def _cut(text: str, limit: int) -> str:
    """Helm's ``trunc limit | trimSuffix "-"`` (one ``-`` trimmed, as strings.TrimSuffix)."""
    return text[:limit].removesuffix("-")


def fullname(release: Release) -> str:
    """``kube-prometheus-stack.fullname`` of ``release``."""
    if release.fullname_override:
        return _cut(release.fullname_override, 26)
    name = release.name_override or CHART_NAME
    if name in release.name:
        return _cut(release.name, 26)
    return _cut(f"{release.name}-{name}", 26)


def prometheus_rule_name(release: Release, key: str) -> str:
    """The PrometheusRule the chart renders for ``additionalPrometheusRulesMap.<key>``."""
    return _cut(f"{fullname(release)}-{key}", 63)


def collisions(release: Release, plans: Sequence[ServicePlan]) -> dict[str, list[ServicePlan]]:
    """``{PrometheusRule name: [the services whose entries get it]}``, two or more each."""
    by_name: dict[str, list[ServicePlan]] = {}
    for plan in plans:
        by_name.setdefault(prometheus_rule_name(release, naming.k8s_name(plan.stem)), []).append(
            plan
        )
    return {name: found for name, found in sorted(by_name.items()) if len(found) > 1}


def _problem(release: Release, name: str, plans: Sequence[ServicePlan], level: Level) -> Diagnostic:
    keys = ", ".join(f"additionalPrometheusRulesMap.{naming.k8s_name(p.stem)}" for p in plans)
    room = 63 - len(fullname(release)) - 1
    return Diagnostic(
        plans[0].source,
        "metadata.name",
        f"with release {release.name!r}, kube-prometheus-stack names the PrometheusRules of "
        f"{keys} all {name!r} (<fullname {fullname(release)!r}>-<key> cut to 63): one "
        "service's rules would silently replace the others'. Set fullnameOverride (e.g. "
        f"install.fullnameOverride: kps in {CONFIG_FILE} and in the chart's values), or names "
        f"that differ in their first {room - len('obsgen-')} characters",
        level,
    )


def check_chart_names(
    plans: Sequence[ServicePlan],
    release: Release | None,
    warn: Callable[[Diagnostic], None] | None = None,
) -> None:
    """Refuse PrometheusRule names the chart would give two services, for ``release`` (from
    obsgen.yaml ``install``); without one, warn for each release name in the specs'
    ``prometheus.release`` and :data:`COMMON_RELEASES` that would collide.

    Raises:
        ObsgenError: two services get one name with the configured release (exit 2).
    """
    if release is not None:
        found = collisions(release, plans)
        if found:
            raise ObsgenError(
                [_problem(release, name, group, Level.ERROR) for name, group in found.items()]
            )
        return
    if warn is None:
        return
    names = sorted({*(p.install.release for p in plans if p.install), *COMMON_RELEASES})
    for name in names:
        candidate = Release(name)
        for rule_name, group in collisions(candidate, plans).items():
            warning = _problem(candidate, rule_name, group, Level.WARNING)
            warn(
                Diagnostic(
                    warning.file,
                    warning.path,
                    warning.message + f"; or set install.release in {CONFIG_FILE} to the "
                    "release you install (then only that one is checked, as an error)",
                    Level.WARNING,
                )
            )
