:- module(test_operator_table, []).
:- use_module(library(plunit)).
:- use_module(library(lists)).
:- use_module(library(http/json)).
:- use_module('../../prolog/etalis').
:- use_module('../../prolog/etalis/reader/syntax').
:- use_module('../../prolog/etalis/compiler/optable', [pattern_parts/3]).
:- use_module('../../prolog/etalis/compiler/rule_facts', [source_pattern/2]).
:- ensure_loaded('toy/soon').
:- ensure_loaded('toy/unless').

/*  The toy operator `soon` of toy/soon.pl is one entry of the operator
    table; the reader, the binariser, the compiler, the protocol and the
    rendering of patterns know it from that entry alone.
*/

request(Request, Payload, Header, Body) :-
    format(string(R), "~q", [Request]),
    etalis_api(R, Payload, Reply),
    sub_string(Reply, Before, _, After, "\n"), !,
    sub_string(Reply, 0, Before, _, HeadText),
    sub_string(Reply, _, After, 0, Body),
    atom_json_dict(HeadText, Header, []).

detections(Rules, Events, Lines) :-
    request(create(text(toy), []), Rules, Created, _),
    atom_string(M, Created.engine),
    request(feed(M, lines, []), Events, _, Text),
    request(destroy(M), "", _, _),
    split_string(Text, "\n", "", Lines0),
    exclude(==(""), Lines0, Lines).

rule_pattern_json(Rules, Pattern) :-
    request(rules(text(t)), Rules, Header, _),
    Header.rules = [Rule],
    Pattern = Rule.pattern.

:- begin_tests(operator_table).

test(the_reader_knows_the_toy_operator, true(P =@= op(soon, event(a(X)), event(b(X))))) :-
    read_etl_string("h(X) <- a(X) soon b(X).", t, [rule(_, _, P, _, _)]).

test(its_priority_is_the_one_in_the_table, P == or(op(soon, event(a), event(b)), event(c))) :-
    read_etl_string("h <- a soon b or c.", t, [rule(_, _, P, _, _)]).

test(the_compiled_template_detects_what_the_entry_says, Lines ==
     ["{\"event\": \"h\", \"args\": [1], \"start\": 1, \"end\": 4}",
      "{\"event\": \"h\", \"args\": [2], \"start\": 10, \"end\": 14}"]) :-
    detections("h(X) <- a(X) soon b(X).",
               "event(a(1), 1).\nevent(b(1), 4).\nevent(b(1), 9).\nevent(a(2), 10).\nevent(b(2), 14).\nevent(b(3), 15).\n",
               Lines).

test(the_protocol_gives_its_json_and_text, [Op, Stored, Text] == ["soon", "left", "a(X) soon b(X)"]) :-
    request(rules(text(toy)), "h(X) <- a(X) soon b(X).", Header, _),
    Header.rules = [Rule],
    Pattern = Rule.pattern,
    [Op, Stored, Text] = [Pattern.op, Pattern.stored, Pattern.text].

test(patterns_are_written_back_with_it, Text == "a(A) soon b(A) within 30") :-
    pattern_text(within(soon(a(X), b(X)), 30), Text).

:- end_tests(operator_table).

:- begin_tests(construct_rows).

/*  The constructs other than temporal operators are rows of the table
    too: their parts (and so their JSON keys and how they are written
    back) come from the row.
*/

test(every_construct_has_its_parts_from_its_row, Parts == [fun-function, value-value, pattern-aggregated,
                                                             window-window, result-result]) :-
    pattern_parts(P, aggregate, Parts0),
    P = aggregate(_, _, _, _, _),
    findall(K-Kind, member(K-Kind-_, Parts0), Parts).

test(a_construct_is_written_back_from_its_parts, Texts ==
     ["a(A) seq b(A) cnot c(A)", "a(A) fnot b(A) within 60", "a(A) or b(A) where A>1",
      "aggregate(sum(A), a(_, A), count(3), _)"]) :-
    findall(T, ( member(R, ["h(X) <- (a(X) seq b(X)) cnot c(X).",
                            "h(X) <- (a(X) fnot b(X)) within minutes(1).",
                            "h(X) <- (a(X) or b(X)) where X > 1.",
                            "h(X, S) <- aggregate(sum(V), a(X, V), count(3), S)."]),
                 read_etl_string(R, t, [rule(_, _, P, _, _)]),
                 source_pattern(P, Source),
                 pattern_text(Source, T) ),
            Texts).

