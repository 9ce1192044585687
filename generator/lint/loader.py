"""Reading rule files: plain Prometheus rule files, ``PrometheusRule`` objects, Helm values.

Input shapes recognised in each YAML document (a file may hold several, separated by ``---``):

* a plain rule file: ``{groups: [...]}``;
* a prometheus-operator object: ``{kind: PrometheusRule, spec: {groups: [...]}}``, also inside a
  ``{kind: List, items: [...]}``;
* Helm values (kube-prometheus-stack): ``additionalPrometheusRulesMap: {<name>: {groups: [...]}}``
  or the older list ``additionalPrometheusRules: [{name, groups}]``, at the top level or one level
  down (an umbrella chart's sub-chart key).

Each PrometheusRule object and each Helm map entry is one *unit*: a rule file of its own for
Prometheus, and for promtool. YAML is read with a loader that records the line of every mapping
and key, so findings name lines of the file the user wrote.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from generator.errors import Diagnostic, ObsgenError
from generator.lint.model import Rule, RuleGroup, SourceFile

RULE_SUFFIXES = (".yaml", ".yml")
_DISABLE = re.compile(r"#\s*obsgen-lint:\s*disable=([A-Za-z0-9_-]+(?:\s*,\s*[A-Za-z0-9_-]+)*)")

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _LineDict(dict[str, Any]):
    """A mapping that remembers where it was written (0-based lines, converted on use)."""

    line: int = 0
    end_line: int = 0
    key_lines: dict[str, int]


class _LineLoader(_BaseLoader):  # type: ignore[valid-type,misc]
    """Safe YAML loader whose mappings are :class:`_LineDict` values."""


def _last_line(node: yaml.Node) -> int:
    """0-based last line holding content of ``node`` (block scalars end on the next line)."""
    if isinstance(node, yaml.MappingNode):
        return max((_last_line(v) for _, v in node.value), default=node.start_mark.line)
    if isinstance(node, yaml.SequenceNode):
        return max((_last_line(v) for v in node.value), default=node.start_mark.line)
    end = node.end_mark
    return end.line if end.column > 0 else max(end.line - 1, node.start_mark.line)


def _construct_map(loader: yaml.SafeLoader, node: yaml.MappingNode) -> Iterator[_LineDict]:
    data = _LineDict()
    data.line = node.start_mark.line
    data.end_line = _last_line(node)
    data.key_lines = {}
    yield data
    data.update({str(k): v for k, v in loader.construct_mapping(node).items()})
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode):
            data.key_lines[str(key.value)] = key.start_mark.line
            if isinstance(value, yaml.MappingNode):
                for sub_key, _ in value.value:
                    if isinstance(sub_key, yaml.ScalarNode):
                        data.key_lines[f"{key.value}.{sub_key.value}"] = sub_key.start_mark.line


_LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)


@dataclass(frozen=True)
class Unit:
    """One rule file's worth of groups inside a source file.

    Attributes:
        file: display name of the source file.
        index: 0-based position of the unit in the file.
        groups: its groups.
        direct: True when the source file itself is a plain rule file promtool can read as is.
    """

    file: str
    index: int
    groups: tuple[RuleGroup, ...]
    direct: bool


@dataclass(frozen=True)
class LoadedFile:
    """A source file and its units.

    Attributes:
        source: the file and all its groups.
        units: the groups split by unit (PrometheusRule object, Helm map entry).
        invalid: ``(line, message)`` for rules too broken to check (no ``expr`` …).
    """

    source: SourceFile
    units: tuple[Unit, ...]
    invalid: tuple[tuple[int, str], ...]


def collect_paths(paths: Sequence[str]) -> list[tuple[Path, str, bool]]:
    """Expand files and folders into ``(path, display name, named explicitly)`` triples.

    Folders are searched recursively for ``*.yaml``/``*.yml``, skipping hidden folders; the
    result is sorted by display name.

    Raises:
        ObsgenError: a path does not exist (exit 2).
    """
    found: dict[str, tuple[Path, str, bool]] = {}
    missing: list[Diagnostic] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in files:
                    if name.endswith(RULE_SUFFIXES):
                        child = Path(root) / name
                        found.setdefault(str(child), (child, str(child), False))
        elif path.is_file():
            found[str(path)] = (path, raw, True)
        else:
            missing.append(Diagnostic(raw, "", "no such file or folder"))
    if missing:
        raise ObsgenError(missing)
    return sorted(found.values(), key=lambda item: item[1])


def _disabled_by_line(text: str) -> dict[int, set[str]]:
    """0-based line -> check ids named in ``# obsgen-lint: disable=a,b`` comments on it."""
    out: dict[int, set[str]] = {}
    for number, line in enumerate(text.splitlines()):
        match = _DISABLE.search(line)
        if match:
            ids = {part.strip() for part in match.group(1).split(",") if part.strip()}
            out[number] = ids
    return out


