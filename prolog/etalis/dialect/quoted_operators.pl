:- module(etalis_quoted_operators,
          [ etalis_quoted_operators/2,  % +Text, -Read
            etalis_operator_alias/3     % +Quoted, -Operator, -Kind
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module('../compiler/optable', [etl_operator/3]).
:- use_module('../reader/tokens', [token/5]).

/** <module> Original ETALIS's quoted operators

Rule files written for original ETALIS quote their operators (`a 'seq'
b`, `a 'SEQ' b`, `r1 'rule:' h <- a`): ETALIS ran on Prologs where a
quoted atom is an operator as the unquoted one is, and SWI-Prolog 7
reads it as a plain atom.  This module writes them unquoted before the
text is read, in as many characters, so that positions stay.
*/

%!  etalis_quoted_operators(+Text, -Read) is det.
%
%   Read is Text with every quoted operator of original ETALIS between
%   two operands (`a 'seq' b`, `a 'SEQ' b`, `r1 'rule:' h <- a`), or after
%   one for a postfix operator (`b 'star_times'`), written unquoted, in
%   as many characters, so that positions stay.  ETALIS ran on Prologs
%   where a quoted atom is an operator as the unquoted one is;
%   SWI-Prolog 7 reads it as a plain atom (and `'a' 'seq' 'b'` as a
%   syntax error).  The capitalised aliases (`'SEQ'`, `'Seq'`) become the
%   operator they stand for, and `'rule:'` the label operator `:`.  A
%   quoted atom anywhere else (`f('seq')`, `'seq'(a, b)`) is left alone.

etalis_quoted_operators(Text, Read) :-
    string_codes(Text, Codes),
    quoted_operators(Codes, 0, none, Edits),
    (   Edits == []
    ->  Read = Text
    ;   apply_edits(Edits, Text, 0, Parts),
        atomic_list_concat(Parts, Read0),
        atom_string(Read0, Read)
    ).

%   quoted_operators(+Codes, +Offset, +Before, -Edits): Edits are
%   At-Replacement for the quoted operators of Codes (the text from
%   Offset on); Before says whether the token before ends an operand.

quoted_operators(Codes, O, Before, Edits) :-
    (   token(Codes, O, Token, Rest, O1)
    ->  (   layout_token(Token)
        ->  quoted_operators(Rest, O1, Before, Edits)
        ;   Token == quoted, Before == operand,
            Codes = [0'\'|_],
            quoted_operator(Codes, O, O1, Rest, Replacement)
        ->  Edits = [O-Replacement|Edits1],
            quoted_operators(Rest, O1, none, Edits1)
        ;   ends_operand(Token)
        ->  quoted_operators(Rest, O1, operand, Edits)
        ;   quoted_operators(Rest, O1, none, Edits)
        )
    ;   Edits = []
    ).

layout_token(comment).
layout_token(char(C)) :- code_type(C, space).

ends_operand(name).
ends_operand(quoted).
ends_operand(char(C)) :- memberchk(C, `)]}`).

%   quoted_operator(+Codes, +From, +To, +Rest, -Replacement): the quoted
%   atom Codes[From..To) is an ETALIS operator, not applied to arguments,
%   and an operand follows; Replacement is its unquoted spelling padded
%   with spaces to the same length.

quoted_operator(Codes, From, To, Rest, Replacement) :-
    Len is To - From,
    Inner is Len - 2,
    Inner > 0,
    length(Quoted, Len),
    append(Quoted, _, Codes),
    Quoted = [_|Tail],
    append(NameCodes, [_], Tail),
    atom_codes(Name, NameCodes),
    etalis_operator_alias(Name, Op, Kind),
    Rest \= [0'(|_],
    (   Kind == infix
    ->  operand_follows(Rest, From)
    ;   \+ operand_follows(Rest, From)
    ),
    atom_length(Op, OpLen),
    Pad is Len - OpLen,
    Pad >= 2,
    Left is Pad // 2,
    Right is Pad - Left,
    length(LeftSpaces, Left), maplist(=(0' ), LeftSpaces),
    length(RightSpaces, Right), maplist(=(0' ), RightSpaces),
    atom_codes(Op, OpCodes),
    append([LeftSpaces, OpCodes, RightSpaces], ReplacementCodes),
    string_codes(Replacement, ReplacementCodes).

operand_follows(Codes, O) :-
    token(Codes, O, Token, Rest, O1),
    (   layout_token(Token)
    ->  operand_follows(Rest, O1)
    ;   Token == name
    ->  true
    ;   Token == quoted
    ->  true
    ;   Token = char(C),
        memberchk(C, `([{`)
    ).

%!  etalis_operator_alias(+Quoted, -Operator, -Kind) is semidet.
%
%   Quoted is written for the infix or postfix (Kind) operator Operator
%   in original ETALIS: the operator itself, or one of ETALIS's
%   capitalised aliases (SEQ, Seq, FORALL_SEQ, Forall_Seq,
%   Event_multiply, ...), or `rule:` for a rule label.

etalis_operator_alias('rule:', :, infix) :- !.
etalis_operator_alias(Quoted, Op, Kind) :-
    downcase_atom(Quoted, Op),
    etl_operator(_, Type, Op),
    operator_kind(Type, Kind),
    (   Quoted == Op
    ->  true
    ;   upcase_atom(Op, Quoted)
    ->  true
    ;   atomic_list_concat(Parts, '_', Op),
        maplist(capitalised, Parts, Capitalised),
        (   atomic_list_concat(Capitalised, '_', Quoted)
        ;   Capitalised = [First|_],
            Parts = [_|More],
            atomic_list_concat([First|More], '_', Quoted)
        )
    ->  true
    ).

operator_kind(xfx, infix).
operator_kind(xfy, infix).
operator_kind(yfx, infix).
operator_kind(xf, postfix).
operator_kind(yf, postfix).

capitalised(Word, Capitalised) :-
    sub_atom(Word, 0, 1, After, First),
    sub_atom(Word, 1, After, 0, Rest),
    upcase_atom(First, Upper),
    atom_concat(Upper, Rest, Capitalised).

apply_edits([], Text, At, [Tail]) :-
    sub_string(Text, At, _, 0, Tail).
apply_edits([O-Replacement|Edits], Text, At, [Before, Replacement|Parts]) :-
    Len is O - At,
    sub_string(Text, At, Len, _, Before),
    string_length(Replacement, RLen),
    Next is O + RLen,
    apply_edits(Edits, Text, Next, Parts).
