:- module(etalis_stn_runs,
          [ stn_runs/3,                 % :IsStn, +Rules0, -Rules
            stn_run_event/1             % +Event
          ]).
:- use_module(library(apply)).
:- use_module(library(lists)).
:- use_module('../reader/syntax', [kleene_event/1, correlated_conditions/2]).

/** <module> Kleene+ under SASE's skip-till-next-match (`stn`)

Under `stn` a run that has bound an iteration of `P+` continues in two
ways: with the first later event that fits the next element, and with
the first later event that fits another iteration of P (strategies.md).
The reader expands `P+` into hidden rules for its runs on their own
('$plusN', see etalis_syntax:kleene_rules/3), which under `stn` (run as
`continuous`) would let the first iteration's event consume the events
before it, so that no run could both iterate and go on.  Here a run
holds what came before the `+` too: for a sequence rule under `stn`

    H <- (E1 seq ... seq Ek-1 seq P+ seq Ek+1 ... seq En) where G within W

the two hidden rules of P+ become

    '$stnM'(Ps, V, O, L) <- (E1 seq ... seq Ek-1 seq P) within W.
    '$stnM'(Ps, V, O, L1) <- ('$stnM'(Ps0, V, O, L0) seq P') where append(L0, [X'], L1) within W.

(Ps the positions of a run's events, as a `'$plus'` event has them, V
the variables of E1 ... Ek-1, O and L the outer variables and the
lists of P+), and the rule becomes

    H <- ('$stnM'(Ps, V, O, L) seq Ek+1 ... seq En) where G within W.

Each occurrence of '$stnM' is one run at an iteration of P+; under
`continuous` each is taken by the first later event that fits another
iteration (the second rule) and, apart, by the first that fits the next
element (the rule), which is the definition.  A trailing `P+` makes
every iteration a match.
*/

%!  stn_runs(:IsStn, +Rules0, -Rules) is det.
%
%   Rules is Rules0 with each sequence rule for which call(IsStn, Rule)
%   succeeds and that has a `P+` rewritten as above, its hidden rules
%   replaced.  Other rules are left as they are (a `P+` elsewhere than
%   in a sequence of events stays refused under `stn`).

:- meta_predicate stn_runs(1, +, -).

stn_runs(IsStn, Rules0, Rules) :-
    (   nth1(I, Rules0, Rule),
        Rule = rule(_, H, _, _, _),
        \+ hidden_head(H),
        call(IsStn, Rule),
        run_rewrite(Rule, Rules0, NewRule, Hidden, Used)
    ->  nth1(I, Rules0, _, Rest0),
        nth1(I, Rules1, NewRule, Rest0),
        exclude(used_rule(Used), Rules1, Rules2),
        append(Hidden, Rules2, Rules3),
        stn_runs(IsStn, Rules3, Rules)
    ;   Rules = Rules0
    ).

hidden_head(H) :-
    callable(H),
    functor(H, Name, _),
    sub_atom(Name, 0, _, _, $).

used_rule(Used, rule(_, H, _, _, _)) :-
    callable(H),
    functor(H, Name, _),
    memberchk(Name, Used).

%!  stn_run_event(+Event) is semidet.
%
%   Event is the hidden event of a run of a rule with `P+` under `stn`,
%   whose first argument is the list of the positions of its events.

stn_run_event(E) :-
    compound(E),
    functor(E, Name, _),
    sub_atom(Name, 0, _, _, '$stn').

%   run_rewrite(+Rule, +Rules, -NewRule, -Hidden, -Used): Rule's first
%   `P+` (its hidden rules among Rules, named Used) made into runs.

run_rewrite(rule(L, H, P0, Where, V), Rules, rule(L, H, P, Where, V), [S1, S2], [Name]) :-
    wrapped(P0, Wrap, Seq),
    elements(Seq, Elements),
    append(Pre, [event(E)|Post], Elements),
    kleene_event(E),
    !,
    functor(E, Name, Arity),
    plus_rules(Name, Arity, Rules, R1, R2),
    flag(etalis_stn_run, N, N + 1),
    format(atom(RunName), '$stn~d', [N]),
    term_variables(Pre, PreVs),
    E =.. [_, Ps|EArgs],
    append(PreVs, EArgs, RunArgs),
    Run =.. [RunName, Ps|RunArgs],
    first_run(R1, Pre, E, Run, S1),
    length(PreVs, NPre),
    next_run(R2, Name, RunName, NPre, S2),
    seq_pattern([event(Run)|Post], Seq1),
    correlated_conditions(Seq1, Seq2),
    rewrapped(Wrap, Seq2, P).

%   wrapped(+P, -Wrappers, -Seq): P is Seq with the `where` and `within`
%   of Wrappers (outermost first) around it; rewrapped/3 puts them
%   around another.

