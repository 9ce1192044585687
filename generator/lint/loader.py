"""Reading rule files: plain Prometheus rule files, ``PrometheusRule`` objects, Helm values.

More: docs/lint.md, "Input shapes".
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from generator.errors import Diagnostic, ObsgenError
from generator.lint import limits
from generator.lint.dashboards import DASHBOARD_SUFFIXES, DashboardFile
from generator.lint.model import Disable, Rule, RuleGroup, SourceFile

RULE_SUFFIXES = (".yaml", ".yml")
_DISABLE = re.compile(r"#\s*obsgen-lint:\s*disable=([A-Za-z0-9_-]+(?:\s*,\s*[A-Za-z0-9_-]+)*)")
_DISABLE_WORDS = re.compile(r"#\s*obsgen lint disable\s+(?P<rest>.*)$")
_CHECK_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_/-]*")

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _LineDict(dict[str, Any]):
    """A mapping that remembers where it was written (0-based lines, converted on use)."""

    line: int = 0
    end_line: int = 0
    key_lines: dict[str, int]


class _LineLoader(_BaseLoader):  # type: ignore[valid-type,misc]
    """Safe YAML loader whose mappings are :class:`_LineDict` values."""


def _last_line(node: yaml.Node, known: dict[yaml.Node, int]) -> int:
    """0-based last line holding content of ``node`` (block scalars end on the next line).

    ``known`` keeps each collection's answer: every mapping asks for its own, so without it
    each node would be visited again for every mapping above it."""
    if node in known:
        return known[node]
    if isinstance(node, yaml.MappingNode):
        found = max((_last_line(v, known) for _, v in node.value), default=node.start_mark.line)
    elif isinstance(node, yaml.SequenceNode):
        found = max((_last_line(v, known) for v in node.value), default=node.start_mark.line)
    else:
        end = node.end_mark
        return end.line if end.column > 0 else max(end.line - 1, node.start_mark.line)
    known[node] = found
    return found


def _construct_map(loader: yaml.SafeLoader, node: yaml.MappingNode) -> Iterator[_LineDict]:
    data = _LineDict()
    data.line = node.start_mark.line
    # One memo per loader (one file): it holds the nodes, so no answer outlives its node.
    known: dict[yaml.Node, int] = loader.__dict__.setdefault("_obsgen_last_lines", {})
    data.end_line = _last_line(node, known)
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
        dashboard_findings: ``(check id, line, message)`` of the dashboard checks, for a
            Grafana dashboard (whose panel queries are the source's rules).
        shapes: structure errors (``spec.groups`` a mapping, a group that is not a
            mapping …) as :class:`Shape`; the file's other rules are still read.
    """

    source: SourceFile
    units: tuple[Unit, ...]
    invalid: tuple[tuple[int, str], ...]
    shapes: tuple[Shape, ...] = ()
    dashboard_findings: tuple[tuple[str, int, str], ...] = ()


@dataclass(frozen=True)
class Shape:
    """A part of a rule file whose structure is wrong, so its rules cannot be read.

    Attributes:
        line: 1-based line of the offending value (its mapping when it is a scalar).
        message: ``field.path: what is wrong; expected …``.
        promtool_sees: True when the part is inside a plain rule file that promtool reads
            as is (promtool then reports it itself).
    """

    line: int
    message: str
    promtool_sees: bool = False


