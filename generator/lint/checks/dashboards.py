"""Helpers of the dashboard checks: a Grafana dashboard model's panels, targets and variables.

Paths name what a finding is about the way a reader finds it in the JSON:
``panels[3] "Latency"``, ``panels[3] "Latency".panels[0] "p99"`` (a collapsed row's panel),
``….targets[1]``. More: docs/lint.md, "Dashboard checks".
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

# ``$name``, ``${name}``, ``${name:format}`` and the deprecated ``[[name]]``.
VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]")
# A PromQL string literal: double-, single- or back-quoted.
STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')


def panel_path(index: int, panel: Mapping[str, Any]) -> str:
    """``panels[<index>] "<title>"``."""
    return f'panels[{index}] "{panel.get("title", "")}"'


def panels(dashboard: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every panel, including those nested in collapsed rows, with its path (a panel that is
    not a mapping raises AttributeError: the caller reports the model's shape)."""
    for i, panel in enumerate(dashboard.get("panels", [])):
        path = panel_path(i, panel)
        yield path, panel
        for j, inner in enumerate(panel.get("panels", []) or []):
            yield f'{path}.panels[{j}] "{inner.get("title", "")}"', inner


def targets(dashboard: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every query target of every panel (see :func:`panels`), with its path."""
    for path, panel in panels(dashboard):
        for k, target in enumerate(panel.get("targets", []) or []):
            yield f"{path}.targets[{k}]", target


def variable_names(text: str) -> set[str]:
    """Names of the Grafana variables ``text`` refers to."""
    return {next(g for g in m.groups() if g) for m in VARIABLE.finditer(text)}
