:- module(etalis_driver,
          [ etalis_driver/4,            % +File, +Run, -Info, -Events
            datime_time/2               % +Datime, -Time
          ]).
:- use_module(library(error)).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(readutil)).

/** <module> The event stream of an original ETALIS test driver

Original ETALIS programs come with drivers that fire their events: a
shell or batch script whose `swipl -g "Goal"` lines load the rules and
call `event(a(1))`, `event(b, [T1, T2])`, `execute_event_stream_file(F)`
and so on, or a stream file of such terms (`.stream`, `.P`) read by
`execute_event_stream_file/1`.  etalis_driver/4 reads one without running
anything and gives its events in order, each with the interval it would
occur over, so that etalis-py can process the stream ETALIS would.

Time.  ETALIS stamps an event with `datime(Y,M,D,H,Min,S,Counter)`: a
second of the calendar and a counter that orders the events of that
second.  Here a datime is the epoch second of its date and time, read as
UTC, plus its counter less one in microseconds (datime_time/2), so that
the order is ETALIS's for up to 10^6 events a second and a datime with
counter 1 is a whole second.  A `datime/6` without counter gets the
counter ETALIS would give it: 1 for the first event of that second, 2
for the next, ...  `event(E)` is stamped by ETALIS with the wall clock;
here it occurs one second after the latest time so far (the first at 1),
so the events of a driver occur at 1, 2, 3, ...; `sleep(N)` moves the
clock on by N seconds.  `event(E, N)` with a number N (in ETALIS: the
current second with counter N) occurs at N.
*/