def collect_paths(paths: Sequence[str]) -> list[tuple[Path, str, bool]]:
    """Expand files and folders into ``(path, display name, named explicitly)`` triples.

    Folders are searched recursively for ``*.yaml``/``*.yml`` and ``*.json`` (Grafana
    dashboards), skipping hidden folders and
    not following symlinked folders; the result is sorted by display name. A path named
    explicitly may be any kind of file (``<(…)`` gives a pipe); files found in folders are
    checked to be regular files when read.

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
                    if name.endswith(RULE_SUFFIXES + DASHBOARD_SUFFIXES):
                        child = Path(root) / name
                        found.setdefault(str(child), (child, str(child), False))
        elif path.exists():
            found[str(path)] = (path, raw, True)
        else:
            missing.append(Diagnostic(raw, "", "no such file or folder"))
    if missing:
        raise ObsgenError(missing)
    return sorted(found.values(), key=lambda item: item[1])


def _words(rest: str, line: int) -> list[Disable]:
    """``a, b until 2027-01-31 (why)``: the check ids up to ``until`` or the first word that is
    no id, each with the date after ``until``."""
    tokens = [t for t in re.split(r"[,\s]+", rest.strip()) if t]
    ids: list[str] = []
    until: date | None = None
    bad = ""
    for position, token in enumerate(tokens):
        if token == "until":
            text = tokens[position + 1] if position + 1 < len(tokens) else ""
            try:
                until = date.fromisoformat(text[:10])
            except ValueError:
                bad = text or "(nothing)"
            break
        if not _CHECK_WORD.fullmatch(token):
            break
        ids.append(token)
    return [Disable(check, line, until, bad) for check in ids]


def _disabled_by_line(text: str) -> dict[int, list[Disable]]:
    """0-based line -> the checks named in a disable comment on it: ``# obsgen lint disable a, b
    [until YYYY-MM-DD]``, or the older ``# obsgen-lint: disable=a,b``."""
    out: dict[int, list[Disable]] = {}
    for number, line in enumerate(text.splitlines()):
        if "obsgen" not in line:
            continue
        words = _DISABLE_WORDS.search(line)
        if words:
            out[number] = _words(words.group("rest"), number + 1)
            continue
        match = _DISABLE.search(line)
        if match:
            ids = [part.strip() for part in match.group(1).split(",") if part.strip()]
            out[number] = [Disable(check, number + 1) for check in ids]
    return out


def _rule_disabled(
    lines: list[str], comments: dict[int, list[Disable]], first: int, last: int
) -> list[Disable]:
    found: list[Disable] = []
    for number in range(first, last + 1):
        found += comments.get(number, [])
    above = first - 1
    while above >= 0 and lines[above].lstrip().startswith("#"):
        found += comments.get(above, [])
        above -= 1
    return sorted(found, key=lambda d: (d.line, d.check))


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


def _line(container: Any, key: str = "") -> int:
    """1-based line of ``container[key]`` (of ``container`` itself when unknown)."""
    if not isinstance(container, _LineDict):
        return 0
    return container.key_lines.get(key, container.line) + 1 if key else container.line + 1


