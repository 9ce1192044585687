"""Output builders: pure functions from a ``ServicePlan`` (or all plans) to the data of each
generated file (rules, promtool tests, dashboards, Kubernetes objects, Alertmanager, runbooks).

They read plans, never specs; :mod:`generator.build` calls them. Why their output can be
trusted: docs/architecture.md, "Why each stage can be trusted".
"""
