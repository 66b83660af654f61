:- module(etalis_compile,
          [ compile_items/3,            % +Items, +Options, -Compiled
            compile_more/3,             % +Items, +Compiled0, -Compiled
            compile_without/3,          % +Label, +Compiled0, -Compiled
            compiled_listing/1,         % +Compiled
            node_pattern/3,             % +Op, +Inputs, -Pattern
            selecting_program/1,        % +Compiled
            map_derived/3,              % :Rewrite, +Body0, -Body
            list_to_assoc_set/2         % +Keys, -Set
          ]).
:- use_module(library(apply), [exclude/3, foldl/4, foldl/5, foldl/6, include/3, maplist/3, maplist/4]).
:- use_module(library(lists), [append/2, append/3, clumped/2, intersection/3, last/2, max_list/2,
                               member/2, nth1/3, numlist/3, select/3, subtract/3]).
:- use_module(library(pairs), [pairs_values/2]).
:- use_module(library(assoc), [assoc_to_keys/2, empty_assoc/1, get_assoc/3, list_to_assoc/2,
                               put_assoc/4]).
:- use_module(library(error), [must_be/2]).
:- use_module(library(listing), [portray_clause/3]).
:- use_module('../reader/syntax', [pattern_text/2]).
:- use_module('../errors', [etalis_error/3]).
:- use_module('../reader/kleene', [kleene_event/1]).
:- use_module(binarize).
:- use_module(operators).
:- use_module(optable, [construct_parts/3, map_sub_patterns/3]).
:- use_module(policies, [filtering_policy/1]).
:- use_module(strategies, [selector/1, node_policy/2, selected_head/4, reported_head/2]).
:- use_module(chains, [chain_rule/7, chain_event/1, chain_node/3, chain_clauses/3, chain_pattern/2]).
:- use_module(stn_runs, [stn_runs/5, stn_run_event/1]).
:- use_module(hidden_names, [no_hidden_names/1, hidden_count/3, hidden_names_count/4, numbered_items/4]).
:- use_module('../reader/directives', [file_directives/2, option_policy/2, unique_labels/1, check_overrides/2,
                           triggered_events/5, default_inference_limit/1]).
:- use_module(recursion, [check_recursion/2, repeating_events/2]).

/** <module> Compiling rule files into event-driven clauses

compile_items/3 turns the items of a rule file (see read_etl_file/2)
into compiled(Program, Clauses, Statics, Settings):

  - Program: the binary goals, see binarize_rules/2;
  - Clauses: the '$on'/4 and '$reported'/1 clauses of the engine;
  - Statics: static(Clause, Where), the file's background knowledge;
  - Settings: a dict with keys `policy` (the default policy),
    `overrides` (Label-Policy-Where for labelled rules), `printed`
    (Name/Arity of the reported events), `rules` (how many),
    `rule_goals` (Name-GoalIds: the binary goals each rule uses; Name
    is the rule's label, or `line N`), `directives` (the file's
    directives, checked and normalised, most recent first) and
    `hidden_names` (the numbers of the hidden events so far, see
    etalis_hidden_names).


The directives of a rule file are checked in etalis_directives, the
recursion of its rules in etalis_recursion; etalis_load loads the
compiled rules into an engine.
*/

%!  compile_items(+Items, +Options, -Compiled) is det.
%
%   Options: recursion(unchecked), to read rules that an engine would
%   refuse for recursing without end (see check_recursion/2), for tools;
%   policy(P), a default policy that overrides the file's own
%   `:- policy(P)` directive; only_rules(Ns), compile only the event
%   rules numbered Ns (1-based, in file order, as the `rules` request
%   lists them); report(Specs), report exactly the events Specs
%   (Name/Arity), overriding `:- print_events(...)`;
%   inference_limit(N), the most inferences one event may take (a
%   positive integer or `inf`; default default_inference_limit/1);
%   hidden_names(Names), the numbers the hidden events of Items start
%   from (default none made yet, see etalis_hidden_names).
%
%   @error etalis_error(Message, Hint) with the position of the problem.

