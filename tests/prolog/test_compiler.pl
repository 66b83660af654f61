:- module(test_compiler, []).
:- use_module(library(plunit)).
:- use_module(library(lists)).
:- use_module('../../prolog/etalis/reader/syntax').
:- use_module('../../prolog/etalis/compiler/binarize').
:- use_module('../../prolog/etalis/compiler/operators').

pattern_of(Text, Pattern) :-
    read_etl_string(Text, t, [rule(_, _, Pattern, _, _)]).

program(Text, Program) :-
    read_etl_string(Text, t, Items),
    findall(rule(L, H, P, W, V, unrestricted), member(rule(L, H, P, W, V), Items), Rules),
    binarize_rules(Rules, Program).

:- begin_tests(syntax).

test(seq_binds_tighter_than_and_and_or, P == or(op(and, op(seq, event(a), event(b)), event(c)), event(d))) :-
    pattern_of("h <- a seq b and c or d.", P).

test(where_is_loosest_and_takes_a_conjunction, P = where(within(op(seq, event(a(X)), event(b(Y))), 5), (X > 1, Y < 2))) :-
    pattern_of("h <- a(X) seq b(Y) within 5 where X > 1, Y < 2.", P).

test(star_is_arithmetic_in_where, G == (W2 >= W1 * 1.1)) :-
    pattern_of("h <- w(W1) seq w(W2) where W2 >= W1 * 1.1.", where(op(seq, event(w(W1)), event(w(W2))), G)).

test(labelled_rule, [L, H] == [my_rule, h(x)]) :-
    read_etl_string("my_rule : h(x) <- a.", t, [rule(L, H, _, _, _)]).

test(static_rules_and_directives_are_kept, Kinds == [directive, static, static]) :-
    read_etl_string(":- policy(recent).\nf(1).\ng(X) :- f(X).", t, Items),
    maplist([I, K]>>functor(I, K, _), Items, Kinds).

test(time_units_become_seconds, W =:= 10800) :-
    pattern_of("h <- (a seq b) within hours(3).", within(_, W)).

test(positions_are_line_and_column, Where == pos(t, 3, 6)) :-
    catch(read_etl_string("h <- a.\n\nh <- a, b.", t, _), error(_, Where), true).

:- end_tests(syntax).

:- begin_tests(binarize).

test(variant_subpatterns_share_one_goal, N == 2) :-
    program("c(X) <- a(X) seq b(X).\nd(Y) <- (a(Y) seq b(Y)) seq e(Y).", program(Nodes, _)),
    length(Nodes, N).

test(different_windows_do_not_share, N == 2) :-
    program("c(X) <- a(X) seq b(X).\nd(Y) <- (a(Y) seq b(Y)) within 5.", program(Nodes, _)),
    length(Nodes, N).

test(a_goal_carries_the_variables_of_both_operands, Out = '$ie1'(X, Y, Z)) :-
    program("c(X, Z) <- a(X, Y) seq b(Y, Z).", program([node(1, temporal(seq), [a(X, Y), b(Y, Z)], Out, inf, unrestricted)], _)).

test(where_exports_only_variables_used_outside, Vs == 2) :-
    program("c(X, Z) <- a(X) where Z is X + 1, Local = Z.", program([node(_, where(_), _, Out, _, _)], _)),
    functor(Out, _, Vs).

test(or_carries_the_variables_bound_by_both_branches, [In, Out] = [[a(X, _), b(X)], '$ie1'(X)]) :-
    program("c(X) <- a(X, _) or b(X).", program([node(1, or, In, Out, _, _)], _)).

test(window_is_pushed_into_every_binary_goal, Ws == [7, 7]) :-
    program("c <- ((a seq b) and d) within 7.", program(Nodes, _)),
    findall(W, member(node(_, _, _, _, W, _), Nodes), Ws).

:- end_tests(binarize).

:- begin_tests(operators).

test(seq_stores_only_its_left_operand, S == [left]) :-
    temporal_spec(seq, _, _, _, _, S).

test(every_allen_relation_has_a_template, N == 13) :-
    aggregate_all(count, ( temporal_spec(Op, _, _, _, _, _), \+ memberchk(Op, [and, par, seq, forall_seq]) ), N).

test(interval_builtins_are_rewritten, G == (S = T1, (E = T2, D is T2 - T1))) :-
    interval_goal((start(S), end(E), duration(D)), T1, T2, G).

:- end_tests(operators).
