"""The input formats: one table of every way events come in from a file
or a stream, which ``etalis run`` (a file, standard input, a growing
file), ``etalis replay`` and ``etalis stream`` (through the Spark data
source a format names) and :meth:`etalis_py.Engine.emit_file` all use.

A format is a name, the suffixes of its files, the mapping options it
takes and its batch reader: a function from chunks of whole lines (bytes)
to :class:`~etalis_py.inputs.batch.Batch` es that keep the source's line numbers
(``read = accepted + rejected``).  The table names each function by its
module and name (``"etalis_py.inputs.jsonl:read_jsonl"``), and a module is
imported when its format is used (pyarrow and rdflib are not loaded for
a run that does not need them).  A new format is a module with its reader
and an entry in :data:`BUILT_IN`, or, from another package, an
:class:`InputFormat` registered under the entry point group
``etalis_py.inputs`` (``toy = toy_module:FORMAT``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, cast

from .batch import BATCH_LINES, Batch
from .lines import CHUNK_BYTES, GRAPH_CHUNK_BYTES

if TYPE_CHECKING:
    from .mapping import Mapping

ENTRY_POINTS = "etalis_py.inputs"

TABLE_OPTIONS = ("event", "event_col", "args", "time", "time_format", "time_zone", "columns", "graph_col", "stream")
"""The options of a format whose rows are mapped to events (see :class:`~etalis_py.inputs.mapping.Mapping`)."""


@dataclass(frozen=True)
class Reading:
    """How a reader is asked for batches: about ``batch_lines`` lines (or
    rows) a batch, the source's ``name`` for its messages, and whether the
    engine takes ``packed`` columns (see :mod:`etalis_py.bridge.columns`; a reader
    may give text batches anyway)."""

    batch_lines: int = BATCH_LINES
    name: str = "<stream>"
    packed: bool = False


Reader = Callable[[Iterable[bytes], Optional["Mapping"], Reading], Iterator[Batch]]
"""Batches of a stream given in chunks of whole lines (the last one may
lack its newline), numbered from line 1; a format that takes the table
options is given its checked mapping, another one the mapping or None."""

FileReader = Callable[[Path, Optional["Mapping"], Reading, int], Iterator[Batch]]
"""Batches of a whole file, from its line (or row) ``first`` on."""


@dataclass(frozen=True)
class InputFormat:
    """One input format.

    ``read`` reads a stream in chunks of whole lines (files, standard
    input, a growing file; None: only whole files, by ``read_file``).
    ``options`` names the mapping options it takes (``TABLE_OPTIONS``: its
    rows need ``--event`` or ``--event-col``, and ``--time``); ``graphs``:
    its events are RDF graphs (``--stream`` names their stream).
    ``read_file``, if given, reads a whole file at a path (Parquet, TriG)
    rather than ``read`` over its chunks.  ``header`` and ``dates`` look
    at the start of a file: its column names, and whether it writes its
    times as dates (its rejections then say times as dates).  ``spark``
    is the Spark data source that reads its files for ``etalis replay``
    and ``etalis stream`` (csv, json, parquet or text; None: Spark does
    not read it).  ``live`` regroups a live stream's chunks before reading
    them (graphs that span lines); ``chunk_bytes`` is the size of a
    file's reads.  The functions are given as ``"module:name"``."""

    name: str
    suffixes: tuple[str, ...]
    read: Optional[str]
    options: tuple[str, ...] = ()
    graphs: bool = False
    read_file: Optional[str] = None
    header: Optional[str] = None
    dates: Optional[str] = None
    spark: Optional[str] = None
    aliases: tuple[str, ...] = ()
    live: Optional[str] = None
    chunk_bytes: int = CHUNK_BYTES

    @property
    def mapped(self) -> bool:
        """Its rows become events by a mapping (``--event``, ``--time``, ...)."""
        return "time" in self.options

    def checked(self, mapping: Optional[Mapping]) -> Optional[Mapping]:
        """``mapping``, checked if the format's rows need one."""
        if not self.mapped:
            return mapping
        if mapping is None:
            raise ValueError(f"a .{self.name} stream needs a mapping: --event or --event-col, --args, --time")
        mapping.check()
        return mapping

    def reader(self) -> Reader:
        """The reader of a stream in chunks of lines."""
        if self.read is None:
            raise ValueError(f"a {self.name} file is read as a whole file: not from standard input or with --follow")
        return cast(Reader, _function(self.read))

    def file_reader(self) -> Optional[FileReader]:
        """The reader of a whole file, if the format has one."""
        return None if self.read_file is None else cast(FileReader, _function(self.read_file))

    def column_names(self, path: Path, mapping: Mapping) -> list[str]:
        """The column names of a file of the format (none if it has no columns)."""
        if self.header is None:
            return []
        return cast(Callable[[Path, "Mapping"], list[str]], _function(self.header))(path, mapping)

    def writes_dates(self, path: Path, mapping: Mapping) -> bool:
        """Whether the file at ``path`` writes its times as dates, as its first event does."""
        if self.dates is None:
            return False
        return cast(Callable[[Path, "Mapping"], bool], _function(self.dates))(path, mapping)

    def live_chunks(self, chunks: Iterable[bytes]) -> Iterable[bytes]:
        """A live stream's chunks as its reader takes them."""
        if self.live is None:
            return chunks
        return cast(Callable[[Iterable[bytes]], Iterable[bytes]], _function(self.live))(chunks)


