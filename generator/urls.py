"""The http(s) URLs a spec or ``receivers.yaml`` writes into alerts, manifests and configs.

:func:`problem` says why a value is not an absolute ``http(s)://host[:port][/path]`` URL that
every consumer reads the same way (Prometheus annotations, KEDA, prometheus-adapter,
Alertmanager, a browser), or returns None: printable ASCII only (a host in punycode, a path
percent-encoded, so no confusable letter or bidi control hides in it), no character a config,
template or shell reads specially, no ``user:password@``, a DNS or IP host, a port 1–65535.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
import urllib.parse
from collections.abc import Callable

MAX_URL_CHARS = 2048
_SPECIAL = frozenset("\"'<>{}\\`^|")  # quotes, template braces, escapes: RFC 3986 leaves them out
_DNS_LABEL = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")
_PORT = re.compile(r"^[0-9]{1,5}$")


def _shown_char(char: str) -> str:
    name = unicodedata.name(char, "")
    return f"{char!r} (U+{ord(char):04X}{' ' + name if name else ''})"


def _host_problem(host: str) -> str | None:
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host[1:-1] if host.endswith("]") else host[1:])
        except ValueError:
            return f"host {host!r} is not an IPv6 address in brackets"
        return None if host.endswith("]") else f"host {host!r} lacks its closing ']'"
    if not host:
        return "no host"
    if len(host) > 253:
        return f"a host of {len(host)} characters; expected at most 253"
    for label in host.removesuffix(".").split("."):
        if not _DNS_LABEL.fullmatch(label):
            return (
                f"host {host!r}: {label!r} is not a DNS label (letters, digits and '-', at most "
                "63, not starting or ending with '-')"
            )
    return None


def problem(value: str) -> str | None:
    """Why ``value`` is not a usable absolute http(s) URL (see the module), or None."""
    if len(value) > MAX_URL_CHARS:
        return f"a URL of {len(value)} characters; expected at most {MAX_URL_CHARS}"
    for char in value:
        if not char.isascii():
            return (
                f"holds {_shown_char(char)}; write a host in punycode (xn--…) and "
                "percent-encode the path"
            )
        if not char.isprintable() or char == " ":
            return f"holds a space or control character {char!r}"
        if char in _SPECIAL:
            return f"holds {char!r}, which a config, template or shell reads specially"
    scheme, sep, rest = value.partition("://")
    if not sep or scheme.lower() not in ("http", "https"):
        return "does not start with http:// or https://"
    authority = rest[: min([i for i in (rest.find(c) for c in "/?#") if i >= 0], default=len(rest))]
    if "@" in authority:
        return (
            "carries credentials (user:password@), which would be written into every rendered "
            "file that holds it"
        )
    host, port = authority, ""
    if host.startswith("["):
        close = host.find("]")
        host, port = (host, "") if close < 0 else (host[: close + 1], host[close + 1 :])
        if port and not port.startswith(":"):
            return f"{port!r} follows the IPv6 host; expected :port"
        port = port[1:]
    elif ":" in host:
        host, _, port = host.partition(":")
    why = _host_problem(host)
    if why is not None:
        return why
    has_port = ":" in authority.rpartition("]")[2]
    if has_port and not (_PORT.fullmatch(port) and 1 <= int(port) <= 65535):
        return f"port {port!r} is not a number from 1 to 65535"
    try:
        urllib.parse.urlsplit(value).port  # noqa: B018 - what consumers parse must parse here
    except ValueError as err:
        return str(err)
    return None


def checked(example: str) -> Callable[[str], str]:
    """A validator (for pydantic's ``AfterValidator``) refusing what :func:`problem` finds,
    the value shown cut to 80 characters and the expectation naming ``example``."""

    def check(value: str) -> str:
        why = problem(value)
        if why is not None:
            shown = repr(value) if len(value) <= 80 else repr(value[:79] + "…")
            raise ValueError(f"{shown} is not a URL ({why}); expected a URL such as {example}")
        return value

    return check
