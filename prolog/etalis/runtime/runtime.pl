:- module(etalis_runtime,
          [ engine_create/1,            % -Engine
            engine_destroy/1,           % +Engine
            engine_start/4,             % +Engine, +StoreIndexes, +Lateness, +Limit
            engine_reset/1,             % +Engine
            engine_flush/4,             % +Engine, -Released, -Fired, -Detections
            engine_flush/5,             % +Engine, +Format, -Released, -Fired, -Detections
            engine_flush/6,             % +Engine, +Format, +Timers, -Released, -Fired, -Detections
            engine_advance/6,           % +Engine, +Time, +Format, -Released, -Fired, -Detections
            engine_buffered/2,          % +Engine, -Count
            engine_due/2,               % +Engine, -Due
            engine_store/3,             % +Engine, +Index, -Store
            store_global/3,             % +Engine, +Index, -Name
            position_global/2,          % +Engine, -Name
            timers_global/2,            % +Engine, -Name
            engine_restores/3,          % +Engine, +OldIndexes, +NewIndexes
            engine_feed/5,              % +Engine, +Text, +FirstLine, -Summary, -Detections
            engine_feed/6,              % +Engine, +Text, +FirstLine, +Format, -Summary, -Detections
            engine_feed_list/6,         % +Engine, +Text, +FirstLine, +Count, -Summary, -Detections
            engine_feed_list/7,         % +Engine, +Text, +FirstLine, +Count, +Format, -Summary, -Detections
            engine_feed_terms/6,        % +Engine, +Terms, +FirstLine, +Checked, -Summary, -Detections
            engine_prefixes/2,          % +Engine, +Prefixes
            engine_process/5,           % +Engine, +Event, +T1, +T2, -Detections
            engine_pending/3,           % +Engine, ?Index, -Count
            goal_error/3,               % +Engine, +Error, +Goal
            first_derivation/4,         % +Engine, +Event, +T1, +T2
            trigger_asked/2,            % +Engine, +Event
            user_goal/1,                % :Goal
            rule_update_builtins/1,     % +Module
            rule_update/2,              % +Engine, +Update
            raise_event/2,              % +Engine, +Event
            timer_set/5,                % +Engine, +Event, +When, +T1, +T2
            engine_timers/2,            % +Engine, -Count
            feed_warning/2,             % +Engine, +Text
            engine_warnings/2,          % +Engine, -Warnings
            event_name/1                % +Name
          ]).
:- use_module(library(error)).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(heaps)).
:- use_module(library(memfile)).
:- use_module(library(time), [alarm/4, install_alarm/2, uninstall_alarm/1, remove_alarm/1]).
:- use_module(store).
:- use_module(aggregates).
:- use_module('../compiler/strategies', [selection/2, skip_global/2, partition_global/2, partition_input/4]).
:- use_module(library(assoc), [empty_assoc/1]).
:- use_module('../errors', [syntax_message/2]).
:- use_module('../reader/terms', [finite_number/1]).
:- use_module('../dialect/driver', [datime_time/2]).
:- use_module(protocol, [write_detection/1, write_detection/2, detection_format/1, message_text/2, bounded_text/2]).
:- use_module(graph_batch, [graph_batch_terms/3]).
:- use_module('../dialect/etalis_library', [etalis_flags/1]).

/** <module> The runtime of a compiled rule set

Each engine is a module of its own (its clauses, static rules and
reported events) plus a global variable of the same name that holds its
state, state(StoreIndexes, Order, Limit) (see admit/4 and run/5), and one global variable per goal
store (one per side of each binary goal), see store_global/3.  Two engines never see each other's rules,
goals or detections.

Events cross in batches as text, one Prolog term a line, each line
ending in a newline:

  - event(E, [T1, T2])  an occurrence of E over [T1, T2];
  - event(E, T)         an occurrence of E at the point T;
  - E                   an occurrence of E at its line number;
  - event(E, Time, Prov) an occurrence with its provenance given: in an
                        engine with explain(true), Prov (a list of
                        det(Event, T1, T2)) instead of [det(E, T1, T2)]
                        (how etalis replay passes derived events from
                        one stage to the next).

A line that is not a valid event, or whose time is earlier than the
last accepted one, is rejected with its line number and the reason.
*/

%!  engine_create(-Engine) is det.
%
%   Engine is the name of a new, empty engine module.

engine_create(M) :-
    flag(etalis_engine, N, N+1),
    format(atom(M), 'etalis_engine_~d', [N]),
    set_module(M:class(temporary)),             % so engine_destroy/1 can free it
    dynamic([ M:'$on'/4, M:'$derived'/4, M:'$reported'/1, M:'$rule_goals'/2, M:'$compiled'/1,
              M:'$sandboxed'/1, M:'$explain'/0, M:'$prefix'/2, M:'$selecting'/0, M:'$offer'/5,
              M:'$seen'/3, M:'$repeating'/2, M:'$rule_change'/1, M:'$identity'/1, M:'$hidden_names'/1, M:'$initial'/3,
              M:'$added_static'/1 ]),
    assertz(M:('$derived'(E, T1, T2, O) :-
                  (   '$repeating'(E, Key)
                  ->  etalis_runtime:first_derivation(M, Key, T1, T2)
                  ;   true
                  ),
                  (   '$reported'(E),
                      O = det(E, T1, T2)
                  ;   '$on'(E, T1, T2, O)
                  ))),
    assertz(M:('$run'(E, T1, T2) :-             % an input event, the plain way (event_goal/6)
                  '$on'(E, T1, T2, O),
                  etalis_protocol:write_detection(O),
                  fail)),
    assertz(M:'$run'(_, _, _)),
    rule_update_builtins(M).

%!  rule_update_builtins(+Module) is det.
%
%   Define in Module original ETALIS's predicates that change the rules
%   of the running engine: ins_event_rule(Rule), del_event_rule(Label
%   or labelled Rule) and ins_static_rule(Clause).  A call records the
%   change (rule_update/2); it is made once the input event that led to
%   it has been processed, so that the event runs over the rules it
%   found (see apply_rule_updates/2).  Also ETALIS's event/1 (see
%   raise_event/2) and its named flags (etalis_flags/1).

rule_update_builtins(M) :-
    etalis_flags(M),
    dynamic([M:'$rule_update'/1, M:'$raised'/1]),
    forall(member(Name-Kind, [ins_event_rule-ins, del_event_rule-del, ins_static_rule-ins_static]),
           (   Head =.. [Name, X],
               Update =.. [Kind, X],
               assertz(M:(Head :- etalis_runtime:rule_update(M, Update)))
           )),
    assertz(M:(event(E) :- etalis_runtime:raise_event(M, E))).

%!  raise_event(+Engine, +Event) is det.
%
%   Original ETALIS's event/1, called by a rule's condition or action or
%   by a static rule: Event is raised as an input event at the time of
%   the input event being processed, and fed after it (see
%   raised_events/3).  An Event that is not a ground event term is a
%   warning of the line being processed.

raise_event(M, E) :-
    (   callable(E),
        ground(E),
        functor(E, Name, _),
        \+ sub_atom(Name, 0, 1, _, $)
    ->  assertz(M:'$raised'(E))
    ;   copy_term(E, Shown),
        numbervars(Shown, 0, _, [singletons(true)]),
        format(string(W), "event/1 was given ~W, which is not an event (a ground term with a name): nothing raised",
               [Shown, [quoted(true), numbervars(true), max_depth(1000)]]),  % see bounded_text/2
        feed_warning(M, W)
    ).

%   raised_events(+M, +T, +Line): feed the events that the input event of
%   line Line at time T raised with event/1, after it and in the order
%   raised, each at time T and within the inference limit; what they
%   raise follows them.  At most max_raised/1 events per input event:
%   a rule that raises the event it reacts to would never end; the rest
%   are dropped with a warning.

raised_events(M, T, Line) :-
    (   M:'$raised'(_)
    ->  raise_queue([], M, T, Line, 0)
    ;   true
    ).

raise_queue(Queue0, M, T, Line, N0) :-
    findall(E, retract(M:'$raised'(E)), New),
    append(Queue0, New, Queue),
    (   Queue = [E|Queue1]
    ->  max_raised(Max),
        (   N0 >= Max
        ->  format(string(W), "event/1 raised more than ~D events for one input event (does a rule raise an event that leads back to itself?): the rest are dropped", [Max]),
            feed_warning(M, W)
        ;   N is N0 + 1,
            count_raised(M),
            run_one(M, E, T, T, Line),
            raise_queue(Queue1, M, T, Line, N)
        )
    ;   true
    ).

max_raised(1000).

%!  timers_global(+Engine, -Name) is det.
%
%   Name is the global variable that holds the timers
%   of engine Engine that are not due yet, timers(Seq, Heap): Heap has
%   ev(Event, T1, Due) by Due-N, N the order in which they were set
%   (Seq of them so far), see timer_set/5.

timers_global(M, Name) :-
    atom_concat(M, '/timers', Name).

