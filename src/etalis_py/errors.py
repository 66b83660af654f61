"""Exceptions of etalis-py: each says what is wrong, where, and how to fix it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

@dataclass(frozen=True)
class Rejection:
    """An input item that was not processed, and why.

    ``line`` is the line number in a file, or the 1-based position in an
    iterable given to :meth:`Engine.emit_many`.
    """

    line: int
    reason: str


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
        if kind in ("limit", "time", "memory"):
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


class CallbackError(EtalisError):
    """Callbacks (``Engine.on``) raised while a call delivered its
    detections.  Every detection was still delivered to every callback, the
    counts were kept, and the detections the call would have returned wait
    in the pull queue (``Engine.detections()``).  ``errors`` holds each
    (detection, exception) in order; the first is also the cause."""

    def __init__(self, errors: list[tuple[Any, BaseException]]) -> None:
        self.errors = errors
        detection, first = errors[0]
        more = f"; {len(errors) - 1} more callback calls raised too" if len(errors) > 1 else ""
        super().__init__(
            f"a callback raised {type(first).__name__}: {first} on {detection}{more}\n"
            "  hint: every detection was delivered to the callbacks, and those the call would have returned "
            "wait in engine.detections(); catch errors in the callback to keep them apart"
        )


class OntologyError(EtalisError):
    """An ontology that cannot be loaded: the file, and the line where the
    parser gives one."""

    def __init__(self, message: str, *, file: str, line: Optional[int] = None, hint: str = "") -> None:
        self.message = message
        self.file = file
        self.line = line
        self.hint = hint
        where = f"{file}:{line}" if line is not None else file
        text = f"{where}: error: {message}"
        if hint:
            text += f"\n  hint: {hint}"
        super().__init__(text)


class OntologyNotFound(OntologyError, FileNotFoundError):
    """The ontology file does not exist."""


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
    stored before it was stopped stay in the engine.  From
    :meth:`Engine.emit_many`, ``rejected`` holds the items before it
    that were rejected (with their reasons) and ``warnings`` the warnings
    of the items it read."""

    def __init__(self, *, line: int, event: str, limit: int, where: Optional[str] = None,
                 seconds: Optional[float] = None) -> None:
        self.line = line
        self.event = event
        self.limit = limit
        self.where = where
        self.seconds = seconds
        self.rejected: list[Rejection] = []
        self.warnings: list[Rejection] = []
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
        """The error of a reply's ``stopped`` (or ``error``): of ``kind``
        ``limit`` (inferences), ``time`` (with its ``seconds``), or
        ``memory`` (a :class:`MemoryLimitError`)."""
        if error.get("kind") == "memory":
            return MemoryLimitError(line=int(error["line"]), event=str(error["event"]), limit=int(error["limit"]))
        where = error.get("where")
        return InferenceLimitError(line=int(error["line"]), event=str(error["event"]), limit=int(error["limit"]),
                                   where=None if where is None else str(where),
                                   seconds=float(error["seconds"]) if error.get("kind") == "time" else None)


class MemoryLimitError(InferenceLimitError):
    """An event that ran out of memory: the engine's pending goals (and
    the event's own work) filled the Prolog stacks up to their limit
    (``limit``, in bytes: see docs/python-api.md, "Memory").  It is an
    :class:`InferenceLimitError` too, as every event stopped at a limit of
    the engine is: the detections made before it were delivered, and the
    goals stored before it stay in the engine (which has no room for more)."""

    def __init__(self, *, line: int, event: str, limit: int) -> None:
        self.line = line
        self.event = event
        self.limit = limit
        self.where = None
        self.seconds = None
        self.hint = (
            "the pending goals fill the memory: bound them with a window (within), :- max_age(D). or "
            "--max-age D, or a consuming policy; or raise the limit (ETALIS_STACK_LIMIT=bytes, e.g. 16g)"
        )
        EtalisError.__init__(
            self,
            f"event {event} (line {line}) ran out of memory: the engine's stacks reached their limit of "
            f"{byte_size(limit)}\n  hint: {self.hint}"
        )


def byte_size(size: int) -> str:
    """A number of bytes for people: GiB, else MiB, to a tenth where that
    is not a whole number (22.5 MiB is not 22)."""
    value, unit = (size / 2**30, "GiB") if size >= 2**30 else (size / 2**20, "MiB")
    return f"{f'{value:.1f}'.removesuffix('.0')} {unit}"


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
