"""The stages of a stream (Python workers): Spark's ``transformWithStateInPandas``
calls a processor once per micro-batch and group; the processor feeds the
group's rows to the worker's engine of the stage, compiled once per worker
process, after restoring each key's state into it from Spark's state store
(a snapshot of the engine), and writes the state back when it changed."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..bridge.columns import Packed
from ..bridge.engine import Engine
from .mapping import MapSpec, mapped_batches
from .mapping import _key_text
from .names import (
    BATCH_ROWS, CORRUPT, KEY1, KIND, LINE, PACKED, REASON, ROW, S_KEY, S_KEYS, S_KIND, S_LINE, S_PATH, S_REASON, S_ROW,
    S_SIG, S_T, S_TKIND, TIME, TKIND, TRANSFER,
)
from .partition import StageSpec, _engine_for, _passed_on, _path_step, _stage_rows

if TYPE_CHECKING:
    import pandas as pd

try:        # PySpark's Python state API (it needs protobuf): the processors' base class
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor
except ImportError:     # pragma: no cover - an install without it cannot stream, and says so at detect_stream
    StatefulProcessor = object  # type: ignore[misc,assignment]

FILE = "__etalis_file"              # the file a row came from (input_file_name)
POS = "__etalis_pos"                # a row's position in its file, as its task read it
COUNTS = ("fed", "accepted", "rejected", "warnings", "unused", "mapping_rejected")   # a stage's counts, added up
GROUP = "__etalis_group"            # the column a stage's rows are grouped by
ROWS = "__etalis_rows"              # stage 1: a group's rows of one input batch, as an Arrow stream
PACKED_DDL = f"{GROUP} string, {ROWS} binary"
PASS = "~"                          # groups whose rows a stage passes on without feeding them
PASS_GROUPS = 8                     # groups of passed-on rows, spread over as many tasks

# what a stage gives the next one (and, from the last stage, the sink)
ROWS_DDL = ("kind string, sig string, line string, t double, row long, path string, keys array<string>, "
            "key string, record string, event string, args string, start double, end double, stage int, "
            "rejected_line string")
ROW_NAMES = [c.split(" ")[0] for c in ROWS_DDL.split(", ")]

# A group is a bucket of keys (a hash of the key): Spark calls a processor
# once per group and micro-batch, at a cost of milliseconds, so a group of
# many keys makes that cost a bucket's, not a key's, as replay's partitions
# feed many keys in one task.  Each key's engine state is an entry of the
# group's map state; the token and sequence number of its version tell a
# worker whether the engine it holds already has the state of a key.
BUCKETS = 64
KEY_DDL = "key string"
SNAPSHOT_DDL = "snapshot binary"
VERSION_DDL = "token string, seq long"
DUES_DDL = "dues string"            # a group's keys whose engines wait for time to move on (JSON: key -> due)
ADVANCED = "~advanced"              # the path of what time moving on raised (after an input row's, at a time)
GKEY = "etalis__stage_key"           # a later stage's key of an event passed on to it


@dataclass(frozen=True)
class LiveStage:
    """What a stage's processor needs, shipped to the workers."""

    spec: StageSpec
    mapping: Optional[MapSpec] = None       # stage 1: how its input rows become events
    passes: tuple[str, ...] = ()            # events passed on (name/arity) that later stages consume
    idle: bool = False                      # the watermark moves idle keys' time on (event-time timers)


KEPT_BYTES = 256 << 20              # at most this many bytes of snapshots kept in a worker, a stage


@dataclass
class _Held:
    """A worker's engine of a stage, the snapshot of its fresh state, and
    whose state it holds now: (group, key, token, seq).  ``kept`` has the
    snapshots this worker last read or wrote of each group's keys, with the
    group's version (token, seq) they are part of (None while a micro-batch
    changes them) and whether they are all its keys' (the worker made
    the group and kept every snapshot it wrote), so that a key of an
    unchanged group is not read from Spark's state store again, nor a
    key that the group has not had."""

    engine: Engine
    blank: bytes
    holds: Optional[tuple[str, str, str, int]] = None
    kept: dict[str, tuple[Optional[tuple[str, int]], dict[str, bytes], bool]] = field(default_factory=dict)
    kept_bytes: int = 0


