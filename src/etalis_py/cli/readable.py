"""``etalis table`` and ``etalis plot``: detections for people."""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from ..events import Detection
from ..outputs.detections import read_detections
from ..outputs.plot import Signal, SignalFile, Timeline
from ..outputs.report import Readable, value_text
from .options import EXIT_FAILURE, EXIT_OK, _columns, readable_of, said


def add_readable_parsers(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """``etalis table`` and ``etalis plot``: detections (the JSON lines of
    ``run`` or ``replay``) for people."""
    table = sub.add_parser("table", help="print detections as a table: dates, names, durations")
    plot = sub.add_parser("plot", help="draw detections as a timeline PNG, with input signals as lines")
    for p in (table, plot):
        p.add_argument("detections", help="the JSON lines of etalis run or replay; - reads standard input")
        p.add_argument("--tz", metavar="ZONE",
                       help="show times in this zone, an IANA name such as America/New_York (default UTC; "
                       "without it, a --names file with a tz column shows each row in its first argument's zone, "
                       "and a plot's axis in theirs when they share one)")
        p.add_argument("--names", type=Path, metavar="CSV",
                       help="names of argument values: a CSV file with the header value,name "
                       "(or value,name,tz: with each value's IANA time zone)")
    table.add_argument("--lines", action="store_true", help="a sentence per detection instead of a table")
    table.add_argument("--no-args", dest="show_args", action="store_false", help="leave the arguments out")
    plot.add_argument("-o", "--output", type=Path, required=True, metavar="PNG", help="the picture to write")
    plot.add_argument("--title", help="a title over the picture")
    plot.add_argument("--ylabel", metavar="TEXT", help="what the signals measure (default: their columns)")
    plot.add_argument("--level", type=float, action="append", default=[], metavar="VALUE",
                      help="mark this value on the signals with a dashed line (a rule's threshold); may be repeated")
    g = plot.add_argument_group("input signals drawn as lines (a .csv file)")
    g.add_argument("--events", type=Path, metavar="CSV", help="the input data")
    g.add_argument("--signal", action="append", default=[], metavar="COL", help="a column to draw; may be repeated")
    g.add_argument("--key", metavar="COL", help="a line per value of this column (a station)")
    g.add_argument("--keys", type=_columns, metavar="V,V,...",
                   help="the key values to draw (default: those that are arguments of the detections)")
    g.add_argument("--time", metavar="COL", help="the time column, read as run reads it")
    g.add_argument("--time-format", metavar="FMT", help="strptime format of the time column")
    g.add_argument("--time-zone", metavar="ZONE", help="the zone of times written without one (default: UTC)")
    g.add_argument("--columns", type=_columns, metavar="COL,COL,...", help="column names of a file without a header")


def readable_output(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``etalis table`` and ``etalis plot``."""
    try:
        readable = readable_of(ns)
        readable.zone()
        if ns.detections == "-":
            stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape")
            detections = read_detections(stdin, "<stdin>")
        else:
            with open(ns.detections, encoding="utf-8", errors="surrogateescape") as f:
                detections = read_detections(f, ns.detections)
        if ns.command == "table":
            out.write(readable.lines(detections) if ns.lines else readable.table(detections))
            return EXIT_OK
        return plot(ns, detections, readable, err)
    except (OSError, ValueError) as e:
        print(f"etalis: {said(e)}", file=err)
        return EXIT_FAILURE


def plot(ns: argparse.Namespace, detections: Sequence["Detection"], readable: "Readable", err: TextIO) -> int:
    """``etalis plot``: the timeline PNG of ``detections``, with the signals of ``--events``."""
    signals: list[Signal] = []
    quantity = "value"
    if ns.events is not None:
        if not (ns.signal and ns.time):
            raise ValueError("with --events, give the columns to draw with --signal COL and the time with --time COL")
        keys = set(ns.keys) if ns.keys else {value_text(a) for d in detections for a in d.args}
        source = SignalFile(ns.time, ns.signal, ns.key, ns.time_format, ns.columns, ns.time_zone)
        signals, skipped = source.read(ns.events, keys if ns.key else None, readable)
        if skipped:
            print(f"etalis: {ns.events}: {skipped} values without a number or a time were not drawn", file=err)
        quantity = ns.ylabel or ", ".join(ns.signal)
    timeline = Timeline(detections, signals, readable, ns.title, quantity, ns.level)
    fig = timeline.save(ns.output)
    width, height = fig.get_size_inches() * fig.dpi
    bars = len(fig.axes[-1].patches)
    lanes = len(timeline.lanes())
    print(f"{ns.output}: {bars} bar{'s' * (bars != 1)} in {lanes} lane{'s' * (lanes != 1)}, "
          f"{len(signals)} signal{'s' * (len(signals) != 1)}, {width:.0f} x {height:.0f} pixels", file=err)
    return EXIT_OK
