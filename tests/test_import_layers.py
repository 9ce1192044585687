"""The generator's folders import in one direction and no two import each other, imports inside
functions included (docs/architecture.md, "Layers"); the core reaches no fleet, writer or
render module (docs/architecture.md, "The seam: the core and the fleet layer")."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# The ordered folders of ``generator/``, lowest first: each imports only from those before it.
LAYERS = ("parts", "signals", "families", "builders", "cases", "core", "fleet")


def _imports(path: Path, module: str, *, typing_only: bool) -> set[str]:
    """Dotted names ``path`` (the module ``module``) imports anywhere, functions included;
    imports under ``if TYPE_CHECKING`` only when ``typing_only``. ``from p import m`` yields
    both ``p`` and ``p.m``: either may be a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set()
    if not typing_only:
        skip = {
            id(n)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for n in ast.walk(node)
        }
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join([*parts[: len(parts) - node.level + 1], *([base] if base else [])])
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names}
    return found


def _node(module: str, top: str) -> str | None:
    """The folder node of ``module``: ``top.<sub>`` for a module in a sub-package, the module
    itself for one directly in ``top``, None outside ``top``."""
    parts = module.split(".")
    if parts[0] != top:
        return None
    return ".".join(parts[:2])


def _graph(root: Path, top: str, *, typing_only: bool) -> dict[str, dict[str, set[str]]]:
    """{folder node: {imported folder node: importing modules}} of the package ``top``."""
    graph: dict[str, dict[str, set[str]]] = {}
    for path in sorted((root / top).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        source = _node(module, top)
        assert source is not None
        edges = graph.setdefault(source, {})
        for name in _imports(path, module, typing_only=typing_only):
            target = _node(name, top)
            if target is not None and target != source and name != top:
                edges.setdefault(target, set()).add(module)
    return graph


def folder_cycles(root: Path, top: str = "generator") -> list[list[str]]:
    """Strongly connected sets of more than one folder node (Tarjan), each sorted."""
    graph = _graph(root, top, typing_only=False)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, {})):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def upward_imports(
    root: Path, top: str = "generator", layers: tuple[str, ...] = LAYERS
) -> list[str]:
    """``module -> folder`` for each import of a later folder of ``layers`` from an earlier one,
    type-only imports included."""
    rank = {f"{top}.{name}": i for i, name in enumerate(layers)}
    wrong = []
    for source, edges in _graph(root, top, typing_only=True).items():
        for target, modules in edges.items():
            if source in rank and target in rank and rank[target] > rank[source]:
                wrong += [f"{module} -> {target}" for module in sorted(modules)]
    return sorted(wrong)


def test_no_two_folders_import_each_other() -> None:
    assert folder_cycles(ROOT) == []


def test_the_folders_import_downward_only() -> None:
    assert upward_imports(ROOT) == []


# What the pure build and proof must never reach, even through a module outside the folders.
NOT_FROM_CORE = ("generator.fleet", "generator.writer", "generator.render", "generator.commands")


def _source(module: str) -> Path | None:
    base = ROOT.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def reached_from(package: str) -> dict[str, str]:
    """Every module of ``generator`` that the modules of ``package`` import, transitively
    (functions and type-only imports included), with the module that first imported it."""
    todo = [
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for p in sorted((ROOT / package.replace(".", "/")).glob("*.py"))
    ]
    by: dict[str, str] = {}
    seen = set(todo)
    while todo:
        module = todo.pop()
        path = _source(module)
        assert path is not None, module
        for name in sorted(_imports(path, module, typing_only=True)):
            if name.startswith("generator") and name not in seen and _source(name) is not None:
                seen.add(name)
                by[name] = module
                todo.append(name)
    return by


def test_the_core_reaches_no_fleet_writer_or_render_module() -> None:
    by = reached_from("generator.core")
    assert by, "generator/core/ imports the builders"
    bad = []
    for name in sorted(by):
        if any(name == f or name.startswith(f + ".") for f in NOT_FROM_CORE):
            chain = [name]
            while chain[-1] in by:
                chain.append(by[chain[-1]])
            bad.append(" <- ".join(chain))
    assert not bad, "the core imports the fleet layer:\n" + "\n".join(bad)


def test_only_the_fleet_pool_starts_processes() -> None:
    """Loading, building and proving fork workers through ``generator/fleet/pool.py`` alone."""
    starting = ("multiprocessing", "concurrent.futures.process", "concurrent.futures.Process")
    found = sorted(
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "generator").rglob("*.py")
        if path != ROOT / "generator" / "fleet" / "pool.py"
        and any(
            name.startswith(starting) for name in _imports(path, "generator.x", typing_only=True)
        )
    )
    assert not found, f"worker processes outside generator/fleet/pool.py: {found}"


def test_every_layer_is_a_folder() -> None:
    assert all((ROOT / "generator" / name / "__init__.py").is_file() for name in LAYERS)


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in {"pkg/__init__.py": "", **files}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    ("files", "cycles"),
    [
        pytest.param(
            {
                "pkg/low/__init__.py": "",
                "pkg/low/a.py": "def f():\n    from pkg.high import b\n",
                "pkg/high/__init__.py": "",
                "pkg/high/b.py": "from pkg.low import a\n",
            },
            [["pkg.high", "pkg.low"]],
            id="two folders, one import inside a function",
        ),
        pytest.param(
            {
                "pkg/low/__init__.py": "",
                "pkg/low/a.py": "from pkg import plan\n",
                "pkg/plan.py": "from .high import b\n",
                "pkg/high/__init__.py": "",
                "pkg/high/b.py": "from pkg.low.a import X\n",
            },
            [["pkg.high", "pkg.low", "pkg.plan"]],
            id="through a module outside the folders, relative import",
        ),
        pytest.param(
            {
                "pkg/low/__init__.py": "",
                "pkg/low/a.py": "if TYPE_CHECKING:\n    from pkg.high import b\n",
                "pkg/high/__init__.py": "",
                "pkg/high/b.py": "from pkg.low import a\n",
            },
            [],
            id="a type-only import is no cycle",
        ),
    ],
)
def test_a_folder_cycle_is_found(
    tmp_path: Path, files: dict[str, str], cycles: list[list[str]]
) -> None:
    assert folder_cycles(_package(tmp_path, files), "pkg") == cycles


def test_an_upward_import_is_found_even_for_types_only(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "pkg/low/__init__.py": "",
            "pkg/low/a.py": "if TYPE_CHECKING:\n    from pkg.high.b import X\n",
            "pkg/high/__init__.py": "",
            "pkg/high/b.py": "from pkg.low import a\n",
        },
    )
    assert upward_imports(root, "pkg", ("low", "high")) == ["pkg.low.a -> pkg.high"]
