"""Events in, detections out: an engine's feed requests, whose counts are
made in one place (:meth:`Feeding._feed`), and the delivery of their
detections to callbacks, the caller and the pull queue."""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any, Optional, Union, Unpack

from ._prolog import PrologBridge
from .prolog_text import number_text
from ..errors import CallbackError, EtalisError, EtalisWarning, EventError, InferenceLimitError, Rejection
from ..events import NOTHING, Detection, Zone, batch_list, event_element, known_keys, to_time
from ..inputs.batch import BATCH_LINES, Batch
from ..inputs.frames import frame_terms
from .columns import Packed, batches, items_packed, text_path_forced, unpacked_detections
from ..inputs.mapping import Mapping, MappingOptions
from ..inputs.streams import read_batches
from ..outputs.detections import Detections
from .engine_options import event_line, is_frame, must_be_text, one_at_a_time, outside_level
from .results import (SNAPSHOT_COUNTERS, BatchResult, EngineStats, FeedResult, KeyState, feed_result, parse_rows,
                      snapshot_bytes)


Callback = Callable[[Detection], Any]


class Feeding:
    """The events-in and detections-out half of :class:`~etalis_py.bridge.engine.Engine`."""

    _name: str
    _prolog: PrologBridge
    _stats: EngineStats
    _queue: deque[Detection]
    _callbacks: dict[Optional[str], list[Callback]]
    _closed: bool
    _explain: bool
    printed: list[str]
    rule_count: int
    goal_count: int
    prefixes: dict[str, str]

    @one_at_a_time
    def emit(self, name: str, *args: Any, at: Any = None, start: Any = None, end: Any = None) -> Detections:
        """Process one event ``name(*args)`` at time ``at`` (or over
        ``[start, end]``) and return what it led to.

        Raises :class:`EventError` if the event is rejected, e.g. because its
        time is earlier than the last accepted one.
        """
        try:
            line = event_line(name, args, at, start, end)
        except EventError:      # counted as the engine counts a bad row
            self._stats.rejected += 1
            raise
        return self._emit_line(line, f"event {name!r}")

    @one_at_a_time
    def emit_graph(self, graph: Any, at: Any = None, stream: Any = None) -> Detections:
        """Process the :class:`rdflib.Graph` ``graph`` as one graph event
        ``graph(G)`` (see :mod:`etalis_py.inputs.graphs`) at time ``at``, or, if
        not given, at the time of the graph's own ``prov:generatedAtTime``
        triple about its name (which is then not part of the event); on the
        stream ``stream`` (an IRI, a str or ``rdflib.URIRef``) if given.

        Raises :class:`EventError` if the event is rejected.
        """
        # rdflib loads with the first graph event, not with every engine
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

    @one_at_a_time
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
        if is_frame(events):
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
                    known_keys(item)
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

    @one_at_a_time
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
        packed = self._columns()
        terms, rejected = frame_terms(
            frame, event=event, event_col=event_col, args=args, time=time, start=start, end=end, tz=tz, packed=packed
        )
        self._stats.rejected += len(rejected)
        if isinstance(terms, Packed):
            return self._feed_all(terms.batches(batch_size), rejected, batch_size, collect)
        return self._feed_all(terms, rejected, batch_size, collect)

    @one_at_a_time
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

    @one_at_a_time
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
        must_be_text(text, "feed_text() takes event lines, which")
        return self._feed("lines" if terms is None else f"list({int(terms)})", text, first=first_line)[0]

    @one_at_a_time
    def feed_packed(self, batch: Packed, first_line: int = 1) -> FeedResult:
        """As :meth:`feed_text` for a batch of packed columns (see
        :mod:`etalis_py.bridge.columns`; :meth:`columnar` says whether they can
        cross), row i standing for line ``first_line + i``."""
        return self._feed(f"columns({len(batch)}, {batch.spec()})", first=first_line)[0]

    def columnar(self) -> bool:
        """Batches can cross as packed columns: the foreign library is
        there, and ``ETALIS_TEXT_PATH`` does not ask for text."""
        return self._columns()

    @one_at_a_time
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

    @one_at_a_time
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
        for :meth:`_deliver`; ``packed``: Detection objects made from the
        packed hand-over).  With ``resets``, the batch is segments, each fed after
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
            found = unpacked_detections(header["packed"], len(body)) if form == "packed" else None
        taken = ""
        if states is not None:          # the detections' text, then the snapshots' contents
            body, taken = body[:header["length"]], body[header["length"]:]
        replies = [(header, body)] if resets is None else list(zip(header["segments"], body.split("\x1d")))
        results = []
        at = 0
        for h, detections in replies:
            result = feed_result(h, detections, found)
            if states is None:
                self._stats.accepted += result.accepted
                self._stats.raised += result.raised
                self._stats.rejected += len(result.rejected) + (result.stopped is not None)
                self._stats.detections += detections.count("\n")
            elif h.get("state"):
                state = h["state"]
                result = dataclasses.replace(
                    result, snapshot=snapshot_bytes(state["head"], taken[at:at + state["length"]].encode("latin-1")),
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
            self._took_state(header["counters"], header["restored"])

    def _took_state(self, counters: Sequence[int], info: dict[str, Any]) -> None:
        """The counters (a snapshot's, those it lacks 0), rules, printed
        events and prefixes of a state the engine took up (the engine's
        own rules, unless the state changed them)."""
        for name, value in zip(SNAPSHOT_COUNTERS, [*counters, *[0] * len(SNAPSHOT_COUNTERS)]):
            setattr(self._stats, name, int(value))
        if "rules" in info:
            self.rule_count, self.goal_count = info["rules"], info["goals"]
            self.printed = list(info["printed"])
        if "prefixes" in info:
            self.prefixes = dict(info["prefixes"])

    def _feed_columns(self, batch: Packed, first: int) -> FeedResult:
        """Feed packed columns, the detections for :meth:`_deliver`:
        packed ones carry no provenance, so with explain(true) they come
        back as rows."""
        return self._feed(f"columns({len(batch)}, {batch.spec()})", first=first,
                          form="row" if self._explain else "packed")[0]

    def _deliver(self, result: FeedResult, returned: bool = True,
                 failures: Optional[list[tuple[Detection, BaseException]]] = None) -> Detections:
        """The detections of ``result`` (made, or rows), each passed to its callbacks; if
        they are not ``returned``, those that no callback took are queued
        for :meth:`detections` (the oldest dropped past ``max_queued``).
        A callback that raises does not stop the delivery: its errors go to
        ``failures``, or, if that is not given, raise :class:`CallbackError`
        once all are delivered (what would have been returned then waits in
        the pull queue)."""
        if result.found is not None:
            found = Detections(result.found)
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
                    stacklevel=outside_level(),
                )
            self._stats.dropped += overflow
        self._queue.extend(unseen)

    @one_at_a_time
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

    @one_at_a_time
    def flush_lines(self, warned: Optional[list[Rejection]] = None, timers: bool = True) -> str:
        """As :meth:`flush`, with the detections as JSON lines (``etalis run``);
        the warnings go to ``warned`` (their line is 0)."""
        result = self._feed(f"flush({'true' if timers else 'false'})")[0]
        if warned is not None:
            warned.extend(result.warnings)
        return result.detection_lines

    @one_at_a_time
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

    @one_at_a_time
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

    @one_at_a_time
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

    @one_at_a_time
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

    @one_at_a_time
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

    def _check_open(self) -> None:
        if self._closed:
            raise EtalisError("the engine is closed")
