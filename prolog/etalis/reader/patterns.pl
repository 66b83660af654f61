:- module(etalis_patterns,
          [ % Patterns and heads
            pattern/6,                  % +Term, +Pos, +Src, -Pattern, +State0, -State
            rule_head/5,                % +Head0, +Pos, +Src, +State, -Head
            own_conditions/3,           % +Pattern, +Where, +State
            % The state of reading one clause
            reading_state/2,            % +VarNames, -State
            reading_var_names/2,        % +State, -VarNames
            reading_hidden/3            % +State, -Nested, -Kleene
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module('../errors', [etalis_error/3]).
:- use_module('../compiler/optable', [operator/3]).
:- use_module(positions, [pos_where/3, pos_args/3, operator_where/3]).
:- use_module(terms, [ term_words/3, pattern_functor/1, type_arity/2, control_construct/2,
                       not_an_event/2, reserved_name/1, where_goal/3, duration_seconds/4,
                       finite_number/1 ]).
:- use_module('../compiler/rule_facts', [where_outside/2]).

/** <module> Event patterns, checked and normalised

A pattern as the rule file writes it (`a(X) seq b(X) where X > 1`)
becomes a term of the pattern language: `event(E)`, `op(Op, P, Q)` for
the temporal binary operators, `or(P, Q)`, `cnot(P, C)`, `fnot(P, C)`,
`where(P, Goal)`, `within(P, Seconds)` and aggregate(Fun, X, P, Window,
Result); `iteration(P, N)` is unrolled into a sequence and `any(N,
Es)` into the `or` of `and`s.

A clause is read with a state of its own (reading_state/2): the
variable names the file gave it, for messages, and what its pattern
hands to the rule being read (see etalis_items:item/5): the rules
nested in it, its `P+`s, and the position of each `where` condition.
*/

%!  reading_state(+VarNames, -State) is det.
%
%   State is the state of reading a clause whose variables VarNames
%   names, before any of its pattern is read.

reading_state(VarNames, reading(VarNames, [], [], [])).

%!  reading_var_names(+State, -VarNames) is det.
%
%   VarNames are the variable names of the clause State reads.

reading_var_names(reading(VarNames, _, _, _), VarNames).

%!  reading_hidden(+State, -Nested, -Kleene) is det.
%
%   Nested are the rules nested in the patterns read in State, each a
%   rule(Label, Head, Pattern, Where, VarNames), and Kleene their `P+`s,
%   each kleene(Event, Pattern, Where) (see etalis_kleene:kleene_rules/5);
%   both in the order they were read, inner ones first.

reading_hidden(reading(_, Nested0, Kleene0, _), Nested, Kleene) :-
    reverse(Nested0, Nested),
    reverse(Kleene0, Kleene).

nested_rule(Rule, reading(VN, Nested, K, C), reading(VN, [Rule|Nested], K, C)).

kleene(Plus, reading(VN, N, Kleene, C), reading(VN, N, [Plus|Kleene], C)).

condition(Goal, Where, reading(VN, N, K, Conditions), reading(VN, N, K, [Goal-Where|Conditions])).

%!  own_conditions(+Pattern, +Where, +State) is det.
%
%   Each `where` condition of Pattern, read in State, reads only what
%   the pattern it filters binds, or what no event of Pattern binds
%   (which `etalis check` warns of): a condition runs on its own
%   pattern's bindings, so a variable that only another event binds is
%   unbound there (see etalis_rule_facts:where_outside/2).
%
%   @error etalis_error(Message, Hint) at the condition (at Where if
%   State does not know it).

own_conditions(_, _, reading(_, _, _, [])) :-
    !.                                          % no condition read
own_conditions(Pattern, Where, State) :-
    where_outside(Pattern, Outside),
    (   Outside = [outside(Goal, Vars)|_]
    ->  State = reading(VarNames, _, _, Conditions),
        (   member(Condition-W, Conditions),
            sub_term(G, Condition),
            G == Goal
        ->  true
        ;   W = Where
        ),
        term_words(Goal, VarNames, GoalWords),
        maplist(var_words(VarNames), Vars, Names),
        atomic_list_concat(Names, ', ', VarWords),
        format(string(M), "`~w` in a where condition reads ~w, which only an event outside the pattern it \c
                           filters binds: a condition runs on that pattern's own bindings", [GoalWords, VarWords]),
        etalis_error(M, "put the condition on a pattern that binds every variable it reads: \c
                         (a(X) seq b(Y)) where Y > X, not a(X) seq (b(Y) where Y > X)", W)
    ;   true
    ).

var_words(VarNames, V, Words) :-
    term_words(V, VarNames, Words).

words(State, Term, Words) :-
    reading_var_names(State, VarNames),
    term_words(Term, VarNames, Words).

%!  rule_head(+Head0, +Pos, +Src, +State, -Head) is det.
%
%   Head is the head Head0 of an event rule, read in State: an event,
%   or one of original ETALIS's timers as '$timer'(Event, When) (see
%   timer/4).
%
%   @error etalis_error(Message, Hint) where Head0 is no event.

rule_head(Head0, Pos, Src, State, Head) :-
    pos_where(Pos, Src, Where),
    (   var(Head0)
    ->  etalis_error("the head of an event rule cannot be a variable",
                     "write the complex event, e.g. alarm(X) <- a(X) seq b(X).", Where)
    ;   timer(Head0, Name, E, When0)
    ->  pos_args(Pos, 2, [EPos, WhenPos]),
        rule_head(E, EPos, Src, State, E1),
        (   E1 = '$timer'(_, _)
        ->  etalis_error("the event of a timer cannot be a timer", "write the event that occurs when the timer is due", Where)
        ;   true
        ),
        pos_where(WhenPos, Src, WhenWhere),
        timer_when(Name, When0, WhenWhere, State, When),
        Head = '$timer'(E1, When)
    ;   Head = Head0,
        plain_head(Head, Where)
    ).

plain_head(Head, Where) :-
    (   \+ callable(Head)
    ->  term_words(Head, [], Words),
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

%   timer_when(+Name, +When0, +Where, +State, -When): the delay or time
%   of a timer, checked where it is written; a variable is bound by the
%   pattern or its condition and checked when the timer is set.

timer_when(_, When, _, _, When) :-
    arg(1, When, X),
    var(X),
    !.
timer_when(exceptionAlarm, after(D), Where, State, after(S)) :-
    (   number(D), finite_number(D), D > 0
    ->  S = D
    ;   words(State, D, Words),
        format(string(M), "the delay of exceptionAlarm/2 must be a positive number of seconds, not ~w", [Words]),
        etalis_error(M, "write e.g. exceptionAlarm(b(X), 60) <- a(X). for b(X) 60 s after a(X)", Where)
    ).
timer_when(exceptionAlarmAbsoluteDatime, at(T), Where, State, at(S)) :-
    (   number(T), finite_number(T)
    ->  S = T
    ;   T = datime(_, _, _, _, _, _)
    ->  S = T
    ;   T = datime(_, _, _, _, _, _, _)
    ->  S = T
    ;   words(State, T, Words),
        format(string(M), "the time of exceptionAlarmAbsoluteDatime/2 must be a number of seconds or a datime(Y,M,D,H,Min,S), not ~w", [Words]),
        etalis_error(M, "write e.g. exceptionAlarmAbsoluteDatime(c(X), T) <- a(X) where (end(E), T is E + 60).", Where)
    ).

%!  pattern(+Term, +Pos, +Src, -Pattern, +State0, -State) is det.
%
%   Validate an event pattern and normalise it.  State is State0 with
%   the rules nested in Term, its `P+`s and its conditions.
%
%   @error etalis_error(Message, Hint) where Term is no pattern.

pattern(Term, Pos, Src, _, _, _) :-
    var(Term),
    !,
    pos_where(Pos, Src, Where),
    etalis_error("a pattern cannot be a variable",
                 "name the event, e.g. a(X) instead of X", Where).
pattern(iteration(P, N), Pos, Src, Pattern, S0, S) :-
    !,
    pos_where(Pos, Src, Where),
    (   integer(N), N >= 1
    ->  true
    ;   words(S0, N, Words),
        format(string(M), "iteration needs a count of 1 or more, not ~w", [Words]),
        etalis_error(M, "write e.g. iteration(reading(S, _), 3)", Where)
    ),
    pos_args(Pos, 2, [PP, _]),
    pattern(P, PP, Src, P1, S0, S),
    reading_var_names(S, VarNames),
    iterate(N, P1, VarNames, Pattern).
pattern(any(N, List), Pos, Src, Pattern, S0, S) :-
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
    ;   words(S0, N, Words),
        format(string(M), "any needs a count from 1 to ~d, not ~w", [Len, Words]),
        etalis_error(M, "write e.g. any(2, [a(X), b(X), c(X)])", Where)
    ),
    pos_args(Pos, 2, [_, ListPos]),
    list_positions(ListPos, List, Poss),
    foldl(any_event(Src), List, Poss, Ps, S0, S),
    combinations(N, Ps, Combinations),
    maplist(all_of, Combinations, Alternatives),
    one_of(Alternatives, Pattern).
pattern(aggregate(Fun, P, Window, Result), Pos, Src, aggregate(F, X, P1, Win, Result), S0, S) :-
    !,
    pos_where(Pos, Src, Where),
    pos_args(Pos, 4, [_, PP, _, _]),
    pattern(P, PP, Src, P1, S0, S),
    aggregate_function(Fun, F, X, Where, S),
    aggregate_window(Window, Win, Where, S),
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
        ;   words(S, Fun, FunWords),
            words(S, X, XWords),
            format(string(M), "~w aggregates ~w, which no event of the pattern binds (the values are taken \c
                               from the events, not from a where condition)", [FunWords, XWords]),
            etalis_error(M, "aggregate an argument of an event of the pattern, e.g. \c
                             aggregate(sum(V), reading(S, V), count(10), Total)", Where)
        )
    ;   etalis_error("an aggregate is taken over a variable of its pattern",
                     "write e.g. sum(V) where V occurs in the pattern", Where)
    ).
pattern(Term, Pos, Src, _, _, _) :-
    refused_operator(Term, Name, Why, Instead),
    !,
    operator_where(Pos, Src, Where),
    format(string(M), "ETALIS's ~w is not supported here: ~w", [Name, Why]),
    etalis_error(M, Instead, Where).
pattern(aggregate(Fun, P, Result), Pos, Src, _, S0, _) :-
    !,
    pos_where(Pos, Src, Where),
    words(S0, aggregate(Fun, P, Result), Words),
    format(string(M), "ETALIS's three-argument aggregate ~w is understood only as the whole body Start seq aggregate(F, P, R), the running aggregate since Start", [Words]),
    etalis_error(M, "write the rule as d(C) <- start seq aggregate(count, a(Y), C), or give the aggregate a window: aggregate(count, a(Y), count(100), C) or aggregate(sum(Y), a(Y), time(minutes(5)), S)", Where).
pattern(Term, Pos, Src, _, _, _) :-
    goal_step(Term, Name, _),
    !,
    pos_where(Pos, Src, Where),
    format(string(M), "a ~w(Goal) step is only understood as an operand of seq: `P seq ~w(G)` or `~w(G) seq P`",
           [Name, Name, Name]),
    etalis_error(M, "write the goal as a condition: P where G", Where).
pattern(Term, Pos, Src, event(Plus), S0, S) :-
    compound(Term),
    compound_name_arguments(Term, Name, [P]),
    operator(Name, _, kleene),
    !,
    pos_where(Pos, Src, Where),
    pos_args(Pos, 1, [PP]),
    pattern(P, PP, Src, P1, S0, S1),
    own_conditions(P1, Where, S1),
    kleene(kleene(Plus, P1, Where), S1, S).
pattern('<-'(Head, Body), Pos, Src, event(Head), S0, S) :-
    !,
    pos_args(Pos, 2, [HeadPos, BodyPos]),
    pos_where(Pos, Src, Where),
    rule_head(Head, HeadPos, Src, S0, Head1),
    (   Head1 = '$timer'(_, _)
    ->  etalis_error("a timer cannot be a rule nested in a pattern: its event does not occur with the pattern",
                     "write the timer as a rule of its own and use its event in the pattern", Where)
    ;   true
    ),
    pattern(Body, BodyPos, Src, Pattern, S0, S1),
    own_conditions(Pattern, Where, S1),
    reading_var_names(S1, VarNames),
    copy_term(Head-Pattern-VarNames, Rule),
    Rule = H1-P1-VN1,
    nested_rule(rule('', H1, P1, Where, VN1), S1, S).
pattern(Term, Pos, Src, Pattern, S0, S) :-
    compound(Term),
    compound_name_arguments(Term, Name, [L, R]),
    pattern_operator(Name, Op, Kind),
    !,
    pos_args(Pos, 2, [LP, RP]),
    operator_pattern(Kind, Op, L, LP, R, RP, Pos, Src, Pattern, S0, S).
pattern(Term, Pos, Src, event(Term), S, S) :-
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
    ;   words(S, Term, Words),
        format(string(M), "unknown construct ~w in a pattern", [Words]),
        etalis_error(M, "expected an event such as a(X), or a pattern built with seq, and, par, or, cnot, fnot, an Allen relation, where or within", Where)
    ).

any_event(Src, E, Pos, P, S0, S) :-
    pattern(E, Pos, Src, P, S0, S).

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

%   iterate(+N, +P, +VarNames, -Pattern): P N times in sequence.  The
%   copies share the variables of P that VarNames names; the anonymous
%   ones are fresh in each.

iterate(1, P, _, P) :- !.
iterate(N, P, VarNames, op(seq, Rest, Copy)) :-
    N1 is N - 1,
    iterate(N1, P, VarNames, Rest),
    fresh_anonymous(P, VarNames, Copy).

fresh_anonymous(P, VarNames, Copy) :-
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

aggregate_function(count, count, _, _, _) :- !.
aggregate_function(Fun, F, X, Where, S) :-
    (   compound(Fun), Fun =.. [F, X], memberchk(F, [sum, avg, min, max])
    ->  true
    ;   words(S, Fun, Words),
        format(string(M), "unknown aggregate ~w", [Words]),
        etalis_error(M, "use count, sum(X), avg(X), min(X) or max(X)", Where)
    ).

aggregate_window(count(N), count(N), _, _) :-
    integer(N), N >= 1, !.
aggregate_window(time(D), time(Seconds), Where, S) :- !,
    reading_var_names(S, VarNames),
    duration_seconds(D, VarNames, Where, Seconds).
aggregate_window(W, _, Where, S) :-
    words(S, W, Words),
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

operator_pattern(temporal, seq, L, LP, R, GP, _, Src, where(P, Goal), S0, S) :-
    goal_step(R, _, Goal),
    !,                                          % ETALIS: P seq prolog(G)
    pattern(L, LP, Src, P, S0, S1),
    pos_args(GP, 1, [GoalPos]),
    goal_part(Goal, GoalPos, Src, S1, S).
operator_pattern(temporal, seq, L, GP, R, RP, _, Src, where(Q, Goal), S0, S) :-
    goal_step(L, _, Goal),
    !,                                          % ETALIS: prolog(G) seq P
    pos_args(GP, 1, [GoalPos]),
    goal_part(Goal, GoalPos, Src, S0, S1),
    pattern(R, RP, Src, Q, S1, S).
operator_pattern(temporal, Op, L, LP, R, RP, _, Src, op(Op, P, Q), S0, S) :-
    pattern(L, LP, Src, P, S0, S1),
    pattern(R, RP, Src, Q, S1, S).
operator_pattern(construct([_:KL, _:KR]), Op, L, LP, R, RP, Pos, Src, Pattern, S0, S) :-
    construct_part(KL, Op, L, LP, Pos, Src, P, S0, S1),
    construct_part(KR, Op, R, RP, Pos, Src, Q, S1, S),
    Pattern =.. [Op, P, Q].

%   construct_part(+Kind, +Op, +Term, +TermPos, +Pos, +Src, -Value,
%   +State0, -State): the operand Term of the construct Op (at Pos) read
%   as its Kind says (see etalis_optable:operator/3).

construct_part(pattern, _, T, TP, _, Src, P, S0, S) :-
    pattern(T, TP, Src, P, S0, S).
construct_part(negated, _, T, TP, _, Src, P, S0, S) :-
    pattern(T, TP, Src, P, S0, S).
construct_part(sequence, Op, T, TP, Pos, Src, P, S0, S) :-
    pattern(T, TP, Src, P, S0, S),
    (   P = op(seq, _, _)
    ->  true
    ;   pos_where(Pos, Src, Where),
        format(string(M), "~w negates an event between the two parts of a sequence", [Op]),
        format(string(H), "write (A seq B) ~w C", [Op]),
        etalis_error(M, H, Where)
    ).
construct_part(goal, _, Goal, GP, _, Src, Goal, S0, S) :-
    goal_part(Goal, GP, Src, S0, S).
construct_part(seconds, _, Duration, DP, _, Src, Seconds, S, S) :-
    pos_where(DP, Src, Where),
    reading_var_names(S, VarNames),
    duration_seconds(Duration, VarNames, Where, Seconds).

%   goal_part(+Goal, +Pos, +Src, +State0, -State): Goal, at Pos, is a
%   condition, whose position State notes (see own_conditions/3).

goal_part(Goal, GP, Src, S0, S) :-
    where_goal(Goal, GP, Src),
    pos_where(GP, Src, Where),
    condition(Goal, Where, S0, S).
