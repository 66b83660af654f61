"""Exceptions of etalis-py: each says what is wrong, where, and how to fix it."""

from __future__ import annotations

from typing import Any


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
    """The rule file does not exist."""


class EventError(EtalisError, ValueError):
    """An event that the engine rejects (not an event, bad time, out of order)."""


class EtalisWarning(UserWarning):
    """A use of the API that cannot work as meant, e.g. a callback for an
    event that no rule reports."""
