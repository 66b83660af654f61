:- module(etalis_chains,
          [ chain_rule/7,               % +Selector, +Explain, +MaxAge, +N, +Rule0, -Rule, -Chain
            chain_event/1,              % +Event
            chain_node/3,               % +Chain, +Id, -Node
            chain_clauses/3,            % +Module, +Node, -PhasedClauses
            chain_pattern/2,            % +Op, -Pattern
            chain_stored/4,             % +Op, -Input, -Key, -Payload
            remember/4,                 % +Selector, +Store, +Key, +Entry
            newest_chain/7,             % +Selector, +Store, +Levels, +Next, +Window, -Start, -Positions
            earliest_chain/7            % +Store, +Levels, +Last, +Window, +Prev, -Start, -Positions
          ]).
:- use_module(library(apply)).
:- use_module(library(lists)).
:- use_module('../runtime/store', [store_queue/3, store_lookup/3, store_append/4, store_pending/4,
                                              fresh_cell/2]).
:- use_module(operators, [interval_goal/4, condition_test/5, store_index/3]).
:- use_module(rule_facts, [source_pattern/2]).

/** <module> Sequences under CEL's strict, nxt and last, built without the other matches

A rule under one of CEL's selectors `strict`, `nxt` or `last` whose
pattern is a sequence of events `e1 seq ... seq en` (each maybe with a
`where` condition of its own, on its own variables), maybe with a
`where` condition and a `within` window around the whole, is evaluated
here instead of as under `unrestricted` (see etalis_strategies).  Each
event that fits element j < n is remembered, per element and per the
values of its variables that the search below has bound when it
reaches it; an event that fits element n searches, in the order of
the selector, for the first combination of remembered events that
completes it (the sequence, the window and the condition of the
whole), and derives that one match:

  - `last`: elements n-1 down to 1, each the newest event that fits:
    the first complete combination is the greatest in CEL's <=last
    (the largest position where two matches differ is the chosen
    one's);
  - `nxt`: elements 1 up to n-1, each the oldest event that fits: the
    first complete combination is the greatest in <=next;
  - `strict`: elements n-1 down to 1, each at the position just before
    the next one's: the only contiguous combination.

So an event that completes nothing costs one store operation, and one
that completes a match as many steps as the search takes: n - 1 when
the newest (oldest) candidates fit, whatever the window holds.  The
search visits more only where candidates fail the sequence, a join or
the condition of the whole, and each failing one once per step.  The
match is then offered to the selector as any other (several events at
the same position, derived ones, each offer theirs).

The remembered events live in the goal store of the rule's node
(etalis_store), newest first for `last` and `strict` (a stack, trimmed
of what the window or the contiguity rules out, at a constant cost per
event on average) and oldest first for `nxt` (a queue that the window
expires from its front).
*/

%!  chain_rule(+Selector, +Explain, +MaxAge, +N, +Rule0, -Rule, -Chain) is semidet.
%
%   Rule0, rule(Label, Head, Pattern, Where, VarNames) under Selector
%   (`strict`, `nxt` or `last`), is a sequence that this module
%   evaluates: Rule derives Head from the hidden event
%   '$chainN'(Positions, HeadVars...) that Chain, chain(Selector,
%   Spec), derives (see chain_node/3).  Explain (true or false) says
%   whether events carry their provenance.  MaxAge (a number or `inf`)
%   bounds the window.  Fails for any other rule.

