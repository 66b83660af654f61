"""Side by side with original ETALIS: its 93 example rule files, checked and run.

NEEDS the original ETALIS source (github sspider/etalis), which etalis-py
neither contains nor ships.  Give its ``etalis`` folder (the one holding
``src/etalis.P`` and ``examples/``) with ``--etalis DIR`` (or the
environment variable ETALIS_SOURCE), or a git clone of the repository
with ``--mirror GITDIR`` (or ETALIS_MIRROR), whose ``etalis`` folder the
script extracts into a temporary folder:

    git -C GITDIR archive HEAD etalis | tar -x -C TMP

and runs ETALIS itself with ``swipl`` (SWI-Prolog 9 loads it as its own
drivers do: ``['../../src/etalis.P']`` from an example's folder).

For each example rule file (``examples/*/*.event``), as it is: is it
accepted by ``etalis check`` (sandboxed, and if not, with ``--trusted``, as
original ETALIS runs every file)?  For each example whose driver
(``test.sh.bat``) fires a plain event stream: that stream, read by
``etalis import-etalis``, is run through original ETALIS (under the
policy the driver sets, ETALIS's default ``recent`` otherwise, each event
given its imported time as a datime) and through etalis-py (the same
policy, the driver's static rules and database appended to the rules, and
the lateness a stream out of time order needs), and every event the rules
derive is compared (ETALIS stores them all; its intermediate ``temp_e_N``
events and etalis-py's ``print_trigger`` facts are left out),
and the detections (event, arguments, interval) are compared.

    PYTHONPATH=src python benchmarks/etalis_compare.py [--markdown FILE] [EXAMPLE ...]

prints a table (Markdown with ``--markdown``): example, accepted, the
detections of each, equal.  Nothing of ETALIS is written into this
repository: the work files go to a temporary folder.
"""

from __future__ import annotations

import argparse
import calendar
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from etalis_py.bridge.prolog_text import quote_atom
from etalis_py.errors import EtalisError
from etalis_py.inputs.etalis_import import DriverStream, read_driver

SRC = Path(__file__).resolve().parents[1] / "src"

# ETALIS's operators (its parser.P), written quoted in its example files
OPERATORS = ("<-", "iff", "where", "within", "seq", "forall_seq", "and", "par", "or", "do", "equals", "meets",
             "during", "starts", "finishes", "check", "timestamp", "event_multiply", "star_times", "ntimes",
             "cnot", "fnot", "not")
_QUOTED_OP = re.compile(r"'(" + "|".join(re.escape(o) for o in OPERATORS) + r")'(?!\()", re.IGNORECASE)


def unquote_operators(text: str) -> str:
    """ETALIS rule text with its quoted operator atoms (``'seq'``, not
    ``'seq'(A, B)``) unquoted: SWI-Prolog 7+ reads no quoted atom as an
    operator."""
    return _QUOTED_OP.sub(lambda m: f" {m.group(1)} ", text)


def locate_etalis(etalis: Optional[Path], mirror: Optional[Path], work: Path) -> Path:
    """The ``etalis`` folder of the ETALIS source: ``etalis``, or the one
    extracted from the git clone ``mirror`` into ``work``."""
    if etalis is not None:
        if (etalis / "src" / "etalis.P").is_file():
            return etalis
        sys.exit(f"--etalis {etalis}: no src/etalis.P there; give the etalis folder of github sspider/etalis")
    if mirror is None:
        sys.exit("this script needs the original ETALIS source (github sspider/etalis): give its etalis folder "
                 "with --etalis DIR (or ETALIS_SOURCE), or a git clone of it with --mirror GITDIR (or ETALIS_MIRROR)")
    archive = subprocess.run(["git", "-C", str(mirror), "archive", "HEAD", "etalis"], capture_output=True)
    if archive.returncode != 0:
        sys.exit(f"--mirror {mirror}: git archive failed: {archive.stderr.decode(errors='replace').strip()}")
    subprocess.run(["tar", "-x", "-C", str(work)], input=archive.stdout, check=True)
    if not (work / "etalis" / "src" / "etalis.P").is_file():
        sys.exit(f"--mirror {mirror}: its etalis folder has no src/etalis.P")
    return work / "etalis"


