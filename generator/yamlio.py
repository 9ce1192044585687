"""YAML in and out: deterministic YAML and JSON for every generated file, and a bounded YAML
reader for untrusted input (specs) that refuses hostile documents with a field path.

Why the fast emitter writes what PyYAML with libyaml writes: docs/contracts.md,
"Deterministic YAML".
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from generator.errors import printable

# libyaml's emitter (C) when PyYAML was built with it: same output for our documents, and much
# faster than the pure-Python emitter.
_BaseDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

WIDTH = 4096  # PyYAML's line width
# libyaml writes a mapping key longer than this as a complex key ("? key").
_MAX_SIMPLE_KEY = 100
# libyaml folds a plain or quoted scalar only at a space past column WIDTH, so a line that
# ends by WIDTH is never folded. The fast path keeps a scalar whose line, with its indent and
# the longest key before it, ends by WIDTH; a longer one sends the document to PyYAML whole.
_MAX_FAST_LINE = WIDTH - _MAX_SIMPLE_KEY - 2


class _Dumper(_BaseDumper):  # type: ignore[valid-type,misc]
    """SafeDumper that writes multi-line strings as literal blocks and never aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


class YamlText:
    """A non-empty list or mapping serialised once by :func:`dump_yaml`, to be placed as a
    mapping value inside bigger documents without serialising it again (a service's rule
    groups go into its rule file, its PrometheusRule and two Helm values files).

    Block YAML of a subtree is the same text at any depth, each line indented further, so
    :func:`dump_yaml` splices :attr:`text` in. ``data`` is only needed when the enclosing
    document falls back to PyYAML; without it the text is parsed back (lossless for what
    dump_yaml writes).
    """

    __slots__ = ("_data", "longest", "spliceable", "text")

    def __init__(self, text: str, data: Any = None) -> None:
        if not text or text[0] in " \n":
            raise ValueError("YamlText needs the block YAML of a non-empty list or mapping")
        self.text = text
        self._data = data
        # A line near the width would fold when indented further (checked where it is
        # spliced); a document-end marker (after a kept-breaks literal block) belongs to a
        # whole document only.
        lines = text.split("\n")
        self.longest = max(map(len, lines))
        self.spliceable = self.longest <= _MAX_FAST_LINE and "..." not in lines

    @classmethod
    def of(cls, data: list[Any] | dict[Any, Any]) -> YamlText:
        """Serialise ``data`` (a non-empty list or mapping) once."""
        return cls(dump_yaml(data), data)

    @property
    def data(self) -> Any:
        """The list or mapping (parsed from :attr:`text` when not given)."""
        if self._data is None:
            self._data = yaml.load(self.text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        return self._data

    @property
    def is_sequence(self) -> bool:
        """True for a list (its lines start with ``-`` at the left margin)."""
        return self.text.startswith("-")


def _yaml_text(dumper: yaml.SafeDumper, value: YamlText) -> yaml.Node:
    return dumper.represent_data(value.data)


_Dumper.add_representer(str, _str)
_Dumper.add_representer(YamlText, _yaml_text)


def _pyyaml(data: Any) -> str:
    return yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=False,
        width=WIDTH,
        allow_unicode=True,
        default_flow_style=False,
    )


# A string libyaml writes plain: printable ASCII, starting with no indicator, not ending in a
# space or colon, without ": " or " #" (which would start a value or a comment).
_PLAIN = re.compile(r"[A-Za-z0-9_/($][ -~]*")
_RESOLVERS = _Dumper.yaml_implicit_resolvers
# YAML line breaks: a key holding one is written as a complex key ("? key").
_BREAKS = re.compile("[\r\n\x85\u2028\u2029]")


def _plain(value: str) -> bool:
    if not _PLAIN.fullmatch(value) or value[-1] in " :" or ": " in value or " #" in value:
        return False
    return not any(regexp.match(value) for _, regexp in _RESOLVERS.get(value[0], ()))


class _Unsupported(Exception):
    """The fast path does not cover this document; PyYAML dumps it."""


