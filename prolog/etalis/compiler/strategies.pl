:- module(etalis_strategies,
          [ strategy/1,                 % ?Strategy
            selector/1,                 % ?Selector
            node_policy/2,              % +Policy, -NodePolicy
            selected_head/4,            % +Selector, +Label, +Head, -Wrapped
            reported_head/2,            % +Head0, -Head
            position/1,                 % -Position
            offer/6,                    % +Engine, +Selector, +Label, +Head, +Interval, +Positions
            selection/2,                % +Engine, -Out
            select_matches/3,           % +Selector, +Matches, -Selected
            skip_strategy/1,            % ?Skip
            skip_global/2,              % +Engine, -Name
            skip_kept/2,                % +Engine, -Count
            partition_global/2,         % +Engine, -Name
            partition_input/4           % +Engine, +Event, +Position, +Time
          ]).
:- use_module(library(aggregate), [aggregate_all/3]).
:- use_module(library(assoc), [assoc_to_values/2, del_min_assoc/4, empty_assoc/1, get_assoc/3,
                               min_assoc/3, put_assoc/4]).
:- use_module(library(apply), [exclude/3, foldl/4, include/3, maplist/3]).
:- use_module(library(lists), [append/2, append/3, last/2, member/2, nth1/3, reverse/2]).
:- use_module(library(pairs), [group_pairs_by_key/2, map_list_to_pairs/3, pairs_values/2]).
:- use_module(library(ordsets), [ord_add_element/3, ord_subtract/3]).

/** <module> Selection strategies and consumption contexts from the CEP literature

The names a rule file, the API or the command line may give as a
policy besides ETALIS's own (see docs/strategies.md and
docs/language.md, "Selection strategies"):

  - CEL's selectors `strict`, `nxt`, `last` and `max` (and SASE's
    partition contiguity `strict(partition)`): filters on the
    set of all matches of a rule's pattern, each match the set of the
    positions (in the input stream) of the events it combines.  A
    sequence rule under `strict`, `nxt` or `last` builds only the match
    it selects (etalis_chains); any other rule under a selector is
    compiled as under `unrestricted`, its
    occurrences carry their positions, and instead of deriving its head
    it offers each match (offer/6); once an input event has been
    processed, selection/2 keeps, per rule, the matches the selector
    selects among those offered (all end at that event), and derives
    their heads.
  - SNOOP's `continuous` context: an arriving terminator combines with
    every eligible initiator and consumes them all (the goal-store side
    is in etalis_policies and etalis_store).
  - SNOOP's `cumulative` context: the same, but the initiators make
    one occurrence, whose variables hold the lists of their values.
  - SASE's skip-till-next-match `stn`: each run takes the first later
    event that fits its next element; on a sequence of events that is
    what `continuous` does, and it is compiled as `continuous`.
  - SASE's skip-till-any-match is `unrestricted`.

A rule may have a skip strategy besides (Flink's after-match skip
strategies, skip_strategy/1): it offers its matches as a rule under a
selector does (under `skip(Selector, Skip, Key)`, Selector `all` when
its policy selects nothing, Key its key values), and of those its
selector keeps, each is kept or skipped in order by what the matches
kept before it with the same key values leave (skipped/5).
*/

%!  strategy(?Strategy) is nondet.
%
%   Strategy is a selection strategy or consumption context that
%   etalis_policies:policy/1 accepts beside the ETALIS policies.

strategy(S) :- selector(S).
strategy(continuous).
strategy(cumulative).
strategy(stn).

%!  selector(?Selector) is nondet.
%
%   Selector is one of CEL's selection strategies, a filter on the
%   matches of a pattern that end at the same event, or SASE's
%   partition contiguity `strict(partition)`: `strict` among the events
%   of the rule's types that have the match's key values (the
%   variables that every event of the rule has as an argument).

selector(strict).
selector(strict(partition)).
selector(nxt).
selector(last).
selector(max).

%!  node_policy(+Policy, -NodePolicy) is det.
%
%   NodePolicy is the consumption policy with which the binary goals of
%   a rule under Policy are compiled: `unrestricted` under a selector
%   (which selects among all matches), `continuous` under `stn`.

node_policy(P, unrestricted) :- selector(P), !.
node_policy(stn, continuous) :- !.
node_policy(P, P).

