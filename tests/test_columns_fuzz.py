"""The foreign library's text paths against Prolog's, fuzzed with a fixed
seed (tests/fuzz_columns.py; longer runs: its --cases), once as
etalis-py builds the library and once built with the address and
undefined-behaviour sanitizers, which stop the run at a read past a
buffer or an overflow."""

from __future__ import annotations

import pytest

from fuzz_columns import run


@pytest.mark.parametrize("sanitize", [False, True])
def test_the_library_reads_and_writes_what_prolog_does(sanitize: bool) -> None:
    done = run(seed=3, cases=150, sanitize=sanitize)
    assert (done.returncode, done.stdout) == (
        0, "reader 150 cases (79 read by the library), writer 150 cases (62 written by it), 0 faults\n")
