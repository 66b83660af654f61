"""Every example's README shows commands and what they print: run the
`etalis` commands of a ```sh block (in bash, in order, from a copy of the
top directory, so that files they write stay
out of the checkout; other lines such as `make demo` are not run) and
compare what they print (standard output and error as a terminal shows
them, unbuffered, in the order written; the JVM's note on incubator
modules left out) with the output
under it: the plain ``` blocks that follow, up to the next block of code,
one for each command if there are as many, else the first for all.

In a shown output, a line ``...`` stands for any number of lines, and a
line that ends with ``...`` for one line that starts with the rest (a
summary's timings); every other line is exact.  As an `etalis replay` is
among them (wind_area), this also holds that a normal replay prints no
Spark WARN line and no pandas FutureWarning, only its summary."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
JVM_NOTE = "WARNING: Using incubator modules: jdk.incubator.vector"   # Spark 4 on Java 17+: not Spark's log
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)


def commands(readme: Path) -> list[tuple[list[str], list[list[str]], int]]:
    """(commands, the shown output of each, line) of each block of `etalis` commands with an output."""
    text = readme.read_text()
    found = [(m[1], m[2], text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]
    out = []
    for i, (lang, body, line) in enumerate(found):
        shown: list[list[str]] = []
        for later_lang, later_body, _ in found[i + 1:]:
            if later_lang not in ("", "text", "output"):
                break
            shown.append(later_body.splitlines())
        if lang != "sh" or not shown:
            continue
        runs = [c for c in body.replace("\\\n", " ").splitlines() if c.startswith("etalis ")]
        assert runs, f"{readme}:{line}: a block with an output but no etalis command"
        out.append((runs, shown[:len(runs)] if len(shown) >= len(runs) else shown[:1], line))
    return out


def matches(shown: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` is what ``shown`` shows (see the module's doc)."""
    if not shown:
        return not actual
    first, rest = shown[0], shown[1:]
    if first == "...":
        return any(matches(rest, actual[i:]) for i in range(len(actual) + 1))
    if not actual:
        return False
    same = actual[0].startswith(first[:-3]) if first.endswith("...") else actual[0] == first
    return same and matches(rest, actual[1:])


COMMANDS = [(readme, command, shown, line)
            for readme in sorted(ROOT.glob("examples/*/README.md"))
            for command, shown, line in commands(readme)]
CASES = [pytest.param(readme, command, shown, id=f"{readme.parent.name}:{line}")
         for readme, command, shown, line in COMMANDS]


@pytest.mark.parametrize(("readme", "runs", "shown"), CASES)
def test_the_readme_shows_what_its_commands_print(
    readme: Path, runs: list[str], shown: list[list[str]], tmp_path: Path
) -> None:
    bin_dir, top = tmp_path / "bin", tmp_path / ROOT.name
    bin_dir.mkdir()
    (bin_dir / "etalis").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m etalis_py.cli "$@"\n')
    (bin_dir / "etalis").chmod(0o755)
    top.mkdir()
    for entry in ROOT.iterdir():
        if not entry.name.startswith("."):
            (top / entry.name).symlink_to(entry)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PYTHONUNBUFFERED": "1",
           "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    printed: list[list[str]] = []
    for command in runs:
        run = subprocess.run(["bash", "-c", f"exec 2>&1\n{command}"], cwd=top, env=env, stdout=subprocess.PIPE,
                             text=True, timeout=600)
        assert run.returncode == 0, f"{command}\n{run.stdout[-2000:]}"
        printed.append([line for line in run.stdout.splitlines() if line != JVM_NOTE])
    if len(shown) < len(printed):
        printed = [[line for lines in printed for line in lines]]
    for block, actual in zip(shown, printed):
        assert matches(block, actual), "\n".join(["shown:", *block, "printed:", *actual[:40]])


# examples whose commands cannot run here as they are shown, and where they are tested
ELSEWHERE = {"socket_feed": "its commands need a server beside them: tests/test_cli_io.py runs them",
             "service": "a server, a producer and a subscriber at once: tests/test_service_example.py runs them"}


def test_every_example_readme_has_a_command_with_its_output() -> None:
    examples = {p.parent.name for p in ROOT.glob("examples/*/README.md")}
    checked = {readme.parent.name for readme, _, _, _ in COMMANDS}
    assert checked == examples - set(ELSEWHERE)


def test_a_readme_shows_a_replay_and_so_what_a_normal_replay_prints() -> None:
    assert any(run.startswith("etalis replay ") for _, runs, _, _ in COMMANDS for run in runs)


def test_the_output_patterns_match_as_documented() -> None:
    assert matches(["a", "...", "z"], ["a", "b", "c", "z"])
    assert matches(["a", "...", "z"], ["a", "z"])
    assert matches(["sum: 1, ..."], ["sum: 1, seconds: 0.2"])
    assert not matches(["a", "z"], ["a", "b", "z"])
    assert not matches(["sum: 1, ..."], ["sum: 2, seconds: 0.2"])
    assert not matches(["a"], ["a", "b"])
