:- module(etalis_kleene,
          [ kleene_event/1,             % +Event
            kleene_rules/5,             % +Kleene, +Pattern0, -Pattern, +VarNames, -Rules
            correlated_conditions/2     % +Pattern0, -Pattern
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module('../errors', [etalis_error/3]).
:- use_module('../compiler/optable', [map_sub_patterns/3]).

/** <module> The Kleene+ rewrite

`P+` (one or more occurrences of P in sequence) is read as a hidden
event `'$plusN'` derived by two hidden rules, added beside the rule
that uses it (kleene_rules/5); a condition that reads what a `P+`
binds is moved to where that is bound (correlated_conditions/2).
*/

%!  kleene_event(+E) is semidet.
%
%   E is the hidden event of a `P+` (see kleene_rules/5), whose first
%   argument is the list of the positions of its events.

kleene_event(E) :-
    compound(E),
    functor(E, Name, _),
    sub_atom(Name, 0, _, _, '$plus').

%!  kleene_rules(+Kleene, +Pattern0, -Pattern, +VarNames, -Rules) is det.
%
%   Each kleene(E, P, Where) stands for `P+` in Pattern0, the event E in
%   its place.  P+ is one or more occurrences of P in sequence.  The
%   hidden event of a `P+` at line L, column C is named '$plus_L_C_I'
%   (I counts the rule's `+`), which the compiler numbers '$plusN'
%   through the rule set (see etalis_hidden_names), so that reading a
%   text always gives the same items.  The
%   variables of P that events elsewhere in the rule share (outside the
%   `+`) keep their value in every occurrence; each other variable X of
%   P is bound afresh by each occurrence, and outside the `+` X is the
%   list of its values, oldest first.  E becomes '$plusN'(Ps, Outer...,
%   Lists...), derived by two hidden rules (two of Rules, in the order
%   of Kleene, each a rule(Label, Head, Pattern, Where, VarNames)):
%
%       '$plusN'(Ps, O, [X]) <- P.
%       '$plusN'(Ps, O, L1) <- ('$plusN'(Ps0, O, L0) seq P') where append(L0, [X'], L1).
%
%   (P' a copy of P with fresh own variables; Ps, the positions of the
%   events of a match, are bound by the compiler where a selection
%   strategy needs them.)  A window around the `+` applies to its
%   rules too, so that no run outlives it.
%
%   A condition in P that reads a variable which no event of P binds but
%   an event before the `+` does (a correlation, `a(X) seq (b(Y) where
%   Y > X)+`) needs that binding in every occurrence, so the runs start
%   with what comes before: for `L seq P+` in Pattern0, O holds the
%   variables of L too, the first rule is `'$plusN'(Ps, O, [X]) <- L seq
%   P` and `L seq P+` becomes E in Pattern.

kleene_rules(Kleene, Pattern0, Pattern, VarNames, Rules) :-
    kleene_rules(Kleene, 0, Pattern0, Pattern, VarNames, Rules).

kleene_rules([], _, Pattern, Pattern, _, []).
kleene_rules([kleene(E, P, Where)|Ks], N, Pattern0, Pattern, VarNames, [R1, R2|Rules]) :-
    findall(Other, ( member(kleene(_, Other, _), Ks) ), Others),
    pattern_events([Pattern0|Others], Events),
    term_variables(P, PVs),
    term_variables(Events, EVs),
    partition(shared_with(EVs), PVs, Outer0, Own),
    (   correlated(P, EVs, Read)
    ->  run_start(Pattern0, E, Read, VarNames, Where, Start),
        Start = op(seq, L, _),
        term_variables(L, LVs),
        exclude(shared_with(LVs), Outer0, Outer1),
        append(LVs, Outer1, Outer),
        replaced(Start, event(E), Pattern0, Pattern1)
    ;   L = none,
        Outer = Outer0,
        Pattern1 = Pattern0
    ),
    kleene_name(Where, N, Name),
    append(Outer, Own, Args),
    E =.. [Name, _|Args],
    maplist([X, [X]]>>true, Own, Singles),
    append(Outer, Singles, FirstArgs),
    First =.. [Name, _|FirstArgs],
    copy_term(Outer-P, Outer-P1),
    term_variables(P1, P1Vs),
    exclude(shared_with(Outer), P1Vs, Own1),
    length(Own, NOwn),
    length(Before, NOwn),
    length(After, NOwn),
    append(Outer, Before, BeforeArgs),
    append(Outer, After, AfterArgs),
    Prev =.. [Name, _|BeforeArgs],
    Next =.. [Name, _|AfterArgs],
    maplist([B, X, A, append(B, [X], A)]>>true, Before, Own1, After, Appends),
    goal_conj(Appends, Append),
    (   enclosing_window(Pattern0, E, W)
    ->  Windowed = [Q, within(Q, W)]>>true
    ;   Windowed = [Q, Q]>>true
    ),
    (   L == none
    ->  FirstPattern = P
    ;   correlated_conditions(any, op(seq, L, P), FirstPattern)
    ),
    correlated_conditions(any, op(seq, event(Prev), P1), Step),
    (   Step = where(StepSeq, StepGoal)
    ->  NextPattern = where(StepSeq, (StepGoal, Append))
    ;   NextPattern = where(Step, Append)
    ),
    call(Windowed, FirstPattern, FirstBody),
    call(Windowed, NextPattern, NextBody),
    copy_term(rule('', First, FirstBody, Where, VarNames), R1),
    copy_term(rule('', Next, NextBody, Where, VarNames), R2),
    N1 is N + 1,
    kleene_rules(Ks, N1, Pattern1, Pattern, VarNames, Rules).

kleene_name(Where, N, Name) :-
    (   Where = pos(_, Line, Column)
    ->  format(atom(Name), '$plus_~w_~w_~d', [Line, Column, N])
    ;   format(atom(Name), '$plus__~d', [N])
    ).

%   correlated(+P, +EVs, -Read): a condition in P reads the variables
%   Read, which no event of P binds and events of EVs do.

correlated(P, EVs, Read) :-
    pattern_events([P], PEvents),
    term_variables(PEvents, Bound),
    term_variables(P, PVs),
    exclude(shared_with(Bound), PVs, Unbound),
    include(shared_with(EVs), Unbound, Read),
    Read \== [].

%   run_start(+Pattern, +E, +Read, +VarNames, +Where, -Start): Start is
%   `L seq E` in Pattern, what a correlated `+` (the event E) starts its
%   runs with.

run_start(Pattern, E, Read, VarNames, Where, Start) :-
    (   sub_term(Start, Pattern),
        compound(Start),
        Start = op(seq, L, R),
        R == event(E),
        pattern_events([L], LEvents),
        term_variables(LEvents, LVs),
        forall(member(V, Read), shared_with(LVs, V))
    ->  true
    ;   variable_words(Read, VarNames, Words),
        format(string(M), "a condition inside P+ reads ~w, which only another event binds, and P+ does not follow that event in a sequence", [Words]),
        etalis_error(M, "write the event that binds it before the +, as in a(X) seq (b(Y) where Y > X)+", Where)
    ).

variable_words(Vars, VarNames, Words) :-
    maplist(variable_word(VarNames), Vars, Names),
    atomic_list_concat(Names, ', ', Words).

variable_word(VarNames, V, Name) :-
    (   member(Name = V0, VarNames),
        V0 == V
    ->  true
    ;   Name = '_'
    ).

%   replaced(+Old, +New, +T0, -T): T is T0 with its subterm Old (the same
%   term, ==) replaced by New.

replaced(Old, New, T0, T) :-
    (   T0 == Old
    ->  T = New
    ;   compound(T0)
    ->  T0 =.. [F|Args0],
        maplist(replaced(Old, New), Args0, Args),
        T =.. [F|Args]
    ;   T = T0
    ).

%!  correlated_conditions(+Pattern0, -Pattern) is det.
%
%   Pattern is Pattern0 with each condition on the right operand of a
%   sequence that reads a list of a `P+` (or of its runs under `stn`),
%   bound only by the left operand (`a(X)+ seq (b(Y) where sum_list(X,
%   S), S > Y)`), made a condition on the sequence, where both are
%   bound: `(a(X)+ seq b(Y)) where (sum_list(X, S), S > Y)`.

correlated_conditions(P0, P) :-
    correlated_conditions(hidden, P0, P).

%   correlated_conditions(+Which, +Pattern0, -Pattern): as
%   correlated_conditions/2 for a variable that a hidden event of a
%   `P+` binds on the left (Which `hidden`), or any event (`any`: the
%   rules of a correlated `P+`, see kleene_rules/5).

correlated_conditions(_, event(E), event(E)) :- !.
correlated_conditions(Which, op(seq, A0, B0), P) :- !,
    correlated_conditions(Which, A0, A),
    correlated_conditions(Which, B0, B1),
    (   B1 = where(B, G),
        pattern_events([A], AEvents0),
        (   Which == any
        ->  AEvents = AEvents0
        ;   include(plus_event, AEvents0, AEvents)
        ),
        term_variables(AEvents, AVs),
        pattern_events([B], BEvents),
        term_variables(BEvents, BVs),
        term_variables(G, GVs),
        member(V, GVs),
        shared_with(AVs, V),
        \+ shared_with(BVs, V)
    ->  P = where(op(seq, A, B), G)
    ;   P = op(seq, A, B1)
    ).
correlated_conditions(Which, P0, P) :-
    compound(P0),
    map_sub_patterns(correlated_conditions(Which), P0, P),
    !.
correlated_conditions(_, P, P).

%   plus_event(+E): E is the hidden event of a `P+` or of its runs
%   under `stn` (etalis_stn_runs, which cannot be imported here).

plus_event(E) :-
    compound(E),
    functor(E, Name, _),
    (   sub_atom(Name, 0, _, _, '$plus')
    ->  true
    ;   sub_atom(Name, 0, _, _, '$stn')
    ).

shared_with(Vs, V) :-
    member(V0, Vs),
    V0 == V,
    !.

goal_conj([], true).
goal_conj([G], G) :- !.
goal_conj([G|Gs], (G, C)) :-
    Gs = [_|_],
    goal_conj(Gs, C).

%   pattern_events(+Patterns, -Events): the events of Patterns (not
%   those still to be made for a `+`).

pattern_events(Patterns, Events) :-
    foldl(pattern_events_, Patterns, Events, []).

pattern_events_(event(E), Es0, Es) :- !,
    (   var(E) -> Es0 = Es ; Es0 = [E|Es] ).
pattern_events_(P, Es0, Es) :-
    compound(P),
    P =.. [_|Args],
    include(compound, Args, Parts),
    foldl(pattern_events_, Parts, Es0, Es).
pattern_events_(P, Es, Es) :-
    \+ compound(P).

%   enclosing_window(+Pattern, +E, -W): the narrowest window of Pattern
%   around event(E).

enclosing_window(Pattern, E, W) :-
    window_around(Pattern, E, none, W),
    W \== none.

window_around(event(E0), E, W, W) :-
    E0 == E,
    !.
window_around(within(P, W1), E, W0, W) :- !,
    (   W0 == none
    ->  W2 = W1
    ;   W2 is min(W0, W1)
    ),
    window_around(P, E, W2, W).
window_around(P, E, W0, W) :-
    compound(P),
    P \= event(_),
    P =.. [_|Args],
    member(A, Args),
    compound(A),
    window_around(A, E, W0, W),
    !.