# -- acceptance ----------------------------------------------------------------------------


@dataclass
class Check:
    accepted: bool
    message: str = ""


def check(rules: Path, timeout: float, *options: str) -> Check:
    """``etalis check`` on the rule file as it is (sandboxed, unless
    ``options`` hold ``--trusted``)."""
    try:
        r = etalis("check", "--quiet", *options, str(rules), timeout=timeout)
    except subprocess.TimeoutExpired:
        return Check(False, f"etalis check did not finish in {timeout:.0f} s")
    if r.returncode != 2:
        return Check(True)
    lines = [ln for ln in (r.stdout + r.stderr).splitlines() if ": error: " in ln]
    if not lines:
        return Check(False, (r.stderr or r.stdout).strip())
    where, message = lines[0].split(": error: ", 1)
    return Check(False, f"{where.rsplit('/', 1)[-1]}: {message}")


def etalis(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """The ``etalis`` command of this checkout."""
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "etalis_py.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, stdin=subprocess.DEVNULL)


# -- running both ---------------------------------------------------------------------------


Detection = tuple[str, float, float]


@dataclass
class Comparison:
    example: str
    run: str
    rules: str
    policy: str
    events: int = 0
    etalis: Optional[list[Detection]] = None
    etalis_py: Optional[list[Detection]] = None
    note: str = ""
    skipped: list[str] = field(default_factory=list)

    @property
    def equal(self) -> Optional[bool]:
        if self.etalis is None or self.etalis_py is None:
            return None
        return Counter(self.etalis) == Counter(self.etalis_py)


def seconds_datime(t: float) -> str:
    """The datime of an imported time, the inverse of etalis-py's reading."""
    second = int(t // 1)
    counter = round((t - second) * 1_000_000) + 1
    g = time.gmtime(second)
    return f"datime({g.tm_year},{g.tm_mon},{g.tm_mday},{g.tm_hour},{g.tm_min},{g.tm_sec},{counter})"


_DATIME = re.compile(r"datime\((\d+),(\d+),(\d+),(\d+),(\d+),(\d+),(\d+)\)")


def datime_seconds(text: str) -> float:
    y, mo, d, h, mi, s, c = map(int, _DATIME.fullmatch(text).groups())  # type: ignore[union-attr]
    return round(calendar.timegm((y, mo, d, h, mi, s)) + (c - 1) / 1_000_000, 6)


_STREAM_LINE = re.compile(r"event\((.*),(\[[^\[\]]*\]|[-0-9.e]+)\)\.\Z")


def etalis_stream(stream: DriverStream) -> tuple[str, list[tuple[str, float, float]]]:
    """The imported events as an ETALIS stream file with datime stamps, and
    the events as (term, start, end)."""
    lines, inputs = [], []
    for line in stream.events.splitlines():
        m = _STREAM_LINE.match(line)
        assert m, line
        term, when = m.groups()
        t1, t2 = json.loads(when) if when.startswith("[") else (float(when), float(when))
        lines.append(f"event({term}, [{seconds_datime(t1)}, {seconds_datime(t2)}]).\n")
        inputs.append((term, round(t1, 6), round(t2, 6)))
    return "".join(lines), inputs


ETALIS_GOAL = """\
['../../src/etalis.P'], {flags} set_etalis_flag(store_fired_events,on), set_etalis_flag(logging,off), \
compile_event_file({rules}), {loads} execute_event_stream_file({stream}), \
forall((stored_event(event(E,[D1,D2])), ground(D1-D2)), \
(write('DETECTED\\t'), writeq(E), write('\\t'), writeq(D1), write('\\t'), writeq(D2), nl)), halt."""


def run_etalis(folder: Path, stream: DriverStream, stream_file: Path, timeout: float) -> tuple[list[Detection], str]:
    """ETALIS's stored events after the stream (all of them: the caller
    removes the input events)."""
    flags = "".join(f"set_etalis_flag({f.replace('=', ',', 1)}), " for f in stream.flags
                    if not f.startswith(("logging", "output_temporary_files", "store_fired_events")))
    loads = "".join(f"load_static_rules({quote_atom(s)}), " for s in stream.static)
    loads += "".join(f"load_database({quote_atom(s)}), " for s in stream.database)
    rules = Path(stream.rules[-1])
    own_heads = set(re.findall(r"^\s*(temp_e_\d+)\b[^.]*<-", rules.read_text(encoding="latin-1"), re.M))
    unquoted = rules.with_name(rules.stem + ".unquoted.event")
    unquoted.write_text(unquote_operators(rules.read_text(encoding="latin-1")), encoding="latin-1")
    goal = ETALIS_GOAL.format(flags=flags, rules=quote_atom(str(unquoted)), loads=loads,
                              stream=quote_atom(str(stream_file)))
    try:
        r = subprocess.run(["swipl", "-q", "-g", goal, "-t", "halt(1)"], cwd=folder, capture_output=True,
                           text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return [], f"ETALIS did not finish in {timeout:.0f} s"
    finally:
        unquoted.unlink()
    found = []
    for line in r.stdout.splitlines():
        if line.startswith("DETECTED\t"):
            _, term, d1, d2 = line.split("\t")
            name = re.match(r"[^(]*", term).group()  # type: ignore[union-attr]
            if not name.startswith("temp_e_") or name in own_heads:   # ETALIS's intermediate events
                found.append((term, datime_seconds(d1), datime_seconds(d2)))
    return found, "" if r.returncode == 0 else etalis_failure(r.returncode, r.stderr)


def etalis_failure(code: int, stderr: str) -> str:
    """Why ETALIS stopped: its reader's complaint about a rule file if that
    is it, else the end of what it printed."""
    m = re.search(r"([\w.]+?)(?:\.unquoted)?(\.event:\d+:\d+: .*)$", stderr.strip())
    if m:
        return f"ETALIS (SWI-Prolog 9) cannot read {m.group(1)}{m.group(2)}"
    return f"ETALIS exited with {code}: {stderr.strip()[-200:]}"


def prolog_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ",".join(map(prolog_text, value)) + "]"
    text = str(value)
    if re.fullmatch(r"[a-z]\w*\(.*\)", text):    # a compound term, given as its text
        return text
    return quote_atom(text)


# print_trigger/1 and external_trigger/1 facts choose what is reported; both
# sides report every event the rules derive (ETALIS stores them all)
_REPORTING = re.compile(rb"^[ \t]*(?:print|external)_trigger\([^\n]*\)[ \t]*\.[ \t]*(?:%[^\n]*)?$", re.M)


def run_etalis_py(stream: DriverStream, policy: str, work: Path, timeout: float) -> tuple[list[Detection], str]:
    """``etalis run`` of the rules as they are (but for the facts that choose
    what is reported), with the driver's static rules and database appended,
    trusted (ETALIS's rules are Prolog of their own), on the imported
    stream."""
    rules = Path(stream.rules[-1])
    text = _REPORTING.sub(b"", rules.read_bytes())
    for extra in (*stream.static, *stream.database):
        text += b"\n" + Path(extra).read_bytes()
    combined = rules.with_name(rules.stem + ".compare.event")
    combined.write_bytes(text)
    events = work / "stream.events"
    events.write_text(stream.events, encoding="utf-8")
    try:
        late = ["--lateness", f"{stream.lateness:g}"] if stream.lateness else []
        r = etalis("run", str(combined), "--events", str(events), "--policy", policy, "--trusted", "--quiet",
                   *late, timeout=timeout)
    except subprocess.TimeoutExpired:
        return [], f"refused: etalis run did not finish in {timeout:.0f} s"
    finally:
        combined.unlink()
    if r.returncode == 2:
        first = next((ln for ln in r.stderr.splitlines() if "error: " in ln), r.stderr.strip())
        return [], f"refused: {Path(first.split(': error: ')[0]).name.replace('.compare', '')}: " \
                   f"{first.split('error: ', 1)[-1]}"
    found = []
    for line in r.stdout.splitlines():
        start = line.find('{"event": ')     # after what a rule's action printed (write/1 in a do)
        if start < 0:
            continue
        d = json.loads(line[start:])
        term = d["event"] if not d["args"] else f"{quote_atom(d['event'])}({','.join(map(prolog_text, d['args']))})"
        found.append((term, round(d["start"], 6), round(d["end"], 6)))
    rejected = [ln for ln in r.stderr.splitlines() if ": rejected: " in ln]
    note = "; ".join(rejected[:2]) if rejected else ("" if r.returncode == 0 else r.stderr.strip()[-200:])
    return found, note


def compare(etalis: Path, example: str, timeout: float, work: Path) -> list[Comparison]:
    folder = etalis / "examples" / example
    results = []
    for driver in sorted(folder.glob("test*.sh.bat")):
        try:
            runs = read_driver(driver).runs
        except EtalisError as e:
            results.append(Comparison(example, driver.name, "", "", note=str(e)))
            continue
        for run in range(1, max(runs, 1) + 1):
            stream = read_driver(driver, run)
            rules = [r for r in stream.rules if r.endswith(".event")]
            c = Comparison(example, f"{driver.name} {run}" if runs > 1 else driver.name, Path(rules[-1]).name if rules else "", stream.etalis_policy,
                           events=stream.count, skipped=[s.text() for s in stream.skipped])
            results.append(c)
            if not rules:
                c.note = "the driver compiles no .event file"
                continue
            if not stream.count:
                c.note = "the driver fires no events (it drives ETALIS otherwise)"
                continue
            if stream.policy is None:
                c.note = f"ETALIS's policy {stream.etalis_policy} has no equivalent"
                continue
            text, inputs = etalis_stream(stream)
            stream_file = work / f"{example}.{driver.name}.{run}.stream"
            stream_file.write_text(text, encoding="utf-8")
            found, note = run_etalis(folder, stream, stream_file, timeout)
            mine, my_note = run_etalis_py(stream, stream.policy, work, timeout)
            seen = Counter(inputs)
            derived = []
            for d in found:     # ETALIS stores the input events too
                if seen[d]:
                    seen[d] -= 1
                else:
                    derived.append(d)
            c.etalis = None if note else derived
            c.etalis_py = None if my_note.startswith("refused") else mine
            c.note = "; ".join(n for n in (note, my_note) if n)
    return results


def compare_safely(etalis: Path, example: str, timeout: float, work: Path) -> list[Comparison]:
    try:
        return compare(etalis, example, timeout, work)
    except Exception as e:     # one example's surprise must not lose the table
        return [Comparison(example, "", "", "", note=f"the comparison failed: {type(e).__name__}: {e}")]


# -- output -------------------------------------------------------------------------------------


def show(ds: Optional[list[Detection]], limit: int = 6) -> str:
    if ds is None:
        return "-"
    if not ds:
        return "none"
    items = [f"{t} [{_num(a)},{_num(b)}]" for t, a, b in sorted(ds, key=lambda d: (d[2], d[1], d[0]))]
    more = f" ... ({len(items)} in all)" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


def _num(x: float) -> str:
    return str(int(x)) if x == int(x) else f"{x:.6f}"


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("examples", nargs="*", help="example folders (default: all)")
    env_source, env_mirror = os.environ.get("ETALIS_SOURCE"), os.environ.get("ETALIS_MIRROR")
    p.add_argument("--etalis", type=Path, default=Path(env_source) if env_source else None,
                   help="the etalis folder of the ETALIS source (default: $ETALIS_SOURCE)")
    p.add_argument("--mirror", type=Path, default=Path(env_mirror) if env_mirror else None,
                   help="a git clone of sspider/etalis, used when --etalis is not given (default: $ETALIS_MIRROR)")
    p.add_argument("--markdown", type=Path, metavar="FILE", help="write the tables as Markdown to FILE")
    p.add_argument("--timeout", type=float, default=60, help="seconds for each run of ETALIS and etalis-py")
    p.add_argument("--no-check", action="store_true", help="compare detections only")
    p.add_argument("--check-only", action="store_true", help="run etalis check only")
    ns = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="etalis_orig_") as work:
        return check_and_compare(ns, locate_etalis(ns.etalis, ns.mirror, Path(work)))


def check_and_compare(ns: argparse.Namespace, etalis: Path) -> int:
    """Check and run the examples of the ETALIS folder ``etalis`` as ``ns`` says."""
    rule_files = sorted(f for f in (etalis / "examples").glob("*/*.event")
                        if not f.name.endswith((".unquoted.event", ".compare.event")))
    examples = ns.examples or sorted({f.parent.name for f in rule_files} | {
        d.name for d in (etalis / "examples").iterdir() if d.is_dir() and any(d.glob("test*.sh.bat"))})
    checks = {} if ns.no_check else {f: check(f, ns.timeout) for f in rule_files if f.parent.name in examples}
    # ETALIS runs every rule file as trusted code: a file the sandbox refuses is checked again so
    trusted = {f: c if c.accepted else check(f, ns.timeout, "--trusted") for f, c in checks.items()}
    accepted = sum(c.accepted for c in checks.values())
    out = [f"etalis check accepts {accepted} of {len(checks)} example rule files as they are, sandboxed "
           f"(the default), and {sum(c.accepted for c in trusted.values())} with --trusted "
           "(as original ETALIS runs every file)", "",
           "| rule file | accepted by `etalis check` | by `etalis check --trusted` |", "|---|---|---|"]
    for f, c in checks.items():
        t = trusted[f]
        out.append(f"| {f.parent.name}/{f.name} | {'yes' if c.accepted else 'no: ' + _cell(c.message)} "
                   f"| {'yes' if t.accepted else 'no: ' + _cell(t.message)} |")
    with tempfile.TemporaryDirectory(prefix="etalis_compare_") as tmp:
        comparisons = [] if ns.check_only else [
            c for e in examples for c in compare_safely(etalis, e, ns.timeout, Path(tmp))]
    ran = [c for c in comparisons if c.equal is not None]
    same = sum(bool(c.equal) for c in ran)
    out += ["", f"detections equal on {same} of {len(ran)} runs that both ran", "",
            "| example | driver, run | rules | policy | events | ETALIS detections | etalis-py detections | equal | note |",
            "|---|---|---|---|---|---|---|---|---|"]
    for r in comparisons:
        eq = "-" if r.equal is None else ("yes" if r.equal else "**no**")
        if r.equal is False:
            assert r.etalis is not None and r.etalis_py is not None
            mine, theirs = Counter(r.etalis_py), Counter(r.etalis)
            diff = f"only ETALIS: {show(list((theirs - mine).elements()), 4)}; " \
                   f"only etalis-py: {show(list((mine - theirs).elements()), 4)}"
            r.note = "; ".join(n for n in (diff, r.note) if n)
        out.append(f"| {r.example} | {r.run} | {r.rules} | {r.policy} | {r.events} | {_cell(show(r.etalis))} | "
                   f"{_cell(show(r.etalis_py))} | {eq} | {_cell(r.note)} |")
    text = "\n".join(out) + "\n"
    if ns.markdown:
        ns.markdown.write_text(text, encoding="utf-8")
    print(text)
    return 0


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


if __name__ == "__main__":
    sys.exit(main())
