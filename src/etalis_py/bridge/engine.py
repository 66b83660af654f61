"""The Python face of one compiled rule set."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import sys
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Optional, ParamSpec, TypeVar, Union, Unpack

from ._prolog import PrologBridge, bridge, prolog_dir, rules_source, static_text_source
from .prolog_text import number_text, quote_atom
from ..errors import CallbackError, EtalisError, EtalisWarning, EventError, InferenceLimitError, Rejection, RuleError
from ..events import NOTHING, Detection, Event, Zone, batch_list, event_element, to_time
from ..inputs.batch import BATCH_LINES, Batch
from .columns import Packed, batches, items_packed, text_path_forced, unpacked_rows
from ..inputs.mapping import Mapping, MappingOptions
from ..inputs.streams import read_batches
from ..outputs.detections import Detections
from ..rules.analysis import Decoded, RuleFile

if TYPE_CHECKING:  # rdflib and owlrl are imported on the first load of an ontology
    from ..rules.findings import Finding
    from ..rdf.knowledge import KnowledgeBase, KnowledgeStats, Source as OntologySource

POLICIES = ("unrestricted", "recent", "chronological")
STRATEGIES = ("strict", "strict(partition)", "nxt", "last", "max", "stn", "continuous", "cumulative")
"""The selection strategies and contexts (docs/language.md, "Selection strategies")."""


def check_policy(policy: str) -> str:
    """``policy`` if it names a consumption policy (one of POLICIES, or an
    interval variant such as ``recent(longer)``), else ValueError.  The
    engine's own grammar of policies decides (etalis_policies:policy/1)."""
    header, _ = bridge().request(f"policy({quote_atom(policy)})")
    if not header["known"]:
        raise ValueError(f"unknown policy {policy!r}: {header['hint']}")
    return policy

