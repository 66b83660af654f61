"""A .events file's blocks of plain events scanned by the foreign library
(etalis_columns.c's etalis_scan_events(), called from Python) into packed
columns: each block gives the terms that its batch list gives, and any
block it does not take is read as before, with the same batches, line
numbers and rejections."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Optional

import pytest
from pyswip import Prolog

from etalis_py import Engine
from etalis_py.bridge._prolog import bridge
from etalis_py.inputs.batch import Batch
from etalis_py.inputs.events_text import Scanner, _scanned_batches, _term_batches, scanner
from etalis_py.inputs.lines import Lines

RULES = "got(X, Y) <- a(X, Y).\npair(X, Y) <- a(X) seq b(Y).\nboth(X) <- a(X) and b(X).\n"


@pytest.fixture(scope="module")
def scan() -> Scanner:
    assert Engine.from_string("z <- y.\n").columnar()     # the library loaded, into the global scope
    found = scanner()
    assert found is not None
    return found


def prolog_string(text: str) -> str:
    """``text`` as a Prolog string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def same_terms(packed: Batch, listed: Batch) -> bool:
    """The packed batch's terms (etalis_columns:column_terms/3) are those
    that the engine reads from the batch list (etalis_batches' reading of
    a request's list: the library's, else term_string/2), each term
    identical (==, so -0.0 is not 0.0) and the same count."""
    assert packed.packed is not None and listed.terms is not None
    spec = packed.packed.spec()
    query = (f"etalis_columns:column_terms({spec}, P, _), "
             f"etalis_batches:request_batch(list({listed.terms}), {prolog_string(listed.text)}, terms(L, _)), "
             f"( P == L -> Same = true ; Same = false )")
    answers = bridge().on_thread(lambda: list(Prolog.query(query)))
    return len(answers) == 1 and str(answers[0]["Same"]) == "true"


def both_ways(scan: Scanner, data: bytes, batch_lines: int) -> tuple[list[Batch], list[Batch]]:
    """The batches of today's reading of ``data`` and of the scanning one."""
    chunks = [data[i:i + 97] for i in range(0, len(data), 97)]
    whole = []                              # chunks of whole lines, as line_chunks gives them
    pending = b""
    for chunk in chunks:
        pending += chunk
        cut = pending.rfind(b"\n") + 1
        if cut:
            whole.append(pending[:cut])
            pending = pending[cut:]
    if pending:
        whole.append(pending)
    return list(_term_batches(Lines(iter(whole)), batch_lines)), list(_scanned_batches(iter(whole), batch_lines, scan))


def check_alike(scan: Scanner, data: bytes, batch_lines: int) -> int:
    """Both ways give the same batches (a packed one the same terms as its
    batch list); how many blocks were packed."""
    old, new = both_ways(scan, data, batch_lines)
    assert len(old) == len(new), data
    packed = 0
    for a, b in zip(old, new):
        assert (b.first_line, b.end_line) == (a.first_line, a.end_line), data
        if b.packed is None:
            assert b == a, data
        else:
            assert a.terms is not None and a.text.startswith("[") and not a.rejected, data
            assert (b.text, b.rejected) == ("", []), data
            assert same_terms(b, a), (data, a.text)
            packed += 1
    return packed


GOOD_ARGS = ["x", "mod", "is", "dynamic", "aB_1", "z9", "0", "-0", "7", "-12", "007", "0.5", "-2.25", "1.0e3",
             "1.5E-7", "3.0e+2", "-0.0", "0.0", "123456789012345678", "-123456789012345678", "0.1", "2.675",
             "0.5700000000000001", "9007199254740993.0", "1234567890.1234567", "4.35", "1.7976931348623157e308",
             "2.2250738585072014e-308", "5.0e-324", "0.30000000000000004", "99999999999999999.0"]
NEAR_ARGS = ["X", "_", "'q'", "[]", "é", "1_0", "1e5", "0x10", "1.0Inf", "- 3", "+4", "9" * 19, "1.", "0.1e",
             "2 3", "b(1)", "[1, 2]", '"s"', "`b`", "1.0e400", "2.5e-320", "0'c", "0'a'", "{x}", "a|b",
             "/* c */ 1", "1 % c", "9" * 4400, "f(g(h(1)))", "\u00e9t\u00e9", "a:b", "1 + 2"]


