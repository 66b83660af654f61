"""Prolog text: the one place where Python writes what the engine reads.

- :func:`quote_atom` and :func:`prolog_string`: an atom and a string,
  escaped the one way Prolog reads them back;
- :func:`compound_text`: ``functor(arg, ...)`` from the texts of its parts;
- :func:`number_text` and :func:`interval_text`: a time, an interval;
- :func:`input_term` and :func:`input_line`: the engine's input event
  ``event(Term, When)``, as an element of a batch list and as a line.

The texts of Python values (:func:`etalis_py.events.prolog_value`), of
rule terms (:func:`etalis_py.rules.rules.term_text`) and of RDF terms
(:func:`etalis_py.rdf.knowledge.node_text`) are built from these.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Optional, Union

from ..errors import EventError

_PLAIN_ATOM = re.compile(r"[a-z][A-Za-z0-9_]*\Z")
_CONTROL = re.compile("[\x00-\x1f\x7f]")
_SPECIAL = re.compile("[\\\\'\"\x00-\x1f\x7f]")


MAX_TEXT = 10_000_000
"""The most characters of a text in an input event (a name, an argument):
a longer one is a bad row, as a longer line of an events file is (and as
the engine refuses to make a longer text, see guard.pl)."""


def quote_atom(text: str) -> str:
    """``text`` as a Prolog atom, quoted where needed; EventError (a bad
    row) if it is longer than :data:`MAX_TEXT`."""
    if len(text) > MAX_TEXT:
        raise EventError(f"a text of {len(text):,} characters is longer than the {MAX_TEXT:,} a row may hold")
    if _PLAIN_ATOM.match(text):
        return text
    return _quoted(text, "'")


def prolog_string(text: str) -> str:
    """``text`` as a double-quoted Prolog string."""
    return _quoted(text, '"')


def _quoted(text: str, quote: str) -> str:
    """``text`` between ``quote`` characters, escaped as Prolog reads it
    back: the backslash, the quote, newline, return and tab by their
    escapes, the other control characters as ``\\xHH\\``."""
    if _SPECIAL.search(text) is None:
        return quote + text + quote
    escaped = (
        text.replace("\\", "\\\\")
        .replace(quote, "\\" + quote)
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
    )
    if _CONTROL.search(escaped):
        escaped = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):x}\\", escaped)
    return quote + escaped + quote


def compound_text(functor: str, args: Iterable[str]) -> str:
    """``functor(a1,...,an)`` from the Prolog texts of the functor and of
    the arguments (each non-empty); the functor alone if there are none."""
    text = ",".join(args)
    return f"{functor}({text})" if text else functor


def number_text(t: Union[int, float]) -> str:
    """A time (or another number) as Prolog text."""
    return str(t) if isinstance(t, int) else repr(float(t))


def interval_text(start: Union[int, float], end: Union[int, float]) -> str:
    """The interval ``[Start, End]`` of an input event."""
    return f"[{number_text(start)}, {number_text(end)}]"


def input_term(term: str, when: str, provenance: Optional[str] = None) -> str:
    """The engine's input event ``event(Term, When)`` (no full stop: an
    element of a batch list), from the texts of the event term and of its
    time or interval; with ``provenance`` (the text of a list of
    ``det(Term, Start, End)``, the input events it was derived from)
    ``event(Term, When, Provenance)``."""
    if provenance is None:
        return f"event({term}, {when})"
    return f"event({term}, {when}, {provenance})"


def input_line(term: str, when: str, provenance: Optional[str] = None) -> str:
    """:func:`input_term` as a line of input (full stop and newline)."""
    return input_term(term, when, provenance) + ".\n"
