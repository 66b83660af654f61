"""Replay the JFK winter of the Boxing Day blizzard to `etalis serve`,
faster than real time: hourly NOAA observations as reading(Visibility,
WindSpeed) events, each sent when its time comes at --speed (1,000x by
default: an hour of weather in 3.6 seconds)."""

from __future__ import annotations

import argparse
import csv
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from etalis_py.bridge.client import Client

DATA = Path(__file__).resolve().parents[2] / "data" / "weather" / "noaa-jfk-hourly-2010-2018.csv"
JFK = timezone(timedelta(hours=-5))  # NOAA's local standard time, the whole year


def readings(start: datetime, end: datetime) -> list[tuple[datetime, float, float]]:
    """The observations from ``start`` to ``end``, in time order."""
    rows = []
    years = {str(y) for y in range(start.year, end.year + 1)}
    with open(DATA, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["DATE"][6:10] not in years:   # DD-MM-YYYY: parse only the dates of the years asked
                continue
            when = datetime.strptime(row["DATE"], "%d-%m-%Y %H:%M").replace(tzinfo=JFK)
            if start <= when < end:
                rows.append((when, float(row["VISIBILITY"]), float(row["WindSpeed"])))
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("url", help="the server, e.g. http://127.0.0.1:8080")
    p.add_argument("--ruleset", default="blizzard", help="the rule set to feed (default blizzard)")
    p.add_argument("--token-file", type=Path, help="the server's bearer token")
    p.add_argument("--from", dest="start", default="2010-12-01", help="first day (default 2010-12-01)")
    p.add_argument("--to", dest="end", default="2011-03-01", help="the day after the last (default 2011-03-01)")
    p.add_argument("--speed", type=float, default=1000.0, help="times real time (default 1000)")
    ns = p.parse_args()
    start = datetime.fromisoformat(ns.start).replace(tzinfo=JFK)
    end = datetime.fromisoformat(ns.end).replace(tzinfo=JFK)
    rows = readings(start, end)
    token = ns.token_file.read_text().strip() if ns.token_file else None
    sent = accepted = rejected = 0
    began = time.monotonic()
    with Client(ns.url, token=token, ruleset=ns.ruleset) as client:
        while sent < len(rows):
            # everything whose time has come, as one request
            now = start + timedelta(seconds=(time.monotonic() - began) * ns.speed)
            due = [r for r in rows[sent:] if r[0] <= now]
            if not due:
                time.sleep(min(0.05, (rows[sent][0] - now).total_seconds() / ns.speed))
                continue
            result = client.emit_many({"event": "reading", "args": [vis, wind], "time": when.isoformat()}
                                      for when, vis, wind in due)
            sent += len(due)
            accepted += result.accepted
            rejected += len(result.rejected)
    print(f"sent {sent} readings from {start:%d %b %Y} to {end:%d %b %Y}: accepted {accepted}, rejected {rejected}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