compile_items(Items, Options, Compiled) :-
    rules_and_settings(Items, Options, _{}, Rules, Statics, Settings0),
    binarize_rules(Rules, Program0),
    with_chains(Settings0, Program0, Program, Settings1),
    program_compiled(Program, Statics, Settings1, Compiled).

%!  compile_more(+Items, +Compiled0, -Compiled) is det.
%
%   Extend the compiled rule set Compiled0 with the rules, static rules
%   and `policy/2` directives of Items.  Goals identical to existing
%   ones are shared, so their pending goals carry on.

compile_more(Items, compiled(Program0, _, _, Settings0), Compiled) :-
    rules_and_settings(Items, [], Settings0, Rules, Statics, Settings1),
    existing_labels(Program0, Labels),
    forall(( member(rule(L, _, _, Where, _, _), Rules), L \== '', memberchk(L, Labels) ),
           (   format(string(M), "the label ~q is used by a rule already loaded", [L]),
               etalis_error(M, "give each rule its own label, or remove the old rule first", Where)
           )),
    binarize_rules(Rules, Program0, Program1),
    with_chains(Settings1, Program1, Program, Settings2),
    program_compiled(Program, Statics, Settings2, Compiled).

%!  compile_without(+Label, +Compiled0, -Compiled) is semidet.
%
%   Remove the rule labelled Label; the goals that no remaining rule
%   uses go with it.  Fails if no rule has that label.

compile_without(Label, compiled(program(Nodes0, Links0), _, _, Settings0), Compiled) :-
    select(link(Label, _, _, _), Links0, Links),
    !,
    out_index(Nodes0, Index),
    findall(Id, ( member(Link, Links), rule_goals(Index, Link, _-Ids), member(Id, Ids) ), Used0),
    sort(Used0, Used),
    list_to_assoc_set(Used, UsedSet),
    include(used_node(UsedSet), Nodes0, Nodes),
    program_compiled(program(Nodes, Links), [], Settings0, Compiled).

used_node(Used, node(Id, _, _, _, _, _)) :-
    get_assoc(Id, Used, _).

%!  list_to_assoc_set(+Keys, -Set) is det.
%
%   Set is an assoc with the Keys as keys (each with value `true`).

list_to_assoc_set(Keys, Set) :-
    sort(Keys, Unique),
    findall(K-true, member(K, Unique), Pairs),
    list_to_assoc(Pairs, Set).

existing_labels(program(_, Links), Labels) :-
    findall(L, ( member(link(L, _, _, _), Links), L \== '' ), Labels).

%   rules_and_settings(+Items, +Options, +Defaults, -Rules, -Statics, -Settings)
%
%   The rules of Items with their policies, and the settings they are
%   compiled with: those of the file, over Defaults (the settings of
%   the engine being extended, or none).

