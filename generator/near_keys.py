""" "Did you mean": the keys a pydantic model accepts where an unknown one was written.

A spec's ``spec.alerts.kvCache.maxUsage`` is refused as an unknown field; the keys the model
takes at ``spec.alerts.kvCache`` (``max``, ``for``, ``severity``, ...) hold the near miss
(``max``), found with :func:`difflib.get_close_matches`. The walk follows the error's location
through field annotations (``X | None``, ``list[X]``, ``dict[str, X]``, ``Annotated``, unions of
models); a location part no field names (a dict key, a union tag) keeps to the values of a
mapping, stays where it is in a union of models (its tag), and ends the walk elsewhere.
"""

from __future__ import annotations

import difflib
import math
import re
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

# difflib's ratio a near miss must reach (its default, 0.6, also suggests unrelated short keys).
CUTOFF = 0.6
# Keys listed when none is near (a model with more lists the first ones and "…").
SHOWN_KEYS = 12
_QUOTED = re.compile(r"'([^']*)'")


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The model classes ``annotation`` can hold directly (through unions, ``Annotated``,
    ``Optional``), not those inside lists or mappings."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    origin = typing.get_origin(annotation)
    if origin in (list, tuple, set, frozenset, dict, Sequence, Mapping):
        return []
    found: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        found.extend(m for m in _models_in(arg) if m not in found)
    return found


def _items_of(annotation: Any) -> Any | None:
    """The item type of a list annotation, the value type of a mapping one (None: neither),
    looked for through unions and ``Annotated``."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (list, tuple, set, frozenset, Sequence) and args:
        return args[0]
    if origin in (dict, Mapping) and len(args) == 2:
        return args[1]
    for arg in args:
        inner = _items_of(arg)
        if inner is not None:
            return inner
    return None


def _field(models: list[type[BaseModel]], key: str) -> Any | None:
    for model in models:
        for name, info in model.model_fields.items():
            if key in (info.alias, name):
                return info.annotation
    return None


def known_keys(model: type[BaseModel], parent: Sequence[int | str]) -> list[str]:
    """The keys (aliases) the model at location ``parent`` of ``model`` accepts, sorted;
    empty when the walk loses its way."""
    current: Any = model
    for part in parent:
        if isinstance(part, int):
            items = _items_of(current) if not _models_in(current) else None
            current = items if items is not None else current
            continue
        found = _field(_models_in(current), part)
        if found is not None:
            current = found
            continue
        values = _items_of(current)
        if values is not None and (
            typing.get_origin(current) in (dict, Mapping) or not _models_in(current)
        ):
            current = values
        elif len(_models_in(current)) < 2:  # not a union's tag: the walk is lost
            return []
    return sorted(
        {info.alias or name for m in _models_in(current) for name, info in m.model_fields.items()}
    )


def suggestion(model: type[BaseModel] | None, loc: Sequence[int | str]) -> str:
    """``; did you mean 'max'?`` for the unknown key at the end of ``loc``, else the keys
    accepted there (``; expected one of: for, max, severity``), else ``""``."""
    if model is None or not loc or not isinstance(loc[-1], str):
        return ""
    keys = known_keys(model, loc[:-1])
    near = difflib.get_close_matches(loc[-1], keys, n=1, cutoff=CUTOFF)
    if not near:  # maxUsage for max, timeout for timeoutSeconds: one key starts the other
        unknown = loc[-1].lower()
        near = sorted(
            (
                k
                for k in keys
                if len(k) >= 3 and (unknown.startswith(k.lower()) or k.lower().startswith(unknown))
            ),
            key=lambda k: (-len(k), k),
        )
    if near:
        return f"; did you mean {near[0]!r}?"
    if not keys:
        return ""
    shown = ", ".join(keys[:SHOWN_KEYS]) + (", …" if len(keys) > SHOWN_KEYS else "")
    return f"; expected one of: {shown}"


def value_suggestion(given: Any, expected: str) -> str:
    """``; did you mean 'sidecar'?`` for a value outside a fixed set (pydantic's
    ``literal_error``, whose ``expected`` reads ``'none', 'sidecar' or 'dcgm'``), else ``""``:
    the value in another case, else the nearest by :func:`difflib.get_close_matches`."""
    if not isinstance(given, str) or not given:
        return ""
    choices = [c for c in _QUOTED.findall(expected) if c]
    same_case = [c for c in choices if c.lower() == given.lower()]
    near = same_case or difflib.get_close_matches(given, choices, n=1, cutoff=CUTOFF)
    return f"; did you mean {near[0]!r}?" if near else ""


def is_number_text(given: Any) -> bool:
    """Whether ``given`` is text that reads as a finite number (``"99"``, ``"0.02"``): a
    number written in quotes, which a strict number field refuses."""
    if not isinstance(given, str) or len(given) > 40:
        return False
    try:
        return math.isfinite(float(given))
    except ValueError:
        return False
