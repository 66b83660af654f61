"""Checkpoints of ``etalis run --checkpoint DIR``: where a run resumes.

A checkpoint is two files (and ``DIR/lock``, held by the run that takes
it).  ``DIR/checkpoint`` is a first line
``etalis-checkpoint 2`` and a line of JSON: what run it belongs to, the
input and output positions, the run's counters, a CSV stream's header,
and its ``base``: the name of the file that holds the engine's snapshot
(``DIR/state-L``, :meth:`Engine.snapshot`), the positions and counters
as of that snapshot, its length and the SHA-256 of its first two lines
(the snapshot's header, which holds that of the rest).  A snapshot is
not taken at every checkpoint (see docs/live.md): a run resumed from a
checkpoint whose base is older reads the input again from the base's
position (whose bytes up to the checkpoint's the checkpoint holds the
SHA-256 of), and writes nothing twice.

Both files are replaced atomically: written to a ``.new`` file, synced,
renamed, and the directory synced, the snapshot before the checkpoint
that names it, and the snapshots no checkpoint names removed after; so a
run killed at any moment leaves the previous checkpoint or the new one,
whole.  That durable part runs on a thread of its own
(:class:`CheckpointWriter`) while the engine goes on.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import signal
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, BinaryIO, Optional, Union

from ..errors import EtalisError
from .engine import SnapshotParts
from .results import Counts

MAGIC = b"etalis-checkpoint 2\n"
NAME = "checkpoint"
LOCK = "lock"
STATE = "state-"
_OTHER_FORMAT = re.compile(rb"etalis-checkpoint ([0-9]{1,9})\n")
# How many bytes before the input position a checkpoint keeps the hash
# of: a file replaced by another (not appended to) is told from the one
# the checkpoint was taken of.
_SEEN = 4096
# The end of a snapshot's header: the SHA-256 of its content, then `).`
_CHECKSUM = re.compile(rb",'([0-9a-f]{64})'\)\.\n$")


class CheckpointError(EtalisError):
    """A checkpoint that cannot be used: damaged, of another run, or of
    an input or output that changed since (the message says which)."""


@dataclass
class Counters(Counts):
    """What ``etalis run``'s summary counts, up to a checkpoint: the
    engine's counts and the warnings printed."""

    warnings: int = 0


@dataclass(frozen=True)
class Position:
    """Where the input resumes: ``line``, the number of the first line (or
    row of a Parquet file) not consumed yet, and ``offset``, the byte
    where it starts (None for standard input and Parquet, which are
    resumed by their count of lines or rows); ``seen`` is the SHA-256 of
    the bytes just before ``offset`` (see :func:`seen_hash`)."""

    line: int = 1
    offset: Optional[int] = None
    seen: str = ""


@dataclass(frozen=True)
class Base:
    """The engine's snapshot that a checkpoint resumes from: ``file``, its
    name in the checkpoint's directory, of ``length`` bytes whose first
    two lines have the SHA-256 ``head_sha256``; and the input position,
    the output position and the counters as of the snapshot."""

    file: str
    input: Position
    output: int
    counters: Counters
    length: int
    head_sha256: str


@dataclass(frozen=True)
class Checkpoint:
    """A run's checkpoint: ``run`` names the run (rules and their hash,
    events, output), ``input`` where the input resumes, ``output`` the
    bytes of ``--out`` committed (on standard output: the lines written),
    ``counters`` the summary's, ``base`` the snapshot to resume from
    (taken at ``input`` or before it), ``header`` the columns of a CSV
    stream, ``again_sha256`` the SHA-256 of the input's bytes from the
    base's position to ``input`` (what a resumed run reads again; empty
    where the input has no byte positions)."""

    run: dict[str, Any]
    input: Position
    output: int
    counters: Counters
    base: Base
    header: Optional[list[str]] = None
    again_sha256: str = ""

    def save(self, directory: Path) -> None:
        """Replace ``directory``'s checkpoint with this one, atomically (its
        base must be there, durable: see :func:`save_state`)."""
        meta = {"run": self.run, "input": asdict(self.input), "output": self.output,
                "counters": asdict(self.counters), "header": self.header, "base": asdict(self.base),
                "again_sha256": self.again_sha256}
        _replace(directory, NAME, [MAGIC + json.dumps(meta).encode("utf-8") + b"\n"])

    @staticmethod
    def load(directory: Path) -> Optional[tuple["Checkpoint", bytes]]:
        """The checkpoint of ``directory`` and the snapshot of its base, or
        None if it has none yet."""
        path = directory / NAME
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            raise CheckpointError(f"{path}: cannot be read: {e.strerror or e}") from None
        damaged = f"{path}: not a whole checkpoint of etalis run (damaged?): remove it to start afresh"
        if (other := _OTHER_FORMAT.match(data)) and not data.startswith(MAGIC):
            raise CheckpointError(f"{path}: a checkpoint of format {other[1].decode()}, and this etalis-py reads "
                                  f"format {MAGIC.split()[1].decode()}: remove it to start afresh")
        if not data.startswith(MAGIC) or not data.endswith(b"\n"):
            raise CheckpointError(damaged)
        try:
            meta = json.loads(data[len(MAGIC):])
            b = meta["base"]
            base = Base(_text(b["file"]), _position(b["input"]), _count(b["output"]), _counters(b["counters"]),
                        _count(b["length"]), _text(b["head_sha256"]))
            header = meta["header"]
            if header is not None and not (isinstance(header, list) and all(isinstance(h, str) for h in header)):
                raise ValueError(header)
            taken = Checkpoint(dict(meta["run"]), _position(meta["input"]), _count(meta["output"]),
                               _counters(meta["counters"]), base, header, _text(meta["again_sha256"]))
            before = (base.input.line, base.output, base.input.offset or 0)
            if any(x > y for x, y in zip(before, (taken.input.line, taken.output, taken.input.offset or 0))):
                raise ValueError(meta)
        except (ValueError, KeyError, TypeError):
            raise CheckpointError(damaged) from None
        return taken, load_state(directory, base)

    def check_run(self, run: dict[str, Any], directory: Path) -> None:
        """Refuse to resume a checkpoint of another run than ``run``."""
        for key, value in run.items():
            if self.run.get(key) != value:
                what = {"rules_sha256": "the rule file's text",
                        "reading": "the options that read its input into events"}.get(key, key)
                raise CheckpointError(
                    f"{directory / NAME}: a checkpoint of another run ({what}: {self.run.get(key)!r}, now "
                    f"{value!r}): give another --checkpoint DIR, or remove this one to start afresh")


