"""Server presets: metric names, label names and bucket lists per model server and version.

Presets are data. Each server module defines :data:`PRESETS` entries keyed by the first
server version they apply to; :func:`get_preset` picks the newest entry not newer than the
spec's ``serverVersion`` (or the newest entry when none is given). Sources are cited in each
module. Bucket bounds are in the metric's own unit (``seconds_per_unit`` converts).
"""

from __future__ import annotations

from generator.presets import openai_http, tgi, triton, vllm
from generator.presets.model import GaugeDef, HistogramDef, MeanLatencyDef, Preset, RequestsDef

__all__ = [
    "PRESETS",
    "GaugeDef",
    "HistogramDef",
    "MeanLatencyDef",
    "Preset",
    "RequestsDef",
    "get_preset",
]


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


PRESETS: dict[str, list[Preset]] = {
    "openai-http": openai_http.PRESETS,
    "tgi": tgi.PRESETS,
    "triton": triton.PRESETS,
    "vllm": vllm.PRESETS,
}


def get_preset(server: str, version: str | None) -> Preset:
    """Return the preset of ``server`` that applies to ``version``.

    Raises:
        KeyError: no preset for that server.
        LookupError: ``version`` is older than every preset entry of that server.
    """
    entries = sorted(PRESETS[server], key=lambda p: _version_key(p.since_version))
    if version is None:
        return entries[-1]
    chosen = [p for p in entries if _version_key(p.since_version) <= _version_key(version)]
    if not chosen:
        raise LookupError(
            f"no {server} preset for version {version}; the oldest supported is {entries[0].since_version}"
        )
    return chosen[-1]
