"""Checkpoints: each rule set as two files of the checkpoint folder.

``ID.ruleset.json`` holds the rule file's text, its engine's state
(:meth:`Engine.snapshot`), the counters, the number the next detection
gets and each webhook's position; it is written whole (to a temporary
file, synced, then renamed over the old one).  ``ID.detections.jsonl``
is the journal of the numbered detections, one a line: a request's new
detections are appended (and synced) before the state is written, and the
journal is rewritten with the buffer alone once it holds twice as many.

The server writes a rule set's checkpoint after each request that
changed it and before its detections are sent to anyone, so a server
killed at any moment restarts from the last complete checkpoint of each
rule set, with every detection a subscriber may not have been sent.
Lines of the journal numbered from the state's next number on (appended
by a request whose state was not written) are dropped at the restart:
they were never sent, and the engine's state is from before them."""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from .log import Numbered

STATE = ".ruleset.json"
JOURNAL = ".detections.jsonl"
VERSION = 1


@dataclass(frozen=True)
class Saved:
    """One rule set as a checkpoint holds it (``kept``: the buffer)."""

    id: str
    name: str
    text: str
    created: float
    state: Optional[bytes]
    next_id: int
    kept: list[Numbered]
    accepted: int = 0
    rejected: int = 0
    detected: dict[str, int] = field(default_factory=dict)
    webhooks: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The state file's content (the buffer is in the journal)."""
        return {
            "version": VERSION, "id": self.id, "name": self.name, "text": self.text, "created": self.created,
            "state": None if self.state is None else base64.b64encode(self.state).decode("ascii"),
            "next_id": self.next_id, "accepted": self.accepted, "rejected": self.rejected,
            "detected": self.detected, "webhooks": self.webhooks,
        }

    @staticmethod
    def from_json(d: dict[str, Any], kept: list[Numbered]) -> "Saved":
        if d.get("version") != VERSION:
            raise ValueError(f"checkpoint version {d.get('version')!r}, this server reads version {VERSION}")
        state = d["state"]
        return Saved(str(d["id"]), str(d["name"]), str(d["text"]), float(d["created"]),
                     None if state is None else base64.b64decode(state), int(d["next_id"]), kept,
                     int(d["accepted"]), int(d["rejected"]), {str(k): int(v) for k, v in d["detected"].items()},
                     list(d["webhooks"]))


class CheckpointError(Exception):
    """A checkpoint that cannot be read: which file, and why."""


class Checkpoints:
    """The checkpoint folder."""

    def __init__(self, folder: Path, floor: int = 1000) -> None:
        """``floor``: the journal is rewritten once it holds more than
        twice the buffer, or than twice ``floor`` lines if the buffer is
        smaller."""
        self.folder = folder
        self.floor = floor
        folder.mkdir(parents=True, exist_ok=True)
        self._lines: dict[str, int] = {}

    def path(self, id: str) -> Path:
        return self.folder / f"{id}{STATE}"

    def journal(self, id: str) -> Path:
        return self.folder / f"{id}{JOURNAL}"

    def write(self, saved: Saved, fresh: list[Numbered]) -> None:
        """Append ``fresh`` (the detections numbered since the last
        checkpoint) to the journal, then write the state whole: a restart
        sees the old checkpoint or this one, never a part."""
        try:
            self._write(saved, fresh)
        except OSError:
            self._lines.pop(saved.id, None)   # the next write rewrites the journal whole
            raise

    def _write(self, saved: Saved, fresh: list[Numbered]) -> None:
        journal = self.journal(saved.id)
        lines = self._lines.get(saved.id)
        if lines is None or lines + len(fresh) > 2 * max(len(saved.kept), self.floor):
            self._replace(journal, "".join(json.dumps(n.to_json()) + "\n" for n in saved.kept))
            self._lines[saved.id] = len(saved.kept)
        elif fresh:
            with open(journal, "a", encoding="utf-8") as f:
                f.write("".join(json.dumps(n.to_json()) + "\n" for n in fresh))
                f.flush()
                os.fsync(f.fileno())
            self._lines[saved.id] = lines + len(fresh)
        self._replace(self.path(saved.id), json.dumps(saved.to_json()))

    def remove(self, id: str) -> None:
        self.path(id).unlink(missing_ok=True)
        self.journal(id).unlink(missing_ok=True)
        self._lines.pop(id, None)
        self._sync_folder()

    def read(self, capacity: int) -> list[Saved]:
        """Every rule set of the folder, in the order they were made, with
        the last ``capacity`` detections of its journal; CheckpointError
        naming a file that cannot be read.  A ``.part`` file (a write the
        server did not finish) is removed."""
        for part in self.folder.glob("*.part"):
            part.unlink()
        found = []
        for path in sorted(self.folder.glob(f"*{STATE}")):
            try:
                d = json.loads(path.read_text(encoding="utf-8"))
                id = str(d["id"])
                kept = self._journal(id, int(d["next_id"]))
                found.append(Saved.from_json(d, kept[-capacity:]))
            except (OSError, ValueError, KeyError, TypeError) as e:
                raise CheckpointError(f"{path}: not a checkpoint this server can read ({e})") from None
        return sorted(found, key=lambda s: s.created)

    def _journal(self, id: str, next_id: int) -> list[Numbered]:
        """The journal's detections numbered below ``next_id``; a last line
        cut short by a kill, and those numbered from ``next_id`` on, are
        dropped (the journal is rewritten without them)."""
        journal = self.journal(id)
        kept: list[Numbered] = []
        dropped = False
        if journal.exists():
            lines = journal.read_text(encoding="utf-8").splitlines()
            for number, line in enumerate(lines, start=1):
                try:
                    n = Numbered.from_json(json.loads(line))
                except (ValueError, KeyError, TypeError):
                    if number < len(lines):
                        raise ValueError(f"{journal}:{number}: not a detection") from None
                    dropped = True   # a write cut short
                    continue
                if n.id < next_id:
                    kept.append(n)
                else:
                    dropped = True
        if dropped or not journal.exists():
            self._replace(journal, "".join(json.dumps(n.to_json()) + "\n" for n in kept))
        self._lines[id] = len(kept)
        return kept

    def _replace(self, path: Path, text: str) -> None:
        part = path.with_name(path.name + ".part")
        with open(part, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(part, path)
        self._sync_folder()

    def _sync_folder(self) -> None:
        fd = os.open(self.folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
