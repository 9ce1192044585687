"""What a failure is: the meaning of rejection and gateway statuses, exclusions, and how the
failure sources of one availability SLO combine (``spec.failure.combine``: ``max``, a lower
bound, or ``sum``, an upper bound; both capped at the total of requests).

More: docs/spec.md, "What a failure is"; docs/slo.md, "What a failure is: how
sources combine".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from generator import regexes

Meaning = Literal["failure", "excluded"]

# The default meaning of the rejection and gateway statuses, the same in every preset that
# reads an HTTP status (SRE Workbook ch. 2, "Implementing SLOs": the SLI is what the user
# experiences; "Alerting on SLOs" counts the user-visible failures of valid requests). A
# request obsgen excludes is not a failure and stays in the total as not failed.
DEFAULT_STATUSES: dict[str, Meaning] = {
    # Too Many Requests: from an overloaded server, the user gets no answer — the service did
    # not serve a valid request. Exclude it when 429 is per-tenant quota enforcement.
    "429": "failure",
    # Client Closed Request (nginx, many ingresses): the client hung up; nobody waits for the
    # answer, so it is not the service's failure.
    "499": "excluded",
    # Service Unavailable: a full queue or no ready replica; the user gets no answer.
    "503": "failure",
    # Gateway Timeout from an ingress in front: the user waited and got no answer.
    "504": "failure",
}
# The labels an HTTP status is read from.
STATUS_LABELS = ("status", "code", "status_code")


def status_regexes(errors: str, statuses: Mapping[str, Meaning]) -> tuple[str, str | None]:
    """The error regex of a status label with ``statuses`` applied, and the regex of the
    statuses to exclude (None for none).

    ``errors`` is the source's error regex (``5..``); a status meant ``failure`` it does not
    match is added (``5..|429``), one meant ``excluded`` it matches is excluded
    (``status!~"504"``). Grouped codes (``5xx``, prometheus-fastapi-instrumentator's default)
    cannot be told apart: a ``5xx`` series stays a failure whatever the table says of 503.
    """
    added = sorted(c for c, m in statuses.items() if m == "failure" and not _matches(errors, c))
    excluded = sorted(c for c, m in statuses.items() if m == "excluded" and _matches(errors, c))
    regex = "|".join((errors, *added)) if added else errors
    return regex, "|".join(excluded) or None


def _matches(pattern: str, code: str) -> bool:
    return regexes.fullmatch(pattern, code)


def combine(parts: Sequence[str], total: str, how: str, group: Sequence[str]) -> str:
    """PromQL of failures from ``parts`` (each a vector aggregated by ``group``, absent while
    its source counted nothing), combined as ``how`` (``max`` or ``sum``) and capped at
    ``total``; absent while every part is.

    ``max``: ``max by (group) (label_replace(a, "obsgen_source", "0", "", "") or …)``, the
    source label keeping the parts apart so that ``or`` keeps them all; ``sum``: the same
    with ``sum``. One part is returned as it is (no cap needed: a source never exceeds the
    total it is part of).
    """
    if len(parts) == 1:
        return parts[0]
    on = ", ".join(group)
    tagged = " or ".join(
        f'label_replace({part}, "obsgen_source", "{i}", "", "")' for i, part in enumerate(parts)
    )
    combined = f"{how} by ({on}) ({tagged})"
    return (
        f"(({combined}) <= on ({on}) ({total})) or on ({on}) (({total}) and on ({on}) ({combined}))"
    )
