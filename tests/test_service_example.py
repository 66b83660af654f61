"""examples/service: a producer replays the JFK winter to etalis serve
while a subscriber prints the blizzard as it is detected."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from service_helpers import start_server

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "service"


def test_producer_and_subscriber_of_the_blizzard(tmp_path: Path) -> None:
    server = start_server(str(ROOT / "examples" / "blizzard" / "blizzard.etl"), cwd=tmp_path)
    try:
        subscriber = subprocess.Popen([sys.executable, str(EXAMPLE / "subscriber.py"), server.url, "--timeout", "60"],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert subscriber.stderr is not None
        assert subscriber.stderr.readline() == f"waiting for blizzards at {server.url}/rulesets/blizzard\n"
        produced = subprocess.run([sys.executable, str(EXAMPLE / "producer.py"), server.url, "--from", "2010-12-25",
                                   "--to", "2010-12-28", "--speed", "200000"],
                                  capture_output=True, text=True, timeout=120)
        assert (produced.returncode, produced.stdout) == (0, "")
        assert produced.stderr == "sent 72 readings from 25 Dec 2010 to 28 Dec 2010: accepted 72, rejected 0\n"
        out, err = subscriber.communicate(timeout=60)
        assert (subscriber.returncode, out, err) == (0, "blizzard, 26 Dec 2010 20:51 to 23:51 (3h 00m)\n", "")
    finally:
        server.stop()
