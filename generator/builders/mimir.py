"""Rule files for Grafana Mimir's ruler: one ``mimir/<service>.yaml`` per service, in the layout
``mimirtool rules load`` and ``mimirtool rules sync`` read.

That layout is a Prometheus rule file with a top-level ``namespace`` key (Mimir's ruler keeps
rule groups per tenant and namespace; without the key mimirtool names the namespace after the
file). Every service gets its own namespace, ``obsgen-<service>`` (:func:`naming.mimir_namespace`),
so ``mimirtool rules sync --namespaces-regex '^obsgen-'`` replaces obsgen's rules and leaves
every other namespace of the tenant alone. The ``groups`` are byte for byte those of
``rules/<service>.rules.yaml``: the text is reused, not re-rendered.
"""

from __future__ import annotations

from generator import naming
from generator.plan import ServicePlan
from generator.yamlio import dump_yaml, generated_header


def mimir_rule_file(plan: ServicePlan, rules_text: str) -> str:
    """The Mimir rule file of ``plan`` from its rendered Prometheus rule file ``rules_text``.

    Raises:
        ValueError: ``rules_text`` does not hold a ``groups:`` document after its header (a
            programming error: it must be the output of the rule-file builder).
    """
    lines = rules_text.splitlines(keepends=True)
    while lines and lines[0].startswith("#"):  # the generated header
        lines.pop(0)
    body = "".join(lines)
    if not body.startswith("groups:"):
        raise ValueError(f"{naming.rules_file(plan.stem)} does not start with groups:")
    namespace = dump_yaml({"namespace": naming.mimir_namespace(plan.stem)})
    header = generated_header(plan.source)
    return "".join(f"# {line}\n" for line in header.splitlines()) + namespace + body