Callback = Callable[[Detection], Any]

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _one_at_a_time(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """An Engine method that holds the bridge's lock while it runs, so that
    calls from several threads (to one engine or several) come one at a
    time, each with its own requests and counts (docs/python-api.md,
    "Threads and processes")."""
    @functools.wraps(method)
    def locked(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with bridge().held():
            return method(*args, **kwargs)
    return locked



def trust_option(trusted: bool, sandbox: Optional[bool]) -> list[str]:
    """The Prolog options that say whether rule files are trusted.

    Rule files are sandboxed unless ``trusted`` is true.  ``sandbox`` is
    the older spelling: ``sandbox=True`` is the default (and contradicts
    ``trusted=True``), ``sandbox=False`` means ``trusted=True`` and is
    deprecated."""
    if sandbox is not None:
        if sandbox and trusted:
            raise ValueError("sandbox=True and trusted=True contradict each other: give trusted=True alone")
        if not sandbox:
            warnings.warn("sandbox=False is deprecated: rule files are sandboxed by default; "
                          "pass trusted=True for a file you trust", DeprecationWarning, stacklevel=3)
            trusted = True
    return ["trusted(true)"] if trusted else []

MAX_QUEUED = 100_000
"""How many detections the pull queue holds by default before it drops the oldest."""


@dataclass(frozen=True)
class BatchResult:
    """What one batch of events did: how many were accepted, which were
    rejected and why, what was detected, and warnings (e.g. a ``where``
    condition that raised an error)."""

    accepted: int
    rejected: list[Rejection]
    detections: Detections
    warnings: list[Rejection] = field(default_factory=list)


@dataclass(frozen=True)
class FeedResult:
    """A batch of event lines as the engine answered it: the counts and the
    detections as JSON lines, exactly as ``etalis run`` prints them.
    ``stopped`` is set if an event reached a limit of the engine (its
    inferences, the time they allow, its memory): the batch stopped before
    it (the counts and detections are those of the lines before). ``raised`` counts the events that rules
    raised with ETALIS's ``event/1`` (fed after the event that raised
    them, not counted in ``accepted``)."""

    accepted: int
    rejected: list[Rejection]
    warnings: list[Rejection]
    detection_lines: str
    stopped: Optional[InferenceLimitError] = None
    raised: int = 0
    rows: Optional[list[list[Any]]] = None
    """The detections as rows, read from the packed hand-over (then
    ``detection_lines`` holds only a newline for each)."""
    snapshot: Optional[bytes] = None
    """In a feed of keys' states, after a segment that ends a key: the
    key's state as :meth:`Engine.snapshot` would give it, if the key's
    events changed it."""
    due: Optional[float] = None
    """With ``snapshot``: the key's :meth:`Engine.next_due`."""


@dataclass(frozen=True)
class PendingPart:
    """A part of a rule's pattern that has matched and waits for the rest:
    ``matched`` (with its bindings) occurred over ``[start, end]`` as the
    ``side`` operand of binary goal ``goal`` (``pattern``)."""

    goal: int
    pattern: str
    matched: str
    side: str
    waiting: str
    start: float | int
    end: float | int


@dataclass(frozen=True)
class KeyState:
    """Around a segment of a feed of keys' states (:meth:`Engine.feed_segments`):
    the snapshot to restore before it (None: the engine goes on with the
    state it holds) and whether to take the state after it (the segment
    ends its key)."""

    restore: Optional[bytes]
    take: bool


SNAPSHOT_COUNTERS = ("accepted", "rejected", "raised", "detections", "dropped")
"""The counters of :class:`EngineStats` that a snapshot carries (the
others are counted afresh from the engine's state)."""


@dataclass
class EngineStats:
    """Counters of an engine since it was made."""

    accepted: int = 0
    rejected: int = 0
    raised: int = 0
    detections: int = 0
    pending: int = 0
    pending_by_goal: list[dict[str, Any]] = field(default_factory=list)
    pending_by_rule: dict[str, int] = field(default_factory=dict)
    buffered: int = 0
    skip_kept: int = 0
    queued: int = 0
    dropped: int = 0


def parse_detections(lines: str) -> Detections:
    """The detections of JSON lines, decoded as one array (much faster
    than a line at a time)."""
    if not lines:
        return Detections()
    return Detections(Detection.from_dict(d) for d in json.loads("[" + lines.rstrip("\n").replace("\n", ",") + "]"))


def parse_rows(lines: str) -> Detections:
    """The detections of rows, a JSON array a line (the engine's ``row``
    format: ``["c", [1], 1, 2]``), decoded as one array."""
    if not lines:
        return Detections()
    return Detections(map(Detection.from_row, json.loads("[" + lines.rstrip("\n").replace("\n", ",") + "]")))


class Engine:
    """A compiled rule set with its own pending goals.

    Make one with :meth:`from_file` or :meth:`from_string`.  Several engines
    can live in one process; none sees another's rules, goals or detections.
    Call :meth:`close` (or use ``with``) to free an engine's memory.
    """

    def __init__(
        self, name: str, info: dict[str, Any], prolog: PrologBridge, max_queued: Optional[int] = MAX_QUEUED
    ) -> None:
        self._name = name
        self._prolog = prolog
        self.policy: str = info["policy"]
        self.printed: list[str] = list(info["printed"])
        self.rule_count: int = info["rules"]
        self.goal_count: int = info["goals"]
        self.prefixes: dict[str, str] = dict(info["prefixes"])
        self._queue: deque[Detection] = deque(maxlen=max_queued)
        self._callbacks: dict[Optional[str], list[Callback]] = {}
        self._stats = EngineStats()
        self._closed = False
        self._knowledge: Optional["KnowledgeBase"] = None
        # the rules' file, or their source name and text, for findings()
        self._source: tuple[str, Optional[str]] = ("", "")
        self._analysis: Optional[dict[str, Any]] = None
        self._max_age: Optional[float] = None
        self._trusted = False
        self._explain = False
        self._static: tuple[str, ...] = ()

    # -- making engines ---------------------------------------------------

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        policy: Optional[str] = None,
        *,
        static: Sequence[str | os.PathLike[str]] = (),
        trusted: bool = False,
        sandbox: Optional[bool] = None,
        max_age: Optional[float] = None,
        lateness: Optional[float] = None,
        explain: bool = False,
        max_queued: Optional[int] = MAX_QUEUED,
        inference_limit: Optional[int] = None,
        state: Optional[bytes] = None,
        analysis: bool = False,
    ) -> "Engine":
        """Compile the rules of an ``.etl`` file.

        ``policy`` (unrestricted, recent or chronological) overrides the
        file's ``:- policy(P).``; labelled rules may still override both.
        ``static`` names files of static knowledge (Prolog facts and rules,
        e.g. the ``.db`` file an ETALIS test driver consults beside the
        rules), read before the rule file and sandboxed as its own static
        rules are; errors in them give their own file and position.
        Rule files are code from elsewhere: unless ``trusted=True``, a file
        whose ``where`` conditions or static rules could run shell, file,
        network or database goals, define hooks or load code is refused
        before anything of it is loaded (docs/language.md, "Sandbox").
        ``sandbox=True`` is the default, accepted for compatibility;
        ``sandbox=False`` is a deprecated spelling of ``trusted=True``.
        ``max_age`` (seconds) bounds the memory of patterns without a window:
        each behaves as ``P within max_age`` (overrides ``:- max_age(D).``).
        ``lateness`` (seconds) lets events arrive out of time order by up to
        that much: they are held back and matched exactly as if they had
        arrived in order (detections come that much later; :meth:`flush`
        releases the rest at the end of a stream); later ones are rejected.
        ``explain=True`` gives each detection its provenance: the input
        events it was built from.  ``max_queued`` bounds the pull queue of
        :meth:`detections` (None: no bound); past it the oldest are dropped
        and counted in ``stats().dropped``.
        ``inference_limit`` is the most Prolog inferences that processing one
        event may take (default 10,000,000, about a second; ``0`` for no
        limit): an event that takes more (a ``where`` condition that does
        not end, detections that multiply) raises
        :class:`InferenceLimitError` instead of hanging.
        ``state`` is a :meth:`snapshot` of an engine of the same rules and
        options, whose state the new engine takes up (:meth:`restore`).
        ``analysis=True`` has the engine keep, from the same reading of the
        file, what :meth:`rule_file` and :meth:`findings` tell, which then
        read the file no more.
        Raises :class:`RuleError` with the file, line and column of a problem.
        """
        extra = ["explain(true)"] if explain else []
        extra += trust_option(trusted, sandbox)
        extra.extend(_limit_options(inference_limit))
        if analysis:
            extra.append("analysis(true)")
        engine = cls._create(rules_source(path, static), "", policy, max_age, lateness, extra, max_queued)
        engine._source = (str(Path(path)), None)
        engine._static = tuple(str(Path(f)) for f in static)
        return engine._restored(state)

    @classmethod
    def from_string(
        cls,
        text: str,
        policy: Optional[str] = None,
        source: str = "<string>",
        *,
        trusted: bool = False,
        sandbox: Optional[bool] = None,
        max_age: Optional[float] = None,
        lateness: Optional[float] = None,
        only_rules: Optional[Sequence[int]] = None,
        report: Optional[Sequence[str]] = None,
        explain: bool = False,
        max_queued: Optional[int] = MAX_QUEUED,
        inference_limit: Optional[int] = None,
        static_texts: Sequence[tuple[str, str]] = (),
        state: Optional[bytes] = None,
    ) -> "Engine":
        """Compile rules given as text; ``source`` names them in errors.
        The options are those of :meth:`from_file` (``static_texts`` gives
        static knowledge as (name, text) pairs rather than files), and two
        for running part of a rule set (Spark replay runs each stage so):
        ``only_rules`` compiles only the event rules with these 1-based
        numbers in file order (static rules and directives all apply), and
        ``report`` reports exactly these events (``"name/arity"``),
        whatever ``:- print_events`` says; ``state`` as for
        :meth:`from_file`."""
        extra: list[str] = ["explain(true)"] if explain else []
        extra += trust_option(trusted, sandbox)
        extra.extend(_limit_options(inference_limit))
        if only_rules is not None:
            extra.append(f"only_rules([{', '.join(str(int(i)) for i in only_rules)}])")
        if report is not None:
            specs = [spec.rpartition("/") for spec in report]
            extra.append(f"report([{', '.join(f'{quote_atom(n)}/{int(a)}' for n, _, a in specs)}])")
        check_unicode(text, source)
        engine = cls._create(static_text_source(static_texts, f"text({quote_atom(source)})"), text, policy, max_age,
                             lateness, extra, max_queued)
        engine._source = (source, text)
        return engine._restored(state)

    def _restored(self, state: Optional[bytes]) -> "Engine":
        """This new engine, with the state of the snapshot ``state`` if one is
        given (closed if it cannot take it up)."""
        if state is not None:
            try:
                self.restore(state)
            except BaseException:
                self.close()
                raise
        return self

    @classmethod
    def _create(
        cls,
        source: str,
        text: str,
        policy: Optional[str],
        max_age: Optional[float],
        lateness: Optional[float],
        extra: Sequence[str] = (),
        max_queued: Optional[int] = MAX_QUEUED,
    ) -> "Engine":
        options = list(extra)
        for name, value in (("max_age", max_age), ("lateness", lateness)):
            if value is not None:
                if not (isinstance(value, (int, float)) and 0 <= value < float("inf")):
                    raise ValueError(f"{name} must be a finite number of seconds >= 0, not {value!r}")
                options.append(f"{name}({value!r})")
        if policy is not None:
            options.append(f"policy({check_policy(policy)})")
        if max_queued is not None and (type(max_queued) is not int or max_queued < 0):
            raise ValueError(f"max_queued must be a whole number >= 0 or None, not {max_queued!r}")
        prolog = bridge()
        info, _ = prolog.request(f"create({source}, [{', '.join(options)}])", text)
        engine = cls(info["engine"], info, prolog, max_queued)
        engine._analysis = info.get("analysis")
        if info["decoded"]:
            for d in map(Decoded.from_json, info["decoded"]):
                warnings.warn(f"{d.file}:{d.line}:{d.column}: {d.message}", EtalisWarning, stacklevel=_outside_level())
        engine._max_age = max_age
        engine._trusted = "trusted(true)" in options
        engine._explain = "explain(true)" in options
        if info.get("ontologies"):
            try:
                engine._load_declared(info["ontologies"])
            except BaseException:
                engine.close()
                raise
        return engine

    # -- events in ----------------------------------------------------------

    @_one_at_a_time
    def emit(self, name: str, *args: Any, at: Any = None, start: Any = None, end: Any = None) -> Detections:
        """Process one event ``name(*args)`` at time ``at`` (or over
        ``[start, end]``) and return what it led to.

        Raises :class:`EventError` if the event is rejected, e.g. because its
        time is earlier than the last accepted one.
        """
        try:
            line = _event_line(name, args, at, start, end)
        except EventError:      # counted as the engine counts a bad row
            self._stats.rejected += 1
            raise
        return self._emit_line(line, f"event {name!r}")

    @_one_at_a_time
    def emit_graph(self, graph: Any, at: Any = None, stream: Any = None) -> Detections:
        """Process the :class:`rdflib.Graph` ``graph`` as one graph event
        ``graph(G)`` (see :mod:`etalis_py.inputs.graphs`) at time ``at``, or, if
        not given, at the time of the graph's own ``prov:generatedAtTime``
        triple about its name (which is then not part of the event); on the
        stream ``stream`` (an IRI, a str or ``rdflib.URIRef``) if given.

        Raises :class:`EventError` if the event is rejected.
        """
        from ..inputs.graphs import rdflib_graph_line

        try:
            line = rdflib_graph_line(graph, at, stream)
        except (ValueError, TypeError) as e:  # InvalidEvent among them
            raise EventError(f"graph event: {str(e).split(';')[0]}") from None
        return self._emit_line(line, "graph event")

    def _emit_line(self, line: str, what: str) -> Detections:
        """Process one event's input line; raise EventError if the engine
        rejects it."""
        result = self._feed("lines", line, form="row")[0]
        if result.stopped:
            raise result.stopped
        if result.rejected:
            raise EventError(f"{what} rejected: {result.rejected[0].reason}")
        return self._deliver(result)

    @_one_at_a_time
    def emit_many(self, events: Iterable[Any], batch_size: int = 10_000, *, collect: bool = True) -> BatchResult:
        """Process many events in time order, crossing into Prolog once per
        ``batch_size`` events.

        Items may be :class:`Event` values, dicts (``event``, ``args``,
        ``time`` or ``start``/``end``) or tuples ``(name, args, time)``.
        Invalid or out-of-order items are rejected (not raised) with their
        1-based position and reason, as ``etalis run`` rejects bad rows, and
        the others are processed: a bad item never costs its batch.  Bad
        are: a name that is not a non-empty str, args not a list or tuple,
        a time that is not a finite number, datetime or ISO 8601 text, a
        NaN, infinite, None or unknown argument, lists nested deeper than
        100 levels, an int of more than 4300 digits, a text with a lone
        surrogate (docs/language.md, "Bad input, row by row").  The result
        holds the detections; with ``collect=False`` it holds none, and
        those that no callback took wait in the pull queue
        (:meth:`detections`).  A pandas DataFrame goes to :meth:`emit_frame`.
        """
        if _is_frame(events):
            raise TypeError(
                "emit_many() takes events, not the rows of a DataFrame (it would iterate over the column names): "
                "use emit_frame(df, event=..., args=..., time=...)"
            )
        rejected: list[Rejection] = []
        if self._columns():
            return self._feed_all(self._packed_items(events, batch_size, rejected), rejected, batch_size, collect)

        def terms() -> Iterator[str]:
            names: dict[str, str] = {}
            for position, item in enumerate(events, start=1):
                try:
                    yield event_element(item, names)
                except (ValueError, RecursionError) as e:  # InvalidEvent is a ValueError
                    rejected.append(Rejection(position, str(e).split(";")[0]))
                    self._stats.rejected += 1
                    yield NOTHING

        return self._feed_all(terms(), rejected, batch_size, collect)

    def _packed_items(self, events: Iterable[Any], batch_size: int, rejected: list[Rejection]) -> Iterator[Packed]:
        """The batches of emit_many's items, packed."""
        names: dict[str, str] = {}
        first = 1
        for items in batches(events, batch_size):
            before = len(rejected)
            yield items_packed(items, first, names, rejected)
            self._stats.rejected += len(rejected) - before
            first += len(items)

    def _columns(self) -> bool:
        """Batches cross as packed columns (see :mod:`etalis_py.bridge.columns`)."""
        return not text_path_forced() and self._prolog.columns()

    @_one_at_a_time
    def emit_frame(
        self,
        frame: Any,
        *,
        event: Optional[str] = None,
        event_col: Optional[str] = None,
        args: Sequence[str] = (),
        time: Optional[str] = None,
        start: Optional[str] = None,
        end: Optional[str] = None,
        tz: Zone = None,
        batch_size: int = 10_000,
        collect: bool = True,
    ) -> BatchResult:
        """Process the rows of a pandas DataFrame (or a pyarrow Table) as
        events, in their order, converting whole columns at once.

        ``event`` names every row's event, or ``event_col`` is the column
        of names; ``args`` are the argument columns, in order; ``time`` is
        the time column, or ``start`` and ``end`` give intervals.  Columns
        of ints, floats, bools, texts, categories and datetimes (naive ones
        in ``tz``, default UTC) become arguments (a datetime as seconds);
        times are numbers (seconds), datetimes or ISO 8601 texts.  A row
        with a missing (NaN, None, NaT) or impossible value is rejected with
        its 1-based position and the reason, as by :meth:`emit_many`; a
        column of a type that cannot be an argument raises TypeError.
        """
        from ..inputs.frames import frame_terms

        packed = self._columns()
        terms, rejected = frame_terms(
            frame, event=event, event_col=event_col, args=args, time=time, start=start, end=end, tz=tz, packed=packed
        )
        self._stats.rejected += len(rejected)
        if isinstance(terms, Packed):
            return self._feed_all(terms.batches(batch_size), rejected, batch_size, collect)
        return self._feed_all(terms, rejected, batch_size, collect)

    @_one_at_a_time
    def emit_file(self, path: Union[str, "os.PathLike[str]"], *, input_format: Optional[str] = None,
                  batch_size: int = BATCH_LINES, collect: bool = True,
                  **mapping: Unpack[MappingOptions]) -> BatchResult:
        """Process the events of a stream file as ``etalis run`` reads it:
        its format (``input_format``, else by its suffix) is one of the
        registry's (:mod:`etalis_py.inputs.registry`: events, jsonl, csv,
        parquet, nquads, trig, jsonld, and those other packages register);
        a table's rows are mapped by the options of ``etalis run``
        (``event`` or ``event_col``, ``args``, ``time``, ``time_format``,
        ``time_zone``, ``columns``, ``graph_col``, ``stream``).  A bad line
        is rejected with its line number and reason, and every line is
        accepted or rejected; the result is :meth:`emit_many`'s."""
        options = Mapping.of(**mapping) if mapping else None
        batches = read_batches(Path(path), options, batch_size, input_format, packed=self._columns())
        return self._feed_all(batches, [], batch_size, collect)

    def _feed_all(self, terms: Iterable[Union[str, Packed, list[str], Batch]], rejected: list[Rejection],
                  batch_size: int, collect: bool) -> BatchResult:
        """Feed input terms (see :func:`batch_list`) ``batch_size`` at a
        time, or batches already made (packed columns, lists of terms, or
        a reader's batches, with their own line numbers and rejections);
        ``rejected`` holds (or gets, as ``terms`` is consumed) the items
        Python rejected (and counted), whose terms are NOTHING so that the
        engine's line numbers are positions."""
        accepted = 0
        by_engine: list[Rejection] = []
        warnings: list[Rejection] = []
        failures: list[tuple[Detection, BaseException]] = []
        detections = Detections()
        first = 1
        items = iter(terms)
        while True:
            head = next(items, None)
            if head is None:
                break
            batch: Union[Packed, list[str], Batch]
            if isinstance(head, str):
                batch = [head, *islice(items, max(1, batch_size) - 1)]  # type: ignore[list-item]
            elif isinstance(head, Batch):
                batch, first = head, head.first_line
                rejected.extend(head.rejected)
                self._stats.rejected += len(head.rejected)
            else:
                batch = head
            try:
                accepted += self._feed_batch(batch, first, by_engine, warnings, detections, collect, failures)
            except InferenceLimitError as e:
                # the items before the stop keep their reasons; those after it were not read
                e.rejected = sorted((r for r in rejected + by_engine if r.line < e.line), key=lambda r: r.line)
                e.warnings = list(warnings)
                raise
            first = batch.end_line if isinstance(batch, Batch) else first + len(batch)
        if failures:
            self._callbacks_failed(failures, detections)
        rejected = sorted(rejected + by_engine, key=lambda r: r.line)
        return BatchResult(accepted, rejected, detections, warnings)

    def _feed_batch(
        self,
        batch: Union[Packed, list[str], Batch],
        first: int,
        rejected: list[Rejection],
        warnings: list[Rejection],
        detections: Detections,
        collect: bool,
        failures: list[tuple[Detection, BaseException]],
    ) -> int:
        if isinstance(batch, Packed):
            result = self._feed_columns(batch, first)
        elif isinstance(batch, Batch):
            result = (self._feed_columns(batch.packed, first) if batch.packed is not None
                      else self._feed("lines" if batch.terms is None else f"list({batch.terms})", batch.text,
                                      first=first, form="row")[0])
        else:
            result = self._feed(f"list({len(batch)})", batch_list(batch), first=first, form="row")[0]
        rejected.extend(result.rejected)
        warnings.extend(result.warnings)
        found = self._deliver(result, collect, failures)
        if result.stopped:
            # the caller gets no result: what it would have held waits in the pull queue
            self._queue_up([d for d in detections + found if not self._claimed(d)])
            raise result.stopped
        detections.extend(found)
        return result.accepted

    @_one_at_a_time
    def feed_text(self, text: str, first_line: int = 1, terms: Optional[int] = None) -> FeedResult:
        """Process event lines (one Prolog term a line: ``event(a(1), 5).``,
        ``event(a(1), [5, 7]).`` or a bare ``a(1).`` at its line number),
        or, if ``terms`` is given, a batch list of that many terms (see
        :func:`batch_list`), which the engine reads much faster.

        ``first_line`` is the line number of the text's first line in its
        file.  Detections stay JSON lines; they are counted but neither
        queued nor passed to callbacks.  An event over the inference limit
        stops the batch: see ``FeedResult.stopped``.
        """
        _must_be_text(text, "feed_text() takes event lines, which")
        return self._feed("lines" if terms is None else f"list({int(terms)})", text, first=first_line)[0]

    @_one_at_a_time
    def feed_packed(self, batch: Packed, first_line: int = 1) -> FeedResult:
        """As :meth:`feed_text` for a batch of packed columns (see
        :mod:`etalis_py.bridge.columns`; :meth:`columnar` says whether they can
        cross), row i standing for line ``first_line + i``."""
        return self._feed(f"columns({len(batch)}, {batch.spec()})", first=first_line)[0]

    def columnar(self) -> bool:
        """Batches can cross as packed columns: the foreign library is
        there, and ``ETALIS_TEXT_PATH`` does not ask for text."""
        return self._columns()

    @_one_at_a_time
    def feed_segments(self, segments: Sequence[str], resets: Sequence[bool],
                      terms: Optional[Sequence[int]] = None, states: Optional[Sequence[KeyState]] = None,
                      ) -> list[FeedResult]:
        """Process several texts of event lines in one crossing, each as by
        :meth:`feed_text` (line numbers from 1 in each), after a
        :meth:`reset` where ``resets`` says so; with ``terms``, each text
        is a batch list of that many terms.  Spark replay feeds many keys'
        events this way.  With ``states`` (one a segment), each key's
        events are fed into the key's own state, all in one crossing, as
        :meth:`restore`, the feeds and :meth:`snapshot` one after the
        other would: a result that ends a key has its ``snapshot`` (and
        ``due``) if its events changed it.  A Spark stream swaps its keys'
        states this way."""
        self._check_open()
        if len(segments) != len(resets) or (terms is not None and len(terms) != len(segments)):
            raise ValueError("give one reset flag (and one count of terms) per segment")
        if not segments:
            return []
        batch = "lines" if terms is None else f"list([{','.join(str(int(n)) for n in terms)}])"
        return self._feed(batch, "\x1d".join(segments), resets=resets, states=states)

    @_one_at_a_time
    def feed_packed_segments(self, batch: Packed, resets: Sequence[bool], counts: Sequence[int],
                             states: Optional[Sequence[KeyState]] = None) -> list[FeedResult]:
        """As :meth:`feed_segments` with terms, for one batch of packed
        columns (see :meth:`feed_packed`) whose rows are the segments'
        events, ``counts[i]`` of them in segment i."""
        self._check_open()
        if len(counts) != len(resets) or sum(counts) != len(batch):
            raise ValueError("give one reset flag and one count per segment, the counts adding up to the batch")
        if not counts:
            return []
        return self._feed(f"columns([{','.join(str(int(n)) for n in counts)}], {batch.spec()})", resets=resets,
                          states=states)

    def _feed(self, batch: str, payload: str = "", *, first: int = 1, form: str = "object",
              resets: Optional[Sequence[bool]] = None, states: Optional[Sequence[KeyState]] = None,
              ) -> list[FeedResult]:
        """Send the engine one feed request (see prolog/etalis.pl): ``batch``
        (``lines``, ``list(N)``, ``columns(N, Spec)``, ``flush(Timers)`` or
        ``advance(T)``) with ``payload``, its first event at line ``first``,
        the detections as ``form`` (``object``: JSON lines; ``row``: rows
        for :meth:`_deliver`; ``packed``: rows read from the packed
        hand-over).  With ``resets``, the batch is segments, each fed after
        a :meth:`reset` where ``resets`` says so; with ``states`` too,
        the segments are keys' events fed into their states (see
        :meth:`feed_segments`).  The results, one a segment, are counted
        here and only here: the event stopped at a limit (not processed)
        counts as rejected, so that every event is accepted or rejected
        (the engine counts so for the snapshots of a feed of states, and
        returns the counters).  A stopped segment raises, once counted."""
        self._check_open()
        options = [f"first({int(first)})", f"format({form})"]
        if resets is not None:
            options.append(f"segments([{','.join('1' if r else '0' for r in resets)}])")
        if states is not None:
            if resets is None or len(states) != len(resets):
                raise ValueError("give one state (a snapshot or None, and whether to take it) per segment")
            counters = ",".join(str(getattr(self._stats, c)) for c in SNAPSHOT_COUNTERS)
            starts = ",".join(str(len(k.restore or b"")) for k in states)
            options.append(f"states([{counters}], [{starts}], [{','.join('1' if k.take else '0' for k in states)}])")
            # each byte of a snapshot crosses as one character of code 0..255
            payload = b"".join(k.restore for k in states if k.restore).decode("latin-1") + payload
        request = f"feed({self._name}, {batch}, [{', '.join(options)}])"
        with self._prolog.held():       # the packed detections are read before another request
            header, body = self._prolog.request(request, payload)
            rows = unpacked_rows(header["packed"], len(body)) if form == "packed" else None
        taken = ""
        if states is not None:          # the detections' text, then the snapshots' contents
            body, taken = body[:header["length"]], body[header["length"]:]
        replies = [(header, body)] if resets is None else list(zip(header["segments"], body.split("\x1d")))
        results = []
        at = 0
        for h, detections in replies:
            result = _feed_result(h, detections, rows)
            if states is None:
                self._stats.accepted += result.accepted
                self._stats.raised += result.raised
                self._stats.rejected += len(result.rejected) + (result.stopped is not None)
                self._stats.detections += detections.count("\n")
            elif h.get("state"):
                state = h["state"]
                result = dataclasses.replace(
                    result, snapshot=_snapshot_bytes(state["head"], taken[at:at + state["length"]].encode("latin-1")),
                    due=None if state["due"] in (None, "none") else float(state["due"]))
                at += state["length"]
            if result.stopped and resets is not None:
                self._took_states(header)
                raise result.stopped
            results.append(result)
        self._took_states(header)
        return results

    def _took_states(self, header: dict[str, Any]) -> None:
        """After a feed of keys' states: the counters, rules and prefixes of
        the state the engine holds now."""
        if "counters" in header:
            for name, value in zip(SNAPSHOT_COUNTERS, header["counters"]):
                setattr(self._stats, name, int(value))
            self._restored_rules(header["restored"])

    def _feed_columns(self, batch: Packed, first: int) -> FeedResult:
        """Feed packed columns, the detections as rows for :meth:`_deliver`:
        packed ones carry no provenance, so with explain(true) they come
        back as rows."""
        return self._feed(f"columns({len(batch)}, {batch.spec()})", first=first,
                          form="row" if self._explain else "packed")[0]

    def _deliver(self, result: FeedResult, returned: bool = True,
                 failures: Optional[list[tuple[Detection, BaseException]]] = None) -> Detections:
        """The detections of ``result`` (rows), each passed to its callbacks; if
        they are not ``returned``, those that no callback took are queued
        for :meth:`detections` (the oldest dropped past ``max_queued``).
        A callback that raises does not stop the delivery: its errors go to
        ``failures``, or, if that is not given, raise :class:`CallbackError`
        once all are delivered (what would have been returned then waits in
        the pull queue)."""
        if result.rows is not None:
            found = Detections(map(Detection.from_row, result.rows))
        else:
            found = parse_rows(result.detection_lines)
        unseen: list[Detection] = []
        failed: list[tuple[Detection, BaseException]] = []
        if not self._callbacks:  # nothing to call: all of them wait, or none
            unseen = [] if returned else found
        else:
            everything = self._callbacks.get(None, [])
            for d in found:
                callbacks = self._callbacks.get(d.event, []) + everything
                for cb in callbacks:
                    try:
                        cb(d)
                    except Exception as e:
                        failed.append((d, e))
                if not callbacks and not returned:
                    unseen.append(d)
        if unseen:
            self._queue_up(unseen)
        if failures is not None:
            failures.extend(failed)
        elif failed:
            self._callbacks_failed(failed, found if returned else [])
        return found if returned else Detections()

    def _callbacks_failed(self, failed: list[tuple[Detection, BaseException]], kept: Sequence[Detection]) -> None:
        """Raise :class:`CallbackError` for the callbacks' ``failed`` calls;
        the detections a call would have returned (``kept``) that no
        callback took wait in the pull queue."""
        self._queue_up([d for d in kept if not self._claimed(d)])
        raise CallbackError(failed) from failed[0][1]

    def _claimed(self, d: Detection) -> bool:
        """Some callback takes ``d``."""
        return bool(self._callbacks.get(d.event) or self._callbacks.get(None))

    def _queue_up(self, unseen: list[Detection]) -> None:
        bound = self._queue.maxlen
        overflow = 0 if bound is None else len(self._queue) + len(unseen) - bound
        if overflow > 0:
            if not self._stats.dropped:
                warnings.warn(
                    f"the pull queue holds at most {bound} detections: the oldest are dropped "
                    "(take them with detections(), register a callback with on(), or give max_queued=)",
                    RuntimeWarning,
                    stacklevel=_outside_level(),
                )
            self._stats.dropped += overflow
        self._queue.extend(unseen)

    @_one_at_a_time
    def flush(self, timers: bool = True) -> Detections:
        """At the end of a stream, process the events that a lateness still
        holds back, then fire the timers still pending (original ETALIS's
        ``exceptionAlarm``), in time order, and return what they led to.
        A later event must not be earlier than the last of them.  With
        ``timers=False`` the timers stay pending (and in a snapshot): the
        end of a finite input need not be the end of time."""
        result = self._feed(f"flush({'true' if timers else 'false'})", form="row")[0]
        for w in result.warnings:
            warnings.warn(EtalisWarning(f"at the end of the stream: {w.reason}"), stacklevel=2)
        return self._deliver(result)

    @_one_at_a_time
    def flush_lines(self, warned: Optional[list[Rejection]] = None, timers: bool = True) -> str:
        """As :meth:`flush`, with the detections as JSON lines (``etalis run``);
        the warnings go to ``warned`` (their line is 0)."""
        result = self._feed(f"flush({'true' if timers else 'false'})")[0]
        if warned is not None:
            warned.extend(result.warnings)
        return result.detection_lines

    @_one_at_a_time
    def advance_to(self, t: Any) -> Detections:
        """Move the engine's time on to ``t`` (seconds, or a datetime) with
        no event, as the machine's clock moves on while a live stream is
        idle: the events a lateness holds back up to ``t`` are processed and
        the timers due by ``t`` fire (so ``fnot`` deadlines and timeouts
        are reported when they are due, not at the next event), in time
        order; return what they led to.  A later event must not be
        earlier than ``t``; a ``t`` before the last event changes nothing."""
        result = self._feed(f"advance({number_text(to_time(t))})", form="row")[0]
        for w in result.warnings:
            warnings.warn(EtalisWarning(w.reason), stacklevel=2)
        return self._deliver(result)

    @_one_at_a_time
    def advance_lines(self, t: Any) -> FeedResult:
        """As :meth:`advance_to`, with the detections as JSON lines and the
        counts (``etalis run --clock wall``); the warnings' line is 0."""
        return self._feed(f"advance({number_text(to_time(t))})")[0]

    def next_due(self) -> Optional[float]:
        """The earliest time to which :meth:`advance_to` would do something
        (the time of the first event the lateness holds back, or the due
        time of the first pending timer), or None when nothing waits."""
        self._check_open()
        header, _ = self._prolog.request(f"due({self._name})")
        due = header.get("due")
        return None if due in (None, "none") else float(due)

    # -- detections out -----------------------------------------------------

    @_one_at_a_time
    def on(self, name: Optional[str], callback: Callback) -> None:
        """Call ``callback(detection)`` for each detection of event ``name``
        (every reported event if ``name`` is None), as it is detected.

        Warns (:class:`EtalisWarning`) if no rule reports an event ``name``:
        the callback would never be called.  Raises TypeError if
        ``callback`` cannot be called (it failed later, at a detection)."""
        if not callable(callback):
            raise TypeError(f"Engine.on({name!r}, ...): the callback {callback!r} is not callable: "
                            "give a function of one detection")
        reported = sorted({p.rpartition("/")[0] for p in self.printed})
        if name is not None and name not in reported:
            warnings.warn(f"Engine.on({name!r}): no rule reports {name!r} (reported: "
                          f"{', '.join(reported) or 'nothing'}), so the callback is never called",
                          EtalisWarning, stacklevel=2)
        self._callbacks.setdefault(name, []).append(callback)

    def findings(self) -> list["Finding"]:
        """The findings of ``etalis check`` for the rules the engine was
        made from (not those added later), with its ``max_age``: mistakes
        such as an unknown event, unbounded memory or a negation race, each
        with its position and a hint (docs/language.md, Checking rules)."""
        from ..rules.findings import findings  # its checks import rdflib, which an engine without them never needs

        return findings(self.rule_file(), self._max_age)

    def rule_file(self) -> RuleFile:
        """What ``etalis check`` knows of the rules the engine was made
        from (not those added later): read again, unless the engine was
        made with ``analysis=True``."""
        source, text = self._source
        if self._analysis is not None:
            return RuleFile.from_header(source, self._analysis)
        return RuleFile.read(source, text, self._static)

    @_one_at_a_time
    def off(self, name: Optional[str], callback: Optional[Callback] = None) -> None:
        """Stop calling ``callback`` (every callback if None) for event
        ``name`` (None: the callbacks registered with ``on(None, ...)``).
        Raises ValueError if no such callback is registered."""
        registered = self._callbacks.get(name, [])
        if callback is None and registered:
            del self._callbacks[name]
        elif callback is not None and callback in registered:
            registered.remove(callback)
            if not registered:
                del self._callbacks[name]
        else:
            what = "no callback" if callback is None else f"callback {callback!r} is not"
            raise ValueError(f"{what} registered for {'every event' if name is None else repr(name)}")

    @_one_at_a_time
    def detections(self) -> Detections:
        """Take the detections that wait in the pull queue, in the order
        they were made (a list with ``to_frame()`` for pandas).  Only
        what was not delivered waits there: a detection that a callback
        took, or that :meth:`emit`, :meth:`emit_many` or :meth:`flush`
        returned, is not queued; ``emit_many(..., collect=False)`` leaves
        the rest here."""
        taken = Detections(self._queue)
        self._queue.clear()
        return taken

    # -- live rule changes -----------------------------------------------------

    @_one_at_a_time
    def add_rules(self, text: str, source: str = "<added>") -> None:
        """Add rules (and static rules) while events flow.  Goals identical
        to those of the rules already loaded are shared, so their pending
        goals carry on; the pending goals of other rules are untouched.
        Raises :class:`RuleError` (and changes nothing) for a bad rule.
        The rules are sandboxed unless the engine was made trusted."""
        self._check_open()
        check_unicode(text, source)
        info, _ = self._prolog.request(f"add_rules({self._name}, text({quote_atom(source)}))", text)
        self.rule_count, self.goal_count = info["rules"], info["goals"]
        self.printed = list(info["printed"])
        self.prefixes = dict(info["prefixes"])
        if info.get("ontologies"):
            self._load_declared(info["ontologies"])

    @_one_at_a_time
    def remove_rule(self, label: str) -> None:
        """Remove the rule labelled ``label``, with the goals (and pending
        goals) that no other rule uses."""
        self._check_open()
        info, _ = self._prolog.request(f"remove_rule({self._name}, {quote_atom(label)})")
        self.rule_count, self.goal_count = info["rules"], info["goals"]
        self.printed = list(info["printed"])

    # -- progress ---------------------------------------------------------------

    @_one_at_a_time
    def pending(self, rule: str) -> list[PendingPart]:
        """How much of a rule's pattern is fulfilled: each occurrence that
        matched a part of it and waits for the rest, with its interval and
        bindings.  ``rule`` is a label, or ``"line N"`` for an unlabelled
        rule."""
        self._check_open()
        header, _ = self._prolog.request(f"pending({self._name}, {quote_atom(rule)})")
        return [
            PendingPart(p["goal"], p["pattern"], p["matched"], p["side"], p["waiting"], p["start"], p["end"])
            for p in header["pending"]
        ]

    # -- state ----------------------------------------------------------------

    @_one_at_a_time
    def stats(self) -> EngineStats:
        """Counters, and the live pending goals per binary goal."""
        self._check_open()
        header, _ = self._prolog.request(f"stats({self._name})")
        self._stats.pending = header["pending"]
        self._stats.pending_by_goal = list(header["stores"])
        self._stats.pending_by_rule = {r["rule"]: r["pending"] for r in header["rules"]}
        self._stats.buffered = header["buffered"]
        self._stats.skip_kept = header["skip_kept"]
        self._stats.queued = len(self._queue)
        return EngineStats(**vars(self._stats))

    @_one_at_a_time
    def reset(self) -> None:
        """Forget all pending goals and the time of the last event: the
        engine starts afresh with the same rules (and background knowledge)."""
        self._check_open()
        self._prolog.request(f"reset({self._name})")

    # -- snapshots ---------------------------------------------------------------

    @_one_at_a_time
    def snapshot(self) -> bytes:
        """The engine's state as bytes, for :meth:`restore` in an engine of
        the same rules and options, in this process or another: everything
        that decides later detections (pending goals, aggregate windows,
        runs, timers, the reorder buffer, the time of the last event, the
        rules added or removed while running, the facts the rules asserted)
        and the counters of :meth:`stats` (docs/python-api.md, "Snapshots").
        Not kept: the background knowledge, callbacks and the pull queue."""
        self._check_open()
        counters = ", ".join(str(getattr(self._stats, c)) for c in SNAPSHOT_COUNTERS)
        info, payload = self._prolog.request_bytes(f"snapshot({self._name}, [{counters}])")
        return _snapshot_bytes(info["snapshot_head"], payload)

    @_one_at_a_time
    def restore(self, data: bytes) -> None:
        """Replace the engine's whole state by that of the :meth:`snapshot`
        ``data``, without compiling its rules again (unless the snapshot's
        engine changed its rules while running: the same changes are made,
        after going back to the rules this engine was made with if its own
        changes were others).  The snapshot of a new engine of the
        same rules starts a fresh state, as :meth:`reset` does, and also
        sets the counters of :meth:`stats` to 0.

        Raises :class:`SnapshotError`, and leaves the engine as it was, for
        bytes that are no snapshot, or one of other rules or options, of
        another format or SWI-Prolog version, truncated or damaged."""
        self._check_open()
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"restore() takes the bytes of a snapshot, not {type(data).__name__}")
        info, _ = self._prolog.request_bytes(f"restore({self._name})", bytes(data))
        counters = list(info["counters"]) + [0] * len(SNAPSHOT_COUNTERS)
        for name, value in zip(SNAPSHOT_COUNTERS, counters):
            setattr(self._stats, name, int(value))
        self._restored_rules(info)

    def _restored_rules(self, info: dict[str, Any]) -> None:
        """The rules, printed events and prefixes of a restored state (the
        engine's own, unless the snapshot changed the rules)."""
        if "rules" in info:
            self.rule_count, self.goal_count = info["rules"], info["goals"]
            self.printed = list(info["printed"])
        if "prefixes" in info:
            self.prefixes = dict(info["prefixes"])

    def __reduce__(self) -> NoReturn:
        raise TypeError("an Engine cannot be pickled: its rules and state live in SWI-Prolog. Take its state "
                        "as bytes with engine.snapshot(), and give them to Engine.from_file(path, state=data) "
                        "(or engine.restore(data)) of the same rules")

    # -- background knowledge ---------------------------------------------------

    @_one_at_a_time
    def load_ontology(
        self, source: Union["OntologySource", Sequence["OntologySource"]], entailment: str = "rdfs"
    ) -> "KnowledgeStats":
        """Load RDF background knowledge for ``rdf(S, P, O)`` and
        ``isa(X, Class)`` in ``where`` conditions and static rules.

        ``source`` is a file (Turtle, RDF/XML or N-Triples, told by its
        extension), an :class:`rdflib.Graph`, or a list of them.  The engine's
        knowledge becomes the closure, under ``entailment`` (``rdfs``,
        ``owlrl`` or ``none``, computed once, here), of everything loaded into
        it so far; every load of an engine must use the same entailment.
        Raises :class:`~etalis_py.rdf.knowledge.OntologyError` naming the file
        (and line) that cannot be read.
        """
        from rdflib import Graph

        from ..rdf.knowledge import KnowledgeBase

        self._check_open()
        sources = [source] if isinstance(source, (str, os.PathLike, Graph)) else list(source)
        if self._knowledge is None:
            self._knowledge = KnowledgeBase(self._name, self._prolog)
        return self._knowledge.load(sources, entailment)

    def _load_declared(self, ontologies: list[dict[str, Any]]) -> None:
        """Load the ontologies of the rules' ``:- ontology(File)`` directives."""
        from ..rdf.knowledge import OntologyError

        if not self._trusted:
            for o in ontologies:
                self._confine_ontology(o)
        first = ontologies[0]
        for o in ontologies:
            if o["entailment"] != first["entailment"]:
                raise RuleError(
                    f"ontology {o['path']} asks for {o['entailment']} entailment, "
                    f"but line {first['line']} for {first['entailment']}",
                    file=str(o["file"]), line=int(o["line"]), column=1,
                    hint="an engine's ontologies are closed together: give them all the same entailment",
                )
        try:
            self.load_ontology([str(o["path"]) for o in ontologies], str(first["entailment"]))
        except OntologyError as e:
            declared = next((o for o in ontologies if o["path"] == e.file), first)
            raise type(e)(
                f"{e.message} (an ontology of {declared['file']}, line {declared['line']})",
                file=e.file, line=e.line, hint=e.hint,
            ) from None

    @staticmethod
    def _confine_ontology(declared: dict[str, Any]) -> None:
        """An untrusted rule file may declare only the ontologies of its own
        folder (and below) and those shipped with etalis-py: a file from
        elsewhere must not read any RDF file of the machine into what its
        rules can query."""
        path = Path(str(declared["path"])).resolve()
        roots = (Path(str(declared["file"])).resolve().parent, prolog_dir().parent / "ontologies")
        if not any(path.is_relative_to(root.resolve()) for root in roots):
            raise RuleError(
                f"sandbox: the ontology {declared['path']} lies outside the rule file's folder",
                file=str(declared["file"]), line=int(declared["line"]), column=1,
                hint="load it yourself with --ontology FILE or engine.load_ontology(FILE), "
                     "or trust the rule file (--trusted, trusted=True)",
            )

    @_one_at_a_time
    def close(self) -> None:
        """Free the engine's rules and pending goals."""
        if not self._closed:
            self._closed = True
            self._prolog.request(f"destroy({self._name})")

    def _check_open(self) -> None:
        if self._closed:
            raise EtalisError("the engine is closed")

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Engine {self._name}: {self.rule_count} rules, policy {self.policy}>"


