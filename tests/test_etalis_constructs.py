"""Every construct that ETALIS's examples use, in rule files of our own
(tests/etalis_constructs/, written in ETALIS's style, operators in quotes):
`etalis check` accepts it, or refuses it at its position with a message
that names it.  docs/language.md, "Coming from ETALIS", lists them; the
count over ETALIS's own 93 examples is in docs/etalis-comparison.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from etalis_py.cli import main

HERE = Path(__file__).parent / "etalis_constructs"

ACCEPTED = {
    "allen_relations": "5 warnings: 5 rules, 5 binary goals, policy unrestricted, "
                       "reports close/1, in/1, next/1, open/1, same/1",
    "capitalised_aliases": "1 warning: 1 rules, 2 binary goals, policy unrestricted, reports both/1",
    "current_datime": "ok: 1 rules, 1 binary goals, policy unrestricted, reports stamp/1",
    "check_operator": "1 warning: 1 rules, 2 binary goals, policy unrestricted, reports fast/1",
    "db_facts": "ok: 1 rules, 1 binary goals, policy unrestricted, reports cost/2",
    "do_action": "ok: 1 rules, 1 binary goals, policy unrestricted, reports shipped/1",
    "dynamic_directive": "ok: 1 rules, 1 binary goals, policy unrestricted, reports first/1",
    "etalis_library": "1 warning: 1 rules, 2 binary goals, policy unrestricted, reports slow/1",
    "event_multiply": "ok: 1 rules, 1 binary goals, policy unrestricted, reports item/2",
    "event_rule_property": "ok: 1 rules, 1 binary goals, policy unrestricted, reports shipped/1",
    "ins_event_rule": "ok: 1 rules, 1 binary goals, policy unrestricted, reports learn/0",
    "forall_seq": "1 warning: 1 rules, 1 binary goals, policy unrestricted, reports all/1",
    "iff": "1 warning: 1 rules, 1 binary goals, policy unrestricted, reports shipped/1",
    "negation": "2 warnings: 2 rules, 3 binary goals, policy unrestricted, reports calm/1, quiet/1",
    "nested_rule": "2 warnings: 2 rules, 2 binary goals, policy unrestricted, reports done/0, mid/0",
    "operator_named_predicate": "ok: 1 rules, 1 binary goals, policy unrestricted, reports packed/2",
    "print_trigger": "3 warnings: 2 rules, 2 binary goals, policy unrestricted, reports shipped/1",
    "prolog_step": "ok: 1 rules, 1 binary goals, policy unrestricted, reports next/1",
    "property_label": "ok: 1 rules, 1 binary goals, policy unrestricted, reports shipped/1",
    "quoted_operators": "1 warning: 1 rules, 2 binary goals, policy unrestricted, reports late/1",
    "rule_label": "1 warning: 1 rules, 1 binary goals, policy unrestricted, reports shipped/1",
    "running_aggregate": "1 warning: 4 rules, 2 binary goals, policy unrestricted, reports total/1",  # one run per start
    "star_times_run": "1 warning: 3 rules, 1 binary goals, policy unrestricted, reports run/0",
}

REFUSED = {
    "del_static_rule": "1:21: error: del_static_rule/1 (original ETALIS's removal of a static clause by a running "
                       "rule) is not supported",
    "ntimes": "1:16: error: ETALIS's ntimes is not supported here: ETALIS declares `P ntimes N` but its compiler "
              "has no rules for it, so it never detects anything",
    "star_times_elsewhere": "1:15: error: ETALIS's star_times is not supported here: it is understood only as "
                            "the whole body S seq P star_times (S, then each later P extending the run)",
}


def check(name: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(["check", "--quiet", str(HERE / f"{name}.event")])
    captured = capsys.readouterr()
    return code, (captured.out + captured.err).splitlines()


def test_every_construct_file_is_either_accepted_or_refused() -> None:
    assert sorted(ACCEPTED.keys() | REFUSED.keys()) == sorted(p.stem for p in HERE.glob("*.event"))
    assert (len(ACCEPTED), len(REFUSED)) == (23, 3)


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_etalis_check_accepts_the_construct(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = check(name, capsys)
    assert code == 0
    assert lines[-1] == f"{HERE / name}.event: {ACCEPTED[name]}"


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_etalis_check_refuses_the_construct_at_its_position_naming_it(
        name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = check(name, capsys)
    assert code == 2
    assert lines[0] == f"{HERE / name}.event:{REFUSED[name]}"
    assert lines[1].startswith("  hint: ")