# The engines of this Python worker process, by stage (see partition._ENGINES,
# which compiles them): a worker runs a stage's groups batch after batch, and
# keeping the engine, with the state of the last key it ran, saves both the
# compiling and, when the same key comes next, the restore.
_HELD: dict[tuple[Any, ...], _Held] = {}


def _held_for(spec: StageSpec) -> tuple[_Held, bool]:
    key = spec.engine_key()
    engine, compiled = _engine_for(spec)
    held = _HELD.get(key)
    if held is None or held.engine is not engine:
        engine.reset()
        held = _HELD[key] = _Held(engine, engine.snapshot())
    return held, compiled


class _Bucket:
    """A group's keys' states in Spark's state store: the snapshots (a map
    state, an entry a key) and the version (a value state)."""

    def __init__(self, engines: Any, version: Any, dues: Any = None, held: Optional[_Held] = None,
                 group: str = "") -> None:
        self.engines = engines
        self.version = version
        value = version.get() if version.exists() else None
        self.token, self.seq = (uuid.uuid4().hex, 0) if value is None else (str(value[0]), int(value[1]))
        self.changed = False
        self.held, self.group = held, group
        self.kept: dict[str, bytes] = {}
        self.complete = value is None and held is not None      # a new group: no key has a state yet
        if held is not None:        # the worker's snapshots of this version of the group, if it has them
            at, kept, complete = held.kept.pop(group, (None, {}, False))
            if at == (self.token, self.seq):
                self.kept, self.complete = kept, complete
            else:
                held.kept_bytes -= sum(len(v) for v in kept.values())
            held.kept[group] = (None, self.kept, False)
        self.dues_state = dues
        found = dues.get() if dues is not None and dues.exists() else None
        self.dues: dict[str, float] = {} if found is None else json.loads(str(found[0]))
        self.dues_changed = False

    def due(self, key: str, due: Optional[float]) -> None:
        """Note when ``key``'s engine waits for time to move on (None: it does not)."""
        if self.dues_state is None:
            return
        if due is None:
            if self.dues.pop(key, None) is not None:
                self.dues_changed = True
        elif self.dues.get(key) != due:
            self.dues[key] = due
            self.dues_changed = True

    def alarm(self, handle: Any) -> None:
        """The group's one event-time timer at its earliest due key (Spark
        calls ``handleExpiredTimer`` once the watermark passes it)."""
        if self.dues_state is None or not self.dues_changed:
            return
        self.dues_changed = False
        if self.dues:
            self.dues_state.update((json.dumps(self.dues),))
        else:
            self.dues_state.clear()
        wanted = {int(np.ceil(min(self.dues.values()) * 1000))} if self.dues else set()
        for ms in list(handle.listTimers()):
            if int(ms) in wanted:
                wanted.discard(int(ms))
            else:
                handle.deleteTimer(int(ms))
        for ms in wanted:
            handle.registerTimer(ms)

    def snapshot(self, key: str) -> Optional[bytes]:
        found = self.kept.get(key)
        if found is not None or self.complete:
            return found
        value = self.engines.getValue((key,))
        if value is None:
            return None
        self._keep(key, bytes(value[0]))
        return bytes(value[0])

    def put(self, key: str, snapshot: bytes) -> None:
        self.engines.updateValue((key,), (snapshot,))
        self.changed = True
        self._keep(key, snapshot)

    def _keep(self, key: str, snapshot: bytes) -> None:
        """Keep ``key``'s snapshot in the worker, if there is room."""
        held = self.held
        if held is None:
            return
        old = self.kept.pop(key, None)
        held.kept_bytes -= 0 if old is None else len(old)
        if held.kept_bytes + len(snapshot) <= KEPT_BYTES:
            self.kept[key] = snapshot
            held.kept_bytes += len(snapshot)
        else:
            self.complete = False

    def save(self) -> None:
        """A new version, when a key's state changed."""
        if self.changed:
            self.seq += 1
            self.version.update((self.token, self.seq))
            self.changed = False
        if self.held is not None:
            self.held.kept[self.group] = ((self.token, self.seq), self.kept, self.complete)