rules_and_settings(Items0, Options, Defaults, Rules, Statics, Settings) :-
    (   memberchk(hidden_names(Names0), Options)
    ->  true
    ;   get_dict(hidden_names, Defaults, Names0)
    ->  true
    ;   no_hidden_names(Names0)
    ),
    numbered_items(Items0, Names0, Items, Names1),
    include(is_rule, Items, Rules0),
    include(is_static, Items, Statics),
    file_directives(Items, Directives),
    (   option_policy(Options, Policy)
    ->  true
    ;   memberchk(policy(Policy), Directives)
    ->  true
    ;   get_dict(policy, Defaults, Policy)
    ->  true
    ;   Policy = unrestricted
    ),
    findall(L-P-W, ( member(rule_policy(L, P0, W), Directives), run_policy(P0, Policy, P) ), Overrides),
    (   memberchk(skip(SkipDefault), Directives)
    ->  true
    ;   get_dict(skip, Defaults, SkipDefault)
    ->  true
    ;   SkipDefault = no_skip
    ),
    findall(L-S-W, member(rule_skip(L, S, W), Directives), SkipOverrides),
    Skips = skips(SkipDefault, SkipOverrides),
    (   memberchk(lateness(Lateness), Options)
    ->  must_be(between(0.0, inf), Lateness)
    ;   get_dict(lateness, Defaults, Lateness)
    ->  true
    ;   Lateness = none
    ),
    (   memberchk(inference_limit(Limit), Options)
    ->  (   Limit == inf -> true ; must_be(positive_integer, Limit) )
    ;   get_dict(inference_limit, Defaults, Limit)
    ->  true
    ;   default_inference_limit(Limit)
    ),
    (   memberchk(max_age(MaxAge), Options)
    ->  must_be(between(0.0, inf), MaxAge)
    ;   memberchk(max_age(MaxAge), Directives)
    ->  true
    ;   get_dict(max_age, Defaults, MaxAge)
    ->  true
    ;   MaxAge = inf
    ),
    unique_labels(Rules0),
    check_overrides(Overrides, Rules0),
    check_overrides(SkipOverrides, Rules0),

    selected_rules(Options, Rules0, Rules1),
    (   get_dict(rule_items, Defaults, Earlier) -> true ; Earlier = [] ),
    append(Earlier, Rules1, RuleItems),
    (   memberchk(recursion(unchecked), Options)
    ->  repeating_events(RuleItems, Repeating0)
    ;   check_recursion(RuleItems, Repeating0)
    ),
    (   memberchk(explain(true), Options)
    ->  Explain = true
    ;   get_dict(explain, Defaults, Explain)
    ->  true
    ;   Explain = false
    ),
    hidden_count(Names1, etalis_stn_run, S0),
    stn_runs(stn_rule(Policy, Overrides), Rules1, RulesS, S0, S),
    hidden_count(Names1, etalis_chain, C0),
    foldl(chained_rule(Policy, Overrides, Skips, MaxAge, Explain), RulesS, RulesC, Chains0, C0, C),
    hidden_names_count(Names1, etalis_stn_run, S, Names2),
    hidden_names_count(Names2, etalis_chain, C, Names),
    exclude(==(none), Chains0, Chains),
    (   Explain == true
    ->  maplist(explained_rule, RulesC, Rules2)
    ;   Rules2 = RulesC
    ),
    maplist(kleene_positions, Rules2, Rules3),
    include([rule(_, H, _, _, _)]>>( kleene_event(H) ; stn_run_event(H) ), Rules3, PlusRules),
    maplist(rule_policy(Policy, Overrides, Skips, MaxAge, PlusRules), Rules3, Rules),
    (   memberchk(report(Printed0), Options)
    ->  Explicit = true,
        (   memberchk(print_trigger(Where), Directives)     % a stage on Spark: ask as the whole file does
        ->  triggered_events(Items, Rules0, Where, _, Asked1),
            intersection(Printed0, Asked1, Asked0),
            subtract(Printed0, Asked0, PrintedR),
            explained_specs(Explain, PrintedR, Printed),
            explained_specs(Explain, Asked0, Asked)
        ;   explained_specs(Explain, Printed0, Printed)
        )
    ;   memberchk(print_events(Printed0), Directives)
    ->  Explicit = true,
        explained_specs(Explain, Printed0, Printed)
    ;   memberchk(print_trigger(Where), Directives)
    ->  Explicit = true,
        triggered_events(Items, Rules0, Where, Printed0, Asked0),
        explained_specs(Explain, Printed0, Printed),
        explained_specs(Explain, Asked0, Asked)
    ;   get_dict(printed_explicit, Defaults, true)
    ->  Explicit = true,
        Printed = Defaults.printed
    ;   Explicit = false,
        Printed = []
    ),
    (   var(Asked) -> Asked = [] ; true ),          % per occurrence: print_trigger/1 rules only
    explained_specs(Explain, Repeating0, Repeating),
    Settings = _{policy: Policy, skip: SkipDefault, max_age: MaxAge, lateness: Lateness, explain: Explain,
                 inference_limit: Limit, repeating: Repeating,
                 rule_items: RuleItems, printed: Printed, asked: Asked,
                 printed_explicit: Explicit, overrides: Overrides,
                 directives: Directives, chains: Chains, hidden_names: Names}.

