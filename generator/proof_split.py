"""Split a promtool test file so each test group loads only the rules it can observe.

Which rules a test group observes, which assertions were proven before, and what the parts
cannot show: docs/proof.md, "Splitting a promtool proof".
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from generator.lint import limits
from generator.promql import names_in
from generator.units import parse_duration_ms

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BaseDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Plain(str):
    """An unquoted scalar, as written: promtool's Go YAML decoders read ``1.10``, ``no`` and
    ``12:30`` as that text where PyYAML's YAML 1.1 reads 1.1, false and 750."""


class _Loader(_BaseLoader):  # type: ignore[valid-type,misc]
    """Loads unquoted scalars as :class:`_Plain` text and rejects a key given twice in one
    mapping, as promtool does (PyYAML would keep the last)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[str] = set()
        for key, _ in node.value:
            if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                if key.value in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key.value!r} given twice", key.start_mark
                    )
                seen.add(key.value)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep)
        return mapping

    def construct_plain(self, node: yaml.ScalarNode) -> Any:
        if not node.style:  # plain: None, or "" from the C parser
            return _Plain(node.value)
        return yaml.SafeLoader.yaml_constructors[node.tag](self, node)  # `!!int "10"`


for _tag in ("bool", "int", "float", "timestamp"):
    _Loader.add_constructor(f"tag:yaml.org,2002:{_tag}", _Loader.construct_plain)


class _Dumper(_BaseDumper):  # type: ignore[valid-type,misc]
    """Writes :class:`_Plain` text back unquoted."""


_Dumper.add_representer(
    _Plain,
    lambda dumper, text: dumper.represent_scalar(
        dumper.resolve(yaml.ScalarNode, str(text), (True, False)), str(text)
    ),
)

# Series the rule manager writes for alerting rules: reading them reads every alert's state.
_ALERT_STATE = frozenset({"ALERTS", "ALERTS_FOR_STATE"})
# A selector's `{` and the word before it on its line: a metric name, or nothing, a number or
# one of PromQL's keywords (`or{job="a"}`, `group_left {job="a"}`), when the selector has no
# name and may read any series, records and ALERTS included. Braces inside strings only add rules.
_BEFORE_BRACE = re.compile(r"([A-Za-z0-9_:]*)[ \t]*\{")
_WORD_OPERATORS = frozenset(
    {"and", "or", "unless", "bool", "atan2", "group_left", "group_right"}
    | {"on", "ignoring", "by", "without", "offset"}
)
# The template function that runs a PromQL query (in an alert's labels or annotations).
_TEMPLATE_QUERY = re.compile(r"\{\{.*\bquery\b", re.DOTALL)
_WHOLE = "*"
# What makes promtool read a rule_files entry as a glob pattern (Go's filepath.Glob).
_GLOB_CHARS = "*?[\\"
# Test groups per part: the burn-rate cases of one service (25 and more) share one set of
# rules; in parts of this size they spread over every core (promtool tests one file after
# another), which is what a developer waits for after editing one spec.
TESTS_PER_PART = 8

Rule = tuple[int, int]
"""A rule by (index of its group among the loaded groups, index within that group)."""


class _RuleIndex:
    """Which rules of the loaded rule files define each record and alert, and which rules
    each rule reads."""

    def __init__(self, groups: list[dict[str, Any]]) -> None:
        self.records: dict[str, set[Rule]] = {}
        self.alerts: dict[str, set[Rule]] = {}
        every: set[Rule] = set()
        for g, group in enumerate(groups):
            for r, rule in enumerate(group.get("rules") or []):
                every.add((g, r))
                if "record" in rule:
                    self.records.setdefault(str(rule["record"]), set()).add((g, r))
                elif "alert" in rule:
                    self.alerts.setdefault(str(rule["alert"]), set()).add((g, r))
        self.all = frozenset(every)
        self.reads = {
            (g, r): self.all if _queries(rule) else self.defining(str(rule.get("expr", "")))
            for g, group in enumerate(groups)
            for r, rule in enumerate(group.get("rules") or [])
        }

    def defining(self, expr: str) -> set[Rule]:
        """Rules whose output ``expr`` may read."""
        # Every identifier, label values and strings included (promql.names_in): a name found
        # there only adds a rule (harmless); a record read is never missed.
        names = names_in(expr)
        if "__name__" in names or _unnamed_selector(expr):
            return set(self.all)  # it may select any record, and ALERTS
        found: set[Rule] = set()
        if names & _ALERT_STATE:
            found = set().union(*self.alerts.values())
        for name in names:
            found |= self.records.get(name, set())
        return found

    def closure(self, start: Iterable[Rule]) -> frozenset[Rule]:
        """``start`` and every rule they read, transitively."""
        seen = set(start)
        todo = list(seen)
        while todo:
            for needed in self.reads[todo.pop()] - seen:
                seen.add(needed)
                todo.append(needed)
        return frozenset(seen)


def _unnamed_selector(expr: str) -> bool:
    """True when ``expr`` may hold a selector without a metric name (``{job="a"}``)."""
    for match in _BEFORE_BRACE.finditer(expr):
        word = match.group(1)
        if not word or word[0].isdigit() or word.lower() in _WORD_OPERATORS:
            return True
    return False


def _queries(rule: Mapping[str, Any]) -> bool:
    """True when a template of ``rule`` (its labels or annotations) may run a query: that
    query may read any series, unseen by the analysis of ``expr``."""
    templates = [*(rule.get("labels") or {}).values(), *(rule.get("annotations") or {}).values()]
    return any(_TEMPLATE_QUERY.search(str(text)) for text in templates)


def _needed(test: Mapping[str, Any], index: _RuleIndex) -> frozenset[Rule] | str:
    start: set[Rule] = set()
    for alert in test.get("alert_rule_test") or []:
        start |= index.alerts.get(str(alert.get("alertname", "")), set())
    for case in test.get("promql_expr_test") or []:
        expr = str(case.get("expr", ""))
        if "ALERTS" in expr:
            return _WHOLE  # reads alert state: every group's alerts may matter
        start |= index.defining(expr)
    return index.closure(start) if start else _WHOLE


def _kept(
    groups: list[dict[str, Any]], needed: frozenset[Rule]
) -> list[tuple[int, dict[str, Any]]]:
    """The groups holding a needed rule, each with only its needed rules, in order, with
    their indexes."""
    kept = []
    for g, group in enumerate(groups):
        rules = [rule for r, rule in enumerate(group.get("rules") or []) if (g, r) in needed]
        if rules:
            kept.append((g, dict(group, rules=rules)))
    return kept


def _rule_files(base: Path, entries: list[Any]) -> list[Path]:
    """The rule files ``entries`` name, relative to ``base``, each once: promtool keys a
    loaded group by its file's path as joined, so a file listed twice loads once.

    Raises:
        ValueError: an entry promtool reads as a glob pattern.
    """
    files: dict[str, Path] = {}
    for entry in entries:
        joined = os.path.join(base, str(entry))
        if any(c in joined for c in _GLOB_CHARS):
            raise ValueError(f"{entry}: a glob pattern")
        key = joined if os.path.isabs(str(entry)) else os.path.normpath(joined)
        files.setdefault(key, Path(joined))
    return list(files.values())


def _read(path: Path, bounded: bool, rule_file: bool = False) -> Any:
    if not bounded:
        text = path.read_text(encoding="utf-8")
    else:
        try:
            text = limits.read_text(path, regular_only=True)
            limits.check_yaml(text)
        except limits.Refused as refused:
            raise ValueError(f"{path}: {refused.message}") from None
    _refuse_unlike_go(text, rule_file)
    return yaml.load(text, Loader=_Loader)


def _refuse_unlike_go(text: str, rule_file: bool) -> None:
    """Refuse YAML that promtool's Go decoders may read otherwise than PyYAML: explicit tags
    (``!!binary``, ``!!null``…), merge keys (applied in another order) and, in a rule file,
    anchors and aliases (promtool keeps ``record``, ``alert`` and ``expr`` as YAML nodes: an
    aliased ``expr`` reads as the anchor's name).

    Raises:
        ValueError: naming what was found.
    """
    for event in yaml.parse(text, Loader=_BaseLoader):
        if rule_file and (isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None)):
            raise ValueError("a YAML anchor or alias in a rule file")
        tag = getattr(event, "tag", None)
        if tag is not None:
            raise ValueError(f"an explicit YAML tag {tag}")
        if isinstance(event, yaml.ScalarEvent) and event.value == "<<" and not event.style:
            raise ValueError("a YAML merge key")


_TEXT_FIELDS = {
    "rule": ("record", "alert", "expr"),
    "test case": ("alertname", "eval_time", "expr"),
    "input series": ("series", "values"),
}


def _check_text(kind: str, item: Any) -> None:
    """Refuse a field promtool reads as text that PyYAML read as something else (``null``).

    Raises:
        ValueError: naming the field.
    """
    for field in _TEXT_FIELDS[kind]:
        if field in item and not isinstance(item[field], str):
            raise ValueError(f"a {kind}'s {field} that is not text")


_ASSERTIONS = ("alert_rule_test", "promql_expr_test")


def _cases(test: Mapping[str, Any]) -> list[Any]:
    """A test group's assertions: its alert tests, then its expression tests."""
    return [case for kind in _ASSERTIONS for case in test.get(kind) or []]


def _last_eval_ms(test: Mapping[str, Any]) -> int:
    """A test group's last ``eval_time`` in ms (0 without assertions).

    Raises:
        ValueError: an ``eval_time`` that is not a duration.
    """
    return max((parse_duration_ms(str(c["eval_time"]), zero=True) for c in _cases(test)), default=0)


RuleFiles = dict[str, list[dict[str, Any]]]
"""Rule files already read, by path: their groups, shared by calls on test files that load
the same rule files (a service's test files all load its one rule file)."""


def _load(
    path: Path, bounded: bool = False, read: RuleFiles | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]], list[int]]:
    """The test file ``path``, the rule groups it loads (in load order) and each group's rule
    file, by its index among the files. ``bounded``: read only regular files, within the
    linter's bounds on size and YAML shape (:mod:`generator.lint.limits`): for files obsgen
    did not just write. ``read``: rule files read before (none is read twice).

    Raises:
        OSError, yaml.YAMLError, KeyError, TypeError, AttributeError, ValueError: a file that
            cannot be read, is refused by those bounds, or does not have the shape of a
            promtool test or rule file.
    """
    doc = _read(path, bounded)
    groups: list[dict[str, Any]] = []
    origin: list[int] = []
    for number, rule_file in enumerate(_rule_files(path.parent, doc["rule_files"])):
        own = read.get(str(rule_file)) if read is not None else None
        if own is None:
            own = _read(rule_file, bounded, rule_file=True)["groups"]
            if read is not None:
                read[str(rule_file)] = own
        groups += own
        origin += [number] * len(own)
    for group in groups:
        for rule in group.get("rules") or []:
            _check_text("rule", rule)
    for test in doc["tests"]:
        for case in _cases(test):
            _check_text("test case", case)
        for entry in test.get("input_series") or []:
            _check_text("input series", entry)
    return doc, groups, origin


