:- module(etalis_patterns,
          [ pattern/4,                  % +Term, +Pos, +Src, -Pattern
            rule_head/4                 % +Head0, +Pos, +Src, -Head
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module('../errors', [etalis_error/3]).
:- use_module('../compiler/optable', [operator/3]).
:- use_module(positions, [pos_where/3, pos_args/3, operator_where/3]).
:- use_module(terms, [ term_words/2, pattern_functor/1, type_arity/2, control_construct/2,
                       not_an_event/2, reserved_name/1, where_goal/3, duration_seconds/3,
                       finite_number/1 ]).

/** <module> Event patterns, checked and normalised

A pattern as the rule file writes it (`a(X) seq b(X) where X > 1`)
becomes a term of the pattern language: `event(E)`, `op(Op, P, Q)` for
the temporal binary operators, `or(P, Q)`, `cnot(P, C)`, `fnot(P, C)`,
`where(P, Goal)`, `within(P, Seconds)` and aggregate(Fun, X, P, Window,
Result); `iteration(P, N)` is unrolled into a sequence and `any(N,
Es)` into the `or` of `and`s.  A rule nested in a pattern, and a `P+`,
are handed to the rule being read through the global variables
`etalis_nested_rules` and `etalis_kleene` (see etalis_items:item/5).
*/

%!  rule_head(+Head0, +Pos, +Src, -Head) is det.
%
%   Head is the head Head0 of an event rule: an event, or one of
%   original ETALIS's timers as '$timer'(Event, When) (see timer/4).
%
%   @error etalis_error(Message, Hint) where Head0 is no event.

rule_head(Head0, Pos, Src, Head) :-
    pos_where(Pos, Src, Where),
    (   var(Head0)
    ->  etalis_error("the head of an event rule cannot be a variable",
                     "write the complex event, e.g. alarm(X) <- a(X) seq b(X).", Where)
    ;   timer(Head0, Name, E, When0)
    ->  pos_args(Pos, 2, [EPos, WhenPos]),
        rule_head(E, EPos, Src, E1),
        (   E1 = '$timer'(_, _)
        ->  etalis_error("the event of a timer cannot be a timer", "write the event that occurs when the timer is due", Where)
        ;   true
        ),
        pos_where(WhenPos, Src, WhenWhere),
        timer_when(Name, When0, WhenWhere, When),
        Head = '$timer'(E1, When)
    ;   Head = Head0,
        plain_head(Head, Where)
    ).

plain_head(Head, Where) :-
    (   \+ callable(Head)
    ->  term_words(Head, Words),
        format(string(M), "the head of an event rule must be an event, not ~w", [Words]),
        etalis_error(M, "an event is an atom or a compound term such as alarm(X)", Where)
    ;   not_an_event(Head, What)
    ->  format(string(M), "the head of an event rule must be an event, not ~w", [What]),
        etalis_error(M, "an event is an atom or a compound term such as alarm(X)", Where)
    ;   pattern_functor(Head)
    ->  functor(Head, Op, Arity),
        format(string(M), "the head of an event rule must be a single event, not a pattern: ~q/~d is the operator ~q",
               [Op, Arity, Op]),
        etalis_error(M, "put the pattern on the right of <-; an event cannot be named like an operator (`check(R, S)` is `R check S`): rename the event", Where)
    ;   reserved_name(Head)
    ->  etalis_error("event names starting with $ are reserved", "rename the event", Where)
    ;   true
    ).

%   timer(+Head, -Name, -Event, -When): Head is one of original ETALIS's
%   timers: `exceptionAlarm(Event, Seconds)` makes Event occur Seconds
%   after the pattern, `exceptionAlarmAbsoluteDatime(Event, Time)` at
%   Time.  The rule's head becomes '$timer'(Event, after(Seconds)) or
%   '$timer'(Event, at(Time)), which schedules Event in event time (see
%   etalis_runtime:timer_set/5).

timer(exceptionAlarm(E, D), exceptionAlarm, E, after(D)).
timer(exceptionAlarmAbsoluteDatime(E, T), exceptionAlarmAbsoluteDatime, E, at(T)).

%   timer_when(+Name, +When0, +Where, -When): the delay or time of a
%   timer, checked where it is written; a variable is bound by the
%   pattern or its condition and checked when the timer is set.

timer_when(_, When, _, When) :-
    arg(1, When, X),
    var(X),
    !.
timer_when(exceptionAlarm, after(D), Where, after(S)) :-
    (   number(D), finite_number(D), D > 0
    ->  S = D
    ;   term_words(D, Words),
        format(string(M), "the delay of exceptionAlarm/2 must be a positive number of seconds, not ~w", [Words]),
        etalis_error(M, "write e.g. exceptionAlarm(b(X), 60) <- a(X). for b(X) 60 s after a(X)", Where)
    ).
timer_when(exceptionAlarmAbsoluteDatime, at(T), Where, at(S)) :-
    (   number(T), finite_number(T)
    ->  S = T
    ;   T = datime(_, _, _, _, _, _)
    ->  S = T
    ;   T = datime(_, _, _, _, _, _, _)
    ->  S = T
    ;   term_words(T, Words),
        format(string(M), "the time of exceptionAlarmAbsoluteDatime/2 must be a number of seconds or a datime(Y,M,D,H,Min,S), not ~w", [Words]),
        etalis_error(M, "write e.g. exceptionAlarmAbsoluteDatime(c(X), T) <- a(X) where (end(E), T is E + 60).", Where)
    ).

%!  pattern(+Term, +Pos, +Src, -Pattern) is det.
%
%   Validate an event pattern and normalise it.
%
%   @error etalis_error(Message, Hint) where Term is no pattern.

pattern(Term, Pos, Src, _) :-
    var(Term),
    !,
    pos_where(Pos, Src, Where),
    etalis_error("a pattern cannot be a variable",
                 "name the event, e.g. a(X) instead of X", Where).
pattern(iteration(P, N), Pos, Src, Pattern) :-
    !,
    pos_where(Pos, Src, Where),
    (   integer(N), N >= 1
    ->  true
    ;   term_words(N, Words),
        format(string(M), "iteration needs a count of 1 or more, not ~w", [Words]),
        etalis_error(M, "write e.g. iteration(reading(S, _), 3)", Where)
    ),
    pos_args(Pos, 2, [PP, _]),
    pattern(P, PP, Src, P1),
    iterate(N, P1, Pattern).
pattern(any(N, List), Pos, Src, Pattern) :-
    !,
    pos_where(Pos, Src, Where),
    (   is_list(List), List \== []
    ->  true
    ;   etalis_error("any takes a count and a list of events",
                     "write e.g. any(2, [a(X), b(X), c(X)])", Where)
    ),
    length(List, Len),
    (   integer(N), N >= 1, N =< Len
    ->  true
    ;   term_words(N, Words),
        format(string(M), "any needs a count from 1 to ~d, not ~w", [Len, Words]),
        etalis_error(M, "write e.g. any(2, [a(X), b(X), c(X)])", Where)
    ),
    pos_args(Pos, 2, [_, ListPos]),
    list_positions(ListPos, List, Poss),
    maplist(any_event(Src), List, Poss, Ps),
    combinations(N, Ps, Combinations),
    maplist(all_of, Combinations, Alternatives),
    one_of(Alternatives, Pattern).
pattern(aggregate(Fun, P, Window, Result), Pos, Src, aggregate(F, X, P1, Win, Result)) :-
    !,
    pos_where(Pos, Src, Where),
    pos_args(Pos, 4, [_, PP, _, _]),
    pattern(P, PP, Src, P1),
    aggregate_function(Fun, F, X, Where),
    aggregate_window(Window, Win, Where),
    (   var(Result)
    ->  true
    ;   etalis_error("the result of an aggregate must be a variable",
                     "write e.g. aggregate(avg(T), temp(S, T), count(5), Avg)", Where)
    ),
    (   F == count
    ->  true
    ;   var(X)
    ->  (   event_variable(X, P1)
        ->  true
        ;   term_words(Fun, FunWords),
            term_words(X, XWords),
            format(string(M), "~w aggregates ~w, which no event of the pattern binds (the values are taken \c
                               from the events, not from a where condition)", [FunWords, XWords]),
            etalis_error(M, "aggregate an argument of an event of the pattern, e.g. \c
                             aggregate(sum(V), reading(S, V), count(10), Total)", Where)
        )
    ;   etalis_error("an aggregate is taken over a variable of its pattern",
                     "write e.g. sum(V) where V occurs in the pattern", Where)
    ).
pattern(Term, Pos, Src, _) :-
    refused_operator(Term, Name, Why, Instead),
    !,
    operator_where(Pos, Src, Where),
    format(string(M), "ETALIS's ~w is not supported here: ~w", [Name, Why]),
    etalis_error(M, Instead, Where).
pattern(aggregate(Fun, P, Result), Pos, Src, _) :-
    !,
    pos_where(Pos, Src, Where),
    term_words(aggregate(Fun, P, Result), Words),
    format(string(M), "ETALIS's three-argument aggregate ~w is understood only as the whole body Start seq aggregate(F, P, R), the running aggregate since Start", [Words]),
    etalis_error(M, "write the rule as d(C) <- start seq aggregate(count, a(Y), C), or give the aggregate a window: aggregate(count, a(Y), count(100), C) or aggregate(sum(Y), a(Y), time(minutes(5)), S)", Where).
pattern(Term, Pos, Src, _) :-
    goal_step(Term, Name, _),
    !,
    pos_where(Pos, Src, Where),
    format(string(M), "a ~w(Goal) step is only understood as an operand of seq: `P seq ~w(G)` or `~w(G) seq P`",
           [Name, Name, Name]),
    etalis_error(M, "write the goal as a condition: P where G", Where).
pattern(Term, Pos, Src, event(Plus)) :-
    compound(Term),
    compound_name_arguments(Term, Name, [P]),
    operator(Name, _, kleene),
    !,
    pos_where(Pos, Src, Where),
    pos_args(Pos, 1, [PP]),
    pattern(P, PP, Src, P1),
    b_getval(etalis_kleene, Pending),
    b_setval(etalis_kleene, [kleene(Plus, P1, Where)|Pending]).
pattern('<-'(Head, Body), Pos, Src, event(Head)) :-
    !,
    pos_args(Pos, 2, [HeadPos, BodyPos]),
    pos_where(Pos, Src, Where),
    rule_head(Head, HeadPos, Src, Head1),
    (   Head1 = '$timer'(_, _)
    ->  etalis_error("a timer cannot be a rule nested in a pattern: its event does not occur with the pattern",
                     "write the timer as a rule of its own and use its event in the pattern", Where)
    ;   true
    ),
    pattern(Body, BodyPos, Src, Pattern),
    b_getval(etalis_var_names, VarNames),
    copy_term(Head-Pattern-VarNames, Rule),
    Rule = H1-P1-VN1,
    b_getval(etalis_nested_rules, Nested),
    b_setval(etalis_nested_rules, [rule('', H1, P1, Where, VN1)|Nested]).
pattern(Term, Pos, Src, Pattern) :-
    compound(Term),
    compound_name_arguments(Term, Name, [L, R]),
    pattern_operator(Name, Op, Kind),
    !,
    pos_args(Pos, 2, [LP, RP]),
    operator_pattern(Kind, Op, L, LP, R, RP, Pos, Src, Pattern).
pattern(Term, Pos, Src, event(Term)) :-
    pos_where(Pos, Src, Where),
    (   Term == !
    ->  etalis_error("! (cut) is Prolog control, not an event",
                     "combine events with seq, and, par or or; put Prolog goals after where", Where)
    ;   control_construct(Term, Name)
    ->  format(string(M), "~w is Prolog control, not an event operator", [Name]),
        etalis_error(M, "combine events with seq, and, par or or; put Prolog goals after where", Where)
    ;   callable(Term), not_an_event(Term, What)
    ->  format(string(M), "~w is not an event", [What]),
        etalis_error(M, "an event is an atom or a compound term such as a(X)", Where)
    ;   callable(Term), \+ reserved_name(Term)
    ->  true
    ;   callable(Term)
    ->  etalis_error("event names starting with $ are reserved", "rename the event", Where)
    ;   term_words(Term, Words),
        format(string(M), "unknown construct ~w in a pattern", [Words]),
        etalis_error(M, "expected an event such as a(X), or a pattern built with seq, and, par, or, cnot, fnot, an Allen relation, where or within", Where)
    ).

any_event(Src, E, Pos, P) :-
    pattern(E, Pos, Src, P).

list_positions(list_position(_, _, Poss, none), List, Poss) :-
    same_length(List, Poss),
    !.
list_positions(Pos, List, Poss) :-
    same_length(List, Poss),
    maplist(=(Pos), Poss).

%   any(N, Es): N distinct events of Es, in any order, is the `or` of
%   the `and` of each N-combination of Es.

%   combinations(+N, +Ps, -Cs): the N-element sublists of Ps, sharing
%   the variables of Ps (so no findall/3, which would copy them).

combinations(0, _, [[]]) :- !.
combinations(_, [], []) :- !.
combinations(N, [P|Ps], Cs) :-
    N1 is N - 1,
    combinations(N1, Ps, With0),
    maplist(cons(P), With0, With),
    combinations(N, Ps, Without),
    append(With, Without, Cs).

cons(H, T, [H|T]).

all_of([P], P) :- !.
all_of([P|Ps], op(and, P, Rest)) :-
    all_of(Ps, Rest).

one_of([P], P) :- !.
one_of([P|Ps], or(P, Rest)) :-
    one_of(Ps, Rest).

%   iterate(+N, +P, -Pattern): P N times in sequence.  The copies share
%   the named variables of P; the anonymous ones are fresh in each.

iterate(1, P, P) :- !.
iterate(N, P, op(seq, Rest, Copy)) :-
    N1 is N - 1,
    iterate(N1, P, Rest),
    fresh_anonymous(P, Copy).

fresh_anonymous(P, Copy) :-
    b_getval(etalis_var_names, VarNames),
    term_variables(P, Vs),
    exclude(named(VarNames), Vs, Anon),
    copy_term(Anon-P, _-Copy0),
    term_variables(Copy0, CVs),
    term_variables(P, PVs),
    pairs_keys_values(Pairs, PVs, CVs),
    maplist(rebind_named(VarNames), Pairs),
    Copy = Copy0.

named(VarNames, V) :-
    member(_ = V0, VarNames),
    V0 == V,
    !.

rebind_named(VarNames, V-C) :-
    (   named(VarNames, V)
    ->  C = V
    ;   true
    ).

%   event_variable(+X, +Pattern): the variable X occurs in an event of
%   the parsed Pattern (not only in its where conditions).

event_variable(X, P) :-
    sub_term(S, P),
    compound(S),
    S = event(E),
    term_variables(E, Vs),
    member(V, Vs),
    V == X,
    !.

aggregate_function(count, count, _, _) :- !.
aggregate_function(Fun, F, X, Where) :-
    (   compound(Fun), Fun =.. [F, X], memberchk(F, [sum, avg, min, max])
    ->  true
    ;   term_words(Fun, Words),
        format(string(M), "unknown aggregate ~w", [Words]),
        etalis_error(M, "use count, sum(X), avg(X), min(X) or max(X)", Where)
    ).

aggregate_window(count(N), count(N), _) :-
    integer(N), N >= 1, !.
aggregate_window(time(D), time(S), Where) :- !,
    duration_seconds(D, Where, S).
aggregate_window(W, _, Where) :-
    term_words(W, Words),
    format(string(M), "~w is not an aggregate window", [Words]),
    etalis_error(M, "use count(N) for the last N occurrences or time(D) for those of the last D seconds", Where).

%   pattern_operator(+Name, -Op, -Kind): Name is a binary operator of
%   patterns, or another spelling of one (ETALIS's `check`); Op is the
%   operator it means, Kind says how it is read (see operator_pattern/9).

%   refused_operator(+Term, -Name, -Why, -Instead): Term is built by an
%   ETALIS operator Name that the table refuses.

refused_operator(Term, Name, Why, Instead) :-
    compound(Term),
    compound_name_arity(Term, Name, Arity),
    operator(Name, op(_, Type), refused(Why, Instead)),
    type_arity(Type, Arity).

pattern_operator(Name, Op, Kind) :-
    operator(Name, op(_, Type), Meaning),
    type_arity(Type, 2),
    (   Meaning = same_as(Op)
    ->  operator(Op, _, Meaning1)
    ;   Op = Name,
        Meaning1 = Meaning
    ),
    meaning_kind(Meaning1, Kind).

%   goal_step(@Term, -Name, -Goal): Term is one of ETALIS's goal steps
%   prolog(Goal), query(Goal) and db(Goal), which its compiler runs
%   alike when a sequence reaches them.

goal_step(Term, Name, Goal) :-
    compound(Term),
    compound_name_arguments(Term, Name, [Goal]),
    memberchk(Name, [prolog, query, db]).

meaning_kind(temporal(_, _, _, _, _), temporal).
meaning_kind(consuming(_, _), temporal).
meaning_kind(construct(Form, _), construct(Form)).

operator_pattern(temporal, seq, L, LP, R, GP, _, Src, where(P, Goal)) :-
    goal_step(R, _, Goal),
    !,                                          % ETALIS: P seq prolog(G)
    pattern(L, LP, Src, P),
    pos_args(GP, 1, [GoalPos]),
    where_goal(Goal, GoalPos, Src).
operator_pattern(temporal, seq, L, GP, R, RP, _, Src, where(Q, Goal)) :-
    goal_step(L, _, Goal),
    !,                                          % ETALIS: prolog(G) seq P
    pos_args(GP, 1, [GoalPos]),
    where_goal(Goal, GoalPos, Src),
    pattern(R, RP, Src, Q).
operator_pattern(temporal, Op, L, LP, R, RP, _, Src, op(Op, P, Q)) :-
    pattern(L, LP, Src, P),
    pattern(R, RP, Src, Q).
operator_pattern(construct([_:KL, _:KR]), Op, L, LP, R, RP, Pos, Src, Pattern) :-
    construct_part(KL, Op, L, LP, Pos, Src, P),
    construct_part(KR, Op, R, RP, Pos, Src, Q),
    Pattern =.. [Op, P, Q].

%   construct_part(+Kind, +Op, +Term, +TermPos, +Pos, +Src, -Value): the
%   operand Term of the construct Op (at Pos) read as its Kind says (see
%   etalis_optable:operator/3).

construct_part(pattern, _, T, TP, _, Src, P) :-
    pattern(T, TP, Src, P).
construct_part(negated, _, T, TP, _, Src, P) :-
    pattern(T, TP, Src, P).
construct_part(sequence, Op, T, TP, Pos, Src, P) :-
    pattern(T, TP, Src, P),
    (   P = op(seq, _, _)
    ->  true
    ;   pos_where(Pos, Src, Where),
        format(string(M), "~w negates an event between the two parts of a sequence", [Op]),
        format(string(H), "write (A seq B) ~w C", [Op]),
        etalis_error(M, H, Where)
    ).
construct_part(goal, _, Goal, GP, _, Src, Goal) :-
    where_goal(Goal, GP, Src).
construct_part(seconds, _, Duration, DP, _, Src, Seconds) :-
    pos_where(DP, Src, Where),
    duration_seconds(Duration, Where, Seconds).
