"""The optional project config file ``obsgen.yaml`` at the repository root.

It holds choices that belong to the repository rather than to one service or one command line,
so that every ``obsgen render`` and ``obsgen render --check`` agree. Each top-level section
belongs to the feature that reads it; unknown sections and keys are errors (a misspelt key
must not silently fall back to a default). docs/config.md describes every field.

Example::

    render:
      dashboardsVia: values      # configmaps (default) | values
      fleetName: ml-platform     # the fleet overview's identity in Grafana
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from generator.errors import Diagnostic, ObsgenError
from generator.spec import DnsLabel, StrictModel, parse_yaml, validation_diagnostics

CONFIG_FILE = "obsgen.yaml"
DASHBOARDS_VIA = ("configmaps", "values")


class RenderConfig(StrictModel):
    """``render``: how ``obsgen render`` installs what it renders.

    Attributes:
        dashboards_via: ``configmaps`` (sidecar ConfigMaps in manifests/) or ``values``
            (inline under ``grafana.dashboards`` of the Helm overlay); docs/install.md.
        fleet_name: a DNS label naming this repository's fleet overview in Grafana (its uid,
            title and ConfigMap). Default: the namespaces of its services; set it when two
            repositories share a namespace or when adding a namespace must not move the
            dashboard.
    """

    dashboards_via: Literal["configmaps", "values"] = "configmaps"
    fleet_name: DnsLabel | None = None


class ProjectConfig(StrictModel):
    """The whole ``obsgen.yaml``; every section optional."""

    render: RenderConfig = RenderConfig()


def config_path(root: Path) -> Path:
    """Where the project config of the repository at ``root`` lives."""
    return root / CONFIG_FILE


def load_project_config(root: Path) -> ProjectConfig:
    """Read ``<root>/obsgen.yaml``; defaults when the file does not exist.

    Raises:
        ObsgenError: unreadable, not UTF-8, invalid YAML (duplicate keys included), an unknown
            section or key, or a bad value — one ``obsgen.yaml: field: message`` line each
            (exit code 2).
    """
    path = config_path(root)
    shown = CONFIG_FILE if root.resolve() == Path.cwd().resolve() else str(path)
    if not path.exists():
        return ProjectConfig()
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ObsgenError([Diagnostic(shown, "", "not a UTF-8 text file")]) from None
    except OSError as err:
        raise ObsgenError([Diagnostic(shown, "", f"cannot read: {err.strerror or err}")]) from None
    data = parse_yaml(text, shown)
    if data is None:
        return ProjectConfig()
    if not isinstance(data, dict):
        raise ObsgenError([Diagnostic(shown, "", "expected a mapping of sections (render: …)")])
    try:
        return ProjectConfig.model_validate(data)
    except ValidationError as err:
        raise ObsgenError(validation_diagnostics(shown, err)) from None


def recorded_text(render: RenderConfig) -> str:
    """A new ``obsgen.yaml`` recording ``render`` (the fields that differ from the defaults)."""
    lines = [
        "# obsgen project settings (docs/config.md). `obsgen render` and `obsgen render --check`",
        "# both read this file, so they render the same way.",
        "render:",
    ]
    if render.dashboards_via != RenderConfig().dashboards_via:
        lines.append(f"  dashboardsVia: {render.dashboards_via}")
    if render.fleet_name is not None:
        lines.append(f"  fleetName: {render.fleet_name}")
    return "\n".join(lines) + "\n"