chain_rule(Selector, Explain, MaxAge, N, rule(L, H, P0, Where, V), rule(L, H, event(E0), Where, V),
           chain(Selector, spec(Pattern, Elements, Whole1, Window, Out))) :-
    memberchk(Selector, [strict, nxt, last]),
    sequence_parts(P0, none, none, Goal, W0, Body),
    sequence_elements(Body, Elements0),
    own_goals_local(Elements0, H, Goal),
    format(atom(Name), '$chain~d', [N]),
    term_variables(H, HVs),
    E0 =.. [Name, _|HVs],
    copy_term(H-P0-Elements0-Goal-E0, _-Pattern-Elements1-Whole-Out0),
    min_window(W0, MaxAge, Window),
    explained_elements(Explain, Elements1, Elements, Provs),
    (   Explain == true
    ->  Out0 =.. List0,
        append(List0, [Prov], List),
        Out =.. List,
        Whole1 = Whole-append(Provs, Prov)
    ;   Out = Out0,
        Whole1 = Whole-true
    ).

%   sequence_parts(+P, +Goal0, +W0, -Goal, -W, -Body): at most one
%   `where` and one `within` around the sequence Body.

sequence_parts(where(P, G), none, W0, Goal, W, Body) :- !,
    sequence_parts(P, G, W0, Goal, W, Body).
sequence_parts(within(P, W1), G0, none, Goal, W, Body) :- !,
    sequence_parts(P, G0, W1, Goal, W, Body).
sequence_parts(P, G, W, G, W, P) :-
    P = op(seq, _, _).

sequence_elements(op(seq, A, B), Elements) :- !,
    sequence_elements(A, EA),
    sequence_elements(B, EB),
    append(EA, EB, Elements).
sequence_elements(event(E), [el(E, none)]) :-
    plain_event(E).
sequence_elements(where(event(E), G), [el(E, G)]) :-
    plain_event(E).

plain_event(E) :-
    callable(E),
    functor(E, Name, _),
    \+ sub_atom(Name, 0, _, _, $).

%   own_goals_local(+Elements, +Head, +Goal): the condition of an
%   element uses no variable of another element, of the head or of the
%   condition of the whole that its event does not bind.

own_goals_local(Elements, Head, Goal) :-
    forall(nth1(I, Elements, el(E, G)),
           (   G == none
           ->  true
           ;   findall(O, ( nth1(J, Elements, O), J =\= I ), Others),
               term_variables(Others-Head-Goal, OutVs),
               term_variables(E, EVs),
               term_variables(G, GVs),
               forall(( member(V, GVs), member_eq(V, OutVs) ), member_eq(V, EVs))
           )).

member_eq(V, Vs) :-
    member(V0, Vs),
    V0 == V,
    !.

bound_in(Vs, V) :-
    member_eq(V, Vs).

min_window(none, inf, inf) :- !.
min_window(none, W, W) :- !.
min_window(W, inf, W) :- !.
min_window(W0, W1, W) :- W is min(W0, W1).

explained_elements(false, Elements, Elements, []).
explained_elements(true, Elements0, Elements, Provs) :-
    maplist(explained_element, Elements0, Elements, Provs).

explained_element(el(E0, G), el(E, G), Prov) :-
    E0 =.. List0,
    append(List0, [Prov], List),
    E =.. List.

%!  chain_event(+Event) is semidet.
%
%   Event is the hidden event of a chain rule, whose first argument is
%   the list of the positions of its events.

chain_event(E) :-
    compound(E),
    functor(E, Name, _),
    sub_atom(Name, 0, _, _, '$chain').

%!  chain_node(+Chain, +Id, -Node) is det.
%
%   Node is the goal numbered Id that evaluates Chain:
%   node(Id, chain(Selector, Spec), Events, Out, Window, Selector).

chain_node(chain(S, Spec), Id, node(Id, chain(S, Spec), Events, Out, W, S)) :-
    Spec = spec(_, Elements, _, W, Out),
    findall(E, member(el(E, _), Elements), Events).

%!  chain_pattern(+Op, -Pattern) is det.
%
%   Pattern is the rule pattern that the chain goal Op evaluates,
%   written with the operators of the rule language.

chain_pattern(chain(_, spec(Pattern, _, _, _, _)), Source) :-
    source_pattern(Pattern, Source).

