:- module(etalis_store,
          [ store_new/1,               % -Store
            store_queue/3,             % +Store, +Key, -Queue
            store_lookup/3,            % +Store, +Key, -Queue
            store_count/2,             % +Store, -Count
            store_entry/3,             % +Store, ?Key, ?Entry
            queue_append/3,            % +Store, +Queue, +Entry
            queue_reset/3,             % +Store, +Queue, +Entry
            queue_entry/2,             % +Queue, ?Entry
            queue_take/4,              % +Store, +Queue, ?Entry, :Condition
            queue_expire/4,            % +Store, +Queue, +End, +Window
            queue_pop/2,               % +Queue, -Entry
            store_append/4,            % +Store, +Key, +Entry, +Expiry
            store_replace/3,           % +Store, +Key, +Entry
            store_pending/4,           % +Store, +Key, +Expiry, ?Entry
            store_take/5,              % +Store, +Key, +Expiry, ?Entry, :Cond
            store_replace_if/4,        % +Store, +Key, +Entry, +Preference
            store_take_best/6,         % +Store, +Key, +Expiry, ?Entry, :Cond, +Preference
            store_take_all/6,          % +Store, +Key, +Expiry, ?Entry, :Cond, -Taken
            store_take_passing/7,      % +Store, +Key, +Expiry, ?Entry, :Cond, ?Witness, -Taken
            store_newest/6,            % +Store, +Key, +Expiry, ?Entry, :Cond, +Preference
            store_replace_same/5,      % +Store, +Key, +Entry, +Expiry, +Preference
            fresh_cell/2               % +Term, -Copy
          ]).
:- use_module(library(error)).
:- use_module(library(apply)).
:- use_module(library(lists)).
:- use_module(library(aggregate)).
:- use_module(library(pairs)).

:- meta_predicate queue_take(+, +, ?, 0), store_take(+, +, +, ?, 0), store_take_best(+, +, +, ?, 0, +),
                  store_take_all(+, +, +, ?, 0, -), store_take_passing(+, +, +, ?, 0, ?, -),
                  store_newest(+, +, +, ?, 0, +),
                  first_chosen(+, +, +, +, +, ?, 0, -), first_passing(+, ?, 0).

/** <module> Goal store: pending occurrences, indexed by join key

A store holds the pending occurrences of one side of one binary goal:
"A happened at [a1,a2]; waiting for its partner".  It maps a join key
(the values of the variables that join the two sides) to a queue of
entries `e(Payload, T1, T2)` in arrival order.  An event therefore only
touches the entries it can join with.

The store is a mutable term on the global stack, kept alive by a global
variable of its engine.  It is updated in place, without assert/retract:
nb_setarg/3 copies each new cell once (which also protects it against
backtracking), and nb_linkarg/3 links cells that are already protected,
so appending, expiring and consuming an entry are constant-time.  A new
cell of the table is filled in before one link puts it in place (see
fresh_cell/2), so that an error on the way (the stacks full) leaves the
table as it was before or after.

Store layout: st(Mask, Keys, Buckets, Open, Pass), Buckets a compound
of 2^k arguments (Mask = 2^k-1), lists of the keys' queues (unbound for
the empty list: a table of any size is made in one inference); a key's
queue q(First, Last, Key), which holds its key (a compound fewer for a
snapshot to walk than a pair), is over cells c(Entry, Next), [] for
none.  Keys counts the keys, Pass is the maintenance under way.

A key with variables (an occurrence of an event derived with an unbound
argument, see docs/language.md, "Head variables the pattern does not
bind") stands for all its instances.  Such keys are in the first bucket
and Open counts them; storing an occurrence finds its key's queue up to
variable names (=@=), and a partner finds every queue whose key unifies
with its own (see key_match/3): the one of its own key first, then
those of keys with variables.

The table is kept in shape a few buckets at a time, so that no event
pays for all the keys: when the keys outnumber the buckets twice, a
sweep begins, which with each new key visits two buckets, dropping what
the window shows to be too old and the keys whose queues are empty.
When it has visited them all, the live keys are counted; if the table
is the wrong size for them (the size is the power of two that gives
more than two and at most four buckets a key, but no less than a quarter
of the old size), a move begins, which with each new key takes a few
buckets of the old table into a new one (see pass_step/2).
A key is in the old table while its bucket there is still to be moved
(see home/4).  Every step links the cells that exist rather than copying
them, and a step that stops half-way (memory ran out) is done again
without harm, so no pending goal is ever lost.
*/

