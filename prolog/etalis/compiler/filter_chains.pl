:- module(etalis_filter_chains,
          [ filter_chains/4,            % +Nodes, +Links, -Chains, -Absorbed
            filter_input/2              % +Filter, -Input
          ]).
:- use_module(library(apply), [foldl/4]).
:- use_module(library(lists), [append/3, clumped/2, last/2, member/2]).
:- use_module(library(assoc), [empty_assoc/1, get_assoc/3, list_to_assoc/2, put_assoc/4]).
:- use_module(policies, [filtering_policy/1]).
:- use_module(operators, [input_name/2]).

/** <module> Filters that run inside the goal they filter

Under a policy that chooses, the conditions and negations directly on a
goal decide which of its occurrences the policy chooses among: such a
filter is compiled into the goal's own clauses (see
etalis_operators:node_clauses/4) rather than as a goal of its own.
*/

%!  filter_chains(+Nodes, +Links, -Chains, -Absorbed) is det.
%
%   Under a policy that chooses (etalis_policies:filtering_policy/1), a
%   `where` or `fnot` directly on a temporal or cnot goal, and those on
%   it in turn, filter that goal's occurrences before the policy
%   chooses (see etalis_operators:node_clauses/4).  Chains maps the Id
%   of such a goal to filters(List, Out); Absorbed holds the Ids of the
%   filter goals.  A filter is taken in only when it alone uses the
%   goal below it, with the same policy.

filter_chains(Nodes, Links, Chains, Absorbed) :-
    findall(Name, ( member(node(_, _, Ins, _, _, _), Nodes), member(In, Ins), input_name(In, Name) ),
            Used0),
    findall(Name, ( member(link(_, Out, _, _), Links), functor(Out, Name, _) ), Used1),
    append(Used0, Used1, Used2),
    msort(Used2, Used),
    clumped(Used, Counts),
    findall(Name-Node, ( member(Node, Nodes), Node = node(_, Op, [In|_], _, _, _),
                         filter_op(Op), functor(In, Name, _) ),
            Pairs),
    list_to_assoc(Counts, CountIndex),
    filter_index(Pairs, FilterIndex),
    findall(Id-Chain-Ids,
            ( member(node(Id, Op, _, Out, _, Policy), Nodes),
              chained_op(Op),
              filtering_policy(Policy),
              filter_chain(Out, Policy, CountIndex, FilterIndex, Filters, Ids),
              Filters = [_|_],
              last(Filters, Last),
              filter_out(Last, Final),
              Chain = filters(Filters, Final) ),
            Found),
    findall(Id-Chain, member(Id-Chain-_, Found), ChainPairs),
    list_to_assoc(ChainPairs, Chains),
    findall(FId-true, ( member(_-_-Ids, Found), member(FId, Ids) ), AbsorbedPairs),
    list_to_assoc(AbsorbedPairs, Absorbed).

filter_index(Pairs, Index) :-
    empty_assoc(Index0),
    foldl([K-V, I0, I]>>( get_assoc(K, I0, _) -> I = I0 ; put_assoc(K, I0, V, I) ), Pairs, Index0, Index).

filter_op(where(_)).
filter_op(fnot).

chained_op(temporal(_)).
chained_op(cnot).

%   filter_chain(+Out, +Policy, +Counts, +FilterIndex, -Filters, -Ids):
%   the filters that take the occurrences of Out, each used only by the
%   next, linked to Out's variables.

filter_chain(Out, Policy, Counts, FilterIndex, Filters, Ids) :-
    functor(Out, Name, _),
    (   get_assoc(Name, Counts, 1),
        get_assoc(Name, FilterIndex, node(FId, Op, Inputs, FOut, FW, Policy1)),
        Policy1 == Policy,
        linked_filter(Op, FId, Inputs, FOut, FW, Out, Filter, Next),
        combined_filter(Policy, Filter)
    ->  filter_chain(Next, Policy, Counts, FilterIndex, More, MoreIds),
        (   Filter = compute(_, _, _),
            More == []
        ->  Filters = [],
            Ids = []
        ;   Filters = [Filter|More],
            Ids = [FId|MoreIds]
        )
    ;   Filters = [],
        Ids = []
    ).

%   linked_filter(+Op, +Id, +Inputs, +Out0, +W, +Cur, -Filter, -Next): a
%   `where` that only computes values (see computation/2) is taken in as
%   compute(Goal, In, Out), and only on the way to a filter after it
%   (e.g. the provenance that explain(true) adds between a sequence and
%   its condition).

linked_filter(where(G0), _, [In0], Out0, _, Cur, Filter, Out) :-
    copy_term(G0-In0-Out0, G-In-Out),
    (   computation(G0, In0)
    ->  Filter = compute(G, Cur, Out)
    ;   Filter = where(G, Cur, Out)
    ),
    In = Cur.
linked_filter(fnot, Id, [P0, N0], Out0, W, Cur, fnot(Id, N, W, Cur, Out), Out) :-
    copy_term(P0-N0-Out0, P-N-Out),
    P = Cur.

%   computation(+Goal, +In): the where condition Goal only computes new
%   values (`X is Expr`, `X = T`, start(X), duration(D), ... of a
%   variable X that the occurrence In does not bind; the provenance
%   that explain(true) adds), so it filters nothing.

computation((A, B), In) :- !,
    computation(A, In),
    computation(B, In).
computation(X is _, In) :- !,
    fresh_var(X, In).
computation(X = _, In) :- !,                   % also the provenance of an `or`
    fresh_var(X, In).
computation(append(_, _, X), In) :- !,         % the provenance of a pattern
    fresh_var(X, In).
computation(G, In) :-
    compound(G),
    functor(G, Name, 1),
    memberchk(Name, [start, end, t1, t2, duration]),
    arg(1, G, X),
    fresh_var(X, In).

fresh_var(X, In) :-
    var(X),
    term_variables(In, Vs),
    \+ ( member(V, Vs), V == X ).

%   combined_filter(+Policy, +Filter): under `cumulative` the eligible
%   occurrences are combined after the filters passed them one by one,
%   so only a `where` that binds nothing new (a test) is part of the
%   choice, and one that only computes values runs again on the
%   combined occurrence; a condition that does both, or an `fnot`, runs
%   on the combined occurrence after it.

combined_filter(cumulative, compute(_, _, _)) :- !.
combined_filter(cumulative, where(_, In, Out)) :- !,
    term_variables(In, InVs),
    term_variables(Out, OutVs),
    forall(member(V, OutVs), ( member(I, InVs), I == V )).
combined_filter(cumulative, _) :- !,
    fail.
combined_filter(_, _).

%!  filter_input(+Filter, -Input) is det.
%
%   Input is the occurrence that Filter, one of the List of
%   filters(List, Out), takes.

filter_input(where(_, In, _), In).
filter_input(compute(_, In, _), In).
filter_input(fnot(_, _, _, In, _), In).

filter_out(where(_, _, Out), Out).
filter_out(compute(_, _, Out), Out).
filter_out(fnot(_, _, _, _, Out), Out).