%   chained_rule(+Default, +Overrides, +Skips, +MaxAge, +Explain, +Rule0, -Rule, -Chain, +N0, -N)
%
%   A sequence rule under `strict`, `nxt` or `last` is evaluated by a
%   goal of its own (see etalis_chains): Rule derives its head from the
%   event of Chain, '$chainN0', and N is N0 + 1; other rules stay as
%   they are, with Chain `none` and N = N0.  A rule with a skip strategy
%   offers its matches to be skipped (see strategy_rule/6), so it has no
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

%   stn_rule(+Default, +Overrides, +Rule): Rule runs under `stn` (see
%   etalis_stn_runs).

stn_rule(Default, Overrides, rule(L, H, _, _, _)) :-
    rule_policy_name(Default, Overrides, L, H, stn).

%   with_chains(+Settings0, +Program0, -Program, -Settings): the goals
%   of the chains of Settings0 (see chained_rule/7) added to Program0,
%   numbered after its own.

with_chains(Settings0, program(Nodes0, Links), program(Nodes, Links), Settings) :-
    del_dict(chains, Settings0, Chains, Settings),
    foldl([node(Id, _, _, _, _, _), M0, M]>>(M is max(M0, Id)), Nodes0, 0, Max),
    length(Chains, NChains),
    numlist_from(Max, NChains, Ids),
    maplist(chain_node, Chains, Ids, New),
    append(Nodes0, New, Nodes).

numlist_from(_, 0, []) :- !.
numlist_from(Max, N, Ids) :-
    First is Max + 1,
    Last is Max + N,
    numlist(First, Last, Ids).

%   explained_rule(+Rule0, -Rule)
%
%   With provenance (option explain(true)), every event carries one
%   more argument: the list of input occurrences det(E, T1, T2) it was
%   built from.  Input events get it when they arrive; a pattern's is
%   the concatenation of its operands' (an aggregate's is empty, and a
%   negated event's is not kept).

explained_rule(rule(L, H0, P0, W, V), rule(L, H, P, W, V)) :-
    annotated_pattern(explain, P0, P, Prov),
    with_provenance(H0, Prov, H).

%   annotated_pattern(+Kind, +Pattern0, -Pattern, -Prov)
%
%   Pattern is Pattern0 whose occurrences carry Prov, built up from its
%   events: with Kind `explain` the input occurrences det(E, T1, T2)
%   (see explained_rule/2), with Kind `position` the positions of the
%   input events in the stream (see etalis_strategies:position/1; an
%   aggregate counts as one event, at the position where it is
%   computed).  Each operator's is the concatenation of its operands';
%   a negated pattern's is not kept.

annotated_pattern(K, event(E0), P, Prov) :-
    annotated_event(K, E0, P, Prov).
annotated_pattern(K, op(Op, A0, B0), where(op(Op, A, B), append(PA, PB, Prov)), Prov) :-
    annotated_pattern(K, A0, A, PA),
    annotated_pattern(K, B0, B, PB).
annotated_pattern(K, P0, P, Prov) :-
    construct_parts(P0, Name, Parts0),
    (   memberchk(_-aggregated-_, Parts0)
    ->  annotated_aggregate(K, P0, P, Prov)
    ;   aggregate_all(count, member(_-pattern-_, Parts0), Alternatives),
        foldl(annotated_part(K, Alternatives, Prov), Parts0, Parts, none, Joined),
        construct_parts(P1, Name, Parts),
        joined_provenance(Joined, Alternatives, P1, P, Prov)
    ).

%   annotated_part(+Kind, +Alternatives, ?Prov, +Part0, -Part, +Joined0, -Joined):
%   a part of a construct annotated as its kind says: an occurrence of
%   the construct has the provenance of its one `pattern` part, or of
%   the one of its Alternatives that occurred, or of both operands of
%   its `sequence` part (Joined is then append(PA, PB), else `none`);
%   a negated part's is not kept.

