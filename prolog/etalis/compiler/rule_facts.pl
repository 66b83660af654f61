:- module(etalis_rule_facts,
          [ % The events of a pattern in time
            event_steps/2,              % +Pattern, -Steps
            lasting/2,                  % +Operator, -Lasts
            source_pattern/2,           % +Pattern, -Source
            % Its where conditions
            where_unbound/2,            % +Pattern, -Unbound
            where_outside/2,            % +Pattern, -Outside
            where_never/2,              % +Pattern, -Never
            % Its head
            numeric_head_args/3,        % +Head, +Pattern, -Positions
            head_unbound/3,             % +Head, +Pattern, -Vars
            % Static clauses and goals
            static_event_operators/2,   % +Clause, -Operators
            vocabulary_use/3            % +Goal, -Kind, -IRI
          ]).
:- use_module(library(apply)).
:- use_module(library(lists)).
:- use_module(library(error)).
:- use_module(library(dcg/high_order), [sequence//2]).
:- use_module('../reader/terms', [pattern_functor/1]).
:- use_module(recursion, [immediate_event/3, aggregated_event/2]).
:- use_module(optable, [pattern_parts/3, sub_pattern/3, map_sub_patterns/3, pattern_kind/1, construct_parts/3,
                         guarded_part/3, end_point_instance/4]).

/** <module> Facts about rules for the static checks of `etalis check`

The `rules` request of the API gives, with each parsed rule, what the
checks in Python (etalis_py.rules.findings) need and only Prolog can tell:
how each event of a pattern relates in time to the head (the compiler's
own recursion check decides it), which variables of a `where`
condition are unbound when it runs, which static clauses use event
operators in their body (a `:-` written for a `<-`), and which IRIs a
goal asks the knowledge about as classes and properties.
*/

%!  vocabulary_use(+Goal, -Kind, -IRI) is nondet.
%
%   Goal (a `where` condition or a static clause's body) asks the
%   background knowledge about IRI (an atom with a colon) as a Kind,
%   `class` or `property`: the predicate of rdf/3 (its object, if the
%   predicate is rdf:type, is a class), the class of isa/2.  What a
%   graph event is asked (triple/4, isa/3) is the graph's own.

vocabulary_use(Goal, Kind, IRI) :-
    sub_term(G, Goal),
    compound(G),
    vocabulary_goal(G, Kind, IRI),
    atom(IRI),
    sub_atom(IRI, _, _, _, :).

vocabulary_goal(rdf(_, P, O), Kind, IRI) :-
    asked(P, O, Kind, IRI).
vocabulary_goal(isa(_, C), class, C).

asked(P, O, Kind, IRI) :-
    (   P == 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type'
    ->  Kind = class,
        IRI = O
    ;   Kind = property,
        IRI = P
    ).

%!  event_steps(+Pattern, -Steps:list) is det.
%
%   Steps has Event-Step for each event occurrence of the normalised
%   Pattern (see read_etl_string/3), in pattern order.  Step is
%
%     - `repeating`: the event's occurrence completes the pattern at
%       once, over the event's own interval or one no wider
%       (check_recursion/2 derives each occurrence of a cycle of such
%       steps once, so the cycle ends);
%     - `immediate`: the same through an aggregate, whose values are
%       new in every round (check_recursion/2 refuses a cycle of such
%       steps);
%     - `guarded`: it would, but only through a `where` condition;
%     - `widening`: it completes the pattern at once, but always over
%       a strictly wider interval (the right of `seq`), so a cycle
%       through it ends;
%     - `waiting`: it completes the pattern only with an operand that
%       waits for it, so a cycle through it advances in time;
%     - `negated`: it is the negated part of `cnot` or `fnot`.

event_steps(Pattern, Steps) :-
    unguarded(Pattern, Unguarded),
    findall(E-Step, ( pattern_event(Pattern, E, Role),
                      event_step(Role, Pattern, Unguarded, E, Step) ), Steps).

pattern_event(event(E), E, positive).
pattern_event(P, E, Role) :-
    sub_pattern(P, Kind, S),
    pattern_event(S, E, Role0),
    (   Kind == negated -> Role = negated ; Role = Role0 ).

event_step(negated, _, _, _, negated) :- !.
event_step(positive, P, _, E, Step) :-
    immediate_event(P, E1, Widens), E1 == E, !,
    (   Widens == true
    ->  Step = widening
    ;   aggregated_event(P, E2), E2 == E
    ->  Step = immediate
    ;   Step = repeating
    ).
event_step(positive, _, U, E, Step) :-
    immediate_event(U, E1, Widens), E1 == E, !,
    (   Widens == true -> Step = widening ; Step = guarded ).
event_step(positive, _, _, _, waiting).

%   unguarded(+Pattern, -Unguarded): Pattern without its where
%   conditions (the events are the same terms).

unguarded(event(E), event(E)) :- !.
unguarded(P0, P) :-
    guarded_part(P0, S, _),
    !,
    unguarded(S, P).
unguarded(P0, P) :-
    map_sub_patterns(unguarded, P0, P).

%!  where_unbound(+Pattern, -Unbound:list) is det.
%
%   Unbound has unbound(Goal, Vars) for each arithmetic goal (a
%   comparison, or the right of `is`) of a `where` condition of Pattern
%   that uses variables Vars that are unbound when it runs: bound
%   neither by the pattern it filters nor by an earlier goal of the
%   condition.  A goal other than arithmetic is taken to bind all its
%   variables; a variable of only one side of an `or` is unbound.

where_unbound(Pattern, Unbound) :-
    phrase(unbound(Pattern, []), Unbound).

%!  where_outside(+Pattern, -Outside:list) is det.
%
%   Outside has outside(Goal, Vars) for each goal of where_unbound/2
%   whose unbound variables Vars occur in events of Pattern outside the
%   pattern the condition filters (`a(X) seq (b(Y) where Y > X)`), or
%   are the results of its aggregates.  The condition runs on its own
%   pattern's bindings, where they are not bound (the paper has every
%   variable of `P where t`'s t occur in P).  A variable of only some
%   alternatives of an `or` inside the pattern it filters is left to
%   etalis_binarize, which refuses it.

where_outside(Pattern, Outside) :-
    where_unbound(Pattern, Unbound),
    pattern_vars(Pattern, Vars),
    foldl(outside(Pattern, Vars), Unbound, Outside, []).

outside(Pattern, PatternVars, unbound(Goal, Vars), Outside0, Outside) :-
    include(var_in_(PatternVars), Vars, Read0),
    (   Read0 \== [],
        sub_term(W, Pattern),
        compound(W),
        guarded_part(W, Own, G),
        sub_term(X, G),
        X == Goal
    ->  pattern_vars(Own, OwnVars),
        exclude(var_in_(OwnVars), Read0, Read)
    ;   Read = Read0
    ),
    (   Read == []
    ->  Outside0 = Outside
    ;   Outside0 = [outside(Goal, Read)|Outside]
    ).

pattern_vars(Pattern, Vars) :-
    phrase(events(Pattern), Events),
    term_variables(Events, Vars).

%   events(+Pattern)//: the events of Pattern, negated ones too, and
%   the results of its aggregates, walked in place.

events(event(E)) --> !, [E].
events(P) -->
    { pattern_parts(P, _, Parts) -> true ; Parts = [] },
    sequence(part_events, Parts).

part_events(_-Kind-S) -->
    (   { pattern_kind(Kind) }
    ->  events(S)
    ;   { Kind == result }
    ->  [S]
    ;   []
    ).

%   unbound(+Pattern, +Outer)//: the unbound goals of Pattern's
%   conditions, Outer the variables bound around it: for the conditions
%   directly on the negated part of `cnot` or `fnot`, those its other
%   parts bind, since they run with them (see
%   etalis_binarize:binarize_negation/7).  The sub-patterns are walked
%   in place (not copied), so that the variables keep their names.

unbound(event(_), _) --> !, [].
unbound(P, Outer) -->
    { guarded_part(P, A, G) },
    !,
    unbound(A, Outer),
    { bound(A, Bound0), append(Outer, Bound0, Bound) },
    goal_unbound(G, Bound, _).
unbound(P, _) -->
    { pattern_parts(P, _, Parts) -> true ; Parts = [] },
    unbound_parts(Parts, P).

%   unbound_parts(+Parts, +Pattern)//: the sub-patterns Parts of Pattern
%   walked as they are, not copied (as findall/3 would): the goals and
%   variables found are Pattern's, which rule_json/8 names.  A negated
%   part is walked with what Pattern binds (only then worked out, so
%   that a long chain is walked once).

unbound_parts([], _) --> [].
unbound_parts([_-Kind-S|Parts], P) -->
    (   { Kind == negated }
    ->  { bound(P, Bound) },
        unbound(S, Bound)
    ;   { pattern_kind(Kind) }
    ->  unbound(S, [])
    ;   []
    ),
    unbound_parts(Parts, P).

%!  where_never(+Pattern, -Never:list) is det.
%
%   Never has never(Goal, Why) for each `where` condition Goal of
%   Pattern that can hold for no values of its variables, as its goals
%   joined by `,` (not inside `;`, `->` or `\+`) tell without running
%   any of it.  Why is one of
%
%     - false(G): G is `fail` or `false`, or a comparison of numbers
%       written out (`1 > 2`) that is false;
%     - range(V, Gs): the comparisons Gs of the variable V with numbers
%       (`X > 5`, `X < 3`) admit no number;
%     - not_number(V, Value, G): V is unified with Value, which is not
%       a number (`X = foo`), and the arithmetic G (`X > 1`) needs one.

where_never(Pattern, Never) :-
    phrase(never(Pattern), Never).            % not findall/3: Never shares Pattern's variables

never(event(_)) --> !, [].
never(P) -->
    (   { guarded_part(P, _, G), once(never_holds(G, Why)) }
    ->  [never(G, Why)]
    ;   []
    ),
    { pattern_parts(P, _, Parts) -> true ; Parts = [] },
    never_parts(Parts).

never_parts([]) --> [].
never_parts([_-Kind-S|Parts]) -->
    (   { pattern_kind(Kind) }
    ->  never(S)
    ;   []
    ),
    never_parts(Parts).

never_holds(G, Why) :-
    conjuncts(G, Gs),
    (   member(L, Gs), false_literal(L)
    ->  Why = false(L)
    ;   member(L, Gs), unified_value(L, V, Value), not_evaluable(Value),
        member(A, Gs), arithmetic_use(A, V)
    ->  Why = not_number(V, Value, A)
    ;   term_variables(Gs, Vs),
        member(V, Vs),
        include(compares_number(V), Gs, Cs),
        Cs = [_, _|_],
        \+ numbers_admit(V, Cs)
    ->  Why = range(V, Cs)
    ).

conjuncts(G, [G]) :- var(G), !.
conjuncts((A, B), Gs) :- !,
    conjuncts(A, GA),
    conjuncts(B, GB),
    append(GA, GB, Gs).
conjuncts(G, [G]).

false_literal(G) :- G == fail.
false_literal(G) :- G == false.
false_literal(G) :-
    comparison(G, _, X, Y),
    ground(X-Y),
    catch(\+ call(G), _, fail).

comparison(G, Op, X, Y) :-
    compound(G),
    compound_name_arguments(G, Op, [X, Y]),
    memberchk(Op, [<, >, =<, >=, =:=, =\=]).

unified_value(G, V, Value) :-
    compound(G),
    compound_name_arguments(G, Op, [X, Y]),
    memberchk(Op, [=, ==]),
    (   var(X), nonvar(Y) -> V = X, Value = Y
    ;   var(Y), nonvar(X) -> V = Y, Value = X
    ).

%   not_evaluable(+Value): Value is written out and is no arithmetic
%   (`foo`, "text", f(1)); `pi`, `1+2` and one-character strings are.

not_evaluable(Value) :-
    ground(Value),
    \+ number(Value),
    \+ catch(_ is Value, _, fail).

arithmetic_use(G, V) :-
    (   comparison(G, _, X, Y)
    ->  Expr = X-Y
    ;   compound(G), G = (_ is Expr)
    ),
    term_variables(Expr, Vs),
    var_in(V, Vs).

compares_number(V, G) :-
    comparison(G, _, X, Y),
    (   X == V, number(Y)
    ;   Y == V, number(X)
    ),
    !.

%   numbers_admit(+V, +Comparisons): some number satisfies every one of
%   Comparisons of V with a number: the largest lower bound is below the
%   smallest upper bound (or equal, both inclusive), and an equality
%   lies within them and differs from every inequality.

numbers_admit(V, Cs) :-
    maplist(bound_of(V), Cs, Bounds),
    findall(B-S, member(lower(B, S), Bounds), Lows),
    findall(B-S, member(upper(B, S), Bounds), Highs),
    findall(B, member(equal(B), Bounds), Eqs),
    findall(B, member(unequal(B), Bounds), Neqs),
    (   Eqs = [E|Es]
    ->  forall(member(E1, Es), E1 =:= E),
        forall(member(L-S, Lows), above(E, L, S)),
        forall(member(H-S, Highs), above(H, E, S)),
        forall(member(N, Neqs), N =\= E)
    ;   forall(( member(L-SL, Lows), member(H-SH, Highs) ),
               ( L < H ; L =:= H, SL == inclusive, SH == inclusive ))
    ).

above(X, Y, strict) :- X > Y.
above(X, Y, inclusive) :- X >= Y.

bound_of(V, G, Bound) :-
    comparison(G, Op, X, Y),
    (   X == V -> Side = left, N = Y ; Side = right, N = X ),
    bound(Side, Op, N, Bound).

bound(left, >, N, lower(N, strict)).
bound(left, >=, N, lower(N, inclusive)).
bound(left, <, N, upper(N, strict)).
bound(left, =<, N, upper(N, inclusive)).
bound(right, >, N, upper(N, strict)).
bound(right, >=, N, upper(N, inclusive)).
bound(right, <, N, lower(N, strict)).
bound(right, =<, N, lower(N, inclusive)).
bound(_, =:=, N, equal(N)).
bound(_, =\=, N, unequal(N)).

%!  numeric_head_args(+Head, +Pattern, -Positions:list(integer)) is det.
%
%   Positions are those of the arguments of Head that are numbers in
%   every event the rule derives: a number written out, or a variable
%   that the `where` condition of the whole pattern (its goals joined by
%   `,`) uses in arithmetic, which only numbers pass.

numeric_head_args(Head, Pattern, Positions) :-
    (   compound(Head)
    ->  compound_name_arguments(Head, _, Args)
    ;   Args = []
    ),
    (   guarded_part(Pattern, _, G)
    ->  conjuncts(G, Gs)
    ;   Gs = []
    ),
    findall(I, ( nth1(I, Args, A), numeric_arg(A, Gs) ), Positions).

numeric_arg(A, _) :-
    number(A),
    !.
numeric_arg(A, Gs) :-
    var(A),
    member(G, Gs),
    arithmetic_use(G, A),
    !.

%!  head_unbound(+Head, +Pattern, -Vars:list) is det.
%
%   Vars are the variables of Head that Pattern does not bind (also
%   those it uses only in the negated part of `cnot` or `fnot`): the
%   events the rule derives carry them unbound.

head_unbound(Head, Pattern, Vars) :-
    bound(Pattern, Bound),
    term_variables(Head, HVs),
    exclude(var_in_(Bound), HVs, Vars).

%   bound(+Pattern, -Vars): the variables that Pattern binds: those of
%   its events, but for a construct only those its kinds of parts bind
%   (see etalis_optable:operator/3): those of all of its `pattern`
%   parts (the alternatives of `or`), of its `sequence` and
%   `aggregated` parts, and of its `goal` and `result`; none of a
%   `negated` part.

bound(event(E), Vs) :-
    !,
    term_variables(E, Vs).
bound(op(_, A, B), Vs) :-
    !,
    bound(A, VA), bound(B, VB),
    append(VA, VB, Vs).
bound(P, Vs) :-
    construct_parts(P, _, Parts),
    foldl(alternative_bound, Parts, AltVs, []),
    (   AltVs = [First|Rest]
    ->  foldl(common_vars, Rest, First, Vs0)
    ;   Vs0 = []
    ),
    foldl(part_bound, Parts, Vs0, Vs).

alternative_bound(_-Kind-A, AltVs0, AltVs) :-
    (   Kind == pattern
    ->  bound(A, VA),
        AltVs0 = [VA|AltVs]
    ;   AltVs0 = AltVs
    ).

common_vars(VB, VA, Vs) :-
    include(var_in_(VB), VA, Vs).

part_bound(_-Kind-X, Vs0, Vs) :-
    (   memberchk(Kind, [sequence, aggregated])
    ->  bound(X, VX)
    ;   memberchk(Kind, [goal, result])
    ->  term_variables(X, VX)
    ;   VX = []
    ),
    append(Vs0, VX, Vs).

var_in(V, Vs) :-
    member(X, Vs),
    X == V,
    !.

var_in_(Vs, V) :-
    var_in(V, Vs).

%   goal_unbound(+Goal, +Bound0, -Bound)//: the unbound(Goal, Vars) of
%   Goal's arithmetic run with the variables Bound0 bound.

goal_unbound(G, B, B) --> { var(G) }, !.
goal_unbound((A, C), B0, B) --> !,
    goal_unbound(A, B0, B1),
    goal_unbound(C, B1, B).
goal_unbound((If -> Then), B0, B) --> !,
    goal_unbound(If, B0, B1),
    goal_unbound(Then, B1, B).
goal_unbound((A ; C), B0, B) --> !,
    goal_unbound(A, B0, _),
    goal_unbound(C, B0, _),
    { term_variables(A-C, Vs), append(B0, Vs, B) }.
goal_unbound(\+ A, B, B) --> !,
    goal_unbound(A, B, _).
goal_unbound(G, B0, B) -->
    { compound(G), compound_name_arguments(G, check, Goals) }, !,
    goals_unbound(Goals, B0, B).
goal_unbound(G, B, B) -->
    { compound(G), compound_name_arguments(G, Op, [X, Y]),
      memberchk(Op, [<, >, =<, >=, =:=, =\=]) }, !,
    arithmetic(G, X-Y, B).
goal_unbound(Z is E, B0, B) --> !,
    arithmetic(Z is E, E, B0),
    { term_variables(Z, VZ), append(B0, VZ, B) }.
goal_unbound(G, B0, B) -->
    { term_variables(G, Vs), append(B0, Vs, B) }.

goals_unbound([], B, B) --> [].
goals_unbound([G|Gs], B0, B) -->
    goal_unbound(G, B0, B1),
    goals_unbound(Gs, B1, B).

arithmetic(G, Expr, Bound) -->
    { term_variables(Expr, Vs),
      exclude(var_in_(Bound), Vs, Free) },
    (   { Free == [] }
    ->  []
    ;   [unbound(G, Free)]
    ).

%!  static_event_operators(+Clause, -Operators:list(atom)) is det.
%
%   Operators are the event operators (`seq`, `and`, `within`, ...)
%   of the goals in the body of the static Clause, through Prolog's
%   control constructs, without duplicates: such a clause was most
%   likely meant as an event rule (`<-` rather than `:-`, or than the
%   `=>` of SWI-Prolog's single sided unification rules).

static_event_operators(Clause, Operators) :-
    clause_body(Clause, Body),
    !,
    findall(Op, body_operator(Body, Op), Ops),
    sort(Ops, Operators).
static_event_operators(_, []).

clause_body((_ :- Body), Body).
clause_body((_ => Body), Body).

body_operator(G, _) :-
    var(G), !, fail.
body_operator(G, Op) :-
    control(G, Goals), !,
    member(G1, Goals),
    body_operator(G1, Op).
body_operator(G, Op) :-
    pattern_functor(G),
    functor(G, Op, _).

control((A, B), [A, B]).
control((A ; B), [A, B]).
control((A -> B), [A, B]).
control((A *-> B), [A, B]).
control(\+ A, [A]).

%!  source_pattern(+Pattern, -Source) is det.
%
%   Source is the normalised Pattern written back with the operators of
%   the rule language, for pattern_text/2.

source_pattern(event(E), E) :- !.
source_pattern(P, S) :-
    pattern_parts(P, Op, Parts),
    phrase(source_parts(Parts, Parts), Args),
    S =.. [Op|Args].

%   source_parts(+Parts, +AllParts)//: the arguments of a pattern's
%   source term, each part as its kind is written (see
%   etalis_optable:operator/3): a function with its value, as sum(X).

source_parts([], _) --> [].
source_parts([_-Kind-V|Parts], All) -->
    source_part(Kind, V, All),
    source_parts(Parts, All).

source_part(Kind, P, _) -->
    { pattern_kind(Kind) },
    !,
    { source_pattern(P, S) },
    [S].
source_part(function, F, All) --> !,
    { memberchk(_-value-X, All),
      (   F == count -> SF = count ; SF =.. [F, X] ) },
    [SF].
source_part(value, _, _) --> !, [].
source_part(_, V, _) --> [V].

%!  lasting(+Operator, -Lasts) is det.
%
%   How long an occurrence of the temporal Operator lasts: `always`
%   longer than 0 (`seq`: its operands cannot occur at one time),
%   longer than 0 when `either` operand does (`and`, `meets`,
%   `equals`), or `maybe` not.  Decided from the operator table (see
%   etalis_optable:end_point_instance/4), for `etalis check`'s window-never-met.

:- table lasting/2.

lasting(Op, Lasts) :-
    must_be(atom, Op),
    (   \+ end_point_instance(Op, _, _, i(T, T))
    ->  Lasts = always
    ;   \+ ( end_point_instance(Op, i(A1, A2), i(B1, B2), i(T, T)),
              \+ ( A1 =:= A2, B1 =:= B2 ) )
    ->  Lasts = either
    ;   Lasts = maybe
    ).
