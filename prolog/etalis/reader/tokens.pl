:- module(etalis_tokens,
          [ token/5,                    % +Codes, +Offset, -Token, -Rest, -RestOffset
            name_chars/5,               % +Codes, +Offset, -Rest, -RestOffset, -Name
            layout_end/3,               % +Codes, +Offset, -At
            no_control_character/1,     % +Src
            not_too_deep/1              % +Src
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module('../errors', [etalis_error/3]).
:- use_module(positions, [offset_where/3]).

/** <module> The text of a rule file, before it is read

What the reader needs to know of the characters of a rule file before
SWI-Prolog's reader sees it, and to explain where that reader stopped:
that it holds no control characters and brackets nested no deeper than
the reader can follow, and its tokens as far as brackets, comments and
quotes go (token/5).
*/

%!  no_control_character(+Src) is det.
%
%   A rule file is text: a control character other than a tab, a line
%   or a page break means binary data (or UTF-16 read as UTF-8).
%
%   @error etalis_error(Message, Hint) at the first such character, or
%   at a byte order mark after the start.

no_control_character(Src) :-
    Src = src(_, Text, _),
    string_codes(Text, Codes),
    (   nth0(Offset, Codes, C), ( control_character(C) ; C =:= 0xFEFF )
    ->  offset_where(Offset, Src, Where),
        (   C =:= 0xFEFF                % the start's was dropped: the start of a file joined on
        ->  etalis_error("rule file contains a byte order mark (U+FEFF), which only starts a file",
                         "were two files joined (cat a.etl b.etl)? remove the mark", Where)
        ;   format(string(M), "rule file contains the control character 0x~|~`0t~16R~2+", [C]),
            etalis_error(M, "a rule file is text: remove the character (is this a binary file, or UTF-16 without a byte order mark?)",
                         Where)
        )
    ;   true
    ).

%!  not_too_deep(+Src) is det.
%
%   The brackets of the text of Src are nested at most max_nesting/1
%   deep, as far as SWI-Prolog's reader can follow them.
%
%   @error etalis_error(Message, Hint) at the first bracket too deep.

not_too_deep(Src) :-
    Src = src(_, Text, _),
    string_codes(Text, Codes),
    (   too_deep(Codes, 0, 0, Offset)
    ->  offset_where(Offset, Src, Where),
        max_nesting(Max),
        format(string(M), "brackets nested more than ~d deep", [Max]),
        etalis_error(M, "split the pattern into several rules with intermediate events", Where)
    ;   true
    ).

control_character(C) :-
    C < 0x20,
    \+ memberchk(C, [0'\t, 0'\n, 0'\v, 0'\f, 0'\r]).
control_character(0x7F).

%   too_deep(+Codes, +Offset, +Depth, -At): a bracket at At (in Codes,
%   the text from Offset on) opens more than max_nesting/1 levels; the
%   reader would need more C stack than it has.

too_deep(Codes, O, Depth, At) :-
    token(Codes, O, Token, Rest, O1),
    (   Token = char(C), memberchk(C, `([{`)
    ->  Depth1 is Depth + 1,
        (   max_nesting(Max), Depth1 > Max
        ->  At = O
        ;   too_deep(Rest, O1, Depth1, At)
        )
    ;   Token = char(C), memberchk(C, `)]}`)
    ->  Depth1 is max(0, Depth - 1),
        too_deep(Rest, O1, Depth1, At)
    ;   Token \= unclosed(_, _),
        too_deep(Rest, O1, Depth, At)
    ).

max_nesting(1000).

%!  token(+Codes, +Offset, -Token, -Rest, -RestOffset) is semidet.
%
%   The first token of Codes as far as brackets, comments and quotes go:
%   a comment, a name, a quoted text, an unclosed(Kind, At) comment or
%   quote, or char(C).  Fails on the end of the text.

token([0'%|Cs], O, comment, Rest, O2) :- !,
    O1 is O + 1,
    line_end(Cs, O1, Rest, O2).
token([0'/, 0'*|Cs], O, Token, Rest, O2) :- !,
    O1 is O + 2,
    (   comment_end(Cs, O1, Rest, O2)
    ->  Token = comment
    ;   Token = unclosed(comment, O), Rest = [], O2 = O
    ).
token([Q|Cs], O, Token, Rest, O2) :-
    memberchk(Q, `'"\``), !,
    O1 is O + 1,
    (   quoted_end(Cs, Q, O1, Rest, O2)
    ->  Token = quoted
    ;   Token = unclosed(quoted(Q), O), Rest = [], O2 = O
    ).
token([C|Cs], O, name, Rest, O4) :-
    code_type(C, csym), !,
    O1 is O + 1,
    name_chars(Cs, O1, Cs1, O2, Name),
    (   Cs1 = [0'\'|Cs2], C == 0'0, Name == []
    ->  O3 is O2 + 1,                       % 0'c
        char_literal(Cs2, O3, Rest, O4)
    ;   Cs1 = [0'\'|Rest], maplist([D]>>code_type(D, digit), [C|Name])
    ->  O4 is O2 + 1                        % radix notation: 16'FF
    ;   Rest = Cs1,
        O4 = O2
    ).
token([C|Cs], O, char(C), Cs, O1) :-
    O1 is O + 1.

%!  name_chars(+Codes, +Offset, -Rest, -RestOffset, -Name) is det.
%
%   Name are the letters, digits and underscores that Codes (at Offset)
%   start with; Rest, at RestOffset, what follows them.  Like the
%   predicates after it, it takes codes and the offset of the first, and
%   gives what follows the construct and its offset.

name_chars([C|Cs], O, Rest, O2, [C|Name]) :-
    code_type(C, csym), !,
    O1 is O + 1,
    name_chars(Cs, O1, Rest, O2, Name).
name_chars(Cs, O, Cs, O, []).

char_literal([0'\\, _|Cs], O, Cs, O1) :- !, O1 is O + 2.
char_literal([0'\', 0'\'|Cs], O, Cs, O1) :- !, O1 is O + 2.
char_literal([_|Cs], O, Cs, O1) :- !, O1 is O + 1.
char_literal([], O, [], O).

line_end([], O, [], O).
line_end([0'\n|Cs], O, Cs, O1) :- !, O1 is O + 1.
line_end([_|Cs], O, Rest, O2) :-
    O1 is O + 1,
    line_end(Cs, O1, Rest, O2).

comment_end([0'*, 0'/|Cs], O, Cs, O1) :- !, O1 is O + 2.
comment_end([_|Cs], O, Rest, O2) :-
    O1 is O + 1,
    comment_end(Cs, O1, Rest, O2).

%!  layout_end(+Codes, +Offset, -At) is det.
%
%   At is the offset of the first code after the layout and comments
%   that Codes start with.

layout_end([C|Cs], O, At) :-
    code_type(C, space), !,
    O1 is O + 1,
    layout_end(Cs, O1, At).
layout_end([0'%|Cs], O, At) :- !,
    O1 is O + 1,
    line_end(Cs, O1, Cs1, O2),
    layout_end(Cs1, O2, At).
layout_end([0'/, 0'*|Cs], O, At) :-
    O1 is O + 2,
    comment_end(Cs, O1, Cs1, O2), !,
    layout_end(Cs1, O2, At).
layout_end(_, At, At).

%   quoted_end(+Codes, +Quote, +Offset, -Rest, -RestOffset): Codes,
%   inside quoted text at Offset, close with Quote before Rest.

quoted_end([0'\\, _|Cs], Q, O, Rest, O2) :- !,
    O1 is O + 2,
    quoted_end(Cs, Q, O1, Rest, O2).
quoted_end([Q, Q|Cs], Q, O, Rest, O2) :- !,
    O1 is O + 2,
    quoted_end(Cs, Q, O1, Rest, O2).
quoted_end([Q|Cs], Q, O, Cs, O1) :- !,
    O1 is O + 1.
quoted_end([_|Cs], Q, O, Rest, O2) :-
    O1 is O + 1,
    quoted_end(Cs, Q, O1, Rest, O2).
