"""Write the corpus files that are not UTF-8 text (their bytes are
committed too; run this to remake them: python make_binary.py)."""

from __future__ import annotations

import random
from pathlib import Path

HERE = Path(__file__).parent
RULES = "ok <- a seq b.\nh(X) <- a(X) seq b(X).\n"


def files() -> dict[str, bytes]:
    rng = random.Random(10)
    return {
        "empty_file.etl": b"",
        "only_whitespace.etl": b"  \n\t\n\n",
        "only_comment.etl": b"% nothing here\n/* nor here */\n",
        "utf8_overlong.etl": b"h <- a seq \xc0\xaf.\n",
        "utf8_beyond_unicode.etl": b"h <- a seq '\xf4\x90\x80\x80'.\n",
        "utf8_lone_continuation.etl": b"ok <- a seq b.\n\x80\n",
        "bom_then_latin1.etl": b"\xef\xbb\xbfh <- caf\xe9.\n",
        "utf16le_bom_rules.etl": ("\ufeff" + RULES + "k <- a seq seq b.\n").encode("utf-16-le"),
        "utf16be_bom_rules.etl": ("\ufeff" + RULES + "k <- a seq seq b.\n").encode("utf-16-be"),
        "utf16le_odd_length.etl": ("\ufeff" + RULES).encode("utf-16-le") + b"x",
        "utf16le_lone_surrogate.etl": ("\ufeffok <- a seq b.\n").encode("utf-16-le") + b"\x00\xd8a\x00",
        "utf16le_without_bom.etl": RULES.encode("utf-16-le"),
        "nul_byte.etl": b"ok <- a seq b.\nh <- a\x00 seq b.\n",
        "nul_bytes_only.etl": b"\x00" * 64,
        "escape_character.etl": b"ok <- a seq b.\n\x1b[31mh <- a seq b.\n",
        "delete_character.etl": b"h <- a \x7f seq b.\n",
        "random_bytes.etl": bytes(rng.randrange(256) for _ in range(512)),
        "random_ascii_garbage.etl": bytes(rng.randrange(32, 127) for _ in range(200)),
        "gzip_header.etl": b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + bytes(rng.randrange(256) for _ in range(40)),
        "png_header.etl": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        "elf_header.etl": b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 8,
        "deep_parentheses_100000.etl": b"ok <- a seq b.\n  h <- " + b"(" * 100000 + b"a" + b")" * 100000 + b".\n",
        "deep_arguments_100000.etl": b"h <- " + b"f(" * 100000 + b"a" + b")" * 100000 + b" seq b.\n",
        "deep_list_10000.etl": b"h <- " + b"[" * 10000 + b"a" + b"]" * 10000 + b" seq b.\n",
        "deep_braces_10000.etl": b"h <- a seq " + b"{" * 10000 + b"a" + b"}" * 10000 + b".\n",
        "deep_negation_10000.etl": b"h <- " + b"\\+ " * 10000 + b"a.\n",
        "deep_unclosed_parentheses_10000.etl": b"h <- " + b"(" * 10000 + b"a.\n",
        "bom_in_the_middle.etl": b"ok <- a seq b.\n\xef\xbb\xbfh <- a seq b.\n",
        "huge_text_20000000.etl": b"h(X) <- a where X = " + b"x" * 20_000_000 + b".\n",
    }


if __name__ == "__main__":
    for name, data in files().items():
        (HERE / name).write_bytes(data)
