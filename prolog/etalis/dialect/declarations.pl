:- module(etalis_declarations,
          [ etalis_declarations/2,      % +Items0, -Items
            rule_property/4,            % +Where, +VarNames, +Property, -Window
            rule_properties/3,          % +Windows, +Pattern0, -Pattern
            rule_action/3               % +Action, +Pattern0, -Pattern
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module('../errors', [etalis_error/3]).
:- use_module('../reader/terms', [term_words/3, static_clause/2, duration_seconds/4]).

/** <module> Original ETALIS's declarations and rule forms

Files written for original ETALIS read with ETALIS's meaning: label
properties (`Label([property(Name, Value)]) : Head <- Pattern`, see
rule_property/4), `do` actions (rule_action/3), print_trigger/1 and
event_rule_property/3 facts, and directives that declare dynamic
predicates and assert facts (etalis_declarations/2).
*/

%!  rule_property(+Where, +VarNames, +Property, -Window) is det.
%
%   A property of an original ETALIS rule label, as the window it puts
%   on the rule (none for one that changes only when memory is freed);
%   VarNames name the rule's variables in a message.
%   `event_rule_window` and `window` both keep the occurrences whose
%   interval lasts at most that many seconds (as `within`);
%   `window_step` is how often ETALIS sweeps expired goals, which
%   etalis-py does as events arrive.

rule_property(W, VarNames, Property, Window) :-
    (   Property = property(Name, Value), atom(Name)
    ->  rule_property(Name, Value, W, VarNames, Window)
    ;   term_words(Property, VarNames, Words),
        format(string(M), "~w is not a rule property", [Words]),
        etalis_error(M, "write Label([property(event_rule_window, Seconds)]) : Head <- Pattern.", W)
    ).

rule_property(event_rule_window, D, W, VarNames, within(S)) :- !,
    duration_seconds(D, VarNames, W, S).
rule_property(window, D, W, VarNames, within(S)) :- !,
    duration_seconds(D, VarNames, W, S).
rule_property(window_step, D, W, VarNames, none) :- !,
    duration_seconds(D, VarNames, W, _).
rule_property(Name, _, W, _, _) :-
    format(string(M), "unknown rule property ~q", [Name]),
    etalis_error(M, "etalis-py knows event_rule_window and window (both as `within`) and window_step (no effect: expired goals are dropped as events arrive); for out-of-order events use the lateness option", W).

%!  rule_properties(+Windows, +Pattern0, -Pattern) is det.
%
%   Pattern is Pattern0 within each window of the rule's properties.

rule_properties(Windows, Pattern0, Pattern) :-
    foldl(rule_window, Windows, Pattern0, Pattern).

rule_window(none, P, P).
rule_window(within(S), P0, P) :-
    windowed(P0, S, P).

windowed(where(P0, G), S, where(P, G)) :- !,
    windowed(P0, S, P).
windowed(P, S, within(P, S)).

%!  rule_action(+Action, +Pattern0, -Pattern) is det.
%
%   Pattern is Pattern0 with the action Action of a rule: original
%   ETALIS runs the action of `Head do Action <- Pattern` as a
%   condition after the pattern, before the head is derived (its `do` is
%   its `where`).

rule_action(true, P, P) :- !.
rule_action(Action, P, where(P, Action)).

%   Declarations of original ETALIS rule files
%
%   Original ETALIS rule files declare some things with plain facts,
%   which are read as etalis-py's own directives and rule windows:
%
%     - `print_trigger(Name/Arity).` (also `print_trigger(all_defined_events)`,
%       and `_` for any name or arity): the events that are printed.
%       They become one `:- print_events([...])` of the events that the
%       file's rules derive and that some print_trigger names (etalis-py
%       reports derived events; an input event is not echoed);
%     - `event_rule_property(Label, Name, Value).`: a property of the
%       rule labelled Label, as in `Label([property(Name, Value)]) : Head
%       <- P` (see rule_property/4).
%
%   A print_trigger/1 defined by a rule with a body stays a static
%   predicate of the file, evaluated once at load for the events the
%   file derives (see trigger_rules/3); an event_rule_property/3 defined
%   by a rule with a body (a condition evaluated as ETALIS runs) is
%   refused with the etalis-py equivalent.

%!  etalis_declarations(+Items0, -Items) is det.
%
%   Items are Items0 with the ETALIS declaration facts turned into what
%   they mean.
%
%   @error etalis_error(Message, Hint) at a declaration that cannot be
%   taken over.

etalis_declarations(Items0, Items) :-
    foldl(database_directive, Items0, Items000, []),
    trigger_rules(Items000, Items00, Kept),
    partition(declaration(Kept), Items00, Declarations, Items1),
    (   Declarations == []
    ->  Items = Items1
    ;   include(is_declaration(print_trigger), Declarations, Printed),
        include(is_declaration(event_rule_property), Declarations, Properties),
        foldl(property_window, Properties, Items1, Items2),
        print_directive(Printed, Items2, Items)
    ).

%   database_directive(+Item)//: a directive of original ETALIS that
%   declares dynamic predicates and adds facts (`:- dynamic(p/1),
%   assert(p(on)).`) as its parts: a `dynamic(PIs)` directive (PIs a
%   list of Name/Arity) and the static clauses it asserts; a wrapped
%   fact (wrapped_clause/2) as what it wraps.  Any other item is
%   itself.

database_directive(Item) -->
    (   { Item = directive(D, Where),
          database_goals(D, Goals)
        }
    ->  database_items(Goals, Where)
    ;   { Item = static(Wrapped, Where),
          wrapped_clause(Wrapped, Clause)
        }
    ->  { static_clause(Clause, Where) },
        [static(Clause, Where)]
    ;   [Item]
    ).

%   wrapped_clause(+Fact, -Clause): ETALIS asserts the Clause of a fact
%   db(Clause), prolog(Clause) or static(Clause), and takes
%   external_trigger(E) as print_trigger(E).

wrapped_clause(Fact, Clause) :-
    compound(Fact),
    compound_name_arguments(Fact, Name, [Arg]),
    (   memberchk(Name, [db, prolog, static])
    ->  Clause = Arg
    ;   Name == external_trigger
    ->  Clause = print_trigger(Arg)
    ).

database_goals(D, _) :-
    var(D), !, fail.
database_goals((A, B), Goals) :- !,
    database_goals(A, GA),
    database_goals(B, GB),
    append(GA, GB, Goals).
database_goals(dynamic(Spec), [dynamic(Spec)]) :- !.
database_goals(Assert, [assert(Clause)]) :-
    compound(Assert),
    compound_name_arguments(Assert, Name, [Clause]),
    memberchk(Name, [assert, asserta, assertz]).

database_items([], _) --> [].
database_items([G|Gs], Where) -->
    database_item(G, Where),
    database_items(Gs, Where).

database_item(dynamic(Spec), Where) -->
    { dynamic_indicators(Spec, Where, PIs) },
    [directive(dynamic(PIs), Where)].
database_item(assert(Clause), Where) -->
    { static_clause(Clause, Where) },
    [static(Clause, Where)].

dynamic_indicators(Spec, Where, PIs) :-
    (   var(Spec)
    ->  Specs = [Spec]
    ;   is_list(Spec)
    ->  Specs = Spec
    ;   comma_list(Spec, Specs)
    ),
    (   Specs \== [],
        forall(member(S, Specs), ( nonvar(S), S = N/A, atom(N), integer(A), A >= 0 ))
    ->  PIs = Specs
    ;   etalis_error("dynamic takes predicates Name/Arity",
                     "write e.g. :- dynamic(count/2). or :- dynamic([count/2, seen/1]).", Where)
    ).

%   trigger_rules(+Items0, -Items, -Kept): a print_trigger/1 that a
%   clause with a body defines is kept as the file's static predicate
%   (Kept = [print_trigger]), and a `'$print_trigger'` directive at its
%   first clause makes the compiler evaluate it for the events the file
%   derives, once, at load (see etalis_compile:compile_items/3), unless
%   the file has its own `:- print_events(...)`.  Otherwise Kept = [].

trigger_rules(Items0, Items, Kept) :-
    (   member(static(Clause, _), Items0),
        nonvar(Clause),
        Clause = (Head :- Body),
        nonvar(Head),
        Head = print_trigger(_),
        Body \== true
    ->  Kept = [print_trigger],
        (   member(directive(D, _), Items0), nonvar(D), D = print_events(_)
        ->  Items = Items0
        ;   once(( member(static(C, Where), Items0), is_declaration(print_trigger, static(C, Where)) )),
            Items = [directive('$print_trigger', Where)|Items0]
        )
    ;   Kept = [],
        Items = Items0
    ).

declaration(Kept, static(Clause, Where)) :-
    nonvar(Clause),
    (   Clause = (Head :- Body)
    ->  nonvar(Head),
        declaration_head(Head),
        \+ ( functor(Head, Name, _), memberchk(Name, Kept) ),
        declaration_with_body(Head, Body, Where)
    ;   declaration_head(Clause),
        \+ ( functor(Clause, Name, _), memberchk(Name, Kept) )
    ).

declaration_head(print_trigger(_)).
declaration_head(event_rule_property(_, _, _)).

is_declaration(Name, static(Clause, _)) :-
    nonvar(Clause),
    (   Clause = (Head :- _) -> true ; Head = Clause ),
    callable(Head),
    functor(Head, Name, _).

declaration_with_body(Head, Body, Where) :-
    (   Body == true
    ->  true
    ;   functor(Head, Name, Arity),
        format(string(M), "~w/~w defined by a rule (a condition ETALIS evaluates as it runs) is not supported", [Name, Arity]),
        declaration_hint(Name, Hint),
        etalis_error(M, Hint, Where)
    ).

declaration_hint(event_rule_property,
                 "give the rule its window: Label : Head <- Pattern within Seconds.").

%   print_directive(+PrintTriggers, +Items0, -Items): the print_trigger
%   facts as one print_events directive, at the first of them: the
%   events they name (also those a rule inserted later derives), and
%   those derived by the rules of Items0 that a pattern such as `c/_`
%   or all_defined_events matches.  A file with its own `:-
%   print_events(...)` keeps it.

print_directive([], Items, Items) :- !.
print_directive(Triggers, Items0, Items) :-
    (   member(directive(D, _), Items0),
        nonvar(D),
        D = print_events(_)
    ->  Items = Items0
    ;   Triggers = [static(_, Where)|_],
        maplist(trigger_spec(Where), Triggers, Specs),
        include(ground, Specs, Named),
        findall(N/A, ( member(rule(_, Head, _, _, _), Items0),
                       functor(Head, N, A),
                       \+ sub_atom(N, 0, _, _, $),       % hidden, see etalis_runs:running_aggregate/7
                       member(Spec, Specs),
                       \+ ground(Spec),
                       printed_by(Spec, N/A)
                     ),
                Matched),
        append(Named, Matched, Printed0),
        sort(Printed0, Printed),
        Items = [directive(print_events(Printed), Where), directive('$print_trigger_facts', Where)|Items0]
    ).

trigger_spec(_, static(Clause, Where), Spec) :-
    (   Clause = (print_trigger(Spec0) :- _)
    ->  true
    ;   Clause = print_trigger(Spec0)
    ),
    (   var(Spec0)
    ->  Spec = _/_
    ;   Spec0 == all_defined_events
    ->  Spec = _/_
    ;   Spec0 == all_events
    ->  Spec = _/_
    ;   Spec0 = N/A,
        ( var(N) ; atom(N) ),
        ( var(A) ; integer(A) )
    ->  Spec = N/A
    ;   callable(Spec0), \+ Spec0 = _/_
    ->  functor(Spec0, N, A),
        Spec = N/A
    ;   format(string(M), "print_trigger(~q) does not name events", [Spec0]),
        etalis_error(M, "write print_trigger(Name/Arity), e.g. print_trigger(alarm/1)", Where)
    ).

printed_by(Spec, N/A) :-
    \+ Spec \= N/A.

%   property_window(+Property, +Items0, -Items): the rule labelled by
%   the event_rule_property fact Property, with the property's window.

property_window(static(Clause, Where), Items0, Items) :-
    (   Clause = (Fact :- _) -> true ; Fact = Clause ),
    Fact = event_rule_property(Label, Name, Value),
    (   atom(Label),
        nth0(I, Items0, rule(Label, Head, Pattern0, RWhere, VarNames))
    ->  rule_property(Where, [], property(Name, Value), Window),
        rule_properties([Window], Pattern0, Pattern),
        nth0(I, Items0, _, Rest),
        nth0(I, Items, rule(Label, Head, Pattern, RWhere, VarNames), Rest)
    ;   format(string(M), "event_rule_property/3 names ~q, and no rule has that label", [Label]),
        etalis_error(M, "label the rule: Label : Head <- Pattern.", Where)
    ).
