:- module(etalis_rule_policies,
          [ run_policy/3,               % +Policy0, +Default, -Policy
            stn_rule/3,                 % +Default, +Overrides, +Rule
            chained_rule/10,            % +Default, +Overrides, +Skips, +MaxAge, +Explain, +Rule0, -Rule, -Chain, +N0, -N
            rule_policy/7,              % +Default, +Overrides, +Skips, +MaxAge, +PlusRules, +Rule0, -Rule
            selection_clauses/3         % +Links, +Clauses0, -Clauses
          ]).
:- use_module(library(lists), [append/2, member/2]).
:- use_module('../errors', [etalis_error/3]).
:- use_module('../reader/kleene', [kleene_event/1]).
:- use_module(strategies, [selector/1, node_policy/2, selected_head/4]).
:- use_module(chains, [chain_rule/7]).
:- use_module(stn_runs, [stn_run_event/1]).
:- use_module(annotations, [annotated_pattern/4]).
:- use_module(rule_keys, [partition_selector/4, rule_key/4, pattern_window/3]).

/** <module> The policy and strategies each rule is compiled under

A rule runs under its label's policy or the file's (see
etalis_policies), with its skip strategy; this module checks that the
two go together and with the rule's pattern, and rewrites the rule for
them: a selector's rule offers its matches (etalis_strategies), a
sequence under `strict`, `nxt` or `last` becomes a chain
(etalis_chains), a condition under the contexts moves onto the
initiator it tests.
*/

%!  run_policy(+Policy0, +Default, -Policy) is det.
%
%   Policy is the policy of a rule whose `policy/2` directive says
%   Policy0; `'$run'` is that of the step of an ETALIS run (see
%   etalis_runs:running_aggregate/7), after the file's Default: every
%   pending run goes on with each P under `unrestricted` (the policy
%   `continuous`: one run per start, as ETALIS's compiler keeps them),
%   the oldest under `chronological`, the newest (a newer start starts
%   again) under `recent` and any other.

run_policy('$run', Default, Policy) :- !,
    (   Default == unrestricted
    ->  Policy = continuous
    ;   Default == chronological
    ->  Policy = chronological
    ;   Policy = recent
    ).
run_policy(Policy, _, Policy).

%!  stn_rule(+Default, +Overrides, +Rule) is semidet.
%
%   Rule runs under `stn` (see etalis_stn_runs).

stn_rule(Default, Overrides, rule(L, H, _, _, _)) :-
    rule_policy_name(Default, Overrides, L, H, stn).

%!  chained_rule(+Default, +Overrides, +Skips, +MaxAge, +Explain, +Rule0, -Rule, -Chain, +N0, -N) is det.
%
%   A sequence rule under `strict`, `nxt` or `last` is evaluated by a
%   goal of its own (see etalis_chains): Rule derives its head from the
%   event of Chain, '$chainN0', and N is N0 + 1; other rules stay as
%   they are, with Chain `none` and N = N0.  A rule with a skip strategy
%   offers its matches to be skipped (see strategy_rule/7), so it has no
%   chain.

chained_rule(Default, Overrides, Skips, MaxAge, Explain, Rule0, Rule, Chain, N0, N) :-
    Rule0 = rule(L, H, P0, Where, V),
    rule_policy_name(Default, Overrides, L, H, Policy),
    rule_skip(Skips, L, H, Skip),
    (   Skip == no_skip,
        chain_rule(Policy, Explain, MaxAge, N0, Rule0, Rule1, Chain1)
    ->  Rule = Rule1,
        Chain = Chain1,
        N is N0 + 1
    ;   node_policy(Policy, NodePolicy),
        memberchk(NodePolicy, [continuous, cumulative])
    ->  sunk_conditions(P0, P),
        Rule = rule(L, H, P, Where, V),
        Chain = none,
        N = N0
    ;   N = N0,
        Rule = Rule0,
        Chain = none
    ).

%   sunk_conditions(+Pattern0, -Pattern): under the contexts (and `stn`)
%   an initiator is eligible when it passes every condition that can be
%   checked once the terminator is added (strategies.md): a `where` on a
%   sequence that tests only variables of its left part (and not the
%   interval) moves onto that part, down to the smallest one that binds
%   them all, where it is part of that step's choice (see
%   etalis_policies:filtering_policy/1).

