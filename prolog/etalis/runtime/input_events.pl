:- module(etalis_input_events,
          [ text_items/3,               % +Text, +Offset, -Items
            plain_input/3,              % @Term, -Event, -Time
            input_event/6,              % +Term, +Line, -Event, -T1, -T2, -Reason
            rejection/4,                % ?Term, +Line, +Order, -Reason
            event_name/1                % +Name
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module('../errors', [syntax_message/2]).
:- use_module('../reader/terms', [finite_number/1]).

/** <module> Input events: the lines and terms a feed reads

Events cross in batches as text, one Prolog term a line, each line
ending in a newline (or as a list of such terms, see etalis_batches):

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

%!  text_items(+Text, +Offset, -Items) is det.
%
%   Items are the items of the event lines of Text, whose first line is
%   line Offset+1 of its source: a list of Line-Item, Item term(Term) or
%   rejected(Reason).
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

%!  rejection(?Term, +Line, +Order, -Reason) is det.
%
%   Reason is why Term, of line Line, is not accepted by an engine whose
%   order is Order (see etalis_process:admit/4).

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

%!  plain_input(@Term, -E, -T) is semidet.
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

%!  input_event(+Term, +Line, -E, -T1, -T2, -Reason) is det.
%
%   Term, of line Line, is the input event E over [T1,T2]; Reason is
%   unbound for a valid event, else why it is not one.  Term is not a
%   variable.

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
