"""Detections written as JSON lines by the foreign library
(etalis_columns.c's etalis_write_detection/4, behind
etalis_protocol:write_detection/2): the bytes Prolog's
write_json_detection/4 writes, for every detection it takes; any other
detection is left to Prolog."""

from __future__ import annotations

from pathlib import Path

import pytest

from etalis_py import Engine
from etalis_py.bridge._prolog import bridge


def both_ways(format_: str, detection: str) -> tuple[str, str]:
    """The line Prolog writes for ``detection`` (``E-T1-T2``, Prolog
    text, or a goal that binds E, T1 and T2), and the library's
    (``fallback`` if it leaves it)."""
    from pyswip import Prolog

    assert Engine.from_string("z <- y.\n").columnar()     # the bridge up, the library loaded
    goal = detection if detection.startswith("E = ") else f"E-T1-T2 = ({detection})"
    query = (f"findall(P-C, ({goal}, "
             f"with_output_to(string(P), etalis_protocol:write_json_detection({format_}, E, T1, T2)), "
             f"( with_output_to(string(C), etalis_columns:etalis_write_detection({format_}, E, T1, T2)) "
             f"-> true ; C = fallback )), [P-C])")
    [answer] = bridge().on_thread(lambda: list(Prolog.query(query)))
    return answer["P"].decode(), answer["C"] if answer["C"] == "fallback" else answer["C"].decode()


@pytest.mark.parametrize("format_", ["object", "row"])
@pytest.mark.parametrize("detection, line", [
    ("c(1)-1-2", '{"event": "c", "args": [1], "start": 1, "end": 2}'),
    ("c-0.01-1.0e22", '{"event": "c", "args": [], "start": 0.01, "end": 1.0e+22}'),
    ('c(x, "s", 1.0e-7, 123456789.0, 1.0e15, -0.0, 5.0e-324, _)-0.5-0.5',
     '{"event": "c", "args": ["x", "s", 1.0e-7, 123456789.0, 1.0e+15, -0.0, 5.0e-324, null], "start": 0.5, '
     '"end": 0.5}'),
    ("E = c(I, N), I is inf, N is nan, T1 = 1, T2 = 1", '{"event": "c", "args": [null, null], "start": 1, "end": 1}'),
    ("c(1180591620717411303424)-1180591620717411303424-1180591620717411303425",
     '{"event": "c", "args": [1180591620717411303424], "start": 1180591620717411303424, '
     '"end": 1180591620717411303425}'),
    ("'x y'('it''s', ' ~')-1.5-2", '{"event": "x y", "args": ["it\'s", " ~"], "start": 1.5, "end": 2}'),
])
def test_the_library_writes_prologs_bytes(format_: str, detection: str, line: str) -> None:
    prolog, library = both_ways(format_, detection)
    expected = line if format_ == "object" else row_of(line)
    assert (prolog, library) == (expected + "\n", expected + "\n")


def row_of(line: str) -> str:
    """The row format's line of the object format's ``line``."""
    return ("[" + line.removeprefix('{"event": ').replace(', "args": [', ", [").replace('], "start": ', "], ")
            .replace(', "end": ', ", ").removesuffix("}") + "]")


@pytest.mark.parametrize("detection", [
    "c('a\"b')-1-1", "c('a\\\\b')-1-1", "c('é')-1-1", "c('a\\nb')-1-1", "c([1])-1-1", "c(f(x))-1-1",
    "[](1)-1-1", "c(1)-a-1", "c(1)-1-\"t\"",
])
def test_other_detections_are_left_to_prolog(detection: str) -> None:
    assert both_ways("object", detection)[1] == "fallback"


def test_a_text_of_more_than_256_characters_is_left_to_prolog() -> None:
    assert both_ways("row", f"c('{'x' * 256}')-1-1") == (f'["c", ["{"x" * 256}"], 1, 1]\n',) * 2
    assert both_ways("row", f"c('{'x' * 257}')-1-1") == (f'["c", ["{"x" * 257}"], 1, 1]\n', "fallback")


