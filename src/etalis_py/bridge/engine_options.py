"""What an engine is made and fed with, checked before it crosses: the
policies and strategies, the create options, rule text and event lines;
one request at a time."""

from __future__ import annotations

import functools
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Optional, ParamSpec, TypeVar

from ._prolog import bridge, rules_source
from .prolog_text import quote_atom
from ..errors import EventError, RuleError
from ..events import Event, to_time


POLICIES = ("unrestricted", "recent", "chronological")


STRATEGIES = ("strict", "strict(partition)", "nxt", "last", "max", "stn", "continuous", "cumulative")
"""The selection strategies and contexts (docs/language.md, "Selection strategies")."""


def check_policy(policy: str) -> str:
    """``policy`` if it names a consumption policy (one of POLICIES, or an
    interval variant such as ``recent(longer)``), else ValueError.  The
    engine's own grammar of policies decides (etalis_policies:policy/1)."""
    header, _ = bridge().request(f"policy({quote_atom(policy)})")
    if not header["known"]:
        raise ValueError(f"unknown policy {policy!r}: {header['hint']}")
    return policy


_P = ParamSpec("_P")


_R = TypeVar("_R")


def one_at_a_time(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """An Engine method that holds the bridge's lock while it runs, so that
    calls from several threads (to one engine or several) come one at a
    time, each with its own requests and counts (docs/python-api.md,
    "Threads and processes")."""
    @functools.wraps(method)
    def locked(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with bridge().held():
            return method(*args, **kwargs)
    return locked


def trust_option(trusted: bool, sandbox: Optional[bool]) -> list[str]:
    """The Prolog options that say whether rule files are trusted.

    Rule files are sandboxed unless ``trusted`` is true.  ``sandbox`` is
    the older spelling: ``sandbox=True`` is the default (and contradicts
    ``trusted=True``), ``sandbox=False`` means ``trusted=True`` and is
    deprecated."""
    if sandbox is not None:
        if sandbox and trusted:
            raise ValueError("sandbox=True and trusted=True contradict each other: give trusted=True alone")
        if not sandbox:
            warnings.warn("sandbox=False is deprecated: rule files are sandboxed by default; "
                          "pass trusted=True for a file you trust", DeprecationWarning, stacklevel=3)
            trusted = True
    return ["trusted(true)"] if trusted else []


def limit_options(inference_limit: Optional[int]) -> list[str]:
    """The create option of an ``inference_limit`` (0: none)."""
    if inference_limit is None:
        return []
    if type(inference_limit) is not int or inference_limit < 0:
        raise ValueError(f"inference_limit must be a whole number >= 0 (0: no limit), not {inference_limit!r}")
    return [f"inference_limit({inference_limit or 'inf'})"]


def compile_listing(text: str, source: str = "<string>", policy: Optional[str] = None, path: Optional[str] = None,
                    *, trusted: bool = False, static: Sequence[str | os.PathLike[str]] = ()) -> str:
    """The binary goals and event-driven clauses that rules compile to
    (refused, as by :meth:`Engine.from_file`, unless safe or ``trusted``);
    ``static`` as for :meth:`Engine.from_file`, with ``path``."""
    options = f"[{', '.join(([f'policy({policy})'] if policy else []) + trust_option(trusted, None))}]"
    src = rules_source(path, static) if path else f"text({quote_atom(source)})"
    _, body = bridge().request(f"listing({src}, {options})", text)
    return body


def is_frame(value: Any) -> bool:
    """Whether ``value`` is a pandas DataFrame (or a pyarrow Table), without importing pandas."""
    kind = type(value)
    return kind.__name__ in ("DataFrame", "Table") and kind.__module__.split(".")[0] in ("pandas", "pyarrow")


def outside_level() -> int:
    """The ``stacklevel`` of the first caller outside this package, for a
    warning raised by its caller."""
    here = os.path.dirname(os.path.dirname(__file__))
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(here):
        frame = frame.f_back
        level += 1
    return level


def must_be_text(text: object, what: str) -> None:
    if not isinstance(text, str):
        hint = " (decode bytes first: data.decode('utf-8'))" if isinstance(text, (bytes, bytearray)) else ""
        raise TypeError(f"{what} must be a str, not {type(text).__name__}{hint}")


def check_unicode(text: str, source: str) -> None:
    """Raise :class:`RuleError` at the first lone surrogate of ``text``: it
    has no UTF-8 form, so the rules could not cross to the engine; and
    TypeError if ``text`` is no str (bytes: decode them)."""
    must_be_text(text, "rule text")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        before = text[: e.start]
        line = before.count("\n") + 1
        column = e.start - before.rfind("\n")
        raise RuleError(
            f"rule text is not valid Unicode: a lone surrogate U+{ord(text[e.start]):04X}",
            file=source, line=line, column=column,
            hint="surrogates come in pairs; the text was probably decoded wrongly (decode the file as UTF-8)",
        ) from None


def event_line(name: str, args: tuple[Any, ...], at: Any, start: Any, end: Any) -> str:
    """The input line of :meth:`Engine.emit`'s event, or EventError."""
    if at is not None:
        if start is not None or end is not None:
            raise EventError("give either at= or start= and end=, not both")
        t1 = t2 = to_time(at)
    elif start is not None and end is not None:
        t1, t2 = to_time(start), to_time(end)
    else:
        raise EventError(f"event {name!r} needs a time: at=T, or start=T1 and end=T2")
    try:
        return Event(name, args, t1, t2).to_prolog()
    except (ValueError, RecursionError) as e:  # InvalidEvent among them; an int of too many digits
        raise EventError(f"event {name!r}: {str(e).split(';')[0]}") from None
