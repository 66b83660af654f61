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

%!  bench_feed(+Engine, +N, +Batch, +Keys, +Step, +Format, -Seconds, -Collections, -CollectSeconds) is det.
%
%   The same stream fed through etalis_feed:engine_feed/5 as lists of
%   Batch checked terms (the terms packed columns give), detections in
%   Format: Prolog's CPU time of the engine_feed/5 calls only (each list
%   is made before its call), and the garbage collections in them.

bench_feed(M, N, Batch, Keys, Step, Format, Seconds, Collections, CollectSeconds) :-
    garbage_collect,
    feed_batches(0, N, Batch, M, Keys, Step, Format, 12345, s(0, 0, 0), s(Seconds, Collections, CollectMs)),
    CollectSeconds is CollectMs / 1000.

feed_batches(I, N, _, _, _, _, _, _, S, S) :- I >= N, !.
feed_batches(I, N, Batch, M, Keys, Step, Format, Seed0, s(T0, G0, Gt0), S) :-
    End is min(N, I + Batch),
    batch_terms(I, End, Keys, Step, Seed0, Seed, Terms),
    First is I + 1,
    (   Format == packed -> etalis_columns:packed_reset ; true ),
    statistics(garbage_collection, [GA, _, GtA|_]),
    statistics(cputime, C0),
    etalis_feed:engine_feed(M, terms(Terms, checked), [first(First), format(Format)], summary(Accepted, _, [], _, none), _),
    statistics(cputime, C1),
    statistics(garbage_collection, [GB, _, GtB|_]),
    Accepted =:= End - I,
    T1 is T0 + C1 - C0, G1 is G0 + GB - GA, Gt1 is Gt0 + GtB - GtA,
    feed_batches(End, N, Batch, M, Keys, Step, Format, Seed, s(T1, G1, Gt1), S).

batch_terms(I, End, _, _, Seed, Seed, []) :- I >= End, !.
batch_terms(I, End, Keys, Step, Seed0, Seed, [event(E, T)|Terms]) :-
    Seed1 is (Seed0 * 1103515245 + 12345) mod 2147483648,
    K is (Seed1 >> 8) mod Keys,
    (   I mod 2 =:= 0 -> E = a(K) ; E = b(K) ),
    T is I * Step,
    I1 is I + 1,
    batch_terms(I1, End, Keys, Step, Seed1, Seed, Terms).