%!  chain_stored(+Op, -Input, -Key, -Payload) is nondet.
%
%   The remembered events of the chain goal Op are Input, an event of
%   an element before the last, held under Key with Payload (see
%   etalis_operators:stored_input/5).

chain_stored(chain(S, Spec), E, h(J, Key), p(_, Values)) :-
    copy_term(Spec, spec(_, Elements, _, _, _)),
    length(Elements, N),
    Last is N - 1,
    between(1, Last, J),
    nth1(J, Elements, el(E, G)),
    element_key(S, J, Elements, Key),
    element_values(E, G, Values).

%!  chain_clauses(+Module, +Node, -PhasedClauses) is det.
%
%   The '$on'/4 clauses of a chain Node (see node_clauses/3 of
%   etalis_operators): one per element, the last's completing (phase
%   `complete`), the others' storing (phase `store`).

chain_clauses(M, Node, Clauses) :-
    Node = node(Id, chain(_, Spec0), _, _, _, _),
    Spec0 = spec(_, Elements0, _, _, _),
    length(Elements0, N),
    findall(C, ( between(1, N, J), element_clause(M, Id, Node, J, C) ), Clauses).

element_clause(M, Id, node(_, chain(S, Spec0), _, _, _, _), J, Phase-('$on'(E, T1, T2, O) :- Body)) :-
    copy_term(Spec0, spec(_, Elements, Whole-Provs, W, Out)),
    length(Elements, N),
    nth1(J, Elements, el(E, G)),
    own_test(M, E, G, T1, T2, Own),
    store_index(Id, left, Idx),
    Store = etalis_runtime:engine_store(M, Idx, St),
    (   J < N
    ->  Phase = store,
        element_key(S, J, Elements, Key),
        element_values(E, G, Values),
        remembered(S, W, N, St, h(J, Key), e(p(P, Values), T1, T2), Remember),
        conj([Own, etalis_strategies:position(P), Store, Remember, fail], Body)
    ;   Phase = complete,
        levels(S, Elements, Levels),
        search_goal(S, St, Levels, T1, T2, P, W, Start, Ps, Search),
        whole_test(M, Whole, Elements, Out, Start, T2, WholeTest),
        Out =.. [_, Ps|_],
        conj([Search, WholeTest, Provs], SearchTest),
        conj([Own, etalis_strategies:position(P), Store,
              once(SearchTest),
              '$derived'(Out, Start, T2, O)], Body)
    ).

%   own_test(+M, +E, +G, +T1, +T2, -Test): the condition of an element
%   of its own, on the event's interval; once for each distinct binding
%   of the variables it binds.

own_test(_, _, none, _, _, true) :- !.
own_test(M, E, G, T1, T2, catch(etalis_runtime:user_goal(M:Test), Err, etalis_runtime:goal_error(M, Err, G1))) :-
    interval_goal(G, T1, T2, G1),
    term_variables(E-G, Vs),
    Out =.. [v|Vs],
    condition_test(M, G1, E, Out, Test).

whole_test(_, none, _, _, _, _, true) :- !.
whole_test(M, G, Elements, Out, S, E,
           catch(etalis_runtime:user_goal(M:Test), Err, etalis_runtime:goal_error(M, Err, G1))) :-
    interval_goal(G, S, E, G1),
    condition_test(M, G1, Elements, Out, Test).

element_values(E, G, Values) :-
    term_variables(E-G, Vs),
    Values =.. [v|Vs].

%   element_key(+Selector, +J, +Elements, -Key): the variables of
%   element J that the search has bound when it reaches it (those of
%   the elements after it for `last` and `strict`, of the last and
%   those before it for `nxt`), as the term k(Vars...).

element_key(S, J, Elements, Key) :-
    nth1(J, Elements, El),
    term_variables(El, Vs),
    length(Elements, N),
    (   S == nxt
    ->  findall(O, ( nth1(I, Elements, O), ( I < J ; I =:= N ) ), Bound)
    ;   findall(O, ( nth1(I, Elements, O), I > J ), Bound)
    ),
    term_variables(Bound, BVs),
    include(bound_in(BVs), Vs, KVs),
    Key =.. [k|KVs].