class _Emitter:
    """One document's block layout; scalars through :meth:`scalar` (cached per document)."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.cache: dict[Any, str] = {}

    def scalar(self, value: Any) -> str:
        """The single-line text of a scalar (a string without line breaks, number, bool, None)."""
        if type(value) is str:
            text = self.cache.get(value)
            if text is None:
                if _plain(value):
                    text = value
                elif len(value) > _MAX_FAST_LINE or "\n" in value:
                    raise _Unsupported
                else:
                    text = _pyyaml([value])[2:-1]
                    if "\n" in text:
                        raise _Unsupported
                self.cache[value] = text
            return text
        if value is None:
            return "null"
        if value is True:
            return "true"
        if value is False:
            return "false"
        if type(value) is int:
            return str(value)
        if type(value) is float:
            key = ("float", value)
            text = self.cache.get(key)
            if text is None:
                text = self.cache[key] = _pyyaml([value])[2:-1]
            return text
        raise _Unsupported

    def block(self, value: str, indent: int) -> str:
        """``value`` (with line breaks) after ``key:`` or ``-``: a literal block whose lines are
        indented to ``indent``, or libyaml's quoted form where a literal block is not allowed."""
        key = ("block", value)
        template = self.cache.get(key)
        if template is None:
            template = self.cache[key] = _pyyaml([value])[2:]
        if not template.startswith(("|", ">")):
            if template.count("\n") != 1 or indent + len(template) > _MAX_FAST_LINE:
                raise _Unsupported
            return " " + template[:-1]
        if "+" in template.partition("\n")[0]:
            raise _Unsupported  # kept trailing line breaks: libyaml may end the document with "..."
        # libyaml's own output holds the content two columns in; empty lines stay empty.
        pad = " " * (indent - 2)
        head, _, body = template[:-1].partition("\n")
        lines = body.split("\n")
        return " " + head + "\n" + "\n".join(pad + line if line else "" for line in lines)

    def mapping(self, data: dict[Any, Any], indent: int, inline: bool) -> None:
        out = self.out
        pad = " " * indent
        for i, (key, value) in enumerate(data.items()):
            if type(key) is not str and type(key) is not int:
                raise _Unsupported
            key_text = self.scalar(key)
            if len(key_text) > _MAX_SIMPLE_KEY or (type(key) is str and _BREAKS.search(key)):
                raise _Unsupported
            out.append(key_text if inline and i == 0 else pad + key_text)
            self.value(value, indent, indent + 2, ":")

    def sequence(self, data: list[Any], indent: int, inline: bool) -> None:
        out = self.out
        pad = " " * indent
        for i, item in enumerate(data):
            out.append("-" if inline and i == 0 else pad + "-")
            self.value(item, indent, indent + 2, "")

    def value(self, value: Any, indent: int, inner: int, after: str) -> None:
        """Write ``value`` after a key (``after`` = ":", children at ``inner``; sequences at
        ``indent``) or after a dash (``after`` = "", children at ``inner``)."""
        out = self.out
        kind = type(value)
        if kind is dict:
            if not value:
                out.append(after + " {}\n")
            elif after:
                out.append(":\n")
                self.mapping(value, inner, False)
            else:
                out.append(" ")
                self.mapping(value, inner, True)
        elif kind is list:
            if not value:
                out.append(after + " []\n")
            elif after:
                out.append(":\n")
                self.sequence(value, indent, False)
            else:
                out.append(" ")
                self.sequence(value, inner, True)
        elif kind is YamlText:
            # A sequence under a key is not indented (libyaml's block layout), a mapping is.
            pad = " " * (indent if value.is_sequence else inner)
            if not after or not value.spliceable or len(pad) + value.longest > _MAX_FAST_LINE:
                raise _Unsupported
            out.append(":\n")
            out.append(indent_lines(value.text, pad))
        elif kind is str and "\n" in value:
            out.append(after + self.block(value, inner) + "\n")
        else:
            text = self.scalar(value)
            if inner + len(text) > _MAX_FAST_LINE:
                raise _Unsupported
            out.append(after + " " + text + "\n")


def indent_lines(text: str, pad: str) -> str:
    """``text`` (lines ending in ``\\n``) with ``pad`` before every line but empty ones, which
    stay empty as libyaml writes them (inside literal blocks)."""
    if text[-1:] == "\n" and text[:1] != "\n" and "\n\n" not in text:  # no empty line
        return pad + text[:-1].replace("\n", "\n" + pad) + "\n"
    return "\n".join(pad + line if line else line for line in text.split("\n"))


