"""Services that differ only by name are built once per shape, then renamed.

A fleet is mostly copies: the same server, metrics, SLOs and alerts under another service
name (``chat-0001`` … ``chat-0999``), each from its own spec file. A service's own files are a
textual function of its name and spec path: every place either reaches holds it whole (a label
value, a Kubernetes name, a header comment), or, for the dashboard uid, a hash of it. So the
files of ``chat-0042`` are those of a *stand-in* service with the stand-in strings replaced by
the real ones and the stand-in's dashboard uid by the real uid. Renaming a megabyte of text
costs milliseconds; building it costs about 150 ms (mostly promtool test generation).

The assumption is checked, never trusted:

- A *shape* is the plan with the name and spec path replaced by stand-ins that have the same
  length and the same character classes at each position (letters, digits, punctuation), so
  that any length-dependent step (a uid's readable part cut to fit, YAML line folding) cuts or
  folds the stand-in where it would cut or fold the real name.
- Each shape is built twice, under two different stand-ins ("low": ``a``/``0`` letters and
  digits, sorting before the real strings; "high": ``z``/``9``, sorting after), and used only
  when renaming the first build gives the second byte for byte. A builder that sorts, hashes,
  truncates, escapes or case-folds the name differently from plain text fails that check.
- A service is renamed only when its name is one that no step can read differently from the
  stand-ins: a lowercase DNS label starting with a letter, which YAML reads as a string
  (not ``true``, ``null`` or ``off``), and which the built text does not already contain.
  The name may appear only where a builder treats it as an opaque string: the service name,
  equality label matchers (``job="chat-0042"``, never inside a regular expression), the
  deployment and container names, pod-label values and diagnostics. Anywhere else (a metric
  or label name, an SLO name, a regular expression), the service is built in full.

Anything that fails a check is built in full, so the output is always what a full build gives;
``tests/test_shapes.py`` compares the two over generated names and specs.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, TypeVar

import yaml

from generator import naming
from generator.errors import Diagnostic, ObsgenError
from generator.plan import ServicePlan
from generator.presets import Preset
from generator.promql import Matcher

T = TypeVar("T")
Outputs = dict[str, str]
ServiceFiles = tuple[Outputs, list[Diagnostic]]
Build = Callable[[ServicePlan], ServiceFiles]

_NAME = re.compile(r"[a-z][a-z0-9-]*[a-z0-9]\Z")
# The characters of a spec path (and of a name): a whole path matches, a text holds runs.
_RUN = re.compile(r"[A-Za-z0-9._/-]+")
# Where a name may stand in a plan: fields and values the builders copy as opaque text.
_OPAQUE = re.compile(
    r"""(
        \.(name|source|deployment_name|container)
      | .*(matchers|denominator)\[\d+\]\.value
      | \.install\.pod_labels\[\d+\]\[1\]
      | \.warnings\[\d+\]\.(file|message)
    )\Z""",
    re.VERBOSE,
)
_STR_TAG = "tag:yaml.org,2002:str"
_RESOLVER = yaml.resolver.Resolver()


def plain_yaml(text: str) -> bool:
    """True when YAML reads ``text``, unquoted, as a string (``off`` or ``1e3`` it does not)."""
    tag: str = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    return tag == _STR_TAG


def stand_in(real: str, letter: str, digit: str) -> str:
    """``real`` with every ASCII letter replaced by ``letter`` and every digit by ``digit``:
    the same length and character classes at every position (``o1-preview`` with ``a``/``0``
    gives ``a0-aaaaaaa``)."""
    out = []
    for char in real:
        if char.isascii() and char.isalpha():
            out.append(letter)
        elif char.isascii() and char.isdigit():
            out.append(digit)
        else:
            out.append(char)
    return "".join(out)


# A shape costs two builds (one per stand-in): worth it from three services on.
SHARED_FROM = 3

# Two stand-in alphabets: one sorting before every real string of its length, one after.
_LOW = ("a", "0")
_HIGH = ("z", "9")


@dataclass(frozen=True)
class _Identity:
    """The strings renamed between a service and its shape's stand-in, longest first."""

    name: str
    source: str
    uid: str

    def pairs_to(self, other: _Identity) -> list[tuple[str, str]]:
        return [(self.source, other.source), (self.uid, other.uid), (self.name, other.name)]


