:- module(etalis_timers,
          [ timers_global/2,            % +Engine, -Name
            timer_set/5                 % +Engine, +Event, +When, +T1, +T2
          ]).
:- use_module(library(heaps)).
:- use_module('../reader/terms', [finite_number/1]).
:- use_module('../dialect/driver', [datime_time/2]).
:- use_module(protocol, [bounded_text/2]).
:- use_module(feed_state, [feed_warning/2]).

/** <module> Original ETALIS's timers: events set to occur later

A rule whose head is a timer (exceptionAlarm/2,
exceptionAlarmAbsoluteDatime/2) sets an event to occur at a later time;
the timers of an engine wait in a heap by their due times until an
event, a flush or an advance reaches them (see
etalis_process:due_timers/4).
*/

%!  timers_global(+Engine, -Name) is det.
%
%   Name is the global variable that holds the timers
%   of engine Engine that are not due yet, timers(Seq, Heap): Heap has
%   ev(Event, T1, Due) by Due-N, N the order in which they were set
%   (Seq of them so far), see timer_set/5.

timers_global(M, Name) :-
    atom_concat(M, '/timers', Name).

%!  timer_set(+Engine, +Event, +When, +T1, +T2) is det.
%
%   A rule whose head is one of original ETALIS's timers (see
%   etalis_patterns:rule_head/5) detected its pattern over [T1,T2]: Event
%   occurs over [T1,Due], as in ETALIS, where Due is T2 + Seconds for
%   When = after(Seconds), or the time Time stands for (a number of
%   seconds or an ETALIS datime, see etalis_driver:datime_time/2) for
%   When = at(Time).  It is derived, as the head of a rule is, before
%   the first event whose end is Due or later (see
%   etalis_process:due_timers/4), or at the end of the stream (a flush,
%   see etalis_feed:engine_feed/5).  A When that is no time
%   after T2 (a timer cannot fire in the past, nor at once) is a warning
%   of the line being processed, and nothing is set.

timer_set(M, E, When, T1, T2) :-
    (   due_time(When, T2, Due)
    ->  timers_global(M, G),
        nb_getval(G, timers(Seq0, H0)),
        Key is float(Due),
        add_to_heap(H0, Key-Seq0, ev(E, T1, Due), H),
        Seq is Seq0 + 1,
        nb_setval(G, timers(Seq, H))
    ;   timer_warning(M, E, When, T2)
    ).

%   due_time(+When, +T2, -Due) is semidet: When is a time Due after T2.

due_time(after(D), T2, Due) :-
    number(D), D > 0, D < inf,
    Due is T2 + D.
due_time(at(T), T2, Due) :-
    finite_time(T, Due),
    Due > T2.

timer_warning(M, E0, When, T2) :-
    (   E0 = '$provenance'(E, _) -> true ; E = E0 ),
    bounded_text(E, Shown),
    (   When = after(D)
    ->  bounded_text(D, Delay),
        format(string(W), "exceptionAlarm/2 of ~s was given the delay ~s, not a positive number of seconds: nothing raised", [Shown, Delay])
    ;   When = at(T),
        finite_time(T, Due)
    ->  format(string(W), "exceptionAlarmAbsoluteDatime/2 of ~s is due at ~w, not after the detection at ~w (a timer cannot fire in the past, nor at once): nothing raised", [Shown, Due, T2])
    ;   When = at(T),
        bounded_text(T, Given),
        format(string(W), "exceptionAlarmAbsoluteDatime/2 of ~s was given ~s, not a number of seconds or a datime(Y,M,D,H,Min,S): nothing raised", [Shown, Given])
    ),
    feed_warning(M, W).

finite_time(T, T) :-
    number(T), !,
    finite_number(T).
finite_time(datime(Y, Mo, D, H, Mi, S), Time) :- !,
    finite_time(datime(Y, Mo, D, H, Mi, S, 1), Time).
finite_time(T, Time) :-
    catch(datime_time(T, Time), error(type_error(_, _), _), fail).
