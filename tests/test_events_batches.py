"""A run of .events lines that are all plain events (their only brackets
those of event(...), its arguments and its interval; no quotes, comments or
bar) crosses as one batch list; the engine reads each element as it reads
the line on its own: the same detections and the same rejections."""

from __future__ import annotations

import random
from pathlib import Path

from etalis_py import Engine
from etalis_py.inputs.lines import BOM, _whole_chunks, line_blocks
from etalis_py.inputs.streams import read_batches

RULES = "c(X) <- a(X).\n"
LINES = ("event(a(X), 1).\nevent(b(X, X), 2).\nevent(c(_), 3).\nevent(a(wt:o1), 4).\nevent(a(1 + 2), 5).\n"
         "event(a(- 1), 6).\nevent(a(1), 7, 8).\nevent(a(x), [9, 10]).\nevent(a(y), [12, 11]).\n"
         "event(a(a :- b), 12).\nevent(a(1.5e3, -2), 13).\n")


def fed(path: Path, batch_lines: int) -> tuple[list[int | None], str, list[tuple[int, str]]]:
    with Engine.from_string(RULES) as engine:
        kinds, lines, rejected = [], "", []
        for batch in read_batches(path, batch_lines=batch_lines):
            kinds.append(batch.terms)
            result = engine.feed_text(batch.text, batch.first_line, batch.terms)
            lines += result.detection_lines
            rejected += [(r.line, r.reason) for r in batch.rejected + result.rejected]
        return kinds, lines, rejected


def test_plain_lines_are_one_batch_list_read_as_the_lines(tmp_path: Path) -> None:
    path = tmp_path / "s.events"
    path.write_text(LINES)
    kinds, lines, rejected = fed(path, 100)
    assert kinds == [11]                                  # one batch list of 11 terms
    assert lines == ('{"event": "c", "args": ["wt:o1"], "start": 4, "end": 4}\n'
                     '{"event": "c", "args": ["1+2"], "start": 5, "end": 5}\n'
                     '{"event": "c", "args": ["- 1"], "start": 6, "end": 6}\n'
                     '{"event": "c", "args": ["x"], "start": 9, "end": 10}\n'
                     '{"event": "c", "args": ["a:-b"], "start": 12, "end": 12}\n')
    assert rejected == [(1, "event a(_) has unbound variables"), (2, "event b(A,A) has unbound variables"),
                        (3, "event c(_) has unbound variables"),
                        (7, "provenance 8 is not a list of ground det(Event, Start, End)"),
                        (9, "start 12 is after end 11")]
    line_by_line = Engine.from_string(RULES).feed_text(LINES)
    assert (lines, rejected) == (line_by_line.detection_lines, [(r.line, r.reason) for r in line_by_line.rejected])


def test_a_line_with_a_quote_a_comment_or_nested_brackets_sends_its_batch_line_by_line(tmp_path: Path) -> None:
    for odd in ("event(a('x y'), 3).", "event(a(1), 3). % note", "event(a(f(1)), 3).", "event(a([1]), 3).",
                "event(a(1)), b(2)."):
        path = tmp_path / "s.events"
        path.write_text(f"event(a(1), 1).\nevent(a(2), 2).\n{odd}\n")
        kinds, lines, _ = fed(path, 100)
        assert kinds == [None], odd                       # event lines, not a batch list
        assert lines.startswith('{"event": "c", "args": [1], "start": 1, "end": 1}\n'
                                '{"event": "c", "args": [2], "start": 2, "end": 2}\n'), odd


def test_reads_become_chunks_of_whole_lines_and_blocks_of_n_lines_with_their_first_line() -> None:
    """Random reads (lines longer than a read, empty reads, a byte order
    mark) give chunks that end at a newline and, cut again, blocks of
    exactly n lines each (the last fewer) with the number of their first
    line: together the input, its mark at the start dropped."""
    rng = random.Random(7)
    for _ in range(2000):
        text = b"".join(rng.choice([b"a", b"bb\n", b"\n", b"ccc", b"\xef\xbb\xbf", b"x" * rng.randint(0, 40) + b"\n"])
                        for _ in range(rng.randint(0, 50)))
        if rng.random() < 0.3:
            text = BOM + text
        cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, rng.randint(0, 8))))
        reads = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
        reads.insert(rng.randint(0, len(reads)), b"")
        chunks = list(_whole_chunks(reads))
        assert b"".join(chunks) == text
        assert all(c.endswith(b"\n") for c in chunks[:-1] if c)
        n = rng.randint(1, 5)
        blocks = list(line_blocks(chunks, n))
        assert b"".join(b for _, b in blocks) == text.removeprefix(BOM)
        assert [first for first, _ in blocks] == [1 + i * n for i in range(len(blocks))]
        assert all(b.count(b"\n") == n for _, b in blocks[:-1])
        assert not blocks or 0 < blocks[-1][1].count(b"\n") + (not blocks[-1][1].endswith(b"\n")) <= n