def random_line(rng: random.Random) -> bytes:
    """An event line: mostly plain events, some near misses, and lines
    of every other kind (blank, comments, CRLF, no full stop, bad UTF-8, ...)."""
    def arg() -> str:
        return rng.choice(GOOD_ARGS if rng.random() < 0.9 else NEAR_ARGS)

    def number() -> str:
        return rng.choice([t for t in GOOD_ARGS if t[-1].isdigit()])

    def time() -> str:
        pick = number if rng.random() < 0.95 else arg
        if rng.random() < 0.2:
            return rng.choice(["[{}, {}]", "[{},{}]", "[ {} , {} ]", "[{}, {}, 3]"]).format(pick(), pick())
        return pick()

    r = rng.random()
    if r < 0.8:
        name = rng.choice(["a", "b", "c1", "aB", "event", "e_9", "a", "b"])
        args = rng.choice([", ", ",", " , ", ",\t"]).join(arg() for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 33])))
        head = f"{name}({args})" if args else name
        comma = rng.choice([", ", ", ", ",", ",  ", " , ", ",\t", ", \t"])
        line = f"event({head}{comma}{time()})."
        if rng.random() < 0.1:
            line = rng.choice([line[:-1], line + " ", line + "\r", " " + line, line + " % c", line + "\t",
                               line.replace("event(", "event (", 1), line.replace("event(", "Event(", 1),
                               line[:-2] + " ).", line.replace(")", "))", 1)])
        return line.encode()
    return rng.choice([b"", b"  ", b"% a comment", b"a(1).", b"a(1)", b"event(a(1), 1)", b"event(a(1), 1).\r",
                       b"event(a(\xff), 1).", b"event(a(1), \xc3).", b"\xef\xbb\xbfevent(a(1), 1).",
                       b"event(a(1), 1).\x00", "event(a(\u00e9), 1).".encode(), b"event(a(1), 1). event(a(2), 2).",
                       b"event(a('x'), 1).", b"event(a(0'c), 1).", b"event(a([1, [2]]), 1).",
                       b"event(a(" + b"9" * 4400 + b"), 1).", b"event(a(" + b"(" * 60 + b")" * 60 + b"), 1).",
                       b"event(a(1), 1.0e400).", b"event(a(1), [2, 1]).", b"/* c */ event(a(1), 1).",
                       b"event(a(1),\x0b1).", b"event(a(1), 1)%."])


def random_file(rng: random.Random) -> bytes:
    nasty = rng.random() < 0.5
    lines = []
    for _ in range(rng.randint(1, 40)):
        lines.append(random_line(rng) if nasty or rng.random() < 0.05 else
                     f"event({rng.choice('ab')}({rng.randint(-5, 5)}), {rng.randint(0, 99) / 10}).".encode())
    data = b"\n".join(lines) + rng.choice([b"\n", b"\n", b""])
    if rng.random() < 0.1:
        data = b"\xef\xbb\xbf" + data
    if rng.random() < 0.1:
        data = data.replace(b"\n", b"\r\n")
    return data


def test_random_blocks_give_the_same_batches_both_ways(scan: Scanner) -> None:
    rng = random.Random(11)
    packed = 0
    for _ in range(400):
        packed += check_alike(scan, random_file(rng), rng.choice([1, 2, 3, 7, 20_000]))
    assert packed > 150                     # the scanner took a good share of the blocks


