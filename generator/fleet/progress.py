"""A progress line for long renders: ``phase done/total``, redrawn in place on a terminal.

Shown only when the stream is a terminal and not ``--quiet``; otherwise every call is a no-op,
so logs and pipes stay clean. Redraws are throttled (at most ~10 a second) and the line is
erased before anything else is printed (:meth:`Progress.clear`).
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

REDRAW_S = 0.1


class Progress:
    """One status line on ``stream`` (default stderr).

    Args:
        stream: where the line goes.
        enabled: force on or off; default on when ``stream`` is a terminal.
    """

    def __init__(self, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.name = ""
        self.done = 0
        self.total = 0
        self._drawn = 0  # width of the line on screen
        self._last = 0.0
        self._lock = threading.Lock()  # promtool runs report from several threads

    def phase(self, name: str, total: int) -> None:
        """Start phase ``name`` with ``total`` steps (services, files)."""
        with self._lock:
            self.name, self.done, self.total = name, 0, total
            self._draw(force=True)

    def advance(self, steps: int = 1) -> None:
        """``steps`` more of the current phase are done."""
        with self._lock:
            self.done = min(self.total, self.done + steps)
            self._draw(force=self.done == self.total)

    def clear(self) -> None:
        """Erase the line (before printing results or warnings)."""
        with self._lock:
            if self.enabled and self._drawn:
                self.stream.write("\r" + " " * self._drawn + "\r")
                self.stream.flush()
                self._drawn = 0

    def line(self) -> str:
        """The text of the line: ``obsgen: <phase> <done>/<total>``."""
        return f"obsgen: {self.name} {self.done:,}/{self.total:,}"

    def _draw(self, force: bool) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < REDRAW_S:
            return
        self._last = now
        text = self.line()
        pad = max(0, self._drawn - len(text))
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()
        self._drawn = len(text)
