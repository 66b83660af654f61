"""``etalis check`` and ``etalis compile``, and the findings that ``run``,
``replay`` and ``stream`` print before they process events."""

from __future__ import annotations

import argparse
import difflib
import json
from pathlib import Path
from typing import Optional, TextIO

from ..bridge.engine import Engine, compile_listing
from ..errors import RuleError
from ..inputs.mapping import Mapping
from ..inputs.streams import header_of, input_format
from ..rules.analysis import RuleFile, Sig
from ..rules.findings import Finding, counts, findings
from ..rules.graph import dot
from .options import (EXIT_FAILURE, EXIT_OK, EXIT_RULES, add_quiet_option, add_static_option, add_trust_options,
                      policy_option, said)


def add_check_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """``etalis check``: the findings of a rule file."""
    check = sub.add_parser("check", help="report problems in a rule file (docs/language.md, Checking rules)")
    check.add_argument("rules", type=Path, help="the .etl rule file")
    add_quiet_option(check)
    add_static_option(check)
    add_trust_options(check)
    check.add_argument("--format", choices=("text", "json"), default="text",
                       help="text: one finding a line, then a summary; json: one JSON document")
    check.add_argument("--dot", type=Path, metavar="FILE",
                       help="write the event dependency graph in Graphviz dot, cycles in red")
    check.add_argument("--strict", action="store_true", help="exit 1 when there are warnings")


def add_compile_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """``etalis compile``: the binary goals and clauses of a rule file."""
    comp = sub.add_parser("compile", help="print the binary goals and generated clauses")
    comp.add_argument("rules", type=Path, help="the .etl rule file")
    comp.add_argument("--policy", type=policy_option, metavar="POLICY", help="as for run")
    add_static_option(comp)
    add_trust_options(comp)


def compile_rules(ns: argparse.Namespace, out: TextIO) -> int:
    """``etalis compile``: print the listing of the compiled rules."""
    out.write(compile_listing("", path=str(ns.rules), policy=ns.policy, trusted=ns.trusted, static=ns.static))
    return EXIT_OK


def report_findings(rule_file: RuleFile, err: TextIO, max_age: Optional[float] = None) -> tuple[int, int]:
    """Print the errors and warnings of the rule file (not the notes) on
    ``err``, before ``run`` or ``replay`` processes events; return how
    many errors and warnings were printed."""
    shown = [f for f in findings(rule_file, max_age) if f.severity != "info"]
    for f in shown:
        print(f.text(), file=err)
    errors = sum(f.severity == "error" for f in shown)
    return errors, len(shown) - errors


def report_unused_event(rule_file: RuleFile, mapping: Mapping, err: TextIO,
                        events: Optional[Path] = None, kind: Optional[str] = None) -> int:
    """Warn when the event that ``--event`` makes of every row is the name
    of a column of the ``events`` file (``--event-col`` was meant), or one
    that no rule uses (a typo, or ``--args`` giving another arity), with
    the closest event the rules use: the run would detect nothing.
    Return the number of warnings printed (0 or 1)."""
    if mapping.event is None:
        return 0
    if events is not None and mapping.event in header_of(events, input_format(events, kind).name, mapping) \
            and mapping.event not in (mapping.time, *mapping.args):
        print(f"etalis: warning: --event {mapping.event} makes every row the event {mapping.event}, but "
              f"{mapping.event} is a column of {events}: did you mean --event-col {mapping.event}?", file=err)
        return 1
    rules_read = rule_file.rules
    inputs = {s for r in rules_read for s in r.body_sigs()} - {r.head.sig for r in rules_read}
    sig = Sig(mapping.event, len(mapping.args))
    if not inputs or sig in inputs:
        return 0
    names = sorted(str(s) for s in inputs)
    close = difflib.get_close_matches(str(sig), names, n=1)
    hint = f"; did you mean --event {Sig.parse(close[0]).name} with {Sig.parse(close[0]).arity} --args?" \
        if close else ""
    print(f"etalis: warning: no rule uses {sig}, the event --event makes of every row "
          f"(the rules' input events: {', '.join(names)}){hint}", file=err)
    return 1


def check(ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``etalis check``: the findings of a rule file (``--quiet``: only the
    errors, and the summary); exit 0 when there are no errors (and no
    warnings under ``--strict``), 1 with warnings under ``--strict``, 2
    with errors."""
    rules: Path = ns.rules
    as_json = ns.format == "json"
    # the engine's create reply carries the reading the findings are made of;
    # a file the compiler refuses is read again for them
    engine: Optional[Engine] = None
    refused: Optional[RuleError] = None
    try:
        engine = Engine.from_file(rules, static=ns.static, trusted=ns.trusted, analysis=True)
    except RuleError as e:
        refused = e
    try:
        rf = engine.rule_file() if engine is not None else RuleFile.read(str(rules), static=[str(f) for f in ns.static])
    except RuleError as e:
        if not as_json:
            raise
        out.write(json.dumps({"file": str(rules), "findings": [_rule_error(e).to_json()],
                              "summary": counts([_rule_error(e)])}) + "\n")
        return EXIT_RULES
    summary: dict[str, object] = {}
    if engine is not None:
        summary = {"rules": engine.rule_count, "goals": engine.goal_count, "policy": engine.policy,
                   "reports": list(engine.printed)}
        engine.close()
    found = findings(rf)
    if ns.dot:
        try:
            ns.dot.write_text(dot(rf), encoding="utf-8")
        except OSError as e:
            print(f"etalis: --dot {said(e)}", file=err)
            return EXIT_FAILURE
    failed: Optional[RuleError] = None
    # the compiler's refusal, unless a finding says it already
    if refused is not None and not any(f.severity == "error" and (f.file, f.line) == (refused.file, refused.line)
                                       for f in found):
        failed = refused
        found.append(_rule_error(refused))
    n = counts(found)
    if as_json:
        out.write(json.dumps({"file": str(rules), "findings": [f.to_json() for f in found],
                              "summary": {**n, **summary}}) + "\n")
    else:
        for f in found:     # --quiet: the errors only
            if (f is not found[-1] or failed is None) and (f.severity == "error" or not ns.quiet):
                print(f.text(), file=out)
        if failed is not None:
            print(failed, file=err)
        print(_summary(rules, n, summary), file=out)
    if n["error"]:
        return EXIT_RULES
    return EXIT_FAILURE if ns.strict and n["warning"] else EXIT_OK


def _rule_error(e: RuleError) -> Finding:
    return Finding("error", "rule-error", e.message, e.file, e.line, e.column, e.hint)


def _summary(rules: Path, n: dict[str, int], summary: dict[str, object]) -> str:
    tally = ", ".join(f"{k} {sev}{'s' if k != 1 and sev != 'info' else ''}" for sev, k in n.items() if k)
    status = "ok" if not n["error"] and not n["warning"] else tally
    text = f"{rules}: {status}"
    if summary:
        reports = summary["reports"]
        assert isinstance(reports, list)
        text += (f": {summary['rules']} rules, {summary['goals']} binary goals, policy {summary['policy']}, "
                 f"reports {', '.join(reports) or 'nothing'}")
    if status == "ok" and tally:
        text += f" ({tally})"
    return text
