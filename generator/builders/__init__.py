"""Output builders: pure functions from a ``ServicePlan`` (or all plans) to the data of each
generated file (rules, dashboards, Kubernetes objects, Alertmanager, runbooks; the promtool
tests are :mod:`generator.cases`). They import the families and :mod:`generator.parts`.

They read plans, never specs; :mod:`generator.core.outputs` calls them. Why their output can be
trusted: docs/architecture.md, "Why each stage can be trusted".
"""