@pytest.mark.parametrize("data, packed", [
    (b"event(a(1), 0.0).\nevent(b(2), 0.01).\n", 1),
    (b"event(a(1), 0.0).\nevent(b(2), 0.01).", 1),                        # no final newline
    (b"\xef\xbb\xbfevent(a(1), 0.0).\n", 1),                              # a byte order mark at the start
    (b"event(a(x, -0.0, 007), [1, 2.5]).\nevent(b, [3.0,4.0]).\nevent(c(is), 5).\n", 1),
    (b"event(a(1), 0.0).\r\nevent(b(2), 0.01).\r\n", 0),                  # CRLF: not plain
    (b"event(a(1), 0.0).\n\nevent(b(2), 0.01).\n", 0),                    # a blank line
    (b"event(a(1), 0.0).\nevent(b(\xff), 0.01).\n", 0),                   # not UTF-8
    (b"event(a(1), 0.0).\nevent(a(1), 0.01)\n", 0),                       # no full stop
    (b"event(a(" + b"1" * 4299 + b"), 1).\n", 0),                        # longer than MAX_DIGITS
    (b"event(a(1e5), 1).\n", 0),                                          # read by term_string/2
    (b"event(a(1), 1 2).\n", 0),                                          # a syntax error
])
def test_blocks_of_each_kind(scan: Scanner, data: bytes, packed: int) -> None:
    assert check_alike(scan, data, 100) == packed


def test_more_than_64_heads_or_32_arguments_are_read_as_before(scan: Scanner) -> None:
    heads = b"".join(b"event(e%d(1), %d).\n" % (i, i) for i in range(65))
    assert check_alike(scan, heads, 100) == 0
    assert check_alike(scan, heads, 64) == 2                              # 64 heads, then one
    args = b"event(a(" + b", ".join(b"1" for _ in range(33)) + b"), 1).\n"
    assert check_alike(scan, args, 100) == 0


def test_atoms_get_a_table_a_column(scan: Scanner) -> None:
    data = b"event(a(x, y), 1).\nevent(a(y, x), 2).\nevent(a(x, 1.5), 3).\nevent(b, [4, 5]).\n"
    end, lines, packed = scan.block(data, 0, 100)
    assert (end, lines) == (len(data), 4) and packed is not None
    assert packed.heads == ["(a)/2", "(b)/0"]
    assert [c.table for c in packed.columns] == [["(x)", "(y)"], ["(y)", "(x)"], [], []]
    assert packed.codes.tolist() == [0, 0, 0, 1]
    assert packed.points is not None and packed.points.tolist() == [0, 0, 0, 1]
    assert packed.columns[0].values.tolist() == [0, 1, 0, 0]


def fed(path: Path, text_path: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, ...]:
    monkeypatch.setenv("ETALIS_TEXT_PATH", "1" if text_path else "0")
    with Engine.from_string(RULES) as engine:
        result = engine.emit_file(path, batch_size=5)
        return (result.accepted, [(r.line, r.reason) for r in result.rejected],
                [repr((d.event, d.args, d.start, d.end)) for d in result.detections])


def test_a_file_gives_the_same_detections_and_rejections_both_ways(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(3)
    path = tmp_path / "s.events"
    for _ in range(12):
        path.write_bytes(random_file(rng))
        assert fed(path, False, monkeypatch) == fed(path, True, monkeypatch)


def test_a_run_reads_what_it_read_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.events"
    path.write_bytes(b"event(a(1), 1).\nevent(b(1), 2).\nevent(a(2), [3, 4]).\nevent(b(x), 5).\n"
                     b"event(a(1), [7, 6]).\nevent(b(2), 8).\nbad line\n")
    assert fed(path, False, monkeypatch) == (5, [
        (5, "start 7 is after end 6"),
        (7, "syntax error: operator expected at column 5 (an event line is a(1). or event(a(1), 5). or "
            "event(a(1), [5, 7]). with times in seconds; dates can be given in .jsonl or .csv files)")], [
        "('pair', (1, 1), 1, 2)", "('both', (1,), 1, 2)", "('pair', (1, 'x'), 1, 5)", "('pair', (2, 'x'), 3, 5)",
        "('pair', (1, 2), 1, 8)", "('pair', (2, 2), 3, 8)", "('both', (2,), 3, 8)"])


def test_without_the_library_there_is_no_scanner(monkeypatch: pytest.MonkeyPatch) -> None:
    class Missing:
        def __getattr__(self, name: str) -> Optional[Any]:
            raise AttributeError(name)

    monkeypatch.setattr("etalis_py.inputs.events_text.ctypes.CDLL", lambda _: Missing())
    assert scanner() is None
