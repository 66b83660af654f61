"""etalis serve --checkpoint: a server killed with SIGKILL and started
again from its checkpoint loses no detection that its subscribers had not
been sent, and its engines go on from their state; SIGTERM drains."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import httpx

from etalis_py import Detection, Engine
from etalis_py.service.checkpoint import Checkpoints, Saved
from etalis_py.service.log import Numbered

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
    assert sorted(p.name for p in folder.iterdir()) == ["pairs.detections.jsonl", "pairs.ruleset.json"]
    assert [json.loads(line) for line in (folder / "pairs.detections.jsonl").read_text().splitlines()] == \
        expected()[:2]

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
    assert server.process.wait(30) == -signal.SIGTERM     # ended by the signal once drained: 143 in a shell
    assert not any("Traceback" in line for line in server.printed)
    saved = json.loads((folder / "pairs.ruleset.json").read_text())
    journal = [json.loads(line) for line in (folder / "pairs.detections.jsonl").read_text().splitlines()]
    assert (saved["accepted"], saved["next_id"], journal) == (4, 2, expected()[:1])


def test_the_journal_keeps_what_the_state_knows_and_stays_bounded(tmp_path: Path) -> None:
    def numbered(i: int) -> Numbered:
        return Numbered(i, Detection("c", (i,), i, i))

    folder = Checkpoints(tmp_path, floor=5)
    folder.write(Saved("r", "r.etl", RULES, 1.0, None, 3, [numbered(1), numbered(2)]), [])
    journal = tmp_path / "r.detections.jsonl"
    with open(journal, "a") as f:   # a request's detections appended, then a kill before its state was written
        f.write(json.dumps(numbered(3).to_json()) + "\n" + '{"id": 4, "ev')
    (restored,) = Checkpoints(tmp_path).read(capacity=10)
    assert (restored.next_id, restored.kept) == (3, [numbered(1), numbered(2)])
    assert journal.read_text().splitlines() == [json.dumps(numbered(i).to_json()) for i in (1, 2)]
    # appended a request at a time, rewritten with the buffer alone past twice the buffer
    buffer = [numbered(i) for i in range(1, 3)]
    sizes = []
    for i in range(3, 40):
        buffer = (buffer + [numbered(i)])[-8:]
        folder.write(Saved("r", "r.etl", RULES, 1.0, None, i + 1, buffer), [numbered(i)])
        sizes.append(len(journal.read_text().splitlines()))
    assert sizes[:16] == [*range(3, 17), 8, 9]
    assert max(sizes) == 16
    assert Checkpoints(tmp_path).read(capacity=8)[0].kept == buffer


def test_a_rule_file_changed_since_its_checkpoint_is_said_at_start(tmp_path: Path) -> None:
    (tmp_path / "pairs.etl").write_text(RULES)
    first = start_server("pairs.etl", "--checkpoint", "state", cwd=tmp_path)
    assert first.stop() == -signal.SIGTERM
    (tmp_path / "pairs.etl").write_text("c(X) <- a(X) seq b(X).\n")
    again = start_server("pairs.etl", "--checkpoint", "state", cwd=tmp_path)
    try:
        assert again.printed[1:3] == [
            "etalis serve: pairs.etl changed since rule set 'pairs' was checkpointed: it runs the rules of the "
            "checkpoint",
            "  hint: DELETE /rulesets/pairs and POST the new file to start it afresh (its pending goals are lost)"]
        assert httpx.get(f"{again.url}/rulesets/pairs").json()["rules"] == 2
    finally:
        again.stop()