def _function(where: str) -> Any:
    module, _, name = where.partition(":")
    return getattr(importlib.import_module(module), name)


BUILT_IN = (
    InputFormat("events", (".events", ".pl"), "etalis_py.inputs.events_text:read_events", spark="text"),
    InputFormat("jsonl", (".jsonl", ".json"), "etalis_py.inputs.jsonl:read_jsonl", dates="etalis_py.inputs.jsonl:dates",
                spark="json", aliases=("json",)),
    InputFormat("csv", (".csv",), "etalis_py.inputs.delimited:read_csv", TABLE_OPTIONS, header="etalis_py.inputs.delimited:header",
                dates="etalis_py.inputs.delimited:dates", spark="csv"),
    InputFormat("parquet", (".parquet",), None, TABLE_OPTIONS, read_file="etalis_py.inputs.parquet:read_parquet",
                header="etalis_py.inputs.parquet:header", dates="etalis_py.inputs.parquet:dates", spark="parquet"),
    InputFormat("nquads", (".nq",), "etalis_py.inputs.graphs:read_nquads", ("stream",), graphs=True,
                live="etalis_py.inputs.graphs:whole_graphs", chunk_bytes=GRAPH_CHUNK_BYTES),
    InputFormat("trig", (".trig",), "etalis_py.inputs.graphs:read_trig", ("stream",), graphs=True,
                read_file="etalis_py.inputs.graphs:read_trig_file", chunk_bytes=GRAPH_CHUNK_BYTES),
    InputFormat("jsonld", (".jsonld",), "etalis_py.inputs.graphs:read_jsonld", ("stream",), graphs=True,
                chunk_bytes=GRAPH_CHUNK_BYTES),
)
"""The formats etalis-py reads, in the order ``--input-format`` lists them."""


def formats() -> tuple[InputFormat, ...]:
    """The built-in formats, then those registered by installed packages
    (a name of theirs that is a built-in's replaces it)."""
    added = [cast(InputFormat, e.load()) for e in entry_points(group=ENTRY_POINTS)]
    names = {f.name for f in added}
    return tuple(f for f in BUILT_IN if f.name not in names) + tuple(added)


def names() -> tuple[str, ...]:
    """The names of the formats, and their other names."""
    return tuple(n for f in formats() for n in (f.name, *f.aliases))


def by_name(name: str) -> InputFormat:
    """The format called ``name`` (or one of its other names)."""
    for f in formats():
        if name == f.name or name in f.aliases:
            return f
    raise ValueError(f"unknown input format {name!r}: use one of {', '.join(names())}")


def of_path(path: Path) -> InputFormat:
    """The format of the file at ``path``, by its suffix."""
    suffix = path.suffix.lower()
    known = formats()
    for f in known:
        if suffix in f.suffixes:
            return f
    listed = [s for f in known for s in f.suffixes]
    raise ValueError(f"unknown stream file type {suffix!r}: use {', '.join(listed[:-1])} or {listed[-1]}, "
                     "or give --input-format")

