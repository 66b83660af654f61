"""The progress line of ``etalis run`` and ``etalis replay`` on stderr."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import IO, Optional

WIDTH = 119


class ProgressLine:
    """A line of progress, shown once a command has run for ``delay``
    seconds: on a terminal redrawn in place at most every ``every``
    seconds and wiped by :meth:`clear`; elsewhere (only when asked for
    explicitly) printed as a line of its own every ``log_every`` seconds."""

    def __init__(self, out: IO[str], enabled: bool, delay: float = 1.0, every: float = 0.2,
                 log_every: float = 15.0, clock: Optional[Callable[[], float]] = None) -> None:
        self.out = out
        self.enabled = enabled
        self.delay = delay
        self.every = every
        self.log_every = log_every
        self.clock = clock or time.monotonic
        self.started = self.clock()
        self.tty = is_terminal(out)
        self.last: Optional[float] = None
        self.shown = False

    def elapsed(self) -> float:
        return self.clock() - self.started

    def show(self, text: Callable[[float], str]) -> None:
        """Show ``text(elapsed seconds)`` if it is time to."""
        if not self.enabled:
            return
        now = self.clock()
        elapsed = now - self.started
        if elapsed < self.delay or (self.last is not None and
                                    now - self.last < (self.every if self.tty else self.log_every)):
            return
        self.last = now
        line = text(elapsed)
        if self.tty:
            self.out.write("\r" + line[:WIDTH].ljust(WIDTH))
            self.shown = True
        else:
            self.out.write(line + "\n")
        self.out.flush()

    def clear(self) -> None:
        """Wipe the line from the terminal, so that what follows starts clean."""
        if self.shown:
            self.out.write("\r" + " " * WIDTH + "\r")
            self.out.flush()
            self.shown = False


def is_terminal(out: IO[str]) -> bool:
    isatty = getattr(out, "isatty", None)
    return bool(isatty()) if isatty is not None else False


def wanted(option: Optional[bool], out: IO[str], quiet: bool) -> bool:
    """``--progress``/``--no-progress``, else: when ``out`` is a terminal
    and not ``--quiet``."""
    return option if option is not None else (is_terminal(out) and not quiet)
