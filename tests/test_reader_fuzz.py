"""Fuzzing the reader: rule text built from fragments of the language
(operators, brackets, quotes, comments, full stops, unicode, control
characters) and random bytes.  Each either loads or raises RuleError with a
message in words and a position; never another exception, a raw Prolog
error term, a crash or a hang.  ETALIS_FUZZ_EXAMPLES sets the number of
examples of each test (default 100)."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from etalis_py import Engine, RuleError

FRAGMENTS = [
    "a", "b(X)", "h", "h(X)", "c(1, 'q')", "X", "_", "Y", "ok",
    " seq ", " and ", " par ", " or ", " cnot ", " fnot ", " during ", " meets ",
    " where ", " within ", " <- ", " :- ", ":- ", "?- ", " : ", ", ", "; ", " -> ", "\\+ ", "!", "|",
    "(", ")", "[", "]", "{", "}", ".", ". ", ".\n", "\n", "\r\n", "\t", " ",
    "'", '"', "`", "'q'", '"s"', "/*", "*/", "% c\n", "0'", "0'a", "16'FF", "\\",
    "1", "-1", "1.5", "1.0e10", "1e", "minutes(2)", "hours(x)", "count(3)",
    "iteration(a, 2)", "any(2, [a, b])", "aggregate(sum(V), v(V), count(2), S)",
    "policy(recent)", "policy(fast)", "print_events([h/0])", "max_age(5)",
    "é", "ü", "😀", "\u00a0", "\ufeff", "\x00", "\x1b", "\x7f", "$", "'$x'",
]

EXAMPLES = int(os.environ.get("ETALIS_FUZZ_EXAMPLES", "100"))
FUZZ = settings(max_examples=EXAMPLES, deadline=timedelta(seconds=10),
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

rule_text = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=3)), max_size=30).map("".join)

# clause-shaped text, so that most examples get past the syntax to the
# classification of clauses, events, windows and directives
LEAVES = ["a", "b(X)", "c(X, 1)", "X", "_", "3", "-1", "1.5", '"s"', "[a]", "[]", "{a}", "!", "'$x'",
          "m:a", "iteration(a, 2)", "iteration(a, 0)", "any(2, [a, b])", "any(5, [a])",
          "aggregate(sum(V), v(V), count(2), S)", "aggregate(median(V), v(V), last(2), 7)"]
OPERATORS = ["seq", "and", "par", "or", "cnot", "fnot", "during", "meets", ",", ";", "->"]
WINDOWS = ["", " within 5", " within -1", " within foo", " within minutes(x)", " within W", " within 1.0Inf"]
CONDITIONS = ["", " where X > 1", " where 3", " where G"]
pattern = st.recursive(
    st.sampled_from(LEAVES),
    lambda inner: st.tuples(inner, st.sampled_from(OPERATORS), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
    max_leaves=6,
)
clause = st.one_of(
    st.tuples(st.sampled_from(["h", "h(X)", "r : h", "3 : h", "X", "[h]", "(h, k)", "!", "'' : h"]),
              pattern, st.sampled_from(WINDOWS), st.sampled_from(CONDITIONS))
    .map(lambda t: f"{t[0]} <- {t[1]}{t[2]}{t[3]}."),
    st.sampled_from(LEAVES + ["a :- b", "a --> b", "X :- true", "?- a", ":- policy(recent)", ":- policy(fast)",
                              ":- policy(P)", ":- foo", ":- X", ":- max_age(-1)", ":- print_events([h/0])"])
    .map(lambda c: f"{c}."),
)
rule_file = st.lists(clause, min_size=1, max_size=4).map("\n".join)


def assert_refused_in_words(error: RuleError, source: str) -> None:
    assert error.file == source
    assert error.message and error.hint
    assert error.line >= 1 and error.column >= 1
    # '$x' is the fuzz's own atom, which a message may quote back
    text = (error.message + error.hint).replace("'$x'", "")
    for raw in ("error(", "sub_string", "'$", "<stream>"):
        assert raw not in text


def load(text: str | None = None, path: Path | None = None) -> None:
    try:
        engine = Engine.from_file(path) if path is not None else Engine.from_string(text or "", source="fuzz.etl")
    except RuleError as e:
        assert_refused_in_words(e, str(path) if path is not None else "fuzz.etl")
    else:
        engine.close()


@FUZZ
@given(rule_text)
def test_rule_text_loads_or_is_refused_in_words(text: str) -> None:
    load(text)


@FUZZ
@given(rule_file)
def test_clauses_load_or_are_refused_in_words(text: str) -> None:
    load(text)


@FUZZ
@given(st.one_of(rule_text.map(lambda t: t.encode("utf-8", "surrogatepass")), st.binary(max_size=200)))
def test_rule_file_bytes_load_or_are_refused_in_words(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz.etl"
    path.write_bytes(data)
    load(path=path)
