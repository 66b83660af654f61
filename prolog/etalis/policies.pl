:- module(etalis_policies,
          [ policy/1,                   % ?Policy
            pending_add/5,              % +Policy, +Store, +Key, +Entry, +Expiry
            pending/4,                  % +Store, +Key, +Expiry, ?Entry
            pending_take/5              % +Store, +Key, +Expiry, ?Entry, :Cond
          ]).
:- use_module(store).

:- meta_predicate pending_take(+, +, +, ?, 0).

/** <module> Consumption policies as store and select strategies

A consumption policy decides which pending occurrences may complete a
goal, and whether they are used up (ETALIS paper, section "Event
Consumption Policies"):

  - `unrestricted`: every pending occurrence is kept and every
    combination fires once; this is the declarative semantics.
  - `recent`: only the newest occurrence per join key is kept (a newer
    one replaces it), and it is not consumed when used.
  - `chronological`: occurrences queue oldest first; the oldest one that
    satisfies the goal's condition is used and consumed, and an
    occurrence that completes a goal is not stored itself.

Entries are e(Payload, T1, T2).  Expiry is `none` when the goal has no
window; otherwise it is window(End, W), and entries that start more than
W before End can no longer complete and are dropped when their queue is
touched.
*/

%!  policy(?Policy) is nondet.
%
%   Policy is a consumption policy.

policy(unrestricted).
policy(recent).
policy(chronological).

%!  pending_add(+Policy, +Store, +Key, +Entry, +Expiry) is det.
%
%   Store Entry as a pending occurrence with join key Key.

pending_add(recent, Store, Key, Entry, _) :-
    !,
    store_queue(Store, Key, Q),
    queue_reset(Store, Q, Entry).
pending_add(_, Store, Key, Entry, Expiry) :-
    store_queue(Store, Key, Q),
    expire(Expiry, Store, Q),
    queue_append(Store, Q, Entry).

%!  pending(+Store, +Key, +Expiry, ?Entry) is nondet.
%
%   Entry is a pending occurrence with join key Key, oldest first.  The
%   caller tests the goal's condition (unrestricted and recent).

pending(Store, Key, Expiry, Entry) :-
    store_lookup(Store, Key, Q),
    expire(Expiry, Store, Q),
    queue_entry(Q, Entry).

%!  pending_take(+Store, +Key, +Expiry, ?Entry, :Cond) is semidet.
%
%   Consume the oldest pending occurrence with join key Key for which
%   Cond holds (chronological).

pending_take(Store, Key, Expiry, Entry, Cond) :-
    store_lookup(Store, Key, Q),
    expire(Expiry, Store, Q),
    queue_take(Store, Q, Entry, Cond).

expire(none, _, _) :- !.
expire(window(End, W), Store, Q) :-
    queue_expire(Store, Q, End, W).
