"""Fuzz the engine against the reference evaluator of the declarative semantics.

    PYTHONPATH=. .venv/bin/python tests/fuzz_semantics.py --cases 20000 --seed 1

Each case is a random rule set and stream (see reference.generate.random_case;
about a third of them with aggregates, a fifth with cnot or fnot at the top
of every rule), run through the evaluator and
through the engine under every consumption policy: under `unrestricted` the
detections must be exactly the model's derived facts of the reported events,
each as often as the rules derive it; under `recent` and `chronological`
(each now and then as an interval variant, e.g. `recent(longer)`) a subset
of them; under a random selection strategy or context (`strict`, `nxt`,
`last`, `max`, `stn`, `continuous`) a subset of them too.  (Under
`cumulative` variables hold lists, so it is checked on sequences only.)  Each case also
draws a sequence rule and stream (reference.selection.random_chain_case)
on which the engine, under a random strategy, must detect exactly the
matches of the reference definitions, each with its events.  The first
mismatch is shrunk and printed in full, as a rule file and a stream; the last line is "N cases, M mismatches".  The exit code
is 1 when there are mismatches.  Case i of seed S is always the same case.

With ``--snapshot`` each case is also run, under a random policy or
strategy, with a timer rule added and now and then a lateness, cut in two
at a random point: the first part in one engine, whose snapshot an engine
in a new Python process takes up for the second part, must give exactly
the run without a break (detections with provenance, warnings, stats).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass
from typing import Optional, TextIO

from etalis_py.errors import EtalisError
from etalis_py.bridge.engine import STRATEGIES
from reference.check import Case, Outcome, check_case, snapshot_mismatch
from reference.evaluate import Uncheckable
from reference.generate import RandomChoices, random_case, random_policy, random_timer_rule
from reference.selection import check_chain_case, random_chain_case
from reference.shrink import shrink_case

# the strategies whose detections are detections of the model (cumulative's
# variables hold lists of values: it is held to its own definition only)
SOUND_STRATEGIES = tuple(s for s in STRATEGIES if s != "cumulative")

@dataclass
class Mismatch:
    index: int
    outcome: Optional[Outcome]
    case: Optional[Case]    # None for a sequence case of the selection strategies (see error)
    error: str = ""


def run_case(seed: int, index: int, policies: Optional[tuple[str, ...]] = None) -> Optional[Mismatch]:
    """Run case ``index`` of ``seed`` under ``policies`` (by default
    unrestricted and a random variant of recent and of chronological); a
    mismatch, or None if all agree.

    A case that the evaluator cannot check (its model is too large for
    the budget of check_case, or an aggregate depends on the engine's order
    of derivation) is replaced by the next draw from the same random
    source."""
    rng = random.Random(f"{seed}:{index}")
    while True:
        ch = RandomChoices(rng)
        case = random_case(ch, negation=ch.integer(0, 4) == 0)
        chosen = policies or ("unrestricted", random_policy(ch, "recent"), random_policy(ch, "chronological"),
                              SOUND_STRATEGIES[ch.integer(0, len(SOUND_STRATEGIES) - 1)])
        try:
            outcomes = check_case(case, chosen)
        except Uncheckable:
            continue
        except EtalisError as e:
            return Mismatch(index, None, case, f"the engine rejected the case: {e}")
        for o in outcomes:
            if not o.ok:
                return Mismatch(index, o, case)
        return None


def run_chain_case(seed: int, index: int) -> Optional[Mismatch]:
    """Run the sequence case ``index`` of ``seed`` (see
    reference.selection.random_chain_case) under its strategy; a mismatch
    with the case and the matches missing or unexpected, or None."""
    case = random_chain_case(RandomChoices(random.Random(f"{seed}:{index}:strategy")))
    missing, unexpected = check_chain_case(case)
    if not missing and not unexpected:
        return None
    return Mismatch(index, None, None, f"selection strategy:\n{case.report(missing, unexpected)}\n")


def run_snapshot_case(seed: int, index: int) -> Optional[Mismatch]:
    """Run case ``index`` of ``seed`` cut in two by a snapshot, restored in
    a new process (see reference.check.snapshot_mismatch); a mismatch, or
    None.  Rules that a strategy refuses are not a mismatch."""
    ch = RandomChoices(random.Random(f"{seed}:{index}:snapshot"))
    case = random_case(ch, negation=ch.integer(0, 4) == 0)
    policy = random_policy(ch) if ch.integer(0, 1) else STRATEGIES[ch.integer(0, len(STRATEGIES) - 1)]
    lateness = (None, None, 0.5, 2)[ch.integer(0, 3)]
    text = case.text() + random_timer_rule(ch, case.stream)
    cut = ch.integer(0, len(case.stream))
    try:
        options = {"policy": policy, "lateness": lateness, "explain": ch.integer(0, 2) > 0}
        error = snapshot_mismatch(text, options, case.stream, cut, "process")
    except EtalisError:
        return None
    return None if error is None else Mismatch(index, None, None, f"snapshot:\n{error}\n")


def describe(m: Mismatch, shrink: bool = True) -> str:
    """The mismatch in full, shrunk to a small case when possible."""
    if m.case is None:
        return f"case {m.index}: {m.error}"
    if m.outcome is None:
        return f"case {m.index}: {m.error}\n--- rules.etl\n{m.case.text()}--- stream.events\n{m.case.stream_text()}"
    outcome = m.outcome
    if shrink:
        small = shrink_case(m.case, outcome.policy)
        outcome = check_case(small, (outcome.policy,))[0]
    return f"case {m.index} (shrunk):\n{outcome.report()}"


def fuzz(cases: int, seed: int, out: Optional[TextIO] = None, progress: bool = False,
         snapshot: bool = False) -> int:
    """Run ``cases`` cases of ``seed`` (with ``snapshot``, each cut by a
    snapshot too), print the first mismatch and the summary line; return
    the number of mismatches."""
    out = sys.stdout if out is None else out
    mismatches = 0
    first: Optional[Mismatch] = None
    started = time.monotonic()
    for i in range(cases):
        m = run_case(seed, i) or run_chain_case(seed, i) or (run_snapshot_case(seed, i) if snapshot else None)
        if m is not None:
            mismatches += 1
            if first is None:
                first = m
        if progress and (i + 1) % 1000 == 0:
            print(f"... {i + 1} cases, {mismatches} mismatches, {time.monotonic() - started:.0f}s",
                  file=sys.stderr, flush=True)
    if first is not None:
        print(describe(first), file=out)
    print(f"{cases} cases, {mismatches} mismatches", file=out)
    return mismatches


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1000, help="number of random cases (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--case", type=int, default=None, help="run only case number CASE of the seed, and show it")
    parser.add_argument("--progress", action="store_true", help="report progress on stderr")
    parser.add_argument("--snapshot", action="store_true",
                        help="also cut each case by a snapshot restored in a new process")
    args = parser.parse_args(argv)
    if args.case is not None:
        m = run_case(args.seed, args.case) or run_chain_case(args.seed, args.case) or (
            run_snapshot_case(args.seed, args.case) if args.snapshot else None)
        if m is None:
            print(f"case {args.case}: engine and model agree")
            return 0
        print(describe(m))
        return 1
    return 1 if fuzz(args.cases, args.seed, progress=args.progress, snapshot=args.snapshot) else 0


if __name__ == "__main__":
    sys.exit(main())