def _prefill(emitter: _Emitter, data: Any) -> None:
    """Put in ``emitter``'s cache the libyaml text of every string of ``data`` that is not
    plain (single-line ones and multi-line ones apart), from one PyYAML dump of each kind as a
    list instead of one dump per string: each item of a block sequence is written as the one
    item of ``[value]`` is (the same context, the same analysis of the scalar). A dump whose
    items cannot be told apart line by line fills nothing: :meth:`_Emitter.scalar` and
    :meth:`_Emitter.block` then dump those strings one by one, as without this."""
    cache = emitter.cache
    single: dict[str, None] = {}
    multi: dict[str, None] = {}
    stack = [data]
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is dict:
            stack.extend(value.keys())
            stack.extend(value.values())
        elif kind is list:
            stack.extend(value)
        elif kind is str and value not in cache:
            if "\n" in value:
                if ("block", value) not in cache:
                    multi[value] = None
            elif _plain(value):
                cache[value] = value
            elif len(value) <= _MAX_FAST_LINE:
                single[value] = None
    if len(single) > 1:
        texts = _pyyaml(list(single)).split("\n")
        if len(texts) == len(single) + 1 and all(t[:2] == "- " for t in texts[:-1]):
            cache.update(zip(single, (t[2:] for t in texts[:-1]), strict=True))
    if len(multi) > 1:
        pieces = ("\n" + _pyyaml(list(multi))).split("\n- ")[1:]
        if len(pieces) == len(multi) and pieces[-1][-1:] == "\n":
            last = len(pieces) - 1
            for i, (value, piece) in enumerate(zip(multi, pieces, strict=True)):
                cache[("block", value)] = piece if i == last else piece + "\n"


def _fast(data: Any) -> str | None:
    emitter = _Emitter()
    _prefill(emitter, data)
    try:
        if type(data) is dict and data:
            emitter.mapping(data, 0, False)
        elif type(data) is list and data:
            emitter.sequence(data, 0, False)
        else:
            return None
    except _Unsupported:
        return None
    return "".join(emitter.out)


def dump_yaml(data: Any, header: str | None = None) -> str:
    """Serialise ``data`` as block YAML, keys in insertion order, optional ``# header`` line(s).

    The text is what ``yaml.dump(data, Dumper=_Dumper, sort_keys=False, width=4096,
    allow_unicode=True, default_flow_style=False)`` gives (multi-line strings as literal
    blocks, no aliases).

    Raises:
        yaml.representer.RepresenterError: a value YAML cannot represent.
    """
    body = _fast(data)
    if body is None:
        body = _pyyaml(data)
    return comment_lines(header) + body if header else body


def comment_lines(header: str) -> str:
    """``header`` as the YAML comment lines :func:`dump_yaml` puts before a document."""
    return "".join(f"# {line}\n" for line in header.splitlines())


def dump_json(data: Any) -> str:
    """Serialise ``data`` as indented JSON with a trailing newline (keys in insertion order):
    the text of ``json.dumps(data, indent=2, ensure_ascii=False)``, written without the pure
    Python encoder ``json`` falls back to when indenting (twice as slow on a dashboard).

    Raises:
        TypeError: a value JSON cannot encode.
    """
    return _json_text(data, "") + "\n"


def dump_dashboard_json(data: dict[str, Any]) -> str:
    """Serialise a Grafana dashboard (a JSON object) in review-sized lines, with a trailing
    newline: one line per top-level key, and under ``panels`` one line per panel, each value
    compact (``json.dumps`` with ``(",", ":")`` separators, keys in insertion order, non-ASCII
    kept). A changed panel is one changed line in a diff; the file is ~60 % of the indented
    text (:func:`dump_json`), which it parses to the same value.

    Raises:
        TypeError: a value JSON cannot encode.
    """

    def compact(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=True)

    lines = []
    for key, value in data.items():
        if key == "panels" and isinstance(value, list) and value:
            panels = ",\n    ".join(compact(panel) for panel in value)
            lines.append(f"{compact(key)}: [\n    {panels}\n  ]")
        else:
            lines.append(f"{compact(key)}: {compact(value)}")
    if not lines:
        return "{}\n"
    return "{\n  " + ",\n  ".join(lines) + "\n}\n"


_json_string = json.encoder.encode_basestring  # json's own (C) string encoder