initial_buckets(64).

%!  store_new(-Store) is det.
%
%   Store is a new, empty store.  It must be made persistent by the
%   caller (e.g. with nb_setval/2).

store_new(st(Mask, 0, Buckets, 0, idle)) :-
    initial_buckets(N),
    Mask is N - 1,
    functor(Buckets, b, N).

%   bucket(+Buckets, +I, -List): List is bucket I of Buckets.

bucket(Buckets, I, List) :-
    arg(I, Buckets, List0),
    (   var(List0)
    ->  List = []
    ;   List = List0
    ).

%   home(+Store, +Hash, -Buckets, -I): a key of Hash is in bucket I of
%   Buckets: the old table's while a move has not yet taken its bucket
%   there, else the store's own.

home(st(Mask, _, Buckets0, _, Pass), H, Buckets, I) :-
    (   Pass = move(OldMask, Old, Next, _),
        I0 is H /\ OldMask + 1,
        I0 >= Next
    ->  Buckets = Old,
        I = I0
    ;   Buckets = Buckets0,
        I is H /\ Mask + 1
    ).

%   table_bucket(+Store, -Buckets, -I): bucket I of Buckets holds keys
%   of Store, in any order (on backtracking, every bucket).

table_bucket(st(Mask, _, Buckets0, _, Pass), Buckets, I) :-
    (   Buckets = Buckets0,
        N is Mask + 1,
        between(1, N, I)
    ;   Pass = move(OldMask, Buckets, Next, _),
        N is OldMask + 1,
        between(Next, N, I)
    ).

%   table_queue(+Store, -Queue): the queue of each key of Store, once (a
%   move step stopped half-way has linked keys of the old bucket it moves).

table_queue(Store, Q) :-
    table_bucket(Store, Buckets, I),
    bucket(Buckets, I, List),
    member(Q, List),
    \+ moved_already(Store, Buckets, I, Q).

moved_already(st(Mask, _, Table, _, move(_, Old, I, _)), Buckets, I, Q) :-
    same_term(Buckets, Old),
    arg(3, Q, Key),
    key_hash(Key, H),
    J is H /\ Mask + 1,
    bucket(Table, J, List),
    member(Q0, List),
    same_term(Q0, Q).

%!  store_count(+Store, -Count) is det.
%
%   Count is the number of pending entries in Store (counted, so that
%   adding and removing entries costs nothing extra).

store_count(Store, Count) :-
    aggregate_all(count, store_entry(Store, _, _), Count).

%!  store_lookup(+Store, +Key, -Queue) is semidet.
%
%   Queue holds the entries of Key; fails if Key has none.

store_lookup(Store, Key, Queue) :-
    term_hash(Key, H),
    (   integer(H)
    ->  home(Store, H, Buckets, I),
        arg(I, Buckets, List),
        nonvar(List),
        List = [Q0|Rest],
        arg(3, Q0, K),
        (   K == Key
        ->  Queue = Q0
        ;   ground_key_queue(Rest, Key, Queue)
        )
    ;   home(Store, 0, Buckets, I),
        bucket(Buckets, I, List),
        key_queue(List, Key, Queue)
    ).

%   key_queue(+List, +Key, -Queue): Queue is that of Key, up to variable
%   names, in the bucket List.  ground_key_queue/3 is the same for a
%   ground Key, which only an identical key can be.