%!  timer_set(+Engine, +Event, +When, +T1, +T2) is det.
%
%   A rule whose head is one of original ETALIS's timers (see
%   etalis_patterns:rule_head/4) detected its pattern over [T1,T2]: Event
%   occurs over [T1,Due], as in ETALIS, where Due is T2 + Seconds for
%   When = after(Seconds), or the time Time stands for (a number of
%   seconds or an ETALIS datime, see etalis_driver:datime_time/2) for
%   When = at(Time).  It is derived, as the head of a rule is, before
%   the first event whose end is Due or later (see due_timers/4), or at
%   the end of the stream (engine_flush/4).  A When that is no time
%   after T2 (a timer cannot fire in the past, nor at once) is a warning
%   of the line being processed, and nothing is set.

timer_set(M, E, When, T1, T2) :-
    (   due_time(When, T2, Due)
    ->  timers_global(M, G),
        nb_getval(G, timers(Seq0, H0)),
        Key is float(Due),
        add_to_heap(H0, Key-Seq0, ev(E, T1, Due), H),
        Seq is Seq0 + 1,
        nb_setval(G, timers(Seq, H))
    ;   timer_warning(M, E, When, T2)
    ).

%   due_time(+When, +T2, -Due) is semidet: When is a time Due after T2.

due_time(after(D), T2, Due) :-
    number(D), D > 0, D < inf,
    Due is T2 + D.
due_time(at(T), T2, Due) :-
    finite_time(T, Due),
    Due > T2.

timer_warning(M, E0, When, T2) :-
    (   E0 = '$provenance'(E, _) -> true ; E = E0 ),
    bounded_text(E, Shown),
    (   When = after(D)
    ->  bounded_text(D, Delay),
        format(string(W), "exceptionAlarm/2 of ~s was given the delay ~s, not a positive number of seconds: nothing raised", [Shown, Delay])
    ;   When = at(T),
        finite_time(T, Due)
    ->  format(string(W), "exceptionAlarmAbsoluteDatime/2 of ~s is due at ~w, not after the detection at ~w (a timer cannot fire in the past, nor at once): nothing raised", [Shown, Due, T2])
    ;   When = at(T),
        bounded_text(T, Given),
        format(string(W), "exceptionAlarmAbsoluteDatime/2 of ~s was given ~s, not a number of seconds or a datime(Y,M,D,H,Min,S): nothing raised", [Shown, Given])
    ),
    feed_warning(M, W).

finite_time(T, T) :-
    number(T), !,
    finite_number(T).
finite_time(datime(Y, Mo, D, H, Mi, S), Time) :- !,
    finite_time(datime(Y, Mo, D, H, Mi, S, 1), Time).
finite_time(T, Time) :-
    catch(datime_time(T, Time), error(type_error(_, _), _), fail).

%   due_timers(+M, +T, +Line, -Last): derive, in the order of their due
%   times (of setting, for the same due time), the timers of M due at T
%   or before, and what they raise, as events of line Line.  Last is the
%   due time of the last one, or `none`.  At the end of a stream (T is
%   inf) at most max_flushed_timers/1 fire after those pending: timers
%   that set timers could go on for ever.

due_timers(M, T, Line, Last) :-
    b_getval(etalis_run, run(_, _, G)),
    (   G == none
    ->  Last = none
    ;   due_timers(M, G, T, Line, Last)
    ).

due_timers(M, G, T, Line, Last) :-
    nb_getval(G, timers(_, H)),
    (   T == inf
    ->  heap_size(H, N),
        max_flushed_timers(Max),
        Budget is N + Max
    ;   Budget = inf
    ),
    due_timers(M, G, T, Line, Budget, none, Last).

due_timers(M, G, T, Line, Budget, Last0, Last) :-
    nb_getval(G, timers(Seq, H0)),
    (   min_of_heap(H0, Key-_, _),
        Key =< T
    ->  (   Budget == 0
        ->  heap_size(H0, N),
            max_flushed_timers(Max),
            format(string(W), "timers set timers for ever? after ~D more fired, ~D still pending are not fired", [Max, N]),
            feed_warning(M, W),
            Last = Last0
        ;   get_from_heap(H0, _, ev(E, T1, Due), H),
            nb_setval(G, timers(Seq, H)),
            count_raised(M),
            run_one(M, '$fire'(E), T1, Due, Line),
            raised_events(M, Due, Line),
            (   Budget == inf -> Budget1 = inf ; Budget1 is Budget - 1 ),
            due_timers(M, G, T, Line, Budget1, Due, Last)
        )
    ;   Last = Last0
    ).

max_flushed_timers(10000).

%!  engine_timers(+Engine, -Count) is det.
%
%   Count timers of Engine are set and not due yet (see timer_set/5).

engine_timers(M, Count) :-
    timers_global(M, G),
    nb_getval(G, timers(_, H)),
    heap_size(H, Count).

%!  rule_update(+Engine, +Update) is det.
%
%   Record a change of Engine's rules, to be made after the current
%   input event.  At most max_rule_updates/1 changes per input event
%   (each change compiles the rules again, so a rule that adds rules in
%   a loop would never end): the rest are dropped, marked by one
%   '$dropped' that rule_updates/1 reports.

rule_update(M, Update) :-
    max_rule_updates(Max),
    (   predicate_property(M:'$rule_update'(_), number_of_clauses(N)),
        N >= Max
    ->  (   N =:= Max
        ->  assertz(M:'$rule_update'('$dropped'))
        ;   true
        )
    ;   assertz(M:'$rule_update'(Update))
    ).

max_rule_updates(1000).

