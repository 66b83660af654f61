:- module(etalis_policies,
          [ policy/1,                   % ?Policy
            policy_hint/1,              % -Hint
            resolve_policy/4,           % +Policy0, +Event, +Entry, -Policy
            consuming/1,                % +Policy
            consuming_all/1,            % +Policy
            accumulated/2,              % +Entries, -Entry
            add_goal/6,                 % +Policy, +Store, +Key, +Entry, +Expiry, -Goal
            match_goal/7,               % +Policy, +Store, +Key, +Expiry, ?Entry, +Cond, -Goal
            filtering_policy/1,         % +Policy
            filtered_add_goal/7,        % +Policy, +ByValue, +Store, +Key, +Entry, +Expiry, -Goal
            filtered_match_goal/7       % +Policy, +Store, +Key, +Expiry, ?Entry, +Cond, -Goal
          ]).
:- use_module(library(apply)).
:- use_module(library(lists)).
:- use_module(library(aggregate)).
:- use_module(strategies, [strategy/1]).

/** <module> Consumption policies as store and select strategies

A consumption policy decides which pending occurrences may complete a
goal, and whether they are used up (ETALIS paper, section "Event
Consumption Policies"):

  - `unrestricted`: every pending occurrence is kept and every
    combination fires once; this is the declarative semantics.
  - `recent`: only the newest occurrence per join key is kept (a newer
    one replaces it), and it is not consumed when used.
  - `chronological`: occurrences queue oldest first; the oldest one that
    satisfies the goal's condition is used and consumed.
  - for occurrences that are intervals (ETALIS paper, "Consumption
    Policies Defined on Time Intervals"): recent(Pref) keeps, of those
    that end together, the longer, the shorter, or the one with the
    greater N-th argument (Pref = longer, shorter, greater(N));
    chronological(Pref) takes the one that starts first, and of those
    that start together as Pref says.

The templates of etalis_operators ask this module for the goals that
store and select pending occurrences under a policy, so that the
choice is made once, when the rules are compiled.  Entries are
e(Payload, T1, T2).  Expiry is `none` when the goal has no window;
otherwise it is window(End, W), and entries that start more than W
before End can no longer complete and are dropped when their queue is
touched.
*/

%!  policy(?Policy) is nondet.
%
%   Policy is a consumption policy: `unrestricted`, `recent`,
%   `chronological`, or an interval variant recent(Pref) or
%   chronological(Pref), Pref one of `longer`, `shorter` or greater(N);
%   or a selection strategy or context of etalis_strategies:strategy/1.

policy(unrestricted).
policy(recent).
policy(chronological).
policy(recent(Pref)) :- preference(Pref).
policy(chronological(Pref)) :- preference(Pref).
policy(Strategy) :- strategy(Strategy).

%!  policy_hint(-Hint:string) is det.
%
%   Hint says which policies there are, for a message about a name that
%   is not one.

policy_hint("use unrestricted, recent or chronological, or for intervals recent(Pref) or chronological(Pref) with Pref longer, shorter or greater(N), or a selection strategy: strict, nxt, last, max, stn, continuous or cumulative").

preference(longer).
preference(shorter).
preference(greater(N)) :- integer(N), N >= 1.

%!  resolve_policy(+Policy0, +Event, +Entry, -Policy) is det.
%
%   For the variant greater(N), the preference compares argument N of
%   Event: Policy holds by(Entry, Value), Value that argument among the
%   variables of the stored Entry.

resolve_policy(P0, Event, Entry, P) :-
    P0 =.. [Name, greater(N)],
    !,
    (   compound(Event), arg(N, Event, V)
    ->  copy_term(Entry-V, Template-Value),     % must not share the clause's variables
        Pref = by(Template, Value)
    ;   Pref = none
    ),
    P =.. [Name, Pref].
resolve_policy(P, _, _, P).

%!  consuming(+Policy) is semidet.
%
%   Policy consumes the occurrences it uses (chronological).

consuming(chronological).
consuming(chronological(_)).