key_queue([Q0|T], Key, Q) :-
    arg(3, Q0, K),
    (   K =@= Key
    ->  Q = Q0
    ;   key_queue(T, Key, Q)
    ).

ground_key_queue([Q0|T], Key, Q) :-
    arg(3, Q0, K),
    (   K == Key
    ->  Q = Q0
    ;   ground_key_queue(T, Key, Q)
    ).

%   key_hash(+Key, -Hash): a key with variables hashes to 0.

key_hash(Key, H) :-
    term_hash(Key, H0),
    (   integer(H0)
    ->  H = H0
    ;   H = 0
    ).

%   key_match(+Store, ?Key, -Queue) is nondet: Queue holds entries whose
%   key unifies with Key: the queue of Key itself first, then those of
%   keys with variables.  A Key with variables meets every key it
%   unifies with (its variables bound to that key's values); a key with
%   variables is matched on a copy, so that the store stays unbound.

key_match(Store, Key, Q) :-
    (   ground(Key)
    ->  arg(4, Store, Open),
        (   Open =:= 0
        ->  store_lookup(Store, Key, Q)
        ;   (   store_lookup(Store, Key, Q)
            ;   home(Store, 0, Buckets, I),
                bucket(Buckets, I, List),
                member(Q, List),
                arg(3, Q, K),
                \+ ground(K),
                copy_term(K, Key)
            )
        )
    ;   table_queue(Store, Q),
        arg(3, Q, K),
        copy_term(K, Key)
    ).

%!  store_queue(+Store, +Key, -Queue) is det.
%
%   Queue holds the entries of Key, created empty if needed.

store_queue(Store, Key, Queue) :-
    (   store_lookup(Store, Key, Queue0)
    ->  Queue = Queue0
    ;   key_hash(Key, H),
        new_key(Store, Key, H, none, Queue)
    ).

%   new_key(+Store, +Key, +Hash, +Expiry, -Queue): Queue is the empty
%   queue of Key, new in Store.  The key's cell is whole before one link
%   puts it in the table, and it is counted before, as a count one too
%   high costs a look that finds nothing, one too low a key's queue
%   that a partner would not look at (see key_match/3).

new_key(Store, Key, H, Expiry, Queue) :-
    maintain(Store, Expiry),
    home(Store, H, Buckets, I),
    bucket(Buckets, I, Old),
    fresh_cell([q([], [], Key)], Cell),
    nb_linkarg(2, Cell, Old),
    Cell = [Queue|_],
    count_key(Store, Key, 1),
    nb_linkarg(I, Buckets, Cell).

%   maintain(+Store, +Expiry): the maintenance of the table that a new
%   key pays for (see the module's description): start a sweep when the
%   keys outnumber the buckets twice, or take the steps of the pass
%   under way.  Expiry (`none` or window(End, W), see store_append/4)
%   says what is too old.

maintain(Store, Expiry) :-
    arg(5, Store, Pass),
    (   Pass == idle
    ->  arg(1, Store, Mask),
        arg(2, Store, Keys),
        (   Keys < 2*(Mask+1)
        ->  true
        ;   nb_setarg(5, Store, sweep(1)),
            pass_steps(2, Store, Expiry)
        )
    ;   Pass = move(_, _, _, Steps)
    ->  pass_steps(Steps, Store, Expiry)
    ;   pass_steps(2, Store, Expiry)
    ).

pass_steps(N, Store, Expiry) :-
    (   N > 0,
        \+ arg(5, Store, idle)
    ->  pass_step(Store, Expiry),
        N1 is N - 1,
        pass_steps(N1, Store, Expiry)
    ;   true
    ).

%   pass_step(+Store, +Expiry): one step of the pass under way: sweep(I)
%   visits bucket I of the table in place; move(OldMask, Old, I, Steps)
%   takes bucket I of the old table Old into the table (Steps of them a
%   new key).  At the end of a sweep, a move begins if the table is the
%   wrong size for its keys (see resize/1); at the end of a move, the
%   old table is let go.

pass_step(Store, Expiry) :-
    arg(5, Store, Pass),
    (   Pass = sweep(I)
    ->  arg(1, Store, Mask),
        (   I =< Mask + 1
        ->  arg(3, Store, Buckets),
            sweep_bucket(Store, Buckets, I, Expiry),
            I1 is I + 1,
            nb_setarg(1, Pass, I1)
        ;   resize(Store)
        )
    ;   Pass = move(OldMask, Old, I, _),
        (   I =< OldMask + 1
        ->  move_bucket(Store, Old, I, Expiry),
            I1 is I + 1,
            nb_setarg(3, Pass, I1)
        ;   nb_setarg(5, Store, idle)
        )
    ).

%   resize(+Store): after a sweep, the table gets more than two and at
%   most four buckets a live key (a power of two; but no fewer than a
%   quarter of those it has, so that a move takes at most eight old
%   buckets a new key): if that is another size, a move into a fresh
%   table begins.

resize(Store) :-
    Store = st(Mask, Keys, Buckets, _, _),
    N0 is Mask + 1,
    initial_buckets(Min),
    N1 is max(max(Min, N0 // 4), 1 << (msb(max(1, Keys)) + 2)),
    (   N1 =:= N0
    ->  nb_setarg(5, Store, idle)
    ;   functor(Fresh, b, N1),
        Mask1 is N1 - 1,
        Steps is 2 * max(1, N0 // N1),
        nb_setarg(5, Store, move(Mask, -, 1, Steps)),
        arg(5, Store, Pass),
        nb_linkarg(2, Pass, Buckets),
        nb_setarg(3, Store, Fresh),
        nb_setarg(1, Store, Mask1)
    ).

%   sweep_bucket(+Store, +Buckets, +I, +Expiry): drop what Expiry shows
%   to be too old from the queues of bucket I of Buckets, and the keys
%   whose queues are then empty.

sweep_bucket(Store, Buckets, I, Expiry) :-
    bucket(Buckets, I, List),
    sweep_cells(List, Buckets, I, Store, Expiry).

%   sweep_cells(+Cell, +Prev, +Arg, +Store, +Expiry): Cell is argument
%   Arg of Prev (the table or the previous cell).

sweep_cells([], _, _, _, _).
sweep_cells(Cell, Prev, Arg, Store, Expiry) :-
    Cell = [Q|Next],
    arg(3, Q, K),
    expire(Expiry, Q),
    (   arg(1, Q, [])
    ->  nb_linkarg(Arg, Prev, Next),
        count_key(Store, K, -1),
        sweep_cells(Next, Prev, Arg, Store, Expiry)
    ;   sweep_cells(Next, Cell, 2, Store, Expiry)
    ).

%   count_key(+Store, +Key, +N): N keys more like Key (Open too if it has variables).

count_key(Store, Key, N) :-
    arg(2, Store, Keys0),
    Keys is Keys0 + N,
    nb_setarg(2, Store, Keys),
    (   ground(Key)
    ->  true
    ;   arg(4, Store, Open0),
        Open is Open0 + N,
        nb_setarg(4, Store, Open)
    ).

%   move_bucket(+Store, +Old, +I, +Expiry): take the keys of bucket I of
%   the old table Old into the table, after sweeping it (see
%   sweep_bucket/4).  A key already linked there (by a step that stopped
%   half-way) is not linked again.

move_bucket(Store, Old, I, Expiry) :-
    sweep_bucket(Store, Old, I, Expiry),
    bucket(Old, I, List),
    Store = st(Mask, _, Buckets, _, _),
    forall(member(Q, List), move_key(Buckets, Mask, Q)).

move_key(Buckets, Mask, Q) :-
    arg(3, Q, Key),
    key_hash(Key, H),
    J is H /\ Mask + 1,
    bucket(Buckets, J, Old),
    (   member(Q0, Old),
        same_term(Q0, Q)
    ->  true
    ;   fresh_cell([x], Cell),
        nb_linkarg(1, Cell, Q),
        nb_linkarg(2, Cell, Old),
        nb_linkarg(J, Buckets, Cell)
    ).

%!  fresh_cell(+Term, -Copy) is det.
%
%   Copy is a copy of Term that backtracking keeps, not yet part of a
%   store, so that a cell is filled in before one nb_linkarg/3 puts it
%   in place: an error before that link (the stacks full) leaves the
%   store as it was, and the link leaves it whole.

fresh_cell(Term, Copy) :-
    Holder = h(_),
    nb_setarg(1, Holder, Term),
    arg(1, Holder, Copy).

%!  store_append(+Store, +Key, +Entry, +Expiry) is det.
%
%   Add Entry as the newest entry of Key, after dropping the entries of
%   Key that Expiry shows to be too old: `none` keeps all, window(End, W)
%   drops those that start more than W before End.

store_append(Store, Key, Entry, Expiry) :-
    (   store_lookup(Store, Key, Q)
    ->  (   Expiry = window(End, W)
        ->  queue_expire(Store, Q, End, W)
        ;   true
        )
    ;   key_hash(Key, H),
        new_key(Store, Key, H, Expiry, Q)
    ),
    queue_append(Store, Q, Entry).

%!  store_replace(+Store, +Key, +Entry) is det.
%
%   Make Entry the only entry of Key.

store_replace(Store, Key, Entry) :-
    store_queue(Store, Key, Q),
    queue_reset(Store, Q, Entry).

%!  store_pending(+Store, +Key, +Expiry, ?Entry) is nondet.
%
%   Entry is an entry of Key, oldest first, after dropping those that
%   Expiry shows to be too old.  Only the entries there when it is
%   called: an entry added while they are enumerated (an occurrence
%   derived from one of them at the same time, through a cycle of
%   rules) combines with what it meets on its own, not a second time
%   here.

store_pending(Store, Key, Expiry, Entry) :-
    key_match(Store, Key, Q),
    (   Expiry = window(End, W)
    ->  queue_expire(Store, Q, End, W)
    ;   true
    ),
    arg(1, Q, First),
    arg(2, Q, Last),
    cell_entry_upto(First, Last, Entry).

cell_entry_upto(Cell, Last, Entry) :-
    Cell = c(E, Next),
    (   same_term(Cell, Last)
    ->  Entry = E
    ;   (   Entry = E
        ;   cell_entry_upto(Next, Last, Entry)
        )
    ).

%!  store_take(+Store, +Key, +Expiry, ?Entry, :Cond) is semidet.
%
%   Remove and return the oldest entry of Key for which Cond holds.

store_take(Store, Key, Expiry, Entry, Cond) :-
    key_match(Store, Key, Q),
    expire(Expiry, Q),
    queue_take(Store, Q, Entry, Cond),
    !.

%!  store_replace_if(+Store, +Key, +Entry, +Preference) is det.
%
%   Make Entry the only entry of Key if it ends later than the one there,
%   or ends at the same time and Preference prefers it: `longer` (it
%   starts earlier), `shorter` (it starts later), by(Template, Value)
%   (its Value, unified through Template, is greater) or `none`.

store_replace_if(Store, Key, Entry, Pref) :-
    store_queue(Store, Key, Q),
    (   arg(1, Q, c(Old, _)),
        \+ newer(Entry, Old, Pref)
    ->  true
    ;   queue_reset(Store, Q, Entry)
    ).

newer(e(_, _, T2), e(_, _, O2), _) :-
    T2 > O2,
    !.
newer(New, Old, Pref) :-
    New = e(_, _, T2),
    Old = e(_, _, O2),
    T2 =:= O2,
    preferred(Pref, New, Old).

preferred(longer, e(_, T1, _), e(_, O1, _)) :- T1 < O1.
preferred(shorter, e(_, T1, _), e(_, O1, _)) :- T1 > O1.
preferred(by(Template, Value), New, Old) :-
    value_of(Template, Value, New, NV),
    value_of(Template, Value, Old, OV),
    greater(NV, OV).

value_of(Template, Value, Entry, V) :-
    copy_term(Template-Value, Entry-V).

greater(A, B) :-
    (   number(A), number(B)
    ->  A > B
    ;   A @> B
    ).

%!  store_take_best(+Store, +Key, +Expiry, ?Entry, :Cond, +Preference) is semidet.
%
%   Remove and return, of the entries of Key for which Cond holds, the
%   one that starts first; of those that start together the longer, the
%   shorter or the one with the greater value, as Preference says.

store_take_best(Store, Key, Expiry, Entry, Cond, Pref) :-
    first_chosen(best, Store, Key, Expiry, Pref, Entry, Cond, Q),
    queue_take(Store, Q, Taken, Taken == Entry).

%!  store_take_all(+Store, +Key, +Expiry, ?Entry, :Cond, -Taken) is multi.
%
%   Remove the entries of Key that unify with Entry and for which Cond
%   holds; Taken lists them, oldest first (Entry stays unbound).  Taken
%   is [] if there are none; otherwise it holds those of one queue that
%   Key matches (see key_match/3), and a next solution the next's.

store_take_all(Store, Key, Expiry, Entry, Cond, Taken) :-
    store_take_passing(Store, Key, Expiry, Entry, Cond, Entry, Taken).

%!  store_take_passing(+Store, +Key, +Expiry, ?Entry, :Cond, ?Witness, -Taken) is multi.
%
%   As store_take_all/6, but Taken lists, oldest first, a copy of
%   Witness as Cond left it (its first solution) for each entry taken
%   (Entry and Witness stay unbound), so that what Cond computed (a
%   `where` condition's bindings) is not computed again.

store_take_passing(Store, Key, Expiry, Entry, Cond, Witness, Taken) :-
    Found = found(false),
    (   key_match(Store, Key, Q),
        expire(Expiry, Q),
        arg(1, Q, First),
        partition_cells(First, Entry, Cond, Witness, Taken, Kept),
        Taken \== [],
        nb_setarg(1, Found, true),
        nb_setarg(1, Q, []),
        nb_setarg(2, Q, []),
        forall(member(E, Kept), queue_append(Store, Q, E))
    ;   arg(1, Found, false),
        Taken = []
    ).

partition_cells([], _, _, _, [], []).
partition_cells(c(E, Next), Entry, Cond, Witness, Taken, Kept) :-
    (   passing(E, Entry, Cond, Witness, W)
    ->  Taken = [W|Taken1],
        Kept = Kept1
    ;   Taken = Taken1,
        Kept = [E|Kept1]
    ),
    partition_cells(Next, Entry, Cond, Witness, Taken1, Kept1).

%   passing(+E, ?Entry, :Cond, ?Witness, -W): the entry E passes Cond; W
%   is Witness as Cond left it (E itself when Witness is the entry).

passing(E, Entry, Cond, Witness, W) :-
    (   Witness == Entry
    ->  \+ \+ ( E = Entry, call(Cond) ),
        W = E
    ;   findall(Witness, once(( E = Entry, call(Cond) )), [W])
    ).

%   best_first(+Cell, +Preference, -Entries): the entries of the queue
%   from Cell on, the best first: the one that starts first; of those
%   that start together the longer, the shorter or the one with the
%   greater value, as Preference says; then the first to arrive.  The
%   condition of the choice runs once for each until one passes.

best_first(First, Pref, Entries) :-
    best_keyed(First, 0, Pref, Keyed),
    sort(1, @>=, Keyed, Sorted),
    pairs_values(Sorted, Entries).

best_keyed([], _, _, []).
best_keyed(c(E, Next), I, Pref, [k(S, P, A)-E|Keyed]) :-
    E = e(_, T1, T2),
    S is -T1,
    A is -I,
    earliness(Pref, E, T2, P),
    I1 is I + 1,
    best_keyed(Next, I1, Pref, Keyed).

earliness(longer, _, T2, T2) :- !.
earliness(shorter, _, T2, P) :- !, P is -T2.
earliness(by(Template, Value), E, _, P) :- !, preference_value(Template, Value, E, P).
earliness(_, _, _, 0).

preference_value(Template, Value, E, P) :-
    (   value_of(Template, Value, E, V), number(V) -> P = n(V)
    ;   value_of(Template, Value, E, V) -> P = t(V)
    ;   P = '$none'
    ).

%!  store_newest(+Store, +Key, +Expiry, ?Entry, :Cond, +Preference) is semidet.
%
%   Entry is the newest entry of Key for which Cond holds (it stays in
%   the store): the last to arrive, or with a Preference other than
%   `none` the one that ends last and of those that end together the
%   one Preference prefers (see store_replace_if/4).

store_newest(Store, Key, Expiry, Entry, Cond, Pref) :-
    first_chosen(newest, Store, Key, Expiry, Pref, Entry, Cond, _).

%   first_chosen(+Order, +Store, +Key, +Expiry, +Pref, ?Entry, :Cond, -Queue)
%   is semidet: Entry is the first entry of Key's Queue for which Cond
%   holds, in Order: `best` (best_first/3) or `newest` (newest_first/3).

first_chosen(Order, Store, Key, Expiry, Pref, Entry, Cond, Q) :-
    key_match(Store, Key, Q),
    expire(Expiry, Q),
    arg(1, Q, First),
    ordered_entries(Order, First, Pref, Entries),
    first_passing(Entries, Entry, Cond),
    !.

ordered_entries(best, First, Pref, Entries) :-
    best_first(First, Pref, Entries).
ordered_entries(newest, First, Pref, Entries) :-
    newest_first(First, Pref, Entries).

%   first_passing(+Entries, ?Entry, :Cond): Entry is the first of Entries
%   for which Cond holds; Cond runs once for each until one passes.

first_passing(Entries, Entry, Cond) :-
    member(Entry, Entries),
    call(Cond),
    !.

%!  store_replace_same(+Store, +Key, +Entry, +Expiry, +Preference) is det.
%
%   Add Entry as the newest entry of Key (after dropping those Expiry
%   shows to be too old), in place of the entry with the same payload,
%   unless that one is to be preferred: it ends later, or together
%   and Preference prefers it (see store_replace_if/4; with `none`,
%   the newer one is kept).

store_replace_same(Store, Key, Entry, Expiry, Pref) :-
    store_append(Store, Key, Entry, Expiry),
    store_queue(Store, Key, Q),
    Entry = e(Payload, _, _),
    (   queue_entry(Q, Old),
        Old = e(P0, _, _),
        P0 == Payload,
        Old \== Entry
    ->  (   keeps_old(Pref, Entry, Old)
        ->  Drop = Entry
        ;   Drop = Old
        ),
        queue_take(Store, Q, E, E == Drop)
    ;   true
    ).

keeps_old(none, _, _) :- !, fail.
keeps_old(Pref, Entry, Old) :-
    \+ newer(Entry, Old, Pref).

%   newest_first(+Cell, +Preference, -Entries): the entries of the queue
%   from Cell on, the newest first: by end time, then by Preference
%   (see store_replace_if/4), then the last to arrive first (`none`) or
%   the first (a Preference, which only a better entry overrides).  The
%   condition of a choice then runs once for each entry until one passes,
%   so that what it does (a `do` action, printing) happens once.

newest_first(First, Pref, Entries) :-
    keyed_cells(First, 0, Pref, Keyed),
    sort(1, @>=, Keyed, Sorted),
    pairs_values(Sorted, Entries).

keyed_cells([], _, _, []).
keyed_cells(c(E, Next), I, Pref, [K-E|Keyed]) :-
    newness(Pref, E, I, K),
    I1 is I + 1,
    keyed_cells(Next, I1, Pref, Keyed).

newness(none, e(_, _, T2), I, k(T2, I)).
newness(longer, e(_, T1, T2), I, k(T2, S, A)) :- S is -T1, A is -I.
newness(shorter, e(_, T1, T2), I, k(T2, T1, A)) :- A is -I.
newness(by(Template, Value), E, I, k(T2, V, A)) :-
    E = e(_, _, T2),
    preference_value(Template, Value, E, V),
    A is -I.

expire(none, _).
expire(window(End, W), Q) :-
    queue_expire(_, Q, End, W).

%!  store_entry(+Store, ?Key, ?Entry) is nondet.
%
%   Enumerate all pending entries with their keys.

store_entry(Store, Key, Entry) :-
    table_queue(Store, Q),
    arg(3, Q, Key),
    queue_entry(Q, Entry).

%!  queue_entry(+Queue, ?Entry) is nondet.
%
%   Enumerate the entries of Queue, oldest first.

queue_entry(Q, Entry) :-
    arg(1, Q, First),
    cell_entry(First, Entry).

cell_entry(c(E, Next), Entry) :-
    (   Entry = E
    ;   cell_entry(Next, Entry)
    ).

%!  queue_append(+Store, +Queue, +Entry) is det.
%
%   Add Entry as the newest entry of Queue.

queue_append(_Store, Q, Entry) :-
    arg(2, Q, Last),
    (   Last == []
    ->  nb_setarg(1, Q, c(Entry, [])),
        arg(1, Q, Cell)
    ;   nb_setarg(2, Last, c(Entry, [])),
        arg(2, Last, Cell)
    ),
    nb_linkarg(2, Q, Cell).

%!  queue_reset(+Store, +Queue, +Entry) is det.
%
%   Replace all entries of Queue by Entry.

queue_reset(_Store, Q, Entry) :-
    nb_setarg(1, Q, c(Entry, [])),
    arg(1, Q, Cell),
    nb_linkarg(2, Q, Cell).

%!  queue_expire(+Store, +Queue, +End, +Window) is det.
%
%   Drop the oldest entries of Queue while they start more than Window
%   before End (End - T1 > Window): with an occurrence that ends at End,
%   they can no longer complete inside the window.  The test is the
%   window's own (End - T1 =< Window fails), not a comparison with
%   End - Window, whose float rounding may differ from it.

queue_expire(Store, Q, End, Window) :-
    arg(1, Q, First),
    (   First = c(e(_, T1, _), Next),
        End - T1 > Window
    ->  unlink_first(Q, Next),
        queue_expire(Store, Q, End, Window)
    ;   true
    ).

unlink_first(Q, Next) :-
    nb_linkarg(1, Q, Next),
    (   Next == []
    ->  nb_setarg(2, Q, [])
    ;   true
    ).

%!  queue_pop(+Queue, -Entry) is semidet.
%
%   Remove the oldest entry of Queue; fails if it is empty.

queue_pop(Q, Entry) :-
    arg(1, Q, c(Entry, Next)),
    unlink_first(Q, Next).

%!  queue_take(+Store, +Queue, ?Entry, :Condition) is semidet.
%
%   Remove and return the oldest entry of Queue that unifies with Entry
%   and for which Condition holds.

queue_take(Store, Q, Entry, Cond) :-
    arg(1, Q, First),
    take(First, Q, 1, Q, Store, Entry, Cond).

%   take(+Cell, +Prev, +Arg, +Queue, +Store, ?Entry, :Cond): Cell is
%   argument Arg of Prev (the queue itself or the previous cell).

take(Cell, Prev, Arg, Q, Store, Entry, Cond) :-
    Cell = c(E, Next),
    (   E = Entry,
        call(Cond)
    ->  nb_linkarg(Arg, Prev, Next),
        (   Next \== []
        ->  true
        ;   Arg == 1
        ->  nb_setarg(2, Q, [])
        ;   nb_linkarg(2, Q, Prev)
        )
    ;   take(Next, Cell, 2, Q, Store, Entry, Cond)
    ).

