"""The bridge to the SWI-Prolog engine embedded in this process.

pyswip embeds one SWI-Prolog per process.  Every request to the engine goes
through one foreign call, ``etalis:etalis_api/3``, with strings in and out:
the request term and a payload (rule text or event lines), and a reply whose
first line is a JSON header.  Passing text in bulk keeps the cost per event
to Prolog's own reader instead of one ctypes call per term.

The engines' state (their goal stores, above all) is held in global
variables, which belong to one Prolog thread.  So every request runs on one
Python thread of the bridge's own, with its Prolog engine attached: a
request from any thread is handed to it under one lock and waited for,
so that requests from any thread see the same engines, one at a time.  A
fork waits for the request under way; the child cannot reach the bridge's
thread, which the fork did not copy, and is told so.
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import json
import os
import queue
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, TypeVar, Union

from ..errors import EtalisError, byte_size
from .columns import find_or_build, text_notice
from .prolog_text import prolog_string, quote_atom


def prolog_dir() -> Path:
    """The directory holding ``etalis.pl``: inside the installed package, or
    the source tree's top-level ``prolog/`` in an editable install."""
    here = Path(__file__).resolve().parents[1]
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
        lib.PL_record_external.argtypes = [core.term_t, ctypes.POINTER(ctypes.c_size_t)]
        lib.PL_record_external.restype = ctypes.c_void_p
        lib.PL_erase_external.argtypes = [ctypes.c_void_p]
        lib.PL_erase_external.restype = ctypes.c_int
        self._record = lib.PL_new_functor(lib.PL_new_atom(b"record"), 2)
        self._lock = threading.RLock()
        self._cwd = ""
        self._forked = False
        self._jobs: "queue.SimpleQueue[Optional[Callable[[], None]]]" = queue.SimpleQueue()
        self._done: "queue.SimpleQueue[bool]" = queue.SimpleQueue()
        self._stack_limit = stack_limit()
        self._thread = threading.Thread(target=self._serve, name="etalis-prolog", daemon=True)
        started: "queue.SimpleQueue[Optional[BaseException]]" = queue.SimpleQueue()
        self._thread.start()
        self._jobs.put(lambda: started.put(self._start()))
        failed = started.get()
        if failed is not None:
            self._jobs.put(None)
            self._done.get()
            raise failed
        # atexit runs last in, first out: this before pyswip's PL_cleanup,
        # which cannot stop a Prolog thread that waits in Python
        atexit.register(self._stop)
        os.register_at_fork(before=self._lock.acquire, after_in_parent=self._lock.release,
                            after_in_child=self._after_fork_in_child)

    def _start(self) -> Optional[BaseException]:
        """On the bridge's thread: its Prolog engine, with the etalis modules."""
        try:
            if self._lib.PL_thread_self() == -1 and self._lib.PL_thread_attach_engine(None) < 0:
                raise EtalisError("cannot attach a Prolog engine to the bridge's thread")
            # compiled arithmetic for the engine and the clauses it generates
            self._call_goal("set_prolog_flag(optimise, true)")
            self._call_goal(f"set_prolog_flag(stack_limit, {self._stack_limit})")
            # messages (a rule's print_message/2) without "[Thread N]": this is the engines' one thread
            self._call_goal("set_prolog_flag(message_context, [])")
            self._call_goal(f"use_module({quote_atom(str(prolog_dir() / 'etalis'))})")
            self._api = self._lib.PL_predicate(b"etalis_api", 3, b"etalis")
            self._columns: Optional[bool] = None
        except BaseException as e:  # handed to the thread that made the bridge
            return e
        return None

    def _serve(self) -> None:
        """The bridge's thread: run each job handed over, until None.
        Ctrl-C is for the thread that made the request, not this one."""
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        while (job := self._jobs.get()) is not None:
            job()
        if self._lib.PL_thread_self() != -1:
            self._lib.PL_thread_destroy_engine()
        self._done.put(True)

    def _stop(self) -> None:
        """At exit: end the bridge's thread and free its Prolog engine (unless
        a thread is still inside a request, which then keeps it)."""
        if not self._forked and self._thread.is_alive() and self._lock.acquire(blocking=False):
            try:
                self._jobs.put(None)
                self._done.get(timeout=10)
            except queue.Empty:
                pass
            finally:
                self._lock.release()

    def _after_fork_in_child(self) -> None:
        """The child of a fork has no bridge thread (a fork copies only the
        thread that forks): its requests are refused, and it leaves Prolog
        as it is at exit (PL_cleanup would wait for that thread)."""
        self._forked = True
        self._lock.release()
        atexit.unregister(self._stop)
        atexit.unregister(self._core.cleanupProlog)

    _T = TypeVar("_T")

    def on_thread(self, job: "Callable[[], PrologBridge._T]") -> "PrologBridge._T":
        """Run ``job`` on the bridge's thread under its lock and return what
        it returns: the way for code that calls SWI-Prolog itself (pyswip's
        ``Prolog.query``, as the benchmarks do) to see the engines' state."""
        with self.held():
            return self._on_thread(job)

    def _on_thread(self, job: "Callable[[], PrologBridge._T]") -> "PrologBridge._T":
        """Run ``job`` on the bridge's thread and return what it returns (or
        raise what it raises).  The caller holds the lock; an interrupt
        (Ctrl-C) while the job runs is raised once it has ended, so that the
        next request does not take this one's reply."""
        if threading.current_thread() is self._thread:
            return job()
        if self._forked:
            raise EtalisError(
                "this process is a fork of one whose etalis engines run on a thread of their own, which a fork "
                "does not copy: make engines in the child only (multiprocessing: use the 'spawn' or 'forkserver' "
                "start method, or fork before the first engine is made)")
        outcome: list[Any] = []

        def run() -> None:
            try:
                outcome.append((True, job()))
            except BaseException as e:  # handed to the caller
                outcome.append((False, e))
            self._done.put(True)

        self._jobs.put(run)
        interrupted: Optional[BaseException] = None
        while True:
            try:
                self._done.get()
                break
            except KeyboardInterrupt as e:
                interrupted = e
        ok, value = outcome[0]
        if interrupted is not None:
            raise interrupted
        if not ok:
            raise value
        return value  # type: ignore[no-any-return]

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the lock of requests: to read what a reply points to (packed
        detections) before another request can change it, or to make
        several requests one call.  On the bridge's own thread (a job of
        :meth:`on_thread`) it is held already, by the thread that waits for
        the job."""
        if threading.current_thread() is self._thread:
            yield
        else:
            with self._lock:
                yield

    def columns(self) -> bool:
        """Whether batches can cross as packed columns (a ``feed`` request of ``columns``):
        the foreign library is built (see :mod:`etalis_py.bridge.columns`) and
        loaded on the first call, with one notice if it cannot be."""
        if self._columns is None:
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

    def _request_here(self, request: str, body: bytes, rep: int,
                      recorded: Optional[list["Recorded"]] = None) -> tuple[Union[bytes, bytearray], bool]:
        """The reply to a request whose payload ``body`` is in the
        representation ``rep``, on the bridge's thread; and whether it came
        as wide text (UTF-8).  A reply of two parts, reply(Header, Body)
        (a snapshot's megabytes, which the engine does not copy behind the
        header), is joined here, copying the body once; of a reply
        record(Header, Term), the bytes of Term are put into ``recorded``
        where they are made, not copied (none if Term has none)."""
        core, lib = self._core, self._lib
        flags = core.CVT_STRING | core.REP_UTF8 | core.CVT_EXCEPTION
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
                    raise self._failure(request, lib.PL_exception(qid))
                size = ctypes.c_size_t()
                ptr = ctypes.c_char_p()
                # A reply can be megabytes: read a Latin-1 string's own
                # text (PL_get_nchars' conversion buffers made the process
                # grow by each reply); only wide text is converted.
                if lib.PL_get_string(args + 2, ctypes.byref(ptr), ctypes.byref(size)):
                    return ctypes.string_at(ptr, size.value), False
                part = lib.PL_new_term_ref()
                if lib.PL_get_arg(1, args + 2, part) and lib.PL_get_string(part, ctypes.byref(ptr), ctypes.byref(size)):
                    joined = bytearray(ctypes.string_at(ptr, size.value))
                    joined += b"\n"
                    if recorded is not None and lib.PL_is_functor(args + 2, self._record) and \
                            lib.PL_get_arg(2, args + 2, part):
                        recorded.extend(self._record_external(part))
                        return joined, False
                    if lib.PL_get_arg(2, args + 2, part) and \
                            lib.PL_get_string(part, ctypes.byref(ptr), ctypes.byref(size)):
                        address = ctypes.cast(ptr, ctypes.c_void_p).value
                        if size.value:
                            joined += (ctypes.c_char * size.value).from_address(address or 0)
                        return joined, False
                if lib.PL_get_nchars(args + 2, ctypes.byref(size), ctypes.byref(ptr), flags):
                    return ctypes.string_at(ptr, size.value), True
                raise EtalisError("engine reply is not text")
            finally:
                lib.PL_cut_query(qid)
        finally:
            lib.PL_discard_foreign_frame(fid)

    def _record_external(self, term: int) -> "list[Recorded]":
        """The bytes of ``term`` as fast_term_serialized/2 makes them, made
        outside Prolog's stacks (a string of them there is garbage that
        costs a collection of the stacks, which hold every pending goal),
        or none if ``term`` has none (a blob: the exception is cleared)."""
        lib = self._lib
        size = ctypes.c_size_t()
        address = lib.PL_record_external(term, ctypes.byref(size))
        if not address:
            lib.PL_clear_exception()
            return []
        return [Recorded(address, size.value, lib.PL_erase_external)]

    def _failure(self, request: str, exception: int) -> EtalisError:
        """The error of a request that raised past etalis_api/3, which
        answers every other error itself: the stacks were too full to
        make its reply."""
        size, ptr = ctypes.c_size_t(), ctypes.c_char_p()
        core = self._core
        text = ""
        if exception and self._lib.PL_get_nchars(exception, ctypes.byref(size), ctypes.byref(ptr),
                                                 core.CVT_WRITEQ | core.BUF_DISCARDABLE | core.REP_UTF8):
            text = ctypes.string_at(ptr, size.value).decode("utf-8", "replace")
        name = request.partition("(")[0]
        if text.startswith("error(resource_error("):
            return EtalisError(
                f"the engine ran out of memory in its request {name}: its stacks reached their limit of "
                f"{byte_size(stack_limit())}\n  hint: bound the pending goals with a window (within), "
                ":- max_age(D). or --max-age D, or a consuming policy; or raise the limit "
                "(ETALIS_STACK_LIMIT=bytes, e.g. 16g)")
        return EtalisError(f"engine request failed: {name}{f': {text}' if text else ''}")

    def request(self, request: str, payload: str = "") -> tuple[dict[str, Any], str]:
        """Send one request; return the JSON header and the rest of the reply.

        Raises :class:`EtalisError` (or a subclass) when the header is an error.
        """
        with self.held():
            reply, wide = self._on_thread(lambda: self._request_here(request, payload.encode("utf-8"),
                                                                     self._core.REP_UTF8))
        text = reply.decode("utf-8" if wide else "latin-1")
        head, _, rest = text.partition("\n")
        return self._header(head), rest

    def request_bytes(self, request: str, payload: bytes = b"") -> tuple[dict[str, Any], memoryview]:
        """As :meth:`request` for a payload and a reply body of bytes: each
        byte crosses as one character of code 0..255 (a snapshot's).  The
        body is a view of the reply, not a copy (it can be megabytes)."""
        with self.held():
            reply, wide = self._on_thread(lambda: self._request_here(request, payload, 0))  # REP_ISO_LATIN_1
        if wide:
            raise EtalisError(f"engine reply to {request} is not bytes")
        end = reply.find(b"\n")
        if end < 0:
            end = len(reply)
        return self._header(reply[:end].decode("ascii")), memoryview(reply)[end + 1:]

    def request_recorded(self, request: str) -> tuple[dict[str, Any], Optional["Recorded"]]:
        """As :meth:`request_bytes` for a request whose reply is
        record(Header, Term): the bytes of Term where SWI-Prolog made them,
        not copied (a snapshot's content can be megabytes), which the
        caller frees; None if Term has no bytes (a blob)."""
        recorded: list[Recorded] = []
        try:
            with self.held():
                reply, wide = self._on_thread(lambda: self._request_here(request, b"", 0, recorded))
            if wide:
                raise EtalisError(f"engine reply to {request} is not bytes")
            return self._header(bytes(reply).partition(b"\n")[0].decode("ascii")), (recorded[0] if recorded else None)
        except BaseException:
            for record in recorded:
                record.free()
            raise

    @staticmethod
    def _header(head: str) -> dict[str, Any]:
        header: dict[str, Any] = json.loads(head)
        if "error" in header:
            raise EtalisError.from_reply(header["error"])
        return header


@dataclass
class Recorded:
    """Bytes that SWI-Prolog made outside its stacks with
    PL_record_external() (those of fast_term_serialized/2), read where
    they are until :meth:`free` gives them back, once, from any thread."""

    address: int
    size: int
    erase: Callable[[int], Any]

    def view(self) -> memoryview:
        """The bytes, not copied: valid until :meth:`free`."""
        if not self.address:
            raise ValueError("the recorded bytes were freed")
        return memoryview((ctypes.c_ubyte * self.size).from_address(self.address)).cast("B")

    def free(self) -> None:
        address, self.address = self.address, 0
        if address:
            self.erase(address)


def stack_limit() -> int:
    """The most bytes the Prolog stacks may take, where the engines keep
    their pending goals: ``ETALIS_STACK_LIMIT`` (bytes, or with a suffix
    k, m or g), else half the machine's memory (1 GiB at least: the
    stacks also bound what a runaway ``where`` condition may take).  An
    event that needs more stops with
    :class:`~etalis_py.errors.MemoryLimitError`."""
    given = os.environ.get("ETALIS_STACK_LIMIT", "").strip().lower()
    if given:
        scale = {"k": 2**10, "m": 2**20, "g": 2**30}.get(given[-1], 1)
        try:
            value = int(float(given[:-1] if scale > 1 else given) * scale)
        except ValueError:
            value = 0
        if value < 2**24:
            raise EtalisError(f"ETALIS_STACK_LIMIT={given!r} is not a size of at least 16m "
                              "(bytes, or a number with k, m or g)")
        return value
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        memory = 0
    return max(2**30, memory // 2)


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
