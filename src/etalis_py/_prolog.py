"""The bridge to the SWI-Prolog engine embedded in this process.

pyswip embeds one SWI-Prolog per process.  Every request to the engine goes
through one foreign call, ``etalis:etalis_api/3``, with strings in and out:
the request term and a payload (rule text or event lines), and a reply whose
first line is a JSON header.  Passing text in bulk keeps the cost per event
to Prolog's own reader instead of one ctypes call per term.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

from .errors import EtalisError
from .prolog_text import prolog_string, quote_atom


def prolog_dir() -> Path:
    """The directory holding ``etalis.pl``: inside the installed package, or
    the source tree's top-level ``prolog/`` in an editable install."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "prolog", here.parents[1] / "prolog"):
        if (candidate / "etalis.pl").is_file():
            return candidate
    raise EtalisError(f"cannot find the Prolog sources (etalis.pl) near {here}")


class PrologBridge:
    """One SWI-Prolog with the etalis modules loaded; see :func:`bridge`."""

    def __init__(self) -> None:
        from pyswip import core  # importing pyswip starts SWI-Prolog

        self._core = core
        self._lib = core._lib
        fixed_mmap_threshold()
        lib = self._lib
        lib.PL_get_nchars.argtypes = [
            core.term_t,
            ctypes.POINTER(ctypes.c_size_t),
            ctypes.POINTER(ctypes.c_char_p),
            ctypes.c_uint,
        ]
        lib.PL_get_nchars.restype = ctypes.c_int
        lib.PL_get_string.argtypes = [core.term_t, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_size_t)]
        lib.PL_get_string.restype = ctypes.c_int
        self._lock = threading.RLock()
        self._cwd = ""
        self._attach()
        # compiled arithmetic for the engine and the clauses it generates
        self._call_goal("set_prolog_flag(optimise, true)")
        self._call_goal(f"use_module({quote_atom(str(prolog_dir() / 'etalis'))})")
        self._api = lib.PL_predicate(b"etalis_api", 3, b"etalis")
        self._columns: Optional[bool] = None

    @property
    def lock(self) -> "threading.RLock":
        """Held for each request: hold it to read what a reply points to
        (packed detections) before another request can change it."""
        return self._lock

    def columns(self) -> bool:
        """Whether batches can cross as packed columns (``feed_columns``):
        the foreign library is built (see :mod:`etalis_py.columns`) and
        loaded on the first call, with one notice if it cannot be."""
        if self._columns is None:
            from .columns import find_or_build, text_notice

            home = self.request("prolog_home")[0]["home"]
            path, why = find_or_build(prolog_dir(), str(home))
            if path is not None:
                try:
                    self.request(f"columns_library({quote_atom(str(path))})")
                except EtalisError as e:
                    path, why = None, f"cannot load {path}: {e}"
            if path is None:
                text_notice(why)
            self._columns = path is not None
        return self._columns

    def _attach(self) -> None:
        if self._lib.PL_thread_self() == -1:
            if self._lib.PL_thread_attach_engine(None) < 0:
                raise EtalisError("cannot attach a Prolog engine to this thread")

    def _follow_cwd(self) -> None:
        """Relative paths (rule files, ontologies) are relative to Python's
        working directory: SWI-Prolog keeps its own, so follow a chdir."""
        try:
            cwd = os.getcwd()
        except OSError:  # the directory was removed: keep Prolog's
            return
        if cwd != self._cwd:
            self._call_goal(f"working_directory(_, {quote_atom(cwd)})")
            self._cwd = cwd

    def _call_goal(self, goal: str) -> None:
        lib = self._lib
        fid = lib.PL_open_foreign_frame()
        try:
            t = lib.PL_new_term_ref()
            if not lib.PL_chars_to_term(goal.encode("utf-8"), t) or not lib.PL_call(t, None):
                raise EtalisError(f"Prolog goal failed: {goal}")
        finally:
            lib.PL_discard_foreign_frame(fid)

    def request(self, request: str, payload: str = "") -> tuple[dict[str, Any], str]:
        """Send one request; return the JSON header and the rest of the reply.

        Raises :class:`EtalisError` (or a subclass) when the header is an error.
        """
        reply, wide = self._reply(request, payload.encode("utf-8"), self._core.REP_UTF8)
        text = reply.decode("utf-8" if wide else "latin-1")
        head, _, rest = text.partition("\n")
        return self._header(head), rest

    def request_bytes(self, request: str, payload: bytes = b"") -> tuple[dict[str, Any], bytes]:
        """As :meth:`request` for a payload and a reply body of bytes: each
        byte crosses as one character of code 0..255 (a snapshot's)."""
        reply, wide = self._reply(request, payload, 0)  # REP_ISO_LATIN_1
        if wide:
            raise EtalisError(f"engine reply to {request} is not bytes")
        head, _, rest = reply.partition(b"\n")
        return self._header(head.decode("ascii")), rest

    @staticmethod
    def _header(head: str) -> dict[str, Any]:
        header: dict[str, Any] = json.loads(head)
        if "error" in header:
            raise EtalisError.from_reply(header["error"])
        return header

    def _reply(self, request: str, body: bytes, rep: int) -> tuple[bytes, bool]:
        """The reply to one request, with its payload ``body`` in the
        representation ``rep``; and whether it came as wide text (UTF-8)."""
        core, lib = self._core, self._lib
        flags = core.CVT_STRING | core.REP_UTF8 | core.CVT_EXCEPTION
        with self._lock:
            self._attach()
            self._follow_cwd()
            fid = lib.PL_open_foreign_frame()
            try:
                args = lib.PL_new_term_refs(3)
                req = request.encode("utf-8")
                lib.PL_put_chars(args, core.PL_STRING | core.REP_UTF8, len(req), req)
                lib.PL_put_chars(args + 1, core.PL_STRING | rep, len(body), body)
                qid = lib.PL_open_query(
                    None, core.PL_Q_NODEBUG | core.PL_Q_CATCH_EXCEPTION, self._api, args
                )
                try:
                    if not lib.PL_next_solution(qid):
                        raise EtalisError(f"engine request failed: {request}")
                    size = ctypes.c_size_t()
                    ptr = ctypes.c_char_p()
                    # A reply can be megabytes: read a Latin-1 string's own
                    # text (PL_get_nchars' conversion buffers made the process
                    # grow by each reply); only wide text is converted.
                    if lib.PL_get_string(args + 2, ctypes.byref(ptr), ctypes.byref(size)):
                        return ctypes.string_at(ptr, size.value), False
                    if lib.PL_get_nchars(args + 2, ctypes.byref(size), ctypes.byref(ptr), flags):
                        return ctypes.string_at(ptr, size.value), True
                    raise EtalisError("engine reply is not text")
                finally:
                    lib.PL_cut_query(qid)
            finally:
                lib.PL_discard_foreign_frame(fid)