def _dumped(value: Any) -> bytes:
    """A text of ``value`` (as :func:`_load` reads files) that no other value has, for
    hashing: unquoted and quoted text told apart, mappings in key order. Writing it as YAML
    took a quarter of a one-edit render."""
    return _canonical(value).encode("utf-8", "surrogatepass")


def _canonical(value: Any) -> str:
    if isinstance(value, _Plain):
        return "p" + repr(str(value))
    if isinstance(value, str):
        return "s" + repr(value)
    if isinstance(value, dict):
        entries = sorted(_canonical(k) + ":" + _canonical(v) for k, v in value.items())
        return "{" + ",".join(entries) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_canonical(item) for item in value) + "]"
    return "o" + repr((type(value).__name__, repr(value)))


class _Keys:
    """The inputs of a test file's assertions, hashed (see the module docstring)."""

    def __init__(
        self, doc: Mapping[str, Any], groups: list[dict[str, Any]], origin: list[int]
    ) -> None:
        self._file = _dumped({k: v for k, v in doc.items() if k not in ("tests", "rule_files")})
        self._groups = [
            hashlib.sha256(
                _dumped([origin[g], {k: v for k, v in group.items() if k != "rules"}])
            ).digest()
            for g, group in enumerate(groups)
        ]
        self._rules = {
            (g, r): hashlib.sha256(_dumped(rule)).digest()
            for g, group in enumerate(groups)
            for r, rule in enumerate(group.get("rules") or [])
        }

    def of(self, test: Mapping[str, Any], index: _RuleIndex) -> list[tuple[str, int, str]]:
        """``(kind, position, key)`` of each assertion of ``test``. An expression test also
        reads what the rules recorded up to the test group's last ``eval_time`` (with ``@``
        or a negative ``offset``): that time is part of its key.

        Raises:
            ValueError: an ``eval_time`` that is not a duration.
        """
        shared = _dumped({k: v for k, v in test.items() if k not in (*_ASSERTIONS, "name")})
        until = _last_eval_ms(test)
        found = []
        for kind in _ASSERTIONS:
            for position, assertion in enumerate(test.get(kind) or []):
                needed = _needed({kind: [assertion]}, index)
                rules: list[Rule] = sorted(index.all if isinstance(needed, str) else needed)
                digest = hashlib.sha256(self._file + b"\0" + shared + b"\0")
                if kind == "promql_expr_test":
                    digest.update(f"until {until}\0".encode())
                last = -1
                for g, r in rules:
                    if g != last:
                        digest.update(b"g" + self._groups[g])
                        last = g
                    digest.update(b"r" + self._rules[(g, r)])
                digest.update(f"\0{kind}\0".encode() + _dumped(assertion))
                found.append((kind, position, digest.hexdigest()))
        return found