@dataclass
class _Swap:
    """A group's keys' states in and out of the worker's engine (a
    :class:`~etalis_py.spark.partition.KeySwap`)."""

    held: _Held
    group: str
    bucket: _Bucket

    def enter(self, key: Any) -> Optional[bytes]:
        """The snapshot that puts ``key``'s state into the engine (None when it holds it)."""
        k = str(key or "")
        if self.held.holds == (self.group, k, self.bucket.token, self.bucket.seq):
            return None
        self.held.holds = None
        return self.bucket.snapshot(k) or self.held.blank

    def leave(self, key: Any, snapshot: Optional[bytes], due: Optional[float]) -> None:
        """``key``'s state after its events, which the engine holds now."""
        k = str(key or "")
        if snapshot is not None:
            self.bucket.put(k, snapshot)
            self.bucket.due(k, due)
        self.held.holds = (self.group, k, self.bucket.token, self.bucket.seq)


def _keep(held: _Held, group: str, bucket: _Bucket) -> None:
    """After a group's new version: the engine holds its last key's state of it."""
    if held.holds is not None and held.holds[0] == group and held.holds[2] == bucket.token:
        held.holds = (group, held.holds[1], bucket.token, bucket.seq + 1 if bucket.changed else bucket.seq)
    bucket.save()


class _Out:
    """The rows a processor yields (``ROWS_DDL``), gathered column by column."""

    def __init__(self) -> None:
        self.cols: dict[str, list[Any]] = {n: [] for n in ROW_NAMES}
        self.counts: dict[str, int] = {}

    def add(self, **values: Any) -> None:
        for n in ROW_NAMES:
            self.cols[n].append(values.get(n))

    def take(self, batch: pa.RecordBatch, stage: int, records: Optional[pa.Table] = None,
             original: Sequence[str] = ()) -> int:
        """Add the rows of a stage's output batch (:func:`_stage_rows`); the
        accepted events of its stats rows are returned.  Rejected rows get
        their original columns as JSON (the row of ``records``, or their own).
        A stage's counts add up into one row (:meth:`frame`)."""
        cols = batch.to_pydict()
        accepted = 0
        for i, kind in enumerate(cols[S_KIND]):
            if kind == "r" and stage > 1:       # a derived event out of time order: a warning of the counts
                continue
            line = cols[S_LINE][i]
            row = cols[S_ROW][i]
            values: dict[str, Any] = {"kind": kind, "sig": cols[S_SIG][i], "line": line, "t": cols[S_T][i],
                                      "row": row, "path": cols[S_PATH][i], "keys": cols[S_KEYS][i],
                                      "key": cols[S_KEY][i], "stage": stage}
            if kind == "d":
                values["line"] = line = line.rstrip("\n")
                d = json.loads(line)
                values.update(event=d["event"], args=json.dumps(d["args"]), start=float(d["start"]),
                              end=float(d["end"]))
            elif kind == "m":
                values["record"] = _record({c: cols[c][i] for c in original})
            elif kind == "r":
                values["record"] = None if records is None else _record(
                    {c: records.column(c)[row].as_py() for c in records.column_names})
            if kind in ("m", "r"):      # the rejected row's line: its columns and the reason
                record = json.loads(values["record"] or "{}")
                values["rejected_line"] = json.dumps({**record, "reason": line})
            elif kind == "s":
                info = json.loads(line)
                accepted += info["accepted"]
                for name in COUNTS:
                    self.counts[name] = self.counts.get(name, 0) + info[name]
                self.counts["stage"] = stage
                continue
            self.add(**values)
        return accepted

    def frame(self) -> "pd.DataFrame":
        import pandas as pd  # loaded where the processor runs, in a Python worker of PySpark's

        if self.counts:
            self.add(kind="s", line=json.dumps(self.counts), stage=self.counts["stage"])
            self.counts = {}

        return pd.DataFrame(self.cols, columns=ROW_NAMES)


