:- module(etalis_goals,
          [ user_goal/1,                % :Goal
            goal_error/3,               % +Engine, +Error, +Goal
            trigger_asked/2,            % +Engine, +Event
            first_derivation/4          % +Engine, +Event, +T1, +T2
          ]).
:- use_module(protocol, [message_text/2, bounded_text/2, shallow/1]).
:- use_module('../compiler/compile', [condition_rules/3]).
:- use_module(feed_state, [feed_global/3, feed_warning/2]).

/** <module> The rules' own goals as an event runs them

The compiled rules call these (through etalis_runtime, which exports
them): a `where` condition or `do` action runs with its output apart
from the detections, its error is a warning of the input line, ETALIS's
print_trigger/1 is asked of each occurrence, and an occurrence derived
again on a cycle is no new fact.
*/

%!  user_goal(:Goal) is nondet.
%
%   Run Goal, a `where` condition or `do` action of a rule, with its
%   output on user_error: the engine writes its detections to the
%   current output, where what a rule prints must not go (nor, on the
%   command line, into the JSON lines on standard output).

:- meta_predicate user_goal(0).

user_goal(Goal) :-
    current_output(Detections),
    output_to(user_error, Detections),
    catch(Goal, E, ( set_output(Detections), throw(E) )),
    output_to(Detections, user_error).

%   output_to(+Stream, +Back): the current output is Stream, and Back
%   again on backtracking.

output_to(Stream, _) :-
    set_output(Stream).
output_to(_, Back) :-
    set_output(Back),
    fail.

%!  trigger_asked(+Engine, +Event) is semidet.
%
%   The print_trigger/1 rule of Engine's file succeeds for the occurrence
%   Event, which is then reported (original ETALIS asks it of each
%   occurrence); an error there is a warning, and Event is not reported.

trigger_asked(M, E) :-
    catch(once(M:print_trigger(E)), Error, goal_error(M, Error, print_trigger(E))).

%!  first_derivation(+Engine, +Event, +T1, +T2) is semidet.
%
%   Event over [T1,T2] has not been derived before in Engine (and is
%   now): for the events of a cycle whose steps complete at once, a
%   derived occurrence identical to one already derived is no new fact
%   (see etalis_recursion:check_recursion/2).  An Event with variables
%   has been derived if one as general or more (its variables standing
%   for all values) has.

first_derivation(M, E, T1, T2) :-
    \+ seen(M, E, T1, T2),
    assertz(M:'$seen'(E, T1, T2)).

seen(M, E, T1, T2) :-
    (   ground(E)
    ->  M:'$seen'(E, S, F)
    ;   functor(E, N, A),
        functor(E0, N, A),
        M:'$seen'(E0, S, F),
        subsumes_term(E0, E)
    ),
    S =:= T1,
    F =:= T2,
    !.

%!  goal_error(+Engine, +Error, +Goal) is failure.
%
%   A `where` condition Goal (or an aggregate(Fun, Value)) of Engine
%   raised Error: record a warning for the current input line and fail,
%   so that the occurrence is not detected.  The warning of a condition
%   names its rule (see etalis_compile:condition_rules/3) and says what
%   went wrong, with a hint for the common errors.  The inference limit of the
%   event (see etalis_limits:limited/6) is not Goal's error: it passes on, and Goal is
%   kept to name in the report.

goal_error(M, inference_limit_exceeded, Goal) :- !,
    feed_global(M, limit_goal, G),
    nb_setval(G, Goal),
    throw(inference_limit_exceeded).
goal_error(M, Error, Goal) :-
    (   Goal = aggregate(Fun, X)
    ->  message_text(Error, Msg),
        F =.. [Fun, X],
        bounded_text(F, Text),
        format(string(Warning), "aggregate ~s raised: ~w", [Text, Msg])
    ;   bounded_text(Goal, Text),
        condition_rule(M, Goal, Rule),
        error_words(Error, Words, Hint),
        (   Hint == ""
        ->  format(string(Warning), "where condition ~s~s raised: ~s", [Text, Rule, Words])
        ;   format(string(Warning), "where condition ~s~s raised: ~s\n  hint: ~s", [Text, Rule, Words, Hint])
        )
    ),
    feed_warning(M, Warning),
    fail.

%   condition_rule(+Engine, +Goal, -Words): Words name the rule of
%   Engine whose `where` condition Goal is, " of Head (File:Line:Column)"
%   (and how many other rules share the condition), or "" if that
%   cannot be told.

condition_rule(M, Goal, Words) :-
    (   shallow(Goal),
        catch(M:'$compiled'(Compiled), _, fail),
        condition_rules(Compiled, Goal, [Head-pos(Src, Line, Col)|More])
    ->  (   functor(Head, Name, _),
            \+ sub_atom(Name, 0, _, _, $)
        ->  copy_term(Head, Shown),
            numbervars(Shown, 0, _),
            format(string(Of), " of ~W", [Shown, [quoted(true), numbervars(true), max_depth(20)]])
        ;   Of = " of the rule"
        ),
        length(More, N),
        (   N =:= 0
        ->  Others = ""
        ;   plural(N, S),
            format(string(Others), ", and of ~d more rule~a with this condition", [N, S])
        ),
        format(string(Words), "~s (~w:~d:~d~s)", [Of, Src, Line, Col, Others])
    ;   Words = ""
    ).

plural(1, '') :- !.
plural(_, s).

%   error_words(+Error, -Words, -Hint): what went wrong in a condition,
%   in plain words where the error is a common one (SWI-Prolog's own
%   message otherwise), and what to do ("" if nothing can be said).

error_words(error(type_error(evaluable, Name/0), _), Words, Hint) :-
    atom(Name),
    !,
    format(string(Words), "~q is an atom, not a number, and arithmetic compares numbers", [Name]),
    format(string(Hint), "compare an atom with == or \\== (X == ~q), or use a number", [Name]).
error_words(error(type_error(evaluable, Name/Arity), _), Words, Hint) :-
    !,
    format(string(Words), "~q/~w is not a function of arithmetic", [Name, Arity]),
    Hint = "use SWI-Prolog's arithmetic functions (+, -, *, /, abs, min, max, sqrt, ...); a compound term \c
            such as a(1) is not a number".
error_words(error(type_error(evaluable, Value), _), Words, Hint) :-
    !,
    format(string(Words), "~W is not a number", [Value, [quoted(true), max_depth(10)]]),
    Hint = "arithmetic takes numbers: test the value first, e.g. number(X), X > 1".
error_words(error(instantiation_error, _), Words, Hint) :-
    !,
    Words = "a variable it reads is unbound when it runs",
    Hint = "bind every variable the condition reads in the pattern it filters (an argument of an event) \c
            or earlier in the condition".
error_words(error(evaluation_error(zero_divisor), _), Words, Hint) :-
    !,
    Words = "division by zero",
    Hint = "test the divisor first, e.g. D =\\= 0, Q is N / D".
error_words(error(evaluation_error(undefined), _), Words, Hint) :-
    !,
    Words = "the result is undefined (as log(0) or sqrt(-1))",
    Hint = "test the argument first, e.g. X > 0, Y is log(X)".
error_words(error(existence_error(procedure, PI0), _), Words, Hint) :-
    (   PI0 = _:PI -> true ; PI = PI0 ),
    PI = Name/_,
    \+ sub_atom(Name, 0, _, _, $),
    !,
    format(string(Words), "~q is not defined", [PI]),
    Hint = "define it in the rule file (a static clause), load it with --static, or check its spelling".
error_words(Error, Words, "") :-
    message_text(Error, Words).
