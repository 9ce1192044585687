"""Two ways to run a render's build and proof, one interface: the core and the fleet layer.

:class:`Core` builds every file in this process, one service after another, and proves every
file. :class:`Fleet` gives the same files and verdicts cheaper: worker processes, files spooled
to disk, the cache of unchanged services and proofs, work skipped for files unchanged on disk.
:func:`generator.render.render_bundle` picks one (``RenderOptions.fleet``);
``tests/test_core_equivalence.py`` holds the fleet layer to the core's bytes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from generator import naming, writer
from generator.build import (
    BuildOptions,
    BundleFiles,
    FleetOptions,
    Outputs,
    build_services,
    fleet_outputs,
    fleet_plan_outputs,
    in_own_process,
    parallel_workers,
    prebuild_service,
    service_outputs,
)
from generator.build import Built as BuiltService
from generator.builders.alertmanager import alertmanager_outputs
from generator.builders.dashboard import check_dashboard_names
from generator.builders.overlay import check_overlay
from generator.builders.rulefile import rule_groups
from generator.cache import OutputCache
from generator.errors import Diagnostic
from generator.plan import ServicePlan
from generator.progress import Progress
from generator.prove import amtool_problems, promtool_problems
from generator.receivers import ReceiversConfig
from generator.yamlio import YamlText, dump_yaml, generated_header


@dataclass
class Built:
    """What a build produced, before anything is chosen, proved or written.

    Attributes:
        services: each service's own files by stem (:attr:`generator.plan.ServicePlan.stem`),
            in the order of the plans.
        fleet: the fleet-wide files (empty but for the Alertmanager files when the build was
            asked for no fleet-wide files).
        warnings: each service's size warnings by stem.
        fleet_warnings: the fleet-wide files' size warnings.
        keys: each service's cache key (:meth:`OutputCache.key`), when built with a cache.
    """

    services: dict[str, Mapping[str, str]]
    fleet: Outputs
    warnings: dict[str, list[Diagnostic]] = field(default_factory=dict)
    fleet_warnings: list[Diagnostic] = field(default_factory=list)
    keys: dict[str, str] = field(default_factory=dict)

    def files(self) -> BundleFiles:
        """Every file by repository path, sorted."""
        return BundleFiles([*self.services.values(), self.fleet])


class Engine(Protocol):
    """``build(plans) -> files`` and ``prove(files) -> diagnostics``."""

    def build(
        self, plans: Sequence[ServicePlan], receivers: ReceiversConfig | None, fleet: bool = True
    ) -> Built:
        """Every service's own files, with ``fleet`` the fleet-wide files too, and the
        Alertmanager files.

        Raises:
            ObsgenError: as :func:`generator.build.service_outputs` and
                :func:`generator.build.fleet_outputs`.
        """
        ...

    def prove(
        self, files: BundleFiles, built: Built, unproved: Collection[str] = ()
    ) -> list[Diagnostic]:
        """promtool's and amtool's problems with ``files`` (chosen from ``built``); empty
        when they pass. ``unproved``: services promtool cannot read
        (:func:`generator.prove.promtool3_unproved`), left out.

        Raises:
            ObsgenError: promtool or amtool missing.
        """
        ...


@dataclass(frozen=True)
class Core:
    """The core: every file built in this process, every rule file checked and every test
    file run, nothing reused."""

    options: BuildOptions = field(default_factory=BuildOptions)

    def build(
        self, plans: Sequence[ServicePlan], receivers: ReceiversConfig | None, fleet: bool = True
    ) -> Built:
        """See :meth:`Engine.build`."""
        via, mimir, tests = self.options.dashboards_via, self.options.mimir, self.options.tests
        overlay = self.options.overlay
        warnings: dict[str, list[Diagnostic]] = {p.stem: [] for p in plans}
        services: dict[str, Mapping[str, str]] = {
            p.stem: service_outputs(p, via, mimir, warnings[p.stem].append, tests, overlay)
            for p in plans
        }
        built = Built(services, {}, warnings)
        if fleet and plans:
            name, warn = self.options.fleet_name, built.fleet_warnings.append
            built.fleet = fleet_outputs(plans, services, via, name, warn, overlay=overlay)
        built.fleet.update(alertmanager_outputs(plans, receivers, tests=tests, manifests=overlay))
        return built

    def prove(
        self, files: BundleFiles, built: Built, unproved: Collection[str] = ()
    ) -> list[Diagnostic]:
        """See :meth:`Engine.prove`."""
        return promtool_problems(files, unproved=unproved) + amtool_problems(files)


def core_outputs(
    plans: Sequence[ServicePlan],
    options: BuildOptions | None = None,
    receivers: ReceiversConfig | None = None,
) -> Outputs:
    """Every file of ``plans`` by repository path, sorted, as :class:`Core` builds them
    (``receivers`` None: placeholders): the bytes the fleet layer must give.

    Raises:
        ObsgenError: as :meth:`Core.build` and the checks of dashboard names and overlay sizes.
    """
    chosen = options if options is not None else BuildOptions()
    check_dashboard_names(plans)
    check_overlay(plans, chosen.dashboards_via)
    return dict(Core(chosen).build(plans, receivers).files().items())


@dataclass(frozen=True)
class Fleet:
    """The fleet layer: :class:`Core`'s files and verdicts, cheaper (:mod:`generator.build`,
    :mod:`generator.cache`, :mod:`generator.filebacked`). ``root``: the repository whose
    files on disk count as proved when unchanged; ``progress``: the phases on a terminal."""

    options: BuildOptions = field(default_factory=BuildOptions)
    fleet: FleetOptions = field(default_factory=FleetOptions)
    root: Path | None = None
    progress: Progress | None = None
    prebuilt: Mapping[tuple[str, str], BuiltService] = field(default_factory=dict)

    def prebuild(self) -> Callable[[ServicePlan], BuiltService | None]:
        """What a loading worker runs on each plan it loaded
        (:func:`generator.render.load_plans_then`): :func:`generator.build.prebuild_service`
        with these options. Its results, by ``(source, stem)``, are :attr:`prebuilt`."""
        return functools.partial(prebuild_service, options=self.options, fleet=self.fleet)

    def build(
        self, plans: Sequence[ServicePlan], receivers: ReceiversConfig | None, fleet: bool = True
    ) -> Built:
        """See :meth:`Engine.build`. The fleet-wide files that need only the plans are built
        in this process while workers build the services, the Alertmanager files in a
        process of their own."""
        options, progress = self.options, self.progress
        if progress is not None:
            progress.phase("building services", len(plans))
        from_plans: Outputs = {}

        def plans_only() -> None:
            if fleet:
                from_plans.update(fleet_plan_outputs(plans, options.fleet_name))

        means = self.fleet
        advance = progress.advance if progress is not None else None
        with in_own_process(
            lambda: alertmanager_outputs(
                plans, receivers, tests=options.tests, manifests=options.overlay
            ),
            enabled=parallel_workers(len(plans), means.jobs, means.parallel_from) > 0,
        ) as alertmanager_files:
            services, warnings = build_services(
                plans, options, means, advance, plans_only, self.prebuilt
            )
            _rule_files_back(plans, services)
            if means.spool_to is not None:
                writer.flush_soon(means.spool_to)
            built = Built(services, {}, warnings)
            if progress is not None:
                progress.phase("building fleet files", 1)
            if fleet:
                via, name, warn = options.dashboards_via, options.fleet_name, built.fleet_warnings
                built.fleet = fleet_outputs(
                    plans, services, via, name, warn.append, from_plans, options.overlay
                )
            built.fleet.update(alertmanager_files())
        cache = means.cache
        if cache is not None:
            built.keys = {p.stem: cache.key(p, options.variant()) for p in plans}
        return built

    def prove(
        self, files: BundleFiles, built: Built, unproved: Collection[str] = ()
    ) -> list[Diagnostic]:
        """See :meth:`Engine.prove`: a proof the cache records for byte-identical files, and
        files unchanged on disk under ``root``, are not run again."""
        cache: OutputCache | None = self.fleet.cache
        problems = promtool_problems(
            files, self.root, built.services, cache, self.progress, unproved
        )
        return problems + amtool_problems(files, self.root)


def service_rule_file(plan: ServicePlan) -> str:
    """``rules/<service>.rules.yaml`` of ``plan``, byte for byte as
    :func:`generator.build.service_outputs` writes it."""
    groups = rule_groups(plan)
    text = YamlText.of(groups) if groups else None
    return dump_yaml({"groups": text or []}, header=generated_header(plan.source))


def _rule_files_back(plans: Sequence[ServicePlan], services: dict[str, Mapping[str, str]]) -> None:
    """Give back the rule file of each service the cache reused without it.

    A reused service holds the files a render wrote; where ``render.install`` writes no rule
    files (``manifests``, ``helm``), the fleet-wide files and the check still read each
    service's rule file: it is built again from the plan (the promtool tests are not: the
    render that recorded the service proved them)."""
    for plan in plans:
        own = services[plan.stem]
        rules = naming.rules_file(plan.stem)
        if rules not in set(own):
            services[plan.stem] = BundleFiles([own, {rules: service_rule_file(plan)}])
