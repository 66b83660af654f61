:- module(etalis_feed_state,
          [ feed_global/3,              % +Engine, +Kind, -Name
            feed_kinds/1,               % -Kinds
            feed_start/1,               % +Engine
            feed_warning/2,             % +Engine, +Text
            input_line/1,               % -Line
            count_raised/1,             % +Engine
            changed/1,                  % +Engine
            changes_flag/2,             % +Engine, -Flag
            feed_value/3,               % +Engine, +Kind, -Value
            engine_warnings/2           % +Engine, -Warnings
          ]).
:- use_module(library(lists)).

/** <module> What a feed gathers from the code it does not call itself

The rules' code (a `where` condition that raises, ETALIS's event/1, a
timer set in the past) and the watchdog report to the feed of their
engine through global variables named after the engine's module (and
its warnings as facts of that module, each added once: a list in a
global variable is copied whole at each change), so that what one
engine gathers never shows in another's reply, even when one feeds the
other.  The input line being processed is in the global variable
etalis_line (see input_line/1).
*/

%!  feed_warning(+Engine, +Text) is det.
%
%   Report Text as a warning of the input line that Engine is
%   processing (0 outside the processing of an input line).

feed_warning(M, Text) :-
    (   input_line(Line) -> true ; Line = 0 ),
    assertz(M:'$warning'(Line, Text)).          % kept on backtracking, and not copied again

%!  input_line(-Line) is semidet.
%
%   Line is the input line being processed: the global variable
%   etalis_line holds it, set before each event (see
%   etalis_process:run/5), or holds a term at(Line, Kept) whose first
%   argument a loop over many events sets in place before each (see
%   etalis_feed:quick_run/14), a global variable set once for them all,
%   or `noted` when the foreign library keeps that note.
%   Fails outside the processing of an input line.

input_line(Line) :-
    nb_current(etalis_line, Value),
    (   Value = at(Line0, _)
    ->  integer(Line0),
        Line = Line0
    ;   Value == noted                          % the foreign library keeps the note
    ->  etalis_columns:etalis_noted(Line0, _),
        integer(Line0),
        Line = Line0
    ;   integer(Value),
        Line = Value
    ).

%!  count_raised(+Engine) is det.
%
%   One more event was raised (event/1) or fired (a timer) in the feed
%   or flush of Engine.

count_raised(M) :-
    feed_global(M, raised, G),
    nb_getval(G, R0),
    R is R0 + 1,
    nb_setval(G, R).

%!  changed(+Engine) is det.
%
%   A rule of Engine recorded a change of the rules or raised an event:
%   the feed looks for them after the event (see changes_flag/2).

changed(M) :-
    feed_global(M, changes, G),
    (   nb_current(G, Flag)
    ->  nb_setarg(1, Flag, true)
    ;   true
    ).

%!  changes_flag(+Engine, -Flag) is det.
%
%   Flag is changes(Changed), the term whose argument changed/1 sets to
%   `true` in Engine's feed, so that a loop over many events tests one
%   argument after each, and looks for the changes themselves only when
%   it is `true` (setting it back to `false`).

changes_flag(M, Flag) :-
    feed_global(M, changes, G),
    nb_getval(G, Flag).

%!  feed_global(+Engine, +Kind, -Name) is det.
%
%   Name is the global variable that holds what the feed (or flush) of
%   Engine gathers of Kind: how many events were `raised` and the
%   `limit_goal`, the `where` condition that ran out of inferences (see
%   etalis_goals:goal_error/3), the flag of `changes` (see
%   changes_flag/2); also the
%   watchdog's look, `watch` (see etalis_limits:watched/3).

feed_global(M, Kind, Name) :-
    atomic_list_concat([M, /, Kind], Name).

%!  feed_kinds(-Kinds) is det.
%
%   Kinds are the kinds of feed_global/3.

feed_kinds([watch|Kinds]) :-
    findall(Kind, feed_initial(Kind, _), Kinds).

%!  feed_start(+Engine) is det.
%
%   What Engine gathers starts empty.

feed_start(M) :-
    retractall(M:'$warning'(_, _)),
    forall(feed_initial(Kind, V),
           (   feed_global(M, Kind, G),
               nb_setval(G, V)
           )).

feed_initial(raised, 0).
feed_initial(limit_goal, none).
feed_initial(changes, changes(true)).

%!  engine_warnings(+Engine, -Warnings) is det.
%
%   Warnings are the warning(Line, Text) of Engine's last feed or flush,
%   in order.

engine_warnings(M, Warnings) :-
    (   current_predicate(M:'$warning'/2)
    ->  findall(warning(Line, Text), M:'$warning'(Line, Text), Warnings)
    ;   Warnings = []
    ).

%!  feed_value(+Engine, +Kind, -Value) is det.
%
%   Value is what the feed of Engine gathered of Kind.

feed_value(M, Kind, V) :-
    feed_global(M, Kind, G),
    nb_getval(G, V).
