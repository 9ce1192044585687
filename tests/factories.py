"""Spec factories: a valid o1-preview-like spec as data, and helpers to break one field."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent


def good_spec() -> dict[str, Any]:
    """The committed o1-preview spec, parsed (a fresh deep copy each call), without what makes
    the shipped example warning-free — its links (``metadata.runbookBaseUrl``,
    ``metadata.grafanaUrl``) and its declared ``spec.prometheus.retention`` — so that tests
    see the bare spec: relative links, retention undeclared."""
    data = yaml.safe_load((REPO / "specs" / "o1-preview.yaml").read_text())
    data["metadata"].pop("runbookBaseUrl", None)
    data["metadata"].pop("grafanaUrl", None)
    prometheus = data["spec"].get("prometheus", {})
    prometheus.pop("retention", None)
    if not prometheus:
        data["spec"].pop("prometheus", None)
    return copy.deepcopy(data)


def set_path(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """Set ``value`` at a dotted path with ``[i]`` indexes (``spec.slos[1].threshold``)."""
    parts = path.replace("[", ".[").split(".")
    node: Any = data
    for part in parts[:-1]:
        node = node[int(part[1:-1])] if part.startswith("[") else node.setdefault(part, {})
    last = parts[-1]
    if last.startswith("["):
        node[int(last[1:-1])] = value
    else:
        node[last] = value
    return data


def write_spec(directory: Path, data: dict[str, Any], name: str = "x.yaml") -> Path:
    """Write ``data`` as a spec file and return its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path