wrapped(where(P, G), [where(G)|Ws], Seq) :- !,
    wrapped(P, Ws, Seq).
wrapped(within(P, T), [within(T)|Ws], Seq) :- !,
    wrapped(P, Ws, Seq).
wrapped(P, [], P) :-
    (   P = op(seq, _, _)
    ->  true
    ;   P = event(E),
        kleene_event(E)
    ).

rewrapped([], P, P).
rewrapped([where(G)|Ws], P0, where(P, G)) :-
    rewrapped(Ws, P0, P).
rewrapped([within(T)|Ws], P0, within(P, T)) :-
    rewrapped(Ws, P0, P).

elements(op(seq, A, B), Es) :- !,
    elements(A, EA),
    elements(B, EB),
    append(EA, EB, Es).
elements(event(E), [event(E)]).
elements(where(event(E), G), [where(event(E), G)]) :- !.
elements(where(where(event(E), G0), G), [where(event(E), (G0, G))]) :- !.
elements(where(op(seq, A, B), G), Es) :-      % the condition of B, moved (see correlated_conditions/2)
    elements(A, EA),
    elements(where(B, G), EB),
    append(EA, EB, Es).

seq_pattern([P], P) :- !.
seq_pattern(Ps, op(seq, A, B)) :-
    append(Init, [B], Ps),
    seq_pattern(Init, A).

plus_rules(Name, Arity, Rules, R1, R2) :-
    functor(T, Name, Arity),
    findall(R, ( member(R, Rules), R = rule(_, H, _, _, _), subsumes_term(T, H) ), [A, B]),
    (   A = rule(_, _, PA, _, _), \+ mentions(PA, Name)
    ->  R1 = A, R2 = B
    ;   R1 = B, R2 = A
    ).

mentions(P, Name) :-
    sub_term(S, P),
    compound(S),
    functor(S, Name, _),
    !.

%   first_run(+R1, +Pre, +E, +Run, -S1): the run's first iteration, with
%   what comes before the `+`: R1's head unified with the rule's E, so
%   that the outer variables are the rule's, then all copied.

first_run(R1, Pre, E, Run, S1) :-
    copy_term(R1, rule(L, H1, B1, Where, V)),
    H1 =.. [_, Ps|HArgs],
    E =.. [_, _|EArgs],
    outer_args(HArgs, EArgs),
    functor(Run, RunName, _),
    term_variables(Pre, PreVs),
    append(PreVs, HArgs, NewArgs),
    Head =.. [RunName, Ps|NewArgs],
    (   B1 = within(Body0, W)
    ->  Wrap = [within(W)]
    ;   Body0 = B1,
        Wrap = []
    ),
    (   Pre == []
    ->  Body1 = Body0
    ;   seq_pattern(Pre, PreP),
        correlated_conditions(op(seq, PreP, Body0), Body1)
    ),
    rewrapped(Wrap, Body1, Body),
    copy_term(rule(L, Head, Body, Where, V), S1).

%   outer_args(+HArgs, +EArgs): the arguments of R1's head that are the
%   outer variables (not lists [X]) take the rule's.

outer_args([], []).
outer_args([H|Hs], [E|Es]) :-
    (   nonvar(H), H = [_]
    ->  true
    ;   H = E
    ),
    outer_args(Hs, Es).

%   next_run(+R2, +Name, +RunName, +N, -S2): another iteration:
%   R2 with its '$plus' events made runs that carry the same N values
%   of what came before the `+`.

next_run(R2, Name, RunName, N, S2) :-
    copy_term(R2, rule(L, H0, B0, Where, V)),
    length(PreVs, N),
    renamed(Name, RunName, PreVs, H0, H),
    map_events(renamed(Name, RunName, PreVs), B0, B),
    copy_term(rule(L, H, B, Where, V), S2).

renamed(Name, RunName, PreVs, E0, E) :-
    (   compound(E0), functor(E0, Name, _)
    ->  E0 =.. [_, Ps|Args],
        append(PreVs, Args, NewArgs),
        E =.. [RunName, Ps|NewArgs]
    ;   E = E0
    ).

map_events(G, event(E0), event(E)) :- !,
    call(G, E0, E).
map_events(G, P0, P) :-
    compound(P0),
    P0 =.. [F|Args0],
    memberchk(F, [op, where, within, or, cnot, fnot]),
    !,
    (   F == where
    ->  Args0 = [A0, Goal],
        map_events(G, A0, A),
        Args = [A, Goal]
    ;   F == within
    ->  Args0 = [A0, W],
        map_events(G, A0, A),
        Args = [A, W]
    ;   F == op
    ->  Args0 = [Op|Ps0],
        maplist(map_events(G), Ps0, Ps),
        Args = [Op|Ps]
    ;   maplist(map_events(G), Args0, Args)
    ),
    P =.. [F|Args].
map_events(_, P, P).