%!  selected_head(+Selector, +Label, +Head, -Wrapped) is det.
%
%   Wrapped is the event that a rule labelled Label under Selector
%   derives in place of its head Head: '$select'(Selector, Label,
%   Head, Positions), Positions the list of the positions of the match.

selected_head(Selector, Label, Head, '$select'(Selector, Label, Head, _)).

%!  reported_head(+Head0, -Head) is det.
%
%   Head is the head that a rule with link head Head0 reports: the
%   event inside '$select'/4 for a rule under a selector, the event of
%   a timer '$timer'(Event, When) (with one more argument, the
%   provenance, for '$timer'(Event, When, Provenance); see
%   etalis_runtime:timer_set/5).

reported_head('$select'(_, _, Head0, _), Head) :- !,
    reported_head(Head0, Head).
reported_head('$timer'(Head, _), Head) :- !.
reported_head('$timer'(E, _, _), Head) :- !,
    E =.. List0,
    append(List0, [_], List),
    Head =.. List.
reported_head(Head, Head).

%!  position(-Position) is det.
%
%   Position is the position (0-based) of the input event being
%   processed, in the stream of the engine's accepted input events.

position(P) :-
    b_getval(etalis_position, P).

%!  offer(+Engine, +Selector, +Label, +Head, +Interval, +Positions) is det.
%
%   Keep the match Positions (a list of positions, in any order, maybe
%   with repeats) of the rule Label, whose head is Head over Interval
%   (T1-T2), until selection/2 chooses among the matches of the event.

offer(M, Selector, Label, Head, Interval, Positions) :-
    sort(Positions, Set),
    assertz(M:'$offer'(Label, Selector, Set, Head, Interval)).

%!  selection(+Engine, -Out) is nondet.
%
%   Out is each reported detection that the matches offered while an
%   input event was processed lead to: per rule, those its selector
%   selects derive the rule's head, and what they derive in turn is
%   selected again.

selection(M, Out) :-
    findall(Label-o(S, Set, Head, I), retract(M:'$offer'(Label, S, Set, Head, I)), Offers),
    Offers \== [],
    keysort(Offers, Sorted),
    group_pairs_by_key(Sorted, Groups),
    maplist(kept_matches(M), Groups, Kept),
    (   member(Selected, Kept),
        member(o(_, _, Head, T1-T2), Selected),
        M:'$derived'(Head, T1, T2, Out)
    ;   selection(M, Out)
    ).

%   kept_matches(+M, +Label-Matches, -Kept): the matches of the rule
%   Label that its selector selects and its skip strategy keeps (which
%   remembers them in M's state: before any of them is derived, as a
%   derived event may offer matches of the same rule again).

kept_matches(M, Label-Matches, Kept) :-
    Matches = [o(Selector, _, _, _)|_],
    (   Selector = skip(_, _, _)
    ->  map_list_to_pairs([o(skip(_, _, Key), _, _, _), Key]>>true, Matches, Keyed),
        keysort(Keyed, ByKey),
        group_pairs_by_key(ByKey, Groups),
        skip_global(M, G),
        maplist(kept_of_key(M, G, Label), Groups, Kept0),
        append(Kept0, Kept)
    ;   chosen(M, Label, Selector, Matches, Kept)
    ).

%   kept_of_key(+M, +G, +Label, +Key-Matches, -Kept): the Matches of the
%   rule Label with the key values Key that its selector selects and
%   its skip strategy keeps, after what the matches kept before with
%   that key leave, which the global variable G holds.  A key seen
%   before has its cell skip(State) changed in place (nb_setarg/3
%   copies only the new State), so that a match costs the state of its
%   own key, not that of all of them.

kept_of_key(M, G, Label, Key-Matches, Kept) :-
    Matches = [o(skip(S, Skip, _), _, _, _)|_],
    nb_getval(G, States0),
    (   get_assoc(Label-Key, States0, Cell0)
    ->  true
    ;   Cell0 = none
    ),
    cell_state(Cell0, State0),
    include(admitted(State0), Matches, Admitted),
    chosen(M, Label, S, Admitted, Selected0),
    msort_matches(Selected0, Selected),
    skipped(Skip, Selected, State0, State, Kept),
    (   Cell0 = skip(_)
    ->  nb_setarg(1, Cell0, State)
    ;   State == none
    ->  true
    ;   put_assoc(Label-Key, States0, skip(State), States),
        nb_setval(G, States)
    ).

