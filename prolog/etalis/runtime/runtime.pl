:- module(etalis_runtime,
          [ engine_create/1,            % -Engine
            engine_destroy/1,           % +Engine
            engine_start/4,             % +Engine, +StoreIndexes, +Lateness, +Limit
            engine_reset/1,             % +Engine
            engine_state/2,             % +Engine, -State
            engine_buffered/2,          % +Engine, -Count
            engine_due/2,               % +Engine, -Due
            engine_store/3,             % +Engine, +Index, -Store
            store_global/3,             % +Engine, +Index, -Name
            position_global/2,          % +Engine, -Name
            engine_restores/3,          % +Engine, +OldIndexes, +NewIndexes
            engine_pending/3            % +Engine, ?Index, -Count
          ]).
:- use_module(library(error)).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(heaps)).
:- use_module(library(assoc), [empty_assoc/1]).
:- use_module(store).
:- use_module(aggregates).
:- use_module('../compiler/strategies', [skip_global/2, partition_global/2]).
:- use_module(feed_state, [feed_start/1, feed_kinds/1, feed_global/3]).
:- use_module(rule_changes, [rule_update_builtins/1]).
:- reexport(timers, [timers_global/2, timer_set/5]).
:- reexport(goals, [user_goal/1, goal_error/3, trigger_asked/2, first_derivation/4]).

/** <module> The engines: their modules and their state

Each engine is a module of its own (its clauses, static rules and
reported events) plus a global variable of the same name that holds its
state, state(StoreIndexes, Order, Limit) (see engine_state/2), and one
global variable per goal store (one per side of each binary goal), see
store_global/3.  Two engines never see each other's rules, goals or
detections.

The compiled rules call the runtime as etalis_runtime: their goal
stores (engine_store/3), their timers (etalis_timers:timer_set/5) and
their own goals (etalis_goals), which this module exports for them.
Feeding an engine is etalis_feed's.
*/

%!  engine_create(-Engine) is det.
%
%   Engine is the name of a new, empty engine module.

engine_create(M) :-
    flag(etalis_engine, N, N+1),
    format(atom(M), 'etalis_engine_~d', [N]),
    set_module(M:class(temporary)),             % so engine_destroy/1 can free it
    dynamic([ M:'$on'/4, M:'$derived'/4, M:'$reported'/1, M:'$rule_goals'/2, M:'$compiled'/1,
              M:'$sandboxed'/1, M:'$explain'/0, M:'$prefix'/2, M:'$selecting'/0, M:'$offer'/5,
              M:'$seen'/3, M:'$repeating'/2, M:'$rule_change'/1, M:'$identity'/1, M:'$hidden_names'/1, M:'$initial'/3,
              M:'$added_static'/1 ]),
    assertz(M:('$derived'(E, T1, T2, O) :-
                  (   '$repeating'(E, Key)
                  ->  etalis_runtime:first_derivation(M, Key, T1, T2)
                  ;   true
                  ),
                  (   '$reported'(E),
                      O = det(E, T1, T2)
                  ;   '$on'(E, T1, T2, O)
                  ))),
    assertz(M:('$run'(E, T1, T2, Format) :-     % an input event, the plain way (see etalis_process)
                  '$on'(E, T1, T2, O),
                  etalis_protocol:write_detection(Format, O),
                  fail)),
    assertz(M:'$run'(_, _, _, _)),
    rule_update_builtins(M).

%!  engine_destroy(+Engine) is det.
%
%   Remove Engine's clauses and state.

engine_destroy(M) :-
    must_be(atom, M),
    (   nb_current(M, state(Indexes, _, _))
    ->  forall(( member(I, Indexes), store_global(M, I, Name), nb_current(Name, _) ),
               nb_delete(Name)),
        nb_delete(M)
    ;   true
    ),
    position_global(M, P),
    skip_global(M, Skip),
    partition_global(M, Partition),
    timers_global(M, Timers),
    feed_kinds(Kinds),
    findall(F, ( member(Kind, Kinds), feed_global(M, Kind, F) ), Feed),
    forall(( member(G, [P, Skip, Partition, Timers|Feed]), nb_current(G, _) ), nb_delete(G)),
    '$destroy_module'(M).

%!  engine_start(+Engine, +Indexes, +Lateness, +Limit) is det.
%
%   Give Engine fresh state with an empty goal store for each of Indexes.
%   Lateness is `none` (events must arrive in time order) or how many
%   seconds late an event may arrive and still be matched in order.
%   Limit is the most inferences that processing one event may take
%   (a positive integer), or `inf`.

