"""``dump_yaml`` writes exactly what PyYAML writes: libyaml's emitter equals the pure-Python one,
and the fast path equals libyaml on every rendered file and on generated documents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from generator import core, yamlio
from generator.builders.rulefile import rule_file
from generator.core.outputs import rule_groups_text
from generator.render import find_specs, load_plans
from generator.yamlio import dump_json

REPO = Path(__file__).resolve().parents[1]


class _PurePythonDumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


_PurePythonDumper.add_representer(str, yamlio._str)


def _pure(data: Any) -> str:
    return yaml.dump(
        data,
        Dumper=_PurePythonDumper,
        sort_keys=False,
        width=4096,
        allow_unicode=True,
        default_flow_style=False,
    )


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("line1\nline2", id="multi-line text becomes a literal block"),
        pytest.param("multi\n  indented\n", id="indented block with trailing newline"),
        pytest.param("x: y", id="colon-space is quoted"),
        pytest.param("'q' \"dq\"", id="both quote kinds"),
        pytest.param("ünï °C ×", id="non-ASCII stays unescaped"),
        pytest.param("", id="empty string"),
        pytest.param("yes", id="YAML 1.1 boolean word is quoted"),
        pytest.param("1.0", id="number-like text is quoted"),
        pytest.param(" lead", id="leading space"),
        pytest.param("a #b", id="comment marker"),
        pytest.param("{{ $value | humanizePercentage }}", id="Go template braces"),
        pytest.param("tab\tx", id="tab is escaped"),
        pytest.param('rate(x{le=~"^(?:0\\\\.5)$"}[5m]) > 0', id="PromQL with regex escapes"),
    ],
)
def test_dump_yaml_matches_pure_python_emitter(value: str) -> None:
    data = {"k": value, "list": [value, {"nested": value}]}
    assert yamlio.dump_yaml(data) == _pure(data)


def test_rendered_rule_files_match_pure_python_emitter() -> None:
    plans = load_plans(find_specs([], REPO), REPO)
    assert plans, "no specs under specs/"
    for plan in plans:
        document = rule_file(plan)
        assert yamlio.dump_yaml(document) == _pure(document), plan.name


def test_libyaml_emitter_is_used_when_available() -> None:
    # PyPI's PyYAML wheels carry libyaml; make test installs one.
    assert yaml.__with_libyaml__, "PyYAML without libyaml: pip install --force-reinstall pyyaml"
    assert issubclass(yamlio._Dumper, yaml.CSafeDumper)


# --- the fast path of dump_yaml against libyaml itself ---------------------------------------

_TRICKY = [
    "",
    "yes",
    "No",
    "null",
    "~",
    "1",
    "0+6000x20",
    "1e3",
    ".5",
    "0o17",
    "2026-11-30",
    "<<",
    "=",
    "-",
    "- x",
    "a:",
    "a: b",
    "a #b",
    "#a",
    "a#b",
    "---x",
    "...x",
    " lead",
    "trail ",
    "a\nb",
    "a\n",
    "a\n\n",
    "\nlead",
    " x\ny",
    "trailing \nspace",
    "tab\tx",
    "é ü",
    "\x85",
    "'q'",
    '"dq"',
    "{{ $value }}",
    'up{job="x"} == 0',
    "x" * 120,
    ("word " * 900).strip(),
    # around the fast path's line bound (WIDTH minus the longest simple key): libyaml folds
    # at a space past column 4096 only, so these must fold (or not) exactly as it does
    ("ab " * 1330).strip(),
    ("ab " * 1365).strip(),
    "q: " + "x " * 1990,
    'sum(up{job="a b"}) ' * 200,
]
_scalars = st.one_of(
    st.sampled_from(_TRICKY),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12),
    st.text(alphabet="ab :#-'\"\n{}[],.0123e+", max_size=10),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
)
_keys = st.one_of(st.sampled_from(_TRICKY), st.text(max_size=8), st.integers(0, 99))
_documents = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=4)),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(_documents)
def test_fast_path_writes_what_libyaml_writes(document: Any) -> None:
    assert yamlio.dump_yaml(document) == yamlio._pyyaml(document)


def test_every_rendered_yaml_file_reads_back_to_the_same_bytes() -> None:
    """Each YAML file of a render, loaded and dumped again, is the same through both paths."""
    plans = load_plans(find_specs([], REPO), REPO)
    outputs = core.build(plans)
    documents = [yaml.safe_load(text) for path, text in outputs.items() if path.endswith(".yaml")]
    assert len(documents) > 20
    for document in documents:
        assert yamlio.dump_yaml(document) == yamlio._pyyaml(document)


def test_fast_path_is_taken_for_rendered_files() -> None:
    """The speed comes from the fast path: a rendered rule file does not fall back."""
    plan = load_plans(find_specs([], REPO), REPO)[0]
    assert yamlio._fast(rule_file(plan)) == yamlio._pyyaml(rule_file(plan))


@settings(max_examples=200, deadline=None)
@given(_documents.filter(lambda d: isinstance(d, list | dict) and bool(d)))
def test_spliced_text_is_the_same_as_the_whole_document(subtree: Any) -> None:
    """A subtree serialised once (YamlText) and placed at any depth reads as dumping it there."""
    text = yamlio.YamlText.of(subtree)
    for wrap in (
        lambda x: {"k": x},
        lambda x: {"a": 1, "k": {"j": x, "z": [x]}},
        lambda x: [{"k": x}, [{"m": {"n": x}}]],
    ):
        assert yamlio.dump_yaml(wrap(text)) == yamlio._pyyaml(wrap(subtree))
    assert yamlio.YamlText(text.text).data == yaml.safe_load(yamlio._pyyaml(subtree))


@pytest.mark.parametrize("length", [3960, 3990, 3994, 3996, 4000, 4094, 4097, 4120])
def test_long_lines_fold_as_libyaml_folds_them_at_any_depth(length: int) -> None:
    """Near the width, the fast path and a spliced YamlText write what libyaml writes: a rule
    expression of ~3,300 characters (a Triton SLO's good events) stays on the fast path."""
    for text in (("ab " * 2000)[:length].strip(), ("a'b: c " * 1000)[:length].strip()):
        spliced = yamlio.YamlText.of({"expr": text})
        for depth in range(0, 40, 4):
            for key in ("k", "k" * 100):
                whole: Any = {key: text}
                inside: Any = {key: spliced}
                reference: Any = {key: {"expr": text}}
                for _ in range(depth):
                    whole, inside, reference = [whole], {key: inside}, {key: reference}
                assert yamlio.dump_yaml(whole) == yamlio._pyyaml(whole)
                assert yamlio.dump_yaml(inside) == yamlio._pyyaml(reference)


# Text with every line break str.splitlines knows, comment marks and empty lines.
_LINES = st.text(alphabet=st.sampled_from(list("ab #-:\n\r\x85\u2028 ")), max_size=40)


@settings(max_examples=500, deadline=None)
@given(_LINES, st.sampled_from(["", "  ", "    "]))
def test_indent_lines_pads_every_line_but_empty_ones(text: str, pad: str) -> None:
    """The fast path (no empty line) gives what padding each line in turn gives."""
    expected = "\n".join(pad + line if line else line for line in text.split("\n"))
    assert yamlio.indent_lines(text, pad) == expected


@settings(max_examples=500, deadline=None)
@given(_LINES, _LINES)
def test_rule_groups_text_cut_after_the_header_drops_every_comment_line(
    source: str, rest: str
) -> None:
    """Cutting a rule file after its spec's header gives what dropping each comment line does,
    whatever breaks or comment marks the spec path and the rest hold."""
    header = yamlio.comment_lines(yamlio.generated_header(source))
    for text in (header + "groups:\n" + rest, header + "groups: []\n", "groups:\n" + rest):
        body = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("#"))
        expected: Any
        if body == "groups: []\n":
            expected = []
        elif body.startswith("groups:\n") and body[8:9] not in ("", " ", "\n"):
            expected = body.removeprefix("groups:\n")
        else:
            expected = ValueError
        try:
            got: Any = rule_groups_text(text, source)
        except ValueError:
            got = ValueError
        assert (got if isinstance(got, list) or got is ValueError else got.text) == expected


def test_dump_json_writes_what_json_dumps_writes() -> None:
    """Every JSON value, odd keys and floats included, as ``json.dumps(indent=2)`` spells it."""
    odd = {
        'é\u2028"\\\n': "x\x00<>&",
        "floats": [float("nan"), float("inf"), -float("inf"), 1e300, 0.1, -0.0, 3.0],
        "scalars": [True, False, None, 0, -7, 10**30, "", {}, [], ()],
        "nested": {"a": [{"b": [[], {"c": None}]}], "t": (1, (2,))},
        1: "int key",
        2.5: "float key",
        False: "bool key",
        None: "null key",
    }
    for value in (odd, [], {}, "s", 1, None, [odd, [odd]]):
        assert dump_json(value) == json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    with pytest.raises(TypeError, match="not JSON serializable"):
        dump_json({"a": object()})
