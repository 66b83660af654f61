:- module(etalis_batch_settings,
          [ batch_settings/4,           % +Engine, +State, +Format, -Settings
            settings_refresh/1          % +Settings
          ]).
:- use_module(library(heaps)).
:- use_module(timers, [timers_global/2]).

/** <module> The settings of a batch, one term

What the events of a batch need to know of their engine (its inference
limit, the way its events run, whether it has timers and prefixes, the
format of the detections) is found once a batch and passed down as one
term, batch(Engine, Limit, Mode, Explain, Selecting, Timers, Prefixes,
Format) (see batch_settings/4).
*/

%!  batch_settings(+Engine, +State, +Format, -Settings) is det.
%
%   Settings are those of a batch of Engine, whose state is State (see
%   etalis_runtime:engine_start/4), with its detections written as
%   Format: batch(Engine, Limit, Mode, Explain, Selecting, Timers,
%   Prefixes, Format).  Limit is the inference limit of an event; Mode
%   is the way events are run (see etalis_process:run/5):
%   `plain` for an engine without provenance (Explain `false`) and
%   without selection strategies (Selecting `false`), else `general`;
%   Timers is the global variable of the engine's timers (see
%   etalis_process:due_timers/4), or `none` if no rule sets a timer and
%   none is set (so that an event need not look); Prefixes is `true` if
%   events' names are expanded (see etalis_prefixes:prefixed_event/3).
%   A change of the rules while the batch runs makes the settings anew
%   (settings_refresh/1).

batch_settings(M, State, Format, S) :-
    arg(3, State, Limit),
    (   M:'$prefix'(_, _)
    ->  Prefixes = true
    ;   Prefixes = false
    ),
    S = batch(M, Limit, Mode, Explain, Selecting, Timers, Prefixes, Format),
    rule_settings(M, Mode, Explain, Selecting, Timers).

%!  settings_refresh(+Settings) is det.
%
%   After a change of the rules, the batch Settings follow them (the
%   same term, changed in place: the events of the batch after the
%   change run under the new rules).

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