%   cell_state(+Cell, -State): State is what the cell of a key holds:
%   none, past(Last) or starts(Starts) (see skip_global/2).  A snapshot
%   of an earlier etalis-py holds past(Last) bare (one of a rule under
%   skip_to_next has other rules, and is refused).

cell_state(none, none).
cell_state(skip(State), State).
cell_state(past(Last), past(Last)).

%   chosen(+M, +Label, +Selector, +Matches, -Selected): the Matches of
%   the rule Label that Selector selects; partition contiguity asks the
%   partitions that M has seen (see partition_input/4).

chosen(M, Label, partition(_, _, _), Matches0, Selected) :- !,
    distinct_sets(Matches0, Matches),
    partition_global(M, G),
    nb_getval(G, Parts),
    include(partition_contiguous(Parts, Label), Matches, Selected).
chosen(_, _, Selector, Matches, Selected) :-
    select_matches(Selector, Matches, Selected).

%   msort_matches(+Matches0, -Matches): Matches0 (all ending at the
%   same position) by their ordered sets of positions, the earliest
%   start first: the order in which a skip strategy considers them.

msort_matches(Matches0, Matches) :-
    map_list_to_pairs([o(_, Set, _, _), Set]>>true, Matches0, Keyed),
    keysort(Keyed, Sorted),
    pairs_values(Sorted, Matches).

%   partition_contiguous(+Parts, +Label, +Match): between the first and
%   the last event of Match, no event of its partition (the events of
%   the rule's types with its key values) is left out: each of its
%   events after the first comes next after the one before it in the
%   partition.

partition_contiguous(Parts, Label, o(Selector, Set, _, _)) :-
    (   Selector = skip(partition(Key, _, _), _, _)
    ->  true
    ;   Selector = partition(Key, _, _)
    ),
    get_assoc(Label-Key, Parts, part(_, Prevs)),
    consecutive(Set, Prevs).

consecutive([_], _) :- !.
consecutive([A, B|Set], Prevs) :-
    get_assoc(B, Prevs, A-_),
    consecutive([B|Set], Prevs).

%!  partition_global(+Engine, -Name) is det.
%
%   Name is the global variable that holds what Engine has seen of the
%   partitions of its rules under `strict(partition)`: an assoc from
%   Label-Key (a rule and its key values) to part(Last, Prevs), Last the
%   position of the latest event of that partition and Prevs an assoc
%   from the position of each of its events to Prev-Time, the position
%   of the one before it (-1 for none) and its own time.

partition_global(M, Name) :-
    atom_concat(M, '/partition', Name).

%!  partition_input(+Engine, +Event, +Position, +Time) is det.
%
%   Note the input Event at Position, ending at Time, in the partitions
%   of the rules under `strict(partition)` whose events it is an
%   instance of: for rule Label, '$partition'(Label, Name, Arity,
%   KeyArgs, Window) says that an event Name/Arity is in the partition
%   of the key of its arguments KeyArgs.  Events older than the rule's
%   Window cannot be in a later match, and are forgotten.

partition_input(M, E, P, T) :-
    (   compound(E) -> functor(E, Name, Arity) ; Name = E, Arity = 0 ),
    findall(Label-Key-W,
            (   catch(M:'$partition'(Label, Name, Arity, KeyArgs, W), _, fail),
                maplist(key_value(E), KeyArgs, Vs),
                Key =.. [k|Vs]
            ),
            Found0),
    sort(Found0, Found),
    (   Found == []
    ->  true
    ;   partition_global(M, G),
        forall(member(Found1, Found), partition_note(G, P, T, Found1))
    ).

%   key_value(+Event, +I, -V): V is the I-th argument of Event, a part of
%   its partition key.

key_value(E, I, V) :-
    arg(I, E, V).

%   partition_note(+G, +P, +T, +Label-Key-W): note the event at P, ending
%   at T, in the partition Label-Key of the global variable G.  A
%   partition seen before is changed in place (nb_getval/2 does not copy
%   and nb_setarg/3 copies only its new value), so that an event costs
%   the size of its own partition, not that of all of them.

partition_note(G, P, T, Label-Key-W) :-
    nb_getval(G, Parts0),
    (   get_assoc(Label-Key, Parts0, Part)
    ->  Part = part(Last, Prevs0),
        put_assoc(P, Prevs0, Last-T, Prevs1),
        forgotten(Prevs1, T, W, Prevs),
        nb_setarg(2, Part, Prevs),
        nb_setarg(1, Part, P)
    ;   empty_assoc(Prevs0),
        put_assoc(P, Prevs0, -1-T, Prevs),
        put_assoc(Label-Key, Parts0, part(P, Prevs), Parts),
        nb_setval(G, Parts)
    ).

forgotten(Prevs0, T, W, Prevs) :-
    (   W \== inf,
        min_assoc(Prevs0, _, _-T0),
        T0 < T - W
    ->  del_min_assoc(Prevs0, _, _, Prevs1),
        forgotten(Prevs1, T, W, Prevs)
    ;   Prevs = Prevs0
    ).

%!  skip_strategy(?Skip) is nondet.
%
%   Skip is one of Flink's after-match skip strategies that a rule may
%   have (`:- skip(Skip).`, `:- skip(Label, Skip).`): `no_skip`, every
%   match; `skip_to_next`, after a match no other match starts at its
%   first event; `skip_past_last_event`, after a match no other match
%   starts at or before its last event (its events, and every partial
%   match that began before its end, are discarded).

skip_strategy(no_skip).
skip_strategy(skip_to_next).
skip_strategy(skip_past_last_event).

%!  skip_global(+Engine, -Name) is det.
%
%   Name is the global variable that holds Engine's skip state: an
%   assoc from Label-Key (a rule's label or position, and its key
%   values) to skip(State), State what its kept matches leave that can
%   still discard a later match: `past(Last)` (the last position of the
%   latest) or `starts(Starts)`, the ordered set of First-Time of the
%   first positions of those kept within the rule's window (Time the
%   end of the match, which no event of it is after).

