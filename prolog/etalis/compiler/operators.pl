:- module(etalis_operators,
          [ node_clauses/3,             % +Module, +Node, -PhasedClauses
            node_clauses/4,             % +Module, +Node, +Filters, -PhasedClauses
            absorbed_clauses/3,         % +Module, +FilterNode, -PhasedClauses
            link_clause/2,              % +Link, -Clause
            timer_clauses/3,            % +Links, +Clauses0, -Clauses
            store_index/3,              % +NodeId, ?Side, -Index
            interval_goal/4,            % +Goal, +T1, +T2, -Goal1
            stored_input/5,             % +Node, ?Side, -Input, -Key, -Payload
            condition_test/5,           % +Module, +Goal, +In, +Out, -Test
            negated_event/2,            % +Negated, -Event
            input_name/2                % +Input, -Name
          ]).
:- use_module(library(apply)).
:- use_module(library(lists)).
:- reexport(optable, [temporal_spec/6]).
:- use_module(optable, [operator/3]).
:- use_module(policies, [add_goal/6, match_goal/7, resolve_policy/4, consuming/1, consuming_all/1, accumulated/2,
                          filtered_add_goal/7, filtered_match_goal/7]).

/** <module> One rule template per operator

The event-driven backward-chaining clauses of a binary goal are made
here.  Every generated clause has the head

    '$on'(Event, T1, T2, Out)

"Event occurred over [T1,T2]"; it succeeds once for every reported
detection Out that the occurrence leads to, and stores pending goals as
a side effect.  A goal's result event E is passed on with
'$derived'(E, T1, T2, Out), which reports E when it is printed and
propagates it as an event in its own right.

The temporal operators differ only in their condition, result interval
and the sides that must be stored (the side that can complete first),
which the operator table gives for each of them (etalis_optable,
temporal_spec/6): one template compiles them all.
*/

%!  store_index(?NodeId, ?Side, ?Index) is det.
%
%   Index is the goal store of Side (left or right) of node NodeId.
%   Either NodeId and Side, or Index, must be given.

store_index(Id, Side, I) :-
    integer(I),
    !,
    Id is (I + 1) // 2,
    (   I mod 2 =:= 1
    ->  Side = left
    ;   Side = right
    ).
store_index(Id, left, I) :- I is 2*Id - 1.
store_index(Id, right, I) :- I is 2*Id.

%!  node_clauses(+Module, +Node, -PhasedClauses) is det.
%
%   PhasedClauses are the '$on'/4 clauses of Node, for the engine
%   Module, each as Phase-Clause.  Phase is `complete` for a clause that
%   combines the occurrence with pending goals, `pass` for one that
%   passes it on, and `store` for one that only stores it.  An event
%   must complete pending goals, also through what it passes on, before
%   it or anything derived from it can become pending, or (under
%   `recent`) replace them.

node_clauses(M, Node, Clauses) :-
    node_clauses(M, Node, none, Clauses).

%!  node_clauses(+Module, +Node, +Filters, -PhasedClauses) is det.
%
%   As node_clauses/3, for a temporal or cnot Node whose occurrences
%   pass through Filters before anything else sees them: `none`, or
%   filters(List, Out), List the where(Goal, In, Out1) and
%   fnot(FnotId, N, Window, In, Out1) filters in order, Out the event
%   of the last.  The filters are then part of the selection of the
%   policy (see etalis_policies:filtered_match_goal/7): a pair they
%   reject is no occurrence, so it is neither chosen nor consumed, and
%   the node derives Out itself (see absorbed_clauses/3).

node_clauses(M, node(Id, temporal(Op), [L, R], Out, W, Policy), Filters, Clauses) :-
    !,
    findall(C, temporal_clause(M, Id, Op, L, R, Out, W, Policy, none, Filters, C), Clauses).
node_clauses(M, node(Id, cnot, [L, R, N], Out, W, Policy), Filters, [pass-NegClause|Clauses]) :-
    !,
    negated_clause(M, Id, L-R, N, W, NegClause),
    findall(C, temporal_clause(M, Id, seq, L, R, Out, W, Policy, negation(N), Filters, C), Clauses).
