"""What the declared Prometheus target can load: ``spec.prometheus.version`` as a release floor.

``version`` is ``"2"``, ``"3"``, ``"compat"`` (rules that load on both majors) or a release line
(``"2.53"``, ``"3.5"``). Rule-file fields newer than Prometheus 2.0 are written only when the
declared floor has them (:data:`FEATURES`); a spec asking for one on an older floor is refused at
``check`` with the field that asks. Sources: Prometheus' CHANGELOG (``keep_firing_for`` 2.42.0,
rule-group ``query_offset`` 2.53.0) and prometheus-operator's (PrometheusRule fields: 0.66.0 and
0.78.0).
"""

from __future__ import annotations

import re

COMPAT = "compat"
_RELEASE = re.compile(r"^(?P<major>[23])(?:\.(?P<minor>\d{1,3}))?$")
EXPECTED = '"2", "3", "compat", or a release line such as "2.53" or "3.5"'

KEEP_FIRING_FOR = "keep_firing_for"
QUERY_OFFSET = "query_offset"
FEATURES: dict[str, tuple[int, int]] = {KEEP_FIRING_FOR: (2, 42), QUERY_OFFSET: (2, 53)}
"""Rule-file field → the first Prometheus release that loads it."""
OPERATOR: dict[str, str] = {KEEP_FIRING_FOR: "0.66", QUERY_OFFSET: "0.78"}
"""Rule-file field → the first prometheus-operator release whose PrometheusRule declares it."""


def parse(text: str) -> tuple[str, tuple[int, int]]:
    """``(major, floor)`` of a declared version: ``"2.53"`` → ``("2", (2, 53))``; ``"3"`` →
    ``("3", (3, 0))``; ``"compat"`` → ``("compat", (2, 0))`` (any Prometheus 2 or 3).

    Raises:
        ValueError: not one of :data:`EXPECTED`.
    """
    if text == COMPAT:
        return COMPAT, (2, 0)
    match = _RELEASE.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a Prometheus version; expected {EXPECTED}")
    major = int(match["major"])
    return str(major), (major, int(match["minor"] or 0))


def shown(floor: tuple[int, int]) -> str:
    """``(2, 53)`` → ``2.53``."""
    return f"{floor[0]}.{floor[1]}"


def missing(feature: str, floor: tuple[int, int]) -> str | None:
    """Why a target whose oldest Prometheus is ``floor`` cannot load ``feature``, or None."""
    needed = FEATURES[feature]
    if floor >= needed:
        return None
    return (
        f"`{feature}` needs Prometheus {shown(needed)} or later (prometheus-operator "
        f"{OPERATOR[feature]} or later for PrometheusRule), and spec.prometheus.version declares "
        f"{'a Prometheus 2 of any release' if floor[1] == 0 and floor[0] == 2 else shown(floor)}; "
        f'declare the oldest release you run, e.g. spec.prometheus.version: "{shown(needed)}" '
        'or "3"'
    )
