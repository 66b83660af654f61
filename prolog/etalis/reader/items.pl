:- module(etalis_items,
          [ item/5                      % +Term, +Pos, +VarNames, +Src, -Item
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module('../errors', [etalis_error/3]).
:- use_module('../compiler/optable', [operator/3]).
:- use_module(positions, [pos_where/3, pos_args/3]).
:- use_module(terms, [static_clause/2, where_goal/3]).
:- use_module(patterns, [ pattern/6, rule_head/5, own_conditions/3, reading_state/2, reading_var_names/2,
                          reading_hidden/3 ]).
:- use_module(kleene, [kleene_rules/5, correlated_conditions/2]).
:- use_module(runs, [running_aggregate/7]).
:- use_module('../dialect/declarations', [rule_property/4, rule_properties/3, rule_action/3]).

/** <module> The clauses of a rule file as items

Each clause of a rule file becomes one item (see etalis_syntax): an
event rule, a static clause or a directive, or, for a rule that needs
hidden rules (a nested rule, a `P+`, an ETALIS run), several.
*/

%!  item(+Term, +Pos, +VarNames, +Src, -Item) is det.
%
%   Item is the clause Term of the file, read at Pos with the variable
%   names VarNames: rule(Label, Head, Pattern, Where, VarNames),
%   static(Clause, Where), directive(Directive, Where), or items(Items)
%   for a rule that needs hidden rules too.
%
%   @error etalis_error(Message, Hint) for a clause that cannot be one.

item(Term, Pos, _, Src, _) :-
    var(Term),
    !,
    pos_where(Pos, Src, Where),
    etalis_error("a clause cannot be a variable", "remove it, or write a fact, a rule or a directive", Where).
item((:- Directive), Pos, _, Src, directive(Directive, Where)) :-
    !,
    pos_where(Pos, Src, Where),
    (   var(Directive)
    ->  etalis_error("a directive cannot be a variable", "write e.g. :- policy(recent).", Where)
    ;   true
    ).
item((?- _), Pos, _, Src, _) :-
    !,
    pos_where(Pos, Src, Where),
    etalis_error("a query (?- Goal) has no place in a rule file",
                 "write a directive (:- Goal.), an event rule or a fact", Where).
item(Term, Pos, VarNames, Src, Item) :-
    compound(Term),
    compound_name_arguments(Term, Name, [Left, Body]),
    operator(Name, _, same_as(<-)),             % ETALIS's iff
    !,
    item('<-'(Left, Body), Pos, VarNames, Src, Item).
item('<-'(Left, Body), Pos, VarNames, Src, Item) :-
    !,
    reading_state(VarNames, S0),
    pos_where(Pos, Src, Where),
    pos_args(Pos, 2, [LeftPos, BodyPos]),
    rule_left(Left, LeftPos, Src, S0, Label, Head, Properties, Action),
    (   running_aggregate(Body, BodyPos, Src, rule(Label, Head, Where, Properties, Action), Items0, S0, S)
    ->  reading_hidden(S, Inner, _)
    ;   pattern(Body, BodyPos, Src, Pattern0, S0, S),
        rule_action(Action, Pattern0, Pattern1),
        rule_properties(Properties, Pattern1, Pattern2),
        reading_hidden(S, Inner, Kleene),
        kleene_rules(Kleene, Pattern2, Pattern3, VarNames, PlusRules),
        correlated_conditions(Pattern3, Pattern),
        own_conditions(Pattern, Where, S),
        append(PlusRules, [rule(Label, Head, Pattern, Where, VarNames)], Items0)
    ),
    append(Inner, Items0, Items),
    (   Items = [Item]
    ->  true
    ;   Item = items(Items)
    ).
item(Clause, Pos, _, Src, static(Clause, Where)) :-
    pos_where(Pos, Src, Where),
    static_clause(Clause, Where).

%   rule_left(+Left, +Pos, +Src, +State, -Label, -Head, -Properties, -Action):
%   the left of `<-`: `Head`, `Label : Head`, and in original ETALIS's
%   forms `Label([property(Name, Value), ...]) : Head` (properties of
%   the rule) and `Head do Action` (a goal run when the rule fires).

rule_left(Left, Pos, Src, State, Label, Head, Properties, Action) :-
    (   nonvar(Left), Left = do(Left1, Action0)
    ->  pos_args(Pos, 2, [LeftPos, ActionPos]),
        where_goal(Action0, ActionPos, Src),
        Action = Action0,
        rule_left(Left1, LeftPos, Src, State, Label, Head, Properties, true)
    ;   nonvar(Left), Left = (Label0 : Head0)
    ->  Action = true,
        pos_args(Pos, 2, [LabelPos, HeadPos]),
        pos_where(LabelPos, Src, W),
        reading_var_names(State, VarNames),
        rule_label(Label0, W, VarNames, Label, Properties),
        rule_head(Head0, HeadPos, Src, State, Head)
    ;   Label = '',
        Properties = [],
        Action = true,
        rule_head(Left, Pos, Src, State, Head)
    ).

rule_label(Label0, W, VarNames, Label, Properties) :-
    (   atom(Label0), Label0 \== '', Label0 \== []
    ->  Label = Label0,
        Properties = []
    ;   compound(Label0),
        compound_name_arguments(Label0, Label, [Properties0]),
        Label \== '',
        is_list(Properties0)
    ->  maplist(rule_property(W, VarNames), Properties0, Properties)
    ;   etalis_error("a rule label must be a non-empty atom", "write e.g. my_rule : h(X) <- a(X) seq b(X).", W)
    ).
