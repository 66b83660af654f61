:- module(etalis_unfold,
          [ unfold_links/2,             % +Clauses0, -Clauses
            map_derived/3               % :Rewrite, +Body0, -Body
          ]).
:- use_module(library(apply), [exclude/3, foldl/4, maplist/3]).
:- use_module(library(lists), [clumped/2, member/2]).
:- use_module(library(assoc), [assoc_to_keys/2, empty_assoc/1, get_assoc/3, list_to_assoc/2, put_assoc/4]).
:- use_module(binarize, [intermediate/1]).

/** <module> Goals that derive a rule's head directly

A rule's pattern ends in the intermediate event of its top goal, which
one clause links to the rule's head.  unfold_links/2 lets the goal
derive the head itself; map_derived/3 rewrites the derivations of a
clause body, here and when an engine loads its clauses.
*/

%!  unfold_links(+Clauses0, -Clauses) is det.
%
%   An intermediate event whose only clause links it to a rule head is
%   not needed: the goal that derives it derives the head instead.

unfold_links(Clauses0, Clauses) :-
    clause_counts(Clauses0, Counts),
    findall(N/A-(IE-Head),
            ( member(('$on'(IE, T1, T2, O) :- '$derived'(Head, T1b, T2b, Ob)), Clauses0),
              T1 == T1b, T2 == T2b, O == Ob,
              intermediate(IE),
              functor(IE, N, A),
              get_assoc(N/A, Counts, 1) ),
            Pairs),
    list_to_assoc(Pairs, Links0),
    resolved_links(Links0, Links),
    exclude(collapsed_link(Links), Clauses0, Clauses1),
    maplist(unfold_clause(Links), Clauses1, Clauses).

%   clause_counts(+Clauses, -Counts): Counts maps Name/Arity to the
%   number of '$on'/4 clauses for events Name/Arity.

clause_counts(Clauses, Counts) :-
    findall(N/A, ( member(('$on'(E, _, _, _) :- _), Clauses), functor(E, N, A) ), Keys0),
    msort(Keys0, Keys),
    clumped(Keys, Pairs),
    list_to_assoc(Pairs, Counts).

collapsed_link(Links, ('$on'(IE, _, _, _) :- _)) :-
    functor(IE, N, A),
    get_assoc(N/A, Links, _).

unfold_clause(Links, (H :- B0), (H :- B)) :- !,
    map_derived(unfold_link(Links), B0, B).
unfold_clause(_, C, C).

unfold_link(Links, '$derived'(E, T1, T2, O), Goal) :-
    (   functor(E, N, A),
        get_assoc(N/A, Links, IE0-Head0)
    ->  copy_term(IE0-Head0, E-Head),
        Goal = '$derived'(Head, T1, T2, O)
    ;   Goal = '$derived'(E, T1, T2, O)
    ).

%   resolved_links(+Links0, -Links): a link may lead to an event that is
%   linked on in turn (e.g. a chain of `or`): Links maps each to the
%   event at the end of its chain, each chain followed once.

resolved_links(Links0, Links) :-
    assoc_to_keys(Links0, Keys),
    empty_assoc(Links1),
    foldl(resolve_link(Links0), Keys, Links1, Links).

resolve_link(Links0, Key, Links1, Links) :-
    resolve_link(Key, Links0, Links1, Links, _).

resolve_link(Key, Links0, Links1, Links, Resolved) :-
    (   get_assoc(Key, Links1, Resolved)
    ->  Links = Links1
    ;   get_assoc(Key, Links0, Link),
        copy_term(Link, IE-Head),
        functor(Head, N, A),
        (   get_assoc(N/A, Links0, _)
        ->  resolve_link(N/A, Links0, Links1, Links2, Next),
            copy_term(Next, Head-End),
            Resolved = IE-End
        ;   Resolved = IE-Head,
            Links2 = Links1
        ),
        put_assoc(Key, Links2, Resolved, Links)
    ).

%!  map_derived(:Rewrite, +Body0, -Body) is det.
%
%   Body0 with each goal '$derived'(E, T1, T2, O) replaced by Goal of
%   call(Rewrite, G, Goal).

:- meta_predicate map_derived(2, +, -).

map_derived(R, (A0, B0), (A, B)) :- !,
    map_derived(R, A0, A),
    map_derived(R, B0, B).
map_derived(R, (C0 -> A0 ; B0), (C -> A ; B)) :- !,
    map_derived(R, C0, C),
    map_derived(R, A0, A),
    map_derived(R, B0, B).
map_derived(R, (A0 ; B0), (A ; B)) :- !,
    map_derived(R, A0, A),
    map_derived(R, B0, B).
map_derived(R, G0, G) :-
    G0 = '$derived'(E, _, _, _),
    nonvar(E),
    !,
    call(R, G0, G).
map_derived(_, G, G).
