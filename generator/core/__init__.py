"""The core: the pure build and the pure proof, with no cache, worker, progress or disk.

:func:`build` is the one entry point tests use: every file of some plans by repository path.
The fleet layer (:mod:`generator.fleet`) gives the same bytes cheaper and may import this
package; this package never imports it (``tests/test_import_layers.py``). The map:
docs/architecture.md, "The seam: the core and the fleet layer".
"""

from __future__ import annotations

from collections.abc import Sequence

from generator.builders.dashboard import check_dashboard_names
from generator.builders.overlay import check_overlay
from generator.core.engine import Built, Core, Engine, Files
from generator.core.outputs import BuildOptions, Outputs
from generator.plan import ServicePlan
from generator.receivers import ReceiversConfig

__all__ = ["BuildOptions", "Built", "Core", "Engine", "Files", "Outputs", "build"]


def build(
    plans: Sequence[ServicePlan],
    options: BuildOptions | None = None,
    receivers: ReceiversConfig | None = None,
) -> Outputs:
    """Every file of ``plans`` by repository path, sorted, as :class:`Core` builds them: each
    service's own files, the fleet-wide files and the Alertmanager files (``receivers`` None:
    placeholders). ``options``: what the files depend on besides the plans (default
    :class:`BuildOptions`: every install path, the promtool tests, dashboards through
    ConfigMaps). These are the bytes a render writes (``tests/test_core_equivalence.py``).

    Raises:
        ObsgenError: reserved or clashing dashboard names, oversized overlays, a failing test
            generation (:func:`generator.core.outputs.service_outputs`).
    """
    chosen = options if options is not None else BuildOptions()
    check_dashboard_names(plans)
    check_overlay(plans, chosen.dashboards_via)
    return dict(Core(chosen).build(plans, receivers).files().items())
