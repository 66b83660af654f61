:- module(test_detection_lines, []).
:- use_module(library(plunit)).
:- use_module(library(random)).
:- use_module('../../prolog/etalis/runtime/protocol').
:- use_module('../../prolog/etalis/runtime/columns').

%   The lines of detections that the foreign library writes are those
%   that etalis_protocol builds from their parts, character for
%   character; the detections it does not take are built in Prolog.

:- initialization(columns_library('../../prolog/etalis/runtime/etalis_columns.so'), now).

%   both_lines(+Format, +Detection, -C, -Prolog): the line the foreign
%   library writes of Detection (`none` if it does not take it) and the
%   line built in Prolog.

both_lines(Format, det(E, T1, T2), C, Prolog) :-
    with_output_to(string(C0), ( etalis_columns:etalis_write_detection(Format, E, T1, T2) -> true ; true )),
    (   C0 == "" -> C = none ; C = C0 ),
    with_output_to(string(Prolog), etalis_protocol:write_json_detection(Format, E, T1, T2)).

%   same_lines(+Format, +D, -Taken): the library's line of D, if it takes
%   it (Taken `true`), is the line built in Prolog.

same_lines(Format, D, Taken) :-
    both_lines(Format, D, C, P),
    (   C == none
    ->  Taken = false
    ;   C == P
    ->  Taken = true
    ;   format(user_error, "~q: ~q against ~q~n", [D, C, P]),
        fail
    ).

taken(Format, D) :-
    both_lines(Format, D, C, _),
    C \== none.

sample_value(X) :-
    random_between(0, 9, K),
    sample_value(K, X).

sample_value(0, X) :- random_between(-1_000_000, 1_000_000, X).
sample_value(1, X) :- random_between(-30, 30, P), X is random_float * 10.0 ** P.
sample_value(2, X) :- random_between(-8, 22, P), X is -random_float * 10.0 ** P.
sample_value(3, X) :- random_between(-100, 100, I), X is float(I).
sample_value(4, X) :- random_member(X, [a, 'b c', 'http://ex.org/x', '', 'say "hi"', 'back\\slash', 'tab\there', 'é']).
sample_value(5, X) :- random_member(X, ["text", "", "quote \"", "ü", "a\nb"]).
sample_value(6, X) :- random_between(60, 200, P), X is 2 ** P.
sample_value(7, X) :- random_member(X, [[1, 2], f(x), [], -0.0, 1.0e22, 1.5e-7, 123456789012345680.0]).
sample_value(8, _).
sample_value(9, X) :- random_member(X, [0, -1, 9223372036854775807, -9223372036854775808, 0.1, 1.0e-5, 100000.0, 1.0e15, 1.0e16]).

sample_detection(det(E, T1, T2)) :-
    random_member(Name, [c, 'hot spell', 'ünï', 'a"b', '']),
    random_between(0, 4, Arity),
    length(Args, Arity),
    maplist(sample_value, Args),
    compound_name_arguments_(E, Name, Args),
    random_member(T1, [0, 1, 17, 0.01, 1234.37, 1.0e10, 1700000000.123, -5.5]),
    random_member(D, [0, 1, 0.37, 2.5e-6]),
    T2 is T1 + D.

compound_name_arguments_(Name, Name, []) :- !.
compound_name_arguments_(E, Name, Args) :-
    compound_name_arguments(E, Name, Args).

%   sample_float(-X): a float of any magnitude, digits and layout.

sample_float(X) :-
    random_between(0, 4, K),
    sample_float(K, X0),
    random_member(Sign, [1, -1]),
    X is Sign * X0.

sample_float(0, X) :-                           % a full mantissa, any exponent
    random_between(1, 9007199254740991, M), random_between(-1100, 970, E),
    X is M * 2.0 ** E.
sample_float(1, X) :-                           % few decimal digits
    random_between(1, 999999, M), random_between(-330, 310, E),
    catch(X is float(M * 10 ** E), _, X = 1.0).
sample_float(2, X) :-                           % times as a stream has them
    random_between(0, 100_000_000, I),
    X is I * 0.01.
sample_float(3, X) :-                           % powers of two, near the limits of the layout
    random_between(-1074, 1023, E),
    X is 2.0 ** E.
sample_float(4, X) :-
    random_member(X, [0.0, 1.0e15, 1.0e16, 123456789012345.0, 1234567890123456.0, 999999999999999.9,
                      0.001, 0.0001, 0.00012345, 5.0e-324, 1.7976931348623157e308, 9007199254740993.0,
                      100.0, 1.0e-4, 1.0e-5, 0.1, 0.3, 2.5, 1.0e-22, 1.0e-23, 9.999999999999999e-23,
                      99999999999999.98, 0.30000000000000004, 1.0e14, 123.456e-20, 2.2250738585072014e-308]).

:- begin_tests(detection_lines).

test(the_usual_detection_is_written_by_the_library, [C, P] ==
     ["{\"event\": \"c\", \"args\": [1, 2.5, \"x y\", null, \"s\"], \"start\": 0.01, \"end\": 3}\n",
      "{\"event\": \"c\", \"args\": [1, 2.5, \"x y\", null, \"s\"], \"start\": 0.01, \"end\": 3}\n"]) :-
    both_lines(object, det(c(1, 2.5, 'x y', _, "s"), 0.01, 3), C, P).

test(a_row_is_written_by_the_library, [C, P] == ["[\"c\", [], 1, 2]\n", "[\"c\", [], 1, 2]\n"]) :-
    both_lines(row, det(c, 1, 2), C, P).

test(a_text_that_needs_escapes_a_list_or_a_term_is_left_to_prolog, Taken == [false, false, false, false, false]) :-
    findall(T,
            ( member(E, [c('say "hi"'), c([1]), c(f(x)), 'ünï'(1), c("a\nb")]),
              ( taken(object, det(E, 1, 2)) -> T = true ; T = false ) ),
            Taken).

test(a_text_longer_than_256_characters_is_left_to_prolog, Taken == [true, false]) :-
    length(L256, 256), maplist(=(0'a), L256), atom_codes(A256, L256),
    atom_concat(A256, b, A257),
    findall(T, ( member(A, [A256, A257]), ( taken(row, det(c(A), 1, 2)) -> T = true ; T = false ) ), Taken).

test(a_float_that_is_not_finite_is_null, [C, P] == ["[\"c\", [null, null], 1, 2]\n", "[\"c\", [null, null], 1, 2]\n"]) :-
    X is inf, Y is nan,
    both_lines(row, det(c(X, Y), 1, 2), C, P).

test(random_detections_are_the_same_text_either_way, Both == [false, true]) :-
    set_random(seed(20261205)),
    findall(T,
            (   between(1, 3000, _),
                sample_detection(D),
                same_lines(object, D, T),
                same_lines(row, D, T)
            ),
            Ts),
    length(Ts, 3000),
    sort(Ts, Both).

test(random_floats_are_the_same_text_either_way) :-
    set_random(seed(53)),
    forall(between(1, 5_000, _),
           (   sample_float(X),
               same_lines(row, det(c(X), X, X), true)
           )).

:- end_tests(detection_lines).
