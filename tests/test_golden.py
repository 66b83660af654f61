"""Compilation is a function of the rule file: ``etalis compile`` prints
exactly the listing kept beside each file of tests/golden (a Kleene+ rule
with its hidden '$plusN' events and a '$stnN' run, policies with a
'$chainN' goal, aggregates, negations), and compiling a file again in the
same process gives the same text, hidden names included.

After a deliberate change of the compiler, write the listings again with
``etalis compile tests/golden/X.etl > tests/golden/X.listing`` and read
the difference."""
from __future__ import annotations

from pathlib import Path

import pytest

from etalis_py import cli, compile_listing

GOLDEN = Path(__file__).resolve().parent / "golden"
FILES = sorted(p.stem for p in GOLDEN.glob("*.etl"))


def test_every_golden_file_has_its_listing() -> None:
    assert FILES == ["aggregate", "kleene", "negation", "policy"]
    assert sorted(p.stem for p in GOLDEN.glob("*.listing")) == FILES


@pytest.mark.parametrize("name", FILES)
def test_etalis_compile_prints_the_golden_listing(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["compile", str(GOLDEN / f"{name}.etl")]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out == (GOLDEN / f"{name}.listing").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", FILES)
def test_compiling_twice_in_one_process_gives_the_same_text(name: str) -> None:
    text = (GOLDEN / f"{name}.etl").read_text(encoding="utf-8")
    first = compile_listing(text, source=f"{name}.etl")
    assert compile_listing(text, source=f"{name}.etl") == first
    assert first == (GOLDEN / f"{name}.listing").read_text(encoding="utf-8")
