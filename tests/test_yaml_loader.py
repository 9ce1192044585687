"""The spec loader takes its YAML events from libyaml (C) and keeps the Python composer with
every input check (issue 19: parsing 1,000 specs in pure-Python PyYAML cost ~3 s of CPU).

* the C event path is the one used (method origin, and a document only libyaml reads);
* without libyaml the pure loader is used, with the same checks (a subprocess without it);
* the libyaml loader and the pure one (:class:`~generator.yamlio.PureBoundedLoader`) give the
  same data on the example specs, the same errors on hostile documents (limits, duplicate
  keys, control characters, a second document), and — on mutated specs (hypothesis) — never
  different values: where they differ at all, one of them found a syntax error.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from generator.errors import ObsgenError
from generator.spec import SPEC_LIMITS, SpecLoader, parse_yaml
from generator.yamlio import BoundedLoader, InputLimitExceeded, PureBoundedLoader
from tests import fuzzing

REPO = Path(__file__).resolve().parent.parent
SPEC_TEXTS = {path.name: path.read_text() for path in sorted((REPO / "specs").glob("*.yaml"))}
BASE_TEXT = SPEC_TEXTS["o1-preview.yaml"]


class PureSpecLoader(PureBoundedLoader):
    """The spec loader as it was: pure-Python PyYAML throughout."""

    limits = SPEC_LIMITS


def _message(text: str, loader: type[yaml.SafeLoader]) -> str:
    with pytest.raises(ObsgenError) as raised:
        parse_yaml(text, "x.yaml", loader)
    return str(raised.value)


# --- which parser runs --------------------------------------------------------------------------


def test_spec_files_are_parsed_by_libyaml_and_composed_in_python() -> None:
    from yaml._yaml import CParser

    assert yaml.__with_libyaml__, "PyYAML without libyaml: spec parsing would be ~4x slower"
    assert issubclass(SpecLoader, BoundedLoader) and issubclass(SpecLoader, CParser)
    for event_method in ("get_event", "peek_event", "check_event"):
        assert getattr(SpecLoader, event_method) is getattr(CParser, event_method)
    # CParser composes in C too; the Python composer (with the limits) must shadow it.
    assert SpecLoader.get_single_node is yaml.composer.Composer.get_single_node
    assert SpecLoader.compose_node is PureBoundedLoader.compose_node
    # A tab before a value is YAML 1.2 white space: libyaml reads it, PyYAML's scanner not.
    assert parse_yaml("a:\tb\n", "x.yaml") == {"a": "b"}
    assert "found character '\\t'" in _message("a:\tb\n", PureSpecLoader)


def test_without_libyaml_the_pure_loader_keeps_every_check() -> None:
    script = f"""
import sys
sys.modules["yaml._yaml"] = None  # PyYAML built without libyaml
import yaml
assert not yaml.__with_libyaml__
from generator.errors import ObsgenError
from generator.spec import SpecLoader, parse_yaml
from generator.yamlio import PureBoundedLoader
assert issubclass(SpecLoader, yaml.SafeLoader), SpecLoader.__mro__
assert SpecLoader.compose_node is PureBoundedLoader.compose_node
assert parse_yaml(open({str(REPO / "specs" / "o1-preview.yaml")!r}).read(), "x")["kind"]
for text in ("a: 1\\na: 2\\n", "\\x00a: 1\\n", "x: " + "[" * 40 + "]" * 40 + "\\n"):
    try:
        parse_yaml(text, "x.yaml")
    except ObsgenError as err:
        print(err)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "x.yaml: line 2: invalid YAML: duplicate key 'a' (first on line 1); each key may "
        "appear once per mapping",
        "x.yaml: invalid YAML: character U+0000 at offset 0 is not allowed",
        "x.yaml: x" + "[0]" * 32 + ": nested more than 32 levels deep; expected a flatter "
        "document (line 1)",
    ]


# --- same data, same errors ---------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SPEC_TEXTS))
def test_example_specs_read_the_same(name: str) -> None:
    text = SPEC_TEXTS[name]
    fast, pure = parse_yaml(text, name), parse_yaml(text, name, PureSpecLoader)
    assert repr(fast) == repr(pure)  # repr: 1 and 1.0, key order, nested types all compared


def _aliases(fan: int, levels: int) -> str:
    lines = ["x0: &x0 [" + ", ".join(["1"] * 100) + "]"]
    for i in range(1, levels + 1):
        lines.append(f"x{i}: &x{i} [" + ", ".join([f"*x{i - 1}"] * fan) + "]")
    return "\n".join(lines) + "\n"