%   levels(+Selector, +Elements, -Levels): the steps of the search, in
%   its order, each lvl(Key, Entry) with the template of a remembered
%   event of the element.

levels(S, Elements, Levels) :-
    length(Elements, N),
    Last is N - 1,
    (   S == nxt
    ->  numlist_(1, Last, Js)
    ;   numlist_(1, Last, Js0),
        reverse(Js0, Js)
    ),
    maplist(level(S, Elements), Js, Levels).

numlist_(L, H, Ns) :-
    (   H < L -> Ns = [] ; numlist(L, H, Ns) ).

level(S, Elements, J, lvl(h(J, Key), e(p(_, Values), _, _))) :-
    nth1(J, Elements, el(E, G)),
    element_key(S, J, Elements, Key),
    element_values(E, G, Values).

search_goal(nxt, St, Levels, T1, T2, P, W, Start, Ps,
            etalis_chains:earliest_chain(St, Levels, last(T1, T2, P), W, none, Start, Ps)) :- !.
search_goal(S, St, Levels, T1, T2, P, W, Start, Ps,
            etalis_chains:newest_chain(S, St, Levels, next(T1, T2, P), W, Start, Ps)).

remembered(nxt, W, _, St, Key, Entry, etalis_store:store_append(St, Key, Entry, Expiry)) :- !,
    Entry = e(_, _, T2),
    (   W == inf -> Expiry = none ; Expiry = window(T2, W) ).
remembered(S, W, N, St, Key, Entry, etalis_chains:remember(Trim, St, Key, Entry)) :-
    Entry = e(p(P, _), _, T2),
    (   S == strict
    ->  Trim = position(P, N)
    ;   W == inf
    ->  Trim = none
    ;   Trim = window(T2, W)
    ).

conj(Goals, Conj) :-
    exclude(==(true), Goals, Goals1),
    foldl_conj(Goals1, Conj).

foldl_conj([], true).
foldl_conj([G], G) :- !.
foldl_conj([G|Gs], (G, C)) :-
    foldl_conj(Gs, C).

                 /*******************************
                 *            RUNTIME           *
                 *******************************/

%!  remember(+Trim, +Store, +Key, +Entry) is det.
%
%   Push Entry, e(p(Position, Values), T1, T2), as the newest of Key in
%   Store (a stack: q(Newest, Pushes)).  Trim says which entries can no
%   longer be part of a match: `none`, window(End, W) those that start
%   more than W before End, position(P) those more than one position
%   before P's predecessor (strict contiguity: they would have to be
%   next to an element that is not yet there).  Every time the stack
%   has doubled since it was last trimmed, it is trimmed, so that the
%   cost per entry stays constant.  The new cell is whole before one
%   link pushes it (see fresh_cell/2), so that an error on the way (the
%   stacks full) loses none of the stack.

remember(Trim, Store, Key, Entry) :-
    store_queue(Store, Key, Q),
    arg(1, Q, Old),
    fresh_cell(c(Entry, []), Cell),
    nb_linkarg(2, Cell, Old),
    nb_linkarg(1, Q, Cell),
    (   arg(2, Q, n(Count0, Mark))
    ->  true
    ;   Count0 = 0,
        Mark = 8
    ),
    Count is Count0 + 1,
    (   Count >= 2 * Mark
    ->  trim(Q, Trim)
    ;   nb_setarg(2, Q, n(Count, Mark))
    ).

trim(Q, Trim) :-
    arg(1, Q, First),
    findall(E, ( cell_member(First, E), \+ dead(Trim, E) ), Live),
    length(Live, Size),
    cells(Live, Cells),
    nb_setarg(1, Q, Cells),
    Mark is max(Size, 8),
    nb_setarg(2, Q, n(Size, Mark)).

