:- module(etalis_positions,
          [ source_text/3,              % +Source, +Text, -Src
            offset_where/3,             % +Offset, +Src, -Where
            pos_where/3,                % +Pos, +Src, -Where
            pos_args/3,                 % +Pos, +N, -Args
            operator_where/3            % +Pos, +Src, -Where
          ]).
:- use_module(library(apply)).

/** <module> Positions in a rule file

The reader works on offsets into the text of a rule file (those of
read_term/3's subterm_positions); a message gives `pos(Source, Line,
Column)`, both 1-based.  Src, made once per text by source_text/3,
holds the text with the offsets where its lines start, so that an
offset becomes a line and column by a binary search.
*/

%!  source_text(+Source, +Text, -Src) is det.
%
%   Src holds Text with the offsets of its lines, so that an offset
%   becomes a line and column quickly.

source_text(Source, Text, src(Source, Text, Lines)) :-
    findall(Start, ( sub_string(Text, Before, 1, _, "\n"), Start is Before + 1 ), Starts),
    compound_name_arguments(Lines, lines, [0|Starts]).

%!  pos_args(+Pos, +N, -Args) is det.
%
%   Args are the positions of the N arguments of the term at Pos; the term's own
%   position where the reader gave none.

pos_args(parentheses_term_position(_, _, Inner), N, Args) :-
    !,
    pos_args(Inner, N, Args).
pos_args(term_position(_, _, _, _, Args), N, Args) :-
    length(Args, N),
    !.
pos_args(Pos, N, Args) :-
    length(Args, N),
    maplist(=(Pos), Args).

pos_from(parentheses_term_position(From, _, _), From) :- !.
pos_from(Pos, From) :-
    compound(Pos),
    arg(1, Pos, From),
    integer(From),
    !.
pos_from(From-_, From) :- !.
pos_from(_, 0).

%!  pos_where(+Pos, +Src, -Where) is det.
%
%   Where is pos(Source, Line, Column) of the start of the term at Pos.

pos_where(Pos, Src, Where) :-
    pos_from(Pos, Offset),
    offset_where(Offset, Src, Where).

%!  operator_where(+Pos, +Src, -Where) is det.
%
%   Where is where the operator (or functor) of the term at Pos is
%   written.

operator_where(parentheses_term_position(_, _, Inner), Src, Where) :- !,
    operator_where(Inner, Src, Where).
operator_where(term_position(_, _, From, _, _), Src, Where) :- !,
    offset_where(From, Src, Where).
operator_where(Pos, Src, Where) :-
    pos_where(Pos, Src, Where).

%!  offset_where(+Offset, +Src, -Where) is det.
%
%   Where is pos(Source, Line, Column) of the character at Offset.  A
%   carriage return before a line end is not a column.

offset_where(Offset0, src(Source, Text, Lines), pos(Source, Line, Column)) :-
    string_length(Text, Len),
    Offset is max(0, min(Offset0, Len)),
    functor(Lines, _, N),
    line_of(Lines, Offset, 1, N, Line),
    arg(Line, Lines, Start),
    (   Offset > Start,
        Before is Offset - 1,
        sub_string(Text, Before, 1, _, "\r")
    ->  Column is Offset - Start
    ;   Column is Offset - Start + 1
    ).

%   line_of(+Lines, +Offset, +Low, +High, -Line): binary search for the
%   last line (between Low and High) that starts at or before Offset.

line_of(_, _, Line, Line, Line) :- !.
line_of(Lines, Offset, Low, High, Line) :-
    Mid is (Low + High + 1) // 2,
    arg(Mid, Lines, Start),
    (   Start =< Offset
    ->  line_of(Lines, Offset, Mid, High, Line)
    ;   High1 is Mid - 1,
        line_of(Lines, Offset, Low, High1, Line)
    ).
