"""The columns of a pandas DataFrame as the engine's input terms.

:meth:`Engine.emit_frame` turns a frame into the terms that
:meth:`Engine.emit_many` sends: one term ``event(name(args), time)`` a row,
built column by column with pandas rather than row by row in Python (a
column of texts is converted once per distinct value).  A row with a missing
or impossible value becomes NOTHING, so the engine's own rejections
keep their row numbers, and a :class:`~etalis_py.events.Rejection` with its
1-based row position and the reason.  A column whose type cannot hold event
arguments or times (timedelta, complex, ...) raises TypeError at once.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Optional, Union

import numpy as np

from ..errors import EtalisWarning
from ..bridge.columns import Packed, head_text, number_cells, text_cells
from ..bridge.prolog_text import input_term, quote_atom
from ..events import NOTHING, InvalidEvent, Rejection, Zone, prolog_value, to_time, zone
from .mapping import missing_column

if TYPE_CHECKING:  # pandas loads with the first DataFrame
    import pandas as pd


def frame_terms(
    frame: Any,
    *,
    event: Optional[str],
    event_col: Optional[str],
    args: Sequence[str],
    time: Optional[str],
    start: Optional[str],
    end: Optional[str],
    tz: Zone,
    packed: bool = False,
) -> tuple[Union[list[str], Packed], list[Rejection]]:
    """The input terms of ``frame``'s rows (NOTHING for a rejected row)
    and the rejections, by row position; or, if ``packed``, the rows as
    one batch of packed columns (see :mod:`etalis_py.bridge.columns`)."""
    import pandas as pd  # pandas loads with the first DataFrame, not with every engine

    if type(frame).__module__.split(".")[0] == "pyarrow":
        frame = frame.to_pandas()
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"emit_frame() takes a pandas DataFrame (or a pyarrow Table), not {type(frame).__name__}")
    if (event is None) == (event_col is None):
        raise ValueError("give the event name with event=NAME, or its column with event_col=COL")
    if (time is None) == (start is None or end is None) or (start is None) != (end is None):
        raise ValueError("give the time column with time=COL, or the interval's columns with start=COL and end=COL")
    if isinstance(args, str):
        raise TypeError(f"args is a list of column names, not the text {args!r}: write args=[{args!r}]")
    wanted = [c for c in (event_col, *args, time, start, end) if c is not None]
    error = missing_column(wanted, list(frame.columns), "the frame")
    if error is not None:
        raise error
    if event is not None and event in frame.columns and event not in wanted:
        warnings.warn(EtalisWarning(f"event={event!r} names the event of every row {event!r}, but {event!r} is a "
                                    f"column of the frame: did you mean event_col={event!r}?"), stacklevel=3)
    rows = len(frame)
    reasons: np.ndarray[Any, np.dtype[np.object_]] = np.full(rows, None, dtype=object)
    reasoned = False        # some row has a reason (a column's reasons are None if none of its rows has one)

    def column(name: str, convert: Callable[["pd.Series[Any]", str, Zone], tuple[Any, Any]]) -> Any:
        nonlocal reasoned
        texts, why = convert(frame[name], str(name), tz)
        if why is not None:
            fresh = (reasons == None) & (why != None)  # noqa: E711 (elementwise)
            reasons[fresh] = why[fresh]
            reasoned = True
        return texts

    # one format per row, filled from the columns' texts (str.format is much
    # faster than adding arrays of texts)
    columns: list[Any] = []
    if event is not None:
        if not isinstance(event, str) or not event:
            raise ValueError(f"event name {event!r} is not a non-empty string")
        head = quote_atom(event).replace("{", "{{").replace("}", "}}")
    else:
        head = "{}"
        columns.append(column(event_col or "", _name_texts))
    if args:
        head += "(" + ",".join("{}" for _ in args) + ")"
        columns.extend(column(a, _arg_texts) for a in args)
    if time is not None:
        when = "{}"
        columns.append(column(time, _time_texts))
    else:
        when = "[{}, {}]"
        columns.extend((column(start or "", _time_texts), column(end or "", _time_texts)))
    bad = np.flatnonzero(reasons != None).tolist() if reasoned else []  # noqa: E711
    rejected = [Rejection(i + 1, str(reasons[i])) for i in bad]
    if packed:
        return _packed(event, columns, len(args), time is None, bad), rejected
    terms = list(map(input_term(head, when).format, *map(_as_texts, columns)))
    for i in bad:
        terms[i] = NOTHING
    return terms, rejected


def _as_texts(column: Any) -> Any:
    """The Prolog texts of a column: a column of numbers (int64, float64)
    as ``str``/``repr`` write them."""
    kind = column.dtype.kind
    if kind == "i":
        return list(map(str, column.tolist()))
    if kind == "f":
        return list(map(repr, column.tolist()))
    return column


def _packed(event: Optional[str], columns: list[Any], arity: int, interval: bool, bad: list[int]) -> Packed:
    """The rows as packed columns: the first of ``columns`` the names'
    texts unless ``event`` names every row's event."""
    import pandas as pd  # pandas loads with the first DataFrame, not with every engine

    rows = len(columns[-1])
    if event is not None:
        codes = np.zeros(rows, dtype=np.int32)
        heads = [head_text(quote_atom(event), arity)]
    else:
        texts = columns[0].copy()
        texts[bad] = None  # a rejected row's name may be no name
        found, names = pd.factorize(texts)
        codes = found.astype(np.int32)
        heads = [head_text(name, arity) for name in names.tolist()]
        columns = columns[1:]
    codes[bad] = -1
    cells = [number_cells(c) if c.dtype.kind in "if" else text_cells(c.tolist()) for c in columns]
    return Packed(codes, heads, cells, interval=interval)