def assertion_keys(path: Path, read: RuleFiles | None = None) -> set[str]:
    """The key of every assertion of the promtool test file ``path`` (rule files resolved
    relative to it): a hash of everything its verdict depends on (see the module docstring).
    Empty when a file cannot be read or understood, or is not a regular file within the
    linter's bounds (:mod:`generator.lint.limits`: size, YAML nesting and aliases).
    ``read``: rule files read before, and where to keep those read now."""
    try:
        doc, groups, origin = _load(path, bounded=True, read=read)
        index = _RuleIndex(groups)
        keys = _Keys(doc, groups, origin)
        return {key for test in doc["tests"] for _, _, key in keys.of(test, index)}
    except (OSError, yaml.YAMLError, KeyError, TypeError, AttributeError, ValueError):
        return set()


def _unproven(
    tests: list[Any], keys: _Keys, index: _RuleIndex, proven: Collection[str]
) -> list[Any]:
    """``tests`` without the assertions whose key is in ``proven``; a test group left with
    none is left out. A test group with an expression test runs whole or not at all: leaving
    out its last assertions would end its evaluation sooner than the expression may read."""
    kept = []
    for test in tests:
        todo: dict[str, list[Any]] = {kind: [] for kind in _ASSERTIONS}
        for kind, position, key in keys.of(test, index):
            if key not in proven:
                todo[kind].append(test[kind][position])
        if any(todo.values()) and test.get("promql_expr_test"):
            kept.append(test)
        elif any(todo.values()):
            reduced = {k: v for k, v in test.items() if k not in _ASSERTIONS}
            reduced.update({kind: found for kind, found in todo.items() if found})
            kept.append(reduced)
    return kept


