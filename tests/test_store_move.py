"""The goal store while a move into a new table is under way: a move step
stopped half-way (the stacks full) has linked some keys of the old bucket
it was moving into the new table already; every key is still counted and
enumerated once."""

from __future__ import annotations

from pyswip import Prolog

from etalis_py.bridge._prolog import bridge

# keys 1..N, one entry each, until a move begins; then, as a step that
# stopped half-way would have, the first key of the old bucket to move next
# is linked into the new table
HALF_MOVED = """
etalis_store:store_new(S0), nb_setval(store_move_test, S0), nb_getval(store_move_test, S),
between(1, 1000, K),
    etalis_store:store_append(S, k(K), e(p, K, K), none),
    arg(5, S, move(_, Old, Next, _)),
    !,
arg(Next, Old, [Q|_]),
arg(1, S, Mask), arg(3, S, Table),
etalis_store:move_key(Table, Mask, Q),
arg(3, Q, Moved),
etalis_store:store_count(S, Count),
findall(Key, etalis_store:store_entry(S, Key, _), Keys),
length(Keys, Listed), sort(Keys, Once), length(Once, Distinct),
findall(Key, (etalis_store:key_match(S, Key, Q1), arg(3, Q1, Key)), Matched),
length(Matched, MatchedN),
( etalis_store:store_lookup(S, Moved, Q2) -> Same = same(Q2 == Q) ; Same = none ),
( Same = same(G), call(G) -> Found = true ; Found = false )
"""


def test_a_key_linked_by_a_move_step_that_stopped_half_way_is_counted_and_listed_once() -> None:
    answer = bridge().on_thread(lambda: list(Prolog.query(HALF_MOVED, maxresult=1)))[0]
    keys = answer["K"]
    assert keys > 128        # a sweep began at 128 keys, then a move
    assert (answer["Count"], answer["Listed"], answer["Distinct"], answer["MatchedN"]) == (keys, keys, keys, keys)
    assert answer["Found"] == "true"
