"""The fleet layer's :class:`~generator.core.engine.Engine`: the core's files and verdicts,
cheaper (worker processes, files spooled to disk, the cache of unchanged services and
proofs, work skipped for files unchanged on disk).
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from generator.builders.alertmanager import alertmanager_outputs
from generator.core.engine import Built
from generator.core.outputs import BuildOptions, Outputs, fleet_outputs, fleet_plan_outputs
from generator.errors import Diagnostic
from generator.fleet.cache import OutputCache
from generator.fleet.filebacked import flush_soon
from generator.fleet.load import load_plans
from generator.fleet.pool import in_own_process, parallel_workers
from generator.fleet.progress import Progress
from generator.fleet.prove import amtool_problems, promtool_problems
from generator.fleet.services import (
    BuiltService,
    FleetOptions,
    build_services,
    prebuild_service,
    rule_files_back,
)
from generator.plan import ServicePlan
from generator.receivers import ReceiversConfig


@dataclass(frozen=True)
class Fleet:
    """The fleet layer: :class:`~generator.core.engine.Core`'s files and verdicts, cheaper.
    ``root``: the repository whose files on disk count as proved when unchanged;
    ``progress``: the phases on a terminal."""

    options: BuildOptions = field(default_factory=BuildOptions)
    fleet: FleetOptions = field(default_factory=FleetOptions)
    root: Path | None = None
    progress: Progress | None = None
    prebuilt: dict[tuple[str, str], BuiltService] = field(default_factory=dict)

    def load(
        self, paths: Sequence[Path], root: Path, others: Iterable[tuple[str, str | None]] = ()
    ) -> list[ServicePlan]:
        """See :meth:`~generator.core.engine.Engine.load`: in worker processes when many
        (:func:`generator.fleet.load.load_plans`), each worker building the services it
        loaded (:func:`generator.fleet.services.prebuild_service`, cached services excepted):
        what they built, by ``(source, stem)`` of the plan, is added to :attr:`prebuilt`,
        which :meth:`build` takes as built."""
        progress, means = self.progress, self.fleet
        if progress is not None:
            progress.phase("loading and building", len(paths))
        advance = progress.advance if progress is not None else None
        then = functools.partial(prebuild_service, options=self.options, fleet=means)
        plans, extras = load_plans(
            paths, root, advance, means.jobs, means.parallel_from, others, then
        )
        self.prebuilt.update(
            (where, cast("BuiltService", built)) for where, built in extras.items() if built
        )
        return plans

    def build(
        self, plans: Sequence[ServicePlan], receivers: ReceiversConfig | None, fleet: bool = True
    ) -> Built:
        """See :meth:`~generator.core.engine.Engine.build`. The fleet-wide files that need
        only the plans are built in this process while workers build the services, the
        Alertmanager files in a process of their own."""
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
            rule_files_back(plans, services)
            if means.spool_to is not None:
                flush_soon(means.spool_to)
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
        self, files: Mapping[str, str], built: Built, unproved: Collection[str] = ()
    ) -> list[Diagnostic]:
        """See :meth:`~generator.core.engine.Engine.prove`: a proof the cache records for
        byte-identical files, and files unchanged on disk under ``root``, are not run again."""
        cache: OutputCache | None = self.fleet.cache
        problems = promtool_problems(
            files, self.root, built.services, cache, self.progress, unproved
        )
        return problems + amtool_problems(files, self.root)
