"""Checkpoints: each rule set in a file of its own in the checkpoint
folder, written whole (to a temporary file, synced, then renamed over the
old one), so a server killed at any moment restarts from the last
complete checkpoint of each rule set.

A checkpoint holds the rule file's text, its engine's state
(:meth:`Engine.snapshot`), the counters, the numbered detections of the
buffer and the position of each webhook.  The server writes a rule set's
checkpoint after each request that changed it and before its detections
are sent to anyone, so a detection that a subscriber was sent is always
in a checkpoint."""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from .log import Numbered

SUFFIX = ".ruleset.json"
VERSION = 1


@dataclass(frozen=True)
class Saved:
    """One rule set as a checkpoint holds it."""

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
        return {
            "version": VERSION, "id": self.id, "name": self.name, "text": self.text, "created": self.created,
            "state": None if self.state is None else base64.b64encode(self.state).decode("ascii"),
            "next_id": self.next_id, "kept": [n.to_json() for n in self.kept], "accepted": self.accepted,
            "rejected": self.rejected, "detected": self.detected, "webhooks": self.webhooks,
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Saved":
        if d.get("version") != VERSION:
            raise ValueError(f"checkpoint version {d.get('version')!r}, this server reads version {VERSION}")
        state = d["state"]
        return Saved(str(d["id"]), str(d["name"]), str(d["text"]), float(d["created"]),
                     None if state is None else base64.b64decode(state), int(d["next_id"]),
                     [Numbered.from_json(n) for n in d["kept"]], int(d["accepted"]), int(d["rejected"]),
                     {str(k): int(v) for k, v in d["detected"].items()}, list(d["webhooks"]))


class CheckpointError(Exception):
    """A checkpoint that cannot be read: which file, and why."""


class Checkpoints:
    """The checkpoint folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def path(self, id: str) -> Path:
        return self.folder / f"{id}{SUFFIX}"

    def write(self, saved: Saved) -> None:
        """Write ``saved`` whole: a reader (or a restart) sees the old
        checkpoint or this one, never a part."""
        path = self.path(saved.id)
        part = path.with_name(path.name + ".part")
        with open(part, "w", encoding="utf-8") as f:
            json.dump(saved.to_json(), f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(part, path)
        self._sync_folder()

    def remove(self, id: str) -> None:
        self.path(id).unlink(missing_ok=True)
        self._sync_folder()

    def read(self) -> list[Saved]:
        """Every rule set of the folder, in the order they were made;
        CheckpointError naming a file that cannot be read.  A ``.part``
        file (a write the server did not finish) is removed."""
        for part in self.folder.glob(f"*{SUFFIX}.part"):
            part.unlink()
        found = []
        for path in sorted(self.folder.glob(f"*{SUFFIX}")):
            try:
                found.append(Saved.from_json(json.loads(path.read_text(encoding="utf-8"))))
            except (OSError, ValueError, KeyError, TypeError) as e:
                raise CheckpointError(f"{path}: not a checkpoint this server can read ({e})") from None
        return sorted(found, key=lambda s: s.created)

    def _sync_folder(self) -> None:
        fd = os.open(self.folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