%!  apply_rule_updates(+Engine, +Updates) is det.
%
%   Hook (defined by the engine's API module): make the changes Updates
%   of Engine's rules, in order, reporting what fails as a warning.

:- multifile apply_rule_updates/2.

%   rule_updates(+M): make the changes of the rules that the last input
%   event's rules recorded.

rule_updates(M) :-
    (   M:'$rule_update'(_)
    ->  findall(U, retract(M:'$rule_update'(U)), Updates0),
        (   selectchk('$dropped', Updates0, Updates)
        ->  max_rule_updates(Max),
            format(string(W), "the rules asked for more than ~D changes of the rules (ins_event_rule/1, del_event_rule/1, ins_static_rule/1) for one input event: the rest are dropped", [Max]),
            feed_warning(M, W)
        ;   Updates = Updates0
        ),
        apply_rule_updates(M, Updates),
        engine_state(M, State),
        explaining(M),                  % the new rules may select (a P+ carries positions)
        limiting(M, State)
    ;   true
    ).

%!  feed_warning(+Engine, +Text) is det.
%
%   Report Text as a warning of the input line that Engine is
%   processing.

feed_warning(M, Text) :-
    (   b_getval(etalis_line, Line) -> true ; Line = 0 ),
    feed_global(M, warnings, G),
    nb_getval(G, Ws),
    nb_setval(G, [warning(Line, Text)|Ws]).

%   count_raised(+M): one more event was raised (event/1) or fired (a
%   timer) in the feed or flush of engine M.

count_raised(M) :-
    feed_global(M, raised, G),
    nb_getval(G, R0),
    R is R0 + 1,
    nb_setval(G, R).

%   feed_global(+M, +Kind, -Name): the global variable that holds what
%   the feed (or flush) of engine M gathers: its `warnings` (most recent
%   first), where it `stopped` (`none`, or stopped(Hit, Kept), see
%   stop/6), how many events were `raised` and the `limit_goal`, the
%   `where` condition that ran out of inferences (see goal_error/3).
%   Each engine has its own, so that what one engine gathers never
%   shows in another's reply.

feed_global(M, Kind, Name) :-
    atomic_list_concat([M, /, Kind], Name).

%   feed_start(+M): what engine M gathers starts empty.

feed_start(M) :-
    forall(feed_initial(Kind, V),
           (   feed_global(M, Kind, G),
               nb_setval(G, V)
           )).

feed_initial(warnings, []).
feed_initial(stopped, none).
feed_initial(raised, 0).
feed_initial(limit_goal, none).

%!  engine_warnings(+Engine, -Warnings) is det.
%
%   Warnings are the warning(Line, Text) of Engine's last feed or flush,
%   in order.

engine_warnings(M, Warnings) :-
    feed_value(M, warnings, Ws),
    reverse(Ws, Warnings).

%   feed_value(+M, +Kind, -Value): what the feed of M gathered of Kind.

feed_value(M, Kind, V) :-
    feed_global(M, Kind, G),
    nb_getval(G, V).

%!  engine_destroy(+Engine) is det.
%
%   Remove Engine's clauses and state.

engine_destroy(M) :-
    must_be(atom, M),
    (   nb_current(M, state(Indexes, _, _))
    ->  forall(( member(I, Indexes), store_global(M, I, Name), nb_current(Name, _) ),
               nb_delete(Name)),
        nb_delete(M)
    ;   true
    ),
    position_global(M, P),
    skip_global(M, Skip),
    partition_global(M, Partition),
    timers_global(M, Timers),
    findall(F, ( feed_initial(Kind, _), feed_global(M, Kind, F) ), Feed),
    forall(( member(G, [P, Skip, Partition, Timers|Feed]), nb_current(G, _) ), nb_delete(G)),
    '$destroy_module'(M).

%!  engine_start(+Engine, +Indexes, +Lateness, +Limit) is det.
%
%   Give Engine fresh state with an empty goal store for each of Indexes.
%   Lateness is `none` (events must arrive in time order) or how many
%   seconds late an event may arrive and still be matched in order.
%   Limit is the most inferences that processing one event may take
%   (a positive integer), or `inf`.

engine_start(M, Indexes, Lateness, Limit) :-
    must_be(list(positive_integer), Indexes),
    (   Limit == inf
    ->  true
    ;   must_be(positive_integer, Limit)
    ),
    maplist(new_store(M), Indexes),
    retractall(M:'$seen'(_, _, _)),
    (   Lateness == none
    ->  Order = in_order(-inf)
    ;   must_be(between(0.0, inf), Lateness),
        empty_heap(Heap),
        Order = reorder(Lateness, none, 0, Heap)
    ),
    nb_setval(M, state(Indexes, Order, Limit)),
    position_global(M, P),
    nb_setval(P, -1),
    skip_global(M, Skip),
    empty_assoc(NoSkips),
    nb_setval(Skip, NoSkips),
    partition_global(M, Partition),
    nb_setval(Partition, NoSkips),
    timers_global(M, Timers),
    empty_heap(NoTimers),
    nb_setval(Timers, timers(0, NoTimers)),
    feed_start(M).

%!  position_global(+Engine, -Name) is det.
%
%   Name is the global variable that holds the
%   position of the last input event that Engine processed (for the
%   selection strategies, see etalis_strategies:position/1).

position_global(M, Name) :-
    atom_concat(M, '/position', Name).

%!  engine_reset(+Engine) is det.
%
%   Give Engine fresh state (empty goal stores, no event seen yet),
%   keeping its rules and its lateness.

engine_reset(M) :-
    engine_state(M, state(Indexes, Order, Limit)),
    (   Order = reorder(Lateness, _, _, _)
    ->  true
    ;   Lateness = none
    ),
    engine_start(M, Indexes, Lateness, Limit).

%!  engine_buffered(+Engine, -Count) is det.
%
%   Count events wait in Engine's reorder buffer.

engine_buffered(M, Count) :-
    engine_state(M, State),
    (   arg(2, State, reorder(_, _, _, H))
    ->  heap_size(H, Count)
    ;   Count = 0
    ).

%!  engine_due(+Engine, -Due) is det.
%
%   Due is the earliest time to which moving Engine's time on
%   (engine_advance/6) does something: the time of the first event its
%   reorder buffer holds back or the due time of its first pending
%   timer, whichever is earlier; `none` if it has neither.

engine_due(M, Due) :-
    engine_state(M, State),
    (   arg(2, State, reorder(_, _, _, H)),
        min_of_heap(H, Held-_, _)
    ->  true
    ;   Held = none
    ),
    timers_global(M, G),
    (   nb_current(G, timers(_, TH)),
        min_of_heap(TH, Timer-_, _)
    ->  true
    ;   Timer = none
    ),
    earlier(Held, Timer, Due).

earlier(none, T, T) :- !.
earlier(T, none, T) :- !.
earlier(T0, T1, T) :- T is min(T0, T1).

new_store(M, I) :-
    store_global(M, I, Name),
    store_new(Store),
    nb_setval(Name, Store).

%!  engine_restores(+Engine, +OldIndexes, +NewIndexes) is det.
%
%   Keep the goal stores of Engine that are in both, free those only in
%   OldIndexes, and make empty ones for those only in NewIndexes.

engine_restores(M, Old, New) :-
    forall(( member(I, Old), \+ memberchk(I, New) ),
           (   store_global(M, I, Name),
               nb_delete(Name)
           )),
    forall(( member(I, New), \+ memberchk(I, Old) ), new_store(M, I)),
    nb_getval(M, State),
    nb_setarg(1, State, New).

%!  store_global(+Engine, +Index, -Name) is det.
%
%   Name is the global variable that holds goal store Index of Engine.

store_global(M, I, Name) :-
    format(atom(Name), '~w/~d', [M, I]).

%!  engine_store(+Engine, +Index, -Store) is det.
%
%   Store is goal store Index of Engine.

engine_store(M, I, Store) :-
    store_global(M, I, Name),
    nb_getval(Name, Store).

%!  engine_pending(+Engine, ?Index, -Count) is nondet.
%
%   Goal store Index of Engine holds Count pending goals.

engine_pending(M, I, Count) :-
    nb_getval(M, state(Indexes, _, _)),
    member(I, Indexes),
    engine_store(M, I, Store),
    store_count(Store, Count).

%!  engine_feed(+Engine, +Text, +FirstLine, -Summary, -Detections) is det.
%
%   Process the events in Text, whose first line is line FirstLine of
%   its source.  Detections is a string with one JSON object a line for
%   each reported detection; Summary is
%   summary(Accepted, Raised, Rejected, Warnings, Stopped), Raised the
%   number of events that rules raised with event/1 (see
%   raise_event/2), Rejected a list of rejected(Line, Reason) and
%   Warnings of warning(Line, Message).
%
%   Each event may take at most the engine's inference limit (see
%   engine_start/4).  Stopped is `none`, or limit(Line, Event, Limit, In)
%   if the event of line Line took more (In is where(Goal) if the limit
%   was reached in the `where` condition Goal, else `none`), or
%   memory(Line, Event, Bytes) if it ran out of the stacks (their limit,
%   the flag stack_limit, is Bytes): the feed stops there, with the
%   detections made before that event (its own are dropped; the goals it
%   stored before it was stopped stay).

engine_feed(M, Text, FirstLine, Summary, Detections) :-
    engine_feed(M, Text, FirstLine, object, Summary, Detections).

%!  engine_feed(+Engine, +Text, +FirstLine, +Format, -Summary, -Detections) is det.
%
%   As engine_feed/5, with the detections written as Format: `object`
%   (a JSON object a line, as engine_feed/5) or `row` (a JSON array a
%   line: `["c", [1], 1, 2]`, with the provenance's rows as a fifth
%   element in an engine with explain(true)).

engine_feed(M, Text, FirstLine, Format, Summary, Detections) :-
    must_be(atom, M),
    must_be(string, Text),
    must_be(integer, FirstLine),
    detection_format(Format),
    Offset is FirstLine - 1,
    feeding(M, text_events(Text, M, Offset), Summary, Detections).

text_events(Text, M, Offset, Order0, Order, Accepted, Rejected) :-
    setup_call_cleanup(
        open_string(Text, In),
        feed_loop(In, Text, M, Offset, 0, Order0, Order, 0, Accepted, Rejected, []),
        close(In)).

%!  engine_feed_list(+Engine, +Text, +FirstLine, +Count, -Summary, -Detections) is det.
%
%   As engine_feed/5, for Text that is one Prolog list of Count elements
%   with one element a line (a comma ends each line but the last):
%   element I is the term of line FirstLine+I-1 (as a line of
%   engine_feed/5 would hold it, without its full stop), or `[]` for a
%   line that holds nothing (a row that Python rejected).  The whole
%   batch is read at once, which costs a fraction of reading it a term at
%   a time.  Should Text not read as a list of Count elements, it is fed
%   line by line as by engine_feed/5, so that each bad line gets its own
%   rejection.
%
%   The atoms that the elements share can be written once, at the head
%   of the batch: Text is then `Vars = Atoms, List`, with Vars a list of
%   distinct variables, Atoms a list of as many atoms and List the batch
%   list, whose elements write each of these atoms as its variable (the
%   IRIs of a batch of graph events, see graphs.py: an IRI is read once
%   a batch, not once a triple).  The head is the first line of Text:
%   should the batch not read, its list is fed line by line without it
%   (so a line that names an atom by its variable is rejected).
%
%   Text may also be a graph batch (see graph_batch_terms/3), whose
%   terms cross as numbers; it always decodes.

engine_feed_list(M, Text, FirstLine, Count, Summary, Detections) :-
    engine_feed_list(M, Text, FirstLine, Count, object, Summary, Detections).

%!  engine_feed_list(+Engine, +Text, +FirstLine, +Count, +Format, -Summary, -Detections) is det.
%
%   As engine_feed_list/6, with the detections written as Format (see
%   engine_feed/6).

engine_feed_list(M, Text, FirstLine, Count, Format, Summary, Detections) :-
    must_be(atom, M),
    must_be(string, Text),
    must_be(integer, FirstLine),
    must_be(nonneg, Count),
    detection_format(Format),
    (   (   graph_batch_terms(Text, Count, Terms)
        ->  true
        ;   catch(term_string(Batch, Text), error(syntax_error(_), _), fail),
            batch_terms(Batch, Terms),
            is_list(Terms),
            length(Terms, Count)
        )
    ->  feeding(M, list_events(Terms, FirstLine, M, plain), Summary, Detections)
    ;   headless(Text, List),
        list_lines(List, Lines),
        engine_feed(M, Lines, FirstLine, Format, Summary, Detections)
    ).

