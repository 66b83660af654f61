:- module(etalis_aggregates,
          [ aggregate_step/8            % +Store, +Key, +Value, +T1, +T2, +Window, +Fun, -Result
          ]).
:- use_module(library(error)).
:- use_module(store).

/** <module> Sliding-window aggregates, computed incrementally

An aggregate goal keeps, per group (the values of the variables by which
its pattern is grouped), the occurrences in its window and a running
state s(Count, Exact, Floats, Inexact, Min, Max): the sum of the window's
integers (and rationals), and the number and sum of its floats.  The sum
is exact while no float is in the window, and again once the last float
has left it.  A window is count(N) (the last N
occurrences; the aggregate holds from the N-th occurrence on) or time(D)
(the occurrences that started at most D seconds before the newest one
ended; it holds at every occurrence that lasts at most D, and the window
starts at the earliest start in it).

Count and Sum are updated as occurrences enter and leave; Min and Max
likewise, and are recomputed over the window only when the occurrence
that leaves holds the current minimum or maximum.
*/

%!  aggregate_step(+Store, +Key, +Value, +T1, +T2, +Window, +Fun,
%!                 -Result) is semidet.
%
%   Add the occurrence of Value over [T1,T2] to group Key of Store and
%   slide the window.  Result is start(Start)-Value: the aggregate Fun
%   (count, sum, avg, min or max) over the window, which starts at
%   Start.  Fails while a count(N) window is not yet full, and for an
%   occurrence longer than a time(D) window (it is never in one).
%
%   @error type_error(number, Value) unless Fun is count.

aggregate_step(Store, Key, Value, T1, T2, Window, Fun, start(Start)-Result) :-
    (   Window = time(D)
    ->  T2 - T1 =< D
    ;   true
    ),
    (   Fun == count
    ->  true
    ;   must_be(number, Value)
    ),
    store_queue(Store, Key, Q),
    window_add(Window, Store, Q, e(Value, T1, T2)),
    state(Store, Key, S0),
    enter(Value, S0, S1),
    slide(Window, Q, T2, S1, S),
    store_replace(Store, state(Key), S),
    full(Window, S),
    arg(1, Q, c(e(_, Start, _), _)),
    result(Fun, S, Result).

%   window_add(+Window, +Store, +Queue, +Entry): a count window keeps
%   its occurrences in the order they come, a time window in order of
%   start (among equal starts, in the order they come), so that those
%   that started too long ago leave from the front also when occurrences
%   that are intervals do not come in order of start; the front's start
%   is then the window's earliest.

window_add(count(_), Store, Q, E) :-
    queue_append(Store, Q, E).
window_add(time(_), Store, Q, E) :-
    E = e(_, T1, _),
    arg(2, Q, Last),
    (   (   Last == []
        ;   Last = c(e(_, L1, _), _),
            L1 =< T1
        )
    ->  queue_append(Store, Q, E)
    ;   insert_by_start(Q, 1, E, T1)
    ).

%   insert_by_start(+Prev, +Arg, +Entry, +T1): put Entry before the first
%   cell from argument Arg of Prev on whose entry starts after T1 (there
%   is one: the last).

insert_by_start(Prev, Arg, E, T1) :-
    arg(Arg, Prev, Cell),
    Cell = c(e(_, S, _), _),
    (   S > T1
    ->  nb_setarg(Arg, Prev, c(E, [])),
        arg(Arg, Prev, New),
        nb_linkarg(2, New, Cell)
    ;   insert_by_start(Cell, 2, E, T1)
    ).

state(Store, Key, S) :-
    (   store_lookup(Store, state(Key), SQ),
        queue_entry(SQ, S0)
    ->  S = S0
    ;   S = s(0, 0, 0, 0.0, none, none)
    ).

enter(V, s(C0, X0, F0, I0, Min0, Max0), s(C, X, F, I, Min, Max)) :-
    C is C0 + 1,
    (   number(V)
    ->  add(V, X0, F0, I0, X, F, I),
        lower(Min0, V, Min),
        higher(Max0, V, Max)
    ;   X = X0, F = F0, I = I0, Min = Min0, Max = Max0
    ).

%   add(+V, +Exact0, +Floats0, +Inexact0, -Exact, -Floats, -Inexact):
%   V enters the split sum.

add(V, X0, F0, I0, X0, F, I) :-
    float(V),
    !,
    F is F0 + 1,
    I is I0 + V.
add(V, X0, F, I, X, F, I) :-
    X is X0 + V.

%   remove(+V, +Exact0, +Floats0, +Inexact0, -Exact, -Floats, -Inexact):
%   V leaves the split sum; the float part starts afresh when it is
%   empty, so no rounding error stays behind.

remove(V, X0, F0, I0, X0, F, I) :-
    float(V),
    !,
    F is F0 - 1,
    (   F =:= 0
    ->  I = 0.0
    ;   I is I0 - V
    ).
remove(V, X0, F, I, X, F, I) :-
    X is X0 - V.

lower(none, V, V) :- !.
lower(M, V, X) :- X is min(M, V).
higher(none, V, V) :- !.
higher(M, V, X) :- X is max(M, V).

%   slide(+Window, +Queue, +End, +S0, -S): let the oldest occurrences
%   leave while the window holds too many, or too old ones.

slide(Window, Q, End, S0, S) :-
    (   leaves(Window, Q, End, S0),
        queue_pop(Q, e(V, _, _))
    ->  leave(V, Q, S0, S1),
        slide(Window, Q, End, S1, S)
    ;   S = S0
    ).

leaves(count(N), _, _, s(C, _, _, _, _, _)) :-
    C > N.
leaves(time(D), Q, End, _) :-
    arg(1, Q, c(e(_, T1, _), _)),
    End - T1 > D.

leave(V, Q, s(C0, X0, F0, I0, Min0, Max0), s(C, X, F, I, Min, Max)) :-
    C is C0 - 1,
    (   number(V)
    ->  remove(V, X0, F0, I0, X, F, I),
        (   ( V =:= Min0 ; V =:= Max0 )
        ->  window_bounds(Q, Min, Max)
        ;   Min = Min0, Max = Max0
        )
    ;   X = X0, F = F0, I = I0, Min = Min0, Max = Max0
    ).

window_bounds(Q, Min, Max) :-
    findall(V, queue_entry(Q, e(V, _, _)), Vs),
    (   Vs == []
    ->  Min = none, Max = none
    ;   min_list(Vs, Min),
        max_list(Vs, Max)
    ).

full(count(N), s(C, _, _, _, _, _)) :-
    C >= N.
full(time(_), _).

result(count, s(C, _, _, _, _, _), C).
result(sum, S, Sum) :-
    sum(S, Sum).
result(avg, S, Avg) :-
    S = s(C, _, _, _, _, _),
    sum(S, Sum),
    Avg is Sum / C.
result(min, s(_, _, _, _, Min, _), Min).
result(max, s(_, _, _, _, _, Max), Max).

sum(s(_, X, 0, _, _, _), X) :- !.
sum(s(_, X, _, I, _, _), Sum) :-
    Sum is X + I.