def _count(value: Any) -> int:
    """``value``, a count read from a checkpoint (else ValueError)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(value)
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(value)
    return value


def _position(value: dict[str, Any]) -> Position:
    at = Position(**value)
    if _count(at.line) < 1 or (at.offset is not None and _count(at.offset) < 0):
        raise ValueError(value)
    _text(at.seen)
    return at


def _counters(value: dict[str, Any]) -> Counters:
    counters = Counters(**value)
    for count in asdict(counters).values():
        _count(count)
    return counters


def lock_directory(directory: Path) -> BinaryIO:
    """``directory/lock``, locked for this process until it is closed (or
    the process ends, however): two runs that took up the same checkpoint
    would write the same output and checkpoint."""
    lock = (directory / LOCK).open("ab")
    try:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        raise CheckpointError(f"{directory}: the checkpoint of a run that is still running: wait for it to end "
                              "(or stop it), or give another --checkpoint DIR") from None
    return lock


def save_state(directory: Path, name: str, state: Union[bytes, SnapshotParts]) -> tuple[int, str]:
    """Write the snapshot ``state`` to ``directory/name``, atomically and
    durably; its length and the SHA-256 of its first two lines (whose
    computing hashes the content, for a snapshot in parts)."""
    if isinstance(state, bytes):
        start = content_checksum(state)[0]
        head, content = state[:start], memoryview(state)[start:]
    else:
        head, content = state.header(), state.view()
    _replace(directory, name, [head, content])
    return len(head) + len(content), hashlib.sha256(head).hexdigest()


def load_state(directory: Path, base: Base) -> bytes:
    """The snapshot of ``base``, checked whole: its length, its header's
    hash and its content's."""
    path = directory / base.file
    if Path(base.file).name != base.file or not base.file.startswith(STATE):
        raise CheckpointError(f"{directory / NAME}: not a whole checkpoint of etalis run (damaged?): remove it "
                              "to start afresh")
    try:
        state = path.read_bytes()
    except OSError as e:
        raise CheckpointError(f"{path}: the checkpoint's state cannot be read ({e.strerror or e}): remove "
                              f"{directory} to start afresh") from None
    start, checksum = content_checksum(state)
    if len(state) != base.length or hashlib.sha256(state[:start]).hexdigest() != base.head_sha256 or \
            hashlib.sha256(memoryview(state)[start:]).hexdigest() != checksum:
        raise CheckpointError(f"{path}: not the whole state of the checkpoint (damaged?): remove {directory} "
                              "to start afresh")
    return state


def remove_states(directory: Path, keep: str) -> None:
    """Remove the snapshots of ``directory`` but ``keep`` (those of earlier
    checkpoints, and any a killed run left half written)."""
    for path in directory.glob(STATE + "*"):
        if path.name != keep:
            path.unlink(missing_ok=True)


def _replace(directory: Path, name: str, parts: list[Union[bytes, memoryview]]) -> None:
    new = directory / (name + ".new")
    with new.open("wb") as f:
        for part in parts:
            f.write(part)
        f.flush()
        os.fsync(f.fileno())
    os.replace(new, directory / name)
    sync_directory(directory)