test(its_json_has_the_keys_of_its_row, [Op, Keys, Value] == [aggregate, [fun, op, pattern, result, text, value, window],
                                                            "V"]) :-
    rule_pattern_json("h(X, S) <- aggregate(sum(V), a(X, V), count(3), S).", J),
    atom_string(Op, J.op),
    dict_keys(J, Keys),
    Value = J.value.var.

test(a_negation_json_has_its_parts, [Op, LeftOp, RightEvent] == [cnot, seq, "c"]) :-
    rule_pattern_json("h(X) <- (a(X) seq b(X)) cnot c(X).", J),
    atom_string(Op, J.op),
    atom_string(LeftOp, J.left.op),
    RightEvent = J.right.event.functor.

test(cnot_takes_a_sequence_on_its_left, error(etalis_error("cnot negates an event between the two parts of a sequence",
                                                          "write (A seq B) cnot C"), pos(t, 1, 6))) :-
    read_etl_string("h <- (a and b) cnot c.", t, _).

dict_keys(Dict, Keys) :-
    dict_pairs(Dict, _, Pairs),
    pairs_keys(Pairs, Keys).

:- end_tests(construct_rows).

:- begin_tests(construct_toy).

/*  The toy construct `unless` of toy/unless.pl is a row of the table
    and a template (a binarize/6 clause); the reader, the protocol, the
    rendering, the compiler's recursion check, the facts of `etalis
    check` and the compiled goals know it from those alone.
*/

test(the_reader_reads_it_by_its_row, P =@= unless(op(seq, event(a(X)), event(c(X))), event(b(X)))) :-
    read_etl_string("h(X) <- (a(X) seq c(X)) unless b(X).", t, [rule(_, _, P, _, _)]).

test(its_json_and_text_come_from_its_row, [Op, Negated, Left, Text] == ["unless", "right", "seq", "a(X) seq c(X) unless b(X)"]) :-
    rule_pattern_json("h(X) <- (a(X) seq c(X)) unless b(X).", J),
    [Op, Negated, Left, Text] = [J.op, J.negated, J.left.op, J.text].

test(the_steps_of_its_events_follow_the_kinds_of_its_parts, Steps == [a-"waiting", c-"widening", b-"negated"]) :-
    request(rules(text(t)), "h(X) <- (a(X) seq c(X)) unless b(X).", Header, _),
    Header.rules = [Rule],
    findall(E-S, ( member(Step, Rule.steps), atom_string(E, Step.event.functor), S = Step.step ), Steps).

test(its_negated_part_binds_nothing, Unbound == ["Y"]) :-
    request(rules(text(t)), "k(X, Y) <- a(X) unless b(X, Y).", Header, _),
    Header.rules = [Rule],
    Unbound = Rule.head_unbound.

test(a_recursion_through_its_left_repeats, Steps == [r-"repeating", b-"negated"]) :-
    request(rules(text(t)), "r(X) <- r(X) unless b(X).", Header, _),
    Header.rules = [Rule],
    findall(E-S, ( member(Step, Rule.steps), atom_string(E, Step.event.functor), S = Step.step ), Steps).

test(its_template_detects_what_it_means, Lines ==
     ["{\"event\": \"h\", \"args\": [2], \"start\": 4, \"end\": 6}",
      "{\"event\": \"h\", \"args\": [3], \"start\": 7, \"end\": 9}"]) :-
    detections("h(X) <- (a(X) seq c(X)) unless b(X).",
               "event(a(1), 1).\nevent(b(1), 2).\nevent(c(1), 3).\nevent(a(2), 4).\nevent(c(2), 6).\n\c
                event(a(3), 7).\nevent(b(4), 8).\nevent(c(3), 9).\n",
               Lines).

:- end_tests(construct_toy).
