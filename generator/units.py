"""Durations, memory sizes and numbers as the spec writes them and as PromQL needs them.

Durations use Prometheus's syntax (``500ms``, ``10m``, ``1h30m``, ``30d``; units ms, s, m, h,
d, w, y with y = 365d) and are held as whole milliseconds so arithmetic stays exact.
Memory sizes use Kubernetes quantities (``32Gi``, ``512Mi``, ``1G``) and are held as bytes.
"""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction

_UNIT_MS = {
    "y": 365 * 86_400_000,
    "w": 7 * 86_400_000,
    "d": 86_400_000,
    "h": 3_600_000,
    "m": 60_000,
    "s": 1_000,
    "ms": 1,
}
_DURATION = re.compile(
    r"^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$"
)
_MEMORY = re.compile(r"^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$")
_MEMORY_FACTOR = {
    None: 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
}


def parse_duration_ms(text: str, zero: bool = False) -> int:
    """Parse a Prometheus duration into milliseconds.

    Args:
        text: e.g. ``"500ms"``, ``"10m"``, ``"1h30m"``, ``"30d"``; units in descending order.
        zero: accept a zero duration (``"0s"``, and ``"0"`` as Prometheus writes it), as
            promtool's ``eval_time`` does.

    Returns:
        The duration in whole milliseconds (> 0, or >= 0 with ``zero``).

    Raises:
        ValueError: not a Prometheus duration, or zero (without ``zero``).
    """
    if zero and text == "0":
        return 0
    match = _DURATION.match(text) if text else None
    if match is None:
        raise ValueError(f"{text!r} is not a duration; expected e.g. 500ms, 30s, 10m, 1h30m, 30d")
    total = sum(
        int(value) * _UNIT_MS[unit]
        for value, unit in zip(match.groups(), ("y", "w", "d", "h", "m", "s", "ms"), strict=True)
        if value
    )
    if total == 0 and not zero:
        raise ValueError(f"{text!r} is zero; expected a positive duration")
    return total


def format_duration_ms(ms: int) -> str:
    """Format milliseconds as the shortest Prometheus duration (``3600000`` → ``"1h"``).

    Days are the largest unit used (``30d``, not ``4w2d``), matching how SLO windows are written.
    """
    if ms <= 0:
        raise ValueError(f"duration must be positive, got {ms} ms")
    parts = []
    for unit in ("d", "h", "m", "s", "ms"):
        size = _UNIT_MS[unit]
        if ms >= size:
            count, ms = divmod(ms, size)
            parts.append(f"{count}{unit}")
    return "".join(parts)


def seconds_text(seconds: Fraction | float) -> str:
    """A duration for people: ``51.84s``, ``8m38.4s``, ``1h``, ``0s``, with at most 2 decimals."""
    total = round(float(seconds), 2)
    whole = int(total)
    rest = round(total - whole, 2)
    text = format_duration_ms(whole * 1000) if whole else ""
    if rest:
        if text.endswith("s") and not text.endswith("ms"):
            head, _, secs = text.rpartition("m") if "m" in text else ("", "", text)
            secs_value = float(secs.rstrip("s")) + rest
            text = (f"{head}m" if head else "") + f"{decimal_str(secs_value)}s"
        else:
            text += f"{decimal_str(rest)}s"
    return text or "0s"


def parse_memory_bytes(text: str | int) -> int:
    """Parse a Kubernetes memory quantity (``"32Gi"``, ``"512Mi"``, ``"1G"``, or bytes) into bytes.

    Raises:
        ValueError: not a quantity, or not positive.
    """
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        match = _MEMORY.match(str(text))
        if match is None:
            raise ValueError(f"{text!r} is not a memory size; expected e.g. 32Gi, 512Mi, 8G")
        value = int(Decimal(match.group(1)) * _MEMORY_FACTOR[match.group(2)])
    if value <= 0:
        raise ValueError(f"{text!r} must be positive")
    return value


def decimal_str(value: float | Fraction | Decimal) -> str:
    """Write a number as a short decimal for PromQL and YAML: ``0.001``, never float noise.

    Rounds to 12 significant digits, which removes binary noise such as
    ``0.0009999999999999432`` while keeping every value a spec can express.
    """
    number = Decimal(str(float(value))) if not isinstance(value, Decimal) else value
    rounded = Decimal(format(number, ".12g"))
    text = format(rounded.normalize(), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text if text not in ("-0", "") else "0"


# Time units a latency histogram can be in: seconds per unit.
TIME_UNITS = {"seconds": 1.0, "milliseconds": 0.001, "microseconds": 1e-6, "nanoseconds": 1e-9}
# Name suffixes that say a metric's time unit (Prometheus naming: the unit is the last word).
_UNIT_SUFFIXES = (
    ("_seconds", "seconds"),
    ("_milliseconds", "milliseconds"),
    ("_ms", "milliseconds"),
    ("_microseconds", "microseconds"),
    ("_us", "microseconds"),
    ("_nanoseconds", "nanoseconds"),
    ("_ns", "nanoseconds"),
)


def unit_from_name(name: str) -> str | None:
    """The time unit a metric's name ends with (``istio_request_duration_milliseconds`` →
    ``"milliseconds"``, ``…_ms`` likewise), or None when its name says none.

    Only the last word counts, so ``http_seconds_total_ms`` is milliseconds; a ``vllm:`` colon
    prefix is ignored like any other part of the name.
    """
    for suffix, unit in _UNIT_SUFFIXES:
        if name.endswith(suffix):
            return unit
    return None


def unit_of(seconds_per_unit: float) -> str:
    """The name of a time unit (``"milliseconds"`` for 0.001), or ``"<x> s"`` when unnamed."""
    for unit, value in TIME_UNITS.items():
        if abs(value - seconds_per_unit) <= 1e-12 * value:
            return unit
    return f"{decimal_str(seconds_per_unit)} s"