def _event_line(name: str, args: tuple[Any, ...], at: Any, start: Any, end: Any) -> str:
    """The input line of :meth:`Engine.emit`'s event, or EventError."""
    if at is not None:
        if start is not None or end is not None:
            raise EventError("give either at= or start= and end=, not both")
        t1 = t2 = to_time(at)
    elif start is not None and end is not None:
        t1, t2 = to_time(start), to_time(end)
    else:
        raise EventError(f"event {name!r} needs a time: at=T, or start=T1 and end=T2")
    try:
        return Event(name, args, t1, t2).to_prolog()
    except (ValueError, RecursionError) as e:  # InvalidEvent among them; an int of too many digits
        raise EventError(f"event {name!r}: {str(e).split(';')[0]}") from None


def _snapshot_bytes(head: str, content: Union[bytes, memoryview]) -> bytes:
    """A snapshot's bytes from the engine's parts: the engine leaves the
    content's checksum to this side (hashlib hashes the bytes as they are,
    and the parts are joined once)."""
    checksum = hashlib.sha256(content).hexdigest().encode("ascii")
    return b"".join((head.encode("latin-1"), b"'", checksum, b"').\n", content))


def _feed_result(header: dict[str, Any], body: str, rows: Optional[list[list[Any]]] = None) -> FeedResult:
    """The FeedResult of a feed reply's header and detection lines (a
    flush or advance accepts and rejects nothing)."""
    rejected = [Rejection(int(line), str(reason)) for line, reason in header.get("rejected", [])]
    warnings = [Rejection(int(line), str(msg)) for line, msg in header["warnings"]]
    stopped = InferenceLimitError.from_reply(header["stopped"]) if "stopped" in header else None
    return FeedResult(header.get("accepted", 0), rejected, warnings, body, stopped, int(header.get("raised", 0)), rows)


