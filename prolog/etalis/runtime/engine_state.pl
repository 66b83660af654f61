:- module(etalis_engine_state,
          [ engine_state_get/2,         % +Engine, -State
            engine_state_check/3,       % +Engine, +Compiled, +State
            engine_state_put/2          % +Engine, +State
          ]).
:- use_module(library(apply)).
:- use_module(library(error)).
:- use_module(library(lists)).
:- use_module(runtime, [store_global/3, position_global/2, timers_global/2]).
:- use_module('../compiler/operators', [store_index/3]).
:- use_module('../compiler/strategies', [skip_global/2, partition_global/2]).
:- use_module('../compiler/statics', [static_clause/3]).

/** <module> The state of an engine, gathered by role

What decides an engine's later detections lies in global variables
named after its module (see etalis_runtime), in dynamic facts of its
module and in a flag.  engine_state_get/2 gathers it into one term,
keyed by what each part is, not by where it lives, so that it can be
written out and put back into an engine compiled from the same rules
(see etalis_snapshot):

  - `clock`: the order of the input, in_order(LastTime) or, with a
    lateness, reorder(Lateness, MaxTime, Seq, Buffer);
  - `stores`: store(Id, Side, Store) for each goal store (the pending
    goals of every policy and strategy, aggregate windows, Kleene+
    runs and chains), whatever terms the stores are;
  - `position`: the position of the last input event (the selection
    strategies count events);
  - `skips`, `partitions`: what the skip strategies keep of the matches
    already offered, and what `strict(partition)` has seen of each
    partition (see etalis_strategies);
  - `timers`: the timers not due yet, timers(Seq, Heap);
  - `derived`: seen(Event, T1, T2) of the occurrences already derived
    on a cycle (see etalis_runtime:first_derivation/4);
  - `raised`, `rule_updates`, `offers`: the events raised with event/1,
    the rule changes and the selectors' offers that wait for the end of
    the input event being processed (none between two requests);
  - `prefixes`: the Prefix-Namespace pairs of the events' names;
  - `facts`: fact(Name/Arity, Clauses) for each of the rule file's own
    predicates, which its rules may change ('$file_dynamic'/1, see
    etalis_statics), and
    `facts_bytes`, what etalis_guard counted of them;
  - `rule_changes`: the changes of the rules made while running (see
    etalis_engine_load:add_items/3), in order, which the state holds but does not
    put back: they are made again by the caller; and `hidden_names`,
    how far the engine has numbered its hidden events (see
    etalis_hidden_names), so that rules added later are named as
    they would have been.
*/

%!  engine_state_get(+Engine, -State) is det.
%
%   State is the state of Engine, a dict of tag `engine_state` with the
%   roles of the module's documentation.

engine_state_get(M, engine_state{clock: Order, stores: Stores, position: Position, skips: Skips,
                                 partitions: Partitions, timers: Timers,
                                 derived: Derived, raised: Raised, rule_updates: Updates,
                                 offers: Offers, prefixes: Prefixes, facts: Facts,
                                 facts_bytes: Bytes, rule_changes: Changes, hidden_names: Names}) :-
    must_be(atom, M),
    nb_getval(M, state(Indexes, Order, _)),
    maplist(store_role(M), Indexes, Stores),
    position_global(M, P),
    nb_getval(P, Position),
    skip_global(M, SG),
    nb_getval(SG, Skips),
    partition_global(M, PG),
    nb_getval(PG, Partitions),
    timers_global(M, T),
    nb_getval(T, Timers),
    findall(seen(E, T1, T2), M:'$seen'(E, T1, T2), Derived),
    findall(E, M:'$raised'(E), Raised),
    findall(U, M:'$rule_update'(U), Updates),
    findall(offer(L, S, Set, H, In), M:'$offer'(L, S, Set, H, In), Offers),
    findall(Pre-NS, M:'$prefix'(Pre, NS), Prefixes),
    findall(fact(PI, Clauses), ( file_dynamic(M, PI), dynamic_clauses(M, PI, Clauses) ), Facts),
    flag(etalis_guard_facts(M), Bytes, Bytes),
    findall(C, M:'$rule_change'(C), Changes),
    M:'$hidden_names'(Names).

%   store_role(+M, +I, -Store): goal store I of engine M by its role,
%   the store itself (not a copy, as findall/3 would make: it can hold
%   millions of goals).

store_role(M, I, store(Id, Side, Store)) :-
    store_index(Id, Side, I),
    store_global(M, I, G),
    nb_getval(G, Store).

file_dynamic(M, PI) :-
    current_predicate(M:'$file_dynamic'/1),
    M:'$file_dynamic'(PI).

dynamic_clauses(M, Name/Arity, Clauses) :-
    functor(H, Name, Arity),
    findall((H :- B), clause(M:H, B), Clauses).

%!  engine_state_check(+Engine, +Compiled, +State) is det.
%
%   State can be put into Engine once its rules are Compiled (`now`: its
%   rules now; else those a change of its rules makes): it has every role, with
%   a value of the right kind, a goal store for each goal of Compiled
%   and no other, and facts only for the dynamic predicates of the
%   rules.  In an engine whose rules are untrusted, a clause with a body
%   must be one of the rule file's own (the rules themselves can only
%   assert facts).
%
%   @error etalis_snapshot_error(Message) if not.