def _json_float(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _json_key(key: object) -> str:
    """A mapping key as ``json`` writes it: strings as they are, other scalars as strings."""
    if isinstance(key, str):
        return _json_string(key)
    if key is True or key is False or key is None:
        return f'"{json.dumps(key)}"'
    if isinstance(key, int):
        return f'"{int.__repr__(key)}"'
    if isinstance(key, float):
        return f'"{_json_float(key)}"'
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _json_text(value: Any, pad: str) -> str:
    if isinstance(value, str):
        return _json_string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _json_float(value)
    inner = pad + "  "
    between = ",\n" + inner
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        items = [_json_text(v, inner) for v in value]
    elif isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{_json_key(k)}: {_json_text(v, inner)}" for k, v in value.items()]
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
    opening, closing = ("[", "]") if isinstance(value, (list, tuple)) else ("{", "}")
    return f"{opening}\n{inner}{between.join(items)}\n{pad}{closing}"


def generated_header(source: str) -> str:
    """The "generated, do not edit" header (no version, no timestamp: golden files stay stable)."""
    return f"Generated by obsgen from {source}. Do not edit: change the spec and run `make render`."


# --- reading -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class InputLimits:
    """Bounds on one YAML input file, checked while it is read (before any value is built).

    Attributes:
        max_bytes: file size in bytes.
        max_depth: nesting of mappings and sequences (a top-level key's value is level 1).
        max_values: values in the document with every alias expanded (a "billion laughs"
            document of 600 bytes expands to 10⁹).
        max_aliases: ``*alias`` references in the document.
        max_scalar_chars: characters of one scalar (a key or a value).
        max_int_chars: characters of one integer literal (``5000`` digits stall ``int()``).
    """

    max_bytes: int = 1 << 20
    max_depth: int = 32
    max_values: int = 10_000
    max_aliases: int = 32
    max_scalar_chars: int = 4096
    max_int_chars: int = 20


class InputLimitExceeded(Exception):
    """A document broke one of its :class:`InputLimits`.

    Attributes:
        path: field path where it happened (``spec.slos[3].name``), ``""`` at the top.
        line: 1-based line in the file.
        message: what was exceeded and the bound, one line.
    """

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}: line {line}: {message}")
        self.path = path
        self.line = line
        self.message = message


def field_path(parts: list[str]) -> str:
    """Join path segments (``["spec", "slos", "[3]"]``) as ``spec.slos[3]``."""
    path = ""
    for part in parts:
        path += part if part.startswith("[") or not path else f".{part}"
    return path


_INT_TAG = "tag:yaml.org,2002:int"
# YAML 1.2 core schema floats: YAML 1.1 (PyYAML) reads 5e-2 and 1e308 as strings.
_YAML12_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)[eE][-+]?[0-9]+$")


def _shown_key(key: str) -> str:
    """A mapping key as a path segment: escaped, cut to 40 characters."""
    key = printable(key)
    return key if len(key) <= 40 else key[:39] + "…"


