"""No module of generator/ imports, directly or through others, a module that imports it."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Being restructured on its own: the lint registry and its checks.
KNOWN = "generator.lint.registry"


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """Modules of ``modules`` that ``path`` imports anywhere (functions included), not under
    ``if TYPE_CHECKING``."""
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for n in ast.walk(node)
    }
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # ``from package import module`` imports that module; ``from m import name``, m.
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in modules else node.module)
    return found & modules


def _cycles() -> list[list[str]]:
    paths = {_module(p): p for p in (ROOT / "generator").rglob("*.py")}
    graph = {name: _imports(path, set(paths)) - {name} for name, path in paths.items()}
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


def test_generator_has_no_import_cycle_but_the_known_one() -> None:
    found = [
        c for c in _cycles() if not (KNOWN in c and all(m.startswith("generator.lint.") for m in c))
    ]
    assert found == []
