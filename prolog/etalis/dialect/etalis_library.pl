:- module(etalis_library,
          [ etalis_library_items/2,     % +Items0, -Items
            etalis_flags/1              % +Module
          ]).
:- use_module(library(apply)).
:- use_module(library(lists)).
:- use_module('../errors', [etalis_error/3]).

/** <module> The utility predicates of original ETALIS

Rule files written for original ETALIS call predicates of its library
in their conditions and static rules: min/3 and max/3 of two numbers,
the time arithmetic of its datime timestamps, and its named counters
(counter/2, incCounter/1, resetCounter/1).  Time is a number of
seconds here, so the time predicates are arithmetic.  A file that calls
one of them without defining it gets the definition as static rules of
its own, checked and loaded like the rules it wrote.

ETALIS's current_datime/1 reads the machine's clock.  In a `where`
condition it is the time of the detection being made, the pattern's end
time, as end/1 (see etalis_operators:interval_goal/4): a rule sees the
time of its events.  Called by a static rule, which has no detection's
time, it is refused where the file does not define it.  ETALIS's
event/1, raising an event from Prolog, is the engine's own (see
etalis_rule_changes:raise_event/2), and so are its named flags (set_flag/2,
get_flag/2: etalis_flags/1).
*/

%!  etalis_flags(+Module) is det.
%
%   Define original ETALIS's set_flag(Name, Value) and get_flag(Name,
%   Value) in the engine module Module: named values of the engine,
%   kept in its facts flag_internal/2 as ETALIS keeps them, `nil` until
%   set.  SWI-Prolog's predicates of the same names hold values of the
%   whole process, which every engine would share.

etalis_flags(M) :-
    must_be(atom, M),
    dynamic(M:flag_internal/2),
    assertz(M:'$file_dynamic'(flag_internal/2)),    % the rules' own facts (see etalis_guard)
    redefine_system_predicate(M:set_flag(_, _)),
    redefine_system_predicate(M:get_flag(_, _)),
    assertz(M:(set_flag(Name, Value) :- retractall(flag_internal(Name, _)), assertz(flag_internal(Name, Value)))),
    assertz(M:(get_flag(Name, Value) :- ( flag_internal(Name, V) -> Value = V ; Value = nil ))).

%!  etalis_library_items(+Items0, -Items) is det.
%
%   Items are Items0 (see read_etl_string/3) and, after them, the
%   static rules of the ETALIS library predicates that Items0 calls and
%   does not define.
%
%   @error etalis_error(Message, Hint) at the first static rule that
%   calls a refused predicate of ETALIS's library.

etalis_library_items(Items0, Items) :-
    must_be(list, Items0),
    findall(PI, ( member(static(Clause, _), Items0), clause_indicator(Clause, PI) ), Defined0),
    sort(Defined0, Defined),
    maplist(item_mentions, Items0, Mentions),
    include(static_mentions, Mentions, StaticMentions),
    forall(( refused(PI, Message, Hint),
             \+ memberchk(PI, Defined),
             first_use(StaticMentions, PI, Where)
           ),
           etalis_error(Message, Hint, Where)),
    findall(PI-Where,
            ( library_predicate(PI, _),
              \+ memberchk(PI, Defined),
              first_use(Mentions, PI, Where)
            ),
            Used),
    foldl(library_items, Used, Added, []),
    findall(D-Where, ( member(PI-Where, Used),
                       library_dynamic(PI, D),
                       \+ ( member(directive(dynamic(Ds), _), Items0), is_list(Ds), memberchk(D, Ds) ) ),
            Dynamic0),
    sort(1, @<, Dynamic0, Dynamic1),            % each once, where first used
    findall(directive(dynamic([D]), Where), member(D-Where, Dynamic1), Dynamic),
    append([Items0, Dynamic, Added], Items).

library_items(PI-Where, Items, Rest) :-
    library_predicate(PI, Clauses),
    findall(static(C, Where), member(C, Clauses), Statics),
    append(Statics, Rest, Items).

clause_indicator(Clause, N/A) :-
    nonvar(Clause),
    (   Clause = (Head :- _) -> true ; Head = Clause ),
    callable(Head),
    functor(Head, N, A).

%   first_use(+Mentions, +PI, -Where): the position of the first item
%   whose conditions or static rule bodies call (or mention) PI.

first_use(Mentions, PI, Where) :-
    member(_-Where-PIs, Mentions),
    memberchk(PI, PIs),
    !.

