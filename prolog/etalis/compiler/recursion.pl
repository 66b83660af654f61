:- module(etalis_recursion,
          [ check_recursion/2,          % +Rules, -Repeating
            repeating_events/2,         % +Rules, -Specs
            immediate_event/3,          % +Pattern, -Event, -Widens
            aggregated_event/2,         % +Pattern, -Event
            widening_side/2             % ?Operator, ?Side
          ]).
:- use_module(library(apply)).
:- use_module(library(lists)).
:- use_module(library(pairs)).
:- use_module(library(assoc)).
:- use_module(library(ordsets)).
:- use_module('../reader/syntax', [etalis_error/3]).
:- use_module(optable, [waiting_side/2, temporal_spec/6, end_point_instance/4, completing_part/3]).

/** <module> Rules that derive an event from itself

check_recursion/2 finds the events of rules that derive an event from
itself at once, over the same interval, and refuses such a cycle
through an aggregate; immediate_event/3 tells where an occurrence
completes a pattern at once (and whether it widens its interval, see
widening_side/2), for the rule checks of etalis_rule_facts too.
*/

%!  check_recursion(+Rules, -Repeating) is det.
%
%   A cycle from a rule head back to an event of a pattern that passes
%   no waiting operand (the left of seq, the stored side of the one-way
%   Allen relations, the negated part of cnot or fnot), no where
%   condition (which may stop it) and no operand that strictly widens
%   the interval (the right of seq, see widening_side/2) can derive an
%   event from itself over the same interval, over and over.  Its least
%   model is finite all the same: a derived occurrence identical to one
%   already derived is no new fact.  So the events of such cycles
%   (Repeating, see repeating_events/2) are derived once per distinct
%   occurrence (etalis_runtime:first_derivation/4), and the cycle ends.
%   Refused: such a cycle through an aggregate, whose values are new
%   in every round.  A cycle that widens ends anyway, since each round
%   takes an occurrence that lies further out.

check_recursion(Rules, Repeating) :-
    repeating_events(Rules, Repeating),
    (   Repeating == []
    ->  true
    ;   immediate_edges(Rules, Edges),
        edge_index(Edges, Index),
        (   member(rule(_, H0, P, Where, _), Rules),
            aggregated_event(P, E0),
            copy_term(E0-H0, E1-H1),
            reaches(H1, E1, Index, [Where])
        ->  etalis_error("these rules derive an event from itself at the same time, forever, through an aggregate",
                         "put the recursive event on the left of seq (it must occur before), or guard the recursion with a where condition",
                         Where)
        ;   true
        )
    ).

immediate_edges(Rules, Edges) :-
    findall(edge(E, H, Where),
            ( member(rule(_, H, P, Where, _), Rules),
              immediate_event(P, E, false) ),
            Edges).

%!  repeating_events(+Rules, -Specs) is det.
%
%   Specs are the events Name/Arity on a cycle
%   of steps that complete at once without widening (see
%   check_recursion/2), taken by name and arity.

repeating_events(Rules, Specs) :-
    immediate_edges(Rules, Edges),
    edge_index(Edges, Index),
    (   acyclic(Index)
    ->  Specs = []
    ;   findall(V-W, ( member(edge(E, H, _), Edges), functor(E, N, A), V = N/A,
                       functor(H, HN, HA), W = HN/HA ), Arcs0),
        sort(Arcs0, Arcs),
        cyclic_vertices(Arcs, Specs)
    ).

%   cyclic_vertices(+Arcs, -Vertices): the vertices of the graph Arcs
%   (V-W pairs) that lie on a cycle: those of a strongly connected
%   component of more than one vertex, or with an arc to themselves.
%   Kosaraju's two depth-first searches, in n log n.

cyclic_vertices(Arcs, Vertices) :-
    adjacency(Arcs, Out),
    findall(W-V, member(V-W, Arcs), Reversed0),
    sort(Reversed0, Reversed),
    adjacency(Reversed, In),
    assoc_to_keys(Out, Vs0),
    assoc_to_keys(In, Vs1),
    ord_union(Vs0, Vs1, Vs),
    empty_assoc(Seen0),
    foldl(finish_order(Out), Vs, Seen0-[], _-Order),
    empty_assoc(Comp0),
    foldl(component_root(In), Order, Comp0, Comp),
    assoc_to_list(Comp, Pairs),
    transpose_pairs(Pairs, ByRoot),
    group_pairs_by_key(ByRoot, Groups),
    findall(V, ( member(_-Members, Groups),
                 (   Members = [_, _|_]
                 ->  member(V, Members)
                 ;   Members = [V],
                     memberchk(V-V, Arcs)
                 ) ),
            Vertices0),
    sort(Vertices0, Vertices).

adjacency(Arcs, Adjacency) :-
    group_pairs_by_key(Arcs, Groups),
    list_to_assoc(Groups, Adjacency).

neighbours(Adjacency, V, Ns) :-
    (   get_assoc(V, Adjacency, Ns0) -> Ns = Ns0 ; Ns = [] ).

finish_order(Out, V, Seen0-Order0, Seen-Order) :-
    (   get_assoc(V, Seen0, _)
    ->  Seen = Seen0, Order = Order0
    ;   put_assoc(V, Seen0, true, Seen1),
        neighbours(Out, V, Ns),
        foldl(finish_order(Out), Ns, Seen1-Order0, Seen-Order1),
        Order = [V|Order1]
    ).

