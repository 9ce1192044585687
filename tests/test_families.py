"""The alert-family registry: every family module listed once, no default lost."""

from __future__ import annotations

import importlib
import pkgutil

from pydantic.alias_generators import to_camel

from generator import families, plan, spec
from generator.builders import alertmanager_routing, runbooks
from generator.families import FAMILIES
from generator.families.kinds import KINDS
from generator.text import TEMPLATES_DIR as TEMPLATES


def _family_modules() -> list[str]:
    """Modules of generator/families/ that define a ``FAMILY``."""
    names = [m.name for m in pkgutil.iter_modules(families.__path__)]
    return sorted(
        f"generator.families.{n}"
        for n in names
        if hasattr(importlib.import_module(f"generator.families.{n}"), "FAMILY")
    )


def test_families_lists_each_family_module_once() -> None:
    # By identity, not by ``rules.__module__``: a family built by a shared factory
    # (gpu_health.Reading) has its callables in the factory's module.
    declared = {name: importlib.import_module(name).FAMILY for name in _family_modules()}
    listed = [name for f in FAMILIES for name, family in declared.items() if family is f]
    assert sorted(listed) == sorted(declared)
    assert len(FAMILIES) == len(declared)
    assert len({f.key for f in FAMILIES}) == len(FAMILIES)


def test_every_alert_default_comes_from_a_family_or_a_declared_kind() -> None:
    registered = {f.key for f in FAMILIES}
    legacy = {k.key for k in KINDS if k.key is not None}
    assert registered.isdisjoint(legacy), registered & legacy
    assert set(plan.ALERT_DEFAULTS) == registered | legacy
    # Every spec.alerts field has defaults, and nothing else does.
    assert set(plan.ALERT_DEFAULTS) == set(spec.Alerts.model_fields)
    for f in FAMILIES:
        assert plan.ALERT_DEFAULTS[f.key] == f.defaults


def test_each_family_names_its_spec_field_templates_role_and_runbook() -> None:
    for f in FAMILIES:
        assert f.spec_field == to_camel(f.key)
        for alert in f.alerts:
            assert (TEMPLATES / "alerts" / f"{alert}.j2").is_file(), alert
            assert (TEMPLATES / "runbooks" / f"{alert}.md.j2").is_file(), alert
            assert alertmanager_routing.ALERT_ROLES[alert] is f.role
            assert runbooks.ALERTS[alert] == f.key


def test_the_gpu_group_is_the_sidecar_families_and_plans_without_the_exporter_leave_them_out() -> (
    None
):
    sidecar = {f.key for f in FAMILIES if f.sidecar}
    assert sidecar == {f.key for f in FAMILIES if f.group == "gpu"}
    assert sidecar <= plan._GPU_ALERTS