%   item_mentions(+Item, -Mention): Kind-Where-PIs, the kind of Item
%   (rule, static, ...), its position and
%   the indicators of every callable term in its conditions or body
%   (none for other items).  One walk per item keeps a pattern of
%   thousands of operators linear.

item_mentions(Item, Kind-Where-PIs) :-
    functor(Item, Kind, _),
    (   item_goals(Item, Goals, Where)
    ->  phrase(indicators(Goals), PIs0),
        sort(PIs0, PIs)
    ;   PIs = []
    ).

static_mentions(static-_-_).

item_goals(rule(_, _, Pattern, Where, _), Goals, Where) :-
    phrase(where_goals(Pattern), Goals).
item_goals(static(Clause, Where), Body, Where) :-
    nonvar(Clause),
    Clause = (_ :- Body).

where_goals(T) --> { var(T) }, !.
where_goals(where(P, G)) --> !, where_goals(P), [G].
where_goals(T) --> { compound(T) }, !, { T =.. [_|Args] }, where_goals_list(Args).
where_goals(_) --> [].

where_goals_list([]) --> [].
where_goals_list([A|As]) --> where_goals(A), where_goals_list(As).

indicators(T) --> { var(T) }, !.
indicators(T) --> { compound(T) }, !,
    { compound_name_arity(T, N, A), T =.. [_|Args] },
    [N/A],
    indicators_list(Args).
indicators(T) --> { atom(T) }, !, [T/0].
indicators(_) --> [].

indicators_list([]) --> [].
indicators_list([A|As]) --> indicators(A), indicators_list(As).

%   library_predicate(?PI, ?Clauses): the definition of an ETALIS library
%   predicate, for numeric times.

library_predicate(min/3, [(min(A, B, M) :- ( A < B -> M = A ; M = B ))]).
library_predicate(max/3, [(max(A, B, M) :- ( A > B -> M = A ; M = B ))]).
library_predicate(datime_minus_datime/3, [(datime_minus_datime(T2, T1, S) :- S is T2 - T1)]).
library_predicate(datime_plus_sec/3, [(datime_plus_sec(T1, S, T2) :- T2 is T1 + S)]).
library_predicate(datime_minus_sec/3, [(datime_minus_sec(T1, S, T2) :- T2 is T1 - S)]).
library_predicate(less_datime/2, [(less_datime(T1, T2) :- T1 < T2)]).
library_predicate(addSec_Datime/3,
                  [(addSec_Datime(S, T1, T2) :-
                        (   number(T1)
                        ->  T2 is T1 + S
                        ;   T1 = datime(Y, Mo, D, H, Mi, Sec),
                            date_time_stamp(date(Y, Mo, D, H, Mi, Sec, 0, -, -), Stamp1),
                            Stamp2 is Stamp1 + S,
                            stamp_date_time(Stamp2, date(Y2, Mo2, D2, H2, Mi2, Sec2f, _, _, _), 'UTC'),
                            Sec2 is integer(Sec2f),
                            T2 = datime(Y2, Mo2, D2, H2, Mi2, Sec2)
                        ))]).
library_predicate(counter/2, [(counter(C, V) :- ( counter_internal(C, V0) -> V = V0 ; V = 0 ))]).
library_predicate(incCounter/1, [(incCounter(C) :- ( counter_internal(C, V0) -> true ; V0 = 0 ),
                                                   V is V0 + 1,
                                                   retractall(counter_internal(C, _)),
                                                   assertz(counter_internal(C, V)))]).
library_predicate(resetCounter/1, [(resetCounter(C) :- retractall(counter_internal(C, _)),
                                                       assertz(counter_internal(C, 0)))]).

%   library_dynamic(?PI, ?Dynamic): the library predicate PI keeps its
%   state in the facts of Dynamic, dynamic in the engine (its own, as
%   those of a `:- dynamic` directive of the file): ETALIS's named
%   counters, which start at 0.

library_dynamic(counter/2, counter_internal/2).
library_dynamic(incCounter/1, counter_internal/2).
library_dynamic(resetCounter/1, counter_internal/2).

%   refused(?PI, ?Message, ?Hint): PI is refused where a static rule of
%   the file calls it and the file does not define it.

refused(current_datime/1,
        "current_datime/1 (ETALIS's wall clock) is not supported in a static rule: a rule sees the time of its events, not of the machine, and a static rule has none",
        "call it in a where condition, where it is the detection's time (as end(T)), and pass the time to the static rule as an argument").
