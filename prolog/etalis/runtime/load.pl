:- module(etalis_load,
          [ load_compiled/2,            % +Engine, +Compiled
            reload_compiled/3,          % +Engine, +Compiled0, +Compiled
            load_statics/3              % +Engine, +Compiled, -Refs
          ]).
:- use_module(library(lists)).
:- use_module(library(assoc)).
:- use_module(library(terms), [mapsubterms/3]).
:- use_module('../compiler/operators', [store_index/3]).
:- use_module('../compiler/compile', [selecting_program/1, map_derived/3, list_to_assoc_set/2]).
:- use_module('../compiler/statics', [define_statics/4]).

/** <module> Loading compiled rules into an engine

load_compiled/2 puts the clauses and static rules of a compiled rule
set (see etalis_compile:compile_items/3) into an engine's module and
gives it fresh state; reload_compiled/3 replaces them, keeping the
pending goals that the old and new rules share.
*/

%!  load_compiled(+Engine, +Compiled) is det.
%
%   Load the clauses and static rules of Compiled into Engine and give
%   it fresh state.
%
%   @error etalis_error(Message, Hint) for a static clause that cannot
%   be defined (e.g. it redefines a built-in predicate).

load_compiled(M, Compiled) :-
    load_statics(M, Compiled, _),
    load_clauses(M, Compiled),
    Compiled = compiled(program(Nodes, _), _, _, Settings),
    stores_of(Nodes, Stores),
    etalis_runtime:engine_start(M, Stores, Settings.lateness, Settings.inference_limit),
    (   get_dict(explain, Settings, true)
    ->  assertz(M:'$explain')
    ;   true
    ),
    selecting(M, Compiled),
    assertz(M:'$compiled'(Compiled)).

%   selecting(+M, +Compiled): mark an engine with rules under a selector,
%   whose input events are counted and whose matches are selected (see
%   etalis_strategies).

selecting(M, Compiled) :-
    retractall(M:'$selecting'),
    (   selecting_program(Compiled)
    ->  assertz(M:'$selecting')
    ;   true
    ).

%!  reload_compiled(+Engine, +Compiled0, +Compiled) is det.
%
%   Replace Engine's rules Compiled0 by Compiled (see compile_more/3 and
%   compile_without/3), keeping the pending goals of the goals they
%   share: stores are made for new goals and freed for dropped ones.
%   The static rules of Compiled must be loaded first (load_statics/3).

reload_compiled(M, Compiled0, Compiled) :-
    Compiled = compiled(program(Nodes, _), _, _, _),
    Compiled0 = compiled(program(Nodes0, _), _, _, _),
    retractall(M:'$reported'(_)),
    retractall(M:'$rule_goals'(_, _)),
    abolish(M:'$on'/4),
    dynamic(M:'$on'/4),
    load_clauses(M, Compiled),
    stores_of(Nodes0, Old),
    stores_of(Nodes, New),
    etalis_runtime:engine_restores(M, Old, New),
    selecting(M, Compiled),
    retractall(M:'$compiled'(_)),
    assertz(M:'$compiled'(Compiled)).

stores_of(Nodes, Indexes) :-
    findall(I, ( member(node(Id, _, _, _, _, _), Nodes), store_index(Id, _, I) ), Indexes).

load_clauses(M, compiled(_, Clauses, _, Settings)) :-
    list_to_assoc_set(Settings.printed, Printed),
    (   get_dict(asked, Settings, Asked0) -> true ; Asked0 = [] ),
    list_to_assoc_set(Asked0, Asked),
    (   get_dict(repeating, Settings, Repeating0) -> true ; Repeating0 = [] ),
    list_to_assoc_set(Repeating0, Repeating),
    handled_events(Clauses, Handled),
    Derivation = derivation(M, Printed-Asked, Repeating, Settings.explain, Handled),
    retractall(M:'$repeating'(_, _)),
    forall(member(N/A, Repeating0),
           (   functor(T, N, A),
               occurrence_key(Settings.explain, T, Key),
               assertz(M:'$repeating'(T, Key))
           )),
    forall(member(C0, Clauses),
           (   bind_engine(C0, M, C1),
               direct_derivation(C1, Derivation, C),
               assertz(M:C)
           )),
    (   predicate_property(M:'$on'(_, _, _, _), number_of_clauses(N)), N > 0
    ->  compile_predicates([M:'$on'/4])
    ;   true
    ),
    forall(member(Name-Ids, Settings.rule_goals), assertz(M:'$rule_goals'(Name, Ids))).