sunk_conditions(where(P0, G), P) :- !,
    sunk_conditions(P0, P1),
    (   \+ interval_condition(G),
        term_variables(G, GVs),
        sunk_condition(P1, G, GVs, P2)
    ->  P = P2
    ;   P = where(P1, G)
    ).
sunk_conditions(op(Op, A0, B0), op(Op, A, B)) :- !,
    sunk_conditions(A0, A),
    sunk_conditions(B0, B).
sunk_conditions(within(P0, W), within(P, W)) :- !,
    sunk_conditions(P0, P).
sunk_conditions(P, P).

sunk_condition(within(P0, W), G, GVs, within(P, W)) :- !,
    sunk_condition(P0, G, GVs, P).
sunk_condition(op(seq, L0, R), G, GVs, op(seq, L, R)) :-
    term_variables(L0, LVs),
    forall(member(V, GVs), ( member(LV, LVs), LV == V )),
    (   sunk_condition(L0, G, GVs, L1)
    ->  L = L1
    ;   L = where(L0, G)
    ).

interval_condition(G) :-
    sub_term(T, G),
    compound(T),
    (   functor(T, Name, 1),
        memberchk(Name, [start, end, t1, t2, duration, current_datime])
    ;   functor(T, check, _)
    ),
    !.

%!  rule_policy(+Default, +Overrides, +Skips, +MaxAge, +PlusRules, +Rule0, -Rule) is det.
%
%   Rule is the rule(L, H, P, W, V) Rule0 with the policy its goals are
%   compiled under, rule(L, H1, P1, W, V, Policy): under a selector or
%   with a skip strategy it offers its matches (see strategy_rule/7),
%   and with a MaxAge its pattern is within it.  PlusRules are the rules
%   of the `P+`s of the rule set.
%
%   @error etalis_error(Message, Hint) if its policy and skip strategy
%   do not go together or with its pattern.

rule_policy(Default, Overrides, Skips, MaxAge, PlusRules, rule(L, H0, P0, W, V), rule(L, H, P, W, V, Policy)) :-
    rule_policy_name(Default, Overrides, L, H0, Policy0),
    kleene_policy(Policy0, P0, W),
    rule_skip(Skips, L, H0, Skip),
    skip_policy(Skip, Policy0, W),
    (   Policy0 == strict(partition)
    ->  partition_selector(P0, PlusRules, MaxAge, Selector0)
    ;   Selector0 = Policy0
    ),
    (   Skip == no_skip
    ->  Skipping = Skip
    ;   rule_key(P0, PlusRules, _, SkipKey),
        skipping(Skip, P0, MaxAge, Skipping)
    ),
    strategy_rule(Policy0, Selector0, Skipping-SkipKey, L, W, H0-P0, H-P1),
    node_policy(Policy0, Policy),
    (   MaxAge == inf
    ->  P = P1
    ;   P = within(P1, MaxAge)
    ).

%   rule_policy_name(+Default, +Overrides, +Label, +Head, -Policy): the
%   policy of a rule: its label's, else the default; a `P+` runs under
%   `unrestricted` (every run; the rule using it selects), the runs of
%   a `P+` under `stn` under `stn` (see etalis_stn_runs).

rule_policy_name(Default, Overrides, L, H, Policy) :-
    (   kleene_event(H)
    ->  Policy = unrestricted
    ;   stn_run_event(H)
    ->  Policy = stn
    ;   L \== '', memberchk(L-Policy0-_, Overrides)
    ->  Policy = Policy0
    ;   Policy = Default
    ).

%   rule_skip(+Skips, +Label, +Head, -Skip): the skip strategy of a
%   rule: its label's, else the file's; none for a hidden rule (of a
%   `P+`, a run, ...), whose matches are parts of the rule's.

rule_skip(skips(Default, Overrides), L, H, Skip) :-
    (   callable(H), functor(H, Name, _), sub_atom(Name, 0, _, _, $)
    ->  Skip = no_skip
    ;   L \== '', memberchk(L-Skip0-_, Overrides)
    ->  Skip = Skip0
    ;   Skip = Default
    ).

%   skipping(+Skip, +Pattern, +MaxAge, -Skipping): how the selector of
%   a rule with Pattern applies Skip: `skip_to_next(Window)`, Window the
%   narrowest window around the whole (or MaxAge), after which a kept
%   first position can discard no later match and is forgotten.

skipping(skip_to_next, P, MaxAge, skip_to_next(W)) :- !,
    pattern_window(P, MaxAge, W).