%!  consuming_all(+Policy) is semidet.
%
%   Policy combines an occurrence with every pending occurrence that
%   fits, and consumes them all (SNOOP's continuous context).

consuming_all(continuous).
consuming_all(cumulative).

%!  accumulated(+Entries, -Entry) is det.
%
%   Entry combines the pending occurrences Entries (oldest first), as
%   SNOOP's cumulative context does: each variable of its payload holds
%   the list of the values it has in Entries, oldest first, and it spans
%   from the earliest start to the latest end of Entries.

accumulated(Entries, e(Payload, T1, T2)) :-
    Entries = [e(P0, _, _)|_],
    functor(P0, Name, Arity),
    numlist_(Arity, Args),
    maplist(argument_values(Entries), Args, Lists),
    Payload =.. [Name|Lists],
    aggregate_all(min(S), member(e(_, S, _), Entries), T1),
    aggregate_all(max(E), member(e(_, _, E), Entries), T2).

numlist_(0, []) :- !.
numlist_(N, L) :- numlist(1, N, L).

argument_values(Entries, I, Values) :-
    findall(V, ( member(e(P, _, _), Entries), arg(I, P, V) ), Values).

%!  add_goal(+Policy, +Store, +Key, +Entry, +Expiry, -Goal) is det.
%
%   Goal stores Entry as a pending occurrence with join key Key.

add_goal(recent, Store, Key, Entry, _, etalis_store:store_replace(Store, Key, Entry)) :- !.
add_goal(recent(Pref), Store, Key, Entry, _, etalis_store:store_replace_if(Store, Key, Entry, Pref)) :- !.
add_goal(_, Store, Key, Entry, Expiry, etalis_store:store_append(Store, Key, Entry, Expiry)).

%!  match_goal(+Policy, +Store, +Key, +Expiry, ?Entry, +Cond, -Goal) is det.
%
%   Goal finds the pending occurrences Entry with join key Key for which
%   Cond holds: all of them (unrestricted, recent), or the oldest one,
%   which it removes (chronological; the variants take the one that
%   starts first, preferring as they say among those starting together).

match_goal(chronological, Store, Key, Expiry, Entry, Cond,
           etalis_store:store_take(Store, Key, Expiry, Entry, Cond)) :- !.
match_goal(chronological(Pref), Store, Key, Expiry, Entry, Cond,
           etalis_store:store_take_best(Store, Key, Expiry, Entry, Cond, Pref)) :- !.
match_goal(_, Store, Key, Expiry, Entry, Cond,
           ( etalis_store:store_pending(Store, Key, Expiry, Entry), Cond )).

%!  filtering_policy(+Policy) is semidet.
%
%   Under Policy a `where` condition or an `fnot` directly on a temporal
%   operator is part of the operator's selection (recent, chronological
%   and their interval variants, and the contexts continuous and
%   cumulative, whose initiators are eligible only when they pass it): a pair that the filter rejects is no
%   occurrence of the pattern, so it is neither chosen nor consumed
%   (the paper: `P where t` is empty when t fails).  Under
%   `unrestricted` nothing is chosen or consumed, so filtering after
%   the operator means the same.

filtering_policy(recent).
filtering_policy(recent(_)).
filtering_policy(chronological).
filtering_policy(chronological(_)).
filtering_policy(continuous).
filtering_policy(cumulative).

%!  filtered_add_goal(+Policy, +ByValue, +Store, +Key, +Entry, +Expiry, -Goal) is det.
%
%   As add_goal/6, for a goal with filters: under `recent` every
%   pending occurrence is kept (until its window expires), since an
%   older one may pass the filter where the newest does not.  With
%   ByValue `true` (the filters look only at values) an older one with
%   the same values can never be chosen over a newer one, so of those
%   only the newest is kept (by the policy's preference), as original
%   ETALIS keeps one goal per distinct occurrence.

filtered_add_goal(Policy, ByValue, Store, Key, Entry, Expiry, Goal) :-
    (   recent_family(Policy)
    ->  (   ByValue == true
        ->  recent_preference(Policy, Pref),
            Goal = etalis_store:store_replace_same(Store, Key, Entry, Expiry, Pref)
        ;   Goal = etalis_store:store_append(Store, Key, Entry, Expiry)
        )
    ;   add_goal(Policy, Store, Key, Entry, Expiry, Goal)
    ).

recent_preference(recent, none).
recent_preference(recent(Pref), Pref).

%!  filtered_match_goal(+Policy, +Store, +Key, +Expiry, ?Entry, +Cond, -Goal) is det.
%
%   As match_goal/7, for a goal with filters (in Cond): under `recent`
%   Goal finds the newest pending occurrence for which Cond holds (for
%   the interval variants, the newest by their preference), and keeps
%   it; under `chronological` the oldest, and consumes it.

filtered_match_goal(recent, Store, Key, Expiry, Entry, Cond,
                    etalis_store:store_newest(Store, Key, Expiry, Entry, Cond, none)) :- !.
filtered_match_goal(recent(Pref), Store, Key, Expiry, Entry, Cond,
                    etalis_store:store_newest(Store, Key, Expiry, Entry, Cond, Pref)) :- !.
filtered_match_goal(Policy, Store, Key, Expiry, Entry, Cond, Goal) :-
    match_goal(Policy, Store, Key, Expiry, Entry, Cond, Goal).

recent_family(recent).
recent_family(recent(_)).