node_clauses(M, Node, none, Clauses) :-
    other_node_clauses(M, Node, Clauses).

%!  absorbed_clauses(+Module, +FilterNode, -PhasedClauses) is det.
%
%   The clauses of a where or fnot node whose filter runs inside the
%   node below it (see node_clauses/4): none for `where`, and for
%   `fnot` only the one that keeps the blocking occurrences.

absorbed_clauses(_, node(_, where(_), _, _, _, _), []).
absorbed_clauses(M, node(Id, fnot, [P, N], _, W, _), [pass-NegClause]) :-
    negated_clause(M, Id, P, N, W, NegClause).

%   filters_test(+Filters, +M, +Out, +S, +E, -FireOut, -Test): Test runs
%   the filters on an occurrence Out over [S,E], which then passes on as
%   FireOut.

filters_test(none, _, Out, _, _, Out, true).
filters_test(filters(Fs, Final), M, _, S, E, Final, once(Test)) :-
    maplist(filter_goal(M, S, E), Fs, Goals),
    conj(Goals, Test).

%   filters_test(+Filters, +M, +Out, +S, +E, -FireOut, -Test, -Computed):
%   as filters_test/7, and Computed runs only the filters that compute
%   values (compute/3), for an occurrence combined after the filters
%   passed its parts (`cumulative`).

filters_test(none, _, Out, _, _, Out, true, true).
filters_test(filters(Fs, Final), M, Out, S, E, FireOut, Test, Computed) :-
    filters_test(filters(Fs, Final), M, Out, S, E, FireOut, Test),
    include([F]>>(F = compute(_, _, _)), Fs, Cs),
    maplist(filter_goal(M, S, E), Cs, Goals),
    conj(Goals, Computed).

%   filters_by_value(+Filters, -ByValue): ByValue is `true` when the
%   filters look only at the values of the occurrences (where
%   conditions that do not ask the interval), so that of two pending
%   occurrences with the same values they pass both or neither.

filters_by_value(filters(Fs, _), ByValue) :-
    (   forall(member(F, Fs), ( ( F = where(G, _, _) ; F = compute(G, _, _) ), \+ asks_interval(G) ))
    ->  ByValue = true
    ;   ByValue = false
    ).

asks_interval(G) :-
    sub_term(T, G),
    compound(T),
    (   functor(T, Name, 1), memberchk(Name, [start, end, t1, t2, duration, current_datime])
    ;   functor(T, check, _)
    ),
    !.

filter_goal(M, S, E, where(G, In, Out),
            catch(etalis_runtime:user_goal(M:Test), Err, etalis_runtime:goal_error(M, Err, G1))) :-
    interval_goal(G, S, E, G1),
    condition_test(M, G1, In, Out, Test).
filter_goal(M, S, E, compute(G, In, Out), Goal) :-
    filter_goal(M, S, E, where(G, In, Out), Goal).
filter_goal(M, S, E, fnot(Id, N, W, In, _), Goal) :-
    window_check(W, S, E, Check),
    no_blocker(M, Id, N, In, W, E, S, E, Unblocked),
    conj([Check, Unblocked], Goal).
other_node_clauses(M, node(Id, fnot, [P, N], Out, W, _), [pass-NegClause, pass-Clause]) :-
    !,
    negated_clause(M, Id, P, N, W, NegClause),
    unblocked_clause(M, Id, P, N, Out, W, Clause).
other_node_clauses(M, node(Id, aggregate(Fun, X0, Window, R0), [In0], Out0, W, _), [pass-Clause]) :-
    !,
    copy_term(X0-R0-In0-Out0, X-R-In-Out),
    Out =.. [_|OutVs],
    append(Group, [R], OutVs),
    Key =.. [k|Group],
    store_index(Id, left, Idx),
    window_check(W, T1, T2, InFits),        % a window applies to the parts too
    window_check(W, Start, T2, Fits),
    conj([InFits,
          etalis_runtime:engine_store(M, Idx, Store),
          catch(etalis_aggregates:aggregate_step(Store, Key, X, T1, T2, Window, Fun, start(Start)-R),
                E, etalis_runtime:goal_error(M, E, aggregate(Fun, X))),
          Fits,
          '$derived'(Out, Start, T2, O)],
         Body),
    Clause = ('$on'(In, T1, T2, O) :- Body).