def _rule_disabled(
    lines: list[str], comments: dict[int, set[str]], first: int, last: int
) -> set[str]:
    ids: set[str] = set()
    for number in range(first, last + 1):
        ids |= comments.get(number, set())
    above = first - 1
    while above >= 0 and lines[above].lstrip().startswith("#"):
        ids |= comments.get(above, set())
        above -= 1
    return ids


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _is_promtool_test(doc: Any) -> bool:
    """True for a ``promtool test rules`` file (``rule_files:`` and ``tests:``)."""
    return isinstance(doc, dict) and "rule_files" in doc and "tests" in doc


def _object_name(doc: dict[str, Any]) -> str:
    """``namespace/name`` of a Kubernetes object (``""`` when it has no name)."""
    meta = doc.get("metadata")
    if not isinstance(meta, dict) or not meta.get("name"):
        return ""
    return f"{_text(meta.get('namespace'))}/{_text(meta['name'])}"


def _group_sets(doc: Any) -> Iterator[tuple[str, str, list[Any]]]:
    """Yield ``(format, object, groups)`` for every unit found in one YAML document.

    ``object`` names what the unit becomes once deployed, so that two files writing the same
    object are known to be one: ``namespace/name`` of a PrometheusRule, the key of a Helm
    ``additionalPrometheusRulesMap`` entry (Helm merges ``-f`` files by key) or the ``name``
    of an ``additionalPrometheusRules`` entry; ``""`` for a plain rule file and for an object
    without a name.
    """
    if not isinstance(doc, dict):
        return
    if doc.get("kind") == "List" and isinstance(doc.get("items"), list):
        for item in doc["items"]:
            yield from _group_sets(item)
        return
    if doc.get("kind") == "PrometheusRule":
        spec = doc.get("spec")
        groups = spec.get("groups") if isinstance(spec, dict) else None
        yield "prometheusrule", _object_name(doc), groups if isinstance(groups, list) else []
        return
    if isinstance(doc.get("groups"), list):
        yield "rules", "", doc["groups"]
        return
    yield from _helm_sets(doc, depth=0)


def _helm_sets(doc: dict[str, Any], depth: int) -> Iterator[tuple[str, str, list[Any]]]:
    rules_map = doc.get("additionalPrometheusRulesMap")
    if isinstance(rules_map, dict):
        for key, entry in rules_map.items():
            if isinstance(entry, dict) and isinstance(entry.get("groups"), list):
                yield "helm", f"map:{key}", entry["groups"]
    rules_list = doc.get("additionalPrometheusRules")
    if isinstance(rules_list, list):
        for entry in rules_list:
            if isinstance(entry, dict) and isinstance(entry.get("groups"), list):
                name = _text(entry.get("name"))
                yield "helm", f"list:{name}" if name else "", entry["groups"]
    if depth == 0:
        for value in doc.values():
            if isinstance(value, dict):
                yield from _helm_sets(value, depth=1)


