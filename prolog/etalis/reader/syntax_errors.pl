:- module(etalis_syntax_errors,
          [ read_error/3,               % +Error, +Start, +Src
            clause_error/3              % +Error, +Pos, +Src
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module('../errors', [etalis_error/3, syntax_message/2, error_words/3]).
:- use_module('../compiler/optable', [etl_operator/3]).
:- use_module(positions, [offset_where/3, pos_where/3]).
:- use_module(tokens, [token/5, name_chars/5, layout_end/3]).
:- use_module('../dialect/quoted_operators', [etalis_operator_alias/3]).

/** <module> Syntax errors of rule files, with a hint

SWI-Prolog's reader says that a clause does not read and where it
stopped; this module says, as an etalis_error/3 at the place to look,
what most likely went wrong: a clause without its full stop, a bracket
never closed or closed by another kind, a comment or quote never
closed, an operator misspelt, or one of ETALIS's capitalised operators
(`SEQ`) that unquoted is a variable.
*/

%!  read_error(+Error, +Start, +Src) is det.
%
%   Reading the clause that starts at the offset Start of the text of
%   Src raised Error: throw it as an etalis_error/3 at the place to
%   look, with a hint.

read_error(error(syntax_error(What), Context), Start, Src) :- !,
    syntax_error(What, Context, Start, Src).
read_error(Error, Start, Src) :-
    Src = src(_, Text, _),
    sub_string(Text, Start, _, 0, Rest),
    string_codes(Rest, Codes),
    layout_end(Codes, Start, At),
    clause_error(Error, At-At, Src).

%!  clause_error(+Error, +Pos, +Src) is det.
%
%   Throw Error, met while reading the clause at Pos: an error of ours
%   as it is, any other said in words at the clause's position, never as
%   a Prolog term.

clause_error(error(etalis_error(M, H), Where), _, _) :- !,
    etalis_error(M, H, Where).
clause_error(Error, Pos, Src) :-
    error_words(Error, Words, Hint),
    format(string(M), "cannot read this clause: ~w", [Words]),
    pos_where(Pos, Src, Where),
    etalis_error(M, Hint, Where).

syntax_error(_, Context, Start, Src) :-
    syntax_error_offset(Context, Start, Offset),
    unfinished_clause(Src, Start, Offset, End, Next),
    !,
    offset_where(Next, Src, pos(_, NextLine, _)),
    format(string(Hint), "end the clause with a full stop; the next one starts at line ~d", [NextLine]),
    offset_where(End, Src, Where),
    etalis_error("syntax error: this clause has no full stop at its end", Hint, Where).
syntax_error(What, Context, Start, Src) :-
    (   unclosed_kind(What, Kind),
        Src = src(_, Text, _),
        sub_string(Text, Start, _, 0, Rest),
        string_codes(Rest, Codes),
        unclosed(Codes, Start, Kind, Offset)
    ->  unclosed_hint(Kind, Hint)
    ;   syntax_error_offset(Context, Start, Offset),
        (   variable_alias(Src, Offset, Name, Op)
        ->  format(string(Hint), "~w is read as a variable: write the operator ~w (or '~w' in quotes, as original ETALIS files do)",
                   [Name, Op, Name])
        ;   misspelt_operator(Src, Offset, Word, Op)
        ->  format(string(Hint), "~w is not an operator: did you mean ~w?", [Word, Op])
        ;   bracket_hint(Src, Start, Offset, Hint0)
        ->  Hint = Hint0
        ;   Hint = "check the operators and parentheses, and end each clause with a full stop"
        )
    ),
    syntax_message(What, Message),
    offset_where(Offset, Src, Where),
    etalis_error(Message, Hint, Where).

%   unfinished_clause(+Src, +Start, +Offset, -End, -Next): the reader
%   stopped at Offset, in layout that starts at the line end End and
%   reaches Next, the first character of another clause, and the text
%   from Start to End reads as a clause: that clause lacks its full stop
%   (the reader reports the layout, often the end of a comment after the
%   clause, as where the operator it expected is missing).

unfinished_clause(Src, Start, Offset, End, Next) :-
    Src = src(_, Text, _),
    string_length(Text, All),
    Length is min(Offset + 1, All) - Start,
    Length > 0,
    sub_string(Text, Start, Length, _, Before),
    sub_string(Before, LineEnd, 1, _, "\n"),
    End0 is Start + LineEnd,
    sub_string(Text, End0, _, 0, Rest),
    string_codes(Rest, Codes),
    layout_end(Codes, End0, Next),
    Next > Offset,
    Next < All,                                 % another clause follows
    !,
    Clause is End0 - Start,
    sub_string(Text, Start, Clause, _, ClauseText),
    split_string(ClauseText, "", " \t\r\n", [Stripped]),
    reads_as_clause(Stripped),
    (   sub_string(Stripped, Percent, _, _, "%"),
        \+ ( sub_string(Stripped, Later, _, _, "%"), Later > Percent ),
        sub_string(Stripped, 0, Percent, _, Code0),
        split_string(Code0, "", " \t\r\n", [Code]),
        reads_as_clause(Code)
    ->  true                                    % the end of the clause before its comment
    ;   Code = Stripped
    ),
    string_length(Code, Kept),
    sub_string(ClauseText, Lead, _, _, Code), !,
    End is Start + Lead + Kept.

reads_as_clause(Text) :-
    catch(term_string(Term, Text, [module(etalis_syntax), syntax_errors(error)]), _, fail),
    Term \== end_of_file.

%   bracket_hint(+Src, +Start, +Offset, -Hint): the reader stopped
%   after Offset in the clause that starts at Start, and Hint names the
%   bracket to blame: the innermost one still open when only a full stop
%   (or nothing) follows, or a closing bracket that comes next and closes
%   no bracket or another kind.

bracket_hint(Src, Start, Offset, Hint) :-
    Src = src(_, Text, _),
    Length is Offset + 1 - Start,
    sub_string(Text, Start, Length, _, Clause),
    string_codes(Clause, Codes),
    open_brackets(Codes, Start, [], Open),
    next_code(Text, Offset, Next, At),
    (   clause_end(Next)
    ->  Open = [Bracket-Opened|_],
        offset_where(Opened, Src, pos(_, Line, Column)),
        format(string(Hint), "the ~c at line ~d column ~d is never closed: close it, and end the clause with a full stop",
               [Bracket, Line, Column])
    ;   Next = [Close|_],
        closing(Open0, Close),
        offset_where(At, Src, pos(_, Line, Column)),
        (   Open = []
        ->  format(string(Hint), "the ~c at line ~d column ~d closes no bracket: remove it", [Close, Line, Column])
        ;   Open = [Bracket-Opened|_],
            Bracket \== Open0,
            offset_where(Opened, Src, pos(_, L0, C0)),
            closing(Bracket, Wanted),
            format(string(Hint), "the ~c at line ~d column ~d does not close the ~c at line ~d column ~d: close that with ~c",
                   [Close, Line, Column, Bracket, L0, C0, Wanted])
        )
    ).

closing(0'(, 0')).
closing(0'[, 0']).
closing(0'{, 0'}).