skip_global(M, Name) :-
    atom_concat(M, '/skip', Name).

%!  skip_kept(+Engine, -Count) is det.
%
%   Count is how many positions the skip strategies of Engine keep: a
%   last position per key under `skip_past_last_event`, the first
%   positions of the matches kept within the window under
%   `skip_to_next`.

skip_kept(M, Count) :-
    skip_global(M, G),
    (   nb_current(G, States)
    ->  assoc_to_values(States, Cells),
        foldl(cell_kept, Cells, 0, Count)
    ;   Count = 0
    ).

cell_kept(Cell, N0, N) :-
    cell_state(Cell, State),
    (   State = starts(Starts)
    ->  length(Starts, K)
    ;   State = past(_)
    ->  K = 1
    ;   K = 0
    ),
    N is N0 + K.

%   admitted(+State, +Match): Match is not discarded by the matches kept
%   before, which State tells: it starts after the last position of the
%   latest (`skip_past_last_event`), or at none of their first
%   positions (`skip_to_next`).  The selector chooses among those.

admitted(none, _).
admitted(past(Last), o(_, [First|_], _, _)) :-
    First > Last.
admitted(starts(Starts), o(_, [First|_], _, _)) :-
    \+ memberchk(First-_, Starts).

%   skipped(+Skip, +Matches, +State0, -State, -Kept): Kept are the
%   Matches (admitted and selected, all ending at the same position, in
%   order) that the skip strategy keeps: each one that the matches kept
%   before it leave, State the state after them.

skipped(skip_past_last_event, Matches, State0, State, Kept) :-
    (   State0 = past(Last0) -> true ; Last0 = -1 ),
    (   member(M, Matches),
        M = o(_, [First|_], _, _),
        First > Last0
    ->  M = o(_, Set, _, _),
        last(Set, Last),
        Kept = [M],
        State = past(Last)
    ;   Kept = [],
        State = State0
    ).
skipped(skip_to_next(W), Matches, State0, State, Kept) :-
    (   State0 = starts(Starts0) -> true ; Starts0 = [] ),
    foldl(kept_start, Matches, Kept0-Starts0, []-Starts1),
    Kept = Kept0,
    (   Matches == []
    ->  Starts = Starts1
    ;   aggregate_all(min(T), member(o(_, _, _, _-T), Matches), Now),
        exclude(forgotten_start(W, Now), Starts1, Starts)
    ),
    (   Starts == []
    ->  State = none
    ;   State = starts(Starts)
    ).