def _record(values: dict[str, Any]) -> str:
    """A row's columns as JSON (Spark's column of unreadable lines only when it holds one)."""
    return json.dumps({c: v.isoformat() if hasattr(v, "isoformat") else v for c, v in values.items()
                       if not (c == CORRUPT and v is None)}, default=str)


class LiveProcessor(StatefulProcessor):
    """One stage of a stream.  Nothing here starts SWI-Prolog before rows
    come: Spark calls ``init`` on the driver too, to learn the state's schema."""

    def __init__(self, stage: LiveStage) -> None:
        self.stage = stage

    def init(self, handle: Any) -> None:
        self.handle = handle
        self.engines = handle.getMapState("engines", KEY_DDL, SNAPSHOT_DDL)
        self.version = handle.getValueState("version", VERSION_DDL)
        self.dues = handle.getValueState("dues", DUES_DDL) if self.stage.idle else None

    def _bucket(self, held: Optional[_Held] = None, group: str = "") -> _Bucket:
        return _Bucket(self.engines, self.version, self.dues, held, group)

    def handleInputRows(self, key: Any, rows: Iterator["pd.DataFrame"], timerValues: Any) -> Iterator["pd.DataFrame"]:
        import pandas as pd  # loaded where the processor runs, in a Python worker of PySpark's

        group = str(key[0])
        frames = [f for f in rows if len(f)]
        data = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0] if frames else None
        if data is None:
            return
        # by position: PySpark renames the columns whose names start with _
        data.columns = self._input_names()[:len(data.columns)]
        out = _Out()
        if group.startswith(PASS):
            self._pass_on(data, out)
        elif self.stage.mapping is not None:
            self._first(group, data, out)
        else:
            self._later(group, data, out)
        if out.cols["kind"] or out.counts:
            yield out.frame()

    def handleInitialState(self, key: Any, initialState: "pd.DataFrame", timerValues: Any) -> None:
        """A group's keys' states saved by ``replay --save-state``."""
        bucket = self._bucket()
        held = _held_for(self.stage.spec)[0] if self.stage.idle else None
        for k, snapshot in zip(initialState["key"].tolist(), initialState["snapshot"].tolist()):
            bucket.put(str(k or ""), bytes(snapshot))
            if held is not None:        # what the saved state waits for
                held.holds = None
                held.engine.restore(bytes(snapshot))
                bucket.due(str(k or ""), held.engine.next_due())
        bucket.save()
        bucket.alarm(self.handle)

    def handleExpiredTimer(self, key: Any, timerValues: Any, expiredTimerInfo: Any) -> Iterator["pd.DataFrame"]:
        """The watermark passed the group's earliest due key: the time of
        each key due by it moves on to the watermark (events held back up
        to it are processed, timers due by it fire), as if a later row of
        the key had come; no row earlier than the watermark can come to
        this stage any more without being rejected as late."""
        group = str(key[0])
        if group.startswith(PASS) or not self.stage.idle:
            return
        now = timerValues.getCurrentWatermarkInMs() / 1000
        spec = self.stage.spec
        held, _ = _held_for(spec)
        bucket = self._bucket(held, group)
        due = sorted(k for k, t in bucket.dues.items() if t <= now)
        out = _Out()
        if due:
            swap = _Swap(held, group, bucket)
            for k in due:
                state = swap.enter(k)
                if state is not None:
                    held.engine.restore(state)
                result = held.engine.advance_lines(now)
                _advanced_rows(out, spec, k, result.detection_lines, len(result.warnings))
                swap.leave(k, held.engine.snapshot(), held.engine.next_due())
            _keep(held, group, bucket)
        else:
            bucket.save()
        bucket.dues_changed = True      # the timer that fired is gone: set the next one
        bucket.alarm(self.handle)
        if out.cols["kind"] or out.counts:
            yield out.frame()

    def close(self) -> None:
        pass

    def _input_names(self) -> list[str]:
        """The columns of the stage's input rows, in their order."""
        if self.stage.mapping is None:
            return [*ROW_NAMES, GKEY, GROUP]
        return [GROUP, ROWS]

    def _pass_on(self, data: "pd.DataFrame", out: _Out) -> None:
        later = set(self.stage.passes)
        for r in data[ROW_NAMES].itertuples(index=False):
            if r.kind != "x" or r.sig in later:
                out.add(**{n: (list(v) if n == "keys" and v is not None else _na(v)) for n, v in zip(ROW_NAMES, r)})

    def _first(self, group: str, data: "pd.DataFrame", out: _Out) -> None:
        """Stage 1: the group's input rows (Arrow streams, see
        :func:`packed_groups`), in file order, mapped to events as replay
        maps them, fed key by key in time order."""
        stage = self.stage
        mspec = stage.mapping
        assert mspec is not None
        spec = stage.spec
        read = pa.concat_tables([pa.ipc.open_stream(b).read_all() for b in data[ROWS].tolist()])
        read = read.sort_by([(FILE, "ascending"), (POS, "ascending")])
        files = read.column(FILE).to_pylist()
        positions = read.column(POS).to_pylist()
        originals = list(spec.originals) if spec.originals is not None else []
        schema = pa.schema(originals)
        table = read.select(schema.names)
        if table.schema != schema:
            table = table.cast(schema)
        n = table.num_rows
        batch = pa.RecordBatch.from_arrays([*(c.combine_chunks() for c in table.columns),
                                            pa.array(np.arange(n, dtype=np.int64))], names=[*schema.names, ROW])
        held, compiled = _held_for(spec)
        bucket = self._bucket(held, group)
        packed = held.engine.columnar()
        mapped: list[pa.RecordBatch] = []
        parts: list[Packed] = []
        for b, events in mapped_batches(mspec, iter([batch]), packed):
            mapped.append(b)
            if events is not None:
                parts.append(events)
        every = pa.Table.from_batches(mapped).sort_by([(KEY1, "ascending"), (TIME, "ascending"), (ROW, "ascending")])
        joined = Packed.joined(parts) if parts else None
        paths = pa.array([f"{files[r]}\x1f{positions[r]:012x}" for r in every.column(ROW).to_pylist()], pa.string())
        records = table
        staged = pa.Table.from_arrays(
            [every.column(KEY1), every.column(TIME), every.column(ROW), paths, every.column(LINE),
             every.column(KIND), every.column(REASON), every.column(TKIND),
             *(every.column(f.name) for f in originals), *([every.column(PACKED)] if packed else [])],
            names=[S_KEY, S_T, S_ROW, S_PATH, S_LINE, S_KIND, S_REASON, S_TKIND, *schema.names,
                   *([PACKED] if packed else [])])
        kinds = staged.column(S_KIND)
        others = staged.filter(pc.not_equal(kinds, "e"))
        if others.num_rows:         # rejected and unused rows: counted, passed on, no engine state
            for b in _stage_rows(spec, held.engine, compiled, iter(others.to_batches(BATCH_ROWS)), joined):
                out.take(b, spec.number, records, schema.names)
            compiled = False
        events = staged.filter(pc.equal(kinds, "e"))
        fed = dataclasses.replace(spec, first=False)        # the others are counted above
        for ob in _stage_rows(fed, held.engine, compiled, iter(events.to_batches(BATCH_ROWS)), joined,
                              swap=_Swap(held, group, bucket)):
            out.take(ob, spec.number, records, schema.names)
        _keep(held, group, bucket)
        bucket.alarm(self.handle)

    def _later(self, group: str, data: "pd.DataFrame", out: _Out) -> None:
        """A later stage: the events passed on to it, key by key, each key's
        in the order one engine would have derived them (time, then the
        input row and derivation path that caused them)."""
        spec = self.stage.spec
        later = set(self.stage.passes)
        data = data.sort_values([GKEY, "t", "path"], kind="stable", ignore_index=True)
        for r in data[ROW_NAMES].itertuples(index=False):
            if r.sig in later:
                out.add(**{n: (list(v) if n == "keys" and v is not None else _na(v)) for n, v in zip(ROW_NAMES, r)})
        n = len(data)
        staged = pa.RecordBatch.from_arrays(
            [pa.array([str(k or "") for k in data[GKEY].tolist()], pa.string()),
             pa.array(data["t"].astype(float).tolist(), pa.float64()),
             pa.array(data["row"].astype("int64").tolist(), pa.int64()), pa.array(data["path"].tolist(), pa.string()),
             pa.array(data["line"].tolist(), pa.string())],
            names=[S_KEY, S_T, S_ROW, S_PATH, S_LINE])
        held, compiled = _held_for(spec)
        bucket = self._bucket(held, group)
        if n:
            for ob in _stage_rows(spec, held.engine, compiled, iter([staged]), swap=_Swap(held, group, bucket)):
                out.take(ob, spec.number)
        _keep(held, group, bucket)
        bucket.alarm(self.handle)