def _name_texts(series: "pd.Series[Any]", col: str, tz: Zone) -> tuple[Any, Any]:
    def name(value: Any) -> str:
        if not isinstance(value, str) or not value:
            raise InvalidEvent(f"column {col!r}: event name {value!r} is not a non-empty string")
        return quote_atom(value)

    return _by_value(series, col, name)


def _arg_texts(series: "pd.Series[Any]", col: str, tz: Zone) -> tuple[Any, Any]:
    return _texts(series, col, tz, times=False)


def _time_texts(series: "pd.Series[Any]", col: str, tz: Zone) -> tuple[Any, Any]:
    return _texts(series, col, tz, times=True)


def _texts(series: "pd.Series[Any]", col: str, tz: Zone, times: bool) -> tuple[Any, Any]:
    """The Prolog texts of a column of arguments (or of ``times``), by its type."""
    import pandas as pd  # pandas loads with the first DataFrame, not with every engine

    kind = series.dtype
    if isinstance(kind, pd.CategoricalDtype):
        return _categorical(series, col, tz, _time_texts if times else _arg_texts)
    if pd.api.types.is_bool_dtype(kind):
        if times:
            raise TypeError(f"column {col!r} holds booleans, not times")
        return _plain(series, col, lambda s: s.map({True: "true", False: "false"}))
    if pd.api.types.is_integer_dtype(kind):
        return _ints(series, col)
    if pd.api.types.is_float_dtype(kind):
        return _floats(series.astype("float64"), col)
    if pd.api.types.is_datetime64_any_dtype(kind):
        return _floats(_seconds(series, tz), col)
    if pd.api.types.is_string_dtype(kind) or kind == object:
        if times:
            return _by_value(series, col, lambda v: repr(to_time(v, tz)))
        return _by_value(series, col, lambda v: prolog_value(_plain_value(v, tz)))
    if times:
        raise TypeError(f"column {col!r} of type {kind} cannot hold times: give seconds, datetimes or ISO 8601 texts")
    raise TypeError(f"column {col!r} of type {kind} cannot hold event arguments: convert it first")


def _plain_value(value: Any, tz: Zone) -> Any:
    """A value of an object column as emit() takes it: datetimes (and
    Timestamps) as seconds, numpy scalars as Python ones."""
    if isinstance(value, datetime):
        return to_time(value, tz)
    item = getattr(value, "item", None)
    return item() if callable(item) and type(value).__module__ == "numpy" else value


def _missing(series: "pd.Series[Any]", col: str) -> Any:
    return _marked(series.isna().to_numpy(), f"column {col!r} is missing")


def _marked(mask: Any, reason: str) -> Any:
    """``reason`` where ``mask`` holds, None elsewhere; None if it holds nowhere."""
    if not mask.any():
        return None
    why = np.full(len(mask), None, dtype=object)
    why[mask] = reason
    return why


