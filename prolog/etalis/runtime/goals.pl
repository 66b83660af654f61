:- module(etalis_goals,
          [ user_goal/1,                % :Goal
            goal_error/3,               % +Engine, +Error, +Goal
            trigger_asked/2,            % +Engine, +Event
            first_derivation/4          % +Engine, +Event, +T1, +T2
          ]).
:- use_module(protocol, [message_text/2, bounded_text/2]).
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
%   so that the occurrence is not detected.  The inference limit of the
%   event (see etalis_limits:limited/6) is not Goal's error: it passes on, and Goal is
%   kept to name in the report.

goal_error(M, inference_limit_exceeded, Goal) :- !,
    feed_global(M, limit_goal, G),
    nb_setval(G, Goal),
    throw(inference_limit_exceeded).
goal_error(M, Error, Goal) :-
    message_text(Error, Msg),
    (   Goal = aggregate(Fun, X)
    ->  F =.. [Fun, X],
        bounded_text(F, Text),
        format(string(Warning), "aggregate ~s raised: ~w", [Text, Msg])
    ;   bounded_text(Goal, Text),
        format(string(Warning), "where condition ~s raised: ~w", [Text, Msg])
    ),
    feed_warning(M, Warning),
    fail.