%   next_code(+Text, +Offset, -Codes, -At): Codes are the codes of Text
%   from At, the first character after Offset that is no layout.

next_code(Text, Offset, Codes, At) :-
    sub_string(Text, Offset, _, 0, Rest),
    string_codes(Rest, [_|After]),
    layout_end(After, 0, Skip),
    length(Layout, Skip),
    append(Layout, Codes, After),
    At is Offset + 1 + Skip.

%   clause_end(+Codes): Codes are the end of the text, or a full stop.

clause_end([]).
clause_end([0'.]).
clause_end([0'., C|_]) :-
    code_type(C, space).

open_brackets(Codes, O, Open0, Open) :-
    (   token(Codes, O, Token, Rest, O1)
    ->  (   Token = char(C), memberchk(C, `([{`)
        ->  open_brackets(Rest, O1, [C-O|Open0], Open)
        ;   Token = char(C), memberchk(C, `)]}`)
        ->  (   Open0 = [_|Open1] -> true ; Open1 = [] ),
            open_brackets(Rest, O1, Open1, Open)
        ;   open_brackets(Rest, O1, Open0, Open)
        )
    ;   Open = Open0
    ).

%   variable_alias(+Src, +Offset, -Name, -Op): after the layout at
%   Offset in the text comes the word Name, a capitalised alias of
%   the operator Op (`SEQ`), which unquoted is a variable.

variable_alias(Src, Offset, Name, Op) :-
    word_after(Src, Offset, upper, Name),
    etalis_operator_alias(Name, Op, _).

%   word_after(+Src, +Offset, +Type, -Word): after the layout at Offset
%   in the text comes the word Word, its first character of code_type/2
%   Type.

word_after(src(_, Text, _), Offset, Type, Word) :-
    sub_string(Text, Offset, _, 0, Rest),
    string_codes(Rest, Codes),
    layout_end(Codes, 0, Skip),
    length(Layout, Skip),
    append(Layout, Following, Codes),
    Following = [C|_],
    code_type(C, Type),
    name_chars(Following, 0, _, _, WordCodes),
    atom_codes(Word, WordCodes).

%   misspelt_operator(+Src, +Offset, -Word, -Op): after the layout at
%   Offset in the text comes the word Word, no operator itself but one
%   edit (two in a name of five letters or more) from the operator Op.

misspelt_operator(Src, Offset, Word, Op) :-
    word_after(Src, Offset, lower, Word),
    \+ etl_operator(_, _, Word),
    atom_codes(Word, WordCodes),
    findall(D-Op0,
            ( etl_operator(_, _, Op0),
              atom_codes(Op0, OpCodes),
              OpCodes = [_, _|_],
              forall(member(O, OpCodes), code_type(O, csym)),
              edit_distance(WordCodes, OpCodes, D),
              length(OpCodes, N),
              D =< min(2, N // 3)
            ),
            Near),
    keysort(Near, [_-Op|_]).

%   edit_distance(+As, +Bs, -D): the Levenshtein distance of two code
%   lists, and 1 for two neighbours swapped (adn for and).

edit_distance(As, Bs, 1) :-
    append(Before, [X, Y|After], As),
    X \== Y,
    append(Before, [Y, X|After], Bs),
    !.
edit_distance(As, Bs, D) :-
    length(Bs, N),
    numlist(0, N, Row0),
    foldl(edit_row(Bs), As, Row0-0, Row-_),
    last(Row, D).

edit_row(Bs, A, [Diag|Up]-I0, [I|Cells]-I) :-
    I is I0 + 1,
    edit_cells(Bs, A, Diag, Up, I, Cells).

edit_cells([], _, _, [], _, []).
edit_cells([B|Bs], A, Diag, [Up|Ups], Left, [C|Cs]) :-
    (   A == B -> Cost = 0 ; Cost = 1 ),
    C is min(min(Up + 1, Left + 1), Diag + Cost),
    edit_cells(Bs, A, Up, Ups, C, Cs).

syntax_error_offset(stream(_, _, _, CharNo), _, CharNo) :- !.
syntax_error_offset(string(_, CharNo), _, CharNo) :- !.
syntax_error_offset(_, Start, Start).

unclosed_kind(end_of_file_in_block_comment, comment).
unclosed_kind(end_of_file_in_quoted(Q), quoted(C)) :-
    char_code(Q, C).

unclosed_hint(comment, "close the comment with */").
unclosed_hint(quoted(0'\'), "close the quoted atom with '; write \\' for a quote inside it").
unclosed_hint(quoted(0'"), "close the string with \"; write \\\" for a quote inside it").
unclosed_hint(quoted(0'`), "close the text with `").

%   unclosed(+Codes, +Offset, +Kind, -At): At is the offset where a
%   comment or quoted text of Kind opens in Codes (the text from Offset
%   on) and is never closed, skipping comments and quoted text that are.

unclosed(Codes, O, Kind, At) :-
    token(Codes, O, Token, Rest, O1),
    (   Token = unclosed(Kind0, At0)
    ->  Kind0 == Kind,
        At = At0
    ;   unclosed(Rest, O1, Kind, At)
    ).
