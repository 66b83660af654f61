"""A subscriber that stops reading never holds up the feed: it falls out
of the bounded buffer, and is told what it missed when it reads again,
while a subscriber that keeps reading gets everything (over real HTTP)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from etalis_py import Detection
from etalis_py.bridge.client import Streamed, read_stream
from etalis_py.service.log import DetectionLog, Missed

from service_helpers import Server, start_server

BATCH = 100
"""Events a request, each making one detection; the buffer holds as many."""
TEXT = "x" * 10_000
"""Each detection carries 10 kB, a request's 1 MB."""


def requests_to_overflow() -> int:
    """Requests enough for the detections to overflow what the slow
    subscriber's connection holds before the server's stream must wait:
    the kernel's largest send buffer, the reader's first receive buffer
    (it grows only as it is read), and a stream's write under way and the
    one waiting (each at most the buffer, 1 MB) with 5 MB to spare."""
    wmem = int(Path("/proc/sys/net/ipv4/tcp_wmem").read_text().split()[2])
    rmem = int(Path("/proc/sys/net/ipv4/tcp_rmem").read_text().split()[1])
    return -(-(wmem + rmem) // (BATCH * len(TEXT))) + 7


REQUESTS = requests_to_overflow()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    (tmp_path / "echo.etl").write_text("c(X) <- a(X).\n")
    running = start_server("echo.etl", "--buffer", str(BATCH), cwd=tmp_path)
    yield running
    running.stop()


class Reader(threading.Thread):
    """A subscriber that reads everything as it comes."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.got: list[Streamed] = []
        self.ready = threading.Event()
        self.changed = threading.Condition()

    def run(self) -> None:
        with httpx.stream("GET", self.url, timeout=httpx.Timeout(60)) as reply:
            self.ready.set()
            for message in read_stream(reply.iter_lines()):
                with self.changed:
                    self.got.append(message)
                    self.changed.notify_all()
                if message.kind == "end" or message.id == REQUESTS * BATCH:
                    return

    def wait_for(self, id: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: any(m.id == id for m in self.got), timeout=60), self.got[-1:]


def test_a_subscriber_that_stops_reading_misses_what_falls_out_and_is_told(server: Server) -> None:
    url = f"{server.url}/rulesets/echo/detections"
    fast = Reader(url)
    fast.start()
    assert fast.ready.wait(30)
    with httpx.Client(timeout=httpx.Timeout(60)) as slow_client, \
            slow_client.stream("GET", url) as slow, httpx.Client(base_url=server.url, timeout=60) as http:
        assert slow.status_code == 200
        for r in range(REQUESTS):   # the slow subscriber reads nothing meanwhile
            first = r * BATCH + 1
            body = [{"event": "a", "args": [TEXT], "time": t} for t in range(first, first + BATCH)]
            reply = http.post("/rulesets/echo/events", json=body)
            assert reply.status_code == 200
            assert [d["id"] for d in reply.json()["detections"]] == list(range(first, first + BATCH))
            fast.wait_for(first + BATCH - 1)
            if r == 0:      # both connected (the reader leaves once it has the last)
                assert 'etalis_subscribers{ruleset="echo"} 2.0' in http.get("/metrics").text.splitlines()
        slow_got: list[Streamed] = []
        for message in read_stream(slow.iter_lines()):
            slow_got.append(message)
            if message.id == REQUESTS * BATCH:
                break
        metrics = http.get("/metrics").text.splitlines()
    last = REQUESTS * BATCH
    assert [(m.kind, m.id) for m in fast.got] == [("detection", i) for i in range(1, last + 1)]
    assert all(m.data["args"] == [TEXT] for m in fast.got)
    # the slow one: what it was sent before it stopped reading, the gap, then the buffer's last detections
    gaps = [m for m in slow_got if m.kind == "missed"]
    assert len(gaps) == 1
    gap = gaps[0].data
    assert gap["count"] == gap["last"] - gap["first"] + 1 > 0
    assert gap["last"] == last - BATCH       # everything the buffer still held came after the gap
    sent = [m.id for m in slow_got if m.kind == "detection"]
    assert sent == list(range(1, gap["first"])) + list(range(gap["last"] + 1, last + 1))
    assert [(m.kind, m.id) for m in slow_got if m.kind != "detection"] == [("missed", gap["last"])]
    assert f'etalis_subscriber_missed_detections_total{{kind="stream",ruleset="echo"}} {float(gap["count"])}' \
        in metrics


def test_the_log_gives_a_reader_what_it_missed_then_a_slice_at_a_time() -> None:
    async def run() -> tuple[object, list[int], object, list[int]]:
        log = DetectionLog(5)
        log.append([Detection("c", (i,), i, i) for i in range(1, 9)])
        await log.publish()
        missed, fresh = log.after(1, limit=2)
        later, rest = log.after(fresh[-1].id, limit=2)
        return missed, [n.id for n in fresh], later, [n.id for n in rest]

    assert asyncio.run(run()) == (Missed(2, 3), [4, 5], None, [6, 7])
