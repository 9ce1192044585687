"""When one service's promtool proof also proves its renamed copies (issue 19: fleet scale).

Services renamed from one shape (:mod:`generator.shapes`) have rule and test files that are the
same text with another service name (and dashboard uid and spec path, which only annotations
and comments hold). promtool's verdict depends on a name only where something looks inside a
label value that holds it:

- a regular-expression matcher (``=~``, ``!~``) on such a label;
- ``label_replace`` reading such a label with a pattern that could tell two names apart;
- a template that does more with a label than print it (``{{ $labels.job | toUpper }}``);
- ``sort_by_label`` or ``label_join``.

Equality matchers, grouping, joins and plain template substitution treat any two names alike.
When none of the above touches a label holding the name, the verdict on one copy is the
verdict on every copy, and one proof stands for the shape. :func:`carries_over` decides that,
conservatively: anything it cannot read counts against it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

import yaml

_STRING = r'"((?:[^"\\]|\\.)*)"'
_MATCHER = re.compile(rf"([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*{_STRING}")
_LABEL_REPLACE = re.compile(r"\blabel_replace\s*\(")
# The four string arguments that end a label_replace call: dst, replacement, src, regex.
_LABEL_REPLACE_TAIL = re.compile(
    rf",\s*{_STRING}\s*,\s*{_STRING}\s*,\s*{_STRING}\s*,\s*{_STRING}\s*\)"
)
_TEMPLATE = re.compile(r"{{(.*?)}}", re.DOTALL)
_PLAIN_TEMPLATE = re.compile(
    r"-?\s*(\$labels\.\w+|if \$labels\.\w+|else|end|\$value(\s*\|\s*humanize\w*)?)\s*-?"
)
_ANY_VALUE = frozenset({"(.*)", "(.+)", ".*", ".+"})
_NAME_READERS = ("sort_by_label", "label_join")


def _strings(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _strings(key)
            yield from _strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)


def _label_maps(node: Any) -> Iterator[dict[Any, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _label_maps(value)
    elif isinstance(node, list):
        for item in node:
            yield from _label_maps(item)


def carries_over(texts: Iterable[str], name: str) -> bool:
    """Whether promtool's verdict on these rule and test files (YAML ``texts``) holds for every
    copy that differs only by the service ``name`` (see the module docstring).

    Returns False for anything it cannot read: a text that is not YAML, a ``label_replace``
    whose arguments it cannot find.
    """
    try:
        documents = [yaml.load(text, Loader=yaml.CSafeLoader) for text in texts]
    except yaml.YAMLError:
        return False
    strings = [s for document in documents for s in _strings(document)]
    carrying: set[str] = set()
    for text in strings:
        carrying.update(label for label, _, value in _MATCHER.findall(text) if name in value)
    for document in documents:
        for mapping in _label_maps(document):
            carrying.update(str(k) for k, v in mapping.items() if isinstance(v, str) and name in v)
    replaces: list[tuple[str, str, str, str]] = []
    for text in strings:
        tails = _LABEL_REPLACE_TAIL.findall(text)
        if len(tails) != len(_LABEL_REPLACE.findall(text)):
            return False
        replaces.extend(tails)
    grown = True
    while grown:  # a label copied from one that holds the name holds it too
        grown = False
        for target, replacement, source, _ in replaces:
            if (source in carrying or name in replacement) and target not in carrying:
                carrying.add(target)
                grown = True
    for _, _, source, pattern in replaces:
        if source in carrying and pattern not in _ANY_VALUE:
            return False
    for text in strings:
        if any(reader in text for reader in _NAME_READERS):
            return False
        for label, op, _ in _MATCHER.findall(text):
            if op in ("=~", "!~") and label in carrying:
                return False
        for template in _TEMPLATE.findall(text):
            if not _PLAIN_TEMPLATE.fullmatch(template.strip()):
                return False
    return True
