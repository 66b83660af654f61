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


def assert_refused_in_words(error: RuleError, source: str) -> None:
    assert error.file == source
    assert error.message and error.hint
    assert error.line >= 1 and error.column >= 1
    for raw in ("error(", "sub_string", "'$", "<stream>"):
        assert raw not in error.message and raw not in error.hint


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
@given(st.one_of(rule_text.map(lambda t: t.encode("utf-8", "surrogatepass")), st.binary(max_size=200)))
def test_rule_file_bytes_load_or_are_refused_in_words(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz.etl"
    path.write_bytes(data)
    load(path=path)
