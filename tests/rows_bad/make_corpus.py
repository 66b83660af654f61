"""Writes the bad-rows corpus of this folder and its manifest, expected.json.

Each file holds clean rows around one bad row (the rules.etl of this
folder detects c(X) when b(X) follows a(X) within 100 s): a(1) at 1, the
bad row, b(1) at 3, a(2) at 4 and b(2) at 5.  Those four are accepted and
give c(1) over [1, 3] and c(2) over [4, 5]; the bad row is rejected with
the reason written below, at its line.  A file that starts with a byte
order mark has no bad row: the mark is dropped and all rows are read.
The manifest is what tests/test_rows_bad.py asserts; rerun this script
after changing a case: python tests/rows_bad/make_corpus.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
BOM = b"\xef\xbb\xbf"
BIG = 123456789012345678901234567890
CLAUSE = "is a Prolog clause or directive, not an event"
QUOTE = "syntax error: a quote ({}) is never closed"
NOT_JSON_NUMBER = "not JSON: {} (JSON has no NaN or infinity)"
NUL = "line holds a NUL byte at column {}: no text does (a binary file, or text in UTF-16?)"
MARK = ("line starts with a byte order mark (U+FEFF), as a file does: were two files joined (cat a b)? "
        "remove the mark")
FORMS = ("an event line is a(1). or event(a(1), 5). or event(a(1), [5, 7]). with times in seconds; "
         "dates can be given in .jsonl or .csv files")


def deep(n: int) -> str:
    return "[" * n + "]" * n


# name -> (bad line, reason); a reason None marks a file whose first line starts with a BOM
EVENTS: dict[str, tuple[bytes, str | None]] = {
    "not_utf8.events": (b"event(a(\xe9), 2).", "line is not UTF-8: byte 0xe9 at column 9"),
    "not_utf8_after_utf8.events": ("event(a('\u00e9t".encode() + b"\xe9'), 2).",
                                   "line is not UTF-8: byte 0xe9 at column 12"),
    "bom.events": (b"", None),
    "variable.events": (b"_.", "an event cannot be a variable"),
    "named_variable.events": (b"X.", "an event cannot be a variable"),
    "variable.pl": (b"Event.", "an event cannot be a variable"),
    "end_of_file.events": (b"end_of_file.", "end_of_file marks the end of a Prolog file: it is not an event here"),
    "end_of_file.pl": (b"end_of_file.", "end_of_file marks the end of a Prolog file: it is not an event here"),
    "single_quote.events": (b"event(a('x), 2).", QUOTE.format("'")),
    "double_quote.events": (b'event(a("x), 2).', QUOTE.format('"')),
    "back_quote.events": (b"event(a(`x), 2).", QUOTE.format("`")),
    "block_comment.events": (b"/* note", "syntax error: a block comment (/*) is never closed"),
    "clause.events": (b"a :- b.", f"a:-b {CLAUSE}"),
    "directive.events": (b":- initialization(halt).", f":-initialization halt {CLAUSE}"),
    "query.events": (b"?- a.", f"?-a {CLAUSE}"),
    "grammar_rule.events": (b"a --> b.", f"a-->b {CLAUSE}"),
    "clause_in_event.events": (b"event((a :- b), 2).", f"a:-b {CLAUSE}"),
    "nan_time.events": (b"event(a(1), 1.5NaN).", "time 1.5NaN is not a number or [Start, End]"),
    "inf_time.events": (b"event(a(1), 1.0Inf).", "time 1.0Inf is not a number or [Start, End]"),
    "huge_float.events": (b"event(a(1), 1e400).", "syntax error: float overflow at column 13"),
    "time_not_number.events": (b"event(a(1), soon).", f"time soon is not a number or [Start, End] ({FORMS})"),
    "time_date.events": (b"event(a(1), '2024-01-01T10:00:00').",
                         f"time '2024-01-01T10:00:00' is not a number or [Start, End] ({FORMS})"),
    "time_at.events": (b"a(1) @ 2024-01-01T10:00:00", f"syntax error: operator expected at column 6 ({FORMS})"),
    "time_after_comma.events": (b"a(1), 2.", "a(1),2 is no event but two terms and a comma: write event(a(1), 2)."),
    "start_after_end.events": (b"event(a(1), [3, 2]).", "start 3 is after end 2"),
    "number.events": (b"42.", "42 is not an event (an event is an atom or a compound term)"),
    "unbound.events": (b"event(a(X), 2).", "event a(_) has unbound variables"),
    "unclosed_bracket.events": (b"event(a(1), 2", f"syntax error: operator expected at column 14 ({FORMS})"),
    "deep.events": (f"event(a({deep(20_000)}), 2).".encode(), "nested deeper than 100 levels"),
    "reserved_name.events": (b"event('$a'(1), 2).", "event names starting with $ are reserved ('$a')"),
    "nul.events": (b"event(a(1\x00), 2).", NUL.format(10)),
    "too_many_digits.events": (f"event(a({'7' * 5000}), 2).".encode(),
                               "an integer of 5,000 digits: more than 4,300 (as in JSON; reading one takes time "
                               "that grows with the square of its digits)"),
    "bom_in_the_middle.events": (BOM + b"event(a(1), 2).", MARK),
    "out_of_order.events": (b"event(a(1), 0).",
                            "time 0 is earlier than the last accepted time 1 (events must arrive in time order)"),
}

JSONL: dict[str, tuple[bytes, str | None]] = {
    "not_utf8.jsonl": (b'{"event": "a", "args": ["\xe9"], "time": 2}', "line is not UTF-8: byte 0xe9 at column 26"),
    "bom.jsonl": (b"", None),
    "deep.jsonl": (f'{{"event": "a", "args": [{deep(20_000)}], "time": 2}}'.encode(),
                   "nested deeper than 100 levels"),
    "deep_args.jsonl": (f'{{"event": "a", "args": [{deep(150)}], "time": 2}}'.encode(),
                        "an argument is nested deeper than 100 levels"),
    "nan_arg.jsonl": (b'{"event": "a", "args": [NaN], "time": 2}', NOT_JSON_NUMBER.format("NaN")),
    "nan_time.jsonl": (b'{"event": "a", "args": [1], "time": NaN}', NOT_JSON_NUMBER.format("NaN")),
    "infinity.jsonl": (b'{"event": "a", "args": [-Infinity], "time": 2}', NOT_JSON_NUMBER.format("-Infinity")),
    "huge_float.jsonl": (b'{"event": "a", "args": [1e400], "time": 2}',
                         "argument inf is not a finite number (NaN, infinite, or too large)"),
    "huge_time.jsonl": (b'{"event": "a", "args": [1], "time": 1e400}', "time inf is not finite"),
    "too_many_digits.jsonl": (f'{{"event": "a", "args": [{"9" * 5000}], "time": 2}}'.encode(),
                              "not readable: Exceeds the limit (4300 digits) for integer string conversion: "
                              "value has 5000 digits"),
    "time_text.jsonl": (b'{"event": "a", "args": [1], "time": "soon"}',
                        "time 'soon' is not a number or an ISO 8601 date"),
    "args_not_list.jsonl": (b'{"event": "a", "args": 1, "time": 2}', "args 1 is not a list"),
    "name_not_text.jsonl": (b'{"event": 1, "args": [1], "time": 2}', "event name 1 is not a non-empty string"),
    "null_arg.jsonl": (b'{"event": "a", "args": [null], "time": 2}', "an argument is missing (None)"),
    "no_time.jsonl": (b'{"event": "a", "args": [1]}', 'missing "time" (or "start" and "end")'),
    "not_object.jsonl": (b"[1, 2]", "[1, 2] is not a JSON object"),
    "not_json.jsonl": (b'{"event": "a",', "not JSON: Expecting property name enclosed in double quotes at column 15"),
    "lone_surrogate.jsonl": (b'{"event": "a", "args": ["\\udce9"], "time": 2}',
                             "text '\\udce9' holds a lone surrogate (U+DCE9), which is not a character"),
    "clause_name.jsonl": (b'{"event": ":-", "args": ["a", "b"], "time": 2}', f"a:-b {CLAUSE}"),
    "reserved_name.jsonl": (b'{"event": "$a", "args": [1], "time": 2}',
                            "event names starting with $ are reserved ('$a')"),
    "nul.jsonl": (b'{"event": "a", "args": ["\x00"], "time": 2}', NUL.format(26)),
    "bom_in_the_middle.jsonl": (BOM + b'{"event": "a", "args": [1], "time": 2}', MARK),
    "out_of_order.jsonl": (b'{"event": "a", "args": [1], "time": 0}',
                           "time 0 is earlier than the last accepted time 1 (events must arrive in time order)"),
}

CSV: dict[str, tuple[bytes, str | None]] = {
    "not_utf8.csv": (b"a,\xe9,2", "line is not UTF-8: byte 0xe9 at column 3"),
    "bom.csv": (b"", None),
    "nan.csv": (b"a,nan,2", "column 'x': 'nan' is not a finite number"),
    "inf_time.csv": (b"a,1,inf", "time 'inf' is not finite"),
    "huge.csv": (b"a,1e400,2", "column 'x': '1e400' is not a finite number"),
    "time_text.csv": (b"a,1,soon", "time 'soon' is not a number or an ISO 8601 date; give --time-format"),
    "empty_field.csv": (b"a,,2", "column 'x' is empty"),
    "extra_field.csv": (b"a,1,2,3", "4 fields where the header has 3"),
    "reserved_name.csv": (b"$a,1,2", "event names starting with $ are reserved ('$a')"),
    "clause_name.csv": (b":-,1,2", f":-1 {CLAUSE}"),
    "nul.csv": (b"a,1\x00,2", NUL.format(4)),
    "bom_in_the_middle.csv": (BOM + b"a,1,2", MARK),
    "out_of_order.csv": (b"a,1,0",
                         "time 0 is earlier than the last accepted time 1 (events must arrive in time order)"),
}

# files whose clean rows carry a big integer instead of 1
BIG_ROWS = {"too_many_digits.jsonl", "huge.csv", "huge_float.events"}


def clean(ext: str, name: str, key: int, t: int) -> bytes:
    if ext == "jsonl":
        return json.dumps({"event": name, "args": [key], "time": t}).encode()
    if ext == "csv":
        return f"{name},{key},{t}".encode()
    return f"event({name}({key}), {t}).".encode()


def write(file: str, bad: bytes, reason: str | None) -> dict[str, Any]:
    ext = file.rsplit(".", 1)[1]
    one = BIG if file in BIG_ROWS else 1
    header = [b"event,x,time"] if ext == "csv" else []
    rows = [clean(ext, "a", one, 1), bad, clean(ext, "b", one, 3), clean(ext, "a", 2, 4), clean(ext, "b", 2, 5)]
    if reason is None:
        del rows[1]
    lines = header + rows
    if reason is None:
        lines[0] = BOM + lines[0]
    (HERE / file).write_bytes(b"\n".join(lines) + b"\n")
    bad_line = len(header) + 2
    return {
        "detections": [{"event": "c", "args": [one], "start": 1, "end": 3},
                       {"event": "c", "args": [2], "start": 4, "end": 5}],
        "rejected": [] if reason is None else [[bad_line, reason]],
        "accepted": 4,
    }


def main() -> None:
    files = {file: write(file, bad, reason) for table in (EVENTS, JSONL, CSV) for file, (bad, reason) in table.items()}
    manifest = {
        "rules": "rules.etl",
        "csv_options": ["--event-col", "event", "--args", "x", "--time", "time"],
        "files": files,
    }
    (HERE / "rules.etl").write_text("c(X) <- (a(X) seq b(X)) within 100.\n")
    (HERE / "expected.json").write_text(json.dumps(manifest, indent=1) + "\n")


if __name__ == "__main__":
    main()
