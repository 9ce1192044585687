"""The pinned Prometheus-ecosystem tools the suite runs (scripts/go-tools.tsv), and where they are.

``make tools`` (part of ``make test``) builds them into ``$OBSGEN_TOOLS_DIR`` (default
``~/.cache/obsgen/tools``). :func:`activate`, called by tests/conftest.py, puts the Prometheus 3,
Alertmanager and VictoriaMetrics of that table first on ``PATH`` and points ``$PROMTOOL`` at
promtool 3, so every test proves on the stack users run; :func:`binary` finds any one of them
(the Prometheus 2.53 line included). A missing tool stops the run with the command to build it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TABLE = REPO / "scripts" / "go-tools.tsv"
PRIMARY = ("prometheus3", "alertmanager", "victoriametrics")
"""The tools whose binaries the suite finds on ``PATH`` (first, before any system copy)."""


@dataclass(frozen=True)
class Tool:
    """One row of scripts/go-tools.tsv: ``name``, Go ``module`` at ``version``, the upstream
    ``release`` it is (``3.16.0``) and the command names it builds (``promtool``, …)."""

    name: str
    module: str
    version: str
    release: str
    commands: tuple[str, ...]

    @property
    def folder(self) -> Path:
        """Where scripts/ensure-go-tools.sh puts this tool's binaries."""
        return tools_dir() / f"{self.name}-{self.version}"

    @property
    def major(self) -> int:
        """The upstream release's major version (3 for Prometheus 3.16.0)."""
        return int(self.release.split(".")[0])


def tools_dir() -> Path:
    """``$OBSGEN_TOOLS_DIR``, else ``$XDG_CACHE_HOME/obsgen/tools``, else ~/.cache/obsgen/tools."""
    configured = os.environ.get("OBSGEN_TOOLS_DIR")
    if configured:
        return Path(configured)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "obsgen" / "tools"


def tools() -> dict[str, Tool]:
    """Every tool of the table by name, in its order."""
    found: dict[str, Tool] = {}
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, module, version, release, commands, *_build = line.split("\t")
        names = tuple(Path(c).name for c in commands.split(","))
        found[name] = Tool(name, module, version, release, names)
    return found


class ToolMissing(RuntimeError):
    """A pinned tool is not built; the message says how to build it."""


def binary(tool: str, command: str | None = None) -> str:
    """Path of ``command`` (default: the tool's first command) of ``tool``.

    Raises:
        ToolMissing: not built yet (the message names ``make tools``).
    """
    entry = tools()[tool]
    path = entry.folder / (command or entry.commands[0])
    if not (entry.folder / ".built").is_file() or not path.is_file():
        raise ToolMissing(
            f"{tool} {entry.release} is not built at {entry.folder}: run `make tools` "
            "(needs Go 1.26+; `make test` runs it)"
        )
    return str(path)


DEBIAN_PROMTOOL = "/usr/bin/promtool"
"""The promtool `make render` installs on a user's Debian machine (Debian 12: 2.42): the proof a
render runs there, so the committed bundle must pass it too."""


def debian_promtool() -> str:
    """Path of Debian's promtool (``make prometheus`` installs it; ``make test`` does).

    Raises:
        ToolMissing: not installed.
    """
    if not Path(DEBIAN_PROMTOOL).is_file():
        raise ToolMissing(
            "Debian's promtool is not installed at /usr/bin/promtool: run `make prometheus`"
        )
    return DEBIAN_PROMTOOL


def activate() -> None:
    """Put the primary tools first on ``PATH`` and ``$PROMTOOL`` at promtool 3 (a caller's own
    ``$PROMTOOL`` is kept).

    Raises:
        ToolMissing: a primary tool is not built.
    """
    folders = []
    for name in PRIMARY:
        binary(name)
        folders.append(str(tools()[name].folder))
    rest = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p not in folders]
    os.environ["PATH"] = os.pathsep.join([*folders, *rest])
    os.environ.setdefault("PROMTOOL", binary("prometheus3", "promtool"))
