"""Batch lists of plain events read by the foreign library
(etalis_columns.c's etalis_list_terms/4, behind
etalis_columns:list_text_terms/4): the shapes it reads give exactly the
terms term_string/2 gives, every other text is left to term_string/2,
and a feed of a batch list gives what the same lines fed one by one give."""

from __future__ import annotations

import random
from typing import Any

import pytest

from etalis_py import Engine
from etalis_py.bridge._prolog import bridge
from etalis_py.errors import Rejection

RULES = "got(X) <- a(X).\npair(X, Y) <- a(X) seq b(Y).\n"


def prolog_string(text: str) -> str:
    """``text`` as a Prolog string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def read_both(text: str, count: int) -> dict[str, Any]:
    """What the library and term_string/2 make of the batch list ``text``:
    ``library`` (the terms as text, or None if it leaves the text),
    ``checked`` and ``same`` (its terms are variants of term_string's)."""
    from pyswip import Prolog

    assert Engine.from_string("z <- y.\n").columnar()     # the bridge up, the library loaded
    query = (f"T = {prolog_string(text)}, "
             f"( etalis_columns:list_text_terms(T, {count}, L, C) "
             f"-> format(string(S), '~q', [L]), "
             f"   ( catch(term_string(L2, T), _, fail), L2 =@= L -> Same = true ; Same = false ) "
             f"; S = none, C = none, Same = none )")
    [answer] = bridge().on_thread(lambda: list(Prolog.query(query)))
    library = answer["S"]
    return {"library": None if library == "none" else library.decode(), "checked": str(answer["C"]),
            "same": str(answer["Same"])}


@pytest.mark.parametrize("text, count, terms, checked", [
    ("[event(a(1), 0.01),\nevent(b(2), 0.02)]", 2, "[event(a(1),0.01),event(b(2),0.02)]", "checked"),
    ("[event(a, [1, 2.5])]", 1, "[event(a,[1,2.5])]", "checked"),
    ("[event(a(x,-3,1.5e-3,mod,is), -1.0E+10)]", 1, "[event(a(x,-3,0.0015,mod,is),-10000000000.0)]", "checked"),
    ("[event(a(012), 0)]", 1, "[event(a(12),0)]", "checked"),
    ("[event(a(123456789012345678), 0)]", 1, "[event(a(123456789012345678),0)]", "checked"),
    ("[ event( a(1) , 2 ) ,\n event(b,3) ]", 2, "[event(a(1),2),event(b,3)]", "checked"),
    ("[event(a(-0.0,-0), 1)]", 1, "[event(a(-0.0,0),1)]", "checked"),
    ("[event(aB_9(zZ), 0.1)]", 1, "[event(aB_9(zZ),0.1)]", "checked"),
    ("[]", 0, "[]", "checked"),
    # a start after its end: read, left to the feed's checks (which reject it)
    ("[event(a(1), [2, 1])]", 1, "[event(a(1),[2,1])]", "plain"),
    # an integer past 2**53 against a float: not compared here
    ("[event(a(1), [9007199254740993, 9.1e15])]", 1, "[event(a(1),[9007199254740993,9.1e+15])]",
     "plain"),
])
def test_the_shapes_it_reads_give_term_strings_terms(text: str, count: int, terms: str, checked: str) -> None:
    assert read_both(text, count) == {"library": terms, "checked": checked, "same": "true"}


@pytest.mark.parametrize("names, checked", [(62, "checked"), (63, "plain")])   # and two heads of e0
def test_a_batch_of_more_than_64_heads_is_read_but_not_checked(names: int, checked: str) -> None:
    lines = [f"event(e{i}(1), {i})" for i in range(names)] + ["event(e0, 99)", "event(e0(1, 2), 99)"]
    got = read_both("[" + ",\n".join(lines) + "]", len(lines))
    assert (got["checked"], got["same"]) == (checked, "true")
    assert got["library"] == "[" + ",".join(line.replace(", ", ",") for line in lines) + "]"


@pytest.mark.parametrize("text, count", [
    ("[event(a(1_000), 0)]", 1), ("[event(a(0'a), 0)]", 1), ("[event(a(1.0Inf), 0)]", 1),
    ("[event(a(- 1), 0)]", 1), ("[event(a(X), 0)]", 1), ("[event(a(1e10), 0)]", 1),
    ("[event(a(1234567890123456789), 0)]", 1), ("[event(a(1), 1.0e400)]", 1), ("[event(a(1), 2.5e-320)]", 1),
    ("[event(a (1), 1)]", 1), ("[event(a(b(1)), 1)]", 1), ('[event(a("s"), 1)]', 1), ("[event(a(1), 1)] x", 1),
    ("[event(a(1), 0)]", 2), ("[event(a(1), 0),\nevent(b(1), 0)]", 1), ("[event(a(1), 1 2)]", 1),
    ("[event(a(0x1f), 1)]", 1), ("[event(a(+1), 1)]", 1), ("[event(a(1.), 1)]", 1), ("[event(a(1.0e), 1)]", 1),
    ("[event(a(), 1)]", 1), ("[event('a'(1), 1)]", 1), ("[event(a(1), 1),\n[]]", 2), ("[a(1)]", 1),
    ("[event(é(1), 1)]", 1), ("[event(a(1), 1), % c\nevent(a(2), 2)]", 2), ("[_A = [x], event(a(1), 1)]", 1),
    ("[]", -1), ("[event(a(1), 1)]", -1), ("[event(a(1), 1)", 1), ("[event(a('), 1)]", 1),
    ("[event(a(1), 1),", 1), ("", 0), ("[", 0), ("[event(a(\u0100), 1)]", 1), ("[event(a(1.0e-400), 1)]", 1),
])
def test_other_texts_are_left_to_term_string(text: str, count: int) -> None:
    assert read_both(text, count) == {"library": None, "checked": "none", "same": "none"}


def random_batch(rng: random.Random) -> tuple[str, int]:
    """A batch list of plain events, each piece drawn from what the
    library reads and what it leaves (a near miss), joined as Python joins them."""
    good = ["x", "mod", "is", "rem", "dynamic", "aB_1", "0", "-0", "7", "-12", "007", "0.5", "-2.25", "1.0e3",
            "1.5E-7", "3.0e+2", "-0.0", "123456789012345678"]
    near = ["X", "_", "'q'", "[]", "é", "1_0", "1e5", "0x10", "1.0Inf", "- 3", "+4", "9" * 19, "1.", "0.1e",
            "2 3", "b(1)", "[1, 2]", '"s"', "1.0e400"]
    numbers = [t for t in good if t[-1].isdigit()]

    def arg() -> str:
        return rng.choice(good if rng.random() < 0.92 else near)

    def time() -> str:
        t = numbers if rng.random() < 0.95 else near
        return f"[{rng.choice(t)}, {rng.choice(t)}]" if rng.random() < 0.2 else rng.choice(t)

    lines = []
    for _ in range(rng.randint(1, 5)):
        name = rng.choice(["a", "b", "c1", "aB", "event"])
        args = ", ".join(arg() for _ in range(rng.randint(0, 3)))
        head = f"{name}({args})" if args else name
        lines.append(f"event({head}, {time()})")
    return "[" + ",\n".join(lines) + "]", len(lines)


def test_random_batches_read_as_term_string_reads_them_or_are_left_to_it() -> None:
    rng = random.Random(5)
    read = 0
    for _ in range(300):
        text, count = random_batch(rng)
        got = read_both(text, count)
        assert got["same"] in ("true", "none"), (text, got)
        read += got["same"] == "true"
    assert read > 100                       # the library did read a good share of them


def outcome(engine: Engine, text: str, terms: int | None) -> tuple[int, list[Rejection], str]:
    assert engine.columnar()
    result = engine.feed_text(text, first_line=1, terms=terms)
    return result.accepted, result.rejected, result.detection_lines


@pytest.mark.parametrize("lines", [
    ["event(a(1), 1)", "event(b(2), 2)", "event(a(3), [3, 4])", "event(b(x), 5.5)"],
    ["event(a(1), 1)", "event(a(2), [3, 2])", "event(b(2), 4)"],                 # a start after its end
    ["event(a(1), 1)", "event(a(1), 1 2)", "event(b(2), 4)"],                    # a syntax error
    ["event(a(1), 5)", "event(b(2), 4)", "event(b(3), 6)"],                      # out of time order
    ["event(a(1), 1)", "event(a(X), 2)", "event(b(3), 6)"],                      # not ground
    ["event(a(1), 1)", "event(a(1), 1.0e400)", "event(b(3), 6)"],                # too large a float
    ["event(a(1), 1)", "event(a(1), 300000000000)", "event(b(3), 6)"],           # beyond the horizon
])
def test_a_batch_list_gives_what_its_lines_give(lines: list[str]) -> None:
    listed = outcome(Engine.from_string(RULES), "[" + ",\n".join(lines) + "]", len(lines))
    one_by_one = outcome(Engine.from_string(RULES), "".join(line + ".\n" for line in lines), None)
    assert listed == one_by_one


def test_a_batch_past_the_stacks_raises_their_resource_error() -> None:
    """Read in a thread of a small stack, 20,000 events give the error term_string/2 gives."""
    from pyswip import Prolog

    assert Engine.from_string("z <- y.\n").columnar()
    query = ("numlist(1, 20000, Ns), maplist([N, L]>>format(atom(L), 'event(a(~d, x), ~d)', [N, N]), Ns, Ls), "
             "atomic_list_concat(Ls, ',\\n', B), format(atom(T), '[~w]', [B]), "
             "findall(S, (member(G, [etalis_columns:list_text_terms(T, 20000, _, _), term_string(_, T)]), "
             "thread_create(catch(G, error(F, _), (format(string(S0), '~q', [F]), thread_exit(S0))), Id, "
             "[stack_limit(300000)]), thread_join(Id, Status), (Status = exited(S) -> true ; S = Status)), Es)")
    [answer] = bridge().on_thread(lambda: list(Prolog.query(query)))
    assert [str(e, "utf-8") if isinstance(e, bytes) else str(e) for e in answer["Es"]] == [
        "resource_error(stack)", "resource_error(stack)"]