def split_test_file(
    path: Path,
    costs: dict[Path, int] | None = None,
    proven: Collection[str] = (),
    read: RuleFiles | None = None,
) -> list[Path]:
    """Split the promtool test file ``path`` (rule files resolved relative to it) into test
    files beside it, each loading only the rules its test groups need (see the module
    docstring); returns their paths in the order of their first test group, or ``[path]``
    when nothing can be saved (every test group needs every rule, or a file this cannot
    read or account for). The rule files must pass ``promtool check rules``: a rule that
    cannot load fails every test group of the whole file, but not of a part leaving it out.
    ``costs`` (when given) receives each part's :func:`estimated_cost`, from what the split
    has read already (not for ``[path]``). ``proven``: keys (:func:`assertion_keys`) of
    assertions that passed; they are left out, and a file whose assertions all passed gives
    no part. ``read``: rule files read before, and where to keep those read now.
    """
    try:
        doc, groups, origin = _load(path, read=read)
        tests = list(doc["tests"])
        index = _RuleIndex(groups)
        reduced = False
        if proven:
            unproven = _unproven(tests, _Keys(doc, groups, origin), index, proven)
            reduced = unproven != tests
            tests = unproven
        sets: dict[frozenset[Rule] | str, list[Any]] = {}
        for test in tests:
            needed = _needed(test, index)
            sets.setdefault(_WHOLE if needed == frozenset(index.all) else needed, []).append(test)
    except (OSError, yaml.YAMLError, KeyError, TypeError, AttributeError, ValueError):
        return [path]  # promtool reports what is wrong with it
    if len(sets) == 1 and _WHOLE in sets and not reduced:
        return [path]
    parts: list[Path] = []
    stem = path.name.removesuffix(".yaml")
    step = _step_ms(doc) if costs is not None else None
    for number, (needed, own_tests) in enumerate(sets.items()):
        if isinstance(needed, frozenset):
            loads = []
            kept = _kept(groups, needed)
            # one file per rule file: groups of one name in two files are two groups
            for source in sorted({origin[g] for g, _ in kept}):
                rules = path.parent / f"{stem}.set{number}.{source}.rules.yaml"
                own_kept = [group for g, group in kept if origin[g] == source]
                rules.write_text(yaml.dump({"groups": own_kept}, Dumper=_Dumper), encoding="utf-8")
                loads.append(rules.name)
        else:
            loads = [str(f) for f in doc["rule_files"]]
        loaded = len(needed) if isinstance(needed, frozenset) else len(index.all)
        for first in range(0, len(own_tests), TESTS_PER_PART):
            part = dict(doc, rule_files=loads, tests=own_tests[first : first + TESTS_PER_PART])
            target = path.parent / f"{stem}.set{number}.part{first // TESTS_PER_PART}.yaml"
            target.write_text(yaml.dump(part, Dumper=_Dumper, sort_keys=False), encoding="utf-8")
            parts.append(target)
            if costs is not None and step is not None:
                with contextlib.suppress(KeyError, TypeError, AttributeError, ValueError):
                    costs[target] = _cost(part["tests"], step, loaded)
    return parts


