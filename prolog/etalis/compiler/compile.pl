:- module(etalis_compile,
          [ compile_items/3,            % +Items, +Options, -Compiled
            compile_more/3,             % +Items, +Compiled0, -Compiled
            compile_without/3,          % +Label, +Compiled0, -Compiled
            selecting_program/1,        % +Compiled
            condition_rules/3,          % +Compiled, +Goal, -Rules
            list_to_assoc_set/2         % +Keys, -Set
          ]).
:- use_module(library(apply), [exclude/3, foldl/4, foldl/6, include/3, maplist/3, maplist/4]).
:- use_module(library(lists), [append/3, intersection/3, member/2, nth1/3, numlist/3, select/3, subtract/3]).
:- use_module(library(assoc), [assoc_to_keys/2, empty_assoc/1, get_assoc/3, list_to_assoc/2, put_assoc/4]).
:- use_module(library(error), [must_be/2]).
:- use_module('../errors', [etalis_error/3]).
:- use_module('../reader/kleene', [kleene_event/1]).
:- use_module('../reader/directives', [file_directives/2, option_policy/2, unique_labels/1, check_overrides/2,
                                       triggered_events/5, default_inference_limit/1]).
:- use_module(binarize, [binarize_rules/2, binarize_rules/3]).
:- use_module(operators, [link_clause/2, timer_clauses/3, negated_event/2, interval_goal/4]).
:- use_module(strategies, [reported_head/2]).
:- use_module(chains, [chain_node/3]).
:- use_module(stn_runs, [stn_runs/5, stn_run_event/1]).
:- use_module(hidden_names, [no_hidden_names/1, hidden_count/3, hidden_names_count/4, numbered_items/4]).
:- use_module(recursion, [check_recursion/2, repeating_events/2]).
:- use_module(rule_policies, [run_policy/3, stn_rule/3, chained_rule/10, rule_policy/7, selection_clauses/3]).
:- use_module(annotations, [explained_rule/2, explained_specs/3, kleene_positions/2]).
:- use_module(clause_order, [ordered_clauses/3]).
:- use_module(unfold, [unfold_links/2]).
:- reexport(unfold, [map_derived/3]).
:- reexport(program_listing, [compiled_listing/1, node_pattern/3]).

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

This module is the compiler's front and its bookkeeping of a rule set;
the jobs along the way are the modules it loads: each rule's policy and
strategies (etalis_rule_policies), provenance and positions
(etalis_annotations), the goals (etalis_binarize), their clauses in
order (etalis_clause_order, etalis_operators) and the links unfolded
(etalis_unfold).  It also exports, from etalis_unfold, map_derived/3
and, from etalis_program_listing, compiled_listing/1 and
node_pattern/3.

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

%   rules_and_settings(+Items, +Options, +Defaults, -Rules, -Statics, -Settings)
%
%   The rules of Items with their policies, and the settings they are
%   compiled with: those of the file, over Defaults (the settings of
%   the engine being extended, or none).  Each setting is taken from
%   Options, else from the file's directives, else from Defaults.

rules_and_settings(Items0, Options, Defaults, Rules, Statics, Settings) :-
    Given = [options(Options), defaults(Defaults)],        % settings that no directive gives
    no_hidden_names(NoNames),
    setting(hidden_names, Given, NoNames, Names0),
    numbered_items(Items0, Names0, Items, Names1),
    include(is_rule, Items, Rules0),
    include(is_static, Items, Statics),
    file_directives(Items, Directives),
    Places = [options(Options), directives(Directives), defaults(Defaults)],
    setting(policy, Places, unrestricted, Policy),
    findall(L-P-W, ( member(rule_policy(L, P0, W), Directives), run_policy(P0, Policy, P) ), Overrides),
    setting(skip, [directives(Directives), defaults(Defaults)], no_skip, SkipDefault),
    findall(L-S-W, member(rule_skip(L, S, W), Directives), SkipOverrides),
    setting(lateness, Given, none, Lateness),
    default_inference_limit(DefaultLimit),
    setting(inference_limit, Given, DefaultLimit, Limit),
    setting(max_age, Places, inf, MaxAge),
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
    setting(explain, Given, false, Explain),
    Chosen = given(Policy, Overrides, skips(SkipDefault, SkipOverrides), MaxAge, Explain),
    policy_rules(Chosen, Rules1, Names1, Rules, Chains, Names),
    reported_events(Options, Directives, Defaults, Items-Rules0, Explain, Explicit, Printed, Asked),
    explained_specs(Explain, Repeating0, Repeating),
    Settings = _{policy: Policy, skip: SkipDefault, max_age: MaxAge, lateness: Lateness, explain: Explain,
                 inference_limit: Limit, repeating: Repeating,
                 rule_items: RuleItems, printed: Printed, asked: Asked,
                 printed_explicit: Explicit, overrides: Overrides,
                 directives: Directives, chains: Chains, hidden_names: Names}.

%   setting(+Key, +Places, +Default, -Value): the setting Key from the
%   first of Places that gives it (see setting/3), else Default.

setting(Key, Places, Default, Value) :-
    (   setting(Key, Places, Value0)
    ->  Value = Value0
    ;   Value = Default
    ).

%   setting(+Key, +Places, -Value) is semidet: the setting Key from the
%   first of Places that gives it: options(Options), the compile call's
%   options, checked (see option_setting/3); directives(Directives), the
%   rule file's; defaults(Dict), the settings of the engine extended.

setting(Key, Places, Value) :-
    member(Place, Places),
    place_setting(Place, Key, Value),
    !.