def _build_rule(
    raw: _LineDict,
    display: str,
    group: str,
    interval: str | None,
    index: int,
    disabled: set[str],
    where: tuple[str, str],
) -> Rule | str:
    """Turn one rule mapping into a :class:`Rule`, or return why it cannot be checked."""
    kind = "alert" if "alert" in raw else "record" if "record" in raw else ""
    if not kind or ("alert" in raw and "record" in raw):
        return "a rule needs exactly one of `alert` or `record`"
    if not isinstance(raw.get("expr"), str | int | float) or _text(raw.get("expr")).strip() == "":
        return f"{kind} {_text(raw.get(kind))!r}: `expr` is missing or not a string"
    labels: dict[str, Any] = raw["labels"] if isinstance(raw.get("labels"), dict) else {}
    annotations: dict[str, Any] = (
        raw["annotations"] if isinstance(raw.get("annotations"), dict) else {}
    )
    key_lines = {key: line + 1 for key, line in raw.key_lines.items()}
    for_ = raw.get("for")
    return Rule(
        file=display,
        group=group,
        group_interval=None if interval is None else _text(interval),
        index=index,
        kind=kind,
        name=_text(raw.get(kind)),
        expr=_text(raw.get("expr")),
        labels={_text(k): _text(v) for k, v in labels.items()},
        annotations={_text(k): _text(v) for k, v in annotations.items()},
        for_=None if for_ is None else _text(for_),
        line=raw.line + 1,
        end_line=raw.end_line + 1,
        key_lines=key_lines,
        disabled=frozenset(disabled),
        packaging=where[0],
        deployed_as=where[1],
    )