%!  engine_feed_terms(+Engine, +Terms, +FirstLine, +Checked, -Summary, -Detections) is det.
%
%   As engine_feed_list/7 for a batch already made into its list of
%   terms (see etalis_columns:column_terms/3), with the detections in
%   the format that detection_format/1 set: element I of Terms is the
%   term of line FirstLine+I-1, `[]` for nothing.  Checked is `checked`
%   if every other element is known to be a valid input event
%   event(E, T) or event(E, [T1, T2]) (a ground E of a name that is not
%   reserved, finite numbers T1 =< T2, as column_terms/3 finds it),
%   which is then not checked again an event at a time; else `plain`.

engine_feed_terms(M, Terms, FirstLine, Checked, Summary, Detections) :-
    must_be(atom, M),
    must_be(list, Terms),
    must_be(integer, FirstLine),
    must_be(oneof([checked, plain]), Checked),
    feeding(M, list_events(Terms, FirstLine, M, Checked), Summary, Detections).

%   batch_terms(+Batch, -Terms): the list of terms of a batch list read
%   as Batch, with its atoms in place of its variables if it has a head
%   `Vars = Atoms` (see engine_feed_list/6).

batch_terms((Vars = Atoms, Terms), Terms) :- !,
    is_list(Vars),
    is_list(Atoms),
    maplist(atom, Atoms),
    Vars = Atoms.
batch_terms(Terms, Terms).

%   headless(+Text, -List): the batch list of Text, without the line of
%   its head if it has one (see engine_feed_list/6).

headless(Text, List) :-
    (   sub_string(Text, 0, 2, _, "[_"),
        sub_string(Text, Before, 1, _, "\n")
    ->  Start is Before + 1,
        sub_string(Text, Start, _, 0, List)
    ;   List = Text
    ).

%   list_lines(+Text, -Lines): the lines of engine_feed/5 that the list
%   Text stands for.

list_lines(Text, Lines) :-
    (   sub_string(Text, 0, 1, _, "[")
    ->  sub_string(Text, 1, _, 0, Text1)
    ;   Text1 = Text
    ),
    split_string(Text1, "\n", "", Parts),
    maplist(list_line, Parts, Lines0),
    atomics_to_string(Lines0, Lines).

list_line(Part0, Line) :-
    (   ( string_concat(Part, ",", Part0) ; string_concat(Part, "]", Part0) )
    ->  true
    ;   Part = Part0
    ),
    (   Part == "[]"
    ->  Line = "\n"
    ;   string_concat(Part, ".\n", Line)
    ).

list_events(Terms, FirstLine, M, Checked, Order0, Order, Accepted, Rejected) :-
    batch_loop(Terms, FirstLine, M, Checked, Order0, Order, 0, Accepted, Rejected).

%   feeding(+M, :Loop, -Summary, -Detections): feed M the events of Loop,
%   called as call(Loop, Order0, Order, Accepted, Rejected), see
%   engine_feed/5.

feeding(M, Loop, summary(Accepted, Raised, Rejected, Warnings, Stopped), Detections) :-
    engine_state(M, State),
    arg(2, State, Order0),
    explaining(M),
    prefixing(M),
    limiting(M, State),
    feed_start(M),
    arg(3, State, Limit),
    watched(M, Limit, output_text(call(Loop, Order0, Order, Accepted, Rejected), Detections0)),
    feed_value(M, stopped, Stopped0),
    (   Stopped0 = stopped(Stopped, Kept)
    ->  sub_string(Detections0, 0, Kept, _, Detections)
    ;   Stopped = none,
        Detections = Detections0
    ),
    nb_setarg(2, State, Order),
    engine_warnings(M, Warnings),
    feed_value(M, raised, Raised).

