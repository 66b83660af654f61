"""Engines from several threads, and a fork while an engine call runs
(docs/python-api.md, "Threads and processes")."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from itertools import count

from etalis_py import Detection, Engine


def test_four_threads_share_one_engine_each_detection_exactly_once() -> None:
    clock = count(1)
    in_time_order = threading.Lock()    # the engine wants time order; the threads take turns for it
    expected: list[Detection] = []
    returned: list[Detection] = []
    called: list[Detection] = []
    with Engine.from_string("c(K, I) <- a(K, I) seq b(K, I).", policy="chronological") as engine:
        engine.on("c", called.append)

        def work(k: int) -> None:
            for i in range(100):
                with in_time_order:
                    t1 = next(clock)
                    assert engine.emit("a", k, i, at=t1) == []
                with in_time_order:
                    t2 = next(clock)
                    found = engine.emit("b", k, i, at=t2)
                    returned.extend(found)
                    expected.append(Detection("c", (k, i), t1, t2))

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stats = engine.stats()
    key = lambda d: (d.start, d.end)  # noqa: E731
    assert sorted(returned, key=key) == sorted(called, key=key) == sorted(expected, key=key)
    assert len(expected) == 400
    assert (stats.accepted, stats.rejected, stats.detections, stats.pending) == (800, 0, 400, 0)


def test_one_engine_per_thread_each_sees_only_its_own_events() -> None:
    results: dict[int, list[Detection]] = {}
    counts: dict[int, tuple[int, int]] = {}

    def work(k: int) -> None:
        with Engine.from_string("c(K) <- a(K) seq b(K).") as engine:
            found = engine.emit_many([("a", (k,), t) if t % 2 else ("b", (k,), t) for t in range(1, 201)])
            results[k] = list(found.detections)
            stats = engine.stats()
            counts[k] = (stats.accepted, stats.pending)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        # b at t (even) meets every a before it (odd, unrestricted): 1 + 2 + ... + 100
        assert len(results[k]) == 5050
        assert results[k][:3] == [Detection("c", (k,), 1, 2), Detection("c", (k,), 1, 4), Detection("c", (k,), 3, 4)]
        assert counts[k] == (200, 100)


def run_script(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)


def test_a_process_whose_engine_was_used_from_threads_exits_cleanly() -> None:
    r = run_script("""
        import threading
        from etalis_py import Engine
        engine = Engine.from_string("c(K) <- a(K) seq b(K).")
        def work():
            print(engine.emit_many([("a", (1,), 1), ("b", (1,), 2)]).detections)
        t = threading.Thread(target=work)
        t.start()
        t.join()
    """)
    assert (r.returncode, r.stdout, r.stderr) == (0, "[Detection(event='c', args=(1,), start=1, end=2)]\n", "")


def test_a_fork_while_another_thread_is_inside_an_engine_call_waits_for_it_and_the_child_is_told() -> None:
    r = run_script("""
        import os, sys, threading
        from etalis_py import Engine, EtalisError
        engine = Engine.from_string("c(K) <- a(K) seq b(K).")
        inside = threading.Event()
        def events():
            for t in range(1, 50_001):
                if t == 1000:
                    inside.set()
                yield ("a", (t,), t)
        worker = threading.Thread(target=lambda: engine.emit_many(events(), collect=False))
        worker.start()
        inside.wait()
        pid = os.fork()
        if pid == 0:
            try:
                engine.stats()
            except EtalisError as e:
                print("child:", e)
            sys.exit(0)
        _, status = os.waitpid(pid, 0)
        worker.join()
        print("parent:", os.waitstatus_to_exitcode(status), engine.stats().accepted)
    """)
    assert r.stderr == ""
    assert r.returncode == 0
    assert r.stdout.splitlines() == [
        "child: this process is a fork of one whose etalis engines run on a thread of their own, which a fork "
        "does not copy: make engines in the child only (multiprocessing: use the 'spawn' or 'forkserver' "
        "start method, or fork before the first engine is made)",
        "parent: 0 50000",
    ]


def test_code_run_on_the_bridges_thread_sees_the_engines_and_may_call_them() -> None:
    from pyswip import Prolog

    from etalis_py.bridge._prolog import bridge

    with Engine.from_string("c(K) <- a(K) seq b(K).") as engine:
        engine.emit("a", 1, at=1)
        [answer] = bridge().on_thread(
            lambda: list(Prolog.query(f"etalis_runtime:engine_pending({engine._name}, 1, N)")))
        assert answer["N"] == 1
        assert bridge().on_thread(lambda: engine.emit("b", 1, at=2)) == [Detection("c", (1,), 1, 2)]
