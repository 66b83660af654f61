:- module(etalis_rule_keys,
          [ partition_selector/4,       % +Pattern, +PlusRules, +MaxAge, -Selector
            rule_key/4,                 % +Pattern, +PlusRules, -Events, -Key
            pattern_window/3            % +Pattern, +MaxAge, -Window
          ]).
:- use_module(library(apply), [exclude/3, foldl/4, include/3, maplist/3]).
:- use_module(library(lists), [append/3, member/2]).
:- use_module('../reader/kleene', [kleene_event/1]).
:- use_module(stn_runs, [stn_run_event/1]).

/** <module> A rule's key and window

What SASE's partition contiguity `strict(partition)` and a skip
strategy keep a rule's matches apart by (the variables every event of
the rule has as an argument), and the window beyond which no match
takes an event.
*/

%!  partition_selector(+Pattern, +PlusRules, +MaxAge, -Selector) is det.
%
%   Selector is what `strict(partition)` selects by on a rule with
%   Pattern: partition(Key, Skeletons, Window), Key the term k(V1, ...)
%   of the variables that every event of the rule (those of its `P+`
%   too, from their rules PlusRules) has as an argument, Skeletons the
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

%!  rule_key(+Pattern, +PlusRules, -Events, -Key) is det.
%
%   Key is the term k(V1, ...) of the variables that every one of the
%   Events of a rule with Pattern (see rule_events/3) has as an
%   argument: its partitions, and what its skip strategy is kept apart
%   by.

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

%!  pattern_window(+Pattern, +MaxAge, -Window) is det.
%
%   Window is the narrowest window of the `within`s around the whole of
%   Pattern, and MaxAge.

pattern_window(within(P, W0), MaxAge, W) :- !,
    pattern_window(P, MaxAge, W1),
    W is min(W0, W1).
pattern_window(where(P, _), MaxAge, W) :- !,
    pattern_window(P, MaxAge, W).
pattern_window(_, MaxAge, MaxAge).
