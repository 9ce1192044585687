"""What the declared Prometheus target can load: ``spec.prometheus.version`` as a release floor.

``version`` is ``"2"``, ``"3"``, ``"compat"`` (rules that load on both majors) or a release line
(``"2.53"``, ``"3.5"``). Rule-file fields newer than Prometheus 2.0 are written only when the
declared floor has them (:data:`FEATURES`); a spec asking for one on an older floor is refused at
``check`` with the field that asks. Sources: Prometheus' CHANGELOG (``keep_firing_for`` 2.42.0,
rule-group ``query_offset`` 2.53.0) and prometheus-operator's (PrometheusRule fields: 0.66.0 and
0.78.0). Histogram forms (:func:`histogram_problem`): native histograms from Prometheus 2.40.0
behind ``--enable-feature=native-histograms`` (docs/specs/native_histograms.md; stable in 3.8,
``scrape_native_histograms``), NHCB (``convert_classic_histograms_to_nhcb``) in Prometheus 3 only.
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
    match = _RELEASE.fullmatch(text)
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


NATIVE_HISTOGRAMS = (2, 40)
"""The first Prometheus release that stores native histograms (behind a feature flag in 2.x)."""


def histogram_problem(form: str, version: str) -> tuple[str | None, str | None]:
    """``(error, warning)`` of a histogram stored in ``form`` (``spec.metrics.<key>.histogram``)
    on the declared Prometheus ``version``; both None where it loads, and always on ``compat``
    and Prometheus 3 (the generated tests need promtool 3 there anyway)."""
    major, floor = parse(version)
    if major != "2":
        return None, None
    if form == "nhcb":
        return (
            "nhcb (native histograms with custom buckets, from a classic exposition by "
            "convert_classic_histograms_to_nhcb) is Prometheus 3 only, and spec.prometheus.version "
            f'declares {version!r}; declare "3" (or a 3.x line), or read the histogram as '
            "classic",
            None,
        )
    if form not in ("native", "both"):
        return None, None
    if floor < NATIVE_HISTOGRAMS:
        return (
            f"{form} reads native histograms, which Prometheus stores from "
            f"{shown(NATIVE_HISTOGRAMS)} on (with --enable-feature=native-histograms), and "
            f"spec.prometheus.version declares {version!r}; declare the oldest release you run "
            f'(2.40 or later, e.g. "2.53", or "3"), or read the histogram as classic',
            None,
        )
    return None, (
        f"{form} reads native histograms: Prometheus {version} stores them only when started "
        "with --enable-feature=native-histograms (and scrapes them over protobuf); without it "
        "the latency rules read nothing"
    )
