:- module(etalis_limits,
          [ limited/6,                  % +Limit, +Goal, +Engine, +Event, +Line, -Hit
            limit_budget/2,             % +Limit, -Budget
            limited_run/6,              % +Budget, +Run, +Event, +T1, +T2, +Format
            budget_restored/1,          % +Budget
            own_limit/1,                % +Budget
            limit_hit/5,                % +Engine, +Event, +Line, +Limit, -Hit
            memory_hit/4,               % +Resource, +Event, +Line, -Hit
            dropped_changes/1,          % +Engine
            watched/3,                  % +Engine, +Limit, :Goal
            output_string/2,            % +MemoryFile, -Text
            stack_limit_restored/0
          ]).
:- use_module(library(lists)).
:- use_module(library(memfile), [memory_file_to_string/3, size_memory_file/3]).
:- use_module(library(time), [alarm/4, install_alarm/2, uninstall_alarm/1, remove_alarm/1]).
:- use_module(feed_state, [feed_global/3, input_line/1]).

/** <module> The limits of an event: inferences, time and memory

Each event runs within the engine's inference limit, the time that
limit allows (a watchdog a batch) and the thread's stacks; an event that
reaches one of them is stopped, and the limit it reached is one term of
its own kind (see limited/6), which a feed reports where it stopped and
a flush or advance raises as error(etalis_limit(Hit), _).
*/

:- meta_predicate watched(+, +, 0).

:- create_prolog_flag(etalis_direct_limits, true, [type(boolean), keep(true)]).

%!  limited(+Limit, +Goal, +Engine, +Event, +Line, -Hit) is det.
%
%   Run Goal (module-qualified), the processing of Event of line Line in
%   Engine, within Limit inferences, the time they allow (see watched/3)
%   and the thread's stacks.  Hit is
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
          memory_hit(Resource, E, Line, Hit)),
    (   Hit == none
    ->  true
    ;   dropped_changes(M)
    ).

limited_(Limit, Goal, M, E, Line, Hit) :-
    within_limit(Limit, Goal, Result),
    (   Result == inference_limit_exceeded
    ->  limit_hit(M, E, Line, Limit, Hit)
    ;   Hit = none
    ).

%   within_limit(+Limit, +Goal, -Result) is det.
%
%   Run Goal (module-qualified, deterministic) within Limit inferences
%   (`inf` for no limit): Result is `inference_limit_exceeded` if it
%   took more, else `true` or `!` (see call_with_inference_limit/3).  A
%   resource error of Goal is not caught: the caller turns it into a
%   Hit with memory_hit/4.

within_limit(inf, Goal, true) :- !,
    call(Goal).
within_limit(Limit, Goal, Result) :-
    call_with_inference_limit(Goal, Limit, Result).