def test_random_numbers_are_written_as_prolog_writes_them() -> None:
    """Floats of every magnitude, decimals of up to 15 digits (which the
    library writes itself) and integers of every size, the library's lines
    against Prolog's, 4,000 detections in one query."""
    from pyswip import Prolog

    assert Engine.from_string("z <- y.\n").columnar()
    query = ("findall(Differ, (set_random(seed(7)), findall(D, (between(1, 2000, _), random_between(-330, 308, K), "
             "L is -(2**70), H is 2**70, random_between(L, H, I), random_between(-99, 99, J), "
             "X is (random_float - 0.5) * 10.0 ** K, Y is float(J) / 8, random_between(0, 19, Q), "
             "random_between(-999999999999999, 999999999999999, M), Z is M / 10.0 ** Q, "
             "D = c(X, I, J, Y, Z)-X-Z), Ds), "
             "findall(F-D, (member(D, Ds), member(F, [object, row]), D = E-T1-T2, "
             "with_output_to(string(P), etalis_protocol:write_json_detection(F, E, T1, T2)), "
             "\\+ (with_output_to(string(C), etalis_columns:etalis_write_detection(F, E, T1, T2)), C == P)), "
             "Differ0), format(string(Differ), '~q', [Differ0])), [Differ])")
    [answer] = bridge().on_thread(lambda: list(Prolog.query(query)))
    assert answer["Differ"] == b"[]"


@pytest.mark.parametrize("time, written", [("T1 is inf, T2 = 2", "1.0Inf, 2"), ("T1 = 1, T2 is nan", "1, 1.5NaN"),
                                           ("T1 is -inf, T2 is inf", "-1.0Inf, 1.0Inf")])
def test_a_time_that_is_not_a_finite_number_is_left_to_prolog(time: str, written: str) -> None:
    assert both_ways("row", f"E = c(1), {time}") == (f'["c", [1], {written}]\n', "fallback")


@pytest.mark.parametrize("encoding, codec", [("utf8", "utf-8"), ("octet", "latin-1"), ("iso_latin_1", "latin-1"),
                                             ("ascii", "ascii"), ("text", "utf-8"), ("unicode_le", "utf-16-le"),
                                             ("unicode_be", "utf-16-be")])
@pytest.mark.parametrize("newline, ending", [("posix", "\n"), ("dos", "\r\n")])
def test_the_library_writes_the_line_as_the_stream_encodes_it(tmp_path: Path, encoding: str, codec: str,
                                                              newline: str, ending: str) -> None:
    from pyswip import Prolog

    assert Engine.from_string("z <- y.\n").columnar()
    files = {writer: tmp_path / f"{writer}.jsonl" for writer in ("library", "prolog")}
    goals = {"library": "etalis_columns:etalis_write_detection", "prolog": "etalis_protocol:write_json_detection"}
    for writer, file in files.items():
        query = (f"setup_call_cleanup(open('{file}', write, S, [encoding({encoding}), newline({newline})]), "
                 f"with_output_to(S, {goals[writer]}(row, c(\"x\", 1.5), 1, 2)), close(S))")
        assert len(bridge().on_thread(lambda: list(Prolog.query(query)))) == 1
    line = ('["c", ["x", 1.5], 1, 2]' + ending).encode(codec)
    assert (files["library"].read_bytes(), files["prolog"].read_bytes()) == (line, line)


@pytest.mark.parametrize("encoding", ["utf8", "octet", "iso_latin_1"])
def test_the_library_keeps_the_streams_position_as_prolog_does(encoding: str) -> None:
    """The library copies a line into the stream's buffer at once: the
    stream's counts (which the feed reads to cut back the detections of an
    event stopped at a limit) are those that writing the line a character
    at a time gives, over a buffer's worth of lines and its flushes."""
    from pyswip import Prolog

    assert Engine.from_string("z <- y.\n").columnar()
    counts = {}
    for writer in ("etalis_columns:etalis_write_detection", "etalis_protocol:write_json_detection"):
        query = (f"new_memory_file(F), open_memory_file(F, write, S, [encoding({encoding})]), "
                 f"forall(between(1, 3000, I), ( T is I * 0.01, with_output_to(S, {writer}(object, c(I, x), T, T)) )), "
                 "character_count(S, C), line_count(S, L), line_position(S, P), byte_count(S, B), close(S), "
                 "memory_file_to_string(F, Text), free_memory_file(F), string_length(Text, N), "
                 "sub_string(Text, _, 60, 0, End)")
        [answer] = bridge().on_thread(lambda: list(Prolog.query(query)))
        counts[writer] = (answer["C"], answer["L"], answer["P"], answer["B"], answer["N"], answer["End"])
    library, prolog = counts.values()
    assert library == prolog
    assert library[:5] == (library[4], 3001, 0, library[4], library[4]) and library[4] > 100_000
