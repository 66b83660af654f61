"""A timeline picture of detections: chosen input signals as lines over
time, and each complex event as a bar over its interval, one lane per
event and arguments (``wind_warning(C2236)``).  ``etalis plot`` draws it;
matplotlib draws off screen (Agg), so no display is needed."""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from ..events import Detection, InvalidEvent, Time
from .report import Readable
from ..inputs.delimited import csv_rows
from ..inputs.mapping import missing_column, parse_time, parse_value

if TYPE_CHECKING:  # matplotlib is imported when a picture is drawn
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.transforms import Bbox

DPI = 100
WIDTH = 1200
SIGNAL_HEIGHT = 300
LANE_HEIGHT = 30
MARGIN_HEIGHT = 150


@dataclass(frozen=True)
class Signal:
    """One line of the picture: ``values`` at ``times`` (seconds)."""

    label: str
    times: Sequence[Time]
    values: Sequence[float]


@dataclass(frozen=True)
class Timeline:
    """What to draw and how: the detections, the signals, a title, the
    name of the signals' quantity and levels to mark on it (a rule's
    threshold); times and names as ``readable`` shows them."""

    detections: Sequence[Detection]
    signals: Sequence[Signal] = ()
    readable: Readable = field(default_factory=Readable)
    title: str | None = None
    quantity: str = "value"
    levels: Sequence[float] = ()

    def lanes(self) -> list[str]:
        """The bars' lanes, top to bottom: the labels of the detections in
        the order of the first detection of each event, then of each label."""
        events = list(dict.fromkeys(d.event for d in self.detections))
        labels = list(dict.fromkeys(self.readable.label(d) for d in self.detections))
        first = {label: i for i, label in enumerate(labels)}
        of_event = {self.readable.label(d): events.index(d.event) for d in self.detections}
        return sorted(labels, key=lambda label: (of_event[label], first[label]))

    def axis(self) -> Readable:
        """How the time axis shows times: in the zone of every detection
        when the zones of ``readable`` (a names file's) give them one, else
        in ``readable``'s own zone (``--tz``, default UTC)."""
        if self.readable.zones:
            zones = {self.readable.zone_of(d) for d in self.detections}
            if len(zones) == 1:
                return replace(self.readable, tz=zones.pop(), zones={})
        return self.readable

    def local(self) -> bool:
        """Whether the detections are in several zones (as ``etalis table``
        shows them), which one time axis cannot show: then each lane says
        its zone and each bar its local start."""
        return bool(self.axis().zones)

    def size(self) -> tuple[int, int]:
        """Width and height in pixels: a band for the signals, a row per lane."""
        signals = SIGNAL_HEIGHT if self.signals else 0
        return WIDTH, MARGIN_HEIGHT + signals + LANE_HEIGHT * max(1, len(self.lanes()))

    def figure(self) -> "Figure":
        """The picture as a matplotlib Figure: the last axes hold the bars
        (a Rectangle each, in ``axes.patches``), the first the signals when
        there are any."""
        # matplotlib loads when a picture is drawn, not with every engine
        from matplotlib import dates
        from matplotlib.figure import Figure

        width, height = self.size()
        lanes = self.lanes()
        rows = [SIGNAL_HEIGHT, LANE_HEIGHT * max(1, len(lanes))] if self.signals else [1]
        fig = Figure(figsize=(width / DPI, height / DPI), dpi=DPI, layout="constrained")
        axes = fig.subplots(len(rows), 1, sharex=True, squeeze=False, height_ratios=rows)[:, 0]
        axis = self.axis()
        zone = axis.zone()
        for signal in self.signals:
            axes[0].plot([axis.when(t) for t in signal.times], signal.values, label=signal.label, linewidth=1.2)
        for level in self.levels if self.signals else ():
            axes[0].axhline(level, color="grey", linestyle="--", linewidth=1, label=f"level {level:g}")
        if self.signals:
            axes[0].set_ylabel(self.quantity)
            axes[0].legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small", frameon=False)
            axes[0].grid(True, alpha=0.3)
        bars = axes[-1]
        self._bars(bars, lanes)
        locator = dates.AutoDateLocator(tz=zone)  # type: ignore[no-untyped-call]
        bars.xaxis.set_major_locator(locator)
        bars.xaxis.set_major_formatter(dates.ConciseDateFormatter(locator, tz=zone))  # type: ignore[no-untyped-call]
        if self.local():
            bars.set_xlabel(f"times in {axis.tz} (on a bar: its local start, in the zone by its lane)", loc="left")
        else:
            bars.set_xlabel(axis.caption())
        if self.title:
            fig.suptitle(self.title)
        if self.local():
            _drop_labels_that_do_not_fit(fig, bars)
        return fig

    def _bars(self, ax: "Axes", lanes: list[str]) -> None:
        # matplotlib loads when a picture is drawn, not with every engine
        from matplotlib import colormaps, dates
        from matplotlib.patches import Patch

        row = {label: i for i, label in enumerate(lanes)}
        events = list(dict.fromkeys(d.event for d in self.detections))
        colours = {e: colormaps["tab10"](i % 10) for i, e in enumerate(events)}
        times = [t for d in self.detections for t in (d.start, d.end)]
        times += [t for s in self.signals for t in s.times]
        shortest = (max(times) - min(times)) * 0.004 if times else 0
        local = self.local()
        clock = self.readable.clock(self.detections)
        zone_of: dict[str, str] = {}
        for d in self.detections:
            start = dates.date2num(self.readable.when(d.start))  # type: ignore[no-untyped-call]
            length = max(d.end - d.start, shortest) / timedelta(days=1).total_seconds()
            ax.barh(row[self.readable.label(d)], length, left=start, height=0.6,
                    color=colours[d.event], alpha=0.8, edgecolor="black", linewidth=0.5)
            if local:
                zone_of.setdefault(self.readable.label(d), self.readable.zone_label(d))
                when = self.readable.when(d.start, self.readable.zone_of(d))
                ax.text(start, row[self.readable.label(d)], " " + when.strftime(clock), va="center", ha="left",
                        fontsize="x-small", color="white", clip_on=True)
        shown = [f"{label} · {zone_of[label]}" for label in lanes] if local else lanes
        ax.set_yticks(range(len(lanes)), shown, fontsize="small")
        ax.set_ylim(len(lanes) - 0.5 if lanes else 0.5, -0.5)
        ax.grid(True, axis="x", alpha=0.3)
        if events:
            ax.legend(handles=[Patch(color=colours[e], label=e) for e in events], loc="upper left",
                      bbox_to_anchor=(1.01, 1), fontsize="small", frameon=False)

    def save(self, path: "str | os.PathLike[str]") -> "Figure":
        """Write the picture as a PNG file; returns the Figure drawn."""
        fig = self.figure()
        fig.savefig(path, format="png", dpi=DPI)
        return fig


