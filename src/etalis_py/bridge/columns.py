"""Batches of events handed to Prolog as packed columns, not text.

A batch crosses as columns of 8-byte cells (numpy arrays) whose addresses
a ``feed`` request of ``columns`` passes: an int64 or a finite float64 stands
for itself, any other value for the element of the column's table (the
Prolog text of each distinct value, read once a batch).  The foreign
library ``prolog/etalis/runtime/etalis_columns.c`` builds from them the list of
event terms that reading the batch's text would give (layout:
``prolog/etalis/runtime/columns.pl``), so both ways give the same events, the
same rejections and the same detections.  The library is built at first
use (or by ``make``); without a C compiler the events cross as text, with
one notice.  ``ETALIS_TEXT_PATH=1`` in the environment forces the text.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from operator import itemgetter
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np

from ..errors import EtalisWarning, Rejection
from ..events import Detection, Event, event_element, known_keys, prolog_value, text_atom
from .prolog_text import number_text


INT, FLOAT, TABLE, JSON = 0, 1, 2, 3
"""The tags of a cell: an int64, a float64, an index into the column's
table (of a detection: into the atoms), the index of a JSON text (of a
detection's argument)."""

_INT64 = re.compile(r"-?[0-9]{1,18}\Z")
_FLOAT = re.compile(r"-?[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?\Z")


def text_path_forced() -> bool:
    """``ETALIS_TEXT_PATH`` is set (to anything but 0 or empty): events cross as text."""
    return os.environ.get("ETALIS_TEXT_PATH", "") not in ("", "0")


@dataclass
class Cells:
    """One column of a batch: ``values`` (8 bytes a row: int64, float64
    or a table index, by the row's tag), ``tags`` (a uint8 a row, or one
    int for every row) and ``table``, the Prolog texts of its terms."""

    values: "np.ndarray[Any, Any]"
    tags: Union[int, "np.ndarray[Any, Any]"]
    table: list[str] = field(default_factory=list)

    def rows(self, part: Union[slice, "np.ndarray[Any, Any]"]) -> "Cells":
        """The cells of the rows ``part`` (a slice, or an array of row
        indexes), with the part of the table they use."""
        values = self.values[part]
        tags = self.tags if isinstance(self.tags, int) else self.tags[part]
        if not self.table:
            return Cells(values, tags)
        in_table = np.full(len(values), tags == TABLE) if isinstance(tags, int) else tags == TABLE
        used, inverse = np.unique(values[in_table], return_inverse=True)
        values = values.copy()
        values[in_table] = inverse
        return Cells(values, tags, [self.table[i] for i in used.tolist()])

    @staticmethod
    def joined(parts: Sequence["Cells"]) -> "Cells":
        """The cells of ``parts`` one after the other, with one table (each
        distinct text once)."""
        first = parts[0].tags
        if isinstance(first, int) and first != TABLE and all(
                isinstance(p.tags, int) and p.tags == first for p in parts):
            return Cells(np.concatenate([p.values for p in parts]), parts[0].tags)
        values = np.concatenate([p.values.view(np.int64) for p in parts])     # a float as its 8 bytes
        tags = np.concatenate([np.full(len(p.values), p.tags, dtype=np.uint8) if isinstance(p.tags, int) else p.tags
                               for p in parts])
        index: dict[str, int] = {}
        start = 0
        for p in parts:
            end = start + len(p.values)
            if p.table:
                renumber = np.fromiter((index.setdefault(t, len(index)) for t in p.table), dtype=np.int64,
                                       count=len(p.table))
                mask = tags[start:end] == TABLE
                values[start:end][mask] = renumber[values[start:end][mask]]
            start = end
        return Cells(values, tags, list(index))

    def spec(self) -> str:
        tags = f"all({self.tags})" if isinstance(self.tags, int) else str(self.tags.ctypes.data)
        return f"col({tags}, {self.values.ctypes.data}, [{', '.join(self.table)}])"


@dataclass
class Packed:
    """A batch of ``len(codes)`` events as columns: row i is the event
    ``heads[codes[i]]`` (the Prolog texts ``Name/Arity``; a code of -1: no
    event) with its arguments from the first columns and its time from
    the last (``interval``: the last two; ``points`` says which rows
    have an interval, the others the point of the second last)."""

    codes: "np.ndarray[Any, Any]"
    heads: list[str]
    columns: list[Cells]
    interval: bool = False
    points: Optional["np.ndarray[Any, Any]"] = None  # uint8 a row: 1 an interval, 0 a point

    def __len__(self) -> int:
        return len(self.codes)

    def batches(self, size: int) -> Iterator["Packed"]:
        """The batch in batches of ``size`` rows (views of its arrays)."""
        size = max(1, size)
        for start in range(0, len(self.codes), size):
            part = slice(start, start + size)
            yield Packed(self.codes[part], self.heads, [c.rows(part) for c in self.columns], self.interval,
                         None if self.points is None else self.points[part])

    def rows(self, part: "np.ndarray[Any, Any]") -> "Packed":
        """The rows at the indexes ``part``, in its order."""
        return Packed(self.codes[part], self.heads, [c.rows(part) for c in self.columns], self.interval,
                      None if self.points is None else self.points[part])

    @staticmethod
    def joined(parts: Sequence["Packed"]) -> "Packed":
        """The rows of ``parts`` (batches of events at a point, with the
        same columns) one after the other, each head and text once."""
        if not parts or any(p.interval or p.points is not None for p in parts):
            raise ValueError("join one or more batches of events at a point")
        index: dict[str, int] = {}
        codes = []
        for p in parts:
            renumber = np.array([index.setdefault(h, len(index)) for h in p.heads] + [-1], dtype=np.int32)
            codes.append(renumber[p.codes])        # a code of -1 (no event) takes the last: -1
        columns = [Cells.joined(column) for column in zip(*(p.columns for p in parts))]
        return Packed(np.concatenate(codes), list(index), columns)

    def placed(self, places: Sequence[int], n: int) -> "Packed":
        """The batch as rows ``places`` (ascending) of a batch of ``n`` rows, the others with no event."""
        if len(places) == n:        # every row: the batch itself
            return self
        codes = np.full(n, -1, dtype=np.int32)
        codes[places] = self.codes
        columns = []
        for c in self.columns:
            values = np.zeros(n, dtype=c.values.dtype)
            values[places] = c.values
            tags: Union[int, "np.ndarray[Any, Any]"] = c.tags
            if not isinstance(c.tags, int):
                tags = np.zeros(n, dtype=np.uint8)
                tags[places] = c.tags
            columns.append(Cells(values, tags, c.table))
        points = None
        if self.points is not None:
            points = np.zeros(n, dtype=np.uint8)
            points[places] = self.points
        return Packed(codes, self.heads, columns, self.interval, points)

    def spec(self) -> str:
        """The Prolog text of the batch's layout (see ``columns.pl``).  The
        arrays must live until the request that holds it has returned."""
        heads = ", ".join(self.heads)
        cols = ", ".join(c.spec() for c in self.columns)
        when = str(self.points.ctypes.data) if self.points is not None else "interval" if self.interval else "point"
        return f"columns({len(self.codes)}, heads({self.codes.ctypes.data}, [{heads}]), [{cols}], {when})"


def head_text(functor: str, arity: int) -> str:
    """The head ``Name/Arity`` of a quoted event name."""
    return f"({functor})/{arity}"


def codes_array(codes: Sequence[int]) -> "np.ndarray[Any, Any]":
    return np.asarray(codes, dtype=np.int32)


def number_cells(values: "np.ndarray[Any, Any]") -> Cells:
    """A column of int64 or finite float64 numbers."""
    if values.dtype.kind == "f":
        return Cells(np.ascontiguousarray(values, dtype=np.float64), FLOAT)
    return Cells(np.ascontiguousarray(values, dtype=np.int64), INT)


def first_clause(error: Exception) -> str:
    """The reason of a rejection for an error: its message to the first ``;``."""
    return str(error).split(";")[0]


def value_cells(values: Sequence[Any], text: Callable[[Any], str], bad: Optional[dict[int, str]] = None,
                reason: Callable[[Exception], str] = first_clause) -> Cells:
    """A column of Python values: an int that fits int64 and a finite float
    as itself, any other value as ``text(value)`` in the table (each
    distinct one once).  Where ``text`` raises ValueError or
    RecursionError, ``bad`` gets the row's ``reason`` (unless it has one)."""
    n = len(values)
    kinds = list(map(type, values))     # counted: cheaper than a set of them
    if n and kinds.count(int) == n:
        try:
            return Cells(np.fromiter(values, dtype=np.int64, count=n), INT)
        except OverflowError:
            pass
    elif n and kinds.count(float) == n:
        floats = np.fromiter(values, dtype=np.float64, count=n)
        if np.isfinite(floats).all():
            return Cells(floats, FLOAT)
    elif n and kinds.count(str) == n:
        distinct = dict.fromkeys(values)
        try:
            texts = list(map(text, distinct))
        except (ValueError, RecursionError):
            pass        # row by row below, for each row's reason
        else:
            codes = dict(zip(distinct, range(len(texts))))
            return Cells(np.fromiter(map(codes.__getitem__, values), dtype=np.int64, count=n), TABLE, texts)
    out = np.zeros(n, dtype=np.int64)
    tags = np.zeros(n, dtype=np.uint8)
    floats = out.view(np.float64)
    index: dict[tuple[type, Any], int] = {}
    table: list[str] = []
    for i, v in enumerate(values):
        kind = type(v)
        if kind is int and -(1 << 63) <= v < (1 << 63):
            out[i] = v
        elif kind is float and math.isfinite(v):
            floats[i] = v
            tags[i] = FLOAT
        else:
            try:
                key: Any = (kind, v)
                code = index.get(key)
            except TypeError:  # unhashable: a list
                key, code = None, None
            if code is None:
                try:
                    value_text = text(v)
                except (ValueError, RecursionError) as e:  # InvalidEvent is a ValueError
                    if bad is None:
                        raise
                    bad.setdefault(i, reason(e))
                    continue
                code = len(table)
                table.append(value_text)
                if key is not None:
                    index[key] = code
            out[i] = code
            tags[i] = TABLE
    return Cells(out, tags, table)


def text_cells(texts: Sequence[str]) -> Cells:
    """A column of Prolog texts (``""`` in a row with no event): a text
    that is a plain integer (int64) or a plain decimal float stands for
    the number Prolog reads of it, any other is read once from the table."""
    distinct = dict.fromkeys(texts)
    tag_of: dict[str, int] = {}
    value_of: dict[str, Union[int, float]] = {}
    table: list[str] = []
    for t in distinct:
        if _INT64.match(t):
            tag_of[t], value_of[t] = INT, int(t)
        elif _FLOAT.match(t) and math.isfinite(float(t)):
            tag_of[t], value_of[t] = FLOAT, float(t)
        elif t:
            tag_of[t], value_of[t] = TABLE, len(table)
            table.append(t)
        else:
            tag_of[t], value_of[t] = INT, 0
    n = len(texts)
    kinds = set(tag_of.values())
    if kinds == {FLOAT}:
        return Cells(np.fromiter(map(value_of.__getitem__, texts), dtype=np.float64, count=n), FLOAT)
    if kinds == {INT}:
        return Cells(np.fromiter(map(value_of.__getitem__, texts), dtype=np.int64, count=n), INT)
    if kinds == {TABLE}:
        return Cells(np.fromiter(map(value_of.__getitem__, texts), dtype=np.int64, count=n), TABLE, table)
    out = np.zeros(n, dtype=np.int64)
    floats = out.view(np.float64)
    tags = np.fromiter(map(tag_of.__getitem__, texts), dtype=np.uint8, count=n)
    vals = list(map(value_of.__getitem__, texts))
    is_float = tags == FLOAT
    floats[is_float] = [v for v, f in zip(vals, is_float.tolist()) if f]
    out[~is_float] = [v for v, f in zip(vals, is_float.tolist()) if not f]
    return Cells(out, tags, table)


def terms_packed(head: str, arity: int, columns: Sequence[Sequence[str]], valid: Sequence[bool]) -> Packed:
    """A batch of rows of one event ``head`` (a quoted name) from the
    Prolog texts of its argument and time columns; ``valid`` says which
    rows hold an event."""
    codes = np.where(np.asarray(valid, dtype=bool), 0, -1).astype(np.int32)
    return Packed(codes, [head_text(head, arity)], [text_cells(c) for c in columns])


def items_packed(items: Sequence[Any], first: int, names: dict[str, str], rejected: list[Rejection],
                 reason: Callable[[Exception], str] = first_clause, json_points: bool = False,
                 skip: Sequence[int] = ()) -> Packed:
    """The items of :meth:`Engine.emit_many` (the 1-based position of the
    first is ``first``) as a packed batch, the rejected ones as no event
    with their ``reason`` added to ``rejected`` as the text way gives them.
    A plain tuple ``(name, args, time)`` is an event at a point, as in
    the text way, any other item one over an interval; ``json_points``:
    so is a dict with a plain ``event``, ``args`` and ``time`` (the JSON
    lines of ``etalis run``).  The items at the indexes ``skip`` are no
    event, without a rejection."""
    if not skip:
        packed = _plain_packed(items, names, first, rejected, reason)
        if packed is not None:
            return packed
    return rows_packed(items, first, names, rejected, reason, json_points, skip)


def rows_packed(items: Sequence[Any], first: int, names: dict[str, str], rejected: list[Rejection],
                reason: Callable[[Exception], str] = first_clause, json_points: bool = False,
                skip: Sequence[int] = ()) -> Packed:
    """:func:`items_packed` item by item, for any items."""
    n = len(items)
    codes = [-1] * n
    heads: dict[tuple[str, int], int] = {}
    argss: list[Sequence[Any]] = [()] * n
    starts: list[Any] = [0] * n
    ends: list[Any] = [0] * n
    bad: dict[int, str] = {}
    flags = [0] * n
    skipped = set(skip)
    for i, item in enumerate(items):
        if skipped and i in skipped:
            continue
        plain = type(item) is tuple and len(item) == 3
        if plain:
            name, args, time = item
        elif json_points and type(item) is dict and "event" in item and "time" in item:
            plain, name, args, time = True, item["event"], item.get("args", ()), item["time"]
        if plain:
            kind = type(time)
            if type(name) is str and type(args) in (tuple, list) and (
                kind is int or (kind is float and math.isfinite(time))
            ):
                key = (name, len(args))
                code = heads.get(key)
                if code is None:
                    functor = names.get(name)
                    if functor is None:
                        try:
                            functor = names[name] = text_atom(name) if name else ""
                        except ValueError as error:
                            bad[i] = reason(error)
                            continue
                    if functor:
                        code = heads[key] = len(heads)
                if code is not None:
                    codes[i], argss[i], starts[i], ends[i] = code, args, time, time
                    continue
        try:
            if not json_points:     # a JSON line may carry other fields; a dict of emit_many may not
                known_keys(item)
            event_element(item, names)  # the text way's checks and reasons
            event = Event.coerce(item)
        except (ValueError, RecursionError) as error:
            bad[i] = reason(error)
            continue
        key = (event.name, len(event.args))
        code = heads.get(key)
        if code is None:
            code = heads[key] = len(heads)
            names.setdefault(event.name, text_atom(event.name))
        codes[i], argss[i], starts[i], ends[i], flags[i] = code, event.args, event.start, event.end, 1
    width = max(map(len, argss), default=0)
    if width and len(set(map(len, argss))) > 1:
        argss = [tuple(a) + (0,) * (width - len(a)) for a in argss]
    columns = [value_cells(column, prolog_value, bad, reason) for column in zip(*argss)] if width else []
    columns.append(value_cells(starts, number_text))
    columns.append(value_cells(ends, number_text))
    for i in sorted(bad):
        codes[i] = -1
        rejected.append(Rejection(first + i, bad[i]))
    head_texts = [head_text(names[name], arity) for name, arity in heads]
    return Packed(np.array(codes, dtype=np.int32), head_texts, columns, points=np.array(flags, dtype=np.uint8))


def _plain_packed(items: Sequence[Any], names: dict[str, str], first: int, rejected: list[Rejection],
                  reason: Callable[[Exception], str] = first_clause) -> Optional[Packed]:
    """:func:`items_packed` of tuples ``(name, args, time)`` that all have
    a non-empty str name, args of one length and a time that is an int or
    a finite float, column by column; None for other items.  Each check
    is one pass that counts the types of a column (a count of a list is
    cheaper than a set)."""
    n = len(items)
    if not n or list(map(type, items)).count(tuple) != n or list(map(len, items)).count(3) != n:
        return None
    name_col, args_col, times = (list(map(itemgetter(k), items)) for k in range(3))
    kinds = list(map(type, args_col))
    if list(map(type, name_col)).count(str) != n or kinds.count(tuple) + kinds.count(list) != n:
        return None
    lengths = list(map(len, args_col))
    arity = lengths[0]
    if lengths.count(arity) != n:
        return None
    time_cells = point_times(times)
    if time_cells is None:
        return None
    distinct = list(dict.fromkeys(name_col))
    heads = name_heads(distinct, arity, names)
    if heads is None:
        return None
    if len(distinct) <= 4:      # a comparison of the column a name is cheaper than a lookup a row
        codes = np.zeros(n, dtype=np.int32)
        if len(distinct) > 1:
            column = np.fromiter(name_col, dtype=object, count=n)
            for code, name in enumerate(distinct[1:], start=1):
                codes[column == name] = code
    else:
        code_of = dict(zip(distinct, range(len(distinct))))
        codes = np.fromiter(map(code_of.__getitem__, name_col), dtype=np.int32, count=n)
    bad: dict[int, str] = {}
    columns = [value_cells(list(map(itemgetter(k), args_col)), prolog_value, bad, reason) for k in range(arity)]
    columns.append(time_cells)
    for i in sorted(bad):
        codes[i] = -1
        rejected.append(Rejection(first + i, bad[i]))
    return Packed(codes, heads, columns)


def point_times(times: Sequence[Any]) -> Optional[Cells]:
    """The column of times that are all ints or finite floats, else None."""
    n = len(times)
    kinds = list(map(type, times))
    floats = kinds.count(float)
    if floats == n:
        values = np.fromiter(times, dtype=np.float64, count=n)
        return Cells(values, FLOAT) if np.isfinite(values).all() else None
    if floats + kinds.count(int) != n:
        return None
    if not floats:
        try:
            return Cells(np.fromiter(times, dtype=np.int64, count=n), INT)
        except OverflowError:  # beyond int64: its text, below
            pass
    try:
        if not all(map(math.isfinite, times)):
            return None
    except OverflowError:  # an int beyond a float
        return None
    return value_cells(times, number_text)


def name_heads(distinct: Sequence[str], arity: int, names: dict[str, str]) -> Optional[list[str]]:
    """The heads ``Name/Arity`` of event names (texts, each once; their
    quoted atoms kept in ``names``), or None if one is empty or no atom."""
    heads: list[str] = []
    for name in distinct:
        functor = names.get(name)
        if functor is None:
            try:
                functor = names[name] = text_atom(name) if name else ""
            except ValueError:
                return None
        if not functor:
            return None
        heads.append(head_text(functor, arity))
    return heads


def unpacked_detections(layout: dict[str, Any], count: int) -> list[Detection]:
    """The first ``count`` detections of a ``packed`` feed, from the
    buffers that ``layout`` (the reply's ``packed``, see ``columns.pl``)
    points to: to be read before the bridge's next request.  Each is the
    detection :meth:`Detection.from_row` makes, made column by column
    (:meth:`Detection.made`) without a row between."""
    if count == 0:
        return []
    heads = np.frombuffer(ctypes.string_at(layout["heads"], 4 * count), dtype=np.int32)
    arities = np.frombuffer(ctypes.string_at(layout["arities"], 4 * count), dtype=np.int32).astype(np.int64)
    cells = int(arities.sum()) + 2 * count
    tags = np.frombuffer(ctypes.string_at(layout["tags"], cells), dtype=np.uint8)
    raw = np.frombuffer(ctypes.string_at(layout["values"], 8 * cells), dtype=np.int64)
    atoms: list[str] = layout["atoms"]
    out = np.empty(cells, dtype=object)
    for tag, convert in ((INT, None), (FLOAT, np.float64)):
        mask = tags == tag
        out[mask] = (raw[mask] if convert is None else raw.view(convert)[mask]).tolist()
    mask = tags == TABLE
    out[mask] = list(map(atoms.__getitem__, raw[mask].tolist()))
    for i, text in zip(np.flatnonzero(tags == JSON).tolist(), raw[tags == JSON].tolist()):
        out[i] = json.loads(layout["texts"][text])
    ends = np.cumsum(arities + 2)               # where each detection's cells end
    names = list(map(atoms.__getitem__, heads.tolist()))
    return Detection.made(names, detection_args(out, arities, ends), out[ends - 2].tolist(), out[ends - 1].tolist())


def detection_args(values: "np.ndarray[Any, Any]", arities: "np.ndarray[Any, Any]",
                   ends: "np.ndarray[Any, Any]") -> list[tuple[Any, ...]]:
    """The argument tuples of detections whose cells (``values``, the
    arguments then the two times) end at ``ends``: the columns of the
    detections of each arity, zipped."""
    lowest = int(arities.min())
    if lowest == arities.max():
        return arity_args(values, ends - (lowest + 2), lowest)
    args: list[tuple[Any, ...]] = [()] * len(arities)
    for arity in np.unique(arities).tolist():
        rows = np.flatnonzero(arities == arity)
        for i, t in zip(rows.tolist(), arity_args(values, ends[rows] - (arity + 2), arity)):
            args[i] = t
    return args


def arity_args(values: "np.ndarray[Any, Any]", starts: "np.ndarray[Any, Any]", arity: int) -> list[tuple[Any, ...]]:
    """The tuples of ``arity`` values from each of ``starts``."""
    if arity == 0:
        return [()] * len(starts)
    return list(zip(*(values[starts + k].tolist() for k in range(arity))))


# -- the library -----------------------------------------------------------

SOURCE_NAME = "etalis_columns.c"


def library_source(prolog: Path) -> Path:
    return prolog / "etalis" / "runtime" / SOURCE_NAME


def prebuilt_library(prolog: Path) -> Path:
    """Where ``make`` builds the library: beside its source."""
    return library_source(prolog).with_suffix(".so")


def find_or_build(prolog: Path, home: str) -> tuple[Optional[Path], str]:
    """The library built from its source beside the Prolog files: the one
    ``make`` built there if it is newer than the source, else one in the
    cache directory, built now if it is missing.  ``home`` is SWI-Prolog's
    home (its ``include/`` holds SWI-Prolog.h).  Returns the path, or None
    and why it cannot be built."""
    source = library_source(prolog)
    return built_library(source, home, lambda target: build(source, target, home))


def built_library(source: Path, key: str, make: Callable[[Path], str]) -> tuple[Optional[Path], str]:
    """The shared library of the C file ``source``: the one ``make`` built
    beside it if it is newer than the source, else one in the cache
    directory (named by the source and ``key``), made now by
    ``make(target)`` if it is missing.  Returns the path, or None and why
    it cannot be made."""
    if not source.is_file():
        return None, f"no {source}"
    prebuilt = source.with_suffix(".so")
    if prebuilt.is_file() and prebuilt.stat().st_mtime >= source.stat().st_mtime:
        return prebuilt, ""
    digest = hashlib.sha256(source.read_bytes() + key.encode()).hexdigest()[:16]
    target = cache_dir() / digest / prebuilt.name
    if target.is_file():
        return target, ""
    why = make(target)
    return (None, why) if why else (target, "")


def cache_dir() -> Path:
    """etalis-py's directory of things built at first use (``$XDG_CACHE_HOME/etalis-py``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "etalis-py"


def build(source: Path, target: Path, home: str) -> str:
    """Compile ``source`` into the shared library ``target``; the reason
    it could not, or ``""``."""
    include = Path(home) / "include"
    return compile_library(source, target, [f"-I{include}"], include / "SWI-Prolog.h")


def compile_library(source: Path, target: Path, flags: Sequence[str] = (), header: Optional[Path] = None) -> str:
    """Compile the C file ``source`` (with the compiler's ``flags``, and
    the ``header`` it includes) into the shared library ``target``; the
    reason it could not, or ``""``."""
    compiler = next((c for c in (os.environ.get("CC"), "cc", "gcc") if c and shutil.which(c)), None)
    if compiler is None:
        return "no C compiler (cc or gcc) on PATH"
    if header is not None and not header.is_file():
        return f"no {header.name} in {header.parent} (install swi-prolog-core or the SWI-Prolog headers)"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            built = Path(tmp) / target.name
            done = subprocess.run([compiler, "-O2", "-shared", "-fPIC", *flags, str(source), "-o", str(built)],
                                  capture_output=True, text=True, timeout=120)
            if done.returncode != 0:
                return f"{compiler} failed: {done.stderr.strip()[:400]}"
            os.replace(built, target)
    except (OSError, subprocess.SubprocessError) as e:
        return f"cannot build it in {target.parent}: {e}"
    return ""


def text_notice(why: str) -> None:
    """The one notice that events cross as text."""
    warnings.warn(EtalisWarning(f"etalis-py: events cross into Prolog as text, the slower way "
                                f"(the columnar hand-over is not available: {why})"), stacklevel=3)


def batches(rows: Iterable[Any], size: int) -> Iterable[list[Any]]:
    items = iter(rows)
    while batch := list(islice(items, max(1, size))):
        yield batch
