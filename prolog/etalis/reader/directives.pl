:- module(etalis_directives,
          [ file_directives/2,          % +Items, -Directives
            option_policy/2,            % +Options, -Policy
            unique_labels/1,            % +Rules
            check_overrides/2,          % +Overrides, +Rules
            triggered_events/5,         % +Items, +Rules, +Where, -Printed, -Asked
            default_inference_limit/1   % -Limit
          ]).
:- use_module(library(apply), [foldl/4, include/3, maplist/3]).
:- use_module(library(lists), [append/3, member/2, nth1/3, subtract/3]).
:- use_module(library(pairs), [group_pairs_by_key/2]).
:- use_module(library(aggregate), [aggregate_all/3]).
:- use_module(library(error), [domain_error/2]).
:- use_module('../errors', [etalis_error/3]).
:- use_module(terms, [duration_seconds/4]).
:- use_module('../compiler/policies', [policy/1, policy_hint/1]).
:- use_module('../rdf/knowledge', [prefix_declaration/4, ontology_declaration/3]).
:- use_module('../safety/sandbox', [sandboxed_true/3, changed_predicates/2]).
:- use_module('../compiler/strategies', [reported_head/2, skip_strategy/1]).

/** <module> The directives of a rule file

file_directives/2 checks and normalises the directives of a rule file;
etalis_compile:compile_items/3 compiles the rules with the settings
they give.

Directives understood in a rule file:

  - `:- policy(P).` the default consumption policy of the file;
  - `:- policy(Label, P).` the policy of the rule labelled Label;
  - `:- skip(S).` and `:- skip(Label, S).` what a match of a rule (of
    every rule, or of the one labelled Label) skips after it:
    `no_skip`, `skip_to_next` or `skip_past_last_event` (see
    etalis_strategies:skip_strategy/1);
  - `:- print_events([Name/Arity, ...]).` the events that are
    reported (default: the head of every rule);
  - `:- max_age(D).` pending goals of a pattern without a window are
    dropped once older than D: the pattern behaves as `P within D`.
  - `:- prefix(P, IRI).` P:Local names the IRI IRI followed by Local
    (see expand_prefixes/2);
  - `:- ontology(File).` or `:- ontology(File, [entailment(E)])`:
    background knowledge to load into the engine; kept in the
    settings' directives as ontology(Path, E, Where);
  - `:- input(Name/Arity).` or `:- input([Name/Arity, ...])`: the
    events that come from outside (optional, for `etalis check`); kept
    as input(Name/Arity, Where), one per event;
  - `:- dynamic(Name/Arity).` (or a list): a predicate of the file's
    static rules that may have no clauses, and that its static rules
    may assert and retract; kept as dynamic(Name/Arity, Where).

A predicate whose facts a rule or static clause asserts or retracts,
written out (`assert(seen(X))`), is kept as changed(Name/Arity, Where):
the engine declares it dynamic unless a module gives it (see
etalis_load:load_statics/3), as if the file declared it.
*/

%!  file_directives(+Items, -Directives) is det.
%
%   Directives are the directive(D, Where) items of Items, checked and
%   normalised, most recent first.
%
%   @error etalis_error(Message, Hint) at an unknown or malformed
%   directive.

file_directives(Items, Directives) :-
    include(is_directive, Items, Directives0),
    foldl(directive, Directives0, [], Directives1),
    changed_predicates(Items, Changed),
    findall(changed(PI, Where), member(PI-Where, Changed), Implied),
    append(Implied, Directives1, Directives).

is_directive(directive(_, _)).

%!  triggered_events(+Items, +Rules, +Where, -Printed, -Asked) is det.
%
%   Printed are the events that the print_trigger/1 of the file's static
%   rules reports, asked once, at load, as ETALIS asks it first for each
%   event: an event Name/Arity that the Rules derive (or that a
%   print_trigger fact names) is reported when
%   print_trigger(all_defined_events) or print_trigger(Name/Arity)
%   succeeds.  ETALIS then asks print_trigger(Event) of each occurrence:
%   Asked are the other events, if print_trigger/1 is a rule (a clause
%   with a body), whose occurrences are reported when it succeeds for
%   them (see etalis_runtime:trigger_asked/2).