annotated_part(K, N, Prov, Key-pattern-S0, Key-pattern-S, J, J) :-
    !,
    (   N =:= 1
    ->  annotated_pattern(K, S0, S, Prov)
    ;   annotated_pattern(K, S0, S1, PS),
        S = where(S1, Prov = PS)
    ).
annotated_part(K, _, _, Key-sequence-op(seq, A0, B0), Key-sequence-op(seq, A, B), _, append(PA, PB)) :-
    !,
    annotated_pattern(K, A0, A, PA),
    annotated_pattern(K, B0, B, PB).
annotated_part(K, _, _, Key-negated-C0, Key-negated-C, J, J) :-
    !,
    negated_pattern(K, C0, C).
annotated_part(_, _, _, Part, Part, J, J).

joined_provenance(none, N, P, P, Prov) :-
    (   N =:= 0 -> Prov = [] ; true ).
joined_provenance(append(PA, PB), _, P1, where(P1, append(PA, PB, Prov)), Prov).

annotated_event(explain, E0, event(E), Prov) :-
    with_provenance(E0, Prov, E).
annotated_event(position, E, event(E), Prov) :-
    (   kleene_event(E)
    ;   stn_run_event(E)
    ;   chain_event(E)
    ),
    !,
    arg(1, E, Prov).
annotated_event(position, E, where(event(E), etalis_strategies:position(P)), [P]).

%!  selecting_program(+Compiled) is semidet.
%
%   Compiled has a rule under a selection strategy (its head is
%   '$select'/4, see etalis_strategies) or a rule of a `P+` (or of its
%   runs under `stn`), whose
%   events carry their positions in the stream: the engine counts its
%   input events and selects matches.

selecting_program(compiled(program(_, Links), _, _, _)) :-
    member(link(_, _, Head, _), Links),
    (   Head = '$select'(_, _, _, _)
    ;   kleene_event(Head)
    ;   stn_run_event(Head)
    ),
    !.

%   kleene_positions(+Rule0, -Rule): a rule of a `P+` (or of its runs
%   under `stn`) binds the first argument of its head to the positions
%   of its events (which a selection or skip strategy compares); other
%   rules are left as they are.

kleene_positions(rule(L, H, P0, W, V), rule(L, H, P, W, V)) :-
    (   (   kleene_event(H)
        ;   stn_run_event(H)
        )
    ->  annotated_pattern(position, P0, P, Prov),
        arg(1, H, Prov)
    ;   P = P0
    ).

negated_pattern(explain, C0, C) :-
    annotated_pattern(explain, C0, C, _).
negated_pattern(position, C, C).

annotated_aggregate(explain, Agg0, Agg, []) :-
    map_sub_patterns([S0, S]>>annotated_pattern(explain, S0, S, _), Agg0, Agg).
annotated_aggregate(position, Agg, where(Agg, etalis_strategies:position(P)), [P]).

with_provenance(E0, Prov, E) :-
    E0 =.. List0,
    append(List0, [Prov], List),
    E =.. List.

explained_specs(false, Specs, Specs).
explained_specs(true, Specs0, Specs) :-
    maplist(explained_spec, Specs0, Specs).

explained_spec(N/A0, N/A) :-
    A is A0 + 1.

%   program_compiled(+Program, +Statics, +Settings0, -Compiled)
%
%   The clauses of Program, and the settings that follow from it.