place_setting(options(Options), Key, Value) :-
    option_setting(Key, Options, Value).
place_setting(directives(Directives), Key, Value) :-
    Directive =.. [Key, Value],
    memberchk(Directive, Directives).
place_setting(defaults(Defaults), Key, Value) :-
    get_dict(Key, Defaults, Value).

%   option_setting(+Key, +Options, -Value) is semidet: the setting Key as
%   Options give it, checked (explain is taken from Options only when true).

option_setting(policy, Options, Policy) :-
    option_policy(Options, Policy).
option_setting(hidden_names, Options, Names) :-
    memberchk(hidden_names(Names), Options).
option_setting(lateness, Options, Lateness) :-
    memberchk(lateness(Lateness), Options),
    must_be(between(0.0, inf), Lateness).
option_setting(inference_limit, Options, Limit) :-
    memberchk(inference_limit(Limit), Options),
    (   Limit == inf -> true ; must_be(positive_integer, Limit) ).
option_setting(max_age, Options, MaxAge) :-
    memberchk(max_age(MaxAge), Options),
    must_be(between(0.0, inf), MaxAge).
option_setting(explain, Options, true) :-
    memberchk(explain(true), Options).

%   policy_rules(+Given, +Rules0, +Names0, -Rules, -Chains, -Names): the
%   rules Rules0 as compiled under their policies and strategies (see
%   etalis_rule_policies), with the chains they use, and the numbers of
%   the hidden events that makes (runs under `stn`, chains).

policy_rules(given(Policy, Overrides, Skips, MaxAge, Explain), Rules1, Names1, Rules, Chains, Names) :-
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
    maplist(rule_policy(Policy, Overrides, Skips, MaxAge, PlusRules), Rules3, Rules).

%   reported_events(+Options, +Directives, +Defaults, +Items-Rules, +Explain, -Explicit, -Printed, -Asked):
%   the events reported (Printed, Explicit `true` when they are named
%   rather than all derived ones, see program_compiled/4) and those
%   reported per occurrence of a `print_trigger/1` rule (Asked).

reported_events(Options, Directives, Defaults, Items-Rules0, Explain, Explicit, Printed, Asked) :-
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
    (   var(Asked) -> Asked = [] ; true ).          % per occurrence: print_trigger/1 rules only

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

%   with_chains(+Settings0, +Program0, -Program, -Settings): the goals
%   of the chains of Settings0 (see etalis_rule_policies:chained_rule/10)
%   added to Program0, numbered after its own.

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
    ordered_clauses(Nodes, Links, NodeClauses),
    maplist(link_clause, Links, LinkClauses0),
    selection_clauses(Links, LinkClauses0, LinkClauses1),
    timer_clauses(Links, LinkClauses1, LinkClauses),
    findall('$reported'(T), ( member(N/A, Printed), functor(T, N, A) ), Reported),
    append(NodeClauses, LinkClauses, OnClauses0),
    unfold_links(OnClauses0, OnClauses),
    append(Reported, OnClauses, Clauses),
    length(Links, NRules),
    out_index(Nodes, Index),
    maplist(rule_goals(Index), Links, RuleGoals),
    Settings = Settings0.put(_{printed: Printed, rules: NRules, rule_goals: RuleGoals}).

%!  condition_rules(+Compiled, +Goal, -Rules) is det.
%
%   Rules are the rules of Compiled whose `where` condition Goal (as it
%   ran, its variables bound) is, each Head-pos(Source, Line, Column)
%   (the head as the rule gives it, or a hidden event's), in file
%   order: those of the goals with the most specific condition Goal is
%   an instance of; [] if none (a condition that another step rewrote).
%   A goal shared by rules with the same condition belongs to each.

condition_rules(compiled(program(Nodes, Links), _, _, _), Goal, Rules) :-
    findall(C-Id, ( member(node(Id, Op, _, _, _, _), Nodes),
                    sub_term(C, Op),
                    compound(C),
                    interval_goal(C, _, _, C1),
                    subsumes_term(C1, Goal) ),
            Found),
    exclude(more_general(Found), Found, Specific),
    findall(Id, member(_-Id, Specific), Ids0),
    sort(Ids0, Ids),
    out_index(Nodes, Index),
    findall(Hidden-Pos-Head, ( member(Link, Links),
                               Link = link(_, _, Head0, Pos),
                               reported_head(Head0, Head),
                               rule_goals(Index, Link, _-Used),
                               intersection(Used, Ids, [_|_]),
                               hidden_head(Head, Hidden) ),
            Rules0),
    sort(Rules0, Rules1),                    % the rule file's own rules first
    findall(Head-Pos, member(_-Pos-Head, Rules1), Rules2),
    one_per_position(Rules2, Rules).

hidden_head(Head, Hidden) :-
    functor(Head, Name, _),
    (   sub_atom(Name, 0, _, _, $) -> Hidden = true ; Hidden = false ).

%   one_per_position(+Rules0, -Rules): the first rule of each line: the
%   hidden rules of one `P+` (its first occurrence and its steps) are
%   part of one rule of the file.

one_per_position([], []).
one_per_position([H-Pos|Rs0], [H-Pos|Rs]) :-
    Pos = pos(Src, Line, _),
    exclude(same_line(Src, Line), Rs0, Rs1),
    one_per_position(Rs1, Rs).

same_line(Src, Line, _-pos(Src, Line, _)).

more_general(Found, C-_) :-
    member(C2-_, Found),
    subsumes_term(C, C2),
    \+ subsumes_term(C2, C),
    !.

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
