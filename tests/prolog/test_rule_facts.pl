:- module(test_rule_facts, []).
:- use_module(library(plunit)).
:- use_module(library(lists)).
:- use_module('../../prolog/etalis/reader/syntax').
:- use_module('../../prolog/etalis/compiler/compile').
:- use_module('../../prolog/etalis/compiler/rule_facts').

pattern_of(Text, Pattern) :-
    read_etl_string(Text, t, [rule(_, _, Pattern, _, _)]).

steps(Text, Steps) :-
    pattern_of(Text, P),
    event_steps(P, Steps0),
    maplist([E-S, N-S]>>functor(E, N, _), Steps0, Steps).

unbound(Text, Found) :-
    read_etl_string(Text, t, [rule(_, _, P, _, VN)]),
    where_unbound(P, Us),
    maplist(named(VN), Us, Found).

named(VN, unbound(G, Vs), G-Names) :-
    maplist(var_name(VN), Vs, Names).

var_name(VN, V, N) :-
    member(N = V1, VN),
    V1 == V,
    !.

:- begin_tests(rule_facts).

test(seq_waits_on_the_left, S == [p-waiting, a-widening]) :-
    steps("p <- p seq a.", S).

test(and_completes_at_once_where_guards, S == [p-repeating, a-repeating, q-guarded, b-guarded]) :-
    steps("h <- (p and a) or ((q and b) where true).", S).

test(at_once_through_an_aggregate, S == [p-immediate, a-immediate, b-repeating]) :-
    steps("h(S) <- aggregate(sum(X), p(X) and a, count(2), S) or b(S).", S).

test(negated_parts_and_allen_sides, S == [a-waiting, b-widening, x-negated, c-widening, d-waiting]) :-
    steps("h <- ((a seq b) cnot x) or (c after d).", S).

test(unbound_comparison_and_is, F == [(X > 1)-['X'], (Z is Y + W)-['W']]) :-
    unbound("h(X) <- a(Y) where X > 1, Z is Y + W.", F),
    F = [(X > 1)-_, (Z is Y + W)-_].

test(bound_by_an_earlier_goal_or_the_pattern, F == []) :-
    unbound("h(Z) <- a(Y) seq b(V) where (W is Y * V, start(T), Z is W + T, Z > 1).", F).

test(aggregate_result_is_bound, F == []) :-
    unbound("h(S, M) <- aggregate(max(T), temp(S, T), count(3), M) where M > 40.", F).

test(negation_binds_nothing, [F] == [['Y']]) :-
    unbound("h(X) <- a(X) where \\+ b(Y), Y > 1.", Found),
    maplist([_-N, N]>>true, Found, [F]).

test(static_clause_with_event_operators, Ops == [and, seq, within]) :-
    static_event_operators((alarm(R) :- seq(hot(R), smoke(R)), \+ and(a, b) ; within(c, 3)), Ops).

test(plain_static_clause, Ops == []) :-
    static_event_operators((ok(X) :- X > 1, (X < 5 -> true ; fail)), Ops).

test(source_pattern_writes_back, T == "a seq b cnot x within 5") :-
    pattern_of("h <- ((a seq b) cnot x) within 5.", P),
    source_pattern(P, S),
    pattern_text(S, T).

:- end_tests(rule_facts).

:- begin_tests(input_directive).

settings(Text, Settings) :-
    read_etl_string(Text, t, Items),
    compile_items(Items, [], compiled(_, _, _, Settings)).

test(inputs_one_or_a_list, Inputs == [input(a/1, pos(t, 1, 1)), input(b/0, pos(t, 2, 1)), input(c/2, pos(t, 2, 1))]) :-
    settings(":- input(a/1).\n:- input([b/0, c/2]).\nh <- a(_).", S),
    findall(I, ( member(I, S.directives), I = input(_, _) ), Inputs0),
    reverse(Inputs0, Inputs).

test(bad_input_is_a_positioned_error, Where == pos(t, 1, 1)) :-
    catch(settings(":- input(foo).\nh <- a.", _), error(etalis_error(_, _), Where), true).

:- end_tests(input_directive).