program_compiled(Program, Statics, Settings0, compiled(Program, Clauses, Statics, Settings)) :-
    Program = program(Nodes, Links),
    (   Settings0.printed_explicit == true
    ->  Printed = Settings0.printed
    ;   findall(N/A, ( member(link(_, _, H0, _), Links),
                       reported_head(H0, H),
                       functor(H, N, A),
                       \+ sub_atom(N, 0, _, _, $) ),       % hidden, see running_aggregate/7
                Printed0),
        sort(Printed0, Printed)
    ),
    % An event completes pending goals before it becomes pending itself:
    % the clauses that combine an occurrence with pending goals come
    % first, and among them upper goals (made later), so that an event
    % derived from an occurrence cannot replace or consume what a goal is
    % about to combine with that same occurrence.
    out_index(Nodes, Index),
    upward(Nodes, Upward),
    filter_chains(Nodes, Links, Chains, Absorbed),
    terminating_filters(Nodes, Links, Terminating),
    findall(P-C, ( member(Node, Upward), goal_clauses(Chains, Absorbed, Node, Cs), member(P0-C0, Cs),
                   ranked_clause(Terminating, Node, P0-C0, P-C) ),
            Phased),
    phase_order(Phased, NodeClauses),
    maplist(link_clause, Links, LinkClauses0),
    selection_clauses(Links, LinkClauses0, LinkClauses1),
    timer_clauses(Links, LinkClauses1, LinkClauses),
    findall('$reported'(T), ( member(N/A, Printed), functor(T, N, A) ), Reported),
    append(NodeClauses, LinkClauses, OnClauses0),
    unfold_links(OnClauses0, OnClauses),
    append(Reported, OnClauses, Clauses),
    length(Links, NRules),
    maplist(rule_goals(Index), Links, RuleGoals),
    Settings = Settings0.put(_{printed: Printed, rules: NRules, rule_goals: RuleGoals}).

%   selection_clauses(+Links, +Clauses0, -Clauses): with a rule under a
%   selector, the clause that offers its matches (see etalis_strategies).

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
    foldl(named_height, Nodes, Names0, Names),
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

named_height(node(_, _, Inputs, Out, _, _), Names0, Names) :-
    foldl(input_height(Names0), Inputs, 0, H0),
    H is H0 + 1,
    functor(Out, Name, _),
    put_assoc(Name, Names0, H, Names).

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

%   filter_chains(+Nodes, +Links, -Chains, -Absorbed)
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

filter_input(where(_, In, _), In).
filter_input(compute(_, In, _), In).
filter_input(fnot(_, _, _, In, _), In).

filter_out(where(_, _, Out), Out).
filter_out(compute(_, _, Out), Out).
filter_out(fnot(_, _, _, _, Out), Out).

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

%   out_index(+Nodes, -Index): Index maps the name of each goal's
%   intermediate event ('$ieN', one per goal) to the goal.

out_index(Nodes, Index) :-
    findall(Name-Node, ( member(Node, Nodes), Node = node(_, _, _, Out, _, _), functor(Out, Name, _) ),
            Pairs),
    list_to_assoc(Pairs, Index).

%   rule_goals(+Index, +Link, -Name-GoalIds): the binary goals that a
%   rule's pattern uses (shared goals belong to every rule using them).

rule_goals(Index, link(Label, Out, _, pos(_, Line, _)), Name-Ids) :-
    (   Label == ''
    ->  format(atom(Name), 'line ~d', [Line])
    ;   Name = Label
    ),
    empty_assoc(Seen0),
    goals_of(Out, Index, Seen0, Seen),
    assoc_to_keys(Seen, Ids).

goals_of(E, Index, Seen0, Seen) :-
    (   functor(E, Name, _),
        get_assoc(Name, Index, node(Id, _, Inputs, _, _, _)),
        \+ get_assoc(Id, Seen0, _)
    ->  put_assoc(Id, Seen0, true, Seen1),
        foldl(input_goals(Index), Inputs, Seen1, Seen)
    ;   Seen = Seen0
    ).

input_goals(Index, In, Seen0, Seen) :-
    negated_event(In, E),
    goals_of(E, Index, Seen0, Seen).

%   input_name(+Input, -Name): the name of the event a goal's input is
%   (the kept event of a guarded negated part, see
%   etalis_binarize:binarize_negation/7).

input_name(In, Name) :-
    negated_event(In, E),
    functor(E, Name, _).

%   unfold_links(+Clauses0, -Clauses)
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

intermediate(E) :-
    functor(E, Name, _),
    sub_atom(Name, 0, _, _, '$ie').

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