skipping(Skip, _, _, Skip).

%   skip_policy(+Skip, +Policy, +Where): a skip strategy is defined
%   where a rule's matches do not depend on one another, so that leaving
%   out a match is discarding its partial matches: under `unrestricted`,
%   the selectors (filters on all matches), `stn` (independent runs) and
%   `continuous` (each initiator with each terminator).  Under `recent`,
%   `chronological` and `cumulative` an initiator is chosen (or all
%   combined), and which ones are discarded would change what is chosen.

skip_policy(no_skip, _, _) :- !.
skip_policy(Skip, Policy, Where) :-
    (   (   memberchk(Policy, [unrestricted, stn, continuous])
        ;   selector(Policy)
        )
    ->  true
    ;   format(string(M), "the skip strategy ~q is not defined under the policy ~q: it chooses the initiator of each match (or combines them), so discarding partial matches would change which match it makes", [Skip, Policy]),
        etalis_error(M, "use unrestricted, a selector (strict, nxt, last, max), stn or continuous, or no_skip", Where)
    ).

%   kleene_policy(+Policy, +Pattern, +Where): a pattern with `P+` runs
%   under `unrestricted` or a selector, and under `stn` in a sequence of
%   events (see etalis_stn_runs; the `P+` of any other pattern is still
%   there); the contexts are not defined on it (strategies.md).

kleene_policy(Policy, Pattern, Where) :-
    (   Policy \== unrestricted,
        \+ selector(Policy),
        sub_term(E, Pattern),
        kleene_event(E)
    ->  (   Policy == stn
        ->  M = "P+ (one or more in sequence) under stn is implemented in a sequence of events only (e1 seq ... seq P+ seq ... seq en, with a where and a within around it)",
            H = "write the rule as such a sequence, or use unrestricted or a selection strategy strict, nxt, last or max"
        ;   format(string(M), "P+ (one or more in sequence) is not defined under the policy ~q", [Policy]),
            H = "use unrestricted, or a selection strategy strict, nxt, last, max or stn"
        ),
        etalis_error(M, H, Where)
    ;   true
    ).

%   strategy_rule(+Policy, +Selector0, +Skip-RuleKey, +Label, +Where, +Head0-Pattern0, -Head-Pattern)
%
%   Under a selector (see etalis_strategies), or with a skip strategy,
%   the rule's occurrences carry the positions of their events and
%   derive '$select'/4, which offers them to the selector (`skip(S,
%   Skip, Key)` with a skip strategy, S the selector or `all`, Key the
%   rule's key, see etalis_rule_keys:rule_key/4), in place of the head.
%   An unlabelled rule is known to the selector by its position Where.

strategy_rule(Policy, Selector0, Skip-RuleKey, L, W, H0-P0, H-P) :-
    (   Skip == no_skip
    ->  selector(Policy),
        Selector = Selector0
    ;   selector(Policy)
    ->  Selector = skip(Selector0, Skip, RuleKey)
    ;   Selector = skip(all, Skip, RuleKey)
    ),
    !,
    (   L == '' -> Key = W ; Key = L ),
    annotated_pattern(position, P0, P, Prov),
    selected_head(Selector, Key, H0, H),
    arg(4, H, Prov).
strategy_rule(_, _, _, _, _, Rule, Rule).

%!  selection_clauses(+Links, +Clauses0, -Clauses) is det.
%
%   Clauses are Clauses0 and, with a rule under a selector, the clause
%   that offers its matches and the '$partition'/5 facts of the rules
%   under `strict(partition)` (see etalis_strategies).

selection_clauses(Links, Clauses0, Clauses) :-
    (   memberchk(link(_, _, '$select'(_, _, _, _), _), Links)
    ->  Offer = ('$on'('$select'(S, L, H, Ps), T1, T2, _) :-
                    etalis_strategies:offer('$engine', S, L, H, T1-T2, Ps), fail),
        findall('$partition'(L, Name, Arity, KeyArgs, W),
                (   member(link(_, _, '$select'(S0, L, _, _), _), Links),
                    (   S0 = partition(_, Skeletons, W)
                    ->  true
                    ;   S0 = skip(partition(_, Skeletons, W), _, _)
                    ),
                    member(skel(Name, Arity, KeyArgs), Skeletons)
                ),
                Partitions),
        append([Clauses0, [Offer], Partitions], Clauses)
    ;   Clauses = Clauses0
    ).