def _drop_labels_that_do_not_fit(fig: "Figure", ax: "Axes") -> None:
    """Remove each bar's label that, once laid out, is wider than its bar
    or would cover the label of an earlier bar (bars of a lane overlap)."""
    # matplotlib loads when a picture is drawn, not with every engine
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()  # type: ignore[no-untyped-call]
    fig.draw_without_rendering()
    kept: list["Bbox"] = []
    for text, bar in zip(list(ax.texts), ax.patches):
        box = text.get_window_extent(renderer)
        if box.width > bar.get_window_extent(renderer).width or any(box.overlaps(k) for k in kept):
            text.remove()
        else:
            kept.append(box)


@dataclass(frozen=True)
class SignalFile:
    """Where the signals are in a CSV file: the time column (read as
    ``etalis run`` reads it), the value columns, and optionally a key
    column whose values each get their own line; ``columns`` names the
    columns of a file without a header."""

    time: str
    values: Sequence[str]
    key: str | None = None
    time_format: str | None = None
    columns: Sequence[str] | None = None
    time_zone: str | None = None

    def read(self, path: str | Path, keys: Collection[str] | None, readable: Readable) -> tuple[list[Signal], int]:
        """The signals (with ``key``: of the keys in ``keys``, or of every
        key when None), labelled with the keys' names, and how many rows
        had no number to draw (an empty or non-numeric value, or a bad time)."""
        series: dict[tuple[str, str], tuple[list[Time], list[float]]] = {}
        skipped = 0
        # a field that is not UTF-8 is no number: its row is counted as skipped
        with open(path, newline="", encoding="utf-8", errors="surrogateescape") as f:
            reader = csv_rows(f)
            header = list(self.columns) if self.columns else [h.strip() for h in next(reader, [])]
            wanted = [self.time, *self.values, *([self.key] if self.key else [])]
            error = missing_column(wanted, header, f"the header of {path}")
            if error is not None:
                raise error
            at = {c: header.index(c) for c in wanted}
            for row in reader:
                if len(row) != len(header):
                    skipped += bool(row)
                    continue
                key = row[at[self.key]].strip() if self.key else ""
                if keys is not None and key not in keys:
                    continue
                for column in self.values:
                    try:
                        t = parse_time(row[at[self.time]], self.time_format, self.time_zone)
                        value = parse_value(row[at[column]].strip(), column)
                    except InvalidEvent:
                        value = None
                    if isinstance(value, (int, float)) and not isinstance(value, bool):
                        times, values = series.setdefault((key, column), ([], []))
                        times.append(t)
                        values.append(float(value))
                    else:
                        skipped += 1
        return [Signal(self._label(key, column, readable), *tv) for (key, column), tv in series.items()], skipped

    def _label(self, key: str, column: str, readable: Readable) -> str:
        parts = [readable.names.get(key, key)] if self.key else []
        if len(self.values) > 1 or not self.key:
            parts.append(column)
        return " ".join(parts)