def _identity(plan: ServicePlan) -> _Identity:
    uid = naming.dashboard_uid(plan.name, plan.namespace, plan.cluster_label)
    return _Identity(plan.name, plan.source, uid)


def _rename_text(text: str, pairs: list[tuple[str, str]]) -> str:
    for old, new in pairs:
        if old != new:
            text = text.replace(old, new)
    return text


_ATOMS = (int, float, bool, type(None), Fraction)
_KEPT = (*_ATOMS, Preset)  # a Preset is obsgen's own table: never the spec's words


def _path(where: list[Any]) -> str:
    """A field path from :func:`_rename_value`'s trail: field names, list indexes, dict keys."""
    parts = []
    for step in where:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        elif isinstance(step, tuple):
            parts.append(f"[{step[0]!r}]")
        else:
            parts.append(step)
    return "".join(parts)


def _rename_value(value: Any, pairs: list[tuple[str, str]], found: list[str]) -> Any:
    """``value`` (a plan or any part of it) with every string renamed; ``found`` receives the
    field path of each string that held an old string (a regex matcher's value as
    ``….regex``)."""
    where: list[Any] = []  # the trail to the current value, formatted only when needed
    texts: dict[str, str] = {}  # each string renamed once: keys and labels repeat

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            renamed = texts.get(value)
            if renamed is None:
                renamed = texts[value] = _rename_text(value, pairs)
            if renamed == value:
                return value
            found.append(_path(where))
            return renamed
        if isinstance(value, _KEPT):
            return value
        if isinstance(value, Matcher):
            where.append(".value" if value.op == "=" else ".regex")
            new_value = walk(value.value)
            where[-1] = ".label"
            new_label = walk(value.label)
            where.pop()
            if new_value is value.value and new_label is value.label:
                return value
            return Matcher(new_label, value.op, new_value)
        if isinstance(value, (tuple, list)):
            items = []
            for i, old in enumerate(value):
                if isinstance(old, _ATOMS):
                    items.append(old)
                    continue
                where.append(i)
                items.append(walk(old))
                where.pop()
            if all(new is old for new, old in zip(items, value, strict=True)):
                return value
            return type(value)(items)
        if isinstance(value, dict) or (
            isinstance(value, Mapping) and not dataclasses.is_dataclass(value)
        ):
            entries: dict[Any, Any] = {}
            for key, old in value.items():
                where.append("<key>")
                new_key = walk(key)
                where[-1] = (key,)
                entries[new_key] = walk(old)
                where.pop()
            return value if list(entries.items()) == list(value.items()) else entries
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            changes = {}
            for item in dataclasses.fields(value):
                if item.init:
                    old = getattr(value, item.name)
                    where.append(f".{item.name}")
                    new = walk(old)
                    where.pop()
                    if new is not old:
                        changes[item.name] = new
            return dataclasses.replace(value, **changes) if changes else value
        return value

    return walk(value)


def _renamed(value: Any, pairs: list[tuple[str, str]]) -> Any:
    """``_rename_value(value, pairs, [])``; a list of text-to-text mappings (alert labels,
    shared by 1,000 services) without the general walk, which cost ~1 ms per service."""
    if type(value) is list and all(
        type(item) is dict and all(type(k) is str and type(v) is str for k, v in item.items())
        for item in value
    ):
        distinct = {text for item in value for entry in item.items() for text in entry}
        texts = {text: _rename_text(text, pairs) for text in distinct}
        return [{texts[k]: texts[v] for k, v in item.items()} for item in value]
    return _rename_value(value, pairs, [])


def _recast(plan: ServicePlan, name: str, source: str) -> tuple[ServicePlan, list[str]]:
    """``plan`` as if its spec had said ``name`` wherever it says the service name, and
    lived at ``source``; with the paths of the fields that changed."""
    found: list[str] = []
    pairs = [(plan.source, source), (plan.name, name)]
    recast = _rename_value(plan, pairs, found)
    return recast, found