other_node_clauses(M, node(_, Op, Inputs, Out, W, _), Clauses) :-
    findall(pass-C, ( member(In, Inputs), pass_clause(M, Op, In, Out, W, C) ), Clauses).

%   pass_clause(+M, +Op, +In, +Out, +W, -Clause): `or`, `where` and window
%   filters pass an occurrence on over the same interval.

pass_clause(M, Op, In0, Out0, W, ('$on'(In, T1, T2, O) :- Body)) :-
    copy_term(Op-In0-Out0, Op1-In-Out),
    window_check(W, T1, T2, Check),
    pass_goal(Op1, M, In, Out, T1, T2, Goal),
    conj([Check, Goal, '$derived'(Out, T1, T2, O)], Body).

pass_goal(or, _, _, _, _, _, true).
pass_goal(filter, _, _, _, _, _, true).
pass_goal(where(G), M, In, Out, T1, T2, catch(etalis_runtime:user_goal(M:Test), E, etalis_runtime:goal_error(M, E, G1))) :-
    interval_goal(G, T1, T2, G1),
    condition_test(M, G1, In, Out, Test).

%!  condition_test(+Module, +Goal, +In, +Out, -Test) is det.
%
%   A `where` condition is a test, not a generator: Test succeeds once
%   for each distinct binding of the variables that Goal passes on
%   (those of Out that the occurrence In does not bind), so that
%   solutions that differ only in variables used nowhere else give one
%   occurrence; with no such variable, Test is once(Goal).  Goal runs in
%   the engine Module.

condition_test(M, G, In, Out, Test) :-
    term_variables(In, InVs),
    term_variables(Out, OutVs),
    exclude(shared_var(InVs), OutVs, New),
    (   New == []
    ->  Test = once(M:G)
    ;   Witness =.. [v|New],
        Test = solution_sequences:distinct(Witness, M:G)
    ).

%   temporal_clause(+M, +Id, +Op, +L, +R, +Out, +W, +Policy, +Extra, +Filters, -Phase-Clause)
%
%   The clause run when the Side operand of a temporal goal occurs.
%   Extra is `none`, or negation(N) for `(L seq R) cnot N`; Filters
%   as node_clauses/4 takes them.

temporal_clause(M, Id, Op, L0, R0, Out0, W, Policy, Extra0, Filters0, Phase-Clause) :-
    temporal_spec(Op, _, _, _, _, Stored),
    member(Side-Other, [right-left, left-right]),      % completing before storing
    (   memberchk(Side, Stored)
    ->  true
    ;   memberchk(Other, Stored)
    ),
    copy_term(L0-R0-Out0-Extra0-Filters0, L-R-Out-Extra-Filters),
    side_terms(Side, L, R, In, Partner),
    join_key(L, R, Key, KeyVs),
    payload(In, KeyVs, Mine),
    payload(Partner, KeyVs, Theirs),
    side_intervals(Side, i(T1,T2), i(U1,U2), A, B),
    temporal_spec(Op, A, B, Cond0, i(SX, EX), _),
    extra_condition(Extra, M, Id, L-R, A, B, W, T2, Cond0, Cond),
    window_check(W, T1, T2, Check),
    window_expiry(W, T2, Expiry),
    (   memberchk(Side, Stored)
    ->  store_index(Id, Side, MyIdx),
        resolve_policy(Policy, In, e(Mine, T1, T2), AddPolicy),
        (   Filters == none
        ->  add_goal(AddPolicy, MyStore, Key, e(Mine, T1, T2), Expiry, AddGoal)
        ;   filters_by_value(Filters, ByValue),
            filtered_add_goal(AddPolicy, ByValue, MyStore, Key, e(Mine, T1, T2), Expiry, AddGoal)
        ),
        Add = ( etalis_runtime:engine_store(M, MyIdx, MyStore), AddGoal )
    ;   Add = true
    ),
    result_interval(SX, EX, S, E, Interval),
    window_check(W, S, E, Fits),
    filters_test(Filters, M, Out, S, E, FireOut, Filtered, Computed),
    conj([Interval, Fits, Filtered], Result),
    Fire = '$derived'(FireOut, S, E, O),
    (   memberchk(Other, Stored)
    ->  Phase = complete,
        store_index(Id, Other, TheirIdx),
        Store = etalis_runtime:engine_store(M, TheirIdx, TheirStore),
        resolve_policy(Policy, Partner, e(Theirs, U1, U2), MatchPolicy),
        (   Filters == none
        ->  match_body(MatchPolicy, Store, TheirStore, Key, Expiry, e(Theirs, U1, U2),
                       Cond, Result, Add, Fire, Match)
        ;   filtered_match_body(MatchPolicy, Store, TheirStore, Key, Expiry, e(Theirs, U1, U2),
                                Cond, Interval-Fits-Filtered-Computed, Add, Fire, Match)
        )
    ;   Phase = store,
        Match = (Add, fail)
    ),
    conj([Check, Match], Body),
    Clause = ('$on'(In, T1, T2, O) :- Body).

