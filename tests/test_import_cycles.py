"""No module of generator/ or nvml_exporter/ imports, directly or through others, a module that
imports it (the lint registry and its checks, render and writer, dashboard and fleet included)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, module: str, modules: set[str]) -> set[str]:
    """Modules of ``modules`` that ``path`` (the module ``module``) imports anywhere (functions
    included), not under ``if TYPE_CHECKING``."""
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for n in ast.walk(node)
    }
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # ``from . import x``, ``from ..a import b``
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            # ``from package import module`` imports that module; ``from m import name``, m.
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in modules else base)
    return found & modules


def _cycles(root: Path, packages: tuple[str, ...]) -> list[list[str]]:
    paths = {_module(p, root): p for pkg in packages for p in (root / pkg).rglob("*.py")}
    graph = {name: _imports(path, name, set(paths)) - {name} for name, path in paths.items()}
    cycles: list[list[str]] = []
    state, stack = dict.fromkeys(graph, 0), []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state[nxt] == 1:
                cycles.append(stack[stack.index(nxt) :])
            elif state[nxt] == 0:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for name in sorted(graph):
        if state[name] == 0:
            visit(name)
    return cycles


def test_no_import_cycle() -> None:
    assert _cycles(ROOT, ("generator", "nvml_exporter")) == []


@pytest.mark.parametrize(
    ("files", "cycle"),
    [
        pytest.param(
            {
                "a.py": "from pkg import b\n",
                "b.py": "import pkg.c\n",
                "c.py": "from pkg.a import X\n",
            },
            ["pkg.a", "pkg.b", "pkg.c"],
            id="absolute, through three modules",
        ),
        pytest.param(
            {"a.py": "def f():\n    from .sub import b\n", "sub/b.py": "from .. import a\n"},
            ["pkg.a", "pkg.sub.b"],
            id="relative, inside a function",
        ),
    ],
)
def test_a_cycle_is_found(tmp_path: Path, files: dict[str, str], cycle: list[str]) -> None:
    for name, text in {"__init__.py": "", "sub/__init__.py": "", **files}.items():
        (tmp_path / "pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "pkg" / name).write_text(text)
    assert _cycles(tmp_path, ("pkg",)) == [cycle]


def test_an_import_for_type_checking_only_is_no_cycle(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("from pkg import b\n")
    (tmp_path / "pkg" / "b.py").write_text("if TYPE_CHECKING:\n    from pkg import a\n")
    assert _cycles(tmp_path, ("pkg",)) == []