%   selected_rules(+Options, +Rules0, -Rules): with option only_rules(Ns),
%   the event rules numbered Ns (1-based, in file order); all otherwise.

selected_rules(Options, Rules0, Rules) :-
    (   memberchk(only_rules(Ns), Options)
    ->  must_be(list(positive_integer), Ns),
        list_to_assoc_set(Ns, Selected),
        findall(R, ( nth1(I, Rules0, R), get_assoc(I, Selected, _) ), Rules)
    ;   Rules = Rules0
    ).

is_rule(rule(_, _, _, _, _)).
is_static(static(_, _)).

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

%   run_policy(+Policy0, +Default, -Policy): the policy of a rule;
%   `'$run'` is that of the step of an ETALIS run (see
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

%   strategy_rule(+Policy, +Skip, +Label, +Where, +Head0-Pattern0, -Head-Pattern)
%
%   Under a selector (see etalis_strategies), or with a skip strategy,
%   the rule's occurrences carry the positions of their events and
%   derive '$select'/4, which offers them to the selector (`skip(S,
%   Skip, Key)` with a skip strategy, S the selector or `all`, Key the
%   rule's key, see rule_key/4), in place of the head.  An unlabelled rule is known to the selector by its
%   position Where.

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

%   partition_selector(+Pattern, +PlusRules, +MaxAge, -Selector): what
%   `strict(partition)` selects by on a rule with Pattern:
%   partition(Key, Skeletons, Window), Key the term k(V1, ...) of the
%   variables that every event of the rule (those of its `P+` too, from
%   their rules PlusRules) has as an argument, Skeletons the
%   skel(Name, Arity, KeyArgs) of its events (KeyArgs the arguments that
%   are the key's variables, in order) and Window the narrowest window
%   around the whole (or MaxAge), beyond which an event is in no match.

partition_selector(P, PlusRules, MaxAge, partition(Key, Skeletons, Window)) :-
    rule_key(P, PlusRules, Events, Key),
    Key =.. [k|KeyVars],
    findall(skel(Name, Arity, KeyArgs),
            (   member(E, Events),
                functor(E, Name, Arity),
                maplist(argument_index(E), KeyVars, KeyArgs)
            ),
            Skeletons0),
    sort(Skeletons0, Skeletons),
    pattern_window(P, MaxAge, Window).

%   rule_key(+Pattern, +PlusRules, -Events, -Key): Key is the term k(V1,
%   ...) of the variables that every one of the Events of a rule with
%   Pattern (see rule_events/3) has as an argument: its partitions, and
%   what its skip strategy is kept apart by.

rule_key(P, PlusRules, Events, Key) :-
    rule_events(P, PlusRules, Events),
    maplist(argument_variables, Events, VarLists),
    (   VarLists = [First|Others]
    ->  include(in_every(Others), First, KeyVars0)
    ;   KeyVars0 = []
    ),
    list_to_ord_set_eq(KeyVars0, KeyVars),
    Key =.. [k|KeyVars].

argument_variables(E, Vs) :-
    (   compound(E)
    ->  E =.. [_|Args],
        include(var, Args, Vs)
    ;   Vs = []
    ).

in_every(VarLists, V) :-
    forall(member(Vs, VarLists), ( member(X, Vs), X == V )).

argument_index(E, V, I) :-
    arg(I, E, X),
    X == V,
    !.

list_to_ord_set_eq([], []).
list_to_ord_set_eq([V|Vs], [V|Set]) :-
    exclude(==(V), Vs, Rest),
    list_to_ord_set_eq(Rest, Set).

%   rule_events(+Pattern, +PlusRules, -Events): the events of Pattern,
%   each `P+` (or run of one under `stn`) replaced by the events of the
%   rule of its first occurrence (whose head is unified with it, so
%   that their variables are the rule's).

rule_events(P, PlusRules, Events) :-
    event_terms(P, Es0, []),
    foldl(plus_events(PlusRules), Es0, Events, []).

event_terms(T, Es0, Es) :-
    (   var(T)
    ->  Es0 = Es
    ;   T = event(E)
    ->  Es0 = [E|Es]
    ;   compound(T)
    ->  T =.. [_|Args],
        foldl(event_terms, Args, Es0, Es)
    ;   Es0 = Es
    ).

plus_events(PlusRules, E, Events0, Events) :-
    (   (   kleene_event(E)
        ;   stn_run_event(E)
        )
    ->  functor(E, Name, Arity),
        functor(H, Name, Arity),
        (   member(rule(_, H0, B0, _, _), PlusRules),
            subsumes_term(H, H0),
            event_terms(B0, BodyEvents, []),
            \+ ( member(E1, BodyEvents), compound(E1), functor(E1, Name, _) )
        ->  copy_term(H0-B0, H1-B1),
            E =.. [_, _|Args],
            H1 =.. [_, _|Args1],
            maplist(outer_argument, Args, Args1),
            rule_events(B1, PlusRules, Inner),
            append(Inner, Events, Events0)
        ;   Events0 = Events
        )
    ;   Events0 = [E|Events]
    ).

%   outer_argument(+A, ?A1): A1, an argument of the head of the first
%   rule of a `P+`, is A unless it is the list of an own variable.

outer_argument(A, A1) :-
    (   nonvar(A1), A1 = [_]
    ->  true
    ;   A1 = A
    ).

%   pattern_window(+Pattern, +MaxAge, -Window): the narrowest window of
%   the `within`s around the whole of Pattern, and MaxAge.

pattern_window(within(P, W0), MaxAge, W) :- !,
    pattern_window(P, MaxAge, W1),
    W is min(W0, W1).
pattern_window(where(P, _), MaxAge, W) :- !,
    pattern_window(P, MaxAge, W).
pattern_window(_, MaxAge, MaxAge).

%!  compiled_listing(+Compiled) is det.
%
%   Print the binary goals and the generated clauses of Compiled.

compiled_listing(compiled(program(Nodes, Links), Clauses, _, Settings)) :-
    Policy = Settings.policy,
    Printed = Settings.printed,
    format("% default policy: ~w~n% reported events: ~q~n~n% Binary goals~n", [Policy, Printed]),
    forall(member(Node, Nodes), print_node(Node)),
    format("~n% Rules~n"),
    forall(member(link(Label, Out, Head, pos(_, Line, _)), Links),
           (   copy_term(Out-Head, O-H),
               numbervars(O-H, 0, _),
               format("~q <- ~q.    % ~w line ~w~n", [H, O, Label, Line]) )),
    format("~n% Event-driven clauses~n"),
    forall(member(C, Clauses), portray_clause(current_output, C, [module(etalis_syntax)])).

print_node(node(Id, Op, Inputs, Out, W, Policy)) :-
    node_pattern(Op, Inputs, Pattern),
    pattern_text('<-'(Out, Pattern), Text),
    format("~d: ~s    % window ~w, ~w~n", [Id, Text, W, Policy]).

%!  node_pattern(+Op, +Inputs, -Pattern) is det.
%
%   Pattern is the binary goal Op over Inputs written as a pattern (with
%   the operator names of the rule language), for listings and
%   Engine.pending().

node_pattern(chain(S, Spec), _, P) :- chain_pattern(chain(S, Spec), P).
node_pattern(temporal(Op), [L, R], P) :- P =.. [Op, L, R].
node_pattern(or, [L, R], or(L, R)).
node_pattern(cnot, [L, R, N0], cnot(seq(L, R), N)) :- guard_pattern(N0, N).
node_pattern(fnot, [P, N0], fnot(P, N)) :- guard_pattern(N0, N).
node_pattern(where(G), [In], where(In, G)).
node_pattern(filter, [In], In).
node_pattern(aggregate(Fun, X, Window, R), [In], aggregate(F, In, Window, R)) :-
    (   Fun == count -> F = count ; F =.. [Fun, X] ).

guard_pattern(guarded(E, G), where(E, G)) :- !.
guard_pattern(N, N).