dead(window(End, W), e(_, T1, _)) :- End - T1 > W.
dead(position(P, N), e(p(Q, _), _, _)) :- Q =< P - N.

cells([], []).
cells([E|Es], c(E, Cs)) :-
    cells(Es, Cs).

cell_member(c(E0, Next), E) :-
    (   E = E0
    ;   cell_member(Next, E)
    ).

%!  newest_chain(+Selector, +Store, +Levels, +Next, +Window, -Start, -Positions) is nondet.
%
%   The combinations of remembered events that complete a sequence with
%   its last element over Next, next(T1, End, Position), the greatest
%   in CEL's <=last first (Selector `last`), or the contiguous one
%   (`strict`): Levels are the steps for the elements n-1 down to 1,
%   each lvl(Key, Entry); each binds Entry to a remembered event of its
%   element that ends before the next one starts, newest first (for
%   `strict`: at the position before the next one's), inside Window
%   (`inf` or the most End may be after the start).  Start is the
%   start of the first element, Positions the positions of all.

newest_chain(S, St, Levels, next(T1, End, P), W, Start, Ps) :-
    newest_levels(Levels, S, St, T1, P, End, W, T1, Start, [P], Ps).

newest_levels([], _, _, _, _, _, _, Start, Start, Ps, Ps).
newest_levels([lvl(Key, E)|Ls], S, St, NextT1, NextP, End, W, _, Start, Ps0, Ps) :-
    store_lookup(St, Key, Q),
    arg(1, Q, First),
    E = e(p(Pos, _), A1, A2),
    newest_candidate(S, First, NextP, E),
    A2 < NextT1,
    in_window(W, End, A1),
    newest_levels(Ls, S, St, A1, Pos, End, W, A1, Start, [Pos|Ps0], Ps).

newest_candidate(last, First, _, E) :-
    cell_member(First, E).
newest_candidate(strict, First, NextP, E) :-
    Want is NextP - 1,
    at_position(First, Want, E).

%   at_position(+Cell, +Want, ?Entry): Entry is an entry at position
%   Want of the stack from Cell on (newest first, so positions never
%   grow along it).

at_position(c(E0, Next), Want, E) :-
    E0 = e(p(Pos, _), _, _),
    (   Pos > Want
    ->  at_position(Next, Want, E)
    ;   Pos =:= Want,
        (   E = E0
        ;   at_position(Next, Want, E)
        )
    ).

in_window(inf, _, _) :- !.
in_window(W, End, T1) :-
    End - T1 =< W.

%!  earliest_chain(+Store, +Levels, +Last, +Window, +Prev, -Start, -Positions) is nondet.
%
%   As newest_chain/7 for `nxt`, the greatest in CEL's <=next first:
%   Levels are the steps for the elements 1 up to n-1, each taking a
%   remembered event that starts after the previous one ends (Prev:
%   `none` for the first), oldest first, and ends before the last
%   element, Last = last(T1, End, Position), starts.

earliest_chain(St, Levels, last(T1, End, P), W, Prev, Start, Ps) :-
    (   Levels == []
    ->  Start = T1,
        Ps = [P]
    ;   expiry(W, End, Expiry),
        earliest_levels(Levels, St, T1, End, W, Expiry, Prev, Start, Ps0),
        append(Ps0, [P], Ps)
    ).

earliest_levels([], _, _, _, _, _, _, _, []).
earliest_levels([lvl(Key, E)|Ls], St, T1, End, W, Expiry, Prev, Start, [Pos|Ps]) :-
    E = e(p(Pos, _), A1, A2),
    store_pending(St, Key, Expiry, E),
    (   Prev == none
    ->  Start = A1
    ;   A1 > Prev
    ),
    A2 < T1,
    in_window(W, End, A1),
    earliest_levels(Ls, St, T1, End, W, Expiry, A2, Start, Ps).

expiry(inf, _, none) :- !.
expiry(W, End, window(End, W)).