# glibc's mallopt parameter, and the size from which it serves an
# allocation by a mapping of its own
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 256 * 1024


def fixed_mmap_threshold() -> None:
    """Make glibc's malloc give every block of :data:`MMAP_THRESHOLD`
    bytes or more a mapping of its own, returned to the system when freed.

    The text of each batch, its reply and Prolog's copies of them are
    blocks of hundreds of kilobytes, allocated and freed in turn.  By
    default glibc raises its threshold to the largest block freed, then
    serves such blocks from its heap among small ones, whose free space
    fragments: the process grew by some 10% from 10^6 to 10^7 events.
    A fixed threshold keeps it flat.  A no-op on other C libraries."""
    if not sys.platform.startswith("linux"):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)


@functools.cache
def bridge() -> PrologBridge:
    """The process's bridge, started on first use (SWI-Prolog is per process)."""
    return PrologBridge()


def static_text_source(static: Sequence[tuple[str, str]], source: str) -> str:
    """The Prolog source term ``source`` with static knowledge given as
    texts, (name, text) each, read before it (see :func:`rules_source`)."""
    if not static:
        return source
    texts = ", ".join(f"text({quote_atom(name)}, {prolog_string(text)})" for name, text in static)
    return f"with_static([{texts}], {source})"


def rules_source(path: str | os.PathLike[str], static: Sequence[str | os.PathLike[str]] = ()) -> str:
    """The Prolog source term of the rule file ``path`` with the files of
    static knowledge ``static`` (Prolog facts and rules, as ETALIS's test
    drivers consult a ``.db`` file beside the rules) read before it."""
    source = f"file({quote_atom(str(Path(path)))})"
    if not static:
        return source
    return f"with_static([{', '.join(quote_atom(str(Path(f))) for f in static)}], {source})"
