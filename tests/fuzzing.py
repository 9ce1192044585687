"""Shared pieces of the property-based (hypothesis) fuzz tests: budgets and hostile values.

Budgets: ``make test`` runs every fuzz test with a few dozen examples (seconds in all);
``make fuzz`` sets ``OBSGEN_FUZZ_SCALE`` (default there: 40) to multiply them, and draws new
random examples each run instead of the fixed (derandomized) ones of ``make test``.
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

SCALE = max(1, int(os.environ.get("OBSGEN_FUZZ_SCALE", "1")))
FUZZING = SCALE > 1


def budget(examples: int) -> Any:
    """``@settings`` for a fuzz test: ``examples`` × :data:`SCALE` examples, no per-example
    deadline (promtool is slow on a busy machine), reproducible under ``make test``."""
    return settings(
        max_examples=examples * SCALE,
        deadline=None,
        derandomize=not FUZZING,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,  # most hostile specs are refused: that is the point
            HealthCheck.function_scoped_fixture,  # capsys is read and reset per example
        ],
    )


# --- hostile values ----------------------------------------------------------------------------

EDGE_NUMBERS = [
    0,
    -1,
    1,
    0.5,
    1e-300,
    5e-324,
    1e-9,
    0.999999,
    0.9999999999999,
    1e308,
    99.9999,
    99.99999999999999,
    2**53 + 1,
    2**63,
    10**19,
    10**300,
]
EDGE_TEXT = [
    "",
    " ",
    "é",
    "日本",
    '"',
    "\\",
    "'",
    "{{ $labels.x }}",
    "${var}",
    "$",
    "\x1b[31m",
    "\n",
    "\t",
    "\x00",
    "\u200b",
    "a" * 300,
    "a" * 5000,
    '} or vector(1) or up{x="',
    "<script>",
    "-",
    "0",
]
LABEL_NAMES = [
    "le",
    "quantile",
    "instance",
    "pod",
    "container",
    "service",
    "alertname",
    "severity",
    "team",
    "slo",
    "job",
    "namespace",
    "model_name",
    "status",
    "code",
    "__name__",
    "threshold",
    "uuid",
    "0bad",
    "x-y",
    "a" * 200,
]
REGEX_PARTS = [
    "5..",
    "5",
    ".",
    ".*",
    ".+",
    "(?=5)",
    "(?!5)",
    "\\1",
    "(5)",
    "[[:digit:]]",
    "[^2]",
    "\\d",
    "\\z",
    "\\pN",
    "\\C",
    "(?i)",
    "(?P<n>x)",
    "(?<n>x)",
    "a{1001}",
    "a{2,3}",
    "|",
    "(",
    ")",
    "[",
    "é",
    "\\.",
    "^",
    "$",
    "err(or)?",
    "\\x00",
]
DURATION_UNITS = ["ms", "s", "m", "h", "d", "w", "y", "", "x"]


def numbers() -> st.SearchStrategy[Any]:
    """Numbers at and around the edges: tiny, huge, negative, precise, integral."""
    return st.one_of(
        st.sampled_from(EDGE_NUMBERS),
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(min_value=-(10**25), max_value=10**25),
        st.floats(min_value=0, max_value=100),
    )


def texts() -> st.SearchStrategy[str]:
    """Strings with quotes, escapes, control characters, template syntax, any language."""
    return st.one_of(st.sampled_from(EDGE_TEXT), st.text(max_size=40))


def durations() -> st.SearchStrategy[Any]:
    """Duration texts, well- and ill-formed, from 0 to far beyond 10y."""
    one = st.builds(
        lambda n, u: f"{n}{u}",
        st.one_of(st.integers(0, 120), st.integers(0, 10**15), st.just("1.5")),
        st.sampled_from(DURATION_UNITS),
    )
    return st.one_of(one, st.lists(one, min_size=2, max_size=3).map("".join), numbers())


def regexes() -> st.SearchStrategy[str]:
    """Regexes built from RE2, Python-only and invalid constructs."""
    return st.lists(st.sampled_from(REGEX_PARTS), min_size=1, max_size=4).map("".join)


def label_names() -> st.SearchStrategy[str]:
    """Label names obsgen reserves, ordinary ones and invalid ones."""
    return st.one_of(
        st.sampled_from(LABEL_NAMES), st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
    )


def label_maps(values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Label maps of 0–20 entries with ``values``."""
    return st.dictionaries(label_names(), values, max_size=20)


def anything() -> st.SearchStrategy[Any]:
    """Any YAML-representable value, wrong types included."""
    scalars = st.one_of(st.none(), st.booleans(), numbers(), texts(), durations())
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=8,
    )
