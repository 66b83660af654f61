:- module(test_store, []).
:- use_module(library(plunit)).
:- use_module('../../prolog/etalis/runtime/store').
:- use_module('../../prolog/etalis/compiler/chains', [remember/4]).

%   A store must live in a global variable to be updated in place.

fresh(Name, Store) :-
    store_new(S0),
    nb_setval(Name, S0),
    nb_getval(Name, Store).

entries(Store, Key, Es) :-
    findall(E, ( store_lookup(Store, Key, Q), queue_entry(Q, E) ), Es).

:- begin_tests(store).

test(append_keeps_arrival_order_per_key, Es == [e(p(x), 1, 1), e(p(z), 3, 3)]) :-
    fresh(s1, S),
    store_queue(S, k1, Q1), queue_append(S, Q1, e(p(x), 1, 1)),
    store_queue(S, k2, Q2), queue_append(S, Q2, e(p(y), 2, 2)),
    store_queue(S, k1, Q3), queue_append(S, Q3, e(p(z), 3, 3)),
    entries(S, k1, Es).

test(lookup_of_an_unknown_key_fails, fail) :-
    fresh(s2, S),
    store_lookup(S, nokey, _).

test(expire_drops_entries_that_start_too_long_before_the_end, Es == [e(p, 5, 5), e(p, 6, 6)]) :-
    fresh(s3, S),
    store_queue(S, k, Q),
    forall(member(T, [1, 2, 5, 6]), queue_append(S, Q, e(p, T, T))),
    queue_expire(S, Q, 6, 2),
    entries(S, k, Es).

test(expire_everything_then_append, Es == [e(p, 9, 9)]) :-
    fresh(s4, S),
    store_queue(S, k, Q),
    queue_append(S, Q, e(p, 1, 1)),
    queue_expire(S, Q, 9, 4),
    queue_append(S, Q, e(p, 9, 9)),
    entries(S, k, Es).

test(take_removes_the_oldest_match_anywhere_in_the_queue, [Es, T] == [[e(p(1), 1, 1), e(p(3), 3, 3), e(p(4), 4, 4)], 2]) :-
    fresh(s5, S),
    store_queue(S, k, Q),
    forall(between(1, 4, I), queue_append(S, Q, e(p(I), I, I))),
    queue_take(S, Q, e(p(V), T, _), V mod 2 =:= 0),
    entries(S, k, Es).

test(take_of_the_last_entry_keeps_appends_working, Es == [e(p(1), 1, 1), e(p(5), 5, 5)]) :-
    fresh(s6, S),
    store_queue(S, k, Q),
    queue_append(S, Q, e(p(1), 1, 1)),
    queue_append(S, Q, e(p(2), 2, 2)),
    queue_take(S, Q, e(p(2), _, _), true),
    queue_append(S, Q, e(p(5), 5, 5)),
    entries(S, k, Es).

test(take_of_the_only_entry_empties_the_queue, Es == [e(p(7), 7, 7)]) :-
    fresh(s7, S),
    store_queue(S, k, Q),
    queue_append(S, Q, e(p(1), 1, 1)),
    queue_take(S, Q, _, true),
    \+ queue_entry(Q, _),
    queue_append(S, Q, e(p(7), 7, 7)),
    entries(S, k, Es).

test(take_fails_when_nothing_satisfies_the_condition, fail) :-
    fresh(s8, S),
    store_queue(S, k, Q),
    queue_append(S, Q, e(p(1), 1, 1)),
    queue_take(S, Q, e(p(V), _, _), V > 5).

test(reset_replaces_all_entries, Es == [e(new, 3, 3)]) :-
    fresh(s9, S),
    store_queue(S, k, Q),
    queue_append(S, Q, e(old, 1, 1)),
    queue_append(S, Q, e(old, 2, 2)),
    queue_reset(S, Q, e(new, 3, 3)),
    entries(S, k, Es).

test(growth_keeps_every_entry_of_every_key, [Count, Es] == [20000, [e(p, 4242, 4242), e(p, 14242, 14242)]]) :-
    fresh(s10, S),
    forall(between(0, 19999, I),
           ( K is I mod 10000, store_queue(S, K, Q), queue_append(S, Q, e(p, I, I)) )),
    store_count(S, Count),
    entries(S, 4242, Es).

