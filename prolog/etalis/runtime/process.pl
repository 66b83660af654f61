:- module(etalis_process,
          [ admit/4,                    % +Order0, +Settings, +Event, -Order
            release/4,                  % +Settings, +Mark, +Heap0, -Heap
            due_timers/4,               % +Settings, +Time, +Line, -Last
            raised_events/3,            % +Settings, +Time, +Line
            rule_updates/1              % +Settings
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(heaps)).
:- use_module(feed_state, [feed_warning/2, count_raised/1]).
:- use_module(rule_changes, [taken_rule_updates/2, apply_rule_updates/2]).
:- use_module(batch_settings, [settings_refresh/1]).
:- use_module(limits, [limited/6]).
:- use_module(runtime, [position_global/2]).
:- use_module('../compiler/strategies', [selection/2, partition_input/4]).
:- use_module(protocol, [write_detection/2, write_detection/3]).

/** <module> An event's way through the engine

An input event that a feed admits (admit/4) runs now, or waits in the
reorder buffer of an engine with a lateness until no later arrival can
precede it (release/4).  When it runs (run/5), the timers due by its
time fire first, then its rules run within the inference limit (see
etalis_limits:limited/6), then the changes of the rules it asked for are
made and the events it raised are fed after it.  Each step takes the
batch settings (see etalis_batch_settings:batch_settings/4).
*/

%!  raised_events(+Settings, +T, +Line) is det.
%
%   Feed the events that the input event of line Line at time T raised
%   with event/1, after it and in the order raised, each at time T and
%   within the inference limit of the batch Settings; what they raise
%   follows them.  At
%   most max_raised/1 events per input event: a rule that raises the
%   event it reacts to would never end; the rest are dropped with a
%   warning.

raised_events(S, T, Line) :-
    arg(1, S, M),
    (   M:'$raised'(_)
    ->  raise_queue([], S, T, Line, 0)
    ;   true
    ).

raise_queue(Queue0, S, T, Line, N0) :-
    arg(1, S, M),
    findall(E, retract(M:'$raised'(E)), New),
    append(Queue0, New, Queue),
    (   Queue = [E|Queue1]
    ->  max_raised(Max),
        (   N0 >= Max
        ->  format(string(W), "event/1 raised more than ~D events for one input event (does a rule raise an event that leads back to itself?): the rest are dropped", [Max]),
            feed_warning(M, W)
        ;   N is N0 + 1,
            count_raised(M),
            run_one(S, E, T, T, Line),
            raise_queue(Queue1, S, T, Line, N)
        )
    ;   true
    ).

max_raised(1000).

%!  due_timers(+Settings, +T, +Line, -Last) is det.
%
%   Derive, in the order of their due times (of setting, for the same
%   due time), the timers due at T or before of the engine of the batch
%   Settings (see etalis_timers:timer_set/5), and what they raise,
%   as events of line Line.  Last is the due time of the last one, or
%   `none`.  At the end of a stream (T is inf) at most
%   max_flushed_timers/1 fire after those pending: timers that set
%   timers could go on for ever.

due_timers(S, T, Line, Last) :-
    arg(6, S, G),
    (   G == none
    ->  Last = none
    ;   due_timers(S, G, T, Line, Last)
    ).

due_timers(S, G, T, Line, Last) :-
    nb_getval(G, timers(_, H)),
    (   T == inf
    ->  heap_size(H, N),
        max_flushed_timers(Max),
        Budget is N + Max
    ;   Budget = inf
    ),
    due_timers(S, G, T, Line, Budget, none, Last).

due_timers(S, G, T, Line, Budget, Last0, Last) :-
    nb_getval(G, timers(Seq, H0)),
    (   min_of_heap(H0, Key-_, _),
        Key =< T
    ->  arg(1, S, M),
        (   Budget == 0
        ->  heap_size(H0, N),
            max_flushed_timers(Max),
            format(string(W), "timers set timers for ever? after ~D more fired, ~D still pending are not fired", [Max, N]),
            feed_warning(M, W),
            Last = Last0
        ;   get_from_heap(H0, _, ev(E, T1, Due), H),
            nb_setval(G, timers(Seq, H)),
            count_raised(M),
            run_one(S, '$fire'(E), T1, Due, Line),
            raised_events(S, Due, Line),
            (   Budget == inf -> Budget1 = inf ; Budget1 is Budget - 1 ),
            due_timers(S, G, T, Line, Budget1, Due, Last)
        )
    ;   Last = Last0
    ).

max_flushed_timers(10000).

%!  rule_updates(+Settings) is det.
%
%   Make the changes of the rules that the last input event's rules
%   recorded, in the engine of the batch Settings, which then follow the
%   new rules (see etalis_batch_settings:settings_refresh/1).

rule_updates(S) :-
    arg(1, S, M),
    (   M:'$rule_update'(_)
    ->  taken_rule_updates(M, Updates),
        apply_rule_updates(M, Updates),
        settings_refresh(S)             % the new rules may select (a P+ carries positions)
    ;   true
    ).

%!  admit(+Order0, +Settings, +Event, -Order) is semidet.
%
%   Process Event, ev(E, T1, T2, Line), now (in_order(LastTime)), or hold it in the reorder
%   buffer of an engine with a lateness (reorder(Lateness, MaxTime, Seq,
%   Heap)) and process the buffered events that can no longer be
%   preceded by a later arrival, oldest first.  Fails for an event that
%   comes too late.

admit(in_order(Last), S, ev(E, T1, T2, Line), in_order(T2)) :-
    T2 >= Last,
    run(S, E, T1, T2, Line).
admit(reorder(L, Max0, Seq0, H0), S, Ev, reorder(L, Max, Seq, H)) :-
    Ev = ev(_, _, T2, _),
    (   Max0 == none
    ->  Max = T2
    ;   T2 >= Max0 - L,
        Max is max(Max0, T2)
    ),
    Seq is Seq0 + 1,
    Key is float(T2),           % the standard order puts 5.0 before 5
    add_to_heap(H0, Key-Seq0, Ev, H1),
    Mark is Max - L,
    release(S, Mark, H1, H).

%!  release(+Settings, +Mark, +Heap0, -Heap) is det.
%
%   Process the events of the reorder buffer Heap0 up to time Mark,
%   oldest first; Heap holds the rest.

release(S, Mark, H0, H) :-
    (   min_of_heap(H0, Key-_, _),
        Key =< Mark
    ->  get_from_heap(H0, _, ev(E, T1, T2, Line), H1),
        run(S, E, T1, T2, Line),
        release(S, Mark, H1, H)
    ;   H = H0
    ).

%   run(+S, +E, +T1, +T2, +Line): process one event under the batch
%   settings S, within the inference limit, or throw
%   error(etalis_limit(Hit), _) (see etalis_limits:limited/6).

run(S, E, T1, T2, Line) :-
    due_timers(S, T2, Line, _),
    run_one(S, E, T1, T2, Line),
    raised_events(S, T2, Line).

run_one(S, E, T1, T2, Line) :-
    b_setval(etalis_line, Line),
    S = batch(M, Limit, Mode, _, _, _, _, _),
    event_goal(Mode, S, E, T1, T2, Goal),
    limited(Limit, Goal, M, E, Line, Hit),
    (   Hit == none
    ->  rule_updates(S)
    ;   throw(error(etalis_limit(Hit), _))
    ).

%   event_goal(+Mode, +S, +E, +T1, +T2, -Goal): Goal processes E over
%   [T1,T2] under the batch settings S, writing its detections.  Mode
%   (see etalis_batch_settings:batch_settings/4) is `plain` for an engine without provenance
%   or selection strategies, whose input events go straight to their
%   clauses (the engine's '$run'/4, see etalis_runtime:engine_create/1), else
%   `general`; a timer's event ('$fire'(E)) takes the general way in
%   either.

event_goal(plain, S, E0, T1, T2, M:'$run'(E, T1, T2, Format)) :-
    E0 \= '$fire'(_),
    !,
    S = batch(M, _, _, _, _, _, _, Format),
    (   E0 = '$provenance'(E, _)
    ->  true
    ;   E = E0
    ).
event_goal(_, S, E, T1, T2, etalis_process:run_event(S, E, T1, T2)).

%   run_event(+S, +E, +T1, +T2): process E over [T1,T2] under the batch
%   settings S the general way (see event_goal/6), writing its
%   detections.

run_event(S, E0, T1, T2) :-
    S = batch(M, _, _, Explain, Selecting, _, _, Format),
    advance_position(Selecting, M),
    (   E0 = '$fire'(E1)                % a timer's event: derived
    ->  How = derived
    ;   How = input,
        E1 = E0
    ),
    (   Explain == true
    ->  (   E1 = '$provenance'(E, Prov)
        ->  true
        ;   E = E1,
            Prov = [det(E, T1, T2)]
        ),
        E =.. List0,
        append(List0, [Prov], List),
        E2 =.. List,
        partitioned(How, Selecting, M, E2, T2),
        process_explained(How, Selecting, Format, M, E2, T1, T2)
    ;   E1 = '$provenance'(E, _)
    ->  partitioned(How, Selecting, M, E, T2),
        process(How, Selecting, Format, M, E, T1, T2)
    ;   partitioned(How, Selecting, M, E1, T2),
        process(How, Selecting, Format, M, E1, T1, T2)
    ).

%   partitioned(+How, +Selecting, +M, +E, +T2): an input event E (as the
%   rules see it) is noted in the partitions of the rules under
%   `strict(partition)` (see etalis_strategies:partition_input/4).

partitioned(input, true, M, E, T2) :- !,
    b_getval(etalis_position, P),
    partition_input(M, E, P, T2).
partitioned(_, _, _, _, _).

%   advance_position(+Selecting, +M): with rules under a selection
%   strategy, count the input event about to be processed (see
%   position_global/2), and drop the matches an event stopped at the
%   inference limit offered.  The position of the event being processed
%   is the global variable etalis_position, which the rules' code reads
%   (etalis_strategies:position/1).

advance_position(true, M) :- !,
    retractall(M:'$offer'(_, _, _, _, _)),
    position_global(M, G),
    nb_getval(G, P0),
    P is P0 + 1,
    nb_setval(G, P),
    b_setval(etalis_position, P).
advance_position(false, _).

process(How, Selecting, Format, M, E, T1, T2) :-
    forall(outcome(How, Selecting, M, E, T1, T2, Out), write_detection(Format, Out)).

process_explained(How, Selecting, Format, M, E, T1, T2) :-
    forall(outcome(How, Selecting, M, E, T1, T2, det(D, S, End)),
           (   D =.. List0,
               append(List, [Prov0], List0),
               D1 =.. List,
               flatten(Prov0, Prov),    % nested by the cumulative context
               write_detection(Format, det(D1, S, End), Prov)
           )).

%   outcome(+How, +Selecting, +M, +E, +T1, +T2, -Out) is nondet: Out is
%   each detection that the occurrence of E over [T1,T2] leads to, E an
%   `input` event or one `derived` by a timer (reported as a rule's
%   head is); with rules under a selection strategy (Selecting is
%   `true`), those of the matches it selects come last.

outcome(How, Selecting, M, E, T1, T2, Out) :-
    (   occurrence(How, M, E, T1, T2, Out)
    ;   Selecting == true,
        selection(M, Out)
    ).

occurrence(input, M, E, T1, T2, Out) :-
    M:'$on'(E, T1, T2, Out).
occurrence(derived, M, E, T1, T2, Out) :-
    M:'$derived'(E, T1, T2, Out).