%   bind_engine(+Clause0, +Engine, -Clause): Clause0 of the engine
%   '$engine' made a clause of Engine, its store goals the engine's
%   global variables.

bind_engine(C0, M, C) :-
    copy_term(C0, C1),
    mapsubterms(engine_term(M), C1, C).

engine_term(M, '$engine', M).
engine_term(M, etalis_runtime:engine_store('$engine', I, S), nb_getval(Name, S)) :-
    etalis_runtime:store_global(M, I, Name).

%   direct_derivation(+Clause, +Derivation, -Clause1)
%
%   Replace '$derived'(E, T1, T2, O) in a generated clause by what it
%   does for E: report it if it is printed, and pass it on as an event;
%   for an event on a cycle that can repeat an occurrence, only if it is
%   not one derived already.  Derivation is derivation(Engine,
%   Printed-Asked, Repeating, Explain): Printed, Asked (reported when
%   print_trigger/1 succeeds for the occurrence) and Repeating are sets of Name/Arity
%   (assocs), and with Explain the last argument of an event is its
%   provenance, which does not tell occurrences apart.

direct_derivation((H :- B0), Derivation, (H :- B)) :- !,
    map_derived(direct_goal(Derivation), B0, B).
direct_derivation(C, _, C).

direct_goal(derivation(M, Printed-Asked, Repeating, Explain, Handled), '$derived'(E, T1, T2, O), Goal) :-
    functor(E, N, A),
    occurrence_key(Explain, E, Key),
    (   handled(Handled, N/A)
    ->  On = '$on'(E, T1, T2, O)
    ;   On = fail
    ),
    (   get_assoc(N/A, Printed, _)
    ->  disjunction(O = det(E, T1, T2), On, Goal0)
    ;   get_assoc(N/A, Asked, _)
    ->  disjunction(( etalis_runtime:trigger_asked(M, Key), O = det(E, T1, T2) ), On, Goal0)
    ;   Goal0 = On
    ),
    (   get_assoc(N/A, Repeating, _)
    ->  Goal = ( etalis_runtime:first_derivation(M, Key, T1, T2), Goal0 )
    ;   Goal = Goal0
    ).

%   handled_events(+Clauses, -Handled): Handled is `all` if a '$on'/4
%   clause of Clauses takes any event, else the set (an assoc) of the
%   Name/Arity of the events they take.  An event that no clause takes
%   is not passed on: '$on'/4 is compiled once all its clauses are
%   loaded (a change of the rules reloads them all, see
%   reload_compiled/3), so it could only fail.

handled_events(Clauses, Handled) :-
    (   member(('$on'(E, _, _, _) :- _), Clauses),
        var(E)
    ->  Handled = all
    ;   findall(N/A, ( member(C, Clauses), clause_head(C, '$on'(E, _, _, _)), functor(E, N, A) ), Keys),
        list_to_assoc_set(Keys, Handled)
    ).

clause_head((H :- _), H) :- !.
clause_head(H, H).

handled(all, _) :- !.
handled(Handled, Key) :-
    get_assoc(Key, Handled, _).

disjunction(A, fail, A) :- !.
disjunction(A, B, (A ; B)).

occurrence_key(true, E, Key) :- !,
    E =.. [N|Args],
    append(KeyArgs, [_], Args),
    Key =.. [N|KeyArgs].
occurrence_key(_, E, E).

%!  load_statics(+Engine, +Compiled, -Refs) is det.
%
%   Add the static rules of Compiled to Engine; Refs are their clause
%   references, to take them back with maplist(erase, Refs).  The
%   predicates the file declares dynamic, and those whose facts its
%   rules change that no module gives the engine, are dynamic.

load_statics(M, compiled(_, _, Statics, Settings), Refs) :-
    findall(PI-Where, member(dynamic(PI, Where), Settings.directives), Declared),
    findall(N/A-Where,
            ( member(changed(N/A, Where), Settings.directives),
              functor(Head, N, A),
              \+ predicate_property(M:Head, visible) ),
            Changed),
    append(Declared, Changed, Dynamic),
    define_statics(M, Dynamic, Statics, Refs).
