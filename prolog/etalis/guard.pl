:- module(etalis_guard,
          [ guard_engine/1              % +Engine
          ]).
:- use_module(library(apply)).
:- use_module(library(error)).
:- use_module(library(lists)).
:- use_module(protocol, [shallow/1]).

/** <module> Bounds on what one step of an untrusted rule may cost

The inference limit of an event bounds the steps a rule takes, but a
few built-in predicates do work without bound in one step, which
library(sandbox) allows:

  - writing a term (write/1, format/2, term_to_atom/2, ...) recurses in
    C once per level of nesting: a term 20,000 levels deep, which a rule
    builds in as many steps, overflows the C stack of the process, and
    since pyswip starts SWI-Prolog without its signal handling, that is
    a segmentation fault, not an error;
  - atoms live outside the Prolog stacks, so the stack limit does not
    bound them: atom_concat(A, A, B) doubles a text in one step, and 40
    such steps ask for a terabyte.

guard_engine/1 gives the module of an engine whose rules are untrusted
its own definitions of these predicates, which its where conditions,
actions and static rules call instead of the system's (also through
call/N): each checks its arguments and then calls the system's, in the
engine's module.  A term nested deeper than 1,000 levels, or a text of
more than 10,000,000 characters made in one step, is a resource error of
the goal: the where condition loses its occurrence with a warning, as
for any error.  library(sandbox) proves the rules safe against the
system's predicates, in a module without these definitions.
*/

%!  guard_engine(+Engine) is det.
%
%   Define the guarded versions of the writing and text-making built-in
%   predicates in the module Engine (see the module's documentation).

guard_engine(M) :-
    must_be(atom, M),
    forall(guarded(Head, Check),
           ( redefine_system_predicate(M:Head),
             assertz(M:(Head :- etalis_guard:checked(M, Head, Check))) )).

%   guarded(?Head, ?Check): Head is guarded by Check: depth(Terms), the
%   Terms are not nested too deep to write; text(Texts), the Texts
%   (atomic or lists of atomic) together are not too long.

guarded(write(X), depth([X])).
guarded(print(X), depth([X])).
guarded(writeq(X), depth([X])).
guarded(write_canonical(X), depth([X])).
guarded(writeln(X), depth([X])).
guarded(write_term(X, O), depth([X, O])).
guarded(print_message(K, X), depth([K, X])).
guarded(format(F), depth([F])).
guarded(format(F, A), depth([F, A])).
guarded(format(S, F, A), both([S, F, A], [F, A])).
guarded(term_to_atom(T, A), depth([T, A])).
guarded(term_string(T, S), depth([T, S])).
guarded(term_string(T, S, O), depth([T, S, O])).
guarded(atom_concat(A, B, C), text([A, B, C])).
guarded(atomic_list_concat(L, R), text([L, R])).
guarded(atomic_list_concat(L, S, R), text([L, S, R])).

%   checked(+Engine, +Goal, +Check): Goal, called as in Engine, once
%   Check holds.
%
%   @error resource_error(Bound) for an argument over a bound.

checked(M, Goal, Check) :-
    check(Check, Goal),
    @(system:Goal, M).

check(depth(Terms), Goal) :-
    (   shallow(Terms)
    ->  true
    ;   bound_error(Goal, 'a term nested deeper than 1,000 levels')
    ).
check(text(Texts), Goal) :-
    foldl(text_length, Texts, 0, Length),
    (   Length =< 10_000_000
    ->  true
    ;   bound_error(Goal, 'a text of more than 10,000,000 characters')
    ).
check(both(Terms, Texts), Goal) :-
    check(depth(Terms), Goal),
    check(text(Texts), Goal).

%   text_length(+Text, +Length0, -Length): Length is Length0 plus the
%   characters of the atomic parts of Text (an atomic or a list).

text_length(Text, L0, L) :-
    (   atomic(Text)
    ->  atom_length(Text, N),
        L is L0 + N
    ;   is_list(Text)
    ->  foldl(text_length, Text, L0, L)
    ;   L = L0
    ).

bound_error(Goal, Bound) :-
    functor(Goal, Name, Arity),
    throw(error(resource_error(Bound), context(Name/Arity, _))).
