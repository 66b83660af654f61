"""The corpus tests/rules_bad/: each malformed or dangerous rule file is
refused with its exact message, line and column, by the Python API and by
`etalis check` (exit code 2); none crashes, hangs or shows a Prolog term."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from etalis_py import Engine
from etalis_py.cli import main
from etalis_py.errors import RuleError

CORPUS = Path(__file__).parent / "rules_bad"
EXPECTED: dict[str, dict[str, Any]] = json.loads((CORPUS / "expected.json").read_text(encoding="utf-8"))


def binary_files() -> dict[str, bytes]:
    spec = importlib.util.spec_from_file_location("make_binary", CORPUS / "make_binary.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    files: dict[str, bytes] = module.files()
    return files


BINARY = binary_files()


@pytest.fixture
def rule_file(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """The corpus file, written afresh where make_binary.py makes it (the
    largest are not committed)."""
    name: str = request.param
    if name not in BINARY:
        return CORPUS / name
    path = tmp_path / name
    path.write_bytes(BINARY[name])
    return path


def test_corpus_has_a_hundred_files_each_with_its_expectation() -> None:
    names = {p.name for p in CORPUS.glob("*.etl")} | set(BINARY)
    assert names == set(EXPECTED)
    assert len([n for n in names if "ok" not in EXPECTED[n]]) >= 100


def assert_expected(error: RuleError, expected: dict[str, Any], path: Path) -> None:
    assert (error.file, error.line, error.column) == (str(path), expected["line"], expected["column"])
    if "message" in expected:
        assert error.message == expected["message"]
    else:
        assert error.message.startswith(expected["message_prefix"])
    assert error.hint
    if "hint" in expected:
        assert error.hint == expected["hint"]


BAD = sorted(n for n in EXPECTED if "ok" not in EXPECTED[n])


@pytest.mark.parametrize("rule_file", BAD, indirect=True)
def test_bad_rule_file_is_refused_with_its_position(rule_file: Path) -> None:
    expected = EXPECTED[rule_file.name]
    with pytest.raises(RuleError) as info:
        Engine.from_file(rule_file)
    assert_expected(info.value, expected, rule_file)


@pytest.mark.parametrize("rule_file", BAD, indirect=True)
def test_etalis_check_reports_the_bad_rule_file(rule_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = EXPECTED[rule_file.name]
    assert main(["check", str(rule_file)]) == 2
    err = capsys.readouterr().err
    where = f"{rule_file}:{expected['line']}:{expected['column']}: error: "
    line = next(line for line in err.splitlines() if line.startswith(where))
    message = line[len(where):]
    if "message" in expected:
        assert message == expected["message"].splitlines()[0]
    else:
        assert message.startswith(expected["message_prefix"])
    assert "error(" not in err and "sub_string" not in err


@pytest.mark.parametrize("rule_file", sorted(n for n in EXPECTED if "ok" in EXPECTED[n]), indirect=True)
def test_empty_rule_files_read_without_error(rule_file: Path) -> None:
    with Engine.from_file(rule_file) as engine:
        assert (engine.rule_count, engine.goal_count) == (0, 0)