def _type_name(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    return f"a {type(value).__name__} ({_text(value)[:40]!r})"


class _Shapes:
    """Collects structure errors while the loader looks for rule groups."""

    def __init__(self) -> None:
        self.found: list[tuple[int, str]] = []

    def groups(self, value: Any, where: str, line: int) -> list[Any]:
        """``value`` when it is a list of groups; else record the error and return ``[]``."""
        if isinstance(value, list):
            return value
        if value is not None:
            self.found.append(
                (line, f"{where}: expected a list of rule groups, got {_type_name(value)}")
            )
        return []

    def add(self, line: int, message: str) -> None:
        self.found.append((line, message))


def _group_sets(doc: Any, shapes: _Shapes) -> Iterator[tuple[str, str, list[Any], int]]:
    """Yield ``(format, object, groups, line of the groups)`` for every unit found in one YAML document.

    ``object`` names what the unit becomes once deployed, so that two files writing the same
    object are known to be one: ``namespace/name`` of a PrometheusRule, the key of a Helm
    ``additionalPrometheusRulesMap`` entry (Helm merges ``-f`` files by key) or the ``name``
    of an ``additionalPrometheusRules`` entry; ``""`` for a plain rule file and for an object
    without a name. Wrong shapes (``spec.groups`` a mapping …) go to ``shapes``.
    """
    if not isinstance(doc, dict):
        return
    if doc.get("kind") == "List" and "items" in doc:
        items = doc["items"]
        if not isinstance(items, list):
            shapes.add(_line(doc, "items"), f"items: expected a list, got {_type_name(items)}")
            return
        for item in items:
            yield from _group_sets(item, shapes)
        return
    if doc.get("kind") == "PrometheusRule":
        spec = doc.get("spec")
        if not isinstance(spec, dict):
            shapes.add(_line(doc, "spec"), f"spec: expected a mapping, got {_type_name(spec)}")
            return
        line = _line(spec, "groups")
        groups = shapes.groups(spec.get("groups"), "spec.groups", line)
        yield "prometheusrule", _object_name(doc), groups, line
        return
    if isinstance(doc.get("groups"), list):
        yield "rules", "", doc["groups"], _line(doc, "groups")
        return
    if "groups" in doc and "kind" not in doc and "apiVersion" not in doc:
        shapes.groups(doc["groups"], "groups", _line(doc, "groups"))
        return
    yield from _helm_sets(doc, 0, "", shapes)


def _helm_sets(
    doc: dict[str, Any], depth: int, prefix: str, shapes: _Shapes
) -> Iterator[tuple[str, str, list[Any], int]]:
    if "additionalPrometheusRulesMap" in doc:
        rules_map = doc["additionalPrometheusRulesMap"]
        where = f"{prefix}additionalPrometheusRulesMap"
        if not isinstance(rules_map, dict):
            if rules_map is not None:
                shapes.add(
                    _line(doc, "additionalPrometheusRulesMap"),
                    f"{where}: expected a mapping of name to {{groups: [...]}}, "
                    f"got {_type_name(rules_map)}",
                )
            rules_map = {}
        for key, entry in rules_map.items():
            if not isinstance(entry, dict):
                shapes.add(
                    _line(rules_map, key),
                    f"{where}.{key}: expected a mapping with `groups`, got {_type_name(entry)}",
                )
                continue
            line = _line(entry, "groups")
            groups = shapes.groups(entry.get("groups"), f"{where}.{key}.groups", line)
            yield "helm", f"map:{key}", groups, line
    if "additionalPrometheusRules" in doc:
        rules_list = doc["additionalPrometheusRules"]
        where = f"{prefix}additionalPrometheusRules"
        if not isinstance(rules_list, list):
            if rules_list is not None:
                shapes.add(
                    _line(doc, "additionalPrometheusRules"),
                    f"{where}: expected a list of {{name, groups}}, got {_type_name(rules_list)}",
                )
            rules_list = []
        for index, entry in enumerate(rules_list):
            if not isinstance(entry, dict):
                shapes.add(
                    _line(doc, "additionalPrometheusRules"),
                    f"{where}[{index}]: expected a mapping with `groups`, got {_type_name(entry)}",
                )
                continue
            line = _line(entry, "groups")
            groups = shapes.groups(entry.get("groups"), f"{where}[{index}].groups", line)
            name = _text(entry.get("name"))
            yield "helm", f"list:{name}" if name else "", groups, line
    if depth == 0:
        for key, value in doc.items():
            if isinstance(value, dict):
                yield from _helm_sets(value, 1, f"{key}.", shapes)


def _build_rule(
    raw: _LineDict,
    display: str,
    group: str,
    interval: str | None,
    index: int,
    disabled: list[Disable],
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
        disables=tuple(disabled),
        keep_firing_for=None
        if raw.get("keep_firing_for") is None
        else _text(raw["keep_firing_for"]),
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
        limits.check_yaml(text)
    except limits.Refused as refused:
        raise InputProblem(display, refused.line, refused.message) from None
    try:
        return list(yaml.load_all(text, Loader=_LineLoader))
    except (ValueError, OverflowError, RecursionError) as err:  # a constructor's refusal
        raise InputProblem(display, 0, f"cannot read a value: {str(err)[:200]}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or str(err)
        line = mark.line + 1 if mark is not None else 0
        raise InputProblem(display, line, f"not valid YAML: {problem}") from None


def _parse_docs(docs: list[Any], text: str, path: str, display: str) -> LoadedFile | None:
    lines = text.splitlines()
    comments = _disabled_by_line(text)
    units: list[Unit] = []
    invalid: list[tuple[int, str]] = []
    formats: list[str] = []
    shapes = _Shapes()
    group_shapes = _Shapes()
    for doc in docs:
        if _is_promtool_test(doc):
            continue
        for fmt, name, raw_groups, line in _group_sets(doc, shapes):
            formats.append(fmt)
            groups = _build_groups(
                (raw_groups, line), display, (lines, comments), invalid, group_shapes, (fmt, name)
            )
            units.append(Unit(display, len(units), groups, direct=False))
    if not units and not shapes.found:
        return None
    direct = formats == ["rules"] and len(docs) == 1
    if direct:
        units = [Unit(display, 0, units[0].groups, direct=True)]
    found = [Shape(line, message) for line, message in shapes.found]
    found += [Shape(line, message, promtool_sees=direct) for line, message in group_shapes.found]
    fmt = formats[0] if formats else "rules"
    source = SourceFile(path, display, fmt, tuple(g for u in units for g in u.groups))
    return LoadedFile(source, tuple(units), tuple(invalid), tuple(found))


def _build_groups(
    found: tuple[Iterable[Any], int],
    display: str,
    text: tuple[list[str], dict[int, list[Disable]]],
    invalid: list[tuple[int, str]],
    shapes: _Shapes,
    where: tuple[str, str],
) -> tuple[RuleGroup, ...]:
    raw_groups, line = found
    lines, comments = text
    groups: list[RuleGroup] = []
    for number, raw_group in enumerate(raw_groups):
        if not isinstance(raw_group, _LineDict):
            shapes.add(line, f"group {number + 1}: expected a mapping, got {_type_name(raw_group)}")
            continue
        name = _text(raw_group.get("name"))
        interval = raw_group.get("interval")
        rules: list[Rule] = []
        raw_rules = raw_group.get("rules")
        if raw_rules is not None and not isinstance(raw_rules, list):
            shapes.add(
                _line(raw_group, "rules"),
                f"group {name!r}: rules: expected a list of rules, got {_type_name(raw_rules)}",
            )
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


def _read_dashboard(
    text: str, path: Path, display: str, explicit: bool, scrape: float
) -> LoadedFile | None:
    """A Grafana dashboard as lint input; ``None`` for other JSON found in a folder.

    Raises:
        InputProblem: not JSON, too deeply nested, or (named explicitly) not a dashboard.
    """
    try:
        dashboard = DashboardFile(text, str(path), display, scrape)
    except limits.Refused as refused:
        raise InputProblem(display, refused.line, refused.message) from None
    except json.JSONDecodeError as err:
        raise InputProblem(display, err.lineno, f"not valid JSON: {err.msg}") from None
    except (ValueError, RecursionError) as err:
        if not explicit:
            return None
        raise InputProblem(display, 0, str(err)) from None
    group = dashboard.source.groups[0]
    unit = Unit(
        display, 0, (RuleGroup(group.name, group.line, dashboard.raw_group, group.rules),), False
    )
    findings = tuple((check, line, message) for check, line, message, _ in dashboard.findings)
    return LoadedFile(dashboard.source, (unit,) if group.rules else (), (), (), findings)


def _read_one(
    path: Path, display: str, explicit: bool, scrape_interval: float = 30.0
) -> LoadedFile | None:
    """Read and parse one file; ``None`` for YAML without rules found in a folder.

    Raises:
        InputProblem: the file is unreadable, not UTF-8 or not YAML, or it was named
            explicitly and holds no rule groups (a promtool test file is fine).
    """
    try:
        text = limits.read_text(path, regular_only=not explicit)
    except limits.Refused as refused:
        raise InputProblem(display, refused.line, refused.message) from None
    except OSError as err:
        raise InputProblem(display, 0, f"cannot read: {err.strerror or err}") from None
    if display.endswith(DASHBOARD_SUFFIXES):
        return _read_dashboard(text, path, display, explicit, scrape_interval)
    docs = _load_yaml(text, display)
    result = _parse_docs(docs, text, str(path), display)
    if result is None and explicit and not any(_is_promtool_test(doc) for doc in docs):
        raise InputProblem(display, 0, _NO_RULES)
    return result


def load_inputs(paths: Sequence[str], scrape_interval: float = 30.0) -> Inputs:
    """Read every rule file and Grafana dashboard under ``paths``; a bad file is recorded,
    not fatal.

    Files named explicitly must hold rule groups (or be a dashboard); files found in folders
    that hold none (promtool test files, other YAML or JSON) are skipped. ``scrape_interval``
    (seconds) stands in for Grafana's ``$__rate_interval`` (4 × it).

    Raises:
        ObsgenError: a path does not exist (a usage error, exit 2).
    """
    loaded: list[LoadedFile] = []
    problems: list[InputProblem] = []
    for path, display, explicit in collect_paths(paths):
        try:
            result = _read_one(path, display, explicit, scrape_interval)
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