engine_state_check(M, Compiled, State) :-
    (   is_dict(State, engine_state)
    ->  true
    ;   refuse("it holds no engine state")
    ),
    forall(role(Role, Type),
           (   get_dict(Role, State, Value),
               is_of_type(Type, Value)
           ->  true
           ;   format(string(Msg), "its ~w is missing or not ~w", [Role, Type]),
               refuse(Msg)
           )),
    nb_getval(M, state(_, Order, _)),
    clock_kind(Order, Kind),
    (   clock_kind(State.clock, Kind)
    ->  true
    ;   refuse("its clock is not of this engine's kind (a lateness, or none, of the same seconds)")
    ),
    (   Compiled == now
    ->  nb_getval(M, state(Own0, _, _)),
        Declared = []
    ;   Compiled = compiled(program(Nodes, _), _, _, Settings),
        findall(I, ( member(node(Id, _, _, _, _, _), Nodes), store_index(Id, _, I) ), Own0),
        Declared = Settings.directives
    ),
    findall(I, ( member(store(Id, Side, _), State.stores), store_index(Id, Side, I) ), Is0),
    msort(Is0, Is),
    msort(Own0, Own),
    (   Is == Own
    ->  true
    ;   refuse("its goal stores are not those of this engine's goals")
    ),
    forall(member(fact(PI, Clauses), State.facts),
           (   (   file_dynamic(M, PI)
               ;   memberchk(dynamic(PI, _), Declared)
               )
           ->  maplist(restorable_clause(M, PI), Clauses)
           ;   format(string(Msg), "it holds facts of ~q, which the rules do not declare dynamic", [PI]),
               refuse(Msg)
           )).

role(clock, compound).
role(stores, list(compound)).
role(position, integer).
role(skips, ground).
role(partitions, ground).
role(timers, compound).
role(derived, list(compound)).
role(raised, list).
role(rule_updates, list).
role(offers, list(compound)).
role(prefixes, list(pair)).
role(facts, list(compound)).
role(facts_bytes, integer).
role(rule_changes, list).
role(hidden_names, list(pair)).

clock_kind(in_order(_), in_order).
clock_kind(reorder(L, _, _, _), reorder(L1)) :-
    L1 is float(L).

%   restorable_clause(+M, +PI, +Clause): Clause may be put back among
%   the clauses of the file's dynamic predicate PI.

restorable_clause(M, Name/Arity, Clause) :-
    (   nonvar(Clause),
        Clause = (H :- B),
        callable(H),
        functor(H, Name, Arity)
    ->  true
    ;   format(string(Msg), "it holds ~q among the clauses of ~q", [Clause, Name/Arity]),
        refuse(Msg)
    ),
    (   B == true
    ->  true
    ;   \+ M:'$sandboxed'(_)
    ->  true
    ;   M:'$sandboxed'(Statics),
        member(Static, Statics),
        static_clause(Static, Own, _),
        (   Own = (_ :- _) -> Own1 = Own ; Own1 = (Own :- true) ),
        Own1 =@= Clause
    ->  true
    ;   format(string(Msg), "it holds a rule of ~q that the rule file does not have (its rules assert only facts)",
               [Name/Arity]),
        refuse(Msg)
    ).

refuse(Msg) :-
    throw(error(etalis_snapshot_error(Msg), _)).

%!  engine_state_put(+Engine, +State) is det.
%
%   Engine's state becomes State, which engine_state_check/2 accepted:
%   all but its `rule_changes`, which must have been made already.

engine_state_put(M, State) :-
    nb_getval(M, EngineState),
    nb_setarg(2, EngineState, State.clock),
    forall(member(store(Id, Side, Store), State.stores),
           (   store_index(Id, Side, I),
               store_global(M, I, G),
               nb_setval(G, Store)
           )),
    position_global(M, P),
    nb_setval(P, State.position),
    skip_global(M, SG),
    nb_setval(SG, State.skips),
    partition_global(M, PG),
    nb_setval(PG, State.partitions),
    timers_global(M, T),
    nb_setval(T, State.timers),
    retractall(M:'$seen'(_, _, _)),
    forall(member(seen(E, T1, T2), State.derived), assertz(M:'$seen'(E, T1, T2))),
    retractall(M:'$raised'(_)),
    forall(member(E, State.raised), assertz(M:'$raised'(E))),
    retractall(M:'$rule_update'(_)),
    forall(member(U, State.rule_updates), assertz(M:'$rule_update'(U))),
    retractall(M:'$offer'(_, _, _, _, _)),
    forall(member(offer(L, S, Set, H, In), State.offers), assertz(M:'$offer'(L, S, Set, H, In))),
    retractall(M:'$prefix'(_, _)),
    forall(member(Pre-NS, State.prefixes), assertz(M:'$prefix'(Pre, NS))),
    forall(file_dynamic(M, Name/Arity),
           (   functor(H, Name, Arity),
               retractall(M:H)
           )),
    forall(( member(fact(_, Clauses), State.facts), member(C, Clauses) ), assertz(M:C)),
    flag(etalis_guard_facts(M), _, State.facts_bytes),
    retractall(M:'$hidden_names'(_)),
    assertz(M:'$hidden_names'(State.hidden_names)).