kept_start(M, Kept0-Starts0, Kept-Starts) :-
    M = o(_, [First|_], _, _-T),
    (   memberchk(First-_, Starts0)
    ->  Kept0 = Kept,
        Starts = Starts0
    ;   Kept0 = [M|Kept],
        ord_add_element(Starts0, First-T, Starts)
    ).

%   forgotten_start(+Window, +Now, +First-Time): no match ending at Now
%   or later can start at First any more: it would hold the event at
%   First, which ends at Time or before, and last more than Window.

forgotten_start(W, Now, _-T) :-
    W \== inf,
    T + W < Now.

%!  select_matches(+Selector, +Matches, -Selected) is det.
%
%   Selected are the Matches o(Selector, Set, Head, Interval) (all ending
%   at the same position, Set the ordered set of the positions) that
%   Selector keeps, in the order given; of matches with the same Set,
%   the first.

select_matches(Selector, Matches0, Selected) :-
    distinct_sets(Matches0, Matches),
    selected(Selector, Matches, Selected).

%   distinct_sets(+Matches0, -Matches): the first of each set of
%   positions, in the order given (keysort/2 is stable), in n log n.

distinct_sets(Matches0, Matches) :-
    findall(Set-(I-M), ( nth1(I, Matches0, M), M = o(_, Set, _, _) ), Keyed),
    keysort(Keyed, BySet),
    group_pairs_by_key(BySet, Groups),
    findall(First, member(_-[First|_], Groups), Firsts0),
    keysort(Firsts0, Firsts),
    pairs_values(Firsts, Matches).

selected(all, Matches, Matches).
selected(strict, Matches, Selected) :-
    include(contiguous, Matches, Selected).
selected(max, Matches, Selected) :-
    findall(N-Set, ( member(o(_, Set, _, _), Matches), length(Set, N) ), Sized0),
    sort(1, @>=, Sized0, Sized),
    exclude(has_superset(Sized), Matches, Selected).
selected(nxt, Matches, [Best]) :-
    greatest(next, Matches, Best).
selected(last, Matches, [Best]) :-
    greatest(last, Matches, Best).

%   contiguous(+Match): its positions are an interval i..j.

contiguous(o(_, Set, _, _)) :-
    Set = [First|_],
    last(Set, Last),
    length(Set, N),
    Last - First =:= N - 1.

%   has_superset(+Sized, +Match): another of the matches, given as
%   Size-Set in Sized (largest first), holds every position of Match and
%   more.  Only the larger ones are compared, so on matches of one size,
%   as a sequence's are, selecting costs n log n.

has_superset(Sized, o(_, Set, _, _)) :-
    length(Set, N),
    larger_superset(Sized, N, Set).

larger_superset([M-Other|Sized], N, Set) :-
    M > N,
    (   ord_subset_of(Set, Other)
    ->  true
    ;   larger_superset(Sized, N, Set)
    ).

ord_subset_of(Set, Other) :-
    ord_subtract(Set, Other, []).

%   greatest(+Order, +Matches, -Best): Best is the greatest of Matches
%   in CEL's order <=next (the smallest position where two differ is
%   Best's) or <=last (the largest position where they differ is
%   Best's).

greatest(Order, [M|Ms], Best) :-
    foldl(greater_of(Order), Ms, M, Best).

greater_of(Order, M, Best0, Best) :-
    M = o(_, Set, _, _),
    Best0 = o(_, BestSet, _, _),
    (   prefers(Order, Set, BestSet)
    ->  Best = M
    ;   Best = Best0
    ).

%   prefers(+Order, +A, +B): of the positions in exactly one of the
%   ordered sets A and B, the smallest (next) or the largest (last) is
%   in A.

prefers(next, A, B) :-
    first_difference(<, A, B, in_first).
prefers(last, A, B) :-
    reverse(A, RA),
    reverse(B, RB),
    first_difference(>, RA, RB, in_first).

%   first_difference(+Before, +As, +Bs, -Where): walking the lists As
%   and Bs, both ordered by Before, the first position that only one of
%   them holds is in_first (in As) or in_second.

first_difference(Before, [X|As], [Y|Bs], Where) :-
    (   X =:= Y
    ->  first_difference(Before, As, Bs, Where)
    ;   call(Before, X, Y)
    ->  Where = in_first
    ;   Where = in_second
    ).
first_difference(_, [_|_], [], in_first).
first_difference(_, [], [_|_], in_second).
