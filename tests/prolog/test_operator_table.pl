:- module(test_operator_table, []).
:- use_module(library(plunit)).
:- use_module(library(lists)).
:- use_module(library(http/json)).
:- use_module('../../prolog/etalis').
:- use_module('../../prolog/etalis/syntax').
:- ensure_loaded('toy/soon').

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
    request(feed(M, 1), Events, _, Text),
    request(destroy(M), "", _, _),
    split_string(Text, "\n", "", Lines0),
    exclude(==(""), Lines0, Lines).

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
