/*  Throughput inside the engine: events generated in Prolog as they are
    processed (a stream, not a list held in memory), each passed to the
    engine's dispatch as engine_feed/5 does after reading it.

    The stream: event I is a(K) for even I and b(K) for odd I, K a
    pseudo-random key among Keys, at time I*Step seconds.
*/

%!  bench_inside(+Engine, +N, +Keys, +Step, -Detections, -Seconds) is det.

bench_inside(M, N, Keys, Step, Detections, Seconds) :-
    garbage_collect,
    Counter = count(0),
    statistics(cputime, T0),
    bench_loop(0, N, M, Keys, Step, 12345, Counter),
    statistics(cputime, T1),
    Seconds is T1 - T0,
    arg(1, Counter, Detections).

bench_loop(I, N, _, _, _, _, _) :- I >= N, !.
bench_loop(I, N, M, Keys, Step, Seed0, Counter) :-
    Seed is (Seed0 * 1103515245 + 12345) mod 2147483648,
    K is (Seed >> 8) mod Keys,
    (   I mod 2 =:= 0 -> E = a(K) ; E = b(K) ),
    T is I * Step,
    (   M:'$on'(E, T, T, _),
        arg(1, Counter, C0),
        C is C0 + 1,
        nb_setarg(1, Counter, C),
        fail
    ;   true
    ),
    I1 is I + 1,
    bench_loop(I1, N, M, Keys, Step, Seed, Counter).
