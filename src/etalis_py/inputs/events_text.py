"""``.events`` files: one Prolog term a line, ``event(a(1), 5).``,
``event(a(1), [5, 7]).`` or a bare ``a(1).``.

A run of lines that are all plain events (one regular expression over the
run, :data:`~etalis_py.inputs.batch.PLAIN_EVENTS`) crosses as a batch list, which
the engine reads at once; any other run goes line by line, each line
checked first for what would cost the engine's reader too much (a line too
long, brackets nested too deep, an integer of too many digits).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from typing import Optional

from .batch import PLAIN_EVENTS, Batch, Item, batched
from ..events import MAX_NESTING, Rejection
from .registry import Reading
from .lines import Lines
from .mapping import Mapping
from ..bridge.prolog_text import MAX_TEXT


def read_events(chunks: Iterable[bytes], mapping: Optional[Mapping], reading: Reading) -> Iterator[Batch]:
    """Batches of the event lines of ``chunks``."""
    return _term_batches(Lines(chunks), reading.batch_lines)


def _term_batches(source: Lines, batch_lines: int) -> Iterator[Batch]:
    """Batches of ``batch_lines`` event lines: a run of lines that are all
    plain events (one regular expression over the run) becomes a batch
    list at once, any other run goes line by line (:func:`_term_items`)."""
    lines = iter(source)
    first = 1
    while run := list(itertools.islice(lines, max(1, batch_lines))):
        text = "\n".join(run) + "\n"
        if (PLAIN_EVENTS.fullmatch(text) and not any(first <= n < first + len(run) for n in source.bad)
                and max(map(len, run)) <= MAX_DIGITS):
            yield Batch("[" + text[:-2].replace(".\n", ",\n") + "]", first, [], len(run))
        else:
            yield from batched(_term_items(run, first, source.bad), first, len(run))
        first += len(run)


def _term_items(lines: Iterable[str], first: int, bad: dict[int, str]) -> Iterator[Item]:
    for number, line in enumerate(lines, start=first):
        text = line.strip()
        reason = bad.get(number) if bad else None
        if reason is None:
            reason = too_costly(text)
        if reason is not None:
            yield number + 1, "\n", Rejection(number, reason)
        elif text and not text.startswith("%") and not text.endswith("."):
            yield number + 1, line.rstrip() + ".\n", None   # the leading blanks kept: columns count them
        else:
            yield number + 1, line.rstrip() + "\n", None


def too_costly(text: str) -> Optional[str]:
    """Why the engine's reader is not given the stripped line ``text``
    (too long, brackets nested too deep, an integer of too many digits), or None."""
    if len(text) > MAX_TEXT:
        return f"the line holds {len(text):,} characters, more than the {MAX_TEXT:,} a row may hold"
    if len(text) > _SHALLOW and _bracket_depth(text) > _MAX_BRACKETS:
        return f"nested deeper than {MAX_NESTING} levels"
    if len(text) > MAX_DIGITS and (digits := _longest_number(text)) > MAX_DIGITS:
        return (f"an integer of {digits:,} digits: more than {MAX_DIGITS:,} (as in JSON; reading one takes time "
                "that grows with the square of its digits)")
    return None


# The time of an event line event(Term, Time). or event(Term, [T1, T2]).: a
# number, or the end of an interval of numbers
_EVENT_TIME = re.compile(r"event\(.*,\s*(?:\[\s*[-+0-9.eE]+\s*,\s*([-+0-9.eE]+)\s*\]|([-+0-9.eE]+))\s*\)\s*\.?",
                         re.DOTALL)


def event_time(text: str) -> Optional[float]:
    """The (end) time of the stripped event line ``text``, if it is
    ``event(Term, Time).`` with a number of seconds, or an interval of
    numbers, as its time; else None."""
    m = _EVENT_TIME.fullmatch(text)
    if m is None:
        return None
    try:
        return float(m[1] or m[2])
    except ValueError:
        return None


# Prolog's reader recurses on brackets, and deep enough (some 10,000 levels)
# it overflows the C stack of the embedded SWI-Prolog: an event line's
# brackets may nest as deep as an argument's lists may (MAX_NESTING) inside
# event(...) and the event's own; a line this short cannot be deeper.
_MAX_BRACKETS = MAX_NESTING + 2
_SHALLOW = 2 * _MAX_BRACKETS
_TOKENS = re.compile(r"""'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"|`(?:[^`\\]|\\.|``)*`|0'\\?.|%.*|[(\[{]|[)\]}]""")


# SWI-Prolog reads an integer in time that grows with the square of its
# digits (a million take 14 s): as JSON (Python's int) does, an event line
# may hold integers of at most MAX_DIGITS digits (quoted texts aside)
MAX_DIGITS = 4300
_NUMBERS = re.compile(r"""'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"|`(?:[^`\\]|\\.|``)*`|0'\\?.|%.*"""
                      r"|(?<![\w.])[0-9][0-9_]*")


def _longest_number(text: str) -> int:
    """The most digits of an integer of a Prolog term's text (outside
    quotes, character codes and comments; ``1_000`` is one integer)."""
    return max((len(t) - t.count("_") for t in (m.group() for m in _NUMBERS.finditer(text))
                if t[0].isdigit() and "'" not in t), default=0)


def _bracket_depth(text: str) -> int:
    """How deep the brackets of a Prolog term's text nest (outside quotes,
    character codes and comments)."""
    depth = deepest = 0
    for m in _TOKENS.finditer(text):
        token = m.group()
        if token in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif token in ")]}":
            depth -= 1
    return deepest