test(compound_keys_are_compared_exactly, Es == [e(p, 2, 2)]) :-
    fresh(s11, S),
    store_queue(S, k(1, a), Q1), queue_append(S, Q1, e(p, 1, 1)),
    store_queue(S, k(1.0, a), Q2), queue_append(S, Q2, e(p, 2, 2)),
    entries(S, k(1.0, a), Es).

test(a_key_with_variables_is_its_own_up_to_their_names, Es == [e(p, 1, 1), e(q, 2, 2)]) :-
    fresh(s12, S),
    store_append(S, k(1, _), e(p, 1, 1), none),
    store_append(S, k(1, _), e(q, 2, 2), none),
    store_queue(S, k(1, X), Q),
    findall(E, queue_entry(Q, E), Es),
    assertion(var(X)).

test(a_partner_meets_its_own_key_then_the_keys_with_variables_it_unifies_with,
     Ms == [k(1, a)-e(p(own), 3, 3), k(1, a)-e(p(open), 1, 1)]) :-
    fresh(s14, S),
    store_append(S, k(1, _), e(p(open), 1, 1), none),
    store_append(S, k(2, _), e(p(other), 2, 2), none),
    store_append(S, k(1, a), e(p(own), 3, 3), none),
    findall(k(1, a)-E, store_pending(S, k(1, a), none, E), Ms).

test(a_partner_with_variables_meets_every_key_it_unifies_with_and_binds_them,
     true(Ms =@= [k(1, a)-e(p(own), 3, 3), k(1, _)-e(p(open), 1, 1)])) :-
    fresh(s15, S),
    store_append(S, k(1, _), e(p(open), 1, 1), none),
    store_append(S, k(2, b), e(p(other), 2, 2), none),
    store_append(S, k(1, a), e(p(own), 3, 3), none),
    findall(K-E, ( K = k(1, _), store_pending(S, K, none, E) ), Ms0),
    msort(Ms0, Ms1), reverse(Ms1, Ms),
    assertion(\+ ( store_entry(S, K1, _), K1 == k(1, 1) )).

test(taking_from_a_key_with_variables_leaves_it_unbound, [T, Rest] == [e(p(open), 1, 1), []]) :-
    fresh(s16, S),
    store_append(S, k(_), e(p(open), 1, 1), none),
    store_take(S, k(7), none, T, true),
    findall(K-E, store_entry(S, K, E), Rest).

test(entries_survive_garbage_collection_and_backtracking, Es == [e(p(1), 1, 1), e(p(2), 2, 2), e(p(3), 3, 3)]) :-
    fresh(s13, S),
    forall(between(1, 3, I),
           ( store_queue(S, k, Q), queue_append(S, Q, e(p(I), I, I)),
             garbage_collect, fail ; true )),
    garbage_collect,
    entries(S, k, Es).

:- end_tests(store).

:- begin_tests(sweep).

%   100,000 keys seen once each, window 99: at most the keys added since
%   the last sweep (fewer than twice the buckets) stay, and the table
%   stays small.

test(keys_that_never_come_back_are_swept_when_the_store_grows, true((Count =< 2*(Mask+1), Mask =< 511))) :-
    store_new(S0), nb_setval(sw1, S0), nb_getval(sw1, S),
    forall(between(1, 100000, T),
           etalis_store:store_append(S, T, e(p, T, T), window(T, 99))),
    store_count(S, Count),
    arg(1, S, Mask).

test(without_a_window_nothing_is_swept, Count == 5000) :-
    store_new(S0), nb_setval(sw2, S0), nb_getval(sw2, S),
    forall(between(1, 5000, T),
           etalis_store:store_append(S, T, e(p, T, T), none)),
    store_count(S, Count).

%   The table is kept in shape a few buckets a new key: no store_append
%   of 200,000 new keys (a dozen sweeps and moves) takes a thousand
%   inferences, and every entry is still there.