%   extra_condition(+Extra, +M, +Id, +LR, +A, +B, +W, +End, +Cond0, -Cond)
%
%   `(A seq B) cnot N`: no N over [n1,n2] with a2 < n1 and n2 < b1,
%   among the N occurrences kept in the goal's right store.

extra_condition(none, _, _, _, _, _, _, _, Cond, Cond).
extra_condition(negation(N), M, Id, LR, i(_, A2), i(B1, _), W, End, Cond0, Cond) :-
    no_blocker(M, Id, N, LR, W, End, A2, B1, Unblocked),
    conj([Cond0, Unblocked], Cond).

%   no_blocker(+M, +Id, +N, +Ps, +W, +End, +After, +Before, -Goal): Goal
%   succeeds when no occurrence of the negated event N over [n1,n2] with
%   After < n1 and n2 < Before is kept in the right store of goal Id
%   (keyed by N's variables shared with the operands Ps).

no_blocker(M, Id, N, Ps, W, End, After, Before, \+ Blocker) :-
    negated_event(N, E),
    negation_key(E, Ps, Key, Payload),
    store_index(Id, right, Idx),
    window_expiry(W, End, Expiry),
    blocker_guard(M, N, N1, N2, Guard),
    conj([etalis_runtime:engine_store(M, Idx, NStore),
          etalis_store:store_pending(NStore, Key, Expiry, e(Payload, N1, N2)),
          After < N1,
          N2 < Before,
          Guard],
         Blocker).

%!  negated_event(+Negated, -Event) is det.
%
%   Event is the event whose occurrences a `cnot` or `fnot` goal keeps to
%   block, for its negated input Negated: guarded(Event, Goal), whose
%   Goal is tested on each candidate blocker (see
%   etalis_binarize:binarize_negation/7), or the event itself.

negated_event(guarded(E, _), E) :- !.
negated_event(E, E).

%!  input_name(+Input, -Name) is det.
%
%   Name is the name of the event a goal's input is (the kept event of
%   a guarded negated part, see negated_event/2).

input_name(In, Name) :-
    negated_event(In, E),
    functor(E, Name, _).

%   blocker_guard(+M, +N, +T1, +T2, -Goal): Goal tests the condition of
%   a guarded negated part N on a candidate blocker over [T1,T2], with
%   the occurrence it would block: one that raises an error blocks
%   nothing (a warning, as for any condition).

blocker_guard(M, guarded(_, G), T1, T2,
              catch(etalis_runtime:user_goal(M:once(M:G1)), Err, etalis_runtime:goal_error(M, Err, G1))) :- !,
    interval_goal(G, T1, T2, G1).
blocker_guard(_, _, _, _, true).

%   unblocked_clause(+M, +Id, +P, +N, +Out, +W, -Clause)
%
%   `P fnot N`: an occurrence of P over [t1,t2] passes on when no N over
%   [n1,n2] with t1 < n1 and n2 < t2 is kept in the goal's right store.