def _plain(series: "pd.Series[Any]", col: str, texts: Callable[["pd.Series[Any]"], "pd.Series[Any]"]) -> tuple[Any, Any]:
    """Texts of a column whose every present value converts, missing ones rejected."""
    why = _missing(series, col)
    if why is None:
        return texts(series).to_numpy(dtype=object), None
    out = np.full(len(series), "", dtype=object)
    present = why == None  # noqa: E711
    out[present] = texts(series[present]).to_numpy(dtype=object)
    return out, why


def _ints(series: "pd.Series[Any]", col: str) -> tuple[Any, Any]:
    """A column of ints as int64 numbers (0 where missing)."""
    why = _missing(series, col)
    if why is None:
        return series.astype("int64").to_numpy(), None
    present = why == None  # noqa: E711
    out = np.zeros(len(series), dtype=np.int64)
    out[present] = series[present].astype("int64").to_numpy()
    return out, why


def _floats(series: "pd.Series[Any]", col: str) -> tuple[Any, Any]:
    """A column of floats as float64 numbers (0.0 where missing or not finite)."""
    values = series.to_numpy(dtype="float64", na_value=np.nan)
    finite = np.isfinite(values)
    if finite.all():
        return values, None
    why = np.full(len(values), None, dtype=object)
    why[np.isnan(values)] = f"column {col!r} is missing"
    infinite = ~finite & ~np.isnan(values)
    why[infinite] = [f"column {col!r}: {v!r} is not a finite number" for v in values[infinite].tolist()]
    return np.where(finite, values, 0.0), why


def _seconds(series: "pd.Series[Any]", tz: Zone) -> "pd.Series[Any]":
    """Seconds since 1970 UTC of a datetime64 column (naive times in ``tz``)."""
    import pandas as pd  # pandas loads with the first DataFrame, not with every engine

    if series.dt.tz is None:
        series = series.dt.tz_localize(zone(tz))
    utc = series.dt.tz_convert("UTC")
    return (utc - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1)


def _categorical(
    series: "pd.Series[Any]", col: str, tz: Zone, convert: Callable[["pd.Series[Any]", str, Zone], tuple[Any, Any]]
) -> tuple[Any, Any]:
    """A categorical column: its categories converted once, then taken by code."""
    import pandas as pd  # pandas loads with the first DataFrame, not with every engine

    texts, why = convert(pd.Series(series.cat.categories), col, tz)
    return _take(texts, why, series.cat.codes.to_numpy(), col)


def _by_value(series: "pd.Series[Any]", col: str, convert: Callable[[Any], str]) -> tuple[Any, Any]:
    """A column of texts or other objects, converted once per distinct
    value; one by one where equal values may differ in type (``1`` and
    ``1.0`` are equal in Python, not in Prolog) or cannot be hashed."""
    import pandas as pd  # pandas loads with the first DataFrame, not with every engine

    kind = pd.api.types.infer_dtype(series, skipna=True)
    if kind in ("string", "empty", "integer", "floating", "boolean", "datetime", "decimal"):
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
        values = np.asarray(uniques, dtype=object)
    else:
        values = series.to_numpy(dtype=object)
        codes = np.where(series.isna().to_numpy(), -1, np.arange(len(values)))
    texts = np.full(len(values), "", dtype=object)
    reasons = np.full(len(values), None, dtype=object)
    for i, value in enumerate(values.tolist()):
        try:
            texts[i] = convert(value)
        except InvalidEvent as e:
            text = str(e)
            reasons[i] = text if text.startswith("column ") else f"column {col!r}: {text}"
    return _take(texts, reasons, codes, col)


def _take(texts: Any, reasons: Any, codes: Any, col: str) -> tuple[Any, Any]:
    """The texts and reasons (None: none) of distinct values, by each row's
    code (-1: missing); the reasons are None if no row has one."""
    present = codes >= 0
    if present.all() and (reasons is None or not (reasons != None).any()):  # noqa: E711
        return texts[codes], None
    if reasons is None:
        reasons = np.full(len(texts), None, dtype=object)
    out = np.zeros(len(codes), dtype=texts.dtype) if texts.dtype.kind in "if" else np.full(len(codes), "", dtype=object)
    why = np.full(len(codes), f"column {col!r} is missing", dtype=object)
    out[present] = texts[codes[present]]
    why[present] = reasons[codes[present]]
    return out, why
