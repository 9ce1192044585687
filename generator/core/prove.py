"""The pure proof: the rendered files run through the real tools, ``promtool`` and ``amtool``.

Every rule file passes ``promtool check rules``, every generated test file ``promtool test
rules`` (split by the rule groups its test groups observe, :mod:`generator.proof_split`), the
Alertmanager configurations ``amtool check-config`` and their route tests ``amtool config
routes test``, in a temporary copy. Nothing is skipped here; what the fleet layer may skip
(files unchanged on disk, proofs the cache records) is :mod:`generator.fleet.prove`'s.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import yaml

from generator import amtool, promtool
from generator.builders import alertmanager
from generator.errors import Diagnostic, Level
from generator.plan import ServicePlan
from generator.proof_split import RuleFiles, estimated_cost, split_test_file


@dataclass(frozen=True)
class Proof:
    """What promtool found: ``ok`` when every rule file loaded and every test passed;
    ``diagnostics`` the check's problems when it failed, else the tests'."""

    ok: bool
    diagnostics: list[Diagnostic]


def is_rule_file(rel: str) -> bool:
    """True for ``rules/<service>.rules.yaml``."""
    return rel.startswith("rules/") and rel.endswith(".rules.yaml")


def is_test_file(rel: str) -> bool:
    """True for a generated promtool test file, ``rules/<service>.…test.yaml``."""
    return rel.startswith("rules/") and rel.endswith(".test.yaml")


def service_of(rel: str) -> str:
    """The service (stem) a ``rules/<service>.…`` file belongs to."""
    return rel.removeprefix("rules/").split(".")[0]


def promtool_problems(
    outputs: Mapping[str, str], unproved: Collection[str] = ()
) -> list[Diagnostic]:
    """Run ``promtool check rules`` over every rule file and, beside it, ``promtool test
    rules`` over every generated test file of ``outputs`` (by repository path), in a temp
    copy. Returns the problems found: the check's when it fails, else the tests'.

    ``unproved``: services left out of both (their rules use syntax this promtool cannot
    parse, :func:`promtool3_unproved`).

    Raises:
        ObsgenError: promtool is missing.
    """
    rules = sorted(p for p in outputs if is_rule_file(p) and service_of(p) not in unproved)
    if not rules:
        return []
    tests = sorted(p for p in outputs if is_test_file(p) and service_of(p) not in unproved)
    return run_promtool(outputs, rules, tests).diagnostics


def run_promtool(
    outputs: Mapping[str, str],
    rules: Sequence[str],
    tests: Sequence[str],
    passed: Mapping[str, Collection[str]] | None = None,
    on_split: Callable[[int], None] | None = None,
    on_done: Callable[[int], None] | None = None,
) -> Proof:
    """``promtool check rules`` over ``rules`` and, beside it, ``promtool test rules`` over
    ``tests`` (repository paths of ``outputs``), each test file split by the rule groups its
    test groups observe (:func:`generator.proof_split.split_test_file`).

    ``passed``: by test file, the keys of assertions known to pass (they are not run again);
    ``on_split`` receives the number of test parts once they are split, ``on_done`` the number
    finished as they finish.

    Raises:
        ObsgenError: promtool is missing.
    """
    with tempfile.TemporaryDirectory(prefix="obsgen-check-") as tmp:
        base = Path(tmp)
        for rel in (*rules, *tests):
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            (base / rel).write_text(outputs[rel], encoding="utf-8")
        # The check runs beside the split and the tests (so a proof waits less); its verdict
        # comes first: the parts assume that every rule loads.
        with ThreadPoolExecutor(max_workers=1) as beside:
            checking = beside.submit(promtool.check_rules, [base / r for r in rules], list(rules))
            costs: dict[Path, int] = {}
            read: RuleFiles = {}
            known = passed or {}
            parts = [
                (part, t)
                for t in tests
                for part in split_test_file(base / t, costs, known.get(t, ()), read)
            ]
            if on_split is not None:
                on_split(len(parts))
            tested = promtool.test_rules(
                [part for part, _ in parts],
                [t for _, t in parts],
                on_done=on_done,
                cost=lambda part: costs[part] if part in costs else estimated_cost(part),
            )
            checked = checking.result()
        if not checked.ok:
            return Proof(False, list(checked.diagnostics))
        return Proof(tested.ok, list(tested.diagnostics))


def amtool_problems(outputs: Mapping[str, str], route_tests: bool = True) -> list[Diagnostic]:
    """Run ``amtool check-config`` over the Alertmanager configurations among ``outputs`` (the
    standalone file and the kube-prometheus-stack values' ``alertmanager.config``), then, with
    ``route_tests``, ``amtool config routes test`` for every case of
    ``alertmanager/routes.test.yaml`` that the routing tree can tell from the others
    (:func:`generator.amtool.distinct_cases`).

    Raises:
        ObsgenError: amtool is missing.
    """
    config_path, values_path = alertmanager.CONFIG_FILE, alertmanager.VALUES_FILE
    tests_path = alertmanager.ROUTE_TESTS_FILE
    if config_path not in outputs:
        return []
    with tempfile.TemporaryDirectory(prefix="obsgen-amtool-") as tmp:
        files, names = [Path(tmp) / "alertmanager.yaml"], [config_path]
        files[0].write_text(outputs[config_path], encoding="utf-8")
        if values_path in outputs:
            values = yaml.load(outputs[values_path], Loader=yaml.CSafeLoader)
            files.append(Path(tmp) / "values-config.yaml")
            files[1].write_text(yaml.safe_dump(values["alertmanager"]["config"]), "utf-8")
            names.append(f"{values_path} (alertmanager.config)")
        problems = amtool.check_config(files, names)
        if problems or tests_path not in outputs or not route_tests:
            return problems
        listed = yaml.load(outputs[tests_path], Loader=yaml.CSafeLoader)["cases"]
        cases = [(c["labels"], c["receiver"]) for c in listed]
        # Cases the routing tree cannot tell apart (they differ only in labels no route reads,
        # such as `service`: 39,500 cases at 1,000 services) are tested once.
        read = amtool.routing_labels(yaml.load(outputs[config_path], Loader=yaml.CSafeLoader))
        chosen = amtool.distinct_cases(cases, read)
        return amtool.test_routes(files[0], tests_path, [cases[i] for i in chosen], chosen)


def promtool3_unproved(
    plans: Sequence[ServicePlan], warn: Callable[[Diagnostic], None] | None = None
) -> set[str]:
    """Services promtool 2 cannot prove, when the installed promtool predates Prometheus 3
    (:data:`promtool.UTF8_SINCE`): rules that read UTF-8 metric names
    (``prometheus.version: "3"``; quoted selectors) or generated tests that feed native
    histograms (promtool 3's custom-bounds notation). Their proof is not run, and ``warn``
    says so per spec. Empty when no plan needs promtool 3 or promtool is 3.0 or later.

    Raises:
        ObsgenError: promtool is missing (only asked when a plan needs promtool 3).
    """
    needing = [p for p in plans if p.needs_promtool3]
    if not needing:
        return set()
    tool = promtool.find_promtool()
    if promtool.reads_utf8_names(tool):
        return set()
    found = promtool.version(tool)
    shown = ".".join(map(str, found)) if found else "of unknown version"
    for plan in needing:
        reasons = []
        if plan.utf8_names:
            more = f" (and {len(plan.utf8_names) - 1} more)" if len(plan.utf8_names) > 1 else ""
            reasons.append(
                f"its rules read {plan.utf8_names[0]!r}{more} with Prometheus 3 quoted selectors"
            )
        if plan.reads_native:
            names = sorted(h.metric for h in plan.histograms.values() if h.native)
            reasons.append(
                f"its generated tests feed the native histogram {names[0]!r} in promtool 3's "
                "notation"
            )
        message = (
            f"promtool proof NOT run for this spec: {' and '.join(reasons)}, and the installed "
            f"promtool {shown} predates that syntax (it needs promtool 3.0 or later); its rules "
            "and generated tests are written unproved — run `promtool check rules` and "
            "`promtool test rules` with promtool 3 before deploying them"
        )
        if warn is not None:
            where = "spec.prometheus.version" if plan.utf8_names else "spec.metrics"
            warn(Diagnostic(plan.source, where, message, Level.WARNING))
    return {p.stem for p in needing}
