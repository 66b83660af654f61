"""Drop the observations of the wind area demo into a folder in slices of
their time (10 minutes by default), one CSV file a slice, as a feed of
stations would: for ``etalis stream`` (examples/wind_area/live.sh).

    python examples/wind_area/slices.py OBSERVATIONS.csv FOLDER [--minutes 10] [--every SECONDS]

Each slice is written under a hidden name and renamed into place, so that
a stream never reads half a file.  ``--every 0`` drops them all at once.
"""

from __future__ import annotations

import argparse
import csv
import os
import time
from datetime import datetime
from pathlib import Path


def slices(rows: list[list[str]], minutes: int) -> dict[str, list[list[str]]]:
    """The rows by slice, each named by the start of its slice (UTC)."""
    out: dict[str, list[list[str]]] = {}
    for row in rows:
        when = datetime.strptime(row[0][:16], "%Y-%m-%d %H:%M")
        start = when.replace(minute=when.minute - when.minute % minutes)
        out.setdefault(start.strftime("%Y%m%d-%H%M"), []).append(row)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("observations", type=Path, help="the observations (data/weather/lsd-charley-2004-08-08-obs.csv)")
    p.add_argument("folder", type=Path, help="where the slices land")
    p.add_argument("--minutes", type=int, default=10, help="the length of a slice (default 10)")
    p.add_argument("--every", type=float, default=1.0, help="seconds between two slices (default 1; 0: all at once)")
    ns = p.parse_args()
    with ns.observations.open(newline="") as f:
        rows = [row for row in csv.reader(f) if row]
    ns.folder.mkdir(parents=True, exist_ok=True)
    first = time.time()
    for n, (name, part) in enumerate(sorted(slices(rows, ns.minutes).items())):
        if n and ns.every:
            time.sleep(ns.every)
        hidden = ns.folder / f".obs-{name}.csv"
        with hidden.open("w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(part)
        # a stream takes new files in the order of their modification times:
        # slices dropped at once get one a second, in their order
        stamp = max(time.time(), first + n)
        os.utime(hidden, (stamp, stamp))
        os.replace(hidden, ns.folder / f"obs-{name}.csv")


if __name__ == "__main__":
    main()