%!  etalis_driver(+File, +Run, -Info, -Events) is det.
%
%   Events is the stream of the driver File: a list of
%   event(Event, [Start, End]) in the order the driver fires them.  A
%   script (its text has `swipl` and `-g "`) may hold several runs, one
%   a line (a line starting with `%`, `#`, `::` or `rem` is a comment);
%   Run (from 1) selects one.  Any other file is a stream file: each
%   term is an event call (`event(E)`, `event(E, T)`), `sleep(N)`, or an
%   event itself (as ETALIS's test.P drivers fire each term of a stream).
%
%   Info is a dict: `runs` (the number of runs), `rules`, `static` and
%   `database` (the files the run compiles with compile_event_file/1,
%   loads with load_static_rules/1 or consults (`['f.db']`, ETALIS
%   itself left out), and loads with load_database/1), `flags` (the
%   set_etalis_flag/2 settings, as `Flag=Value` strings), `lateness`
%   (how much earlier than an event before it an event ends, at most:
%   0 when they come in time order) and `skipped`,
%   a list of `[File, Line, Reason]` for each term or goal that fires
%   no event of the stream: an event call that cannot be converted
%   (not ground, a time that is not a datime, a number or a list of
%   two), or a clause of a stream file that is not an event.
%
%   @error existence_error(source_sink, File) if File does not exist.
%   @error etalis_engine_error(Message) if Run is not a run of File.

etalis_driver(File, Run, Info, Events) :-
    must_be(atom, File),
    must_be(positive_integer, Run),
    (   exists_file(File)
    ->  true
    ;   existence_error(source_sink, File)
    ),
    read_file_to_string(File, Text, [encoding(utf8)]),
    (   script_runs(Text, Runs), Runs \== []
    ->  length(Runs, NRuns),
        (   nth1(Run, Runs, run(Line, GoalText))
        ->  run_steps(File, Line, GoalText, Steps)
        ;   format(string(Msg), "~w has ~d runs (swipl -g lines), not ~d", [File, NRuns, Run]),
            throw(error(etalis_engine_error(Msg), _))
        )
    ;   NRuns = 0,
        file_steps(File, Steps)
    ),
    timed_events(Steps, Events, Skips),
    maplist([skip(F, L, R), [F, L, R]]>>true, Skips, Skipped),
    findall(S, member(rules(S), Steps), Rules),
    findall(S, member(static(S), Steps), Static),
    findall(S, member(database(S), Steps), Database),
    findall(S, ( member(flag(Flag, Value), Steps), format(string(S), "~q=~q", [Flag, Value]) ), Flags),
    foldl(lateness, Events, none-0, _-Lateness),
    Info = _{runs: NRuns, rules: Rules, static: Static, database: Database,
             flags: Flags, skipped: Skipped, lateness: Lateness}.

%   lateness(+Event, +Latest0-Late0, -Latest-Late): Late is how much
%   earlier than the latest end before it an event ends, at most.
lateness(event(_, [_, End]), none-Late, End-Late) :- !.
lateness(event(_, [_, End]), Latest0-Late0, Latest-Late) :-
    Latest is max(Latest0, End),
    Late is max(Late0, Latest0 - End).

                 /*******************************
                 *            SCRIPTS           *
                 *******************************/

%   script_runs(+Text, -Runs): the runs of a driver script, each
%   run(Line, GoalText) from a line with `-g "GoalText"`.

script_runs(Text, Runs) :-
    sub_string(Text, _, _, _, "swipl"),
    split_string(Text, "\n", "\r", Lines),
    findall(run(N, Goal),
            ( nth1(N, Lines, Line),
              \+ comment_line(Line),
              sub_string(Line, B, _, _, "-g \""),
              Start is B + 4,
              sub_string(Line, Start, _, 0, Rest),
              once(sub_string(Rest, End, _, _, "\"")),
              sub_string(Rest, 0, End, _, Goal) ),
            Runs).

comment_line(Line) :-
    split_string(Line, "", " \t", [Trimmed]),
    string_lower(Trimmed, Lower),
    member(Start, ["%", "#", "::", "rem "]),
    sub_string(Lower, 0, _, _, Start),
    !.

%   run_steps(+File, +Line, +GoalText, -Steps): what the goal of a run
%   line does, in order (see goal_steps//3).

run_steps(File, Line, GoalText, Steps) :-
    catch(term_string(Goal, GoalText), E, true),
    (   var(E)
    ->  file_directory_name(File, Dir),
        phrase(goal_steps(Goal, Dir, File-Line), Steps)
    ;   reader_reason(E, Why),
        format(string(R), "the goal of this run does not read: ~w", [Why]),
        Steps = [skip(File, Line, R)]
    ).

%   goal_steps(+Goal, +Dir, +Where)// : the steps of a driver's goal.
%   Where is File-Line of the goal; Dir the directory that relative
%   file names of the goal are relative to.  Goals that fire nothing
%   (output, checks of the result, halt) are no steps.

goal_steps(G, _, _) --> { var(G) }, !.
goal_steps((A, B), Dir, W) --> !, goal_steps(A, Dir, W), goal_steps(B, Dir, W).
goal_steps(event(E), _, W) --> !, [fire(E, now, W)].
goal_steps(event(E, T), _, W) --> !, [fire(E, T, W)].
goal_steps(sleep(N), _, W) --> !, [sleep(N, W)].
goal_steps(fire_event_list(L), Dir, W) --> { is_list(L) }, !, list_steps(L, Dir, W).
goal_steps(execute_event_stream_file(F), Dir, _) --> !,
    { relative_file(Dir, F, Path) },
    (   { exists_file(Path) }
    ->  { file_steps(Path, Steps) },
        Steps
    ;   { format(string(R), "the stream file ~w does not exist", [Path]) },
        [skip(Path, 0, R)]
    ).
goal_steps(compile_event_file(F), Dir, _) --> !, { relative_file(Dir, F, P) }, [rules(P)].
goal_steps(load_static_rules(F), Dir, _) --> !, { relative_file(Dir, F, P) }, [static(P)].
goal_steps(load_database(F), Dir, _) --> !, { relative_file(Dir, F, P) }, [database(P)].
goal_steps(set_etalis_flag(F, V), _, _) --> !, [flag(F, V)].
goal_steps(consult(F), Dir, W) --> !, goal_steps([F], Dir, W).
goal_steps(Files, Dir, _) --> { is_list(Files) }, !, consulted(Files, Dir).
goal_steps(_, _, _) --> [].

%   consulted(+Files, +Dir)// : the files a driver consults (`['f.db']`)
%   are static knowledge, except ETALIS itself (etalis.P).

consulted([], _) --> [].
consulted([F|Fs], Dir) -->
    (   { atomic(F), file_base_name(F, Base), downcase_atom(Base, B), \+ sub_atom(B, 0, _, _, etalis) }
    ->  { relative_file(Dir, F, P) },
        [static(P)]
    ;   []
    ),
    consulted(Fs, Dir).

list_steps([], _, _) --> [].
list_steps([G|Gs], Dir, W) --> goal_steps(G, Dir, W), list_steps(Gs, Dir, W).

relative_file(Dir, F, Path) :-
    (   atomic(F)
    ->  absolute_file_name(F, Path, [relative_to(Dir)])
    ;   format(atom(Path), "~q", [F])
    ).

                 /*******************************
                 *         STREAM FILES         *
                 *******************************/

%   file_steps(+File, -Steps): the steps of a stream file, a term at a
%   time; a term that does not read is skipped with the reader's reason.

file_steps(File, Steps) :-
    file_directory_name(File, Dir),
    setup_call_cleanup(
        open(File, read, In, [encoding(utf8)]),
        read_steps(In, File, Dir, Steps),
        close(In)).

read_steps(In, File, Dir, Steps) :-
    stream_property(In, position(Pos0)),
    catch(read_term(In, Term, [term_position(Pos)]), E, true),
    (   nonvar(E)
    ->  syntax_error_line(E, Pos0, Line),
        reader_reason(E, Why),
        format(string(R), "does not read: ~w", [Why]),
        Steps = [skip(File, Line, R)|Rest],
        (   at_end_of_stream(In)
        ->  Rest = []
        ;   read_steps(In, File, Dir, Rest)
        )
    ;   Term == end_of_file
    ->  Steps = []
    ;   stream_position_data(line_count, Pos, Line),
        phrase(term_steps(Term, Dir, File-Line), Steps, Rest),
        read_steps(In, File, Dir, Rest)
    ).

syntax_error_line(error(_, stream(_, Line, _, _)), _, Line) :- !.
syntax_error_line(error(_, file(_, Line, _, _)), _, Line) :- !.
syntax_error_line(_, Pos, Line) :-
    stream_position_data(line_count, Pos, Line).

term_steps(T, _, File-Line) --> { var(T) }, !,
    [skip(File, Line, "a variable is not an event")].
term_steps((:- _), _, _) --> !.
term_steps((H :- _), _, File-Line) --> !,
    { functor(H, Name, Arity),
      format(string(R), "a clause for ~q is not an event (put background knowledge into the rule file)",
             [Name/Arity]) },
    [skip(File, Line, R)].
term_steps(event(E), _, W) --> !, [fire(E, now, W)].
term_steps(event(E, T), _, W) --> !, [fire(E, T, W)].
term_steps(sleep(N), _, W) --> !, [sleep(N, W)].
term_steps(E, _, W) --> [fire(E, now, W)].

                 /*******************************
                 *             TIME             *
                 *******************************/

%   timed_events(+Steps, -Events, -Skipped): the events of Steps with
%   their intervals, by the clock described in the module header.

timed_events(Steps, Events, Skipped) :-
    foldl(timed_step, Steps, clock(0, [], Events, Skipped), clock(_, _, [], [])).

timed_step(fire(E0, T, File-Line), clock(C0, Seen0, Es0, Sk0), clock(C, Seen, Es, Sk)) :- !,
    unwrap_event(E0, T, E, T1),
    (   catch(event_interval(E, T1, C0, Seen0, Interval, Seen), error(etalis_skip(Why), _), true)
    ->  true
    ;   Why = "not an event call ETALIS accepts"
    ),
    (   var(Why)
    ->  Interval = [_, End],
        C is max(C0, End),
        Es0 = [event(E, Interval)|Es],
        Sk0 = Sk
    ;   C = C0, Seen = Seen0, Es0 = Es,
        driver_call(E0, T, Call),
        format(string(R), "~W: ~w", [Call, [quoted(true), numbervars(true)], Why]),
        Sk0 = [skip(File, Line, R)|Sk]
    ).
timed_step(sleep(N, File-Line), clock(C0, Seen, Es, Sk0), clock(C, Seen, Es, Sk)) :- !,
    (   number(N), N >= 0
    ->  C is C0 + N, Sk0 = Sk
    ;   C = C0,
        format(string(R), "sleep(~q) is left out: not a number of seconds", [N]),
        Sk0 = [skip(File, Line, R)|Sk]
    ).
timed_step(skip(F, L, R), clock(C, Seen, Es, [skip(F, L, R)|Sk]), clock(C, Seen, Es, Sk)) :- !.
timed_step(_, Clock, Clock).

driver_call(E, T, Call) :-
    (   T == now
    ->  Call0 = event(E)
    ;   Call0 = event(E, T)
    ),
    copy_term(Call0, Call),
    numbervars(Call, 0, _).

%   ETALIS's event(event(E, T)) is event(E, T).
unwrap_event(event(E, T), now, E, T) :- !.
unwrap_event(E, T, E, T).

event_interval(E, _, _, _, _, _) :-
    \+ ground(E), !,
    skip("the event is not ground").
event_interval(E, _, _, _, _, _) :-
    \+ callable(E), !,
    skip("an event is an atom or a compound term").
event_interval(_, now, C0, Seen, [T, T], Seen) :- !,
    T is floor(C0) + 1.
event_interval(_, N, _, Seen, [N, N], Seen) :-
    number(N), !.
event_interval(_, [D1, D2], _, Seen0, [T1, T2], Seen) :- !,
    datime_counted(D1, T1, Seen0, Seen1),
    (   D2 == D1, D1 = datime(_, _, _, _, _, _)
    ->  T2 = T1, Seen = Seen1
    ;   datime_counted(D2, T2, Seen1, Seen)
    ),
    (   T1 =< T2
    ->  true
    ;   skip("its start is after its end")
    ).
event_interval(_, _, _, _, _, _) :-
    skip("the time is not a number or [Start, End]").

%   datime_counted(+D, -T, +Seen0, -Seen): the time of D; a datime/6
%   gets the next counter of its second, as ETALIS gives it.
datime_counted(N, N, Seen, Seen) :- number(N), !.
datime_counted(datime(Y, M, D, H, Mi, S), T, Seen0, Seen) :- !,
    Key = datime(Y, M, D, H, Mi, S),
    (   selectchk(Key-C0, Seen0, Seen1)
    ->  C is C0 + 1
    ;   C = 1, Seen1 = Seen0
    ),
    datime_time(datime(Y, M, D, H, Mi, S, C), T),
    Seen = [Key-C|Seen1].
datime_counted(D, T, Seen, Seen) :-
    (   catch(datime_time(D, T), error(type_error(_, _), _), fail)
    ->  true
    ;   format(string(R), "~q is not a datime(Y,M,D,H,Min,S[,Counter]) or a number", [D]),
        skip(R)
    ).

skip(Why) :-
    throw(error(etalis_skip(Why), _)).

%!  datime_time(+Datime, -Time) is det.
%
%   Time is the time in seconds of ETALIS's timestamp
%   Datime = datime(Y,M,D,H,Min,S,Counter): the epoch second of the
%   date and time, read as UTC, plus Counter - 1 microseconds (an
%   integer when Counter is 1).
%
%   @error type_error(datime, Datime) if Datime is not a valid date and
%   time with a counter from 0 to 999,999.

datime_time(Datime, Time) :-
    (   Datime = datime(Y, M, D, H, Mi, S, C),
        maplist(integer, [Y, M, D, H, Mi, S, C]),
        between(1, 12, M),
        month_days(Y, M, Days), between(1, Days, D),
        between(0, 23, H), between(0, 59, Mi), between(0, 59, S),
        between(0, 999999, C)
    ->  date_time_stamp(date(Y, M, D, H, Mi, S, 0, -, -), Stamp),
        Second is integer(Stamp),
        (   C =:= 1
        ->  Time = Second
        ;   Time is Second + (C - 1) / 1000000.0
        )
    ;   type_error(datime, Datime)
    ).

month_days(Y, 2, Days) :- !,
    (   ( Y mod 4 =:= 0, Y mod 100 =\= 0 ; Y mod 400 =:= 0 )
    ->  Days = 29
    ;   Days = 28
    ).
month_days(_, M, Days) :-
    nth1(M, [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], Days).

reader_reason(error(syntax_error(What), _), Why) :- !,
    format(string(Why), "syntax error: ~w", [What]).
reader_reason(E, Why) :-
    format(string(Why), "~q", [E]).