def _children(node: yaml.Node) -> Iterator[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        yield from node.value
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield key
            yield value


# The composition mixin's methods call the composer and parser of the class it is mixed into.
if TYPE_CHECKING:
    _ComposerBase = yaml.SafeLoader
else:
    _ComposerBase = object

# What PyYAML's reader refuses (yaml.reader.Reader.NON_PRINTABLE: C0 controls but tab and line
# breaks, DEL, C1 controls but NEL, surrogates, U+FFFE, U+FFFF), and a byte-order mark past the
# first character: libyaml skips one at the start of any line, PyYAML reads it as text.
_REFUSED = re.compile(f"{yaml.reader.Reader.NON_PRINTABLE.pattern}|(?<=.)\ufeff", re.DOTALL)


def refuse_unprintable(text: str) -> None:
    """Refuse a character YAML does not allow anywhere in ``text`` (and a byte-order mark
    but as the first character), as PyYAML's pure reader does before parsing: libyaml's
    reader refuses them only once it gets there (an earlier syntax error wins) and names a
    byte offset, not a character offset.

    Raises:
        yaml.reader.ReaderError: with the character's code point and 0-based offset.
    """
    found = _REFUSED.search(text)
    if found is not None:
        raise yaml.reader.ReaderError(
            "<unicode string>",
            found.start(),
            ord(found.group()),
            "unicode",
            "special characters are not allowed",
        )


class _BoundedComposition(_ComposerBase):
    """Composition with :class:`InputLimits`, duplicate keys refused and YAML 1.2 floats: the
    part of :class:`BoundedLoader` shared by its libyaml and pure-Python variants.

    Composing is where PyYAML recurses (one Python frame per nesting level) and where aliases
    are resolved, so depth, aliases and expanded size are checked there, before any Python
    object is built. An alias to a value that contains it (a cycle) is refused too.
    """

    limits = InputLimits()

    def __init__(self, stream: str) -> None:
        refuse_unprintable(stream)
        super().__init__(stream)
        self._path: list[str] = []
        self._sizes: dict[int, int] = {}  # id(node) -> values under it, aliases expanded
        self._open: set[str] = set()  # anchors of collections still being composed
        self._aliases = 0

    def _refuse(self, message: str) -> InputLimitExceeded:
        mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
        return InputLimitExceeded(field_path(self._path), mark.line + 1, message)

    def compose_node(self, parent: Any, index: Any) -> Any:
        limits = self.limits
        if isinstance(index, int):
            self._path.append(f"[{index}]")
        elif isinstance(index, yaml.ScalarNode):
            self._path.append(_shown_key(index.value))
        elif parent is not None:
            self._path.append("<key>")  # composing a mapping key
        try:
            if len(self._path) > limits.max_depth:
                raise self._refuse(
                    f"nested more than {limits.max_depth} levels deep; expected a flatter document"
                )
            if self.check_event(yaml.AliasEvent):
                self._aliases += 1
                if self._aliases > limits.max_aliases:
                    raise self._refuse(
                        f"more than {limits.max_aliases} YAML aliases (*name); write the values out"
                    )
                if self.peek_event().anchor in self._open:  # type: ignore[no-untyped-call]
                    raise self._refuse("a YAML alias refers to a value that contains it (a cycle)")
            node: yaml.Node = super().compose_node(parent, index)  # type: ignore[assignment]
            size = self._sizes.get(id(node))
            if size is None:  # a node just composed: its children are complete
                self._check_scalar(node)
                size = 1 + sum([self._sizes.get(id(child), 1) for child in _children(node)])
                self._sizes[id(node)] = size
            if size > limits.max_values:
                raise self._refuse(
                    f"more than {limits.max_values} values once aliases are expanded; "
                    "expected a smaller document"
                )
            return node
        finally:
            if parent is not None:  # the root pushed no segment
                self._path.pop()

    def compose_sequence_node(self, anchor: Any) -> Any:
        return self._composing(super().compose_sequence_node, anchor)

    def compose_mapping_node(self, anchor: Any) -> Any:
        return self._composing(super().compose_mapping_node, anchor)

    def _composing(self, compose: Any, anchor: str | None) -> Any:
        if anchor is None:
            return compose(anchor)
        self._open.add(anchor)
        try:
            return compose(anchor)
        finally:
            self._open.discard(anchor)

    def _check_scalar(self, node: yaml.Node) -> None:
        if not isinstance(node, yaml.ScalarNode):
            return
        limits = self.limits
        if node.tag == _INT_TAG and len(node.value) > limits.max_int_chars:
            raise InputLimitExceeded(
                field_path(self._path),
                node.start_mark.line + 1,
                f"an integer of {len(node.value)} characters; expected at most "
                f"{limits.max_int_chars}",
            )
        if len(node.value) > limits.max_scalar_chars:
            raise InputLimitExceeded(
                field_path(self._path),
                node.start_mark.line + 1,
                f"a value of {len(node.value)} characters; expected at most "
                f"{limits.max_scalar_chars}",
            )

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, KeyError, AttributeError) as err:
            # PyYAML's scalar constructors fail with these on a value their tag does not fit:
            # "!!int server", "!!bool maybe", a date such as 2024-13-45 (read as !!timestamp).
            if not isinstance(node, yaml.ScalarNode):
                raise
            tag = node.tag.replace("tag:yaml.org,2002:", "!!")
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"{_shown_key(node.value)!r} is not a valid {tag} value; write a valid one or "
                "a quoted string",
                node.start_mark,
            ) from err

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag.endswith(":merge"):
                    continue
                key = self.construct_object(key_node)
                line = key_node.start_mark.line + 1
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None,
                        None,
                        f"duplicate key {_shown_key(str(key))!r} (first on line {seen[key]}); "
                        "each key may appear once per mapping",
                        key_node.start_mark,
                    )
                seen[key] = line
        return super().construct_mapping(node, deep=deep)