triggered_events(Items, Rules, Where, Printed, Asked) :-
    findall(N/A, ( member(rule(_, Head0, _, _, _), Rules),
                   reported_head(Head0, Head),
                   functor(Head, N, A),
                   \+ sub_atom(N, 0, _, _, $) ), Derived),
    findall(N/A, ( member(static(print_trigger(Spec), _), Items),
                   nonvar(Spec), Spec = N/A, atom(N), integer(A) ), Named),
    append(Derived, Named, Events0),
    sort(Events0, Events),
    findall(Goal-Where, ( Goal = print_trigger(all_defined_events)
                        ; member(E, Events), Goal = print_trigger(E) ), Goals),
    sandboxed_true(Items, Goals, True),
    (   memberchk(print_trigger(all_defined_events)-_, True)
    ->  Printed = Events
    ;   findall(E, member(print_trigger(E)-_, True), Printed)
    ),
    (   memberchk(static((print_trigger(_) :- _), _), Items)
    ->  subtract(Events, Printed, Asked)
    ;   Asked = []
    ).

%!  default_inference_limit(-Limit) is det.
%
%   The inference limit per event of an engine made without option
%   inference_limit(N): far above what realistic rules need per event
%   (the examples need at most 413, the random rules of the semantics
%   tests at most 38,970), so that only a `where` condition that does
%   not end, or detections that multiply without bound, reach it, after
%   a second or so.

default_inference_limit(10_000_000).

%!  option_policy(+Options, -Policy) is semidet.
%
%   Policy is given by option policy(Policy) of Options.
%
%   @error domain_error(etalis_policy, Policy) if it is no policy.

option_policy(Options, Policy) :-
    memberchk(policy(Policy), Options),
    nonvar(Policy),
    (   policy(Policy)
    ->  true
    ;   domain_error(etalis_policy, Policy)
    ).

directive(directive(D, Where), Ds0, Ds) :-
    (   directive_(D, Where, Ds0, Ds)
    ->  true
    ;   directive_text(D, Text),
        format(string(M), "unknown directive ~s", [Text]),
        etalis_error(M, "known directives: policy(P), policy(Label, P), skip(S), skip(Label, S), print_events([Name/Arity, ...]), max_age(Duration), prefix(Prefix, IRI), ontology(File), input(Name/Arity), dynamic(Name/Arity)", Where)
    ).

%   directive_label(+Label, +Example, +Where): Label, of a directive
%   about one rule (Example shows one), is the atom of a rule label.

directive_label(Label, Example, Where) :-
    (   atom(Label)
    ->  true
    ;   format(string(Hint), "write e.g. :- ~w.", [Example]),
        etalis_error("a rule label must be an atom", Hint, Where)
    ).

%   directive_text(+D, -Text): D as written, its principal functor in
%   standard form (`initialization(halt)`, not `initialization halt`).

directive_text(D, Text) :-
    (   compound(D)
    ->  compound_name_arguments(D, Name, Args),
        format(string(Open), "~q(", [Name]),
        foldl([A, S0, S]>>( S0 == "" -> format(string(S), "~q", [A])
                                     ; format(string(S), "~s, ~q", [S0, A]) ),
              Args, "", ArgsText),
        format(string(Text), "~s~s)", [Open, ArgsText])
    ;   format(string(Text), "~q", [D])
    ).

directive_(policy(P), Where, Ds, [policy(P)|Ds]) :-
    valid_policy(P, Where).
directive_(policy(Label, P), Where, Ds, [rule_policy(Label, P, Where)|Ds]) :-
    valid_policy(P, Where),
    directive_label(Label, "policy(my_rule, recent)", Where).
directive_(skip(S), Where, Ds, [skip(S)|Ds]) :-
    valid_skip(S, Where).
directive_(skip(Label, S), Where, Ds, [rule_skip(Label, S, Where)|Ds]) :-
    valid_skip(S, Where),
    directive_label(Label, "skip(my_rule, skip_past_last_event)", Where).
directive_(print_events(Specs), Where, Ds, [print_events(Printed)|Ds]) :-
    (   is_list(Specs), maplist(event_spec, Specs, Printed)
    ->  true
    ;   etalis_error("print_events takes a list of Name/Arity", "write e.g. :- print_events([alarm/1]).", Where)
    ).