unblocked_clause(M, Id, P0, N0, Out0, W, ('$on'(P, T1, T2, O) :- Body)) :-
    copy_term(P0-N0-Out0, P-N-Out),
    window_check(W, T1, T2, Check),
    no_blocker(M, Id, N, P, W, T2, T1, T2, Unblocked),
    conj([Check, Unblocked, '$derived'(Out, T1, T2, O)], Body).

%   negated_clause(+M, +Id, +Ps, +N, +W, -Clause): the clause that keeps
%   every occurrence of the negated event N, keyed by the variables it
%   shares with the operands Ps.

negated_clause(M, Id, LR0, N0, W, ('$on'(N, T1, T2, _) :- Body)) :-
    copy_term(LR0-N0, LR-N1),
    negated_event(N1, N),
    negation_key(N, LR, Key, Payload),
    store_index(Id, right, Idx),
    window_check(W, T1, T2, Check),
    window_expiry(W, T2, Expiry),
    conj([Check,
          etalis_runtime:engine_store(M, Idx, Store),
          etalis_store:store_append(Store, Key, e(Payload, T1, T2), Expiry),
          fail],
         Body).

negation_key(N, LR, Key, Payload) :-
    join_key(N, LR, Key, KeyVs),
    payload(N, KeyVs, Payload).

side_terms(left, L, R, L, R).
side_terms(right, L, R, R, L).

side_intervals(left, Mine, Theirs, Mine, Theirs).
side_intervals(right, Mine, Theirs, Theirs, Mine).

%   match_body(+Policy, ...): store the arriving occurrence (Add) and
%   combine it with the partner's pending occurrences, as the policy
%   says.  A consuming policy stores it only when it completes nothing;
%   `continuous` combines it with every pending occurrence that fits
%   and consumes them all; `cumulative` takes them all too, as one
%   occurrence (see etalis_policies:accumulated/2).

match_body(Policy, Store, St, Key, Expiry, Entry, Cond, Result, Add, Fire, Body) :-
    consuming_all(Policy),
    !,
    conj([Cond, Result], Test),
    Body = ( Store,
             etalis_store:store_take_all(St, Key, Expiry, Entry, Test, Taken),
             (   Taken == []
             ->  Add, fail
             ;   Combine,
                 Result,
                 Fire
             ) ),
    (   Policy == cumulative
    ->  Combine = etalis_policies:accumulated(Taken, Entry)
    ;   Combine = member(Entry, Taken)
    ).
match_body(Policy, Store, St, Key, Expiry, Entry, Cond, Result, Add, Fire, Body) :-
    consuming(Policy),
    !,
    conj([Cond, Result], Test),
    match_goal(Policy, St, Key, Expiry, Entry, Test, Take),
    Body = ( Store,
             (   Take
             ->  Fire
             ;   Add, fail
             ) ).
match_body(Policy, Store, St, Key, Expiry, Entry, Cond, Result, Add, Fire, Body) :-
    match_goal(Policy, St, Key, Expiry, Entry, Cond, Match),
    conj([Add, Store, Match, Result, Fire], Body).

