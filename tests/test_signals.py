"""The signal registry (:data:`generator.signals.SIGNALS`): each module listed once, each key a
field of the plan and of the preset, the families' declared signals known, and a plan's
records and healthy series made of its signals' (docs/architecture.md, "Signals and families")."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil

import pytest
from pydantic.alias_generators import to_snake

from generator import signals
from generator.builders.service_rules import traffic_records
from generator.families import FAMILIES
from generator.plan import ServicePlan
from generator.presets import Preset
from generator.signals import BY_KEY, SIGNALS
from generator.signals.base import Signal
from generator.signals.healthy import healthy
from generator.spec import Metrics
from tests.test_server_reality import plan_of, spec_data

# Not signals: the declaration, the healthy service made of every signal's reading, the
# latency histograms (one per indicator in ServicePlan.histograms) and the request counter,
# not yet SIGNALS entries.
_NOT_SIGNALS = ("base", "healthy", "histograms", "requests")
_MODULES = sorted(
    m.name for m in pkgutil.iter_modules(signals.__path__) if m.name not in _NOT_SIGNALS
)


def test_every_signal_module_is_listed_once() -> None:
    assert len(BY_KEY) == len(SIGNALS)
    declared_in: dict[str, list[str]] = {}
    for name in _MODULES:
        module = importlib.import_module(f"generator.signals.{name}")
        declared = [v for v in vars(module).values() if isinstance(v, Signal)]
        assert declared and all(s in SIGNALS for s in declared), name
        for signal in declared:
            declared_in.setdefault(signal.key, []).append(name)
    assert sorted(declared_in) == sorted(s.key for s in SIGNALS)
    assert all(len(modules) == 1 for modules in declared_in.values()), declared_in


@pytest.mark.parametrize("signal", SIGNALS, ids=lambda s: s.key)
def test_a_signal_is_a_field_of_the_plan_and_of_the_preset(signal: Signal) -> None:
    assert signal.key in {f.name for f in dataclasses.fields(ServicePlan)}
    assert signal.key in {f.name for f in dataclasses.fields(Preset)}
    if signal.spec_field is not None:
        assert to_snake(signal.spec_field) in Metrics.model_fields
    if signal.needs is not None:
        assert signal.needs.attribute == signal.key
        assert signal.needs.declarable == (signal.spec_field is not None)
        if signal.needs.declarable:
            assert signal.needs.metric == signal.spec_field


def test_every_family_reads_known_signals() -> None:
    for f in FAMILIES:
        assert set(f.signals) <= set(BY_KEY), f.key
        if f.signals:
            assert f.needs is BY_KEY[f.signals[0]].needs, f.key


def _vllm() -> ServicePlan:
    return plan_of(spec_data("vllm"))


def test_the_traffic_records_end_with_the_signals_records_in_registry_order() -> None:
    plan = _vllm()
    own = [r for s in SIGNALS for r in s.records(plan)]
    assert own, "a vLLM plan records its saturation signals"
    assert traffic_records(plan)[-len(own) :] == own


def test_a_healthy_service_shows_every_signal_it_reads() -> None:
    plan = _vllm()
    series = healthy(plan, [])
    names = {key[0] for key in (*series.counters, *series.gauges)}
    for signal in SIGNALS:
        value = signal.of(plan)
        if value is None or signal.healthy.__module__ != signal.resolve.__module__:
            continue  # not on this server, or it adds no healthy series of its own
        assert any(n in names for n in signal.reads(value)), signal.key