component_root(In, V, Comp0, Comp) :-
    (   get_assoc(V, Comp0, _)
    ->  Comp = Comp0
    ;   assign_root(In, V, V, Comp0, Comp)
    ).

assign_root(In, Root, V, Comp0, Comp) :-
    (   get_assoc(V, Comp0, _)
    ->  Comp = Comp0
    ;   put_assoc(V, Comp0, Root, Comp1),
        neighbours(In, V, Ns),
        foldl(assign_root(In, Root), Ns, Comp1, Comp)
    ).

%!  aggregated_event(+Pattern, -Event) is nondet.
%
%   Event completes Pattern at once, without widening, through an
%   aggregated operand (whose values are new in every round of a cycle).

aggregated_event(op(Op, L, R), E) :-
    waiting_side(Op, Waiting),
    (   Waiting \== left, \+ widening_side(Op, left), aggregated_event(L, E)
    ;   Waiting \== right, \+ widening_side(Op, right), aggregated_event(R, E)
    ).
aggregated_event(P, E) :-
    completing_part(P, Kind, S),
    (   Kind == aggregated,
        immediate_event(S, E, false)
    ;   aggregated_event(S, E)
    ).

%   edge_index(+Edges, -Index): Index maps Name/Arity to the edges from
%   events Name/Arity.

edge_index(Edges, Index) :-
    findall(N/A-Edge, ( member(Edge, Edges), Edge = edge(E, _, _), functor(E, N, A) ), Pairs0),
    keysort(Pairs0, Pairs),
    group_pairs_by_key(Pairs, Groups),
    list_to_assoc(Groups, Index).

%   acyclic(+Index): the edges, taken between Name/Arity of events, make
%   no cycle; then no event can derive itself.  Checked by a depth-first
%   search (active: on the current path; done: no cycle through it), so
%   that large acyclic rule sets are checked in n log n.

acyclic(Index) :-
    assoc_to_keys(Index, Vertices),
    empty_assoc(Colours0),
    foldl(acyclic_from(Index), Vertices, Colours0, _).

acyclic_from(Index, V, Colours0, Colours) :-
    (   get_assoc(V, Colours0, Colour)
    ->  Colour == done,
        Colours = Colours0
    ;   put_assoc(V, Colours0, active, Colours1),
        (   get_assoc(V, Index, Out)
        ->  findall(N/A, ( member(edge(_, H, _), Out), functor(H, N, A) ), Next)
        ;   Next = []
        ),
        foldl(acyclic_from(Index), Next, Colours1, Colours2),
        put_assoc(V, Colours2, done, Colours)
    ).

%   reaches(+Head, +Target, +Index, +Seen): a chain of immediate edges
%   leads from the event Head to one that unifies with Target.

reaches(H, T, _, _) :-
    \+ H \= T,
    !.
reaches(H, T, Index, Seen) :-
    functor(H, N, A),
    get_assoc(N/A, Index, Edges),
    member(edge(E0, H0, Where), Edges),
    \+ memberchk(Where, Seen),
    copy_term(E0-H0, E-H1),
    \+ E \= H,
    reaches(H1, T, Index, [Where|Seen]).

%!  immediate_event(+Pattern, -Event, -Widens) is nondet.
%
%   Event occurs in the normalised Pattern in a place where its
%   occurrence completes the pattern at once: an operand of a temporal
%   operator that does not wait, an operand of a construct that its
%   kind says completes it (see etalis_optable:completing_part/3; the
%   rule checks of etalis_rule_facts ask it too).  Widens is `true`
%   when every occurrence of Pattern that Event's occurrence completes
%   lies over an interval that strictly contains Event's (it passes an
%   operand that widens, see widening_side/2), else
%   `false`.

immediate_event(event(E), E, false).
immediate_event(op(Op, L, R), E, Widens) :-
    waiting_side(Op, Waiting),
    (   Waiting \== left, immediate_event(L, E, W0), Side = left
    ;   Waiting \== right, immediate_event(R, E, W0), Side = right
    ),
    (   widening_side(Op, Side)
    ->  Widens = true
    ;   Widens = W0
    ).
immediate_event(P, E, W) :-
    completing_part(P, _, S),
    immediate_event(S, E, W).

%!  widening_side(?Operator, ?Side) is nondet.
%
%   An occurrence of the temporal Operator completed by its Side
%   operand (left or right) always lies over an interval that strictly
%   contains that operand's: the right of `seq` (the left ends before
%   it starts), the left of `after`, `overlapped_by` and `finishes`,
%   the right of `overlaps` and `finished_by`.  Decided from the
%   operator table (see etalis_optable:end_point_instance/4).

widening_side(Op, Side) :-
    temporal_spec(Op, _, _, _, _, _),
    member(Side, [left, right]),
    \+ narrow_instance(Op, Side).

narrow_instance(Op, Side) :-
    end_point_instance(Op, A, B, i(S, E)),
    (   Side == left -> i(X1, X2) = A ; i(X1, X2) = B ),
    \+ ( S =< X1, X2 =< E, ( S < X1 ; X2 < E ) ).