test(no_new_key_pays_for_the_growth_of_the_table, [Max, Count, Es] == [true, 200000, [e(p, 123456, 123456)]]) :-
    store_new(S0), nb_setval(sw3, S0), nb_getval(sw3, S),
    nb_setval(sw3_max, 0),
    forall(between(1, 200000, T),
           ( statistics(inferences, I0),
             etalis_store:store_append(S, T, e(p, T, T), none),
             statistics(inferences, I1),
             D is I1 - I0,
             nb_getval(sw3_max, M0),
             (   D > M0 -> nb_setval(sw3_max, D) ; true )
           )),
    nb_getval(sw3_max, MaxInferences),
    ( MaxInferences < 1000 -> Max = true ; Max = MaxInferences ),
    store_count(S, Count),
    entries(S, 123456, Es).

%   A step of a move that stopped half-way (memory ran out) and is done
%   again links no key twice.

test(a_move_step_done_twice_links_each_key_once, [Count, Es] == [170, [e(p, 77, 77)]]) :-
    store_new(S0), nb_setval(sw4, S0), nb_getval(sw4, S),
    forall(between(1, 170, T), etalis_store:store_append(S, T, e(p, T, T), none)),
    arg(5, S, Pass),
    assertion(Pass = move(_, _, _, _)),
    Pass = move(_, Old, I, _),
    etalis_store:move_bucket(S, Old, I, none),
    etalis_store:move_bucket(S, Old, I, none),
    forall(between(1, 1000, _), etalis_store:pass_steps(1, S, none)),
    assertion(arg(5, S, idle)),
    store_count(S, Count),
    entries(S, 77, Es).

:- end_tests(sweep).

:- begin_tests(interrupted).

%   An append interrupted at any inference (as a full stack may stop it)
%   leaves the store holding the entries it held before or those it
%   holds after: a new key's cell, and a key's cell in the table a move
%   fills, are linked only once they are whole.  The 171st key begins
%   with the steps of a move (see the sweep tests above); a step stopped
%   half-way shows the keys it moved in both tables until it is done
%   again, so the entries are compared as sets.

test(an_append_stopped_at_any_inference_loses_no_entry, Bad == []) :-
    numlist(1, 170, Ks),
    findall(e(p, K, K), member(K, Ks), Before),
    append(Before, [e(p, 171, 171)], After),
    findall(N-Count,
            ( between(1, 300, N),
              interrupted_append(N, Ks, Es),
              Es \== Before,
              Es \== After,
              length(Es, Count)
            ),
            Bad).

interrupted_append(N, Ks, Es) :-
    store_new(S0), nb_setval(st_interrupted, S0), nb_getval(st_interrupted, S),
    forall(member(K, Ks), etalis_store:store_append(S, K, e(p, K, K), none)),
    catch(call_with_inference_limit(etalis_store:store_append(S, 171, e(p, 171, 171), none), N, _),
          inference_limit_exceeded, true),
    findall(E, store_entry(S, _, E), Es0),
    sort(Es0, Es).

%   So does a push onto a chain's stack of remembered events.

test(a_push_stopped_at_any_inference_loses_no_entry, Bad == []) :-
    Before = [e(p(3, x), 3, 3), e(p(2, x), 2, 2), e(p(1, x), 1, 1)],
    After = [e(p(4, x), 4, 4)|Before],
    findall(N-Es,
            ( between(1, 100, N),
              store_new(S0), nb_setval(st_pushed, S0), nb_getval(st_pushed, S),
              forall(member(E, [e(p(1, x), 1, 1), e(p(2, x), 2, 2), e(p(3, x), 3, 3)]),
                     remember(none, S, k, E)),
              catch(call_with_inference_limit(remember(none, S, k, e(p(4, x), 4, 4)), N, _),
                    inference_limit_exceeded, true),
              findall(E, ( store_lookup(S, k, Q), arg(1, Q, First), stacked(First, E) ), Es),
              Es \== Before,
              Es \== After
            ),
            Bad).

stacked(c(E0, Next), E) :-
    (   E = E0
    ;   stacked(Next, E)
    ).

:- end_tests(interrupted).
