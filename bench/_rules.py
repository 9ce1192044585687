"""Rule-file documents for promtool runs of the bench: pruned to the alerts a run asks about,
and the alerts promtool reports firing.

:func:`prune` keeps only some groups and alerts and the records they read (a promtool run then
evaluates no window nothing asks for); :func:`firing` reads ``promtool test rules`` output, in
which every ``alert_rule_test`` expecting no alert lists the alerts that did fire.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from generator.units import parse_duration_ms


def prune(
    doc: dict[str, Any],
    keep_group: Callable[[dict[str, Any]], bool],
    keep_alert: Callable[[dict[str, Any]], bool],
) -> dict[str, Any]:
    """``doc`` with only the groups ``keep_group`` accepts, each with only the alerts
    ``keep_alert`` accepts and the records those read, directly or not, in any kept group.
    Every rule kept is evaluated exactly as in the full file (a rule reads only the records it
    names); groups left empty are dropped, order is kept."""
    groups = [g for g in doc["groups"] if keep_group(g)]
    needed = " ".join(
        r["expr"] for g in groups for r in g["rules"] if "alert" in r and keep_alert(r)
    )
    kept: set[tuple[int, int]] = set()
    grew = True
    while grew:
        grew = False
        for gi, g in enumerate(groups):
            for ri, r in enumerate(g["rules"]):
                if "record" not in r or (gi, ri) in kept:
                    continue
                if re.search(re.escape(r["record"]) + r"(?![\w:])", needed):
                    kept.add((gi, ri))
                    needed += " " + r["expr"]
                    grew = True
    out = []
    for gi, g in enumerate(groups):
        rules = [
            r
            for ri, r in enumerate(g["rules"])
            if ("alert" in r and keep_alert(r)) or (gi, ri) in kept
        ]
        if rules:
            out.append({**g, "rules": rules})
    return {"groups": out}


_FAILED = re.compile(r"name: (.+?),\s*\n\s*alertname: (\S+), time: (\S+?),")
_LABELS = re.compile(r"Labels:\{([^}]*)\}")
_PAIR = re.compile(r'"?([\w.:-]+)"?="((?:[^"\\]|\\.)*)"')


def firing(output: str) -> dict[tuple[str, int], list[dict[str, str]]]:
    """(test group name, eval time ms) → labels of every alert firing there, from the failures
    ``promtool test rules`` prints for ``alert_rule_test`` entries that expected none."""
    found: dict[tuple[str, int], list[dict[str, str]]] = {}
    matches = list(_FAILED.finditer(output))
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(output)
        body = output[match.end() : end]
        got = body.split("got:", 1)[1] if "got:" in body else ""
        alerts = [dict(_PAIR.findall(labels)) for labels in _LABELS.findall(got)]
        key = (match.group(1).strip(), parse_duration_ms(match.group(3)))
        found.setdefault(key, []).extend(alerts)
    return found
