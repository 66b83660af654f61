"""Bytes into numbered lines of text, from a file, standard input or a
growing file.

Input is bytes, decoded a chunk of whole lines at a time: a chunk that is
all UTF-8 (the common case) is decoded at once; in one that is not, each
line that is not UTF-8 is known by its number with the first bad byte and
its column, so that the readers reject it and read the lines around it.  A
byte order mark at the start is dropped.
"""

from __future__ import annotations

import io
import itertools
import os
import re
import select
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, Optional

import numpy as np


CHUNK_BYTES = 1 << 20
# Graph streams are read in chunks below glibc's fixed mmap threshold
# (see _prolog.fixed_mmap_threshold): a chunk of 1 MiB and its copies are
# each a mapping of their own, page-faulted in and unmapped again (N-Quads
# graph batches join the chunks of a segment anyway).
GRAPH_CHUNK_BYTES = 1 << 17
BOM = b"\xef\xbb\xbf"
_NOT_UTF8 = re.compile("[\udc80-\udcff]")


def decode_lines(data: bytes) -> tuple[str, dict[int, str]]:
    """``data`` (whole lines) as text, and for each line that is not text,
    by its index in ``data``, why: it is not UTF-8, holds a NUL (a binary
    file, or UTF-16 text), or starts with a byte order mark (files joined
    with cat: the mark of the whole input's start is dropped before).  Such
    a line keeps its place: bad bytes become lone surrogates.  A chunk
    that is all UTF-8, with no NUL or mark, is decoded at once; only one
    that is not is gone through line by line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", "surrogateescape")
    else:
        if "\x00" not in text and "\ufeff" not in text:
            return text, {}
    bad = {}
    for i, line in enumerate(text.split("\n")):
        reason = not_text(line)
        if reason:
            bad[i] = reason
    return text, bad


def not_text(line: str) -> Optional[str]:
    """Why ``line`` is no line of text (see :func:`decode_lines`), or None."""
    m = _NOT_UTF8.search(line)
    if m:
        return f"line is not UTF-8: byte 0x{ord(m.group()) - 0xDC00:02x} at column {m.start() + 1}"
    nul = line.find("\x00")
    if nul >= 0:
        return f"line holds a NUL byte at column {nul + 1}: no text does (a binary file, or text in UTF-16?)"
    if line.startswith("\ufeff"):
        return ("line starts with a byte order mark (U+FEFF), as a file does: were two files joined "
                "(cat a b)? remove the mark")
    return None


class Lines:
    """The lines of a stream of bytes that arrives in chunks of whole lines
    (the last one may lack its newline), numbered from 1: without their
    newline, or with it if ``keepends``.  A byte order mark at the start is
    dropped.  ``bad`` gives, by line number, why a line already read is
    not UTF-8 (see :func:`decode_lines`); the readers reject those lines.
    ``at_start`` False: the chunks are the rest of a stream (a mark at
    their start is a line's)."""

    def __init__(self, chunks: Iterable[bytes], keepends: bool = False, at_start: bool = True) -> None:
        self._chunks = chunks
        self._keepends = keepends
        self._at_start = at_start
        self.bad: dict[int, str] = {}

    def __iter__(self) -> Iterator[str]:
        return itertools.chain.from_iterable(self._decoded())

    def _decoded(self) -> Iterator[Iterable[str]]:
        number = 0
        start = self._at_start
        for data in self._chunks:
            if not data:
                continue
            text, bad = decode_lines(data.removeprefix(BOM) if start else data)
            start = False
            for i, reason in bad.items():
                self.bad[number + i + 1] = reason
            if self._keepends:
                number += text.count("\n") + (not text.endswith("\n"))
                yield io.StringIO(text, newline="\n")
            else:
                lines = text.split("\n")
                if text.endswith("\n"):
                    lines.pop()
                number += len(lines)
                yield lines



def unmarked(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The chunks that hold bytes, a byte order mark at the start dropped."""
    start = True
    for data in chunks:
        if start and data:
            data, start = data.removeprefix(BOM), False
        if data:
            yield data


def line_blocks(chunks: Iterable[bytes], lines: int) -> Iterator[tuple[int, bytes]]:
    """The chunks of whole lines cut again into blocks of ``lines`` lines
    (the last one fewer), each with the number of its first line; a byte
    order mark at the start is dropped.  The chunks gather in one buffer
    that is used again, so that each block is the only new copy of its
    bytes (fresh memory for every chunk's copies cost more in page faults
    than the copying)."""
    pending = bytearray()
    newlines = np.empty(0, dtype=np.intp)     # where pending's newlines not yet in a block are
    first = 1
    for data in unmarked(chunks):
        found = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == _NEWLINE) + len(pending)
        pending += data
        newlines = np.concatenate((newlines, found)) if len(newlines) else found
        whole = len(newlines) // lines * lines
        if not whole:
            continue
        with memoryview(pending) as view:
            cut, blocks = 0, []
            for at in range(lines, whole + 1, lines):
                end = int(newlines[at - 1]) + 1
                blocks.append(bytes(view[cut:end]))
                cut = end
        del pending[:cut]
        newlines = newlines[whole:] - cut
        for block in blocks:
            yield first, block
            first += lines
    if pending:
        yield first, bytes(pending)


def line_starts(data: bytes) -> "np.ndarray[Any, Any]":
    """Where each line of ``data`` starts, and its end (the byte after it)."""
    starts = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == _NEWLINE) + 1
    if not len(starts) or starts[-1] != len(data):
        starts = np.append(starts, len(data))
    return np.concatenate(([0], starts))


_NEWLINE = ord("\n")

# -- live sources: standard input and a growing file ----------------------------------


def line_chunks(stream: BinaryIO, size: int = CHUNK_BYTES) -> Iterator[bytes]:
    """Whole lines of ``stream`` (a file, or standard input as it arrives):
    each chunk is what one read gave, up to its last newline."""
    read = getattr(stream, "read1", stream.read)
    return _whole_chunks(iter(lambda: read(size), b""))


def _whole_chunks(reads: Iterable[bytes]) -> Iterator[bytes]:
    """The reads again, each cut after its last newline (the rest waits
    for the next read, or the end); an empty read is passed on."""
    pending = b""
    for data in reads:
        if not data:
            yield b""
            continue
        cut = data.rfind(b"\n") + 1
        if not cut:                     # no line ends in this read yet
            pending += data
            continue
        whole = b"".join((pending, memoryview(data)[:cut])) if pending else data[:cut]    # one copy, not two
        pending = data[cut:]
        yield whole
    if pending:
        yield pending


def whole_lines(data: bytes) -> tuple[bytes, bytes]:
    """``data`` cut after its last newline: its whole lines, and the rest."""
    cut = data.rfind(b"\n") + 1
    return data[:cut], data[cut:]


def follow_chunks(path: Path, timeout: Optional[float] = None, poll: float = 0.1,
                  sleep: Callable[[float], None] = time.sleep,
                  clock: Callable[[], float] = time.monotonic, start: int = 0, ticks: bool = False) -> Iterator[bytes]:
    """Whole lines of the file at ``path`` as it grows (``tail -f``): what
    is there from byte ``start`` on, then what is appended, polled every
    ``poll`` seconds; until Ctrl-C or, with ``timeout``, until the file
    has not grown for that many seconds.  A last line without its newline
    is given at the end.  With ``ticks``, an empty chunk at each poll that
    found nothing new (for the wall clock of ``etalis run --clock wall``)."""
    pending = b""
    with path.open("rb") as f:
        if start:
            f.seek(start)
        idle_since = clock()
        try:
            while True:
                data = f.read(1 << 20)
                if data:
                    idle_since = clock()
                    whole, pending = whole_lines(pending + data)
                    if whole:
                        yield whole
                    continue
                if timeout is not None and clock() - idle_since >= timeout:
                    break
                if ticks:
                    yield b""
                sleep(poll)
        except KeyboardInterrupt:
            pass
    if pending:
        yield pending


def ticking_chunks(fd: int, tick: float, size: int = 1 << 16) -> Iterator[bytes]:
    """Whole lines of the file descriptor ``fd`` (standard input) as they
    arrive, as :func:`line_chunks` gives them, and an empty chunk whenever
    nothing came for ``tick`` seconds (for ``etalis run --clock wall``)."""

    def reads() -> Iterator[bytes]:
        while True:
            ready, _, _ = select.select([fd], [], [], tick)
            if not ready:
                yield b""
                continue
            data = os.read(fd, size)
            if not data:
                return
            yield data

    return _whole_chunks(reads())


def after_newlines(data: bytes, pos: int, count: int) -> Optional[int]:
    """Where ``data`` goes on after the ``count``-th newline from ``pos``
    (``count`` > 0), or None if it has fewer.  The newlines are counted at
    C speed a block at a time, and only the block of the last one is
    searched, without a bytes object a line (as split() makes)."""
    codes = np.frombuffer(data, np.uint8)
    block = 1 << 16
    while pos < len(codes):
        newlines = codes[pos:pos + block] == 10
        found = int(np.count_nonzero(newlines))
        if found >= count:
            return pos + int(np.flatnonzero(newlines)[count - 1]) + 1
        count -= found
        pos += block
    return None


class LineOffsets:
    """Chunks of whole lines passed on as they are, remembering where each
    line starts in bytes (from line ``first_line`` at byte ``start``), so
    that a checkpoint can give the byte offset of the line after a batch
    (:meth:`offset`).  Only the chunks from the last line asked for on are
    kept."""

    def __init__(self, chunks: Iterable[bytes], first_line: int = 1, start: int = 0) -> None:
        self._chunks = chunks
        self._kept: list[tuple[int, int, bytes]] = []   # (first line, first byte, data)
        self._cursor = (first_line, 0)      # a line of the first kept chunk, and where it starts in it
        self._line = first_line
        self._offset = start
        self.head: Optional[bytes] = None
        """The first line of the stream, if it was read from its start."""

    def __iter__(self) -> Iterator[bytes]:
        for data in self._chunks:
            if data:
                if self.head is None and self._line == 1:
                    self.head = data[:data.find(b"\n") + 1 or len(data)].removeprefix(BOM)
                self._kept.append((self._line, self._offset, data))
                self._line += data.count(b"\n")
                self._offset += len(data)
            yield data

    def offset(self, line: int) -> int:
        """The byte offset where line ``line`` starts (the end of what was
        read for a line past it); the chunks before it are forgotten.  The
        lines are asked for in order: each chunk is searched on from the
        line asked for last."""
        while len(self._kept) > 1 and line >= self._kept[1][0]:
            self._kept.pop(0)
            self._cursor = (self._kept[0][0], 0)
        if not self._kept:
            return self._offset
        first, start, data = self._kept[0]
        at, pos = self._cursor if self._cursor[0] <= line else (first, 0)
        if line > at:
            end = after_newlines(data, pos, line - at)
            if end is None:
                return start + len(data)
            pos = end
            self._cursor = (line, pos)
        return start + pos

