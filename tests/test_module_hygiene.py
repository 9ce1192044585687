"""Module docstrings stay short and point at docs/; comments cite no issue numbers; a module over
800 lines says why.

The design prose lives in docs/ (docs/architecture.md, "Why it is sound, concern by concern", and
the page of each concern); a module's docstring says what it is and where that prose is.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("generator", "nvml_exporter")
MAX_DOCSTRING_LINES = 10
MAX_LINES = 800
_ISSUE = re.compile(r"\bissues? ?\d+", re.IGNORECASE)
_POINTER = re.compile(r'(docs/[\w/.-]+\.md), "([^"]+)"')


def _modules(*roots: str) -> list[Path]:
    return sorted(p for root in roots for p in (REPO / root).rglob("*.py"))


def _rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def docstring_problem(source: str) -> str | None:
    """Why a module's docstring breaks the rule (none, or over ten lines), or None."""
    text = ast.get_docstring(ast.parse(source))
    if text is None:
        return "no module docstring"
    lines = len(text.splitlines())
    return f"{lines} docstring lines" if lines > MAX_DOCSTRING_LINES else None


def issue_mentions(source: str) -> list[int]:
    """Lines of ``source`` (Python) whose comment, or the module docstring, cites an issue."""
    found = [
        tok.start[0]
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT and _ISSUE.search(tok.string)
    ]
    doc = ast.get_docstring(ast.parse(source)) or ""
    return found + ([1] if _ISSUE.search(doc) else [])


def size_reason_missing(source: str) -> bool:
    """Whether a module over :data:`MAX_LINES` lines lacks a docstring line ``Size: …``."""
    if len(source.splitlines()) <= MAX_LINES:
        return False
    doc = ast.get_docstring(ast.parse(source)) or ""
    return not any(line.startswith("Size: ") for line in doc.splitlines())


def test_every_module_has_a_docstring_of_ten_lines_or_fewer() -> None:
    found = {
        _rel(p): problem
        for p in _modules(*PACKAGES)
        if (problem := docstring_problem(p.read_text(encoding="utf-8")))
    }
    assert found == {}, "move the prose to docs/ and point there (docs/architecture.md)"


def test_no_comment_cites_an_issue_number() -> None:
    found = {
        _rel(p): lines
        for p in _modules(*PACKAGES, "bench", "scripts")
        if (lines := issue_mentions(p.read_text(encoding="utf-8")))
    }
    others = [
        p
        for root in ("scripts", "templates")
        for p in sorted((REPO / root).rglob("*"))
        if p.is_file() and p.suffix != ".py"
    ]
    for path in others:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            comment = line.partition("{#")[2] or line.partition("#")[2]
            if _ISSUE.search(comment):
                found.setdefault(_rel(path), []).append(n)
    assert found == {}, "say what the code does and why; the history is in git"


def test_every_module_over_800_lines_says_why() -> None:
    found = [
        _rel(p) for p in _modules(*PACKAGES) if size_reason_missing(p.read_text(encoding="utf-8"))
    ]
    assert found == [], "split it along a seam, or say why in a docstring line 'Size: …'"


def test_every_docstring_pointer_names_a_heading_of_its_doc() -> None:
    missing = []
    for path in _modules(*PACKAGES):
        doc = " ".join(
            (ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "").split()
        )
        for target, heading in _POINTER.findall(doc):
            text = (REPO / target).read_text(encoding="utf-8") if (REPO / target).exists() else ""
            headings = {
                line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")
            }
            if heading.replace("``", "`") not in headings:
                missing.append(f'{_rel(path)}: {target}, "{heading}"')
    assert missing == []


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ('"""One line."""\n', None),
        ("x = 1\n", "no module docstring"),
        ('"""' + "\n".join(f"line {i}" for i in range(11)) + '"""\n', "11 docstring lines"),
    ],
)
def test_docstring_rule(source: str, problem: str | None) -> None:
    assert docstring_problem(source) == problem


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        ('"""Doc."""\nx = 1  # see issue 12\n', [2]),
        ('"""Doc."""\n# Issues 3 and 4 asked for it\n', [2]),
        ('"""Fleet render (issue 19)."""\n', [1]),
        ('"""Doc."""\ns = "issue 5"  # vllm issue #17406 upstream\n', []),
        ('"""Doc."""\n# the tissue 5 is no issue\n', []),
    ],
)
def test_issue_rule(source: str, lines: list[int]) -> None:
    assert issue_mentions(source) == lines


def test_size_rule() -> None:
    long_body = "x = 1\n" * MAX_LINES
    assert size_reason_missing('"""Doc."""\n' + long_body)
    assert not size_reason_missing('"""Doc.\n\nSize: one table.\n"""\n' + long_body)
    assert not size_reason_missing('"""Doc."""\nx = 1\n')


def _broken_links(path: Path) -> list[str]:
    """Relative Markdown links of ``path`` (outside code blocks) whose file does not exist."""
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return [
        target
        for target in re.findall(r"\]\(([^)\s]+)\)", text)
        if not re.match(r"[a-z]+:|#", target) and not (path.parent / target.split("#")[0]).exists()
    ]


def test_the_readme_is_a_quick_start_whose_links_work() -> None:
    readme = REPO / "README.md"
    assert len(readme.read_text(encoding="utf-8").splitlines()) <= 120
    pages = [readme, REPO / "nvml_exporter" / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    broken = {_rel(p): links for p in pages if (links := _broken_links(p))}
    assert broken == {}


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    page = tmp_path / "a.md"
    (tmp_path / "b.md").write_text("")
    page.write_text("[b](b.md#x) [c](c.md) [web](https://x.org) [here](#y)\n```\n[d](d.md)\n```\n")
    assert _broken_links(page) == ["c.md"]
