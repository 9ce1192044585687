"""Server release strings as the servers publish them: parsed, ordered, matched to presets.

Two schemes: PEP 440 (vLLM, SGLang, TensorRT-LLM, TGI, openai-http, by
``packaging.version.Version``) and Triton's two numberings (server release ``2.49.0``, NGC
container tag ``24.08`` in its spellings; see :mod:`generator.presets.triton`), each compared
only with its own kind. Only the release numbers order versions: ``0.11.0rc1`` counts as 0.11.0.
The accepted spellings: docs/spec.md, "Versions (``spec.serverVersion``)".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

PEP440 = "pep440"
TRITON = "triton"
CONTAINER = "container"

_TRITON_RELEASE = re.compile(r"^v?(2)\.(\d+)(?:\.(\d+))?$")
# [registry/…/]tritonserver:YY.MM[.patch][-flavour], or rYY.MM (release branch), or YY.MM.
_CONTAINER = re.compile(
    r"^(?:(?:[a-z0-9.-]+(?::\d+)?/)?(?:[a-z0-9._-]+/)*tritonserver:|r)?"
    r"(\d{2})\.(\d{2})(?:\.(\d+))?(?:-[a-z0-9][a-z0-9.-]*)?$"
)
EXAMPLES = {
    PEP440: "0.11, 0.10.1.1, 0.8.5.post1, v0.11.0, 0.11.0rc1",
    TRITON: "2.49.0 or an NGC container tag such as 24.08 or 24.08-trtllm-python-py3",
}


@dataclass(frozen=True)
class Release:
    """One parsed release string.

    Attributes:
        text: as written in the spec.
        scheme: :data:`PEP440`, :data:`TRITON` (``2.49.0``) or :data:`CONTAINER` (``24.08``).
        numbers: the release numbers with trailing zeros dropped (``0.9.0`` → ``(0, 9)``), so
            ``0.9`` and ``0.9.0`` are equal; pre/post/dev/local parts are not part of it.
        written: how many release numbers the text gives (``0.9`` → 2, ``0.9.0`` → 3): a
            release written with fewer numbers than its releases have names a line of them.
    """

    text: str
    scheme: str
    numbers: tuple[int, ...]
    written: int = 0

    def covers(self, numbers: tuple[int, ...]) -> bool:
        """Whether release ``numbers`` (trailing zeros dropped) is of the line this text names:
        its first :attr:`written` numbers equal this release's (``0.8`` covers ``0.8.4``,
        ``0.8.0`` covers only 0.8.0 and its pre/post releases)."""
        padded = numbers + (0,) * self.written
        return padded[: self.written] == self.line(self.written)

    def line(self, length: int) -> tuple[int, ...]:
        """The first ``length`` release numbers, zero-padded: the release line (``(0, 11)``)."""
        padded = self.numbers + (0,) * length
        return padded[:length]


def _strip(numbers: tuple[int, ...]) -> tuple[int, ...]:
    while numbers and numbers[-1] == 0:
        numbers = numbers[:-1]
    return numbers


def scheme_of(server: str) -> str:
    """The version scheme of ``server``'s release strings: :data:`TRITON` or :data:`PEP440`."""
    return TRITON if server == "triton" else PEP440


def parse_release(server: str, text: str) -> Release:
    """Parse ``text`` as a release of ``server``.

    Raises:
        ValueError: not a release string of that server; the message names the expected forms.
    """
    if text != text.strip():
        raise ValueError("remove the spaces around the release")
    if scheme_of(server) == TRITON:
        match = _TRITON_RELEASE.match(text)
        if match:
            parts = tuple(int(g) for g in match.groups() if g is not None)
            return Release(text, TRITON, _strip(parts), len(parts))
        match = _CONTAINER.match(text)
        if match and 1 <= int(match.group(2)) <= 12:
            parts = tuple(int(g) for g in match.groups() if g is not None)
            return Release(text, CONTAINER, _strip(parts), len(parts))
        raise ValueError(f"expected a Triton release ({EXAMPLES[TRITON]})")
    try:
        version = Version(text)
    except InvalidVersion:
        raise ValueError(f"expected a {server} release (PEP 440: {EXAMPLES[PEP440]})") from None
    if version.epoch:
        raise ValueError(f"expected a {server} release without an epoch (e.g. 0.11.0)")
    return Release(text, PEP440, _strip(tuple(version.release)), len(version.release))


def check_release(server: str, text: str) -> str:
    """``text`` when it parses as a release of ``server``; for the spec's field validator.

    Raises:
        ValueError: as :func:`parse_release`.
    """
    parse_release(server, text)
    return text