%   filtered_match_body(+Policy, ..., +Interval-Fits-Filtered, ...): as
%   match_body/11, for a goal with filters (Filtered): `continuous` and
%   `cumulative` take every pending occurrence that completes the
%   pattern and passes the filters (each on its own, before `cumulative`
%   combines them), and leave the others; `chronological`
%   takes the oldest pending occurrence that completes the pattern
%   (Cond, the window's Fits) and passes the filters; `recent` chooses
%   the newest that passes the filters, which then must complete the
%   pattern, so that with a filter that always passes it chooses as
%   without one.

filtered_match_body(Policy, Store, St, Key, Expiry, Entry, Cond, Interval-Fits-Filtered-Computed, Add, Fire,
                    Body) :-
    consuming_all(Policy),
    !,
    conj([Cond, Interval, Fits, Filtered], Test),
    (   Policy == cumulative
    ->  Taking = etalis_store:store_take_all(St, Key, Expiry, Entry, Test, Taken),
        conj([etalis_policies:accumulated(Taken, Entry), Interval, Computed, Fire], Each)
    ;   Fire = '$derived'(Out, S, E, _),
        Witness = w(Out, S, E),
        Taking = etalis_store:store_take_passing(St, Key, Expiry, Entry, Test, Witness, Taken),
        Each = ( member(Witness, Taken), Fire )
    ),
    Body = ( Store,
             Taking,
             (   Taken == []
             ->  Add, fail
             ;   Each
             ) ).
filtered_match_body(Policy, Store, St, Key, Expiry, Entry, Cond, Interval-Fits-Filtered-_, Add, Fire, Body) :-
    (   consuming(Policy)
    ->  conj([Cond, Interval, Fits, Filtered], Test),
        filtered_match_goal(Policy, St, Key, Expiry, Entry, Test, Take),
        Body = ( Store,
                 (   Take
                 ->  Fire
                 ;   Add, fail
                 ) )
    ;   conj([Interval, Filtered], Test),
        filtered_match_goal(Policy, St, Key, Expiry, Entry, Test, Take),
        conj([Add, Store, Take, Cond, Fits, Fire], Body)
    ).

%   The result interval, evaluated unless it is an operand's own bound.

result_interval(SX, EX, S, E, Goal) :-
    eval(SX, S, G1),
    eval(EX, E, G2),
    conj([G1, G2], Goal).

eval(X, V, true) :- var(X), !, V = X.
eval(X, V, V is X).

%   The join key: the variables that both operands share; a single
%   variable is its own key.

join_key(L, R, Key, Shared) :-
    term_variables(L, LV),
    term_variables(R, RV),
    include(shared_var(RV), LV, Shared),
    (   Shared == []
    ->  Key = []
    ;   Shared = [Key]
    ->  true
    ;   Key =.. [k|Shared]
    ).

%   The payload of a pending occurrence: its variables that are not in
%   the key (which the store already holds).

payload(Event, KeyVs, Payload) :-
    term_variables(Event, Vs),
    exclude(shared_var(KeyVs), Vs, Own),
    Payload =.. [p|Own].

shared_var(Vs, V) :-
    member(V0, Vs),
    V0 == V,
    !.

window_check(inf, _, _, true) :- !.
window_check(W, T1, T2, T2 - T1 =< W).

%   window_expiry(+W, +T2, -Expiry): which pending occurrences an
%   occurrence that ends at T2 shows to be too old for the window W
%   (see etalis_store:store_append/4).

window_expiry(inf, _, none) :- !.
window_expiry(W, T2, window(T2, W)).

%!  stored_input(+Node, ?Side, -Input, -Key, -Payload) is nondet.
%
%   The pending occurrences that Side of Node stores are Input, held
%   under join key Key with payload Payload (see the templates): unify
%   Key and Payload with a store entry's to see the occurrence.

stored_input(node(_, temporal(Op), [L0, R0], _, _, _), Side, In, Key, Payload) :-
    temporal_spec(Op, _, _, _, _, Stored),
    member(Side, Stored),
    copy_term(L0-R0, L-R),
    side_terms(Side, L, R, In, _),
    join_key(L, R, Key, KeyVs),
    payload(In, KeyVs, Payload).
stored_input(node(_, chain(S, Spec), _, _, _, _), left, In, Key, Payload) :-
    etalis_chains:chain_stored(chain(S, Spec), In, Key, Payload).
stored_input(node(_, Op, Inputs0, _, _, _), Side, In, Key, Payload) :-
    operator(Op, _, construct(_, Stored)),
    member(Side, Stored),
    copy_term(Inputs0, Inputs),
    construct_stored(Op, Side, Inputs, In, Key, Payload).

%   construct_stored(+Op, +Side, +Inputs, -Input, -Key, -Payload): the
%   stored Side of the construct Op (its table row lists its stored
%   sides) keeps Input under Key with Payload.

construct_stored(fnot, right, [P, N0], N, Key, Payload) :-
    negated_event(N0, N),
    negation_key(N, P, Key, Payload).
construct_stored(cnot, left, [L, R, _], L, Key, Payload) :-
    join_key(L, R, Key, KeyVs),
    payload(L, KeyVs, Payload).
construct_stored(cnot, right, [L, R, N0], N, Key, Payload) :-
    negated_event(N0, N),
    negation_key(N, L-R, Key, Payload).

%!  link_clause(+Link, -Clause) is det.
%
%   The clause that makes the rule head occur when its pattern does.

link_clause(link(_, Top0, Head0, _), ('$on'(Top, T1, T2, O) :- '$derived'(Head, T1, T2, O))) :-
    copy_term(Top0-Head0, Top-Head).

%!  timer_clauses(+Links, +Clauses0, -Clauses) is det.
%
%   Clauses are Clauses0 and, if a rule of Links has a timer as its
%   head ('$timer'(Event, When), see etalis_patterns:rule_head/5), the
%   clauses that set the timer when the rule's pattern occurs (see
%   etalis_runtime:timer_set/5): the timer is no event of its own.