@dataclass
class _Shape:
    """One shape's build under the low stand-in, each file's text cut at the stand-in's
    strings (:meth:`renamed` joins the pieces around the real ones)."""

    identity: _Identity
    outputs: Outputs
    warnings: list[Diagnostic]
    pieces: dict[str, list[str]] = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        strings = sorted(self.identity.pairs_to(self.identity), key=lambda p: -len(p[0]))
        cut = re.compile("(" + "|".join(re.escape(old) for old, _ in strings) + ")")
        self.pieces = {rel: cut.split(text) for rel, text in self.outputs.items()}

    @functools.cached_property
    def runs(self) -> str:
        """Every distinct maximal run of :data:`_RUN`'s characters in the files' paths and
        texts, one per line. A name or spec path (both made of those characters only) is in
        some file exactly when it is in this text, which is a few percent of their size:
        :meth:`ShapeBuilder.outputs_and_shape` looks for each real service's strings in it."""
        found: set[str] = set()
        for rel, text in self.outputs.items():
            found.update(_RUN.findall(rel))
            found.update(_RUN.findall(text))
        return "\n".join(sorted(found))

    def renamed(self, real: _Identity) -> tuple[Outputs, list[Diagnostic]]:
        """The shape's files and warnings with the stand-in's strings replaced by ``real``'s."""
        pairs = self.identity.pairs_to(real)
        new = dict(pairs)
        files = {}
        for rel, pieces in self.pieces.items():
            joined = pieces.copy()
            joined[1::2] = [new[old] for old in pieces[1::2]]
            files[_rename_text(rel, pairs)] = "".join(joined)
        return files, _renamed_warnings(self.warnings, pairs)


def _renamed_warnings(warnings: list[Diagnostic], pairs: list[tuple[str, str]]) -> list[Diagnostic]:
    return [
        dataclasses.replace(
            w,
            file=_rename_text(w.file, pairs),
            path=_rename_text(w.path, pairs),
            message=_rename_text(w.message, pairs),
        )
        for w in warnings
    ]


def shape_key(plan: ServicePlan) -> str | None:
    """The shape of ``plan``: its plan under the low stand-in, as text (kept on the plan), or
    None when its name or spec path could read differently from a stand-in."""
    return plan.derive("shape", lambda: _shape_key(plan))


def _shape_key(plan: ServicePlan) -> str | None:
    if not (_NAME.match(plan.name) and _RUN.fullmatch(plan.source)):
        return None
    if not plain_yaml(plan.name):
        return None
    low, found = _recast(plan, stand_in(plan.name, *_LOW), stand_in(plan.source, *_LOW))
    if not all(_OPAQUE.match(path) for path in found):
        return None
    return repr(low)


def _stand_ins(plan: ServicePlan) -> tuple[ServicePlan, ServicePlan] | None:
    """``plan`` under the low and the high stand-in, or None when their identities are not
    three distinct strings each (nothing could tell the renamed strings apart)."""
    recast = []
    for letter, digit in (_LOW, _HIGH):
        name, source = stand_in(plan.name, letter, digit), stand_in(plan.source, letter, digit)
        recast.append(_recast(plan, name, source)[0])
    for stand in recast:
        identity = _identity(stand)
        if len({identity.name, identity.source, identity.uid}) != 3:
            return None
    return recast[0], recast[1]


def _clashes(stand: _Identity, real: _Identity, texts: Iterable[str]) -> bool:
    """Whether renaming ``stand`` to ``real`` could go wrong: a stand-in string inside a real
    one, or a real string already in the stand-in's ``texts``."""
    if any(s in real.source or s in real.uid for s in (stand.name, stand.uid)):
        return True
    return any(real.name in text or real.source in text for text in texts)


def _by_shape(plans: Sequence[ServicePlan]) -> dict[str, list[ServicePlan]]:
    """``plans`` by shape, keeping only shapes that :data:`SHARED_FROM` or more share."""
    groups: dict[str, list[ServicePlan]] = {}
    for plan in plans:
        key = shape_key(plan)
        if key is not None:
            groups.setdefault(key, []).append(plan)
    return {key: group for key, group in groups.items() if len(group) >= SHARED_FROM}


