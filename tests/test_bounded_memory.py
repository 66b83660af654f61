"""Input files are read in bounded memory: a Parquet file a buffer at a
time, not its row groups at once (benchmarks/throughput.py measures the
process's peak from 10^6 to 10^7 events)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from etalis_py.inputs.streams import Mapping, read_batches

MAPPING = Mapping(event_col="name", args=("k",), time="t")


def write_table(path: Path, rows: int, row_group_size: int) -> None:
    table = pa.table({"name": ["a", "b"] * (rows // 2), "k": pa.array(range(rows), pa.int64()),
                      "t": pa.array([i * 0.25 for i in range(rows)], pa.float64())})
    pq.write_table(table, path, row_group_size=row_group_size)


def read_all(path: Path, rows: int) -> int:
    """Read the file's batches, check them, and return the most memory
    pyarrow held meanwhile."""
    before = pa.total_allocated_bytes()
    peak = terms = 0
    first = last = ""
    for batch in read_batches(path, MAPPING, batch_lines=20_000):
        peak = max(peak, pa.total_allocated_bytes() - before)
        terms += batch.terms or 0
        assert batch.rejected == []
        first = first or batch.text.splitlines()[0]
        last = batch.text.splitlines()[-1]
    assert terms == rows
    assert first == "[event(a(0), 0.0),"
    assert last == f"event(b({rows - 1}), {(rows - 1) * 0.25!r})]"
    return peak


@pytest.mark.parametrize("group", [50_000, None])
def test_reading_a_parquet_file_takes_memory_that_does_not_grow_with_the_file(tmp_path: Path,
                                                                             group: int | None) -> None:
    small, large = tmp_path / "small.parquet", tmp_path / "large.parquet"
    write_table(small, 200_000, group or 200_000)
    write_table(large, 800_000, group or 800_000)
    # row groups of 50,000 rows (4 and 16 of them), or one group a file:
    # pre-buffered, every row group was allocated at once, 1.7-2.4x as
    # much for the large file
    assert read_all(large, 800_000) < 1.25 * read_all(small, 200_000)


# Run in a fresh process: glibc serves a request from a free chunk of its
# heap before it thinks of a mapping, so in a process where other tests
# have freed large blocks the check would say nothing of the threshold.
_THRESHOLD_CHECK = """
import ctypes
from etalis_py import Engine
from etalis_py.bridge._prolog import MMAP_THRESHOLD


class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


Engine.from_string("c <- a seq b.\\n").close()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.mallinfo2.restype = MallInfo2
# glibc's own rule would now serve blocks up to 8 MB from the heap
libc.free(libc.malloc(8 << 20))
mapped = libc.mallinfo2().hblks
block = libc.malloc(MMAP_THRESHOLD)
large = libc.mallinfo2().hblks - mapped
libc.free(block)
freed = libc.mallinfo2().hblks - mapped
small = libc.malloc(MMAP_THRESHOLD - 4096)
below = libc.mallinfo2().hblks - mapped
libc.free(small)
print(large, freed, below)
"""


def test_with_the_engine_started_a_block_of_the_threshold_is_mapped_on_its_own() -> None:
    """glibc serves a block of MMAP_THRESHOLD bytes or more by a mapping of
    its own once the bridge has started, however large the blocks freed
    before: its heap does not fragment with the batches' texts.  A block
    just below the threshold comes from the heap."""
    out = subprocess.run([sys.executable, "-c", _THRESHOLD_CHECK], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "0", "0"]