timer_clauses(Links, Clauses0, Clauses) :-
    (   member(link(_, _, Head, _), Links),
        timer_head(Head)
    ->  append(Clauses0,
               [ ('$on'('$timer'(E, W), T1, T2, _) :-
                      etalis_runtime:timer_set('$engine', E, W, T1, T2), fail),
                 ('$on'('$timer'(E, W, Prov0), T1, T2, _) :-
                      flatten(Prov0, Prov),
                      etalis_runtime:timer_set('$engine', '$provenance'(E, Prov), W, T1, T2), fail)
               ], Clauses)
    ;   Clauses = Clauses0
    ).

timer_head('$timer'(_, _)).
timer_head('$timer'(_, _, _)).
timer_head('$select'(_, _, Head, _)) :-
    timer_head(Head).

%!  interval_goal(+Goal, +T1, +T2, -Goal1) is det.
%
%   Goal1 is the `where` condition Goal with the interval builtins
%   start/1 (or t1/1), end/1 (or t2/1), duration/1 and ETALIS's
%   check/N replaced for the pattern's interval [T1,T2].  ETALIS's
%   current_datime/1 (its machine's clock) is the time of the detection
%   being made, T2: a rule sees the time of its events.

interval_goal(G, _, _, call(G)) :-
    var(G),
    !.
interval_goal((A, B), T1, T2, (A1, B1)) :- !,
    interval_goal(A, T1, T2, A1),
    interval_goal(B, T1, T2, B1).
interval_goal((A ; B), T1, T2, (A1 ; B1)) :- !,
    interval_goal(A, T1, T2, A1),
    interval_goal(B, T1, T2, B1).
interval_goal((A -> B), T1, T2, (A1 -> B1)) :- !,
    interval_goal(A, T1, T2, A1),
    interval_goal(B, T1, T2, B1).
interval_goal((A *-> B), T1, T2, (A1 *-> B1)) :- !,
    interval_goal(A, T1, T2, A1),
    interval_goal(B, T1, T2, B1).
interval_goal(\+ A, T1, T2, \+ A1) :- !,
    interval_goal(A, T1, T2, A1).
interval_goal(start(X), T1, _, X = T1) :- !.
interval_goal(t1(X), T1, _, X = T1) :- !.
interval_goal(end(X), _, T2, X = T2) :- !.
interval_goal(t2(X), _, T2, X = T2) :- !.
interval_goal(duration(D), T1, T2, D is T2 - T1) :- !.
interval_goal(current_datime(X), _, T2, X = T2) :- !.  % ETALIS's clock: the detection's time
interval_goal(Check, T1, T2, Goal) :-
    compound(Check),
    compound_name_arguments(Check, check, Args),
    !,
    maplist(interval_arg(T1, T2), Args, Goals),
    conj(Goals, Goal).
interval_goal(G, _, _, G).

interval_arg(T1, T2, Arg, Goal) :-
    interval_goal(Arg, T1, T2, Goal).

conj(Goals, Conj) :-
    exclude(==(true), Goals, Goals1),
    (   Goals1 == []
    ->  Conj = true
    ;   foldl1_conj(Goals1, Conj)
    ).

foldl1_conj([G], G) :- !.
foldl1_conj([G|Gs], (G, C)) :-
    foldl1_conj(Gs, C).