class CheckpointWriter:
    """Makes checkpoints durable on a thread of its own, one at a time:
    the engine goes on while the output is synced and the checkpoint file
    written, synced and renamed.  The next checkpoint, and the end of the
    run, wait for it (:meth:`wait`)."""

    def __init__(self) -> None:
        self._thread: Optional[threading.Thread] = None
        self._failed: Optional[BaseException] = None

    def submit(self, job: Callable[[], None]) -> None:
        """Run ``job`` on the writer's thread, once the job before it has
        ended (whose failure this raises, as :meth:`wait`)."""
        self.wait()
        self._thread = threading.Thread(target=self._run, args=(job,), name="etalis-checkpoint")
        self._thread.start()

    def _run(self, job: Callable[[], None]) -> None:
        # Ctrl-C and SIGTERM are the main thread's to take, between batches
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            job()
        except BaseException as e:  # raised in the main thread, by wait()
            self._failed = e

    def wait(self) -> None:
        """Wait until the job submitted last has ended; raise what it raised."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        failed, self._failed = self._failed, None
        if failed is not None:
            raise failed


def content_checksum(state: bytes) -> tuple[int, str]:
    """Where the content of the snapshot ``state`` starts, and the SHA-256
    of it that the snapshot's header gives (hashed once, by
    :meth:`Engine.snapshot`); ``(0, "")`` if its first two lines are not
    those of a snapshot."""
    end = state.find(b"\n", state.find(b"\n") + 1)
    found = _CHECKSUM.search(state, max(0, end - 80), end + 1) if end > 0 else None
    return (end + 1, found.group(1).decode("ascii")) if found is not None else (0, "")


def sync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def seen_hash(path: Path, offset: int) -> str:
    """The SHA-256 of the (at most 4,096) bytes of ``path`` before ``offset``."""
    start = max(0, offset - _SEEN)
    with path.open("rb") as f:
        f.seek(start)
        return hashlib.sha256(f.read(offset - start)).hexdigest()


def check_input(path: Path, at: Position, directory: Path) -> None:
    """Refuse to resume reading ``path`` at ``at`` (the checkpoint of
    ``directory``) if it is now shorter than the position, or its bytes
    before it are not those read."""
    if at.offset is None:
        return
    size = path.stat().st_size
    if size < at.offset:
        raise CheckpointError(f"{path}: {size:,} bytes, fewer than the {at.offset:,} that the checkpoint had "
                              f"read: the file was replaced or cut; remove {directory} to start afresh")
    if seen_hash(path, at.offset) != at.seen:
        raise CheckpointError(f"{path}: the bytes before the checkpoint's position ({at.offset:,}) are not "
                              f"those read: the file was replaced, not appended to; remove {directory} "
                              "to start afresh")


def hash_bytes(path: Path, start: int, end: int, digest: Optional["hashlib._Hash"] = None) -> "hashlib._Hash":
    """``digest`` (a new SHA-256 if None) updated with the bytes of
    ``path`` from ``start`` to ``end``."""
    digest = digest or hashlib.sha256()
    with path.open("rb") as f:
        f.seek(start)
        while start < end and (data := f.read(min(1 << 20, end - start))):
            digest.update(data)
            start += len(data)
    return digest


def check_again(path: Path, taken: Checkpoint, directory: Path) -> "hashlib._Hash":
    """Refuse to read ``path`` again from ``taken``'s base to its position
    if those bytes are not those read; their SHA-256, to go on from."""
    base, at = taken.base.input, taken.input
    digest = hashlib.sha256()
    if base.offset is None or at.offset is None:
        return digest
    digest = hash_bytes(path, base.offset, at.offset, digest)
    if digest.hexdigest() != taken.again_sha256:
        raise CheckpointError(f"{path}: the bytes {base.offset:,} to {at.offset:,} (lines {base.line:,} to "
                              f"{at.line - 1:,}), which a resumed run reads again from its checkpoint's snapshot, "
                              f"are not those read: the file was changed, not only appended to; remove {directory} "
                              "to start afresh")
    return digest


def resume_output(path: Path, committed: int, directory: Path) -> None:
    """Cut ``path`` back to the ``committed`` bytes of the checkpoint of
    ``directory``: what a killed run wrote after it is written again."""
    try:
        size = path.stat().st_size
    except OSError:
        size = -1
    if size < committed:
        raise CheckpointError(f"{path}: {'missing' if size < 0 else f'{size:,} bytes'}, where the checkpoint "
                              f"had committed {committed:,}: the output was moved or cut; remove "
                              f"{directory} to start afresh")
    try:
        os.truncate(path, committed)
    except OSError as e:
        raise CheckpointError(f"{path}: cannot be cut back to the checkpoint's {committed:,} bytes: "
                              f"{e.strerror or e}") from None


def rules_hash(paths: list[Path]) -> str:
    """The SHA-256 of the rule file and its static files, in order."""
    digest = hashlib.sha256()
    for p in paths:
        digest.update(p.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()
