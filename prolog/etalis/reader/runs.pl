:- module(etalis_runs,
          [ running_aggregate/7,        % +Body, +Pos, +Src, +Rule, -Items, +State0, -State
            run_event/2                 % +Event, -Kind
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module('../errors', [etalis_error/3]).
:- use_module(positions, [pos_where/3, pos_args/3]).
:- use_module(terms, [term_words/3, duration_seconds/4]).
:- use_module(patterns, [pattern/6, reading_var_names/2, own_conditions/3]).
:- use_module('../dialect/declarations', [rule_action/3]).

/** <module> ETALIS's running aggregates and star_times

Original ETALIS's runs, `S seq aggregate(F, P, R)` and `S seq P
star_times`, as rules around a hidden event (running_aggregate/7).
*/

%!  running_aggregate(+Body, +Pos, +Src, +Rule, -Items, +State0, -State) is semidet.
%
%   ETALIS's runs, in the one place its compiler takes them: the whole
%   body `S seq Run` of Rule, rule(Label, Head, Where, Properties,
%   Action), read in State0 (see etalis_patterns:pattern/6), Run one of
%
%     - aggregate(F, P, R): each occurrence of S starts a running
%       aggregate F of the occurrences of P after it; H occurs at S
%       with the initial value (count and sum: 0; min and max have none)
%       and at each P with the aggregate so far, over [s1, p2];
%     - P star_times: H occurs at S and at each P after it, over
%       [s1, p2] (S followed by any number of Ps, each run extended by
%       the next P).
%
%   Each S starts a run of its own, which each later P extends under
%   `unrestricted`, as ETALIS's compiler keeps one per S; under
%   `recent` only the newest run goes on (a newer S with the same
%   bindings starts again), under `chronological` the oldest (see
%   etalis_rule_policies:run_policy/3).  It becomes rules around a hidden
%   event '$Kind_L_C'(Vs..., Acc...), Vs the variables of S that H or P
%   use:
%
%       '$run'(Vs, Init) <- S.
%       '$run_taken'(Vs, A0, X) <- '$run'(Vs, A0) seq P.   (the run's policy)
%       '$run'(Vs, A1) <- '$run_taken'(Vs, A0, X) where Step.
%       H <- '$run'(Vs, R).

%!  run_event(+Event, -Kind) is semidet.
%
%   Event is a hidden event of an ETALIS run of Kind (`aggregate` or
%   `star_times`), '$Kind_L_C' or its step '$Kind_L_C_taken' (see
%   running_aggregate/7).

run_event(E, Kind) :-
    callable(E),
    functor(E, Name, _),
    atom_concat($, Rest0, Name),
    (   atom_concat(Rest, '_taken', Rest0) -> true ; Rest = Rest0 ),
    atomic_list_concat(Parts, '_', Rest),
    append(KindParts, [Line, Column], Parts),
    KindParts \== [],
    atom_number(Line, L), integer(L),
    atom_number(Column, C), integer(C),
    atomic_list_concat(KindParts, '_', Kind).

running_aggregate(Body, Pos, Src, Rule, Items, S0, S) :-
    nonvar(Body),
    Body = within(Inner, Duration),
    !,
    pos_args(Pos, 2, [InnerPos, DPos]),
    running_aggregate(Inner, InnerPos, Src, Rule, Items0, S0, S),
    pos_where(DPos, Src, DWhere),
    reading_var_names(S, VarNames),
    duration_seconds(Duration, VarNames, DWhere, Seconds),
    maplist(step_within(Seconds), Items0, Items).
running_aggregate(Body, Pos, Src, rule(Label, Head, Where, Properties, Action), Items, S0, S) :-
    nonvar(Body),
    Body = seq(Start, Run),
    nonvar(Run),
    pos_args(Pos, 2, [StartPos, RunPos]),
    run(Run, RunPos, Src, Kind, P, P1, run(Init, A0, A1, Step, R, Shown), S0, S1),
    pattern(Start, StartPos, Src, StartPattern, S1, S),
    reading_var_names(S, VarNames),
    term_variables(Start, StartVs),
    term_variables(Head-P, Used),
    include(occurs_in(Used), StartVs, Vs),
    Where = pos(_, Line, Column),
    format(atom(Name), '$~w_~d_~d', [Kind, Line, Column]),
    format(atom(StepLabel), '~w_step', [Name]),
    append(Vs, Init, InitArgs), Acc0 =.. [Name|InitArgs],
    append(Vs, A0, PrevArgs), Prev =.. [Name|PrevArgs],
    append(Vs, A1, NextArgs), Next =.. [Name|NextArgs],
    append(Vs, R, OutArgs), Out =.. [Name|OutArgs],
    conj_where(event(Out), Shown, OutPattern0),
    rule_action(Action, OutPattern0, OutPattern),
    own_conditions(op(seq, event(Prev), P1), Where, S),
    run_steps(Step, Name, Prev, Next, P1, Vs, A1, StepLabel, Where, StepRules),
    append([ [rule('', Acc0, StartPattern, Where)],
             StepRules,
             [rule(Label, Head, OutPattern, Where)]
           ], Rules),
    maplist(with_var_names(VarNames), Rules, RuleItems0),
    foldl(property_within, Properties, RuleItems0, RuleItems),
    append(RuleItems, [directive('$run_policy'(StepLabel), Where)], Items).

property_within(none, Items, Items).
property_within(within(Seconds), Items0, Items) :-
    maplist(step_within(Seconds), Items0, Items).

%   run(+Run, +Pos, +Src, -Kind, -P, -Pattern, -Spec, +State0, -State):
%   Run is an ETALIS run over the pattern P (normalised: Pattern); Spec
%   gives its accumulator: the initial arguments, those before and after
%   a step, the step's goal, the arguments the head sees and the
%   condition for reporting them (lists of arguments; `true` for no
%   goal).

run(aggregate(Fun, P, R), Pos, Src, aggregate, P, P1, run([Init], [A0], [A1], Step, [R], Shown), S0, S) :-
    pos_args(Pos, 3, [_, PPos, _]),
    pos_where(Pos, Src, Where),
    pattern(P, PPos, Src, P1, S0, S),
    (   var(R)
    ->  true
    ;   etalis_error("the result of an aggregate must be a variable",
                     "write e.g. d(C) <- start seq aggregate(count, a(Y), C)", Where)
    ),
    reading_var_names(S, VarNames),
    running_function(Fun, VarNames, Init, A0, A1, Step, Reported, Where),
    (   Reported == all
    ->  Shown = true
    ;   Shown = (R \== '$none')
    ).
run(star_times(P), Pos, Src, star_times, P, P1, run([], [], [], true, [], true), S0, S) :-
    pos_args(Pos, 1, [PPos]),
    pattern(P, PPos, Src, P1, S0, S).

%   run_steps(+Step, +Name, +Prev, +Next, +P, +Vs, +A1s, +Label, +Where, -Rules):
%   the rules that take a run from Prev to Next at each P.  The goal of
%   a step is a rule of its own: a where condition directly on the seq
%   would make `recent` keep every earlier state of the run.

run_steps(true, _, Prev, Next, P, _, _, Label, Where, [rule(Label, Next, op(seq, event(Prev), P), Where)]) :- !.
run_steps(Step, Name, Prev, Next, P, Vs, A1s, Label, Where,
          [ rule(Label, Taken, op(seq, event(Prev), P), Where),
            rule('', Next, where(event(Taken), Step), Where)
          ]) :-
    term_variables(Step, StepVs0),
    exclude(occurs_in(A1s), StepVs0, StepVs1),
    exclude(occurs_in(Vs), StepVs1, StepVs),
    append(Vs, StepVs, TakenArgs),
    atom_concat(Name, '_taken', TakenName),
    Taken =.. [TakenName|TakenArgs].

conj_where(P, true, P) :- !.
conj_where(P, G, where(P, G)).

%   step_within(+Seconds, +Item0, -Item): `(S seq Run) within D` bounds
%   the start and each step: the run goes on for D seconds after S
%   began.

step_within(D, rule(L, H, P, W, VN), rule(L, H, within(P, D), W, VN)) :-
    \+ P = event(_),
    \+ P = where(event(_), _),
    !.
step_within(_, Item, Item).

with_var_names(VarNames, rule(L, H, P, W), rule(L1, H1, P1, W1, VN1)) :-
    copy_term(rule(L, H, P, W)-VarNames, rule(L1, H1, P1, W1)-VN1).

occurs_in(Vs, V) :-
    member(V0, Vs),
    V0 == V,
    !.

%   running_function(+Fun, +VarNames, -Init, ?A0, ?A1, -Step, -Reported,
%   +Where): the running aggregate Fun starts at Init and goes from A0
%   to A1 by Step; Reported is `all`, or `values` when Init is not a
%   value to report.

running_function(count, _, 0, A0, A1, A1 is A0 + 1, all, _) :- !.
running_function(sum(X), _, 0, A0, A1, A1 is A0 + X, all, _) :- !.
running_function(min(X), _, '$none', A0, A1,
                 ( A0 == '$none' -> A1 = X ; A1 is min(A0, X) ), values, _) :- !.
running_function(max(X), _, '$none', A0, A1,
                 ( A0 == '$none' -> A1 = X ; A1 is max(A0, X) ), values, _) :- !.
running_function(Fun, VarNames, _, _, _, _, _, Where) :-
    term_words(Fun, VarNames, Words),
    format(string(M), "unknown aggregate ~w", [Words]),
    etalis_error(M, "ETALIS's aggregate(F, P, R) takes count, sum(X), min(X) or max(X)", Where).
