"""Exceptions of etalis-py: each says what is wrong, where, and how to fix it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional


class EtalisError(Exception):
    """Base class of all etalis-py errors."""

    @staticmethod
    def from_reply(error: dict[str, Any]) -> "EtalisError":
        kind = error.get("kind")
        if kind == "rule":
            return RuleError(
                str(error["message"]),
                file=str(error["file"]),
                line=int(error["line"]),
                column=int(error["column"]),
                hint=str(error.get("hint", "")),
            )
        if kind == "file":
            return RuleFileNotFound(str(error["message"]))
        if kind == "limit":
            return InferenceLimitError.from_reply(error)
        if kind == "snapshot":
            return SnapshotError(str(error["message"]))
        return EtalisError(str(error.get("message", error)))


class RuleError(EtalisError):
    """A rule file that cannot be read or compiled, with its position."""

    def __init__(self, message: str, *, file: str, line: int, column: int, hint: str = "") -> None:
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.hint = hint
        text = f"{file}:{line}:{column}: error: {message}"
        if hint:
            text += f"\n  hint: {hint}"
        super().__init__(text)


class RuleFileNotFound(EtalisError, FileNotFoundError):
    """The rule file does not exist (or is a directory)."""


def unreadable(what: str, path: Path) -> Optional[str]:
    """Why ``path`` cannot be read as the ``what`` (e.g. ``events file``):
    it does not exist, or it is a directory; None when it can be opened (a
    file, or a device or pipe such as ``/dev/null`` or ``<(zcat f.gz)``)."""
    if path.is_dir():
        return f"{what} {path} is a directory, not a file"
    if not path.exists():
        return f"{what} {path} does not exist"
    return None


class EventError(EtalisError, ValueError):
    """An event that the engine rejects (not an event, bad time, out of order)."""


class SnapshotError(EtalisError, ValueError):
    """Bytes that :meth:`Engine.restore` refuses: no snapshot, one of
    other rules (or options), of another format or SWI-Prolog version,
    truncated or damaged; the engine is left as it was.  Also a state
    that :meth:`Engine.snapshot` cannot write (a trusted rule's event
    holding a stream)."""


class EtalisWarning(UserWarning):
    """A use of the API that cannot work as meant, e.g. a callback for an
    event that no rule reports."""


class InferenceLimitError(EtalisError):
    """An event whose processing took more inferences than the engine's limit
    (``inference_limit=``): a ``where`` condition that does not end, or
    detections that multiply with each event; or that ran for longer than
    the time the limit allows (``seconds``: a microsecond an inference, a
    second at least), as a built-in can within one inference.  ``line`` is
    the event's line in its stream (its 1-based position for
    ``emit_many``), ``event`` the event as a Prolog term, ``where`` the
    ``where`` condition that was running when the limit was reached (if one
    was).  The detections made before it were delivered; the goals it
    stored before it was stopped stay in the engine."""

    def __init__(self, *, line: int, event: str, limit: int, where: Optional[str] = None,
                 seconds: Optional[float] = None) -> None:
        self.line = line
        self.event = event
        self.limit = limit
        self.where = where
        self.seconds = seconds
        self.hint = (
            "check the rules that use this event: a where condition must end, and under the unrestricted "
            "policy a pattern such as `b <- b seq a` doubles its detections with each event (use a window "
            "or a consuming policy); or raise the limit (inference_limit=, etalis run --inference-limit N)"
        )
        took = (f"ran for more than {seconds:g} seconds, the time that the limit of {limit:,} inferences "
                "per event allows" if seconds is not None else
                f"took more than {limit:,} inferences, the limit per event")
        super().__init__(
            f"event {event} (line {line}) {took}"
            + (f", in the where condition {where}" if where else "")
            + f"\n  hint: {self.hint}"
        )

    @staticmethod
    def from_reply(error: dict[str, Any]) -> "InferenceLimitError":
        where = error.get("where")
        seconds = error.get("seconds")
        return InferenceLimitError(line=int(error["line"]), event=str(error["event"]), limit=int(error["limit"]),
                                   where=None if where is None else str(where),
                                   seconds=None if seconds is None else float(seconds))


def utf8_text(what: str, path: Path) -> str:
    """The text of the UTF-8 file ``path`` (the ``what``, e.g. ``static
    file``), or ValueError naming the file and its first byte that is
    not UTF-8."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{what} {path} is not UTF-8: byte 0x{data[e.start]:02x} at byte {e.start + 1}; "
                         "save it as UTF-8 text") from None
