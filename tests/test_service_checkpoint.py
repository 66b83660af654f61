"""etalis serve --checkpoint: a server killed with SIGKILL and started
again from its checkpoint loses no detection that its subscribers had not
been sent, and its engines go on from their state; SIGTERM drains."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import httpx

from etalis_py import Engine

from service_helpers import Receiver, events, start_server, stream_messages

RULES = "c(X) <- a(X) seq b(X).\nd <- c(1) seq c(3).\n"
FEED = [events(("a", [1], 1), ("b", [1], 2), ("a", [2], 3), ("a", [3], 4)),
        events(("b", [2], 5)),
        events(("b", [3], 6))]


def expected() -> list[dict[str, object]]:
    with Engine.from_string(RULES) as engine:
        found = [d for batch in FEED for d in engine.emit_many(batch).detections]
    return [{"id": i, **d.to_dict()} for i, d in enumerate(found, start=1)]


def test_sigkill_and_restart_lose_no_detection_not_yet_sent(tmp_path: Path) -> None:
    (tmp_path / "pairs.etl").write_text(RULES)
    folder = tmp_path / "state"
    receiver = Receiver()
    server = start_server("pairs.etl", "--checkpoint", str(folder), cwd=tmp_path)
    try:
        url = f"{server.url}/rulesets/pairs"
        assert httpx.post(f"{url}/subscriptions", json={"url": receiver.url}).status_code == 201
        assert httpx.post(f"{url}/events", json=FEED[0]).json()["detections"] == expected()[:1]
        sent = stream_messages(f"{url}/detections", 1, {"Last-Event-ID": "0"})
        assert [m.id for m in sent] == [1]
        assert httpx.post(f"{url}/events", json=FEED[1]).json()["detections"] == expected()[1:2]
    finally:
        assert server.stop(signal.SIGKILL) == -signal.SIGKILL
    assert sorted(p.name for p in folder.iterdir()) == ["pairs.ruleset.json"]

    again = start_server("pairs.etl", "--checkpoint", str(folder), cwd=tmp_path)
    try:
        url = f"{again.url}/rulesets/pairs"
        info = httpx.get(url).json()
        assert (info["accepted"], info["detections"], info["last_id"], info["pending_by_rule"]) == \
            (5, 2, 2, {"line 1": 3, "line 2": 1})
        # the subscriber that had detection 1 gets detection 2, then what the restored engine makes next
        fed = httpx.post(f"{url}/events", json=FEED[2]).json()
        assert [(d["event"], d["args"]) for d in fed["detections"]] == [("c", [3]), ("d", [])]
        assert fed["detections"] == expected()[2:]
        resumed = stream_messages(f"{url}/detections", len(expected()) - 1, {"Last-Event-ID": "1"})
        assert [m.data for m in resumed] == expected()[1:]
        # the webhook goes on from its checkpointed position: at least once, in order
        delivered = receiver.detections(len(expected()))
        assert sorted({d["id"] for d in delivered}) == [1, 2, 3, 4]
        assert [d for d in delivered if d["id"] == 4] == expected()[3:]
        assert len(httpx.get(f"{url}/subscriptions").json()) == 1
    finally:
        again.stop(signal.SIGKILL)
        receiver.close()


def test_sigterm_ends_streams_checkpoints_and_exits(tmp_path: Path) -> None:
    (tmp_path / "pairs.etl").write_text(RULES)
    folder = tmp_path / "state"
    server = start_server("pairs.etl", "--checkpoint", str(folder), cwd=tmp_path)
    url = f"{server.url}/rulesets/pairs"
    httpx.post(f"{url}/events", json=FEED[0])
    with httpx.stream("GET", f"{url}/detections", headers={"Last-Event-ID": "1"}, timeout=30) as stream:
        lines = stream.iter_lines()
        assert next(lines) == "retry: 1000"
        server.process.send_signal(signal.SIGTERM)
        rest = list(lines)
    assert rest[rest.index("event: end"):] == ["event: end", 'data: {"reason": "the server stops", "last_id": 1}', ""]
    assert server.process.wait(30) in (0, -signal.SIGTERM)
    assert not any("Traceback" in line for line in server.printed)
    saved = json.loads((folder / "pairs.ruleset.json").read_text())
    assert (saved["accepted"], saved["next_id"], [n["id"] for n in saved["kept"]]) == (4, 2, [1])