class PureBoundedLoader(_BoundedComposition, yaml.SafeLoader):
    """:class:`BoundedLoader` in pure-Python PyYAML throughout: the loader where PyYAML was
    built without libyaml, and the reference the tests compare the libyaml variant with."""


_NO_TOKEN = "found character that cannot start any token"


def yaml_problem(err: yaml.YAMLError, text: str) -> str:
    """The problem of a YAML error on ``text``, one line.

    Two problems are reworded: libyaml's "found character that cannot start any token"
    names the character, as PyYAML's pure scanner does (a tab, most often), and PyYAML's
    duplicate anchor says which anchor and where it was first defined (its own problem text
    is only "second occurrence").

    Args:
        err: raised while loading ``text`` (``problem`` and its marks when marked).
        text: the document (``problem_mark.index`` is a character offset into it).
    """
    problem: str = getattr(err, "problem", None) or str(err)
    mark = getattr(err, "problem_mark", None)
    context = getattr(err, "context", None) or ""
    if problem == _NO_TOKEN and mark is not None and 0 <= mark.index < len(text):
        return f"found character {text[mark.index]!r} that cannot start any token"
    first = getattr(err, "context_mark", None)
    if context.startswith("found duplicate anchor ") and first is not None:
        anchor = context.removeprefix("found ").removesuffix("; first occurrence")
        return f"{anchor} (first on line {first.line + 1}); each anchor may be defined once"
    return problem


def _libyaml_events() -> type[Any] | None:
    """The loader base that takes its events from libyaml, or None where PyYAML was built
    without it (``yaml.__with_libyaml__`` false)."""
    try:
        from yaml._yaml import CParser
    except ImportError:
        return None

    class LibyamlEvents(yaml.composer.Composer, CParser, SafeConstructor, Resolver):  # type: ignore[misc]
        """libyaml's scanner and parser (C) under PyYAML's Python composer and constructor.

        ``yaml.CSafeLoader`` composes in C too, where no limit can be checked. Here the
        Composer, before CParser in the method order, supplies ``get_single_node`` and
        ``compose_node`` (CParser's own are shadowed) and CParser the events
        (``get_event``, ``peek_event``, ``check_event``): the scanning and parsing where pure
        PyYAML spends ~70 % of its time.
        """

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            yaml.composer.Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)

        def compose_scalar_node(self, anchor: Any) -> yaml.ScalarNode:
            # An empty node tagged "!": libyaml leaves it unresolved (""), PyYAML resolves it
            # as a plain scalar (null), as it does a non-empty one in both.
            event: Any = self.peek_event()
            if event.tag == "!" and not event.implicit[0]:
                event.implicit = (True, False)
            return super().compose_scalar_node(anchor)

    return LibyamlEvents


_Events: type[Any] = _libyaml_events() or yaml.SafeLoader


class BoundedLoader(_BoundedComposition, _Events):  # type: ignore[misc,valid-type]
    """The loader of untrusted YAML: enforces :class:`InputLimits` while composing, rejects
    duplicate keys and reads scientific notation (``5e-2``) as a float, as YAML 1.2 does.

    Events come from libyaml's C parser when PyYAML has it (spec files parse ~3.5× faster),
    else from PyYAML's pure-Python parser (:class:`PureBoundedLoader`). Both read a document
    to the same value and raise the same limit, duplicate-key, character and document
    errors (control characters and a byte-order mark past the first character are refused
    before parsing). Their grammars differ only on broken documents: libyaml reads a tab
    as separating white space and ``?`` inside a flow scalar (as YAML 1.2 does), refuses
    ``:`` right before ``,``, ``]`` or ``}`` in a flow collection, and words some syntax
    errors differently (``tests/test_yaml_loader.py``).

    Raises (while loading):
        yaml.reader.ReaderError: a character YAML does not allow (with its offset).
        InputLimitExceeded: a limit is broken (with the field path and line).
        yaml.MarkedYAMLError: invalid YAML, a duplicate key (with the line of both).
    """


for _loader in (PureBoundedLoader, BoundedLoader):
    _loader.add_implicit_resolver("tag:yaml.org,2002:float", _YAML12_FLOAT, list("-+0123456789."))
