"""``.events`` files: one Prolog term a line, ``event(a(1), 5).``,
``event(a(1), [5, 7]).`` or a bare ``a(1).``.

A run of lines that are all plain events (one regular expression over the
run, :data:`~etalis_py.inputs.batch.PLAIN_EVENTS`) crosses as a batch list, which
the engine reads at once; any other run goes line by line, each line
checked first for what would cost the engine's reader too much (a line too
long, brackets nested too deep, an integer of too many digits).

Where the engine takes packed columns, a block of lines is first handed
as its bytes to the foreign library's scanner (``etalis_scan_events()``
in ``prolog/etalis/runtime/etalis_columns.c``), which makes packed columns
of a block of plain events that it reads (the terms the engine's reading
of its batch list gives); any other block is read as above.
"""

from __future__ import annotations

import ctypes
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Optional

import numpy as np

from .batch import PLAIN_EVENTS, Batch, Item, batched
from ..events import MAX_NESTING, Rejection
from .registry import Reading
from .lines import Lines, unmarked
from .mapping import Mapping
from ..bridge.columns import INT, Cells, Packed, head_text
from ..bridge.prolog_text import MAX_TEXT


def read_events(chunks: Iterable[bytes], mapping: Optional[Mapping], reading: Reading) -> Iterator[Batch]:
    """Batches of the event lines of ``chunks``: blocks of plain events
    as packed columns if ``reading.packed`` and the library's scanner is
    there, the others as batch lists or event lines."""
    scan = scanner() if reading.packed else None
    if scan is None:
        return _term_batches(Lines(chunks), reading.batch_lines)
    return _scanned_batches(chunks, max(1, reading.batch_lines), scan)


def _scanned_batches(chunks: Iterable[bytes], batch_lines: int, scan: "Scanner") -> Iterator[Batch]:
    """The blocks of ``batch_lines`` lines (as :func:`~.lines.line_blocks`
    cuts them) that ``scan`` packs as packed batches, the others as
    :func:`_term_batches` reads them: the same runs of lines."""
    pending = b""
    at = newlines = 0           # where the rest of pending starts, and its newlines
    first = 1
    for data in unmarked(chunks):
        pending = pending[at:] + data
        at = 0
        newlines += data.count(b"\n")
        while newlines >= batch_lines:
            end, lines, packed = scan.block(pending, at, batch_lines)
            yield from _block_batches(pending[at:end] if packed is None else b"", first, lines, packed, batch_lines)
            at, first, newlines = end, first + lines, newlines - lines
    if at < len(pending):
        end, lines, packed = scan.block(pending, at, batch_lines)
        yield from _block_batches(pending[at:end] if packed is None else b"", first, lines, packed, batch_lines)


def _block_batches(block: bytes, first: int, lines: int, packed: Optional[Packed], batch_lines: int) -> Iterator[Batch]:
    if packed is not None:
        yield Batch("", first, [], lines, packed)
    else:
        for batch in _term_batches(Lines([block], at_start=False), batch_lines):
            yield batch.shifted(first - 1)


class Scanner:
    """The foreign library's ``etalis_scan_events()``: a block of lines as
    packed columns if every line is a plain event it reads."""

    ARGS = 32
    """The arguments a row may have (its ``SCAN_ARGS``); the time is in
    the column after them, an interval's end in the next."""

    def __init__(self, function: Callable[..., int]) -> None:
        self._scan = function

    def block(self, data: bytes, at: int, rows: int) -> tuple[int, int, Optional[Packed]]:
        """The block of the first ``rows`` lines of ``data`` from byte
        ``at`` (all of them if fewer; the last may lack its newline): where
        it ends, its lines, and its events as packed columns (row i line
        i) if they are all plain events, else None."""
        width = self.ARGS + 2
        codes = np.empty(rows, dtype=np.int32)
        values = np.zeros((width, rows), dtype=np.int64)
        tags = np.zeros((width, rows), dtype=np.uint8)
        points = np.empty(rows, dtype=np.uint8)
        heads = np.empty((64, 3), dtype=np.int64)
        slots = np.zeros(1 << max(4, (2 * rows).bit_length()), dtype=np.int32)
        atoms = np.empty((len(slots) // 2, 4), dtype=np.int64)
        counts = np.zeros(6, dtype=np.int64)
        text = np.frombuffer(data, dtype=np.uint8)
        done = self._scan(_address(text) + at, len(data) - at, rows, MAX_DIGITS, _address(codes), _address(values),
                          _address(tags), _address(points), _address(heads), _address(atoms), _address(slots),
                          len(slots), _address(counts))
        nheads, natoms, most, intervals, length, n = counts.tolist()
        if done != n or n == 0:
            return at + length, n, None
        tables: list[list[str]] = [[] for _ in range(most)]
        for offset, size, column, _ in atoms[:natoms].tolist():
            tables[column].append("(" + data[at + offset:at + offset + size].decode("ascii") + ")")
        names = [head_text(data[at + o:at + o + size].decode("ascii"), arity)
                 for o, size, arity in heads[:nheads].tolist()]
        columns = [Cells(values[j, :n], tags[j, :n] if tags[j, :n].any() else INT, tables[j]) for j in range(most)]
        columns.append(Cells(values[self.ARGS, :n], tags[self.ARGS, :n]))
        if intervals:
            columns.append(Cells(values[self.ARGS + 1, :n], tags[self.ARGS + 1, :n]))
        return at + length, n, Packed(codes[:n], names, columns, intervals == n,
                                      points[:n] if 0 < intervals < n else None)


def scanner() -> Optional[Scanner]:
    """The library's scanner, if the engine has loaded the library (into
    the process's global scope, see ``columns.pl``)."""
    try:
        function = ctypes.CDLL(None).etalis_scan_events
    except (AttributeError, OSError):
        return None
    function.restype = ctypes.c_int64
    count, address = ctypes.c_int64, ctypes.c_void_p
    function.argtypes = (address, count, count, count, address, address, address, address, address, address,
                         address, count, address)
    return Scanner(function)


def _address(array: "np.ndarray[Any, Any]") -> int:
    return int(array.ctypes.data)


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
