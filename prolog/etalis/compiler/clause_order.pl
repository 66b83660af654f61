:- module(etalis_clause_order,
          [ ordered_clauses/3           % +Nodes, +Links, -Clauses
          ]).
:- use_module(library(apply), [foldl/4, foldl/5]).
:- use_module(library(lists), [append/2, max_list/2, member/2]).
:- use_module(library(pairs), [pairs_values/2]).
:- use_module(library(assoc), [empty_assoc/1, get_assoc/3, list_to_assoc/2, put_assoc/4]).
:- use_module(binarize, [intermediate/1]).
:- use_module(operators, [node_clauses/3, node_clauses/4, absorbed_clauses/3, input_name/2]).
:- use_module(chains, [chain_clauses/3]).
:- use_module(filter_chains, [filter_chains/4, filter_input/2]).

/** <module> The clauses of the goals, in the order an event meets them

An event completes pending goals before it becomes pending itself: the
clauses that combine an occurrence with pending goals come first, and
among them upper goals (made later), so that an event derived from an
occurrence cannot replace or consume what a goal is about to combine
with that same occurrence.
*/

%!  ordered_clauses(+Nodes, +Links, -Clauses) is det.
%
%   Clauses are the '$on'/4 clauses of the goals Nodes of a program
%   whose rules are Links, each goal's filters inside it (see
%   etalis_filter_chains), in the order of phase_order/2.

ordered_clauses(Nodes, Links, Clauses) :-
    upward(Nodes, Upward),
    filter_chains(Nodes, Links, Chains, Absorbed),
    terminating_filters(Nodes, Links, Terminating),
    findall(P-C, ( member(Node, Upward), goal_clauses(Chains, Absorbed, Node, Cs), member(P0-C0, Cs),
                   ranked_clause(Terminating, Node, P0-C0, P-C) ),
            Phased),
    phase_order(Phased, Clauses).

%   phase_order(+Phased, -Clauses): the `complete` clauses, then the
%   `pass` ones, then the `store` ones, each in the order given: an
%   occurrence completes the pending goals, also through what it
%   passes on (an `or`, a `where`), before it is stored itself, so that
%   under `recent` it cannot replace an occurrence that it completes.

phase_order(Phased, Clauses) :-
    findall(H-C, member(complete(H)-C, Phased), Complete0),
    keysort(Complete0, Complete1),
    pairs_values(Complete1, Complete),
    findall(C, member(pass-C, Phased), Pass),
    findall(C, member(store-C, Phased), Store),
    append([Complete, Pass, Store], Clauses).

%   ranked_clause(+Terminating, +Node, +Phase0-Clause, -Phase-Clause): a
%   `complete` clause ranks by its goal's height (higher first, see
%   upward/2); the `pass` clause of a condition of an event's own that
%   only terminates a `seq` under `recent` (see terminating_filters/3)
%   ranks as the goal it terminates, so that the event completes that
%   goal before it completes a lower one, whose result could replace the
%   initiator it is about to take (`c seq b(Z) seq (b(X) where X > 1)`).

ranked_clause(Terminating, node(Id, _, _, _, _, _), P0-C, P-C) :-
    (   P0 == complete
    ->  get_assoc(Id, Terminating.heights, H),
        Neg is -H,
        P = complete(Neg)
    ;   P0 == pass,
        get_assoc(Id, Terminating.promoted, H)
    ->  Neg is -H,
        P = complete(Neg)
    ;   P = P0
    ).

%   terminating_filters(+Nodes, +Links, -Terminating): the heights of
%   the goals (heights), and the `where` goals on an event under a
%   `recent` policy whose result is only the right operand of `seq`
%   goals, with the height of the highest of those (promoted).

terminating_filters(Nodes, Links, _{heights: Heights, promoted: Promoted}) :-
    empty_assoc(Names0),
    foldl(height_key, Nodes, _, Names0, Names),
    findall(Id-H, ( member(node(Id, _, _, Out, _, _), Nodes), functor(Out, Name, _), get_assoc(Name, Names, H) ),
            HeightPairs),
    list_to_assoc(HeightPairs, Heights),
    findall(Id-H,
            ( member(node(Id, where(_), [In], Out, _, Policy), Nodes),
              memberchk(Policy, [recent, recent(_)]),
              \+ intermediate(In),
              functor(Out, Name, _),
              \+ ( member(link(_, LOut, _, _), Links), functor(LOut, Name, _) ),
              findall(CH, ( member(node(CId, COp, CIns, _, _, _), Nodes), member(CIn, CIns),
                            input_name(CIn, Name), get_assoc(CId, Heights, CH0),
                            (   COp == temporal(seq), CIns = [_, R], R == CIn
                            ->  CH = CH0
                            ;   CH = none
                            ) ),
                      CHs),
              CHs \== [],
              \+ memberchk(none, CHs),
              max_list(CHs, H) ),
            Promoted0),
    list_to_assoc(Promoted0, Promoted).

%   goal_clauses(+Chains, +Absorbed, +Node, -PhasedClauses): the clauses
%   of Node, with the filters that run inside it (see filter_chains/4).

goal_clauses(Chains, Absorbed, Node, Clauses) :-
    Node = node(Id, Op, _, _, _, _),
    (   Op = chain(_, _)
    ->  chain_clauses('$engine', Node, Clauses)
    ;   get_assoc(Id, Absorbed, _)
    ->  absorbed_clauses('$engine', Node, Clauses)
    ;   get_assoc(Id, Chains, Filters0)
    ->  copy_term(Filters0, Filters),
        Filters = filters([First|_], _),
        filter_input(First, In),
        Node = node(_, _, _, In, _, _),
        node_clauses('$engine', Node, Filters, Clauses)
    ;   node_clauses('$engine', Node, Clauses)
    ).

%   upward(+Nodes, -Sorted): the goals, those highest above the input
%   events first, in the order they were made otherwise.  A goal is
%   made after the goals of its inputs, so one pass in that order finds
%   every goal's height.

upward(Nodes, Sorted) :-
    empty_assoc(Heights0),
    foldl(height_key, Nodes, Keyed, Heights0, _),
    keysort(Keyed, SortedKeyed),
    pairs_values(SortedKeyed, Sorted).

height_key(Node, Neg-Node, Heights0, Heights) :-
    Node = node(_, _, Inputs, Out, _, _),
    foldl(input_height(Heights0), Inputs, 0, H0),
    H is H0 + 1,
    Neg is -H,
    functor(Out, Name, _),
    put_assoc(Name, Heights0, H, Heights).

input_height(Heights, In, H0, H) :-
    input_name(In, Name),
    (   get_assoc(Name, Heights, H1)
    ->  H is max(H0, H1)
    ;   H = H0
    ).