%   output_text(:Goal, -Text): as with_output_to(string(Text), Goal), the
%   output collected in a UTF-8 memory file (writing a detection line
%   there costs a third of what it costs in the wide characters of
%   with_output_to/2's buffer).

:- meta_predicate output_text(0, -).

output_text(Goal, Text) :-
    setup_call_cleanup(
        ( new_memory_file(File),
          open_memory_file(File, write, Out, [encoding(utf8)])
        ),
        ( with_output_to(Out, Goal),
          close(Out),
          memory_file_to_string(File, Text, utf8)
        ),
        ( (   is_stream(Out)
          ->  close(Out)
          ;   true
          ),
          free_memory_file(File)
        )).

engine_state(M, State) :-
    (   nb_current(M, State)
    ->  true
    ;   existence_error(etalis_engine, M)
    ).

%!  engine_flush(+Engine, -Released, -Fired, -Detections) is det.
%
%   At the end of a stream, process the events that wait in the reorder
%   buffer of an engine with a lateness (Released of them), then fire
%   the timers still pending (Fired of them, with what they raise; see
%   timer_set/5), in time order.
%
%   @error etalis_limit(limit(Line, Event, Limit, In)) if an event takes
%   more inferences than the engine's limit (see engine_feed/5).

engine_flush(M, Released, Fired, Detections) :-
    engine_flush(M, object, Released, Fired, Detections).

%!  engine_flush(+Engine, +Format, -Released, -Fired, -Detections) is det.
%
%   As engine_flush/4, with the detections written as Format (see
%   engine_feed/6).

engine_flush(M, Format, Released, Fired, Detections) :-
    engine_flush(M, Format, true, Released, Fired, Detections).

%!  engine_flush(+Engine, +Format, +Timers, -Released, -Fired, -Detections) is det.
%
%   As engine_flush/5; with Timers `false` the timers due after the last
%   event stay pending: the end of a finite input is not the end of
%   time, and a later run resumed from a snapshot fires them when due.

engine_flush(M, Format, Timers, Released, Fired, Detections) :-
    must_be(boolean, Timers),
    engine_ordered(M, Format, flush_order(M, Timers), Released, Fired, Detections).

%!  engine_advance(+Engine, +Time, +Format, -Released, -Fired, -Detections) is det.
%
%   Engine's time moves on to Time with no event: no event earlier than
%   Time may come any more, so the events of the reorder buffer up to
%   Time are processed (Released of them) and the timers due at Time or
%   earlier fire (Fired of them, with what they raise), in time order.
%   A Time before the last event's changes nothing.

engine_advance(M, Time, Format, Released, Fired, Detections) :-
    must_be(number, Time),
    (   finite_number(Time)
    ->  true
    ;   domain_error(finite_number, Time)
    ),
    engine_ordered(M, Format, advance_order(M, Time), Released, Fired, Detections).

:- meta_predicate engine_ordered(+, +, 3, -, -, -).

engine_ordered(M, Format, Step, Released, Fired, Detections) :-
    detection_format(Format),
    engine_state(M, State),
    explaining(M),
    limiting(M, State),
    arg(2, State, Order0),
    feed_start(M),
    arg(3, State, Limit),
    catch(watched(M, Limit, output_text(call(Step, Order0, Order, Released), Detections)),
          etalis_limit(Hit),
          throw(error(etalis_limit(Hit), _))),
    nb_setarg(2, State, Order),
    feed_value(M, raised, Fired).

%   flush_order(+M, +Timers, +Order0, -Order, -Released): process the
%   Released events of the reorder buffer, then (if Timers is true) the
%   timers still pending, in time order; no later event may come before
%   the last of them.

flush_order(M, Timers, Order0, Order, Released) :-
    (   Order0 = reorder(L, Max0, Seq, H0)
    ->  heap_size(H0, Released),
        release(M, inf, H0, H),
        flushed_timers(Timers, M, Last),
        later(Max0, Last, Max),
        Order = reorder(L, Max, Seq, H)
    ;   Order0 = in_order(Last0),
        Released = 0,
        flushed_timers(Timers, M, Last),
        later(Last0, Last, Last1),
        Order = in_order(Last1)
    ).

flushed_timers(true, M, Last) :-
    due_timers(M, inf, 0, Last).
flushed_timers(false, _, none).

%   advance_order(+M, +Time, +Order0, -Order, -Released): the events of
%   the reorder buffer up to Time, then the timers due by Time; later
%   events may not be earlier than Time.

advance_order(M, Time, Order0, Order, Released) :-
    (   Order0 = reorder(L, Max0, Seq, H0)
    ->  release(M, Time, H0, H),
        heap_size(H0, N0),
        heap_size(H, N),
        Released is N0 - N,
        due_timers(M, Time, 0, _),
        Mark is Time + L,
        later(Max0, Mark, Max),
        Order = reorder(L, Max, Seq, H)
    ;   Order0 = in_order(Last0),
        Released = 0,
        due_timers(M, Time, 0, _),
        later(Last0, Time, Last),
        Order = in_order(Last)
    ).

later(T, none, T) :- !.
later(none, T, T) :- !.
later(T0, T1, T) :- T is max(T0, T1).

%   feed_loop(+In, +Text, +M, +Offset, +C0, +Order0, -Order, +A0, -A, -Rejected, ?Tail)
%
%   Read and process the terms of In, a stream over Text now at
%   character C0, one term a line.  A term (or a syntax error) that the
%   reader took from more than one line, such as an unterminated quote,
%   would swallow the lines after it: from where it starts, the rest of
%   Text is read line by line (feed_lines/9), so that only its line is
%   rejected.  Testing that a term lies on one line costs little as long
%   as each term's line follows the previous one's.  An event over the
%   inference limit ends the loop (see stop/5).

:- set_prolog_flag(optimise, true).           % the loop's arithmetic inline
feed_loop(In, Text, M, Offset, C0, Order0, Order, A0, A, Rejected, Tail) :-
    catch(read_term(In, Term, []),
          error(syntax_error(What), Context),
          syntax_error_term(Text, What, Context, Term)),
    character_count(In, C1),
    line_position(In, P1),
    (   Term == end_of_file,
        \+ full_stop_read(Text, C0, C1)
    ->  Order = Order0, A = A0, Rejected = Tail
    ;   C1 - P1 > C0 + 1,
        LineStart is C1 - P1,
        starts_before(Text, C0, LineStart)
    ->  term_start(Text, C0, Start),
        sub_string(Text, Start, _, 0, After),
        split_string(After, "\n", "", Lines),
        start_line(Text, Start, In, Offset, First),
        feed_lines(Lines, First, M, Order0, Order, A0, A, Rejected, Tail)
    ;   line_count(In, L),
        Line is L + Offset,
        (   C1 - C0 > 10_000_000                % row_chars/1
        ->  row_chars(Max),
            Chars is C1 - C0,
            format(string(Reason), "the line holds ~D characters, more than the ~D a row may hold",
                   [Chars, Max]),
            Outcome = rejected(Reason)
        ;   feed_term(Term, Line, M, Order0, Outcome)
        ),
        (   Outcome = admitted(Order1)
        ->  A1 is A0 + 1,
            feed_loop(In, Text, M, Offset, C1, Order1, Order, A1, A, Rejected, Tail)
        ;   Outcome = stopped(Hit, Kept)
        ->  stop(M, Hit, Kept, Order0-Order, A0-A, Rejected-Tail)
        ;   Outcome = rejected(Reason),
            Rejected = [rejected(Line, Reason)|Rest],
            feed_loop(In, Text, M, Offset, C1, Order0, Order, A0, A, Rest, Tail)
        )
    ).

%   feed_term(+Term, +Line, +M, +Order0, -Outcome): process Term, read
%   from line Line, in engine M.  Outcome is admitted(Order) (an event,
%   processed), stopped(Hit, Kept) (an event over the inference limit;
%   Kept is the output written before it, see stop/5) or
%   rejected(Reason).

feed_term(Term, Line, M, Order0, Outcome) :-
    (   (   plain_input(Term, E0, T1)
        ->  T2 = T1
        ;   nonvar(Term),
            input_event(Term, Line, E0, T1, T2, Reason),
            var(Reason)
        ),
        prefixed_event(M, E0, E),
        character_count(current_output, Kept),
        catch(admit(Order0, M, ev(E, T1, T2, Line), Order1),
              etalis_limit(Hit),
              true)
    ->  (   var(Hit)
        ->  Outcome = admitted(Order1)
        ;   Outcome = stopped(Hit, Kept)
        )
    ;   rejection(Term, Line, Order0, Reason),
        Outcome = rejected(Reason)
    ).

%   batch_loop(+Terms, +Line, +M, +Checked, +Order0, -Order, +A0, -A, -Rejected)
%
%   Process Terms, the first of which is the event of line Line, the
%   quick way (quick_loop/10) while the engine's state allows it: events
%   in time order, the plain way (see event_goal/6), no timers, no
%   prefixes; else the general way (list_loop/8).

batch_loop(Terms, Line, M, Checked, Order0, Order, A0, A, Rejected) :-
    (   Order0 = in_order(Last0),
        b_getval(etalis_run, run(Limit, plain, none)),
        b_getval(etalis_prefixes, false)
    ->  quick_loop(Terms, Line, M, Checked, Limit, Last0, Order, A0, A, Rejected)
    ;   list_loop(Terms, Line, M, Order0, Order, A0, A, Rejected)
    ).

%   quick_loop(+Terms, +Line, +M, +Checked, +Limit, +Last0, -Order, +A0, -A, -Rejected)
%
%   As list_loop/8 for an engine whose state batch_loop/9 found to
%   allow it, the last accepted time Last0: what run/5 does, without
%   the steps that do nothing there.  A term that is not a valid event
%   in time order (and an event that changes the rules or raises
%   events) goes the general way, and batch_loop/9 takes the rest.

quick_loop([], _, _, _, _, Last, in_order(Last), A, A, []).
quick_loop([Term|Terms], Line, M, Checked, Limit, Last0, Order, A0, A, Rejected) :-
    Next is Line + 1,
    (   quick_event(Checked, Term, E, T1, T2),
        T2 >= Last0
    ->  b_setval(etalis_line, Line),
        character_count(current_output, Kept),
        limited(Limit, M:'$run'(E, T1, T2), M, E, Line, Hit),
        A1 is A0 + 1,
        (   Hit \== none
        ->  stop(M, Hit, Kept, in_order(Last0)-Order, A0-A, Rejected-[])
        ;   \+ M:'$rule_update'(_),
            \+ M:'$raised'(_)
        ->  quick_loop(Terms, Next, M, Checked, Limit, T2, Order, A1, A, Rejected)
        ;   catch(( rule_updates(M),
                    raised_events(M, T2, Line)
                  ), etalis_limit(Raised), true),
            (   var(Raised)
            ->  batch_loop(Terms, Next, M, Checked, in_order(T2), Order, A1, A, Rejected)
            ;   stop(M, Raised, Kept, in_order(Last0)-Order, A0-A, Rejected-[])
            )
        )
    ;   Term == []
    ->  quick_loop(Terms, Next, M, Checked, Limit, Last0, Order, A0, A, Rejected)
    ;   list_loop([Term], Line, M, in_order(Last0), Order1, A0, A1, Rejected1),
        (   feed_value(M, stopped, none)
        ->  append(Rejected1, Rest, Rejected),
            batch_loop(Terms, Next, M, Checked, Order1, Order, A1, A, Rest)
        ;   Order = Order1, A = A1, Rejected = Rejected1
        )
    ).

%   quick_event(+Checked, +Term, -E, -T1, -T2) is semidet: Term is a valid
%   input event E over [T1,T2] (as plain_input/3 finds it, or known to
%   be one if Checked is `checked`, see engine_feed_terms/6).

quick_event(plain, Term, E, T, T) :-
    plain_input(Term, E, T).
quick_event(checked, event(E, Time), E, T1, T2) :-
    (   number(Time)
    ->  T1 = Time, T2 = Time
    ;   Time = [T1, T2]
    ),
    T1 >= -253_402_300_799,                     % time_horizon/1
    T2 =< 253_402_300_799.

%   list_loop(+Terms, +Line, +M, +Order0, -Order, +A0, -A, -Rejected)
%
%   Process Terms, the first of which is the event of line Line (`[]`
%   for a line with nothing to process).

list_loop([], _, _, Order, Order, A, A, []).
list_loop([Term|Terms], Line, M, Order0, Order, A0, A, Rejected) :-
    Next is Line + 1,
    (   Term == []
    ->  list_loop(Terms, Next, M, Order0, Order, A0, A, Rejected)
    ;   feed_term(Term, Line, M, Order0, Outcome),
        (   Outcome = admitted(Order1)
        ->  A1 is A0 + 1,
            list_loop(Terms, Next, M, Order1, Order, A1, A, Rejected)
        ;   Outcome = stopped(Hit, Kept)
        ->  stop(M, Hit, Kept, Order0-Order, A0-A, Rejected-[])
        ;   Outcome = rejected(Reason),
            Rejected = [rejected(Line, Reason)|Rest],
            list_loop(Terms, Next, M, Order0, Order, A0, A, Rest)
        )
    ).

:- set_prolog_flag(optimise, false).

%   full_stop_read(+Text, +C0, +C1): the reader read from character C0
%   to C1 of Text up to a full stop: the end_of_file it read is that term
%   of the text, not the end of the text.

full_stop_read(Text, C0, C1) :-
    C1 > C0,
    Last is C1 - 1,
    sub_string(Text, Last, 1, _, ".").

%   starts_before(+Text, +C0, +LineStart): the term read from character
%   C0 of Text begins before LineStart, the start of the line where the
%   reader stopped.

starts_before(Text, C0, LineStart) :-
    term_start(Text, C0, Start),
    Start < LineStart.

%   term_start(+Text, +C, -Start): Start is where the first term at or
%   after C begins: past white space and % comments.

term_start(Text, C, Start) :-
    (   sub_string(Text, C, 1, _, Char)
    ->  (   char_type(Char, space)
        ->  C1 is C + 1,
            term_start(Text, C1, Start)
        ;   Char == "%",
            sub_string(Text, C, _, 0, After),
            sub_string(After, Before, 1, _, "\n")
        ->  C1 is C + Before + 1,
            term_start(Text, C1, Start)
        ;   Start = C
        )
    ;   Start = C
    ).

%   start_line(+Text, +Start, +In, +Offset, -First): First is the line
%   (plus Offset) of character Start of Text; In is a stream over Text,
%   further on.

start_line(Text, Start, In, Offset, First) :-
    line_count(In, L),
    character_count(In, C),
    Len is C - Start,
    sub_string(Text, Start, Len, _, Between),
    split_string(Between, "\n", "", Parts),
    length(Parts, N),
    First is L - N + 1 + Offset.

%   feed_lines(+Lines, +Line, +M, +Order0, -Order, +A0, -A, -Rejected, ?Tail)
%
%   Process Lines, the first of which is line Line, each read on its own.

feed_lines([], _, _, Order, Order, A, A, Tail, Tail).
feed_lines([_|_], _, M, Order0, Order, A0, A, Rejected, Tail) :-
    \+ feed_value(M, stopped, none),
    !,
    Order = Order0, A = A0, Rejected = Tail.
feed_lines([Text|Lines], Line, M, Order0, Order, A0, A, Rejected, Tail) :-
    Offset is Line - 1,
    setup_call_cleanup(
        open_string(Text, In),
        feed_loop(In, Text, M, Offset, 0, Order0, Order1, A0, A1, Rejected, Rest),
        close(In)),
    Next is Line + 1,
    feed_lines(Lines, Next, M, Order1, Order, A1, A, Rest, Tail).

%   stop(+M, +Hit, +Kept, ?Order0-Order, ?A0-A, ?Rejected-Tail): an
%   event took more than the inference limit (Hit, see engine_feed/5):
%   the feed of engine M ends with the state before it, and the first
%   Kept characters of the detections (those of the events before it).

stop(M, Hit, Kept, Order-Order, A-A, Tail-Tail) :-
    feed_global(M, stopped, G),
    nb_setval(G, stopped(Hit, Kept)).

%   admit(+Order0, +M, +Event, -Order) is semidet.
%
%   Process Event now (in_order(LastTime)), or hold it in the reorder
%   buffer of an engine with a lateness (reorder(Lateness, MaxTime, Seq,
%   Heap)) and process the buffered events that can no longer be
%   preceded by a later arrival, oldest first.  Fails for an event that
%   comes too late.

admit(in_order(Last), M, ev(E, T1, T2, Line), in_order(T2)) :-
    T2 >= Last,
    run(M, E, T1, T2, Line).
admit(reorder(L, Max0, Seq0, H0), M, Ev, reorder(L, Max, Seq, H)) :-
    Ev = ev(_, _, T2, _),
    (   Max0 == none
    ->  Max = T2
    ;   T2 >= Max0 - L,
        Max is max(Max0, T2)
    ),
    Seq is Seq0 + 1,
    Key is float(T2),           % the standard order puts 5.0 before 5
    add_to_heap(H0, Key-Seq0, Ev, H1),
    Mark is Max - L,
    release(M, Mark, H1, H).

release(M, Mark, H0, H) :-
    (   min_of_heap(H0, Key-_, _),
        Key =< Mark
    ->  get_from_heap(H0, _, ev(E, T1, T2, Line), H1),
        run(M, E, T1, T2, Line),
        release(M, Mark, H1, H)
    ;   H = H0
    ).

%   run(+M, +E, +T1, +T2, +Line): process one event within the inference
%   limit of the batch (see limiting/1), or throw etalis_limit(Hit).

run(M, E, T1, T2, Line) :-
    due_timers(M, T2, Line, _),
    run_one(M, E, T1, T2, Line),
    raised_events(M, T2, Line).

run_one(M, E, T1, T2, Line) :-
    b_setval(etalis_line, Line),
    b_getval(etalis_run, run(Limit, Mode, _)),
    event_goal(Mode, M, E, T1, T2, Goal),
    limited(Limit, Goal, M, E, Line, Hit),
    (   Hit == none
    ->  rule_updates(M)
    ;   throw(etalis_limit(Hit))
    ).

%   limited(+Limit, :Goal, +M, +E, +Line, -Hit): run Goal, the processing
%   of the event E of line Line in engine M, within Limit inferences and
%   the thread's stacks.  Hit is `none`, limit(Line, E, Limit, In) if it
%   took more inferences (see engine_feed/5), or memory(Line, E, Bytes)
%   if the stacks ran out, Bytes being their limit (the flag
%   stack_limit): then the rule updates and raised events it recorded
%   are dropped.  What the event stored before it stays (the goal stores
%   are changed in steps that each leave them whole, see store.pl).

limited(Limit, Goal, M, E, Line, Hit) :-
    catch(limited_(Limit, Goal, M, E, Line, Hit),
          error(resource_error(Resource), _),
          out_of_memory(Resource, M, E, Line, Hit)),
    (   Hit == none
    ->  true
    ;   retractall(M:'$rule_update'(_)),
        retractall(M:'$raised'(_))
    ).

limited_(inf, Goal, _, _, _, none) :- !,
    call(Goal).
limited_(Limit, Goal, M, E, Line, Hit) :-
    call_with_inference_limit(Goal, Limit, Result),
    (   Result == inference_limit_exceeded
    ->  feed_global(M, limit_goal, G),
        (   nb_current(G, Goal0), Goal0 \== none
        ->  nb_setval(G, none),
            In0 = where(Goal0)
        ;   In0 = none
        ),
        feed_global(M, watch, W),
        (   nb_current(W, timed_out(Seconds))
        ->  In = seconds(Seconds, In0)
        ;   In = In0
        ),
        Hit = limit(Line, E, Limit, In)
    ;   Hit = none
    ).

%   out_of_memory(+Resource, +M, +E, +Line, -Hit): the event E of line
%   Line ran out of Resource: the stacks (or the memory outside them).

out_of_memory(Resource, _M, E, Line, memory(Line, E, Bytes)) :-
    memberchk(Resource, [stack, memory, global_stack, local_stack, trail_stack]),
    !,
    garbage_collect,
    current_prolog_flag(stack_limit, Bytes).
out_of_memory(Resource, _, _, _, _) :-
    resource_error(Resource).

%   watched(+M, +Limit, :Goal): run Goal, the processing of a batch of
%   engine M whose events may take Limit inferences each, under a
%   watchdog: a built-in can run for long within one inference (msort/2
%   of a long list, arithmetic on a huge number), so an event still
%   running after time_limit/2 seconds is stopped as one that took more
%   than Limit inferences (limited/6).  Every S seconds the watchdog
%   looks at the input line being processed (etalis_line): the same line
%   at two looks in a row has run for S seconds at least.  The cost is an
%   alarm a batch, none an event.

watched(_, inf, Goal) :- !,
    call(Goal).
watched(M, Limit, Goal) :-
    time_limit(Limit, S),
    feed_global(M, watch, W),
    setup_call_cleanup(
        ( alarm(S, etalis_runtime:watchdog(W, S), Id, [remove(false)]),
          nb_setval(W, watch(Id, none))
        ),
        Goal,
        ( nb_setval(W, done),
          remove_alarm(Id)
        )).

%   time_limit(+Limit, -Seconds): the time an event of Limit inferences
%   may run: a microsecond an inference (ten times what one takes), and
%   a second at least.

time_limit(Limit, Seconds) :-
    Seconds is max(1, Limit / 1_000_000).

%   watchdog(+W, +S): the watchdog's look (see watched/3): throw the
%   inference limit's exception into the event that has been running
%   since the last look, else look again in S seconds.  Outside the
%   processing of an event (its call_with_inference_limit/3) nothing is
%   thrown.

watchdog(W, S) :-
    (   nb_current(W, watch(Id, Seen))
    ->  (   nb_current(etalis_line, Line)
        ->  true
        ;   Line = none
        ),
        (   Line \== none,
            Line == Seen,
            prolog_current_frame(F),
            prolog_frame_attribute(F, parent_goal, system:call_with_inference_limit(_, _, _))
        ->  nb_setval(W, timed_out(S)),
            throw(inference_limit_exceeded)
        ;   nb_setval(W, watch(Id, Line)),
            uninstall_alarm(Id),
            install_alarm(Id, S)
        )
    ;   true
    ).

%   event_goal(+Mode, +M, +E, +T1, +T2, -Goal): Goal processes E over
%   [T1,T2] in M, writing its detections.  Mode (see limiting/2) is
%   `plain` for an engine without provenance or selection strategies,
%   whose input events go straight to their clauses (M's '$run'/3, see
%   engine_create/1), else `general`; a timer's event ('$fire'(E)) takes
%   the general way in either.

event_goal(plain, M, E0, T1, T2, M:'$run'(E, T1, T2)) :-
    E0 \= '$fire'(_),
    !,
    (   E0 = '$provenance'(E, _)
    ->  true
    ;   E = E0
    ).
event_goal(Mode, M, E, T1, T2, etalis_runtime:run_event(Mode, M, E, T1, T2)).

%   run_event(+Mode, +M, +E, +T1, +T2): process E over [T1,T2] in M the
%   general way (see event_goal/6), writing its detections.

run_event(_, M, E0, T1, T2) :-
    advance_position(M),
    (   E0 = '$fire'(E1)                % a timer's event: derived
    ->  How = derived
    ;   How = input,
        E1 = E0
    ),
    (   b_getval(etalis_explain, true)
    ->  (   E1 = '$provenance'(E, Prov)
        ->  true
        ;   E = E1,
            Prov = [det(E, T1, T2)]
        ),
        E =.. List0,
        append(List0, [Prov], List),
        E2 =.. List,
        partitioned(How, M, E2, T2),
        process_explained(How, M, E2, T1, T2)
    ;   E1 = '$provenance'(E, _)
    ->  partitioned(How, M, E, T2),
        process(How, M, E, T1, T2)
    ;   partitioned(How, M, E1, T2),
        process(How, M, E1, T1, T2)
    ).

%   partitioned(+How, +M, +E, +T2): an input event E (as the rules see
%   it) is noted in the partitions of the rules under
%   `strict(partition)` (see etalis_strategies:partition_input/4).

partitioned(input, M, E, T2) :-
    b_getval(etalis_selecting, true),
    !,
    b_getval(etalis_position, P),
    partition_input(M, E, P, T2).
partitioned(_, _, _, _).

%   advance_position(+M): with rules under a selection strategy, count
%   the input event about to be processed (see position_global/2), and
%   drop the matches an event stopped at the inference limit offered.

advance_position(M) :-
    (   b_getval(etalis_selecting, true)
    ->  retractall(M:'$offer'(_, _, _, _, _)),
        position_global(M, G),
        nb_getval(G, P0),
        P is P0 + 1,
        nb_setval(G, P),
        b_setval(etalis_position, P)
    ;   true
    ).

%   limiting(+M, +State): set up for a batch of engine M the inference
%   limit per event, the way events are run (see run_event/5), after
%   explaining/1, and the global variable of its timers (see
%   due_timers/4), or `none` if no rule sets a timer and none is set
%   (so that an event need not look; rule_updates/1 sets it up again
%   after a change of the rules).

limiting(M, State) :-
    arg(3, State, Limit),
    (   b_getval(etalis_explain, false),
        b_getval(etalis_selecting, false)
    ->  Mode = plain
    ;   Mode = general
    ),
    timers_global(M, G),
    (   (   catch(clause(M:'$on'('$timer'(_, _), _, _, _), _), _, fail)
        ;   nb_getval(G, timers(_, H)),
            \+ empty_heap(H)
        )
    ->  Timers = G
    ;   Timers = none
    ),
    b_setval(etalis_run, run(Limit, Mode, Timers)).

%   explaining(+M): set up for a batch whether events carry provenance.

explaining(M) :-
    (   catch(M:'$explain', _, fail)
    ->  b_setval(etalis_explain, true)
    ;   b_setval(etalis_explain, false)
    ),
    (   catch(M:'$selecting', _, fail)
    ->  b_setval(etalis_selecting, true)
    ;   b_setval(etalis_selecting, false)
    ).

%!  engine_prefixes(+Engine, +Prefixes) is det.
%
%   Prefixes (a list of Prefix-Namespace) become those with which the
%   prefixed names in events are expanded: an argument `wt:o1`, or the
%   atom `'wt:o1'`, becomes the IRI atom that `wt:o1` in a rule is.

engine_prefixes(M, Prefixes) :-
    must_be(list(pair), Prefixes),
    retractall(M:'$prefix'(_, _)),
    forall(member(P-NS, Prefixes), assertz(M:'$prefix'(P, NS))).

%   prefixing(+M): set up for a batch whether events' names are expanded.

prefixing(M) :-
    (   M:'$prefix'(_, _)
    ->  b_setval(etalis_prefixes, true)
    ;   b_setval(etalis_prefixes, false)
    ).

%   prefixed_event(+M, +E0, -E): E0 with each argument that is a
%   prefixed name of a known prefix replaced by its IRI (E0 itself, not
%   a copy, when none is).

prefixed_event(M, '$provenance'(E0, Prov), '$provenance'(E, Prov)) :- !,
    prefixed_event(M, E0, E).
prefixed_event(M, E0, E) :-
    (   compound(E0),
        b_getval(etalis_prefixes, true),
        arg(_, E0, A),
        expanded(M, A, _)
    ->  compound_name_arguments(E0, Name, Args0),
        maplist(prefixed_argument(M), Args0, Args),
        compound_name_arguments(E, Name, Args)
    ;   E = E0
    ).

prefixed_argument(M, A0, A) :-
    (   expanded(M, A0, A1)
    ->  A = A1
    ;   A = A0
    ).

expanded(M, Name, IRI) :-
    prefixed_name(Name, Prefix, Local),
    M:'$prefix'(Prefix, NS),
    atom_concat(NS, Local, IRI).

prefixed_name(Prefix:Local, Prefix, Local) :- !,
    atom(Prefix),
    atomic(Local).
prefixed_name(Atom, Prefix, Local) :-
    atom(Atom),
    sub_atom(Atom, Before, 1, After, :),
    !,
    sub_atom(Atom, 0, Before, _, Prefix),
    sub_atom(Atom, _, After, 0, Local).

%   rejection(?Term, +Line, +Order, -Reason): why Term is not accepted.

rejection(Term, _, _, Reason) :-
    var(Term), !,
    Reason = "an event cannot be a variable".
rejection(Term, Line, Order, Reason) :-
    input_event(Term, Line, _, _, T2, Reason0),
    (   nonvar(Reason0)
    ->  Reason = Reason0
    ;   Order = in_order(Last)
    ->  format(string(Reason),
               "time ~w is earlier than the last accepted time ~w (events must arrive in time order)",
               [T2, Last])
    ;   Order = reorder(L, Max, _, _),
        format(string(Reason),
               "time ~w is more than the lateness (~w s) before the latest time ~w",
               [T2, L, Max])
    ).

process(How, M, E, T1, T2) :-
    forall(outcome(How, M, E, T1, T2, Out), write_detection(Out)).

process_explained(How, M, E, T1, T2) :-
    forall(outcome(How, M, E, T1, T2, det(D, S, End)),
           (   D =.. List0,
               append(List, [Prov0], List0),
               D1 =.. List,
               flatten(Prov0, Prov),    % nested by the cumulative context
               write_detection(det(D1, S, End), Prov)
           )).

%   outcome(+How, +M, +E, +T1, +T2, -Out) is nondet: Out is each
%   detection that the occurrence of E over [T1,T2] leads to, E an
%   `input` event or one `derived` by a timer (reported as a rule's
%   head is); with rules under a selection strategy, those of the
%   matches it selects come last.

outcome(How, M, E, T1, T2, Out) :-
    (   occurrence(How, M, E, T1, T2, Out)
    ;   b_getval(etalis_selecting, true),
        selection(M, Out)
    ).

occurrence(input, M, E, T1, T2, Out) :-
    M:'$on'(E, T1, T2, Out).
occurrence(derived, M, E, T1, T2, Out) :-
    M:'$derived'(E, T1, T2, Out).

%!  engine_process(+Engine, +Event, +T1, +T2, -Detections) is det.
%
%   Process one event that is known to be valid and in time order, and
%   collect the reported detections as det(E, T1, T2) terms.

engine_process(M, E, T1, T2, Detections) :-
    explaining(M),
    advance_position(M),
    findall(Out, outcome(input, M, E, T1, T2, Out), Detections).

%   plain_input(@Term, -E, -T) is semidet.
%
%   Term is event(E, T), the common case of a valid input event: a ground
%   event of an unreserved name at a finite time T.  (One clause, so that
%   no choice point is left: the checks of input_event/6 in one step.)

plain_input(event(E, T), E, T) :-
    number(T),
    T =:= T,                                    % not NaN
    abs(T) =< 253_402_300_799,                  % time_horizon/1
    callable(E),
    ground(E),
    functor(E, Name, _),
    event_name(Name).

%!  time_horizon(-Seconds) is det.
%
%   No input time lies further from 0 than Seconds, the last second of
%   the year 9999 (the last that a date can be written for): a time
%   beyond it (1e308, or milliseconds or nanoseconds where seconds were
%   meant) would leave every later event out of time order, so its row
%   is rejected.

time_horizon(253_402_300_799).

%!  row_chars(-Chars) is det.
%
%   A line of input events holds at most Chars characters (as guard.pl
%   bounds a text that a rule makes); a longer line is rejected.  Python
%   bounds each text of a row it writes the same (prolog_text.py).

row_chars(10_000_000).

%!  event_name(+Name) is semidet.
%
%   An input event may be named Name: it does not start with `$`
%   (reserved) and is not that of a Prolog clause or directive.

event_name(Name) :-
    \+ sub_atom(Name, 0, 1, _, $),
    \+ clause_functor(Name).

%   input_event(+Term, +Line, -E, -T1, -T2, -Reason) is det.
%
%   Reason is unbound for a valid event.  Term is not a variable.

input_event(Term, _, E, T, T, _) :-
    plain_input(Term, E, T),
    !.
input_event('$syntax_error'(What, At), _, _, _, _, Reason) :- !,
    event_syntax_message(What, At, Reason).
input_event(event(E0, Time, Prov), Line, '$provenance'(E, Prov), T1, T2, Reason) :- !,
    input_event(event(E0, Time), Line, E, T1, T2, Reason),
    (   var(Reason),
        \+ provenance_list(Prov)
    ->  copy_term(Prov, Shown),
        numbervars(Shown, 0, _, [singletons(true)]),
        format(string(Reason), "provenance ~W is not a list of ground det(Event, Start, End)",
               [Shown, [quoted(true), numbervars(true)]])
    ;   true
    ).
input_event(event(E, Time), _, E, T1, T2, Reason) :- !,
    (   event_time(Time, T1, T2, Reason)
    ->  true
    ;   true
    ),
    (   var(Reason)
    ->  event_term(E, Reason)
    ;   true
    ).
input_event(end_of_file, _, _, _, _, Reason) :- !,
    Reason = "end_of_file marks the end of a Prolog file: it is not an event here".
input_event((E, Time), _, _, _, _, Reason) :- !,
    format(string(Reason), "~q is no event but two terms and a comma: write event(~q, ~q).",
           [(E, Time), E, Time]).
input_event(E, Line, E, Line, Line, Reason) :-
    event_term(E, Reason).

%   syntax_error_term(+Text, +What, +Context, -Term) is det.
%
%   Term stands for the reader's syntax_error(What) in Context, reading
%   Text: '$syntax_error'(What, column(C)), C the column (from 1, a tab
%   one column) of the token where the reader stopped, or
%   '$syntax_error'(What, none).  Context is stream(S, Line, LinePos,
%   Char): LinePos is that token's column as the stream counts it (a
%   tab to the next multiple of 8), and Char lies on its line.

