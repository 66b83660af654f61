:- module(etalis_runtime,
          [ engine_create/1,            % -Engine
            engine_destroy/1,           % +Engine
            engine_start/4,             % +Engine, +StoreIndexes, +Lateness, +Limit
            engine_reset/1,             % +Engine
            engine_buffered/2,          % +Engine, -Count
            engine_due/2,               % +Engine, -Due
            engine_store/3,             % +Engine, +Index, -Store
            store_global/3,             % +Engine, +Index, -Name
            position_global/2,          % +Engine, -Name
            timers_global/2,            % +Engine, -Name
            engine_restores/3,          % +Engine, +OldIndexes, +NewIndexes
            engine_feed/5,              % +Engine, +Batch, +Options, -Summary, -Detections
            engine_prefixes/2,          % +Engine, +Prefixes
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
:- use_module(strategies, [selection/2, skip_global/2, partition_global/2, partition_input/4]).
:- use_module(library(assoc), [empty_assoc/1]).
:- use_module(syntax, [syntax_message/2, finite_number/1]).
:- use_module(driver, [datime_time/2]).
:- use_module(library(option)).
:- use_module(protocol, [write_detection/2, write_detection/3, detection_format/1, message_text/2, bounded_text/2]).
:- use_module(etalis_library, [etalis_flags/1]).

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
    assertz(M:('$run'(E, T1, T2, Format) :-     % an input event, the plain way (event_goal/6)
                  '$on'(E, T1, T2, O),
                  etalis_protocol:write_detection(Format, O),
                  fail)),
    assertz(M:'$run'(_, _, _, _)),
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

%   raised_events(+S, +T, +Line): feed the events that the input event of
%   line Line at time T raised with event/1, after it and in the order
%   raised, each at time T and within the inference limit of the batch
%   settings S (see batch_settings/4); what they raise follows them.  At
%   most max_raised/1 events per input event: a rule that raises the
%   event it reacts to would never end; the rest are dropped with a
%   warning.

raised_events(S, T, Line) :-
    arg(1, S, M),
    (   M:'$raised'(_)
    ->  raise_queue([], S, T, Line, 0)
    ;   true
    ).

raise_queue(Queue0, S, T, Line, N0) :-
    arg(1, S, M),
    findall(E, retract(M:'$raised'(E)), New),
    append(Queue0, New, Queue),
    (   Queue = [E|Queue1]
    ->  max_raised(Max),
        (   N0 >= Max
        ->  format(string(W), "event/1 raised more than ~D events for one input event (does a rule raise an event that leads back to itself?): the rest are dropped", [Max]),
            feed_warning(M, W)
        ;   N is N0 + 1,
            count_raised(M),
            run_one(S, E, T, T, Line),
            raise_queue(Queue1, S, T, Line, N)
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
%   etalis_syntax:rule_head/4) detected its pattern over [T1,T2]: Event
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

%   due_timers(+S, +T, +Line, -Last): derive, in the order of their due
%   times (of setting, for the same due time), the timers due at T or
%   before of the engine of the batch settings S, and what they raise,
%   as events of line Line.  Last is the due time of the last one, or
%   `none`.  At the end of a stream (T is inf) at most
%   max_flushed_timers/1 fire after those pending: timers that set
%   timers could go on for ever.

due_timers(S, T, Line, Last) :-
    arg(6, S, G),
    (   G == none
    ->  Last = none
    ;   due_timers(S, G, T, Line, Last)
    ).

due_timers(S, G, T, Line, Last) :-
    nb_getval(G, timers(_, H)),
    (   T == inf
    ->  heap_size(H, N),
        max_flushed_timers(Max),
        Budget is N + Max
    ;   Budget = inf
    ),
    due_timers(S, G, T, Line, Budget, none, Last).

due_timers(S, G, T, Line, Budget, Last0, Last) :-
    nb_getval(G, timers(Seq, H0)),
    (   min_of_heap(H0, Key-_, _),
        Key =< T
    ->  arg(1, S, M),
        (   Budget == 0
        ->  heap_size(H0, N),
            max_flushed_timers(Max),
            format(string(W), "timers set timers for ever? after ~D more fired, ~D still pending are not fired", [Max, N]),
            feed_warning(M, W),
            Last = Last0
        ;   get_from_heap(H0, _, ev(E, T1, Due), H),
            nb_setval(G, timers(Seq, H)),
            count_raised(M),
            run_one(S, '$fire'(E), T1, Due, Line),
            raised_events(S, Due, Line),
            (   Budget == inf -> Budget1 = inf ; Budget1 is Budget - 1 ),
            due_timers(S, G, T, Line, Budget1, Due, Last)
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

%   rule_updates(+S): make the changes of the rules that the last input
%   event's rules recorded, in the engine of the batch settings S, which
%   then follow the new rules (see settings_refresh/1).

rule_updates(S) :-
    arg(1, S, M),
    (   M:'$rule_update'(_)
    ->  findall(U, retract(M:'$rule_update'(U)), Updates0),
        (   selectchk('$dropped', Updates0, Updates)
        ->  max_rule_updates(Max),
            format(string(W), "the rules asked for more than ~D changes of the rules (ins_event_rule/1, del_event_rule/1, ins_static_rule/1) for one input event: the rest are dropped", [Max]),
            feed_warning(M, W)
        ;   Updates = Updates0
        ),
        apply_rule_updates(M, Updates),
        settings_refresh(S)             % the new rules may select (a P+ carries positions)
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
%   the feed (or flush) of engine M gathers, from the rules' code that
%   the feed does not call itself: its `warnings` (most recent first),
%   how many events were `raised` and the `limit_goal`, the `where`
%   condition that ran out of inferences (see goal_error/3).  (The
%   watchdog's look, `watch`, is kept apart, see watched/3.)
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
    findall(Kind, feed_initial(Kind, _), Kinds),
    findall(F, ( member(Kind, [watch|Kinds]), feed_global(M, Kind, F) ), Feed),
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

%!  engine_feed(+Engine, +Batch, +Options, -Summary, -Detections) is det.
%
%   Feed Engine one batch.  Detections is a string with a line for each
%   reported detection, in the format that the option format(Format)
%   gives (see etalis_protocol:detection_format/1; `object` if not
%   given).  Batch is one of:
%
%     - lines(Text): event lines, one Prolog term a line (see the module
%       header), the first of which is line First of its source, for the
%       option first(First) (1 if not given);
%     - terms(Terms, Checked): a list of terms, element I the term of
%       line First+I-1 (as a line of lines(Text) would hold it, without
%       its full stop), or `[]` for a line that holds nothing (a row
%       rejected before it came).  Checked is `checked` if every other
%       element is known to be a valid input event event(E, T) or
%       event(E, [T1, T2]) (a ground E of a name that is not reserved,
%       finite numbers T1 =< T2, as etalis_columns:column_terms/3 finds
%       it), which is then not checked again an event at a time; else
%       `plain`;
%     - flush(Timers): at the end of a stream, process the events that
%       wait in the reorder buffer of an engine with a lateness, then (if
%       Timers is `true`) fire the timers still pending (see
%       timer_set/5), in time order; with Timers `false` the timers stay
%       pending: the end of a finite input is not the end of time, and a
%       later run resumed from a snapshot fires them when due;
%     - advance(Time): Engine's time moves on to Time with no event: no
%       event earlier than Time may come any more, so the events of the
%       reorder buffer up to Time are processed and the timers due at Time
%       or earlier fire, in time order.  A Time before the last event's
%       changes nothing.
%
%   For events, Summary is summary(Accepted, Raised, Rejected, Warnings,
%   Stopped): Raised the number of events that rules raised with event/1
%   (see raise_event/2) or timers fired, Rejected a list of
%   rejected(Line, Reason) and Warnings of warning(Line, Message).  Each
%   event may take at most the engine's inference limit (see
%   engine_start/4).  Stopped is `none`, or the limit an event reached
%   (see limited/6): the feed stops there, with the detections made
%   before that event (its own are dropped; the goals it stored before it
%   was stopped stay).  For flush and advance, Summary is
%   released(Released, Fired, Warnings): Released events of the reorder
%   buffer were processed and Fired timers fired (with what they raised).
%
%   @error etalis_limit(Hit) if an event of flush or advance reaches a
%   limit (see limited/6).

engine_feed(M, Batch, Options, Summary, Detections) :-
    must_be(atom, M),
    must_be(list, Options),
    option(first(First), Options, 1),
    must_be(integer, First),
    option(format(Format), Options, object),
    detection_format(Format),
    engine_state(M, State),
    batch_settings(M, State, Format, S),
    feed_start(M),
    feed_batch(Batch, First, S, State, Summary, Detections).

feed_batch(lines(Text), First, S, State, Summary, Detections) :- !,
    must_be(string, Text),
    Offset is First - 1,
    text_items(Text, Offset, Items),
    fed(items(Items), S, State, Summary, Detections).
feed_batch(terms(Terms, Checked), First, S, State, Summary, Detections) :- !,
    must_be(list, Terms),
    must_be(oneof([checked, plain]), Checked),
    fed(terms(Terms, First, Checked), S, State, Summary, Detections).
feed_batch(flush(Timers), _, S, State, Summary, Detections) :- !,
    must_be(boolean, Timers),
    ordered(flush_order(Timers), S, State, Summary, Detections).
feed_batch(advance(Time), _, S, State, Summary, Detections) :- !,
    must_be(number, Time),
    (   finite_number(Time)
    ->  true
    ;   domain_error(finite_number, Time)
    ),
    ordered(advance_order(Time), S, State, Summary, Detections).
feed_batch(Batch, _, _, _, _, _) :-
    domain_error(etalis_batch, Batch).

%   batch_settings(+M, +State, +Format, -S): the settings of a batch of
%   engine M, whose state is State, with its detections written as
%   Format: batch(M, Limit, Mode, Explain, Selecting, Timers, Prefixes,
%   Format).  Limit is the inference limit of an event (see
%   engine_start/4); Mode is the way events are run (see event_goal/6):
%   `plain` for an engine without provenance (Explain `false`) and
%   without selection strategies (Selecting `false`), else `general`;
%   Timers is the global variable of the engine's timers (see
%   due_timers/4), or `none` if no rule sets a timer and none is set (so
%   that an event need not look); Prefixes is `true` if events' names
%   are expanded (see prefixed_event/3).  A change of the rules while the
%   batch runs makes the settings anew (settings_refresh/1).

batch_settings(M, State, Format, S) :-
    arg(3, State, Limit),
    (   M:'$prefix'(_, _)
    ->  Prefixes = true
    ;   Prefixes = false
    ),
    S = batch(M, Limit, Mode, Explain, Selecting, Timers, Prefixes, Format),
    rule_settings(M, Mode, Explain, Selecting, Timers).

%   settings_refresh(+S): after a change of the rules, the batch settings
%   S follow them (the same term, changed in place: the events of the
%   batch after the change run under the new rules).

settings_refresh(S) :-
    arg(1, S, M),
    rule_settings(M, Mode, Explain, Selecting, Timers),
    nb_setarg(3, S, Mode),
    nb_setarg(4, S, Explain),
    nb_setarg(5, S, Selecting),
    nb_setarg(6, S, Timers).

rule_settings(M, Mode, Explain, Selecting, Timers) :-
    (   catch(M:'$explain', _, fail)
    ->  Explain = true
    ;   Explain = false
    ),
    (   catch(M:'$selecting', _, fail)
    ->  Selecting = true
    ;   Selecting = false
    ),
    (   Explain == false,
        Selecting == false
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
    ).

%   fed(+Source, +S, +State, -Summary, -Detections): feed the events of
%   Source (see next_item/4) under the batch settings S.

fed(Source, S, State, summary(Accepted, Raised, Rejected, Warnings, Stopped), Detections) :-
    arg(2, State, Order0),
    S = batch(M, Limit, _, _, _, _, _, _),
    watched(M, Limit, output_text(feed_loop(Source, S, Order0, Order, 0, Accepted, Rejected, Stopped0),
                                  Detections0)),
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

%   ordered(:Step, +S, +State, -Summary, -Detections): move the engine
%   of the batch settings S on as Step says (flush_order/5 or
%   advance_order/5), see engine_feed/5.

:- meta_predicate ordered(4, +, +, -, -).

ordered(Step, S, State, released(Released, Fired, Warnings), Detections) :-
    arg(2, State, Order0),
    S = batch(M, Limit, _, _, _, _, _, _),
    watched(M, Limit, output_text(call(Step, S, Order0, Order, Released), Detections)),
    nb_setarg(2, State, Order),
    feed_value(M, raised, Fired),
    engine_warnings(M, Warnings).

%   flush_order(+Timers, +S, +Order0, -Order, -Released): process the
%   Released events of the reorder buffer, then (if Timers is true) the
%   timers still pending, in time order; no later event may come before
%   the last of them.

flush_order(Timers, S, Order0, Order, Released) :-
    (   Order0 = reorder(L, Max0, Seq, H0)
    ->  heap_size(H0, Released),
        release(S, inf, H0, H),
        flushed_timers(Timers, S, Last),
        later(Max0, Last, Max),
        Order = reorder(L, Max, Seq, H)
    ;   Order0 = in_order(Last0),
        Released = 0,
        flushed_timers(Timers, S, Last),
        later(Last0, Last, Last1),
        Order = in_order(Last1)
    ).

flushed_timers(true, S, Last) :-
    due_timers(S, inf, 0, Last).
flushed_timers(false, _, none).

%   advance_order(+Time, +S, +Order0, -Order, -Released): the events of
%   the reorder buffer up to Time, then the timers due by Time; later
%   events may not be earlier than Time.

advance_order(Time, S, Order0, Order, Released) :-
    (   Order0 = reorder(L, Max0, Seq, H0)
    ->  release(S, Time, H0, H),
        heap_size(H0, N0),
        heap_size(H, N),
        Released is N0 - N,
        due_timers(S, Time, 0, _),
        Mark is Time + L,
        later(Max0, Mark, Max),
        Order = reorder(L, Max, Seq, H)
    ;   Order0 = in_order(Last0),
        Released = 0,
        due_timers(S, Time, 0, _),
        later(Last0, Time, Last),
        Order = in_order(Last)
    ).

later(T, none, T) :- !.
later(none, T, T) :- !.
later(T0, T1, T) :- T is max(T0, T1).

%   feed_loop(+Source, +S, +Order0, -Order, +A0, -A, -Rejected, -Stopped)
%
%   Process the items of Source (see next_item/4) under the batch
%   settings S, the engine's order Order0 before them and Order after;
%   A - A0 events were accepted, Rejected are the rejected(Line, Reason)
%   of the others.  The quick way (quick_loop/14) takes a list of terms
%   while the settings and the order allow it, the general way
%   (feed_term/5) one item at a time otherwise.  Stopped is `none`, or
%   stopped(Hit, Kept) for an event that reached a limit (Hit, see
%   limited/6), which ends the loop with the state before it, Kept the
%   characters of the detections written before it.

:- set_prolog_flag(optimise, true).           % the loop's arithmetic inline
feed_loop(Source0, S, Order0, Order, A0, A, Rejected, Stopped) :-
    (   Source0 = terms(Terms0, Line0, Checked),
        Order0 = in_order(Last0),
        S = batch(M, Limit, plain, _, _, none, false, Format)
    ->  quick_loop(Terms0, Line0, Checked, M, Limit, Format, S, Last0, Terms, Line1, Last, A0, A1, Stop),
        Order1 = in_order(Last),
        Source1 = terms(Terms, Line1, Checked)
    ;   Source1 = Source0,
        Order1 = Order0,
        A1 = A0,
        Stop = none
    ),
    (   Stop \== none
    ->  Order = Order1, A = A1, Rejected = [], Stopped = Stop
    ;   next_item(Source1, Line, Item, Source)
    ->  (   Item = term(Term)
        ->  feed_term(Term, Line, S, Order1, Outcome)
        ;   Outcome = Item
        ),
        (   Outcome = admitted(Order2)
        ->  A2 is A1 + 1,
            feed_loop(Source, S, Order2, Order, A2, A, Rejected, Stopped)
        ;   Outcome = rejected(Reason)
        ->  Rejected = [rejected(Line, Reason)|Rest],
            feed_loop(Source, S, Order1, Order, A1, A, Rest, Stopped)
        ;   Outcome == nothing
        ->  feed_loop(Source, S, Order1, Order, A1, A, Rejected, Stopped)
        ;   Order = Order1, A = A1, Rejected = [], Stopped = Outcome
        )
    ;   Order = Order1, A = A1, Rejected = [], Stopped = none
    ).

%   next_item(+Source, -Line, -Item, -Rest) is semidet: Item is the first
%   item of Source, of line Line; Rest the source after it.  Source is
%   terms(Terms, Line, Checked), a list of terms from line Line on (`[]`
%   for a line with nothing), or items(Items), a list of Line-Item read
%   from text (see text_items/3).  Item is term(Term), rejected(Reason)
%   or `nothing`.

next_item(terms([Term|Terms], Line, Checked), Line, Item, terms(Terms, Next, Checked)) :-
    Next is Line + 1,
    (   Term == []
    ->  Item = nothing
    ;   Item = term(Term)
    ).
next_item(items([Line-Item|Items]), Line, Item, items(Items)).

%   feed_term(+Term, +Line, +S, +Order0, -Outcome): process Term, of
%   line Line, under the batch settings S.  Outcome is admitted(Order)
%   (an event, processed), stopped(Hit, Kept) (an event that reached a
%   limit; Kept is the output written before it, see feed_loop/8) or
%   rejected(Reason).

feed_term(Term, Line, S, Order0, Outcome) :-
    (   (   plain_input(Term, E0, T1)
        ->  T2 = T1
        ;   nonvar(Term),
            input_event(Term, Line, E0, T1, T2, Reason),
            var(Reason)
        ),
        prefixed_event(S, E0, E),
        character_count(current_output, Kept),
        catch(admit(Order0, S, ev(E, T1, T2, Line), Order1),
              error(etalis_limit(Hit), _),
              true)
    ->  (   var(Hit)
        ->  Outcome = admitted(Order1)
        ;   Outcome = stopped(Hit, Kept)
        )
    ;   rejection(Term, Line, Order0, Reason),
        Outcome = rejected(Reason)
    ).

%   quick_loop(+Terms, +Line, +Checked, +M, +Limit, +Format, +S, +Last0,
%              -Rest, -RestLine, -Last, +A0, -A, -Stop)
%
%   Process Terms, the first of which is the event of line Line, as
%   run/5 does for batch settings S that feed_loop/8 found to allow it
%   (events the plain way, see event_goal/6, no timers, no prefixes),
%   without the steps that do nothing there: the events in time order
%   from the last accepted time Last0 on.  It ends at the first term
%   that is not a valid event in time order (Rest the terms from it on,
%   RestLine its line; the general way takes it), after an event that
%   changes the rules or raises events (the settings may have changed),
%   or at an event that reaches a limit (Stop is then stopped(Hit, Kept),
%   else `none`).  Last is the time of the last event processed.

quick_loop([], Line, _, _, _, _, _, Last, [], Line, Last, A, A, none).
quick_loop([Term|Terms], Line, Checked, M, Limit, Format, S, Last0, Rest, RestLine, Last, A0, A, Stop) :-
    Next is Line + 1,
    (   quick_event(Checked, Term, E, T1, T2),
        T2 >= Last0
    ->  b_setval(etalis_line, Line),
        character_count(current_output, Kept),
        limited(Limit, M:'$run'(E, T1, T2, Format), M, E, Line, Hit),
        A1 is A0 + 1,
        (   Hit \== none
        ->  Rest = [], RestLine = Line, Last = Last0, A = A0, Stop = stopped(Hit, Kept)
        ;   \+ M:'$rule_update'(_),
            \+ M:'$raised'(_)
        ->  quick_loop(Terms, Next, Checked, M, Limit, Format, S, T2, Rest, RestLine, Last, A1, A, Stop)
        ;   catch(( rule_updates(S),
                    raised_events(S, T2, Line)
                  ), error(etalis_limit(Raised), _), true),
            (   var(Raised)
            ->  Rest = Terms, RestLine = Next, Last = T2, A = A1, Stop = none
            ;   Rest = [], RestLine = Line, Last = Last0, A = A0, Stop = stopped(Raised, Kept)
            )
        )
    ;   Term == []
    ->  quick_loop(Terms, Next, Checked, M, Limit, Format, S, Last0, Rest, RestLine, Last, A0, A, Stop)
    ;   Rest = [Term|Terms], RestLine = Line, Last = Last0, A = A0, Stop = none
    ).

%   quick_event(+Checked, +Term, -E, -T1, -T2) is semidet: Term is a valid
%   input event E over [T1,T2] (as plain_input/3 finds it, or known to
%   be one if Checked is `checked`, see engine_feed/5).

quick_event(plain, Term, E, T, T) :-
    plain_input(Term, E, T).
quick_event(checked, event(E, Time), E, T1, T2) :-
    (   number(Time)
    ->  T1 = Time, T2 = Time
    ;   Time = [T1, T2]
    ),
    T1 >= -253_402_300_799,                     % time_horizon/1
    T2 =< 253_402_300_799.

:- set_prolog_flag(optimise, false).

%   text_items(+Text, +Offset, -Items): the items of the event lines of
%   Text, whose first line is line Offset+1 of its source: a list of
%   Line-Item, Item term(Term) or rejected(Reason) (see next_item/4).
%   A term (or a syntax error) that the reader took from more than one
%   line, such as an unterminated quote, would swallow the lines after
%   it: from where it starts, the rest of Text is read line by line, so
%   that only its line is rejected.  Testing that a term lies on one line
%   costs little as long as each term's line follows the previous one's.

text_items(Text, Offset, Items) :-
    setup_call_cleanup(
        open_string(Text, In),
        read_items(In, Text, Offset, 0, Items, []),
        close(In)).

read_items(In, Text, Offset, C0, Items, Tail) :-
    catch(( read_term(In, Term, []),
            Item0 = term(Term)
          ),
          error(syntax_error(What), Context),
          ( syntax_error_reason(Text, What, Context, Reason),
            Item0 = rejected(Reason)
          )),
    character_count(In, C1),
    line_position(In, P1),
    (   Item0 == term(end_of_file),
        \+ full_stop_read(Text, C0, C1)
    ->  Items = Tail
    ;   C1 - P1 > C0 + 1,
        LineStart is C1 - P1,
        starts_before(Text, C0, LineStart)
    ->  term_start(Text, C0, Start),
        sub_string(Text, Start, _, 0, After),
        split_string(After, "\n", "", Lines),
        start_line(Text, Start, In, Offset, First),
        line_items(Lines, First, Items, Tail)
    ;   line_count(In, L),
        Line is L + Offset,
        (   C1 - C0 > 10_000_000                % row_chars/1
        ->  row_chars(Max),
            Chars is C1 - C0,
            format(string(Reason), "the line holds ~D characters, more than the ~D a row may hold",
                   [Chars, Max]),
            Item = rejected(Reason)
        ;   Item = Item0
        ),
        Items = [Line-Item|Items1],
        read_items(In, Text, Offset, C1, Items1, Tail)
    ).

%   line_items(+Lines, +Line, -Items, ?Tail): the items of Lines, the
%   first of which is line Line, each read on its own.

line_items([], _, Tail, Tail).
line_items([Text|Lines], Line, Items, Tail) :-
    Offset is Line - 1,
    setup_call_cleanup(
        open_string(Text, In),
        read_items(In, Text, Offset, 0, Items, Items1),
        close(In)),
    Next is Line + 1,
    line_items(Lines, Next, Items1, Tail).

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

%   admit(+Order0, +S, +Event, -Order) is semidet.
%
%   Process Event now (in_order(LastTime)), or hold it in the reorder
%   buffer of an engine with a lateness (reorder(Lateness, MaxTime, Seq,
%   Heap)) and process the buffered events that can no longer be
%   preceded by a later arrival, oldest first.  Fails for an event that
%   comes too late.

admit(in_order(Last), S, ev(E, T1, T2, Line), in_order(T2)) :-
    T2 >= Last,
    run(S, E, T1, T2, Line).
admit(reorder(L, Max0, Seq0, H0), S, Ev, reorder(L, Max, Seq, H)) :-
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
    release(S, Mark, H1, H).

release(S, Mark, H0, H) :-
    (   min_of_heap(H0, Key-_, _),
        Key =< Mark
    ->  get_from_heap(H0, _, ev(E, T1, T2, Line), H1),
        run(S, E, T1, T2, Line),
        release(S, Mark, H1, H)
    ;   H = H0
    ).

%   run(+S, +E, +T1, +T2, +Line): process one event under the batch
%   settings S, within the inference limit, or throw
%   error(etalis_limit(Hit), _) (see limited/6).

run(S, E, T1, T2, Line) :-
    due_timers(S, T2, Line, _),
    run_one(S, E, T1, T2, Line),
    raised_events(S, T2, Line).

run_one(S, E, T1, T2, Line) :-
    b_setval(etalis_line, Line),
    S = batch(M, Limit, Mode, _, _, _, _, _),
    event_goal(Mode, S, E, T1, T2, Goal),
    limited(Limit, Goal, M, E, Line, Hit),
    (   Hit == none
    ->  rule_updates(S)
    ;   throw(error(etalis_limit(Hit), _))
    ).

%   limited(+Limit, :Goal, +M, +E, +Line, -Hit): run Goal, the processing
%   of the event E of line Line in engine M, within Limit inferences, the
%   time they allow (see watched/3) and the thread's stacks.  Hit is
%   `none`, or the limit the event reached, one term per kind:
%
%     - limit(Line, E, Limit, In): it took more than Limit
%       inferences;
%     - time(Line, E, Seconds, Limit, In): it ran for more than Seconds,
%       the time that Limit inferences allow;
%     - memory(Line, E, Bytes): it ran out of the stacks, whose limit
%       (the flag stack_limit) is Bytes.
%
%   In is where(Goal) if the limit was reached in the `where` condition
%   Goal, else `none`.  With a Hit, the rule updates and raised events
%   it recorded are dropped.  What the event stored before it stays (the
%   goal stores are changed in steps that each leave them whole, see
%   store.pl).

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
            In = where(Goal0)
        ;   In = none
        ),
        feed_global(M, watch, W),
        (   nb_current(W, timed_out(Seconds))
        ->  Hit = time(Line, E, Seconds, Limit, In)
        ;   Hit = limit(Line, E, Limit, In)
        )
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

%   event_goal(+Mode, +S, +E, +T1, +T2, -Goal): Goal processes E over
%   [T1,T2] under the batch settings S, writing its detections.  Mode
%   (see batch_settings/4) is `plain` for an engine without provenance
%   or selection strategies, whose input events go straight to their
%   clauses (the engine's '$run'/4, see engine_create/1), else
%   `general`; a timer's event ('$fire'(E)) takes the general way in
%   either.

event_goal(plain, S, E0, T1, T2, M:'$run'(E, T1, T2, Format)) :-
    E0 \= '$fire'(_),
    !,
    S = batch(M, _, _, _, _, _, _, Format),
    (   E0 = '$provenance'(E, _)
    ->  true
    ;   E = E0
    ).
event_goal(_, S, E, T1, T2, etalis_runtime:run_event(S, E, T1, T2)).

%   run_event(+S, +E, +T1, +T2): process E over [T1,T2] under the batch
%   settings S the general way (see event_goal/6), writing its
%   detections.

run_event(S, E0, T1, T2) :-
    S = batch(M, _, _, Explain, Selecting, _, _, Format),
    advance_position(Selecting, M),
    (   E0 = '$fire'(E1)                % a timer's event: derived
    ->  How = derived
    ;   How = input,
        E1 = E0
    ),
    (   Explain == true
    ->  (   E1 = '$provenance'(E, Prov)
        ->  true
        ;   E = E1,
            Prov = [det(E, T1, T2)]
        ),
        E =.. List0,
        append(List0, [Prov], List),
        E2 =.. List,
        partitioned(How, Selecting, M, E2, T2),
        process_explained(How, Selecting, Format, M, E2, T1, T2)
    ;   E1 = '$provenance'(E, _)
    ->  partitioned(How, Selecting, M, E, T2),
        process(How, Selecting, Format, M, E, T1, T2)
    ;   partitioned(How, Selecting, M, E1, T2),
        process(How, Selecting, Format, M, E1, T1, T2)
    ).

%   partitioned(+How, +Selecting, +M, +E, +T2): an input event E (as the
%   rules see it) is noted in the partitions of the rules under
%   `strict(partition)` (see etalis_strategies:partition_input/4).

partitioned(input, true, M, E, T2) :- !,
    b_getval(etalis_position, P),
    partition_input(M, E, P, T2).
partitioned(_, _, _, _, _).

%   advance_position(+Selecting, +M): with rules under a selection
%   strategy, count the input event about to be processed (see
%   position_global/2), and drop the matches an event stopped at the
%   inference limit offered.  The position of the event being processed
%   is the global variable etalis_position, which the rules' code reads
%   (etalis_strategies:position/1).

advance_position(true, M) :- !,
    retractall(M:'$offer'(_, _, _, _, _)),
    position_global(M, G),
    nb_getval(G, P0),
    P is P0 + 1,
    nb_setval(G, P),
    b_setval(etalis_position, P).
advance_position(false, _).

%!  engine_prefixes(+Engine, +Prefixes) is det.
%
%   Prefixes (a list of Prefix-Namespace) become those with which the
%   prefixed names in events are expanded: an argument `wt:o1`, or the
%   atom `'wt:o1'`, becomes the IRI atom that `wt:o1` in a rule is.

engine_prefixes(M, Prefixes) :-
    must_be(list(pair), Prefixes),
    retractall(M:'$prefix'(_, _)),
    forall(member(P-NS, Prefixes), assertz(M:'$prefix'(P, NS))).

%   prefixed_event(+S, +E0, -E): E0 with each argument that is a
%   prefixed name of a known prefix of the engine of the batch settings S
%   replaced by its IRI (E0 itself, not a copy, when none is).

prefixed_event(S, '$provenance'(E0, Prov), '$provenance'(E, Prov)) :- !,
    prefixed_event(S, E0, E).
prefixed_event(S, E0, E) :-
    (   compound(E0),
        S = batch(M, _, _, _, _, _, true, _),
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

process(How, Selecting, Format, M, E, T1, T2) :-
    forall(outcome(How, Selecting, M, E, T1, T2, Out), write_detection(Format, Out)).

process_explained(How, Selecting, Format, M, E, T1, T2) :-
    forall(outcome(How, Selecting, M, E, T1, T2, det(D, S, End)),
           (   D =.. List0,
               append(List, [Prov0], List0),
               D1 =.. List,
               flatten(Prov0, Prov),    % nested by the cumulative context
               write_detection(Format, det(D1, S, End), Prov)
           )).

%   outcome(+How, +Selecting, +M, +E, +T1, +T2, -Out) is nondet: Out is
%   each detection that the occurrence of E over [T1,T2] leads to, E an
%   `input` event or one `derived` by a timer (reported as a rule's
%   head is); with rules under a selection strategy (Selecting is
%   `true`), those of the matches it selects come last.

outcome(How, Selecting, M, E, T1, T2, Out) :-
    (   occurrence(How, M, E, T1, T2, Out)
    ;   Selecting == true,
        selection(M, Out)
    ).

occurrence(input, M, E, T1, T2, Out) :-
    M:'$on'(E, T1, T2, Out).
occurrence(derived, M, E, T1, T2, Out) :-
    M:'$derived'(E, T1, T2, Out).

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

%   syntax_error_reason(+Text, +What, +Context, -Reason) is det.
%
%   Reason says why the reader refused a line of Text with
%   syntax_error(What) in Context (see event_syntax_message/3), at the
%   column (from 1, a tab one column) of the token where it stopped.
%   Context is stream(S, Line, LinePos, Char): LinePos is that token's
%   column as the stream counts it (a tab to the next multiple of 8), and
%   Char lies on its line.

syntax_error_reason(Text, What, Context, Reason) :-
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
    ),
    event_syntax_message(What, At, Reason).

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
