"""Fuzz the foreign library's text paths against Prolog's.

    .venv/bin/python tests/fuzz_columns.py --cases 20000 --seed 1 --sanitize

Runs tests/prolog/fuzz_columns.pl in swipl: random and adversarial batch
lists through etalis_list_terms/4 against term_string/2 (the same terms
and the names the batch calls for, or the text left to term_string/2),
and random detections through etalis_write_detection/4 against
write_json_detection/4 (the same bytes, or the detection left to
Prolog).  With ``--sanitize`` the library is built with
-fsanitize=address,undefined and the sanitizers' runtimes are preloaded
into swipl, so a read past a buffer or an overflow stops the run with
its report.  Each disagreement is printed with its input; the last line
counts the cases and the faults.  The exit code is 1 when there are
faults.  Seed S with N cases always runs the same cases.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from etalis_py.bridge.columns import build, library_source

ROOT = Path(__file__).resolve().parent.parent
DRIVER = ROOT / "tests" / "prolog" / "fuzz_columns.pl"
SANITIZERS = ("libasan.so", "libubsan.so")


def swipl_home() -> str:
    """SWI-Prolog's home directory (its ``include/`` holds SWI-Prolog.h)."""
    out = subprocess.run(["swipl", "--dump-runtime-variables"], capture_output=True, text=True, check=True).stdout
    return next(line.split('"')[1] for line in out.splitlines() if line.startswith("PLBASE="))


def sanitized_build(directory: Path) -> tuple[Path, dict[str, str]]:
    """The library built with -fsanitize=address,undefined in ``directory``
    (as etalis_columns.so, the name its install function goes by), and the
    environment that runs swipl with the sanitizers' runtimes."""
    compiler = os.environ.get("CC") or "gcc"
    target = directory / "etalis_columns.so"
    include = Path(swipl_home()) / "include"
    subprocess.run([compiler, "-g", "-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
                    "-fno-omit-frame-pointer", "-shared", "-fPIC", f"-I{include}", str(library_source(ROOT / "prolog")),
                    "-o", str(target)], check=True, capture_output=True, text=True)
    runtimes = [subprocess.run([compiler, f"-print-file-name={name}"], capture_output=True, text=True,
                               check=True).stdout.strip() for name in SANITIZERS]
    # swipl's own signal stack and leak-free exit are not the sanitizers' business
    env = dict(os.environ, LD_PRELOAD=":".join(runtimes), ASAN_OPTIONS="detect_leaks=0:use_sigaltstack=0")
    return target, env


def plain_build(directory: Path) -> tuple[Path, dict[str, str]]:
    """The library built as etalis-py builds it, in ``directory``."""
    target = directory / "etalis_columns.so"
    why = build(library_source(ROOT / "prolog"), target, swipl_home())
    if why:
        raise RuntimeError(why)
    return target, dict(os.environ)


def run(seed: int, cases: int, sanitize: bool) -> subprocess.CompletedProcess[str]:
    """The driver's run of ``cases`` cases of ``seed`` (its output and exit code)."""
    with tempfile.TemporaryDirectory() as tmp:
        library, env = (sanitized_build if sanitize else plain_build)(Path(tmp))
        return subprocess.run(["swipl", str(DRIVER), str(library), str(seed), str(cases)], capture_output=True,
                              text=True, env=env)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=2000, help="number of batches and of detections (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--sanitize", action="store_true", help="build the library with address and UB sanitizers")
    args = parser.parse_args()
    done = run(args.seed, args.cases, args.sanitize)
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    return 0 if done.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