def estimated_cost(path: Path) -> int:
    """About how much work ``promtool test rules path`` is, in rule evaluations: the sum over
    its test groups of (evaluation steps up to the group's last ``eval_time``) × (rules
    loaded). promtool 2.42 evaluates every loaded rule at every step, and an evaluation's cost
    is mostly fixed (parsing and planning the query), so this ranks files well enough to
    share them out between processes. Returns the file's size in bytes when it cannot read it.
    """
    try:
        doc = yaml.load(path.read_text(encoding="utf-8"), Loader=_BaseLoader)
        step = parse_duration_ms(str(doc.get("evaluation_interval") or "1m"))
        rules = 0
        for rule_file in _rule_files(path.parent, doc["rule_files"]):
            loaded = yaml.load(rule_file.read_text(encoding="utf-8"), Loader=_BaseLoader)
            rules += sum(len(group.get("rules") or []) for group in loaded["groups"])
        return _cost(doc["tests"], step, rules)
    except (OSError, yaml.YAMLError, KeyError, TypeError, AttributeError, ValueError):
        return path.stat().st_size if path.exists() else 0


def _step_ms(doc: Mapping[str, Any]) -> int | None:
    """A test file's ``evaluation_interval`` in ms (promtool's default 1m), or None if bad."""
    try:
        return parse_duration_ms(str(doc.get("evaluation_interval") or "1m"))
    except ValueError:
        return None


def _cost(tests: list[Any], step_ms: int, rules: int) -> int:
    """:func:`estimated_cost` of ``tests`` evaluated every ``step_ms`` over ``rules`` rules."""
    total = 0
    for test in tests:
        total += (_last_eval_ms(test) // step_ms + 1) * max(rules, 1)
    return total