def packed_groups(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Stage 1's input (``mapInArrow``, in the task that reads the files):
    each row with its position in its file (a stream's files are small:
    one task reads a file), and each batch's rows of a group as one row
    (``PACKED_DDL``), an Arrow stream of them.  The processor thus gets a
    few rows a group, not one a reading, which Spark would turn into
    pandas row by row."""
    seen: dict[str, int] = {}
    for batch in batches:
        pos = []
        for f in batch.column(FILE).to_pylist():
            i = seen.get(f, 0)
            pos.append(i)
            seen[f] = i + 1
        groups = batch.column(GROUP)
        rows = pa.RecordBatch.from_arrays(
            [c for name, c in zip(batch.schema.names, batch.columns) if name != GROUP] + [pa.array(pos, pa.int64())],
            names=[name for name in batch.schema.names if name != GROUP] + [POS])
        names: list[str] = []
        blobs: list[bytes] = []
        for g in pc.unique(groups).to_pylist():
            sink = pa.BufferOutputStream()
            part = rows.filter(pc.equal(groups, g))
            with pa.ipc.new_stream(sink, part.schema) as writer:
                writer.write_batch(part)
            names.append(g)
            blobs.append(sink.getvalue().to_pybytes())
        yield pa.RecordBatch.from_arrays([pa.array(names, pa.string()), pa.array(blobs, pa.binary())],
                                         names=[GROUP, ROWS])


def _advanced_rows(out: _Out, spec: StageSpec, key: str, detections: str, warned: int) -> None:
    """The rows of what a key's time moving on raised (as :func:`_stage_rows`
    makes them of what an input row raised), ordered after the input rows
    of the same time."""
    for c, text in enumerate(detections.splitlines()):
        d = json.loads(text)
        end = float(d["end"])
        args = d["args"]
        path = ADVANCED + _path_step(spec.number, c)
        if d["event"] == TRANSFER:
            name, arity, term, values = args
            out.add(kind="x", sig=f"{name}/{arity}", t=end, path=path, line=_passed_on(term, d),
                    keys=[_key_text(v) for v in values], stage=spec.number)
            continue
        out.add(kind="d", sig=f"{d['event']}/{len(args)}", line=text, t=end, path=path,
                key=key if spec.keyed_by_input else None, stage=spec.number, event=d["event"],
                args=json.dumps(args), start=float(d["start"]), end=end)
    if warned:
        out.counts["warnings"] = out.counts.get("warnings", 0) + warned
        out.counts["stage"] = spec.number


def _na(value: Any) -> Any:
    """pandas' missing values as None."""
    if value is None:
        return None
    if isinstance(value, float) and value != value:
        return None
    return value

