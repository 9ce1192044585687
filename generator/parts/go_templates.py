"""Prometheus' Go templates as the generated promtool tests expect them rendered.

:func:`render_template` renders an alert annotation for the constructs obsgen's templates use
(``$labels.x``, ``$value``, ``humanizePercentage``, ``humanizeDuration``, ``{{ if $labels.x }}``)
and raises on anything else, so an expectation can never silently differ from Prometheus.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from generator.promql import go_float


def go_g4(value: float) -> str:
    """Go's ``%.4g`` (as used by Prometheus' humanize functions)."""
    text = f"{value:.4g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        sign = exponent[0]
        digits = exponent[1:].lstrip("0").rjust(2, "0")
        text = f"{mantissa}e{sign}{digits}"
    return text


def humanize(value: float) -> str:
    """Prometheus ``humanize`` (template/template.go, v3.16.0): SI prefixes, 4 significant
    digits: ``150`` → ``150``, ``1234567`` → ``1.235M``, ``0.0123`` → ``12.3m``."""
    if value == 0 or math.isnan(value) or math.isinf(value):
        return go_g4(value)
    prefix = ""
    if abs(value) >= 1:
        for p in ("k", "M", "G", "T", "P", "E", "Z", "Y"):
            if abs(value) < 1000:
                break
            prefix, value = p, value / 1000
        return f"{go_g4(value)}{prefix}"
    for p in ("m", "u", "n", "p", "f", "a", "z", "y"):
        if abs(value) >= 1:
            break
        prefix, value = p, value * 1000
    return f"{go_g4(value)}{prefix}"


def humanize_percentage(value: float) -> str:
    """Prometheus ``humanizePercentage``: ``0.2`` → ``20%``."""
    return go_g4(value * 100) + "%"


def humanize_duration(seconds: float) -> str:
    """Prometheus ``humanizeDuration`` for values ≥ 1 s or 0 (enough for the tests here)."""
    if seconds == 0:
        return "0s"
    if abs(seconds) < 1:
        raise ValueError("sub-second humanizeDuration is not needed by the generated tests")
    whole = int(abs(seconds))
    days, hours, minutes, secs = whole // 86400, whole // 3600 % 24, whole // 60 % 60, whole % 60
    prefix = "-" if seconds < 0 else ""
    if days:
        return f"{prefix}{days}d {hours}h {minutes}m {secs}s"
    if hours:
        return f"{prefix}{hours}h {minutes}m {secs}s"
    if minutes:
        return f"{prefix}{minutes}m {secs}s"
    return f"{prefix}{go_g4(abs(seconds))}s"


_TEMPLATE = re.compile(r"\{\{\s*(.*?)\s*\}\}")
# {{ if $labels.x }}A{{ else }}B{{ end }} (no nesting): A when the label is non-empty.
_IF_LABEL = re.compile(
    r"\{\{\s*if\s+\$labels\.(\w+)\s*\}\}(.*?)(?:\{\{\s*else\s*\}\}(.*?))?\{\{\s*end\s*\}\}", re.S
)


def render_template(text: str, labels: Mapping[str, str], value: float | None) -> str:
    """Render an alert annotation the way Prometheus would, for the constructs obsgen uses.

    Raises:
        ValueError: a construct other than ``$labels.x``, ``$value`` (optionally piped to
            ``humanize``, ``humanizePercentage`` or ``humanizeDuration``), ``{{ if $labels.x }}…{{ else
            }}…{{ end }}``, or ``$value`` without a value.
    """
    text = _IF_LABEL.sub(lambda m: m.group(2) if labels.get(m.group(1)) else m.group(3) or "", text)

    def one(match: re.Match[str]) -> str:
        expr = match.group(1)
        if expr.startswith("$labels."):
            return labels.get(expr[len("$labels.") :], "")
        parts = [p.strip() for p in expr.split("|")]
        if parts[0] != "$value" or value is None or len(parts) > 2:
            raise ValueError(f"cannot render template {{{{ {expr} }}}} in a generated test")
        if len(parts) == 1:
            return go_float(value)
        if parts[1] == "humanize":
            return humanize(value)
        if parts[1] == "humanizePercentage":
            return humanize_percentage(value)
        if parts[1] == "humanizeDuration":
            return humanize_duration(value)
        raise ValueError(f"unknown template function {parts[1]!r}")

    return _TEMPLATE.sub(one, text)
