"""Size limits of the install paths obsgen documents, measured the way each path measures.

Each limit, where it comes from and how it is measured: docs/install.md, "Install size
limits".
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from typing import Any

LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
ANNOTATIONS_LIMIT = 262_144
CONFIGMAP_DATA_LIMIT = 1_048_576
HELM_RELEASE_LIMIT = 1_048_576
HELM_OVERLAY_BUDGET = 262_144

# Go's encoding/json escapes these (HTML safety, and the JavaScript line separators).
_GO_ESCAPED_EXTRA = {"<": 5, ">": 5, "&": 5, "\u2028": 3, "\u2029": 3}


# Turns a value JSON cannot encode into one it can (``json``'s ``default`` hook), e.g. rule
# groups already serialised as YAML back into their lists.
Default = Callable[[Any], Any] | None


def go_json_bytes(obj: Any, default: Default = None) -> int:
    """Bytes of ``obj`` as Go's ``json.Encoder`` writes it (compact, HTML-escaped, UTF-8,
    trailing newline), for JSON made of strings, integers, booleans, null, lists and maps."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=default)
    extra = sum(text.count(char) * more for char, more in _GO_ESCAPED_EXTRA.items())
    return len(text.encode("utf-8")) + extra + 1


def client_side_apply_bytes(obj: dict[str, Any], default: Default = None) -> int:
    """Annotation bytes of ``obj`` after a client-side ``kubectl apply``: its own annotations
    plus the last-applied copy (key and value). Compare with :data:`ANNOTATIONS_LIMIT`."""
    annotations = obj.get("metadata", {}).get("annotations", {}) or {}
    own = sum(len(k.encode()) + len(str(v).encode()) for k, v in annotations.items())
    return own + len(LAST_APPLIED_ANNOTATION) + go_json_bytes(obj, default)


def configmap_data_bytes(configmap: dict[str, Any]) -> int:
    """Bytes the API server counts against :data:`CONFIGMAP_DATA_LIMIT` (the values of
    ``data``; obsgen writes no ``binaryData``)."""
    return sum(len(v.encode("utf-8")) for v in configmap.get("data", {}).values())


def helm_release_share(values: Any, default: Default = None, above: int | None = None) -> int:
    """Estimated bytes the overlay ``values`` add to each Helm release Secret: the values and,
    about as large, the objects rendered from them, as JSON, gzip-compressed (level 9, as
    Helm's ``gzip.BestCompression``) and base64-encoded (4/3).

    With ``above``, compression stops as soon as the estimate exceeds it, and the figure so
    far (a lower bound, already over ``above``) is returned: a fleet's all-services values
    are tens of megabytes, and only whether they fit matters.
    """
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=default).encode
    gzipped = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # gzip framing

    def share(compressed: int) -> int:
        return (2 * compressed * 4 + 2) // 3

    size = 0
    for chunk in _compact_chunks(values, encode, default, _SPLIT_DEPTH):
        size += len(gzipped.compress(chunk.encode("utf-8")))
        if above is not None and share(size) > above:
            return share(size)
    return share(size + len(gzipped.flush()))


# Containers this deep are cut into their items (a fleet's values: one service's rules a
# piece); below, each value is encoded whole, by json's C encoder.
_SPLIT_DEPTH = 3
_SCALARS = (str, int, float, bool, type(None))


def _compact_chunks(value: Any, encode: Callable[[Any], str], default: Default, depth: int) -> Any:
    """Pieces whose concatenation is ``encode(value)`` (compact JSON): mappings and lists
    ``depth`` levels down are cut into their items; a value ``default`` turns into JSON is
    turned first."""
    if default is not None and not isinstance(value, (dict, list, *_SCALARS)):
        value = default(value)
    if depth == 0 or not value or not isinstance(value, (dict, list)):
        yield encode(value)
    elif isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            yield encode(value)  # json's own spelling of other keys
            return
        sep = "{"
        for key, item in value.items():
            yield sep + encode(key) + ":"
            yield from _compact_chunks(item, encode, default, depth - 1)
            sep = ","
        yield "}"
    else:
        sep = "["
        for item in value:
            yield sep
            yield from _compact_chunks(item, encode, default, depth - 1)
            sep = ","
        yield "]"