directive_('$print_trigger', Where, Ds, [print_trigger(Where)|Ds]).  % see etalis_declarations:trigger_rules/3
directive_('$print_trigger_facts', _, Ds, Ds).  % the print_events above made of print_trigger/1 facts: for etalis check
directive_('$run_policy'(Label), Where, Ds, [rule_policy(Label, '$run', Where)|Ds]).  % see etalis_rule_policies:run_policy/3
directive_(max_age(D), Where, Ds, [max_age(Seconds)|Ds]) :-
    duration_seconds(D, [], Where, Seconds).
directive_(prefix(P, IRI), Where, Ds, [prefix(P, NS)|Ds]) :-
    prefix_declaration(P, IRI, Where, NS).
directive_(ontology(File), Where, Ds, [Ontology|Ds]) :-
    ontology_declaration(ontology(File), Where, Ontology).
directive_(ontology(File, Options), Where, Ds, [Ontology|Ds]) :-
    ontology_declaration(ontology(File, Options), Where, Ontology).
directive_(dynamic(PIs), Where, Ds0, Ds) :-       % see etalis_declarations/2
    is_list(PIs),
    located(PIs, dynamic, Where, Ds0, Ds).
directive_(input(Specs0), Where, Ds0, Ds) :-
    (   is_list(Specs0) -> Specs = Specs0 ; Specs = [Specs0] ),
    (   Specs \== [], maplist(event_spec, Specs, Inputs)
    ->  located(Inputs, input, Where, Ds0, Ds)
    ;   etalis_error("input takes an event Name/Arity or a list of them",
                     "write e.g. :- input(reading/3). or :- input([hot/1, smoke/1]).", Where)
    ).

%   located(+Specs, +Name, +Where, +Ds0, -Ds): Ds is Ds0 after Name(Spec,
%   Where) for each of Specs, the last first (as directives collect).

located([], _, _, Ds, Ds).
located([S|Ss], Name, Where, Ds0, Ds) :-
    D =.. [Name, S, Where],
    located(Ss, Name, Where, [D|Ds0], Ds).

event_spec(N/A, N/A) :- atom(N), integer(A), A >= 0.

valid_policy(P, Where) :-
    (   var(P)
    ->  etalis_error("a consumption policy must be named, not a variable",
                     "write e.g. :- policy(recent).", Where)
    ;   policy(P)
    ->  true
    ;   format(string(M), "unknown consumption policy ~q", [P]),
        policy_hint(Hint),
        etalis_error(M, Hint, Where)
    ).

valid_skip(S, Where) :-
    (   atom(S), skip_strategy(S)
    ->  true
    ;   format(string(M), "unknown skip strategy ~q", [S]),
        etalis_error(M, "write :- skip(S). or :- skip(Label, S). with S no_skip, skip_to_next or skip_past_last_event", Where)
    ).

%!  unique_labels(+Rules) is det.
%
%   No two rules have the same label; else the error is at the second rule of the first label (in file order) that
%   is used twice.

unique_labels(Rules) :-
    findall(L-(I-Where), ( nth1(I, Rules, rule(L, _, _, Where, _)), L \== '' ), Pairs),
    keysort(Pairs, Sorted),
    group_pairs_by_key(Sorted, Groups),
    (   aggregate_all(min(I, L-Where),
                      member(L-[I-_, _-Where|_], Groups),
                      min(_, L-Where))
    ->  format(string(M), "the label ~q is used by more than one rule", [L]),
        etalis_error(M, "give each rule its own label", Where)
    ;   true
    ).

%!  check_overrides(+Overrides, +Rules) is det.
%
%   Every Label-Policy-Where of Overrides (the `policy(Label, P)`
%   directives) names a rule of Rules.
%
%   @error etalis_error(Message, Hint) at the directive otherwise.

check_overrides(Overrides, Rules) :-
    forall(member(Label-_-Where, Overrides),
           (   memberchk(rule(Label, _, _, _, _), Rules)
           ->  true
           ;   format(string(M), "no rule is labelled ~q", [Label]),
               etalis_error(M, "label the rule: Label : Head <- Pattern.", Where)
           )).
