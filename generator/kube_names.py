"""Kubernetes' syntax for the names and label values obsgen writes into manifests.

Each check returns why a value breaks the rule the API server applies to that field, or None.
Source: k8s.io/apimachinery, pkg/util/validation/validation.go (IsDNS1123Label,
IsDNS1123Subdomain, IsQualifiedName, IsValidLabelValue, IsValidPortName). Which spec field
lands in which manifest field: docs/spec.md, "Kubernetes names".
"""

from __future__ import annotations

import re

LABEL_MAX = 63  # a DNS-1123 label, a label value, the name part of a label key
SUBDOMAIN_MAX = 253  # a DNS-1123 subdomain (object names, label key prefixes)
PORT_NAME_MAX = 15  # IANA_SVC_NAME (RFC 6335)

LABEL_EXPECTED = (
    "a DNS-1123 label: at most 63 of a-z, 0-9 and '-', starting and ending with a letter or "
    "digit (e.g. llm-serving)"
)
SUBDOMAIN_EXPECTED = (
    "a DNS-1123 subdomain: at most 253 characters, DNS-1123 labels joined by '.' (e.g. example.com)"
)
LABEL_VALUE_EXPECTED = (
    "a Kubernetes label value: at most 63 of A-Z, a-z, 0-9, '-', '_' and '.', starting and "
    "ending with a letter or digit, or empty"
)
LABEL_KEY_EXPECTED = (
    "a Kubernetes label key: [prefix/]name, the prefix a DNS-1123 subdomain, the name at most "
    "63 of A-Z, a-z, 0-9, '-', '_' and '.', starting and ending with a letter or digit "
    "(e.g. app.kubernetes.io/name)"
)
PORT_NAME_EXPECTED = (
    "a container port name: at most 15 of a-z, 0-9 and '-', at least one letter, no '--', "
    "not starting or ending with '-' (e.g. metrics)"
)

_LABEL_CHARS = re.compile(r"[a-z0-9-]")
_VALUE_CHARS = re.compile(r"[A-Za-z0-9_.-]")
_PORT_CHARS = re.compile(r"[a-z0-9-]")
_ALNUM = re.compile(r"[A-Za-z0-9]")
_LOWER_ALNUM = re.compile(r"[a-z0-9]")


def _others(value: str, allowed: re.Pattern[str]) -> str | None:
    """``holds ';', ' '``: the first characters of ``value`` outside ``allowed``, or None."""
    bad: list[str] = []
    for char in value:
        if not allowed.fullmatch(char) and char not in bad:
            bad.append(char)
    if not bad:
        return None
    shown = ", ".join(repr(c) for c in bad[:5]) + (", …" if len(bad) > 5 else "")
    return f"holds {shown}"


def _ends(value: str, ends: re.Pattern[str]) -> str | None:
    if not ends.fullmatch(value[0]):
        return f"starts with {value[0]!r}"
    if not ends.fullmatch(value[-1]):
        return f"ends with {value[-1]!r}"
    return None


def _too_long(value: str, most: int) -> str | None:
    return f"{len(value)} characters, more than {most}" if len(value) > most else None


def dns1123_label(value: str) -> str | None:
    """Why ``value`` is not a DNS-1123 label (namespaces, container names, claim names)."""
    if not value:
        return "empty"
    return _too_long(value, LABEL_MAX) or _others(value, _LABEL_CHARS) or _ends(value, _LOWER_ALNUM)


def dns1123_subdomain(value: str) -> str | None:
    """Why ``value`` is not a DNS-1123 subdomain (object names, label key prefixes)."""
    if not value:
        return "empty"
    too_long = _too_long(value, SUBDOMAIN_MAX)
    if too_long:
        return too_long
    for part in value.split("."):
        if not part:
            return "an empty part between dots"
        why = _others(part, _LABEL_CHARS) or _ends(part, _LOWER_ALNUM)
        if why:
            return f"part {part!r} {why}"
    return None


def label_value(value: str) -> str | None:
    """Why ``value`` is not a Kubernetes label value (empty is one)."""
    if not value:
        return None
    return _too_long(value, LABEL_MAX) or _others(value, _VALUE_CHARS) or _ends(value, _ALNUM)


def label_key(key: str) -> str | None:
    """Why ``key`` is not a Kubernetes label key (``[prefix/]name``)."""
    prefix, slash, name = key.rpartition("/")
    if slash and "/" in prefix:
        return "more than one '/'"
    if slash:
        why = dns1123_subdomain(prefix)
        if why:
            return f"prefix {prefix!r}: {why}"
    if not name:
        return "an empty name"
    why = label_value(name)
    return f"name {name!r}: {why}" if why and slash else why


def port_name(value: str) -> str | None:
    """Why ``value`` is not a container port name (IANA_SVC_NAME)."""
    if not value:
        return "empty"
    return (
        _too_long(value, PORT_NAME_MAX)
        or _others(value, _PORT_CHARS)
        or (None if re.search(r"[a-z]", value) else "no letter")
        or ("holds '--'" if "--" in value else None)
        or _ends(value, _LOWER_ALNUM)
    )
