"""Every generated promtool input series is valid series notation whatever the spec's label
values hold: a ``"``, ``\\`` or ``}`` in a selector value or a model name is escaped in the test
files as in the rules (a value ``check`` accepts never breaks ``render``'s proof).

The plans enable every family that writes its own series (speculative decoding, per-model
SLOs, the LoRA pool, KV transfer on a disaggregated service) and the HPA's adapter query.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import pytest

from generator.builders import hpa
from generator.cases.rule_tests import rule_test_files
from generator.families import FAMILIES
from generator.plan import ServicePlan
from tests.test_server_reality import plan_of, spec_data

HOSTILE = 'chat"} or vector(1) #\\'
_VALUE = r'"(?:[^"\\]|\\.)*"'
_NAME = r"(?:[a-zA-Z_][a-zA-Z0-9_]*|" + _VALUE + ")"
SERIES = re.compile(
    rf"^(?:[a-zA-Z_:][a-zA-Z0-9_:]*)?\{{(?:{_VALUE},)?(?:{_NAME}={_VALUE}(?:,{_NAME}={_VALUE})*)?\}}$"
)


@functools.cache
def _plans() -> dict[str, ServicePlan]:
    base: dict[str, Any] = {
        "serverVersion": "0.13",
        "selector": {"namespace": "ns", "job": HOSTILE},
    }
    return {
        "models and speculative decoding": plan_of(
            spec_data("vllm", **base, models={"names": ['m"1', "m2"]})
        ),
        "prefill/decode roles": plan_of(
            spec_data("vllm", **base, roles={"prefill": "p", "decode": "d", "router": "r"})
        ),
    }


def _series(groups: list[dict[str, Any]]) -> list[str]:
    return [s["series"] for g in groups for s in g.get("input_series", [])]


@pytest.mark.parametrize("name", list(_plans()))
def test_every_input_series_of_every_test_file_is_valid_notation(name: str) -> None:
    plan = _plans()[name]
    files = rule_test_files(plan)
    texts = [t for doc in files.values() for t in _series(doc["tests"])]
    for family in FAMILIES:
        texts += _series(family.cases(plan))
    assert texts
    bad = sorted({t for t in texts if not SERIES.match(t)})
    assert not bad, bad[:5]
    assert any('\\"} or vector(1)' in t for t in texts)


def test_the_adapter_query_escapes_the_label_values() -> None:
    query = hpa.adapter_query("service:queue:sum", {"service": 'a"b'}, 'n"s')
    assert 'service="a\\"b"' in query and 'namespace="n\\"s"' in query
