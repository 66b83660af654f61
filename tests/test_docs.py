"""The Python in the docs runs and prints what the docs show.

In each page below, every ```python block runs, in order, in one namespace;
a ```output block right under one is exactly what it prints.  The API
reference runs in the repository's top directory; the tutorial in an empty
one, where a block that starts ``% add to FILE`` is added to FILE."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = {"docs/python-api.md": False, "docs/tutorial.md": True}   # page: runs in an empty directory
ADD = re.compile(r"% add to (\S+)\n")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)


def blocks(text: str) -> list[tuple[str, str, int]]:
    """(language, body, line) of each fenced block."""
    return [(m[1], m[2], text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]


def runs(page: str) -> list[tuple[str, str | None, int]]:
    """Each python block with the output block right under it (or None),
    and each file addition as ``("% add to FILE...", None, line)``."""
    found = blocks((ROOT / page).read_text())
    out: list[tuple[str, str | None, int]] = []
    for i, (lang, body, line) in enumerate(found):
        if lang == "python":
            shown = found[i + 1][1] if i + 1 < len(found) and found[i + 1][0] == "output" else None
            out.append((body, shown, line))
        elif ADD.match(body):
            out.append((body, None, line))
    return out


@pytest.mark.parametrize("page", sorted(PAGES))
def test_every_python_block_of_the_page_prints_its_output_block(
    page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path if PAGES[page] else ROOT)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    checked = 0
    try:
        for body, shown, line in runs(page):
            added = ADD.match(body)
            if added:
                with open(added[1], "a") as f:
                    f.write(body[added.end():])
                continue
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                exec(compile(body, f"{page}:{line}", "exec"), namespace)
            if shown is not None:
                assert printed.getvalue() == shown, f"{page}, the block on line {line}"
                checked += 1
    finally:
        for value in namespace.values():
            close = getattr(value, "close", None)
            if type(value).__name__ == "Engine" and callable(close):
                close()
    assert checked >= 5


def test_every_exported_name_is_in_the_api_reference() -> None:
    import etalis_py

    text = (ROOT / "docs/python-api.md").read_text()
    assert [name for name in etalis_py.__all__ if f"`{name}" not in text] == []
    engine_methods = [n for n in vars(etalis_py.Engine) if not n.startswith("_") and n not in ("feed_segments", "flush_lines")]
    assert [n for n in engine_methods if f"`{n}" not in text and f".{n}" not in text] == []
