:- module(etalis_statics,
          [ define_statics/4,           % +Module, +Dynamic, +Statics, -Refs
            static_clause/3             % +Static, -Clause, -Where
          ]).
:- use_module(library(apply)).
:- use_module(library(error)).
:- use_module('../reader/syntax', [etalis_error/3]).

/** <module> The static clauses of a rule file in a module

define_statics/4 declares a rule file's dynamic predicates and adds its
static clauses to a module: an engine's (etalis_load:load_statics/3) or
the sandbox's scratch module, in which they are proven safe
(etalis_sandbox:sandbox_check/2), the same way in both.
*/

%!  define_statics(+Module, +Dynamic, +Statics, -Refs) is det.
%
%   Declare each predicate of Dynamic (PI-Where pairs, from `:-
%   dynamic` directives and the facts the file's rules assert or
%   retract) dynamic in Module, then add the static items Statics
%   (static(Clause, Where)) to it, in order; Refs are their clause
%   references, to take them back with maplist(erase, Refs).  Both are
%   the file's own predicates, which its rules may change (recorded as
%   '$file_dynamic'(PI), for etalis_guard).
%
%   @error etalis_error(Message, Hint) at the Where of a predicate that
%   cannot be declared or a clause that cannot be added (e.g. one that
%   redefines a built-in predicate).

define_statics(M, Dynamic, Statics, Refs) :-
    must_be(atom, M),
    must_be(list, Dynamic),
    must_be(list, Statics),
    forall(member(PI-Where, Dynamic), declare_dynamic(M, PI, Where)),
    maplist(assert_static(M), Statics, Refs),
    forall(( member(Static, Statics),
             static_clause(Static, Clause, _),
             ( Clause = (Head :- _) -> true ; Head = Clause ),
             callable(Head),
             Head \= _:_ ),
           ( functor(Head, N, A),
             file_predicate(M, N/A) )).

%!  static_clause(+Static, -Clause, -Where) is det.
%
%   Clause is the clause that the static item Static (static(Clause0,
%   Where)) stands for: a grammar rule (`-->`) is translated by
%   dcg_translate_rule/2, which runs no code of the file (unlike
%   expand_term/2, which calls term_expansion hooks); any other clause
%   is taken as it is.

static_clause(static(Clause0, Where), Clause, Where) :-
    (   nonvar(Clause0),
        Clause0 = (_ --> _)
    ->  catch(dcg_translate_rule(Clause0, Clause), E, static_error(E, Where))
    ;   Clause = Clause0
    ).

%   declare_dynamic(+Module, +PI, +Where): the file's predicate PI
%   (Name/Arity) is dynamic in Module: it may have no clauses, and the
%   file's static rules may change it (recorded as '$file_dynamic'(PI),
%   for etalis_guard:facts_room/3).

declare_dynamic(M, PI, Where) :-
    catch(dynamic(M:PI), E, static_error(E, Where)),
    file_predicate(M, PI).

file_predicate(M, PI) :-
    (   current_predicate(M:'$file_dynamic'/1),
        M:'$file_dynamic'(PI)
    ->  true
    ;   assertz(M:'$file_dynamic'(PI))
    ).

%   assert_static(+Module, +Static, -Ref): add the clause of the static
%   item Static to Module.

assert_static(M, Static, Ref) :-
    static_clause(Static, Clause, Where),
    catch(assertz(M:Clause, Ref), E, static_error(E, Where)).

static_error(error(permission_error(modify, static_procedure, PI), _), Where) :- !,
    format(string(M), "cannot redefine the built-in predicate ~q", [PI]),
    etalis_error(M, "rename your predicate", Where).
static_error(E, Where) :-
    format(string(M), "cannot load this clause: ~q", [E]),
    etalis_error(M, "check the clause", Where).