def _plain(value: Any) -> Any:
    """Deep copy of loaded YAML into builtin types (for ``yaml.safe_dump``)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class InputProblem(Exception):
    """A file that cannot be linted: unreadable, not UTF-8, not YAML, or holding no rules.

    Attributes:
        file: display name of the file.
        line: 1-based line of the problem (the YAML error's mark); 0 for the whole file.
        message: one line: what is wrong.
    """

    def __init__(self, file: str, line: int, message: str) -> None:
        super().__init__(f"{file}:{line}: {message}" if line else f"{file}: {message}")
        self.file = file
        self.line = line
        self.message = message

    def diagnostic(self) -> Diagnostic:
        """The problem as an :class:`~generator.errors.Diagnostic` (``file``, ``line N``)."""
        return Diagnostic(self.file, f"line {self.line}" if self.line else "", self.message)


def _load_yaml(text: str, display: str) -> list[Any]:
    """Every YAML document in ``text``, mappings as :class:`_LineDict`.

    Raises:
        InputProblem: the text is not valid YAML, with the line of the error.
    """
    try:
        return list(yaml.load_all(text, Loader=_LineLoader))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or str(err)
        line = mark.line + 1 if mark is not None else 0
        raise InputProblem(display, line, f"not valid YAML: {problem}") from None


def parse_file(text: str, path: str, display: str) -> LoadedFile | None:
    """Find the rule groups in one file's text.

    Returns:
        The file's groups, or ``None`` when no document in it holds rule groups.

    Raises:
        ObsgenError: the text is not valid YAML (exit 2), naming the line.
    """
    try:
        docs = _load_yaml(text, display)
    except InputProblem as problem:
        raise ObsgenError([problem.diagnostic()]) from None
    return _parse_docs(docs, text, path, display)


def _parse_docs(docs: list[Any], text: str, path: str, display: str) -> LoadedFile | None:
    lines = text.splitlines()
    comments = _disabled_by_line(text)
    units: list[Unit] = []
    invalid: list[tuple[int, str]] = []
    formats: list[str] = []
    for doc in docs:
        if _is_promtool_test(doc):
            continue
        for fmt, name, raw_groups in _group_sets(doc):
            formats.append(fmt)
            groups = _build_groups(raw_groups, display, lines, comments, invalid, (fmt, name))
            units.append(Unit(display, len(units), groups, direct=False))
    if not units:
        return None
    fmt = formats[0]
    direct = formats == ["rules"] and len(docs) == 1
    if direct:
        units = [Unit(display, 0, units[0].groups, direct=True)]
    source = SourceFile(path, display, fmt, tuple(g for u in units for g in u.groups))
    return LoadedFile(source, tuple(units), tuple(invalid))


def _build_groups(
    raw_groups: Iterable[Any],
    display: str,
    lines: list[str],
    comments: dict[int, set[str]],
    invalid: list[tuple[int, str]],
    where: tuple[str, str],
) -> tuple[RuleGroup, ...]:
    groups: list[RuleGroup] = []
    for raw_group in raw_groups:
        if not isinstance(raw_group, _LineDict):
            continue
        name = _text(raw_group.get("name"))
        interval = raw_group.get("interval")
        rules: list[Rule] = []
        raw_rules = raw_group.get("rules")
        for index, raw_rule in enumerate(raw_rules if isinstance(raw_rules, list) else [], 1):
            if not isinstance(raw_rule, _LineDict):
                invalid.append(
                    (raw_group.line + 1, f"group {name!r}: rule {index} is not a mapping")
                )
                continue
            disabled = _rule_disabled(lines, comments, raw_rule.line, raw_rule.end_line)
            built = _build_rule(raw_rule, display, name, interval, index, disabled, where)
            if isinstance(built, str):
                invalid.append((raw_rule.line + 1, f"group {name!r}, rule {index}: {built}"))
            else:
                rules.append(built)
        groups.append(RuleGroup(name, raw_group.line + 1, _plain(raw_group), tuple(rules)))
    return tuple(groups)


@dataclass(frozen=True)
class Inputs:
    """What :func:`load_inputs` read.

    Attributes:
        files: the files holding rule groups, sorted by display name.
        problems: files that could not be linted, sorted by display name.
    """

    files: tuple[LoadedFile, ...]
    problems: tuple[InputProblem, ...]


_NO_RULES = (
    "no rule groups found; expected a rule file (`groups:`), a PrometheusRule "
    "object (`spec.groups`) or Helm values (`additionalPrometheusRulesMap`)"
)


def _read_one(path: Path, display: str, explicit: bool) -> LoadedFile | None:
    """Read and parse one file; ``None`` for YAML without rules found in a folder.

    Raises:
        InputProblem: the file is unreadable, not UTF-8 or not YAML, or it was named
            explicitly and holds no rule groups (a promtool test file is fine).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputProblem(display, 0, f"cannot read: {err}") from None
    docs = _load_yaml(text, display)
    result = _parse_docs(docs, text, str(path), display)
    if result is None and explicit and not any(_is_promtool_test(doc) for doc in docs):
        raise InputProblem(display, 0, _NO_RULES)
    return result


def load_inputs(paths: Sequence[str]) -> Inputs:
    """Read every rule file under ``paths``; a bad file is recorded, not fatal.

    Files named explicitly must hold rule groups; files found in folders that hold none
    (promtool test files, other YAML) are skipped.

    Raises:
        ObsgenError: a path does not exist (a usage error, exit 2).
    """
    loaded: list[LoadedFile] = []
    problems: list[InputProblem] = []
    for path, display, explicit in collect_paths(paths):
        try:
            result = _read_one(path, display, explicit)
        except InputProblem as problem:
            problems.append(problem)
            continue
        if result is not None:
            loaded.append(result)
    return Inputs(tuple(loaded), tuple(problems))


def load_files(paths: Sequence[str]) -> list[LoadedFile]:
    """Read every rule file under ``paths``, failing on any bad one (see :func:`load_inputs`).

    Raises:
        ObsgenError: a path is missing, a file is unreadable or not YAML, or a file named
            explicitly holds no rule groups — all such problems at once (exit 2).
    """
    inputs = load_inputs(paths)
    if inputs.problems:
        raise ObsgenError([problem.diagnostic() for problem in inputs.problems])
    return list(inputs.files)


def plain_groups(unit: Unit) -> dict[str, Any]:
    """The unit as a plain rule file mapping ``{groups: [...]}`` for promtool."""
    return {"groups": [group.raw for group in unit.groups]}