HOSTILE = {
    "nested 500 deep": "metadata: " + "[" * 500 + "]" * 500 + "\n",
    "5000 digits": BASE_TEXT.replace("replicas: 3", "replicas: " + "9" * 5000),
    "long scalar": BASE_TEXT.replace("team: ml-platform", "team: " + "x" * 5000),
    "alias expansion": BASE_TEXT + _aliases(fan=15, levels=2),
    "alias count": "a: &a 1\nb: [" + ", ".join(["*a"] * 33) + "]\n",
    "alias cycle": BASE_TEXT + "loop: &a [1, *a]\n",
    "undefined alias": "a: *nowhere\n",
    "duplicate key": BASE_TEXT.replace("kind: ModelService", "kind: ModelService\nkind: x"),
    "duplicate key in a flow mapping": "a: {b: 1, c: 2, b: 3}\n",
    "duplicate merged key": "a: {b: 1, b: 1}\n",
    "second document": BASE_TEXT + "---\napiVersion: obsgen/v1alpha1\n",
    "NUL first": "\x00" + BASE_TEXT,
    "escape after a syntax error": "a: [\nb: \x1b\n",
    "control character after non-ASCII": "a: 日本語\nb: \x08\n",
    "DEL": "a: \x7f\n",
    "U+FFFE": "a: \ufffe\n",
    "lone surrogate": "a: \ud800\n",
    "tab as indentation": "metadata:\n\tname: x\n",
    "character that starts no token": "a: @x\n",
    "python tag": "a: !!python/object:os.system x\n",
    "duplicate anchor": "a: &x 1\nb: &x 2\n",
    "invalid !!int": "a: 1\nb: !!int server\n",
    "impossible date": "a: 2024-13-45\n",
    "byte-order mark inside": "a: 1\n\ufeffb: 2\n",
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_documents_are_refused_alike(case: str) -> None:
    text = HOSTILE[case]
    assert _message(text, SpecLoader) == _message(text, PureSpecLoader)


SYNTAX = {
    "unclosed flow mapping": ("apiVersion: obsgen/v1alpha1\nmetadata: {name: x\n", 3),
    "bad indentation": ("a:\n  b: 1\n c: 2\n", 3),
    "unclosed quote": ("a: 'x\nb: 1\n", 3),
    "mapping value in a plain scalar": ("a: b: c\n", 1),
}


@pytest.mark.parametrize("case", sorted(SYNTAX))
def test_syntax_errors_name_the_same_line(case: str) -> None:
    # libyaml words some problems differently (no test asserts PyYAML's wording); the file,
    # the line and "invalid YAML" stay.
    text, line = SYNTAX[case]
    for loader in (SpecLoader, PureSpecLoader):
        assert _message(text, loader).startswith(f"x.yaml: line {line}: invalid YAML: ")


# --- mutated specs ------------------------------------------------------------------------------

JUNK = [
    *["[", "{", "]", "}", ",", ":", "- ", "? ", "'", '"', "|", ">", "#", "@", "`", "!", "%"],
    *["&a ", "*a", "!!int ", "!!str ", "!!python/object ", "<<: *a\n", "---\n", "...\n"],
    *["\t", "\x1b", "\x00", "\ufeff", "\x85", "\u2028", "é", "\r", " ", "\n", "\\"],
    "%YAML 1.1\n",
    "%TAG ! tag:x,2000:\n",
]


@st.composite
def mutated_specs(draw: st.DrawFn) -> str:
    """An example spec with 1–4 edits: junk inserted, lines cut or repeated (duplicate
    keys), deep nesting, aliases and long integers appended."""
    lines = draw(st.sampled_from(sorted(SPEC_TEXTS.values()))).splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(lines) - 1))
        kind = draw(st.sampled_from(["insert", "delete", "repeat", "nest", "alias", "int"]))
        if kind == "insert":
            col = draw(st.integers(0, len(lines[at])))
            lines[at] = lines[at][:col] + draw(st.sampled_from(JUNK)) + lines[at][col:]
        elif kind == "delete" and len(lines) > 1:
            del lines[at]
        elif kind == "repeat":
            lines.insert(at, lines[at])
        elif kind == "nest":
            depth = draw(st.sampled_from([1, 31, 32, 33, 200]))
            lines.append("extra: " + "[" * depth + "]" * depth + "\n")
        elif kind == "alias":
            lines.append(_aliases(fan=draw(st.integers(1, 12)), levels=draw(st.integers(1, 5))))
        elif kind == "int":
            lines.insert(at, f"big{at}: {'9' * draw(st.sampled_from([20, 21, 400]))}\n")
    return "".join(lines)


def _outcome(text: str, loader: type[yaml.SafeLoader]) -> tuple[str, ...]:
    """("data", repr of the value) or the kind of refusal with its message and line.

    Marks are compared by line: libyaml's carry no snippet of the text."""
    parser = None
    try:
        parser = loader(text)
        return "data", repr(parser.get_single_data())
    except (yaml.scanner.ScannerError, yaml.parser.ParserError) as err:
        return "syntax", str(err.problem)
    except yaml.MarkedYAMLError as err:
        lines = [mark.line for mark in (err.context_mark, err.problem_mark) if mark is not None]
        return type(err).__name__, str(err.context), str(err.problem), str(lines)
    except (yaml.YAMLError, InputLimitExceeded) as err:
        return type(err).__name__, str(err)
    finally:
        if parser is not None:
            parser.dispose()


# Where the grammars of libyaml and PyYAML's scanner differ: libyaml reads a tab as white
# space and "?" inside a flow scalar (as YAML 1.2 does); PyYAML reads a BOM inside the
# document and ":" right before a flow indicator.
GRAMMAR_EDGES = ("\t", "?", "\ufeff", ":,", ":]", ":}")


@fuzzing.budget(150)
@given(text=mutated_specs())
def test_mutated_specs_never_read_differently(text: str) -> None:
    fast, pure = _outcome(text, SpecLoader), _outcome(text, PureSpecLoader)
    if "syntax" in (fast[0], pure[0]):
        # Only where a broken document is first refused may move, and one that only one of
        # them reads holds one of the grammar edges.
        if "data" in (fast[0], pure[0]):
            assert any(edge in text for edge in GRAMMAR_EDGES), (fast, pure)
        return
    # The same value, or the same limit / key / anchor / character / document error.
    assert fast == pure
