:- module(etalis_feed,
          [ engine_feed/5               % +Engine, +Batch, +Options, -Summary, -Detections
          ]).
:- use_module(library(error)).
:- use_module(library(option)).
:- use_module(library(heaps)).
:- use_module(library(memfile)).
:- use_module(runtime, [engine_state/2]).
:- use_module(batch_settings, [batch_settings/4]).
:- use_module(process, [admit/4, release/4, due_timers/4, raised_events/3, rule_updates/1]).
:- use_module(input_events, [text_items/3, plain_input/3, input_event/6, rejection/4]).
:- use_module(prefixes, [prefixed_event/3]).
:- use_module(limits, [limit_budget/2, limited_run/6, budget_restored/1, own_limit/1, limit_hit/5,
                       memory_hit/4, dropped_changes/1, watched/3, output_string/2]).
:- use_module(feed_state, [feed_start/1, feed_value/3, engine_warnings/2, changes_flag/2]).
:- use_module(protocol, [detection_format/1]).
:- use_module(columns, [columns_loaded/0]).
:- use_module('../reader/terms', [finite_number/1]).

/** <module> Feeding an engine: one batch, one loop

engine_feed/5 takes a batch of events (event lines or a list of terms)
or a move of the engine's time (a flush, an advance), makes the batch's
settings once (see etalis_batch_settings) and runs one loop over its
events, with a quick path for the plain events of a list; it answers
with the counts, the rejected lines, the warnings, where it stopped and
the detections as text.
*/

%!  engine_feed(+Engine, +Batch, +Options, -Summary, -Detections) is det.
%
%   Feed Engine one batch.  Detections is a string with a line for each
%   reported detection, in the format that the option format(Format)
%   gives (see etalis_protocol:detection_format/1; `object` if not
%   given).  Batch is one of:
%
%     - lines(Text): event lines, one Prolog term a line (see
%       etalis_input_events), the first of which is line First of its source, for the
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
%       etalis_timers:timer_set/5), in time order; with Timers `false` the timers stay
%       pending: the end of a finite input is not the end of time, and a
%       later run resumed from a snapshot fires them when due;
%     - full(Resource, Term): a batch that the stacks had no room to
%       read (Resource, see etalis_batches), Term its first line's term:
%       the feed stops at it as at an event out of memory, nothing of the
%       batch processed;
%     - advance(Time): Engine's time moves on to Time with no event: no
%       event earlier than Time may come any more, so the events of the
%       reorder buffer up to Time are processed and the timers due at Time
%       or earlier fire, in time order.  A Time before the last event's
%       changes nothing.
%
%   For events, Summary is summary(Accepted, Raised, Rejected, Warnings,
%   Stopped): Raised the number of events that rules raised with event/1
%   (see etalis_rule_changes:raise_event/2) or timers fired, Rejected a
%   list of rejected(Line, Reason) and Warnings of warning(Line,
%   Message).  Each event may take at most the engine's inference limit
%   (see etalis_runtime:engine_start/4).  Stopped is `none`, or the limit
%   an event reached (see etalis_limits:limited/6): the feed stops there,
%   with the detections made before that event (its own are dropped; the
%   goals it stored before it was stopped stay).  For flush and advance, Summary is
%   released(Released, Fired, Warnings): Released events of the reorder
%   buffer were processed and Fired timers fired (with what they raised).
%
%   @error error(etalis_limit(Hit), _) if an event of flush or advance
%   reaches a limit (see etalis_limits:limited/6).

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
feed_batch(full(Resource, Term), First, S, _, summary(0, Raised, [], Warnings, Hit), "") :- !,
    term_full(Resource, Term, First, S, 0, stopped(Hit, _)),
    S = batch(M, _, _, _, _, _, _, _),
    engine_warnings(M, Warnings),
    feed_value(M, raised, Raised).
feed_batch(Batch, _, _, _, _, _) :-
    domain_error(etalis_batch, Batch).

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
%   with_output_to/2's buffer), and made a string even where the stacks
%   are full (see etalis_limits:output_string/2).

:- meta_predicate output_text(0, -).

output_text(Goal, Text) :-
    setup_call_cleanup(
        ( new_memory_file(File),
          open_memory_file(File, write, Out, [encoding(utf8)])
        ),
        ( with_output_to(Out, Goal),
          close(Out),
          output_string(File, Text)
        ),
        ( (   is_stream(Out)
          ->  close(Out)
          ;   true
          ),
          free_memory_file(File)
        )).

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
%   etalis_limits:limited/6), which ends the loop with the state before
%   it, Kept the characters of the detections written before it.