engine_start(M, Indexes, Lateness, Limit) :-
    must_be(list(positive_integer), Indexes),
    (   Limit == inf
    ->  true
    ;   must_be(positive_integer, Limit)
    ),
    maplist(new_store(M), Indexes),
    retractall(M:'$seen'(_, _, _)),
    (   Lateness == none
    ->  Order = in_order(-inf)
    ;   must_be(between(0.0, inf), Lateness),
        empty_heap(Heap),
        Order = reorder(Lateness, none, 0, Heap)
    ),
    nb_setval(M, state(Indexes, Order, Limit)),
    position_global(M, P),
    nb_setval(P, -1),
    skip_global(M, Skip),
    empty_assoc(NoSkips),
    nb_setval(Skip, NoSkips),
    partition_global(M, Partition),
    nb_setval(Partition, NoSkips),
    timers_global(M, Timers),
    empty_heap(NoTimers),
    nb_setval(Timers, timers(0, NoTimers)),
    feed_start(M).

%!  position_global(+Engine, -Name) is det.
%
%   Name is the global variable that holds the
%   position of the last input event that Engine processed (for the
%   selection strategies, see etalis_strategies:position/1).

position_global(M, Name) :-
    atom_concat(M, '/position', Name).

%!  engine_reset(+Engine) is det.
%
%   Give Engine fresh state (empty goal stores, no event seen yet),
%   keeping its rules and its lateness.

engine_reset(M) :-
    engine_state(M, state(Indexes, Order, Limit)),
    (   Order = reorder(Lateness, _, _, _)
    ->  true
    ;   Lateness = none
    ),
    engine_start(M, Indexes, Lateness, Limit).

%!  engine_buffered(+Engine, -Count) is det.
%
%   Count events wait in Engine's reorder buffer.

engine_buffered(M, Count) :-
    engine_state(M, State),
    (   arg(2, State, reorder(_, _, _, H))
    ->  heap_size(H, Count)
    ;   Count = 0
    ).

%!  engine_due(+Engine, -Due) is det.
%
%   Due is the earliest time to which moving Engine's time on
%   (an advance, see etalis_feed:engine_feed/5) does something: the time of the first event its
%   reorder buffer holds back or the due time of its first pending
%   timer, whichever is earlier; `none` if it has neither.

engine_due(M, Due) :-
    engine_state(M, State),
    (   arg(2, State, reorder(_, _, _, H)),
        min_of_heap(H, Held-_, _)
    ->  true
    ;   Held = none
    ),
    timers_global(M, G),
    (   nb_current(G, timers(_, TH)),
        min_of_heap(TH, Timer-_, _)
    ->  true
    ;   Timer = none
    ),
    earlier(Held, Timer, Due).

earlier(none, T, T) :- !.
earlier(T, none, T) :- !.
earlier(T0, T1, T) :- T is min(T0, T1).

new_store(M, I) :-
    store_global(M, I, Name),
    store_new(Store),
    nb_setval(Name, Store).

%!  engine_restores(+Engine, +OldIndexes, +NewIndexes) is det.
%
%   Keep the goal stores of Engine that are in both, free those only in
%   OldIndexes, and make empty ones for those only in NewIndexes.

engine_restores(M, Old, New) :-
    forall(( member(I, Old), \+ memberchk(I, New) ),
           (   store_global(M, I, Name),
               nb_delete(Name)
           )),
    forall(( member(I, New), \+ memberchk(I, Old) ), new_store(M, I)),
    nb_getval(M, State),
    nb_setarg(1, State, New).

%!  store_global(+Engine, +Index, -Name) is det.
%
%   Name is the global variable that holds goal store Index of Engine.

store_global(M, I, Name) :-
    format(atom(Name), '~w/~d', [M, I]).

%!  engine_store(+Engine, +Index, -Store) is det.
%
%   Store is goal store Index of Engine.

engine_store(M, I, Store) :-
    store_global(M, I, Name),
    nb_getval(Name, Store).

%!  engine_pending(+Engine, ?Index, -Count) is nondet.
%
%   Goal store Index of Engine holds Count pending goals.

engine_pending(M, I, Count) :-
    nb_getval(M, state(Indexes, _, _)),
    member(I, Indexes),
    engine_store(M, I, Store),
    store_count(Store, Count).

%!  engine_state(+Engine, -State) is det.
%
%   State is the state of Engine, state(StoreIndexes, Order, Limit):
%   Order is in_order(LastTime), or reorder(Lateness, MaxTime, Seq, Heap)
%   for an engine with a lateness (see etalis_process:admit/4).
%
%   @error existence_error(etalis_engine, Engine) if it has none (it was
%   destroyed).

engine_state(M, State) :-
    (   nb_current(M, State)
    ->  true
    ;   existence_error(etalis_engine, M)
    ).
