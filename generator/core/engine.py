"""The Engine interface, and the core that implements it plainly.

An :class:`Engine` loads (``load(paths) -> plans``), builds (``build(plans) -> Built``) and
proves (``prove(files) -> diagnostics``). :class:`Core` builds every file in this process, one service after another,
and proves every file; :class:`generator.fleet.engine.Fleet` gives the same files and verdicts
cheaper. ``tests/test_core_equivalence.py`` holds the fleet layer to the core's bytes.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from generator.builders.alertmanager import alertmanager_outputs
from generator.core import load
from generator.core.outputs import BuildOptions, Outputs, fleet_outputs, service_outputs
from generator.core.prove import amtool_problems, promtool_problems
from generator.errors import Diagnostic
from generator.plan import ServicePlan
from generator.receivers import ReceiversConfig


class Files(Mapping[str, str]):
    """Every file of a build by repository path (sorted), over parts: each service's own
    files and the fleet-wide ones, each a mapping of its own.

    Raises (on construction):
        ValueError: two parts produce the same path.
    """

    def __init__(self, parts: Iterable[Mapping[str, str]]) -> None:
        self._parts = list(parts)
        self._where: dict[str, Mapping[str, str]] = {}
        for part in self._parts:
            for rel in part:
                if rel in self._where:
                    raise ValueError(f"two builders produce {rel}")
                self._where[rel] = part
        self._order = sorted(self._where)

    def __getitem__(self, rel: str) -> str:
        return self._where[rel][rel]

    def __contains__(self, rel: object) -> bool:
        return rel in self._where

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)


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
        keys: each service's cache key, when the fleet layer built with a cache.
    """

    services: dict[str, Mapping[str, str]]
    fleet: Outputs
    warnings: dict[str, list[Diagnostic]] = field(default_factory=dict)
    fleet_warnings: list[Diagnostic] = field(default_factory=list)
    keys: dict[str, str] = field(default_factory=dict)

    def files(self) -> Files:
        """Every file by repository path, sorted."""
        return Files([*self.services.values(), self.fleet])


class Engine(Protocol):
    """``load(paths) -> plans``, ``build(plans) -> files`` and ``prove(files) ->
    diagnostics``."""

    def load(
        self, paths: Sequence[Path], root: Path, others: Iterable[tuple[str, str | None]] = ()
    ) -> list[ServicePlan]:
        """The plans of the spec files ``paths``, sorted by name and stem (``root``: the
        repository; ``others``: see :func:`generator.core.load.collect`).

        Raises:
            ObsgenError: every problem in every file (exit code 2).
        """
        ...

    def build(
        self, plans: Sequence[ServicePlan], receivers: ReceiversConfig | None, fleet: bool = True
    ) -> Built:
        """Every service's own files, with ``fleet`` the fleet-wide files too, and the
        Alertmanager files.

        Raises:
            ObsgenError: as :func:`generator.core.outputs.service_outputs` and
                :func:`generator.core.outputs.fleet_outputs`.
        """
        ...

    def prove(
        self, files: Mapping[str, str], built: Built, unproved: Collection[str] = ()
    ) -> list[Diagnostic]:
        """promtool's and amtool's problems with ``files`` (chosen from ``built``); empty
        when they pass. ``unproved``: services promtool cannot read
        (:func:`generator.core.prove.promtool3_unproved`), left out.

        Raises:
            ObsgenError: promtool or amtool missing.
        """
        ...


@dataclass(frozen=True)
class Core:
    """The core: every file built in this process, every rule file checked and every test
    file run, nothing reused."""

    options: BuildOptions = field(default_factory=BuildOptions)

    def load(
        self, paths: Sequence[Path], root: Path, others: Iterable[tuple[str, str | None]] = ()
    ) -> list[ServicePlan]:
        """See :meth:`Engine.load`: one spec after another, in this process."""
        return load.load_plans(paths, root, others=others)

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
        self, files: Mapping[str, str], built: Built, unproved: Collection[str] = ()
    ) -> list[Diagnostic]:
        """See :meth:`Engine.prove`."""
        return promtool_problems(files, unproved=unproved) + amtool_problems(files)
