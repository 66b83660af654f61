:- module(etalis_guard,
          [ guard_engine/1,             % +Engine
            change_goal/2               % ?Goal, ?Fact
          ]).
:- use_module(library(aggregate)).
:- use_module(library(apply)).
:- use_module(library(error)).
:- use_module(library(lists)).
:- use_module(library(backcomp), [concat/3, concat_atom/2, concat_atom/3, sformat/2, sformat/3, write_ln/1]).
:- use_module('../runtime/protocol', [shallow/1, calling_message/1]).

/** <module> Bounds on what one step of an untrusted rule may cost

The inference limit of an event bounds the steps a rule takes, but a
few built-in predicates do work without bound in one step, which
library(sandbox) allows:

  - writing a term (write/1, format/2, term_to_atom/2, ...) recurses in
    C once per level of nesting: a term 20,000 levels deep, which a rule
    builds in as many steps, overflows the C stack of the process, and
    since pyswip starts SWI-Prolog without its signal handling, that is
    a segmentation fault, not an error;
  - atoms, and the buffer of a text being written to an atom or string,
    live outside the Prolog stacks, so the stack limit does not bound
    them: atom_concat(A, A, B) or term_to_atom(f(A, A), B) doubles a
    text in one step, and 40 such steps ask for a terabyte; so does
    writing the same text twice inside with_output_to/2, and making an
    atom of a string of a hundred million characters (built on the
    stacks) forty times (malloc fails, and SWI-Prolog aborts the
    process).

guard_engine/1 gives the module of an engine whose rules are untrusted
its own definitions of these predicates (and of library(backcomp)'s
concat/3, concat_atom/2,3, sformat/2,3 and write_ln/1, which call the
system's from their own module), which its where conditions, actions and static rules call
instead of the system's (also through call/N): each checks its
arguments and then calls the system's, in the engine's module.  A term
nested deeper than 1,000 levels, or a text of more than 10,000,000
characters made in one step (the characters of the atomic parts of its
arguments, at any depth, and of the functors above them), or written to
an output that is a text being made (with_output_to/2, format/3's
`~@`) once that holds more than 10,000,000 characters, is a resource
error of the goal: the where condition loses its occurrence with a
warning, as for any error.

Its assert and retract change only facts of the rule file's own
predicates (see own_predicate/2), within 100,000,000 bytes
(facts_room/3): the sandbox lets a rule assert or retract a fact known
only when it runs (`R =.. [Name, Points], asserta(R)`), and this is
where such a fact is checked; a clause with a body, a module-qualified
fact or one of a built-in, library, hook or engine predicate is a
permission error of the goal.  library(sandbox) proves the rules safe
against the system's predicates, in a module without these definitions.
*/

