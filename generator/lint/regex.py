"""Reading label-matcher regexes (RE2 syntax, fully anchored by Prometheus).

Only the small finite subset rule files use for bucket bounds is expanded: literals, ``\\.``
escapes, ``|``, groups ``(…)``/``(?:…)``, ``?`` and outer ``^``/``$``. Anything else (``*``,
``+``, classes, repeats) is "not finite" and left alone.
"""

from __future__ import annotations

META = set(".^$*+?()[]{}|\\")


def is_plain(pattern: str) -> bool:
    """True when ``pattern`` has no regex operator (every metacharacter escaped)."""
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            if index + 1 >= len(pattern) or pattern[index + 1].isalnum():
                return False  # \d, \w, \b ... are classes, not literals
            index += 2
            continue
        if char in META:
            return False
        index += 1
    return True


def is_anchored(pattern: str) -> bool:
    """True when ``pattern`` starts with ``^`` or ends with an unescaped ``$``."""
    if pattern.startswith("^"):
        return True
    if not pattern.endswith("$"):
        return False
    backslashes = len(pattern[:-1]) - len(pattern[:-1].rstrip("\\"))
    return backslashes % 2 == 0


class _NotFinite(Exception):
    pass


class _Expander:
    def __init__(self, pattern: str, limit: int) -> None:
        self.text = pattern
        self.pos = 0
        self.limit = limit

    def alternation(self) -> set[str]:
        out = self.sequence()
        while self.pos < len(self.text) and self.text[self.pos] == "|":
            self.pos += 1
            out |= self.sequence()
        return out

    def sequence(self) -> set[str]:
        out = {""}
        while self.pos < len(self.text) and self.text[self.pos] not in "|)":
            atom = self.atom()
            if self.pos < len(self.text) and self.text[self.pos] == "?":
                self.pos += 1
                atom = atom | {""}
            out = {a + b for a in out for b in atom}
            if len(out) > self.limit:
                raise _NotFinite
        return out

    def atom(self) -> set[str]:
        char = self.text[self.pos]
        if char == "(":
            self.pos += 3 if self.text.startswith("(?:", self.pos) else 1
            inner = self.alternation()
            if self.pos >= len(self.text) or self.text[self.pos] != ")":
                raise _NotFinite
            self.pos += 1
            return inner
        if char == "\\":
            if self.pos + 1 >= len(self.text) or self.text[self.pos + 1].isalnum():
                raise _NotFinite
            self.pos += 2
            return {self.text[self.pos - 1]}
        if char in "^$":
            self.pos += 1
            return {""}
        if char == ".":  # any character; bounds only ever need the dot itself
            self.pos += 1
            return {"."}
        if char in META:
            raise _NotFinite
        self.pos += 1
        return {char}


def literal_set(pattern: str, limit: int = 64) -> set[str] | None:
    """Every string a simple finite regex matches, or ``None`` when not simple/finite.

    ``"1(\\.0)?"`` -> ``{"1", "1.0"}``; ``"^(?:1|1\\.0)$"`` -> ``{"1", "1.0"}``;
    ``"5.."`` -> ``{"5.."}`` (``.`` stands for itself); ``".*"`` -> ``None``.
    """
    expander = _Expander(pattern, limit)
    try:
        out = expander.alternation()
    except _NotFinite:
        return None
    if expander.pos != len(pattern):
        return None
    return out