:- set_prolog_flag(optimise, true).           % the loop's arithmetic inline
feed_loop(Source0, S, Order0, Order, A0, A, Rejected, Stopped) :-
    (   Source0 = terms(Terms0, Line0, Checked),
        Order0 = in_order(Last0),
        S = batch(M, Limit, plain, _, _, none, false, Format)
    ->  quick_run(Terms0, Line0, Checked, M, Limit, Format, S, Last0, Terms, Line1, Last, A0, A1, Stop),
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
%   from text (see etalis_input_events:text_items/3).  Item is
%   term(Term), rejected(Reason) or `nothing`.

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
    character_count(current_output, Kept),
    catch(term_outcome(Term, Line, S, Order0, Outcome), Error, true),
    (   var(Error)
    ->  true
    ;   Error = error(etalis_limit(Hit), _)
    ->  Outcome = stopped(Hit, Kept)
    ;   Error = error(resource_error(Resource), _)
    ->  term_full(Resource, Term, Line, S, Kept, Outcome)
    ;   throw(Error)
    ).

%   term_outcome(+Term, +Line, +S, +Order0, -Outcome): feed_term/5 but
%   for an event that reaches a limit or fills the stacks, which raise
%   (one catch/3 frame a term in feed_term/5 handles both).

term_outcome(Term, Line, S, Order0, Outcome) :-
    (   (   plain_input(Term, E0, T1)
        ->  T2 = T1
        ;   nonvar(Term),
            input_event(Term, Line, E0, T1, T2, Reason),
            var(Reason)
        ),
        prefixed_event(S, E0, E),
        admit(Order0, S, ev(E, T1, T2, Line), Order1)
    ->  Outcome = admitted(Order1)
    ;   rejection(Term, Line, Order0, Reason),
        Outcome = rejected(Reason)
    ).

%   term_full(+Resource, +Term, +Line, +S, +Kept, -Outcome): the stacks
%   filled (Resource) while the term Term of line Line was processed,
%   outside the catch of etalis_limits:limited/6: it stops the feed as
%   an event that reached the memory limit (see feed_term/5).

term_full(Resource, Term, Line, batch(M, _, _, _, _, _, _, _), Kept, stopped(Hit, Kept)) :-
    (   plain_input(Term, E, _)
    ->  true
    ;   nonvar(Term),
        Term = event(E, _)
    ->  true
    ;   E = Term
    ),
    memory_hit(Resource, E, Line, Hit),
    dropped_changes(M).

%   quick_run(+Terms, +Line, +Checked, +M, +Limit, +Format, +S, +Last0,
%             -Rest, -RestLine, -Last, +A0, -A, -Stop)
%
%   Process Terms, the first of which is the event of line Line, as
%   etalis_process:run/5 does for batch settings S that feed_loop/8
%   found to allow it (events the plain way, no timers, no prefixes),
%   without the steps that do nothing there: the events in time order
%   from the last accepted time Last0 on.  It ends at the first term
%   that is not a valid event in time order (Rest the terms from it on,
%   RestLine its line; the general way takes it), after an event that
%   changes the rules or raises events (the settings may have changed),
%   or at an event that reaches a limit (Stop is then stopped(Hit, Kept),
%   else `none`).  Last is the time of the last event processed.
%
%   An event that reaches the inference limit or runs out of the stacks
%   is caught here, once for the run, not an event at a time (a catch/3
%   frame an event, with call_with_inference_limit/3's own, cost about
%   as much as the rest of what the loop adds to the engine's clauses):
%   the loop notes in At the line of the event it runs and the output
%   before it, which the handler finds after the unwinding; the accepted
%   count and the last time before that event are counted again from
%   Terms.  At is also the run's input line (see
%   etalis_feed_state:input_line/1), put in the global variable once for
%   the run (b_setval/2 an event is a measurable part of the loop's
%   cost); the line of the caller (an engine fed by another's rule) is
%   set back after it.

quick_run(Terms, Line, Checked, M, Limit, Format, S, Last0, Rest, RestLine, Last, A0, A, Stop) :-
    current_output(Out),
    character_count(Out, Kept),
    note_start(Out, Kept, At, Saved),
    limit_budget(Limit, Budget),
    changes_flag(M, Changes),
    nb_setarg(1, Changes, true),                % what rules recorded before the run is looked for too
    Engine = engine(M:'$run', Changes, M:'$rule_update', M:'$raised', Out),
    (   nb_current(etalis_line, Outer)
    ->  true
    ;   Outer = none
    ),
    b_setval(etalis_line, At),
    catch(quick_loop(Terms, Line, Checked, Engine, Budget, Format, S, At, Last0, Rest, RestLine, Last, A0, A, Stop),
          Error,
          ( noted(At, AtLine, AtKept),
            note_restored(Saved),               % before an exception goes on to a run outside
            quick_stopped(Error, Budget, at(AtLine, AtKept), Terms, Line, Checked, M, Limit, Last0, Rest, RestLine,
                          Last, A0, A, Stop)
          )),
    note_restored(Saved),
    b_setval(etalis_line, Outer).

%   note_start(+Out, +Kept, -At, -Saved): At is the note of the event
%   that quick_loop/15 runs, its line `start` and Kept the characters
%   written to Out before it: `noted` if the foreign library keeps it
%   (one call an event, see note/4), then Saved is the note it held (a
%   run outside, which this one is inside of, gets it back, see
%   note_restored/1); else the term at(Line, Kept), set in place, and
%   Saved is `none`.

note_start(Out, Kept, noted, note(Line, Noted)) :-
    columns_loaded,
    stream_property(Out, position(_)),
    !,
    etalis_columns:etalis_noted(Line, Noted),
    etalis_columns:etalis_note_set(start, Kept).
note_start(_, Kept, at(start, Kept), none).

%   note(+At, +At, +Out, +Line): the event of line Line runs now, after
%   what was written to Out so far (At twice: the first for the clause,
%   the second the term set in place).

note(noted, _, _, Line) :-
    etalis_columns:etalis_note(Line).
note(at(_, _), At, Out, Line) :-
    character_count(Out, Kept),
    nb_setarg(1, At, Line),
    nb_setarg(2, At, Kept).

%   noted(+At, -Line, -Kept): what the note At holds (see note_start/4).

noted(noted, Line, Kept) :-
    etalis_columns:etalis_noted(Line, Kept).
noted(at(Line, Kept), Line, Kept).

%   note_done(+At, +At): no event of the note At runs any more.

note_done(noted, _) :-
    etalis_columns:etalis_noted(_, Kept),
    etalis_columns:etalis_note_set(none, Kept).
note_done(at(_, _), At) :-
    nb_setarg(1, At, none).

note_restored(none).
note_restored(note(Line, Kept)) :-
    etalis_columns:etalis_note_set(Line, Kept).

%   quick_stopped(+Error, +Budget, +At, +Terms, +Line, +Checked, +M, +Limit,
%                 +Last0, -Rest, -RestLine, -Last, +A0, -A, -Stop)
%
%   quick_run/14 after the exception Error: the event whose line At
%   notes reached the inference limit or ran out of the stacks, and the
%   run stops before it; any other exception is thrown again.

quick_stopped(Error, Budget, At, Terms, Line, Checked, M, Limit, Last0, Rest, RestLine, Last, A0, A, Stop) :-
    budget_restored(Budget),
    (   Error == inference_limit_exceeded
    ->  (   arg(1, At, AtLine),
            integer(AtLine),
            own_limit(Budget)
        ->  At = at(_, Kept),
            done_before(Terms, Line, AtLine, Checked, Last0, Last, A0, A, E),
            limit_hit(M, E, AtLine, Limit, Hit),
            dropped_changes(M),
            Rest = [], RestLine = AtLine, Stop = stopped(Hit, Kept)
        ;   throw(Error)
        )
    ;   Error = error(resource_error(Resource), Context)
    ->  out_of_stacks(At, Resource, Context, Terms, Line, Checked, M, Last0, Rest, RestLine, Last, A0, A, Stop)
    ;   throw(Error)
    ).

%   out_of_stacks(+At, +Resource, +Context, +Terms, +Line, +Checked, +M,
%                 +Last0, -Rest, -RestLine, -Last, +A0, -A, -Stop)
%
%   quick_run/14 after a resource error: if it came from the event whose
%   line At notes, or before the first event (At is `start`: the run's
%   first call), the run stops before that event as at a limit (see
%   etalis_limits:memory_hit/4), else the error is thrown again.

out_of_stacks(at(start, Kept), Resource, Context, [Term|Terms], Line, Checked, M, Last0, Rest, RestLine, Last, A0,
              A, Stop) :-
    !,
    (   quick_event(Checked, Term, _, _, _)
    ->  out_of_stacks(at(Line, Kept), Resource, Context, [Term|Terms], Line, Checked, M, Last0, Rest, RestLine,
                      Last, A0, A, Stop)
    ;   throw(error(resource_error(Resource), Context))
    ).
out_of_stacks(at(At, Kept), Resource, Context, Terms, Line, Checked, M, Last0, [], At, Last, A0, A, Stop) :-
    (   At == none
    ->  throw(error(resource_error(Resource), Context))
    ;   true
    ),
    done_before(Terms, Line, At, Checked, Last0, Last, A0, A, E),
    memory_hit(Resource, E, At, Hit),
    dropped_changes(M),
    Stop = stopped(Hit, Kept).

%   done_before(+Terms, +Line, +At, +Checked, +Last0, -Last, +A0, -A, -E):
%   the events of Terms (from line Line) before line At were processed,
%   A - A0 of them, the last at time Last (Last0 if none); E is the
%   event of line At.

done_before([Term|Terms], Line, At, Checked, Last0, Last, A0, A, E) :-
    (   Term == []
    ->  Last1 = Last0, A1 = A0
    ;   quick_event(Checked, Term, E0, _, T2)
    ->  Last1 = T2, A1 is A0 + 1
    ),
    (   Line == At
    ->  E = E0, Last = Last0, A = A0
    ;   Next is Line + 1,
        done_before(Terms, Next, At, Checked, Last1, Last, A1, A, E)
    ).

%   quick_loop(+Terms, +Line, +Checked, +Engine, +Budget, +Format, +S,
%              +At, +Last0, -Rest, -RestLine, -Last, +A0, -A, -Stop)
%
%   The loop of quick_run/14.  Engine is engine(Run, Changes, Updates,
%   Raised, Out): the closures M:'$run' (the way of an input event, see
%   etalis_runtime:engine_create/1), M:'$rule_update' and M:'$raised'
%   made once (a goal M:G made an event at a time is garbage an event),
%   the engine's flag of changes (see etalis_feed_state:changes_flag/2)
%   and the stream of the detections;
%   Budget the limit of each event (see etalis_limits:limit_budget/2), At
%   its note of the event being run.

quick_loop([], Line, _, _, _, _, _, _, Last, [], Line, Last, A, A, none).
quick_loop([Term|Terms], Line, Checked, Engine, Budget, Format, S, At, Last0, Rest, RestLine, Last, A0, A, Stop) :-
    Engine = engine(Run, Changes, _, _, Out),
    Next is Line + 1,
    (   (   Checked == checked,                 % quick_event/5, inline for the usual case
            Term = event(E, Time),
            number(Time)
        ->  T1 = Time, T2 = Time,
            T1 >= -253_402_300_799,
            T2 =< 253_402_300_799
        ;   quick_event(Checked, Term, E, T1, T2)
        ),
        T2 >= Last0
    ->  note(At, At, Out, Line),
        limited_run(Budget, Run, E, T1, T2, Format),
        (   (   Changes = changes(false)        % the usual case, tested inline
            ->  true
            ;   unchanged(Engine)
            )
        ->  A1 is A0 + 1,
            quick_loop(Terms, Next, Checked, Engine, Budget, Format, S, At, T2, Rest, RestLine, Last, A1, A, Stop)
        ;   noted(At, _, Kept),
            note_done(At, At),                  % the event is done: what follows is no longer its
            b_setval(etalis_line, Line),        % but what it changed or raised reports to its line
            A1 is A0 + 1,
            catch(( rule_updates(S),
                    raised_events(S, T2, Line)
                  ), error(etalis_limit(Raised), _), true),
            (   var(Raised)
            ->  Rest = Terms, RestLine = Next, Last = T2, A = A1, Stop = none
            ;   Rest = [], RestLine = Line, Last = Last0, A = A0, Stop = stopped(Raised, Kept)
            )
        )
    ;   Term == []
    ->  quick_loop(Terms, Next, Checked, Engine, Budget, Format, S, At, Last0, Rest, RestLine, Last, A0, A, Stop)
    ;   Rest = [Term|Terms], RestLine = Line, Last = Last0, A = A0, Stop = none
    ).

%   unchanged(+Engine) is semidet: the event just processed by the
%   engine of quick_loop/15, whose flag of changes is set, recorded no
%   change of the rules and raised no event; the flag is cleared.

unchanged(engine(_, Changes, Updates, Raised, _)) :-
    nb_setarg(1, Changes, false),
    \+ call(Updates, _),
    \+ call(Raised, _).

%   quick_event(+Checked, +Term, -E, -T1, -T2) is semidet: Term is a valid
%   input event E over [T1,T2] (as plain_input/3 finds it, or known to
%   be one if Checked is `checked`, see engine_feed/5).  quick_loop/15
%   has the case of a checked event at a point in time inline.

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