%!  guard_engine(+Engine) is det.
%
%   Define the guarded versions of the writing and text-making built-in
%   predicates in the module Engine (see the module's documentation).

guard_engine(M) :-
    must_be(atom, M),
    forall(guarded(Head, Check),
           ( predicate_property(system:Head, implementation_module(Module)),
             (   predicate_property(system:Head, built_in)
             ->  redefine_system_predicate(M:Head)
             ;   true
             ),
             assertz(M:(Head :- etalis_guard:checked(M, Module:Head, Check))) )).

%   guarded(?Head, ?Check): Head is guarded by Check: depth(Terms), the
%   Terms are not nested too deep to write; text(Texts), the Texts
%   together are not too long (see text_length/3); out(Terms), not too
%   deep, and there is room for their text in the current output, if
%   that is a text being made (see output_room/1); both(Terms, Texts),
%   depth and text; sink(Sink, Terms), out or both as format/3 writes to
%   the current output or makes a text; codes(Atom, List), the atom made
%   of a list of codes or characters is not too long; facts(Clause),
%   Clause is a fact of the file's own predicate and there is room for
%   it among the file's dynamic facts (see facts_room/3); own(Fact),
%   Fact is one of the file's own predicate; message(Kind, Message),
%   Message is not nested too deep and calls no goal as it is printed
%   (calling_message/1).

guarded(write(X), out([X])).
guarded(print(X), out([X])).
guarded(writeq(X), out([X])).
guarded(write_canonical(X), out([X])).
guarded(writeln(X), out([X])).
guarded(write_ln(X), out([X])).
guarded(write_term(X, O), out([X, O])).
guarded(tab(N), out([N])).
guarded(print_message(K, X), message(K, X)).
guarded(format(F), out([F])).
guarded(format(F, A), out([F, A])).
guarded(format(S, F, A), sink(S, [F, A])).
guarded(term_to_atom(T, A), both([T, A], [T, A])).
guarded(term_string(T, S), both([T, S], [T, S])).
guarded(term_string(T, S, O), both([T, S, O], [T, S])).
guarded(atom_concat(A, B, C), text([A, B, C])).
guarded(atomic_concat(A, B, C), text([A, B, C])).
guarded(concat(A, B, C), text([A, B, C])).
guarded(atomic_list_concat(L, R), text([L, R])).
guarded(atomic_list_concat(L, S, R), text([L, S, R])).
guarded(atom_string(A, S), text([A, S])).
guarded(atom_codes(A, L), codes(A, L)).
guarded(atom_chars(A, L), codes(A, L)).
guarded(string_to_atom(S, A), text([S, A])).
guarded(upcase_atom(T, A), text([T, A])).
guarded(downcase_atom(T, A), text([T, A])).
guarded(normalize_space(O, I), text([O, I])).
guarded(concat_atom(L, R), text([L, R])).
guarded(concat_atom(L, S, R), text([L, S, R])).
guarded(sformat(S, F), both([F], [S, F])).
guarded(sformat(S, F, A), both([F, A], [S, F, A])).
guarded(assert(C), facts(C)).
guarded(asserta(C), facts(C)).
guarded(assertz(C), facts(C)).
guarded(retract(C), own(C)).
guarded(retractall(H), own(H)).

%!  change_goal(?Goal, ?Fact) is semidet.
%
%   Goal asserts or retracts Fact: assert/1, asserta/1, assertz/1,
%   retract/1 or retractall/1.

change_goal(assert(F), F).
change_goal(asserta(F), F).
change_goal(assertz(F), F).
change_goal(retract(F), F).
change_goal(retractall(F), F).

%   checked(+Engine, +Goal, +Check): Goal, called as in Engine, once
%   Check holds.
%
%   @error resource_error(Bound) for an argument over a bound.

checked(M, Goal, Check) :-
    (   Check = facts(Clause)
    ->  own_fact(M, Clause, Goal),
        facts_room(M, Clause, Goal)
    ;   Check = own(Fact)
    ->  own_fact(M, Fact, Goal)
    ;   check(Check, Goal)
    ),
    @(Goal, M).

%   own_fact(+Engine, +Fact, +Goal): Fact, which Goal asserts or
%   retracts, is a fact of the rule file's own predicate in Engine.
%
%   @error instantiation_error, type_error(callable, Fact) or
%   permission_error(modify, predicate, PI) otherwise.

own_fact(M, Fact, _:G) :-
    must_be(callable, Fact),
    (   Fact = (Head :- _) -> true
    ;   Fact = _:Head -> true
    ;   Head = Fact
    ),
    (   Head \== Fact
    ->  Why = 'rules may assert and retract facts only, in their own module'
    ;   functor(Fact, N, A),
        own_predicate(M, N/A)
    ->  true
    ;   Why = 'not a predicate of the rule file'
    ),
    (   var(Why)
    ->  true
    ;   callable(Head)
    ->  functor(Head, HN, HA),
        functor(G, Name, Arity),
        throw(error(permission_error(modify, predicate, HN/HA), context(Name/Arity, Why)))
    ;   type_error(callable, Head)
    ).

%   own_predicate(+Engine, +PI): PI is the rule file's own predicate in
%   Engine: declared dynamic or defined by the file (see
%   etalis_statics:define_statics/4), or one no module gives the engine
%   (neither built-in, library, hook nor the engine's own), which is
%   then declared the file's.

own_predicate(M, PI) :-
    current_predicate(M:'$file_dynamic'/1),
    M:'$file_dynamic'(PI),
    !.
own_predicate(M, N/A) :-
    \+ sub_atom(N, 0, _, _, $),
    functor(Head, N, A),
    \+ predicate_property(M:Head, visible),
    \+ ( member(Hooks, [user, system, prolog]),
          predicate_property(Hooks:Head, multifile) ),
    dynamic(M:N/A),
    assertz(M:'$file_dynamic'(N/A)).

%   facts_room(+Engine, +Clause, +Goal): Clause, added by Goal, leaves
%   the dynamic predicates that the rule file declares in Engine within
%   100,000,000 bytes: a fact is one step, and the 10,000,000 steps of an
%   event would add a gigabyte, outside the stacks.  The bytes added are
%   counted in a flag of the engine (assert is one step: the size of a
%   predicate takes a step per clause); only when the count would pass
%   the bound is it set to the size of the predicates now (facts may
%   have been retracted), and then the bound holds or the goal fails.

facts_room(M, Clause, Goal) :-
    term_size(Clause, Cells),
    Bytes is 8 * Cells + 100,
    flag(etalis_guard_facts(M), Total, Total + Bytes),
    (   Total + Bytes =< 100_000_000
    ->  true
    ;   fact_bytes(M, Exact),
        (   Exact + Bytes =< 100_000_000
        ->  flag(etalis_guard_facts(M), _, Exact + Bytes)
        ;   flag(etalis_guard_facts(M), _, Exact),
            bound_error(Goal, 'dynamic facts of more than 100,000,000 bytes')
        )
    ).

%   fact_bytes(+Engine, -Bytes): the memory the clauses of the dynamic
%   predicates the rule file declares take (see
%   etalis_statics:declare_dynamic/3).

fact_bytes(M, Bytes) :-
    aggregate_all(sum(B),
                  ( current_predicate(M:'$file_dynamic'/1),
                    M:'$file_dynamic'(Name/Arity),
                    functor(Head, Name, Arity),
                    predicate_property(M:Head, size(B)) ),
                  Bytes).

check(depth(Terms), Goal) :-
    (   shallow(Terms)
    ->  true
    ;   bound_error(Goal, 'a term nested deeper than 1,000 levels')
    ).
check(text(Texts), Goal) :-
    text_length(Texts, Length),
    (   Length =< 10_000_000
    ->  true
    ;   bound_error(Goal, 'a text of more than 10,000,000 characters')
    ).
check(both(Terms, Texts), Goal) :-
    check(depth(Terms), Goal),
    check(text(Texts), Goal).
check(out(Terms), Goal) :-
    check(depth(Terms), Goal),
    (   output_room(Terms)
    ->  true
    ;   bound_error(Goal, 'a text of more than 10,000,000 characters')
    ).
check(message(Kind, Message), Goal) :-
    check(depth([Kind, Message]), Goal),
    (   calling_message(Message)
    ->  Goal = _:G,
        functor(G, Name, Arity),
        throw(error(permission_error(call, sandboxed, format/2),
                    context(Name/Arity, 'a format with ~@ calls a goal')))
    ;   true
    ).
check(codes(Atom, List), Goal) :-
    (   atom(Atom)
    ->  true                            % the atom is there: the list is on the stacks
    ;   is_list(List),
        length(List, Length),
        Length > 10_000_000
    ->  bound_error(Goal, 'a text of more than 10,000,000 characters')
    ;   true
    ).
check(sink(Sink, Terms), Goal) :-
    (   Sink == current_output
    ->  check(out(Terms), Goal)
    ;   check(both(Terms, Terms), Goal)
    ).

%   output_room(+Terms): Terms, written, fit in the current output: it
%   is a file (standard error, where the engine puts what a rule
%   writes), or a text being made (a memory stream, without a file
%   number) of at most 10,000,000 characters with them.

output_room(Terms) :-
    current_output(S),
    (   stream_property(S, file_no(_))
    ->  true
    ;   character_count(S, Count),
        text_length(Terms, Length),
        Count + Length =< 10_000_000
    ).

%   text_length(+Texts, -Length): Length is a bound of the characters
%   that writing Texts (acyclic, see check/2) would make: those of its
%   atomic parts (a number as written, but a small integer, such as a
%   character code, as one) and of the functors of its compound parts,
%   with a bracket or comma for each argument.

text_length(Texts, Length) :-
    (   acyclic_term(Texts)
    ->  text_length(Texts, 0, Length)
    ;   Length = 0                      % not written: refused by the depth check
    ).

text_length(T, L0, L) :-
    (   var(T)
    ->  L is L0 + 1
    ;   integer(T), T >= 0, T < 0x110000
    ->  L is L0 + 1
    ;   atomic(T)
    ->  atom_length(T, N),
        L is L0 + N
    ;   compound_name_arguments(T, Name, Args),
        atom_length(Name, N),
        length(Args, A),
        L1 is L0 + N + A,
        foldl(text_length, Args, L1, L)
    ).

bound_error(_:Goal, Bound) :-
    functor(Goal, Name, Arity),
    throw(error(resource_error(Bound), context(Name/Arity, _))).