def share(plans: Sequence[ServicePlan], what: str, build: Callable[[ServicePlan], T]) -> None:
    """Keep ``build(plan)`` on every plan of ``plans`` (:meth:`ServicePlan.derive` key
    ``what``) that shares its shape with :data:`SHARED_FROM` or more others: computed once
    per shape for the two stand-ins, and renamed (every string in the value) when renaming
    the low one's value gives the high one's. Other plans are left alone, to be built when
    asked for."""
    for group in _by_shape(plans).values():
        if all(what in plan.derived for plan in group):
            continue  # shared already (render shares the alerts' labels before its builders ask)
        stands = _stand_ins(group[0])
        if stands is None:
            continue
        (low, high), values = stands, [build(stands[0]), build(stands[1])]
        low_id, high_id = _identity(low), _identity(high)
        if _rename_value(values[0], low_id.pairs_to(high_id), []) != values[1]:
            continue
        text = repr(values[0])
        for plan in group:
            real = _identity(plan)
            if what not in plan.derived and not _clashes(low_id, real, [text]):
                plan.derived[what] = _renamed(values[0], low_id.pairs_to(real))


def build_or_none(build: Build, plan: ServicePlan) -> ServiceFiles | None:
    """``build(plan)``, or None when it raises :class:`ObsgenError`."""
    try:
        return build(plan)
    except ObsgenError:
        return None


def _verified(
    low: ServicePlan,
    high: ServicePlan,
    low_built: ServiceFiles | None,
    high_built: ServiceFiles | None,
) -> _Shape | None:
    """The shape built under ``low``, when renaming its build gives ``high``'s exactly."""
    if low_built is None or high_built is None:
        return None
    shape = _Shape(_identity(low), *low_built)
    return shape if shape.renamed(_identity(high)) == high_built else None


class ShapeBuilder:
    """Builds services through ``build``, once per shape when several share one.

    ``build(plan)`` returns a service's own files (repository path → text) and its warnings;
    :meth:`outputs` returns the same for any plan, renamed from its shape's build when that
    is sound (see the module docstring), else from ``build`` itself.
    """

    def __init__(self, build: Build) -> None:
        self._build = build
        self._shapes: dict[str, _Shape | None] = {}
        self.renamed = 0
        """How many services :meth:`outputs` renamed rather than built (for benchmarks)."""

    def prepare(
        self,
        plans: Sequence[ServicePlan],
        build_all: Callable[[list[ServicePlan]], Iterable[ServiceFiles | None]] | None = None,
    ) -> None:
        """Build, once each, the shapes that :data:`SHARED_FROM` or more of ``plans`` share.
        ``build_all`` builds a list of plans in order, None for one that raised
        :class:`ObsgenError` (default: :func:`build_or_none` of ``build`` on each; a render
        passes its worker processes). A shape whose stand-in fails is not renamed: each of
        its services is built, and fails, under its own name."""
        pending: dict[str, tuple[ServicePlan, ServicePlan]] = {}
        for key, group in _by_shape(plans).items():
            if key not in self._shapes:
                stands = _stand_ins(group[0])
                if stands is None:
                    self._shapes[key] = None
                else:
                    pending[key] = stands
        todo = [plan for stands in pending.values() for plan in stands]
        if build_all is None:
            built = iter([build_or_none(self._build, plan) for plan in todo])
        else:
            built = iter(list(build_all(todo)))
        for key, (low, high) in pending.items():
            self._shapes[key] = _verified(low, high, next(built), next(built))

    def outputs(self, plan: ServicePlan) -> tuple[Outputs, list[Diagnostic]]:
        """``plan``'s own files and warnings: renamed from its shape's build when
        :meth:`prepare` built one that renames soundly, else built."""
        files, warnings, _ = self.outputs_and_shape(plan)
        return files, warnings

    def outputs_and_shape(self, plan: ServicePlan) -> tuple[Outputs, list[Diagnostic], str | None]:
        """:meth:`outputs`, and the shape they were renamed from (None: built in full)."""
        key = shape_key(plan)
        shape = self._shapes.get(key) if key is not None else None
        if key is not None and shape is not None:
            real = _identity(plan)
            if not _clashes(shape.identity, real, [shape.runs]):
                self.renamed += 1
                files, warnings = shape.renamed(real)
                return files, warnings, key
        files, warnings = self._build(plan)
        return files, warnings, None
