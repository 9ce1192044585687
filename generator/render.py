"""The render pipeline: specs → plans → outputs (in memory) → promtool → disk.

Nothing is written until every spec has loaded and resolved and every rendered rule file has
passed ``promtool check rules`` and every generated test file ``promtool test rules`` (each run
once over all files), and the Alertmanager configurations ``amtool check-config`` and their
route tests ``amtool config routes test``. Then :mod:`generator.writer` replaces files
atomically.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import yaml

from generator import amtool, naming, promtool
from generator.builders import alertmanager
from generator.builders.alertmanager_routing import routing_warnings
from generator.builders.dashboard import dashboard_outputs
from generator.builders.mimir import mimir_outputs
from generator.builders.overlay import overlay_outputs
from generator.builders.rule_tests import rule_tests_outputs
from generator.builders.rulefile import rule_file
from generator.builders.runbooks import runbook_file, runbook_outputs
from generator.errors import Diagnostic, ObsgenError, processing
from generator.plan import ServicePlan, resolve
from generator.receivers import ReceiversConfig, load_receivers
from generator.spec import find_spec_files, load_spec
from generator.yamlio import dump_yaml, generated_header

# Folders whose generated files render owns (stale ones are removed / reported).
OUTPUT_DIRS = (
    "rules",
    "dashboards",
    "helm",
    "manifests",
    "docs/runbooks",
    "alertmanager",
    "mimir",
)

Outputs = dict[str, str]


# Spec discovery lives with the spec loader; kept here under its pipeline name.
find_specs = find_spec_files


def display_path(path: Path, root: Path) -> str:
    """How errors and headers name a spec: relative to ``root`` (the output repository) when
    inside it, else relative to the working directory when inside that, else as given."""
    for base in (root, Path.cwd()):
        try:
            return path.resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            continue
    return str(path)


def load_plans(spec_paths: Iterable[Path], root: Path) -> list[ServicePlan]:
    """Load and resolve every spec, collecting all errors before failing.

    Raises:
        ObsgenError: every problem in every file (exit code 2), including two specs that
            declare the same service name.
    """
    problems: list[Diagnostic] = []
    plans: list[ServicePlan] = []
    owners: dict[str, str] = {}
    for path in spec_paths:
        shown = display_path(path, root)
        try:
            with processing(shown):
                plan = resolve(load_spec(path, shown), shown)
        except ObsgenError as err:
            problems.extend(err.diagnostics)
            continue
        if plan.name in owners:
            problems.append(
                Diagnostic(
                    shown,
                    "metadata.name",
                    f"service {plan.name!r} is already defined in {owners[plan.name]}",
                )
            )
            continue
        owners[plan.name] = shown
        plans.append(plan)
    if problems:
        raise ObsgenError(problems)
    return sorted(plans, key=lambda p: p.name)


def rules_outputs(plans: Sequence[ServicePlan]) -> Outputs:
    """``rules/<service>.rules.yaml`` for each plan."""
    return {
        naming.rules_file(p.name): dump_yaml(rule_file(p), header=generated_header(p.source))
        for p in plans
    }


# Each builder turns all plans into {repository path: file content}. Order does not matter:
# paths are unique per builder. The dashboards (they need the fleet's name) and the install
# overlays (they embed the dashboards) are run by build_outputs itself.
OUTPUT_BUILDERS: list[Callable[[Sequence[ServicePlan]], Outputs]] = [
    rules_outputs,
    rule_tests_outputs,
    runbook_outputs,
]


def build_outputs(
    plans: Sequence[ServicePlan],
    dashboards_via: str = "configmaps",
    receivers: ReceiversConfig | None = None,
    fleet_name: str | None = None,
    warn: Callable[[Diagnostic], None] | None = None,
    mimir: bool = False,
) -> Outputs:
    """Render every output of every plan in memory.

    The install overlays (``helm/``, ``manifests/``) run last: they embed the dashboards the
    other builders rendered. ``dashboards_via`` is ``configmaps`` or ``values``; ``receivers``
    (``alertmanager/receivers.yaml``; None: placeholders) feed the Alertmanager outputs;
    ``fleet_name`` is ``render.fleetName`` of obsgen.yaml (None: derived from namespaces);
    ``warn`` receives the overlays' size warnings. With ``mimir``, ``mimir/<service>.yaml`` too: the rule files in the namespace layout of
    ``mimirtool rules load|sync`` (:mod:`generator.builders.mimir`).
    """
    outputs: Outputs = {}

    def dashboards(plans: Sequence[ServicePlan]) -> Outputs:
        return dashboard_outputs(plans, fleet_name)

    for builder in [*OUTPUT_BUILDERS, dashboards]:
        for path, content in builder(plans).items():
            if path in outputs:
                raise ValueError(f"two builders produce {path}")
            outputs[path] = content
    for path, content in {
        **overlay_outputs(plans, outputs, dashboards_via, warn),
        **alertmanager.alertmanager_outputs(plans, receivers),
    }.items():
        if path in outputs:
            raise ValueError(f"two builders produce {path}")
        outputs[path] = content
    if mimir:
        outputs.update(mimir_outputs(plans, outputs))
    return dict(sorted(outputs.items()))


def _unchanged_on_disk(outputs: Outputs, root: Path, service: str) -> bool:
    """True when every ``rules/<service>.*`` output equals the file on disk."""
    mine = [p for p in outputs if p.startswith(f"rules/{service}.")]
    for rel in mine:
        path = root / rel
        if not path.is_file() or path.read_text(encoding="utf-8") != outputs[rel]:
            return False
    return bool(mine)


def promtool_problems(outputs: Outputs, root: Path | None = None) -> list[Diagnostic]:
    """Run ``promtool check rules`` over all rule files, then ``promtool test rules`` over the
    generated test files, in a temp copy of the outputs. Returns the problems found.

    With ``root``, a service whose rule and test files are byte-identical to those on disk is
    not re-tested: they passed ``promtool test rules`` when that render wrote them (the test
    suite re-runs every committed test file). ``promtool check rules`` always runs.

    Raises:
        ObsgenError: promtool is missing.
    """
    rules = sorted(p for p in outputs if p.startswith("rules/") and p.endswith(".rules.yaml"))
    tests = sorted(p for p in outputs if p.startswith("rules/") and p.endswith(".test.yaml"))
    if root is not None:
        tests = [t for t in tests if not _unchanged_on_disk(outputs, root, t[6:].split(".")[0])]
    with tempfile.TemporaryDirectory(prefix="obsgen-check-") as tmp:
        base = Path(tmp)
        for rel in (*rules, *tests):
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            (base / rel).write_text(outputs[rel], encoding="utf-8")
        checked = promtool.check_rules([base / r for r in rules], rules)
        if not checked.ok:
            return list(checked.diagnostics)
        tested = promtool.test_rules([base / t for t in tests], tests)
        return list(tested.diagnostics)


def amtool_problems(outputs: Outputs, root: Path | None = None) -> list[Diagnostic]:
    """Run ``amtool check-config`` over the Alertmanager configurations among ``outputs`` (the
    standalone file and the kube-prometheus-stack values' ``alertmanager.config``), then
    ``amtool config routes test`` for every case of ``alertmanager/routes.test.yaml``.

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
            values = yaml.safe_load(outputs[values_path])
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
        cases = yaml.safe_load(outputs[tests_path])["cases"]
        return amtool.test_routes(
            files[0], tests_path, [(c["labels"], c["receiver"]) for c in cases]
        )


def linked_runbooks(plans: Sequence[ServicePlan], outputs: Outputs, root: Path) -> Outputs:
    """The runbook pages that the rules of ``plans`` link to (``runbook_url``) and that do not
    exist under ``root`` yet, from ``outputs``.

    Only links into this repository count (no ``metadata.runbookBaseUrl``). A render of some
    spec files owns no fleet-wide file, but a rule must not link to a page that is missing:
    a new repository's first ``obsgen render specs/x.yaml`` gets them. A page that exists is the full render's (it lists every service) and is left alone.
    """
    linked = {
        runbook_file(rule["alert"])
        for plan in plans
        for group in rule_file(plan)["groups"]
        for rule in group["rules"]
        if "alert" in rule and plan.runbook_url(rule["alert"]) == runbook_file(rule["alert"])
    }
    return {p: outputs[p] for p in sorted(linked) if p in outputs and not (root / p).exists()}


def render(
    root: Path,
    spec_args: Sequence[str],
    run_promtool: bool = True,
    dashboards_via: str = "configmaps",
    warn: Callable[[Diagnostic], None] | None = None,
    fleet_name: str | None = None,
    mimir: bool = False,
) -> tuple[Outputs, list[str]]:
    """Load, resolve, build and (optionally) check everything with promtool and amtool;
    write nothing.

    ``root`` is the repository the outputs belong to (``--out``); specs named in
    ``spec_args`` are paths as given (relative to the working directory), and without any the
    working directory's ``specs/`` folder is read. ``warn`` receives each spec's warnings
    (alerts left out, relative links) and the receivers' (teams without receivers) before
    building, then the install overlays' size warnings. ``fleet_name``: ``render.fleetName``
    of obsgen.yaml.

    Returns:
        ``(outputs, stale)``: rendered files by repository path, and generated files on disk
        that no spec produces any more.

    Raises:
        ObsgenError: bad specs or receivers (exit 2), or promtool/amtool failures on the
            outputs (exit 1).
    """
    from generator.writer import stale_outputs

    plans = load_plans(find_specs(spec_args, Path(".")), root)
    receivers = load_receivers(root)
    partial = bool(spec_args) and all(Path(arg).is_file() for arg in spec_args)
    if warn is not None:
        for plan in plans:
            for warning in plan.warnings:
                warn(warning)
        for warning in routing_warnings(plans, receivers, complete=not partial):
            warn(warning)
    outputs = build_outputs(plans, dashboards_via, receivers, fleet_name, warn, mimir)
    # Spec *files* named on the command line render those services' own files only: fleet-wide
    # files (overview dashboard, values-observability, runbooks) and other services' outputs
    # must not be rewritten from a partial set of specs, nor deleted as stale.
    if partial:
        names = [plan.name for plan in plans]
        runbooks = linked_runbooks(plans, outputs, root)
        outputs = {p: c for p, c in outputs.items() if any(naming.owned_by(p, n) for n in names)}
        outputs.update(runbooks)
    if run_promtool:
        problems = promtool_problems(outputs, root) + amtool_problems(outputs, root)
        if problems:
            raise ObsgenError(problems, exit_code=1)
    return outputs, [] if partial else stale_outputs(root, outputs, OUTPUT_DIRS)