%!  limit_budget(+Limit, -Budget) is det.
%
%   Budget is how limited_run/6 keeps an event within Limit inferences
%   (`inf` for no limit): `inf`; direct(Direct, Outer), the limit set and
%   taken back around each event by the system's own predicates that
%   call_with_inference_limit/3 is made of, without its catch/3 frame
%   (the caller catches the limit's exception once for many events),
%   Outer the limit outside; or portable(Limit), through
%   call_with_inference_limit/3.  The direct way is taken if those
%   predicates are there and behave as this module expects (checked as
%   it loads: a Prolog whose internals differ gets the portable way),
%   unless the Prolog flag etalis_direct_limits is `false`.  Either way
%   an event has the same inferences: Direct is Limit less what
%   call_with_inference_limit/3 spends itself.

limit_budget(inf, inf) :- !.
limit_budget(Limit, Budget) :-
    (   direct_limits,
        current_prolog_flag(etalis_direct_limits, true),
        Direct is Limit - 2,                    % the inferences of call_with_inference_limit/3's own frames
        Direct >= 0
    ->  system:'$inference_limit'(Direct, Outer),
        \+ system:'$inference_limit_false'(Outer),
        Budget = direct(Direct, Outer)
    ;   Budget = portable(Limit)
    ).

%!  limited_run(+Budget, +Run, +Event, +T1, +T2, +Format) is det.
%
%   Process Event over [T1,T2], writing its detections in Format, by
%   call(Run, Event, T1, T2, Format), within the inference limit of
%   Budget (see limit_budget/2).  An event that takes more throws
%   inference_limit_exceeded, with the limit outside not yet restored on
%   the direct way: the catcher restores it with budget_restored/1.

limited_run(inf, Run, E, T1, T2, Format) :-
    call(Run, E, T1, T2, Format).
limited_run(direct(Limit, Outer), Run, E, T1, T2, Format) :-
    (   system:'$inference_limit'(Limit, Outer)  % the limit outside as noted: the usual case
    ->  call(Run, E, T1, T2, Format),
        \+ system:'$inference_limit_false'(Outer)
    ;   limited_run(portable(Limit), Run, E, T1, T2, Format)
    ).
limited_run(portable(Limit), Run, E, T1, T2, Format) :-
    call_with_inference_limit(call(Run, E, T1, T2, Format), Limit, Result),
    (   Result == inference_limit_exceeded
    ->  throw(inference_limit_exceeded)
    ;   true
    ).

%!  budget_restored(+Budget) is det.
%
%   After an exception out of limited_run/6 under Budget, the inference
%   limit is again the one outside it.

budget_restored(direct(_, Outer)) :- !,
    \+ system:'$inference_limit_false'(Outer).
budget_restored(_).

%!  own_limit(+Budget) is semidet.
%
%   An inference_limit_exceeded out of limited_run/6 under Budget is the
%   event's own: not that of a limit outside it (a goal that runs the
%   feed, such as an engine fed by another's rule), which is reached, nor
%   any under `inf`.

own_limit(direct(_, Outer)) :-
    statistics(inferences, Inferences),
    Inferences < Outer.
own_limit(portable(_)).

%   direct_limits_work: the system's predicates of the inference limit
%   that limit_budget/2 uses are there, stop a goal at its limit and
%   give the limit outside back (checked once, as this module loads).

direct_limits_work :-
    catch(direct_limits_work_, _, fail).

direct_limits_work_ :-
    current_predicate(system:'$inference_limit'/2),
    current_predicate(system:'$inference_limit_false'/1),
    system:'$inference_limit'(100_000, Outer),
    \+ system:'$inference_limit_false'(Outer),
    system:'$inference_limit'(1_000, Outer),
    catch(( spin(0), Stopped = false ), inference_limit_exceeded, Stopped = true),
    \+ system:'$inference_limit_false'(Outer),
    Stopped == true,
    system:'$inference_limit'(1, Again),
    \+ system:'$inference_limit_false'(Again),
    Again == Outer.

spin(N) :-
    N < 1_000_000,
    N1 is N + 1,
    spin(N1).

%   direct_limits: direct_limits_work held as this module loaded.

:- if(direct_limits_work).
direct_limits.
:- else.
direct_limits :-
    fail.
:- endif.

%!  limit_hit(+Engine, +Event, +Line, +Limit, -Hit) is det.
%
%   Hit is the limit that Event of line Line reached when it ran out of
%   its Limit inferences (see within_limit/3): the time limit if the
%   watchdog stopped it (see watched/3), else the inference limit, with
%   the `where` condition it was stopped in (see limited/6).

limit_hit(M, E, Line, Limit, Hit) :-
    feed_global(M, limit_goal, G),
    (   nb_current(G, Goal0), Goal0 \== none
    ->  nb_setval(G, none),
        In = where(Goal0)
    ;   In = none
    ),
    feed_global(M, watch, W),
    (   nb_current(W, timed_out(Seconds))
    ->  Hit = time(Line, E, Seconds, Limit, In)
    ;   Hit = limit(Line, E, Limit, In)
    ).

%!  memory_hit(+Resource, +Event, +Line, -Hit) is det.
%
%   Hit is memory(Line, Event, Bytes) if Resource, of a resource error
%   of Event of line Line, is the stacks (or the memory outside them),
%   after a garbage collection; the resource error of any other Resource
%   is thrown again.

memory_hit(Resource, E, Line, memory(Line, E, Bytes)) :-
    memberchk(Resource, [stack, memory, global_stack, local_stack, trail_stack]),
    !,
    garbage_collect,
    current_prolog_flag(stack_limit, Bytes).
memory_hit(Resource, _, _, _) :-
    resource_error(Resource).

%!  dropped_changes(+Engine) is det.
%
%   Forget the rule updates and raised events that an event stopped at
%   a limit recorded.

dropped_changes(M) :-
    retractall(M:'$rule_update'(_)),
    retractall(M:'$raised'(_)).

%!  output_string(+MemoryFile, -Text:string) is det.
%
%   Text is the UTF-8 text of MemoryFile, the detections a batch wrote.
%   The events that wrote them are processed and their goals stored, so
%   when the stacks have no room left for the text, the stack limit is
%   raised by what the text and its copies in the reply take, until the
%   next request (see stack_limit_restored/0): the detections are handed
%   over, not lost.

output_string(File, Text) :-
    size_memory_file(File, Size, octet),
    statistics(globalused, Global),
    statistics(localused, Local),
    statistics(trailused, Trail),
    Needed is Global + Local + Trail + 4 * Size + 1_048_576,
    current_prolog_flag(stack_limit, Limit),
    (   Needed =< Limit
    ->  true
    ;   (   nb_current(etalis_stack_limit, _)
        ->  true
        ;   nb_setval(etalis_stack_limit, Limit)
        ),
        set_prolog_flag(stack_limit, Needed)
    ),
    memory_file_to_string(File, Text, utf8).

%!  stack_limit_restored is det.
%
%   The stack limit is the one set before output_string/2 raised it, if
%   it did.

stack_limit_restored :-
    (   nb_current(etalis_stack_limit, Limit)
    ->  nb_delete(etalis_stack_limit),
        set_prolog_flag(stack_limit, Limit)
    ;   true
    ).

%!  watched(+Engine, +Limit, :Goal) is semidet.
%
%   Run Goal, the processing of a batch of Engine whose events may take
%   Limit inferences each, under a watchdog: a built-in can run for long
%   within one inference (msort/2 of a long list, arithmetic on a huge
%   number), so an event still running after time_limit/2 seconds is
%   stopped at that time limit (limited/6).  Every S seconds the watchdog
%   looks at the input line being processed (see
%   etalis_feed_state:input_line/1): the same line
%   at two looks in a row has run for S seconds at least.  The cost is an
%   alarm a batch, none an event.

watched(_, inf, Goal) :- !,
    call(Goal).
watched(M, Limit, Goal) :-
    time_limit(Limit, S),
    feed_global(M, watch, W),
    setup_call_cleanup(
        ( alarm(S, etalis_limits:watchdog(W, S), Id, [remove(false)]),
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
%   processing of an event (its call_with_inference_limit/3 or
%   limited_run/6) nothing is thrown.

watchdog(W, S) :-
    (   nb_current(W, watch(Id, Seen))
    ->  (   input_line(Line)
        ->  true
        ;   Line = none
        ),
        (   Line \== none,
            Line == Seen,
            prolog_current_frame(F),
            (   prolog_frame_attribute(F, parent_goal, system:call_with_inference_limit(_, _, _))
            ->  true
            ;   prolog_frame_attribute(F, parent_goal, etalis_limits:limited_run(_, _, _, _, _, _))
            )
        ->  nb_setval(W, timed_out(S)),
            throw(inference_limit_exceeded)
        ;   nb_setval(W, watch(Id, Line)),
            uninstall_alarm(Id),
            install_alarm(Id, S)
        )
    ;   true
    ).