syntax_error_term(Text, What, Context, '$syntax_error'(What, At)) :-
    (   Context = stream(_, _, LinePos, Char),
        integer(LinePos),
        integer(Char)
    ->  line_start(Text, Char, Start),
        string_length(Text, Length),
        Max is Length - Start,
        sub_string(Text, Start, Max, _, Line),
        string_codes(Line, Codes),
        visual_column(Codes, 0, LinePos, 1, Column),
        At = column(Column)
    ;   At = none
    ).

line_start(_, 0, 0) :- !.
line_start(Text, I, Start) :-
    Before is I - 1,
    (   sub_string(Text, Before, 1, _, "\n")
    ->  Start = I
    ;   line_start(Text, Before, Start)
    ).

%   visual_column(+Codes, +V, +LinePos, +Column0, -Column): Column is the
%   column (a character one) of the code of Codes, a line from its
%   start, where the stream's line position (V so far) reaches LinePos.

visual_column([C|Cs], V, LinePos, Column0, Column) :-
    V < LinePos,
    C =\= 0'\n,
    !,
    (   C =:= 0'\t
    ->  V1 is (V // 8 + 1) * 8
    ;   V1 is V + 1
    ),
    Column1 is Column0 + 1,
    visual_column(Cs, V1, LinePos, Column1, Column).
visual_column(_, _, _, Column, Column).

%   event_syntax_message(+What, +At, -Reason) is det.
%
%   Reason says why the reader refused an input line with
%   syntax_error(What) at At (column(C) or none): its words, the column
%   where the reader stopped (not for a quote or comment left open,
%   which the reader reports at the end of the text) and, for an error
%   of form, the forms of an event line.

event_syntax_message(What, At, Reason) :-
    syntax_message(What, Message),
    (   At = column(Column),
        \+ unclosed(What)
    ->  (   token_error(What)
        ->  format(string(Reason), "~w at column ~d", [Message, Column])
        ;   event_line_forms(Forms),
            format(string(Reason), "~w at column ~d (~w)", [Message, Column, Forms])
        )
    ;   Reason = Message
    ).

unclosed(end_of_file_in_quoted(_)).
unclosed(end_of_file_in_block_comment).

token_error(float_overflow).
token_error(undefined_char_escape(_)).
token_error(illegal_number).

event_line_forms("an event line is a(1). or event(a(1), 5). or event(a(1), [5, 7]). with times in \c
                  seconds; dates can be given in .jsonl or .csv files").

event_time(Time, T1, T2, Reason) :-
    (   finite_number(Time)
    ->  T1 = Time, T2 = Time,
        horizon(Time, Reason)
    ;   Time = [T1, T2], finite_number(T1), finite_number(T2)
    ->  (   T1 =< T2
        ->  horizon(T1, Reason),
            horizon(T2, Reason)
        ;   format(string(Reason), "start ~w is after end ~w", [T1, T2])
        )
    ;   text(Time)
    ->  event_line_forms(Forms),
        format(string(Reason), "time ~q is not a number or [Start, End] (~w)", [Time, Forms])
    ;   format(string(Reason), "time ~q is not a number or [Start, End]", [Time])
    ).

text(T) :- atom(T).
text(T) :- string(T).

%   horizon(+T, -Reason): Reason is unbound, or why the time T lies
%   beyond time_horizon/1.

horizon(T, Reason) :-
    time_horizon(H),
    (   abs(T) =< H
    ->  true
    ;   var(Reason)
    ->  format(string(Reason),
               "time ~w is beyond the horizon of ~D seconds (the end of the year 9999): times are seconds, \c
                not milliseconds or nanoseconds", [T, H])
    ;   true
    ).

%   provenance_list(@Prov): Prov is a list of ground det(E, T1, T2), the
%   input occurrences an event given as event(E, Time, Prov) was built
%   from (how etalis replay passes derived events on with --explain).

provenance_list(Prov) :-
    is_list(Prov),
    forall(member(D, Prov),
           ( ground(D), D = det(E, T1, T2), callable(E), number(T1), number(T2) )).


event_term(E, Reason) :-
    (   var(E)
    ->  Reason = "an event cannot be a variable"
    ;   \+ callable(E)
    ->  format(string(Reason), "~q is not an event (an event is an atom or a compound term)", [E])
    ;   functor(E, Name, _), clause_functor(Name)
    ->  format(string(Reason), "~q is a Prolog clause or directive, not an event", [E])
    ;   \+ ground(E)
    ->  copy_term(E, Shown),
        numbervars(Shown, 0, _, [singletons(true)]),
        format(string(Reason), "event ~W has unbound variables",
               [Shown, [quoted(true), numbervars(true)]])
    ;   functor(E, Name, _), sub_atom(Name, 0, _, _, $)
    ->  format(string(Reason), "event names starting with $ are reserved (~q)", [Name])
    ;   true
    ).

%   clause_functor(?Name): terms named Name are clauses, directives or
%   queries of a Prolog file, never events.

clause_functor(:-).
clause_functor(?-).
clause_functor(-->).

%!  user_goal(:Goal) is nondet.
%
%   Run Goal, a `where` condition or `do` action of a rule, with its
%   output on user_error: the engine writes its detections to the
%   current output, where what a rule prints must not go (nor, on the
%   command line, into the JSON lines on standard output).

:- meta_predicate user_goal(0).

user_goal(Goal) :-
    current_output(Detections),
    output_to(user_error, Detections),
    catch(Goal, E, ( set_output(Detections), throw(E) )),
    output_to(Detections, user_error).

%   output_to(+Stream, +Back): the current output is Stream, and Back
%   again on backtracking.

output_to(Stream, _) :-
    set_output(Stream).
output_to(_, Back) :-
    set_output(Back),
    fail.

%!  trigger_asked(+Engine, +Event) is semidet.
%
%   The print_trigger/1 rule of Engine's file succeeds for the occurrence
%   Event, which is then reported (original ETALIS asks it of each
%   occurrence); an error there is a warning, and Event is not reported.

trigger_asked(M, E) :-
    catch(once(M:print_trigger(E)), Error, etalis_runtime:goal_error(M, Error, print_trigger(E))).

%!  first_derivation(+Engine, +Event, +T1, +T2) is semidet.
%
%   Event over [T1,T2] has not been derived before in Engine (and is
%   now): for the events of a cycle whose steps complete at once, a
%   derived occurrence identical to one already derived is no new fact
%   (see etalis_recursion:check_recursion/2).  An Event with variables
%   has been derived if one as general or more (its variables standing
%   for all values) has.

first_derivation(M, E, T1, T2) :-
    \+ seen(M, E, T1, T2),
    assertz(M:'$seen'(E, T1, T2)).

seen(M, E, T1, T2) :-
    (   ground(E)
    ->  M:'$seen'(E, S, F)
    ;   functor(E, N, A),
        functor(E0, N, A),
        M:'$seen'(E0, S, F),
        subsumes_term(E0, E)
    ),
    S =:= T1,
    F =:= T2,
    !.

%!  goal_error(+Engine, +Error, +Goal) is failure.
%
%   A `where` condition Goal (or an aggregate(Fun, Value)) of Engine
%   raised Error: record a warning for the current input line and fail,
%   so that the occurrence is not detected.  The inference limit of the
%   event (see run/5) is not Goal's error: it passes on, and Goal is
%   kept to name in the report.

goal_error(M, inference_limit_exceeded, Goal) :- !,
    feed_global(M, limit_goal, G),
    nb_setval(G, Goal),
    throw(inference_limit_exceeded).
goal_error(M, Error, Goal) :-
    message_text(Error, Msg),
    (   Goal = aggregate(Fun, X)
    ->  F =.. [Fun, X],
        bounded_text(F, Text),
        format(string(Warning), "aggregate ~s raised: ~w", [Text, Msg])
    ;   bounded_text(Goal, Text),
        format(string(Warning), "where condition ~s raised: ~w", [Text, Msg])
    ),
    feed_warning(M, Warning),
    fail.
