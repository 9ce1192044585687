"""Prove rendered files with the real tools: ``promtool`` over rules and tests, ``amtool``.

Every rule file passes ``promtool check rules``, every generated test file ``promtool test
rules`` (split by the rule groups its test groups observe, :mod:`generator.proof_split`), the
Alertmanager configurations ``amtool check-config`` and their route tests ``amtool config
routes test``, in a temporary copy. Given a cache and a root, work is saved only where the
verdict cannot change (files unchanged on disk, proofs recorded for byte-identical files).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

from generator import amtool, promtool
from generator.builders import alertmanager
from generator.cache import OutputCache, proof_key
from generator.errors import Diagnostic, Level
from generator.filebacked import FileBacked
from generator.plan import ServicePlan
from generator.progress import Progress
from generator.proof_split import RuleFiles, assertion_keys, estimated_cost, split_test_file


def promtool_problems(
    outputs: Mapping[str, str],
    root: Path | None = None,
    services: Mapping[str, Mapping[str, str]] | None = None,
    cache: OutputCache | None = None,
    progress: Progress | None = None,
    unproved: Collection[str] = (),
) -> list[Diagnostic]:
    """Run ``promtool check rules`` over all rule files and, beside it, ``promtool test
    rules`` over the generated test files, in a temp copy of the outputs. Returns the problems
    found: the check's when it fails, else the tests'.

    A service's tests are not run again when its rule and test files are byte-identical to
    those on disk under ``root`` (they passed when that render wrote them; the test suite
    re-runs every committed test file), or when ``cache`` holds a passed proof of exactly
    these files (:func:`generator.cache.proof_key`); proofs that pass are recorded there.
    ``services`` (each service's own files by stem) saves finding them in ``outputs``.
    ``promtool check rules`` runs over every rule file but those of services whose proof the
    cache records for these very files and this promtool (that proof checked them: at 1,000
    services reused from the cache, 22 s of checking saved). Each test file runs split by the
    rule groups its test groups observe (:func:`generator.proof_split.split_test_file`).
    With ``cache``, an assertion (one ``alert_rule_test`` or ``promql_expr_test`` entry) whose
    inputs are those of an assertion of the service's test files on disk under ``root`` is not
    run again: those files passed when a render wrote them, and the test suite re-runs them.

    ``unproved``: services left out of both (their rules use syntax this promtool cannot
    parse, :func:`promtool3_unproved`); nothing is recorded as proved for them.

    Raises:
        ObsgenError: promtool is missing.
    """
    rules = sorted(p for p in outputs if p.startswith("rules/") and p.endswith(".rules.yaml"))
    if services is None:
        services = _by_service(outputs)
    tool = promtool.find_promtool() if cache is not None else ""
    proofs: dict[str, str] = {}
    to_prove: list[str] = []
    proven: set[str] = set()  # checked and tested by this promtool already, as the cache says
    for name, own in sorted(services.items()):
        if name in unproved:
            continue
        mine = [p for p in own if p.startswith("rules/") and p.endswith(".test.yaml")]
        key = proof_key(own, name, tool) if cache is not None and mine else None
        if cache is not None and key is not None and cache.proven(name, key):
            proven.add(name)
            continue
        if not mine or (isinstance(own, FileBacked) and own.on_disk):
            continue  # the files on disk, unchanged since a render wrote them
        if root is not None and _unchanged_on_disk(own, root, name):
            continue
        if key is not None:
            proofs[name] = key
        to_prove.append(name)
    skipped = {*proven, *unproved}
    rules = [r for r in rules if r.removeprefix("rules/").split(".")[0] not in skipped]
    if not rules:
        return []
    owner = {
        p: name
        for name in to_prove
        for p in services[name]
        if p.startswith("rules/") and p.endswith(".test.yaml")
    }
    tests = sorted(owner)
    # Assertions of the files on disk passed when a render wrote them: only those whose
    # inputs changed run again (generator/proof_split.py; --no-cache runs every one).
    passed: dict[str, set[str]] = {}
    if root is not None and cache is not None:
        on_disk: RuleFiles = {}
        for rel in tests:
            passed.setdefault(owner[rel], set()).update(assertion_keys(root / rel, on_disk))
    with tempfile.TemporaryDirectory(prefix="obsgen-check-") as tmp:
        base = Path(tmp)
        for rel in (*rules, *tests):
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            (base / rel).write_text(outputs[rel], encoding="utf-8")
        # The check runs beside the split and the tests (so a proof waits less); its verdict
        # comes first: the parts assume that every rule loads.
        with ThreadPoolExecutor(max_workers=1) as beside:
            checking = beside.submit(promtool.check_rules, [base / r for r in rules], rules)
            costs: dict[Path, int] = {}
            read: RuleFiles = {}
            parts = [
                (part, t)
                for t in tests
                for part in split_test_file(base / t, costs, passed.get(owner[t], ()), read)
            ]
            if progress is not None:
                progress.phase("promtool test rules", len(parts))
            tested = promtool.test_rules(
                [part for part, _ in parts],
                [t for _, t in parts],
                on_done=(lambda n: progress.advance(n)) if progress is not None else None,
                cost=lambda part: costs[part] if part in costs else estimated_cost(part),
            )
            checked = checking.result()
        if not checked.ok:
            return list(checked.diagnostics)
        if tested.ok and cache is not None:
            for name, key in proofs.items():
                cache.prove(name, key)
        return list(tested.diagnostics)


def _by_service(outputs: Mapping[str, str]) -> dict[str, Mapping[str, str]]:
    """Each service's rule and test files, by the service name in ``rules/<service>.…``."""
    found: dict[str, dict[str, str]] = {}
    for path, text in outputs.items():
        if path.startswith("rules/") and path.endswith(".yaml"):
            found.setdefault(path[6:].split(".")[0], {})[path] = text
    return dict(found)


def _unchanged_on_disk(own: Mapping[str, str], root: Path, service: str) -> bool:
    """True when every ``rules/<service>.*`` file of ``own`` equals the file on disk."""
    mine = [p for p in own if p.startswith(f"rules/{service}.")]
    for rel in mine:
        path = root / rel
        try:
            if path.read_text(encoding="utf-8") != own[rel]:
                return False
        except (OSError, UnicodeDecodeError):
            return False
    return bool(mine)


def amtool_problems(outputs: Mapping[str, str], root: Path | None = None) -> list[Diagnostic]:
    """Run ``amtool check-config`` over the Alertmanager configurations among ``outputs`` (the
    standalone file and the kube-prometheus-stack values' ``alertmanager.config``), then
    ``amtool config routes test`` for every case of ``alertmanager/routes.test.yaml`` that the
    routing tree can tell from the others (:func:`generator.amtool.distinct_cases`).

    With ``root``, the route tests are skipped when the configuration and the tests are
    byte-identical to those on disk (they passed when that render wrote them; the test suite
    re-runs them). ``check-config`` always runs.

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
        if problems or tests_path not in outputs:
            return problems
        if root is not None and all(
            (root / p).is_file() and (root / p).read_text(encoding="utf-8") == outputs[p]
            for p in (config_path, tests_path)
        ):
            return []
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