def _limit_options(inference_limit: Optional[int]) -> list[str]:
    """The create option of an ``inference_limit`` (0: none)."""
    if inference_limit is None:
        return []
    if type(inference_limit) is not int or inference_limit < 0:
        raise ValueError(f"inference_limit must be a whole number >= 0 (0: no limit), not {inference_limit!r}")
    return [f"inference_limit({inference_limit or 'inf'})"]


def compile_listing(text: str, source: str = "<string>", policy: Optional[str] = None, path: Optional[str] = None,
                    *, trusted: bool = False, static: Sequence[str | os.PathLike[str]] = ()) -> str:
    """The binary goals and event-driven clauses that rules compile to
    (refused, as by :meth:`Engine.from_file`, unless safe or ``trusted``);
    ``static`` as for :meth:`Engine.from_file`, with ``path``."""
    options = f"[{', '.join(([f'policy({policy})'] if policy else []) + trust_option(trusted, None))}]"
    src = rules_source(path, static) if path else f"text({quote_atom(source)})"
    _, body = bridge().request(f"listing({src}, {options})", text)
    return body


def _is_frame(value: Any) -> bool:
    """Whether ``value`` is a pandas DataFrame (or a pyarrow Table), without importing pandas."""
    kind = type(value)
    return kind.__name__ in ("DataFrame", "Table") and kind.__module__.split(".")[0] in ("pandas", "pyarrow")


def _outside_level() -> int:
    """The ``stacklevel`` of the first caller outside this package, for a
    warning raised by its caller."""
    here = os.path.dirname(os.path.dirname(__file__))
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(here):
        frame = frame.f_back
        level += 1
    return level


def _must_be_text(text: object, what: str) -> None:
    if not isinstance(text, str):
        hint = " (decode bytes first: data.decode('utf-8'))" if isinstance(text, (bytes, bytearray)) else ""
        raise TypeError(f"{what} must be a str, not {type(text).__name__}{hint}")


def check_unicode(text: str, source: str) -> None:
    """Raise :class:`RuleError` at the first lone surrogate of ``text``: it
    has no UTF-8 form, so the rules could not cross to the engine; and
    TypeError if ``text`` is no str (bytes: decode them)."""
    _must_be_text(text, "rule text")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        before = text[: e.start]
        line = before.count("\n") + 1
        column = e.start - before.rfind("\n")
        raise RuleError(
            f"rule text is not valid Unicode: a lone surrogate U+{ord(text[e.start]):04X}",
            file=source, line=line, column=column,
            hint="surrogates come in pairs; the text was probably decoded wrongly (decode the file as UTF-8)",
        ) from None
