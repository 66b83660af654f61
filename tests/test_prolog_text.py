"""The one Prolog-text writer (etalis_py.bridge.prolog_text) and the rule tree
(etalis_py.rules.rules): exact texts, and texts that Prolog reads back as the
values they were written from."""

from __future__ import annotations

import pytest

from etalis_py import Engine
from etalis_py.rules.analysis import read_rules
from etalis_py.bridge.prolog_text import (
    compound_text,
    input_line,
    input_term,
    interval_text,
    number_text,
    prolog_string,
    quote_atom,
)
from etalis_py.rules.rules import Binary, Const, EventP, PString, Real, Struct, Var, Where, pattern_text, term_text

TRICKY = ["abc", "Abc", "it's", 'say "hi"', "a\\b", "line\nbreak", "tab\there", "cr\rhere", "bell\x07", "del\x7f",
          "", "é ü", "_x", "[]"]


@pytest.mark.parametrize(("text", "atom", "string"), [
    ("abc", "abc", '"abc"'),
    ("Abc", "'Abc'", '"Abc"'),
    ("it's", "'it\\'s'", '"it\'s"'),
    ('say "hi"', "'say \"hi\"'", '"say \\"hi\\""'),
    ("a\\b", "'a\\\\b'", '"a\\\\b"'),
    ("line\nbreak", "'line\\nbreak'", '"line\\nbreak"'),
    ("tab\tcr\r", "'tab\\tcr\\r'", '"tab\\tcr\\r"'),
    ("bell\x07del\x7f", "'bell\\x7\\del\\x7f\\'", '"bell\\x7\\del\\x7f\\"'),
    ("", "''", '""'),
    ("http://example.org/a#b", "'http://example.org/a#b'", '"http://example.org/a#b"'),
])
def test_atoms_and_strings_are_quoted_and_escaped_one_way(text: str, atom: str, string: str) -> None:
    assert quote_atom(text) == atom
    assert prolog_string(text) == string


def test_prolog_reads_every_atom_and_string_back_as_the_text_it_was_written_from() -> None:
    # the event's argument crosses as quote_atom's text, the rule's string as prolog_string's
    for text in TRICKY:
        rules = f"h(X) <- a(X) where (atom_string(X, S), S == {prolog_string(text)}).\n"
        with Engine.from_string(rules) as engine:
            found = engine.emit_many([("a", [text], 1), ("a", [text + "!"], 2)]).detections
        assert [(d.event, d.args, d.start, d.end) for d in found] == [("h", (text,), 1, 1)], text


def test_compound_numbers_and_input_events() -> None:
    assert compound_text("f", ["1", "'A'", "[x,y]"]) == "f(1,'A',[x,y])"
    assert compound_text("f", []) == "f"
    assert number_text(3) == "3"
    assert number_text(2.5) == "2.5"
    assert number_text(1e20) == "1e+20"
    assert interval_text(1, 2.5) == "[1, 2.5]"
    assert input_term("a(1)", "5") == "event(a(1), 5)"
    assert input_term("a(1)", "[1, 2]", "[det(b, 1, 1)]") == "event(a(1), [1, 2], [det(b, 1, 1)])"
    assert input_line("a", "5") == "event(a, 5).\n"


def test_the_rule_tree_reads_the_readers_json_and_writes_etl_text() -> None:
    rules, _ = read_rules("alert(X, 'It''s', \"s\", 1.5, [1, 2]) <- temp(X, _) seq (hot(X) where X > 1).\n")
    [rule] = rules
    head = rule.head.term()
    assert head == Struct("alert", (Var("X"), Const("It's"), Const(PString("s")), Const(Real(1.5)),
                                    Struct("[|]", (Const(1), Struct("[|]", (Const(2), Const("[]")))))))
    assert term_text(head) == rule.head_text() == "alert(X, 'It\\'s', \"s\", 1.5, [1, 2])"
    pattern = rule.pattern
    assert isinstance(pattern, Binary) and pattern.op == "seq"
    assert isinstance(pattern.left, EventP) and isinstance(pattern.right, Where)
    # what the reader says beside the tree: the stored side and the source text
    assert pattern.stored == "left"
    assert pattern.source == "temp(X, _G0) seq (hot(X) where X>1)"
    assert (pattern.left.source, pattern.right.source) == ("temp(X, _)", "hot(X) where X>1")
    assert pattern_text(pattern) == "(temp(X, _)) seq ((hot(X)) where (X>1))"
