:- module(etalis_decode,
          [ decode_bytes/3,             % +Bytes, +File, -Codes
            etl_file_encoding/3,        % +File, -Encoding, -Where
            encoding_hint/3,            % +File, +Hint0, -Hint
            rule_text_bound/3,          % +Size, +Source, +Unit
            too_large/3                 % +Source, +Size, +Unit
          ]).
:- use_module(library(error)).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module('../errors', [etalis_error/3]).
:- use_module(positions, [source_text/3, offset_where/3]).

/** <module> The bytes of a rule file as characters

A rule file is UTF-8 (a byte order mark is skipped) or, after a UTF-16
byte order mark, UTF-16; a file without byte order mark that is not
UTF-8 but is Windows-1252 text is read as Windows-1252, as original
ETALIS on SWI-Prolog and XSB read source files.  A rule file or text
is read whole, and so is bounded in size.
*/

%!  rule_text_bound(+Size, +Source, +Unit) is det.
%
%   A rule file or text is read whole, so it may hold at most 10,000,000
%   Units (bytes of a file, characters of a text), whatever room the
%   stacks have.
%
%   @error etalis_error(Message, Hint) at the start of Source if it
%   holds more.

rule_text_bound(Size, Source, Unit) :-
    (   Size =< 10_000_000
    ->  true
    ;   format(string(M), "rule file is too large to read: ~D ~w, more than the 10,000,000 a rule file may hold",
               [Size, Unit]),
        etalis_error(M, "split it into several files: the rules, and --static files of its facts and static rules \c
                         (each is read on its own)",
                     pos(Source, 1, 1))
    ).

%!  too_large(+Source, +Size, +Unit) is det.
%
%   Throw the error that reading the rule file or text Source, of Size
%   Units, ran out of stack.

too_large(Source, Size, Unit) :-
    current_prolog_flag(stack_limit, Limit),
    format(string(M), "rule file is too large to read: ~D ~w, within a stack limit of ~D bytes", [Size, Unit, Limit]),
    etalis_error(M, "split it into several files: the rules, and --static files of its facts and static rules \c
                     (each is read on its own)",
                 pos(Source, 1, 1)).

%!  encoding_hint(+File, +Hint0, -Hint) is det.
%
%   An error in a file read as Windows-1252 says so, since a character
%   read wrongly may be its cause.

encoding_hint(File, H0, H) :-
    (   etl_file_encoding(File, Encoding, pos(_, Line, Column))
    ->  format(string(Note), "the file is not UTF-8 from line ~w column ~w on, and is read as ~w",
               [Line, Column, Encoding]),
        (   H0 == ""
        ->  H = Note
        ;   format(string(H), "~w (~w)", [H0, Note])
        )
    ;   H = H0
    ).

%!  decode_bytes(+Bytes, +File, -Codes) is det.
%
%   Codes are the characters of the bytes Bytes of the rule file File.
%
%   @error etalis_error(Message, Hint) at the first byte that is not part
%   of one.

decode_bytes([0xFF, 0xFE|Bytes], File, Codes) :- !,
    decode_all(utf16(le), Bytes, File, Codes).
decode_bytes([0xFE, 0xFF|Bytes], File, Codes) :- !,
    decode_all(utf16(be), Bytes, File, Codes).
decode_bytes([0xEF, 0xBB, 0xBF|Bytes], File, Codes) :- !,
    decode_all(utf8, Bytes, File, Codes).
decode_bytes(Bytes, File, Codes) :-
    (   decode(Bytes, utf8, Codes0, [])
    ->  Codes = Codes0
    ;   \+ utf8_multibyte(Bytes),
        maplist(windows_1252, Bytes, Codes0)
    ->  Codes = Codes0
    ;   decode_all(utf8, Bytes, File, Codes)
    ).

%!  etl_file_encoding(+File, -Encoding, -Where) is semidet.
%
%   The rule file File is read as Windows-1252 (Encoding is the atom
%   'Windows-1252') because it is not UTF-8; Where is the position of
%   its first byte that is not UTF-8.  Fails for a file read otherwise.

etl_file_encoding(File, 'Windows-1252', Where) :-
    must_be(atom, File),
    exists_file(File),
    read_file_to_codes(File, Bytes, [type(binary)]),
    Bytes \= [0xFF, 0xFE|_], Bytes \= [0xFE, 0xFF|_], Bytes \= [0xEF, 0xBB, 0xBF|_],
    decode(Bytes, utf8, Before, Rest),
    Rest \== [],
    \+ utf8_multibyte(Bytes),
    maplist(windows_1252, Bytes, _),
    string_codes(Prefix, Before),
    string_length(Prefix, Offset),
    source_text(File, Prefix, Src),
    offset_where(Offset, Src, Where).

%   utf8_multibyte(+Bytes): Bytes hold a character of UTF-8 beyond
%   ASCII: a file with one is damaged UTF-8, not Windows-1252.

utf8_multibyte([B|Bs]) :-
    (   B >= 0xC2,
        char_bytes(utf8, _, [B|Bs], _)
    ->  true
    ;   utf8_multibyte(Bs)
    ).

%   windows_1252(+Byte, -Code): the character of a byte of Windows-1252
%   text; fails for a control character (other than tab, line and page
%   ends) and for the bytes the encoding leaves undefined.

windows_1252(B, C) :-
    (   B >= 0xA0
    ->  C = B
    ;   B >= 0x80
    ->  cp1252_high(B, C)
    ;   B >= 0x20, B =\= 0x7F
    ->  C = B
    ;   memberchk(B, [0x09, 0x0A, 0x0B, 0x0C, 0x0D]),
        C = B
    ).

cp1252_high(0x80, 0x20AC). cp1252_high(0x82, 0x201A). cp1252_high(0x83, 0x0192).
cp1252_high(0x84, 0x201E). cp1252_high(0x85, 0x2026). cp1252_high(0x86, 0x2020).
cp1252_high(0x87, 0x2021). cp1252_high(0x88, 0x02C6). cp1252_high(0x89, 0x2030).
cp1252_high(0x8A, 0x0160). cp1252_high(0x8B, 0x2039). cp1252_high(0x8C, 0x0152).
cp1252_high(0x8E, 0x017D). cp1252_high(0x91, 0x2018). cp1252_high(0x92, 0x2019).
cp1252_high(0x93, 0x201C). cp1252_high(0x94, 0x201D). cp1252_high(0x95, 0x2022).
cp1252_high(0x96, 0x2013). cp1252_high(0x97, 0x2014). cp1252_high(0x98, 0x02DC).
cp1252_high(0x99, 0x2122). cp1252_high(0x9A, 0x0161). cp1252_high(0x9B, 0x203A).
cp1252_high(0x9C, 0x0153). cp1252_high(0x9E, 0x017E). cp1252_high(0x9F, 0x0178).

decode_all(Encoding, Bytes, File, Codes) :-
    decode(Bytes, Encoding, Codes, Rest),
    (   Rest == []
    ->  true
    ;   append(Valid, Rest, Bytes),
        decode(Valid, Encoding, Before, []),
        string_codes(Prefix, Before),
        string_length(Prefix, Offset),
        source_text(File, Prefix, Src),
        offset_where(Offset, Src, Where),
        Where = pos(_, Line, Column),
        Rest = [Byte|_],
        encoding_name(Encoding, Name, Hint),
        format(string(M), "rule file is not ~w: byte 0x~|~`0t~16R~2+ at line ~d column ~d",
               [Name, Byte, Line, Column]),
        etalis_error(M, Hint, Where)
    ).

encoding_name(utf8, 'UTF-8',
              "save the rule file as UTF-8 text (this looks like Latin-1, Windows-1252 or binary data)").
encoding_name(utf16(_), 'UTF-16',
              "it starts with a UTF-16 byte order mark but is cut or damaged there; save it as UTF-8 text").

%   decode(+Bytes, +Encoding, -Codes, -Rest): Codes are the characters
%   of the longest valid prefix of Bytes; Rest is what follows it.

decode(Bytes, Encoding, [C|Cs], Rest) :-
    char_bytes(Encoding, C, Bytes, Bytes1),
    !,
    decode(Bytes1, Encoding, Cs, Rest).
decode(Rest, _, [], Rest).

char_bytes(utf8, C) --> [B0], { B0 < 0x80 }, !, { C = B0 }.
char_bytes(utf8, C) --> [B0], { between(0xC2, 0xDF, B0) }, !,
    continuation(B1),
    { C is (B0 /\ 0x1F) << 6 \/ B1 }.
char_bytes(utf8, C) --> [B0], { between(0xE0, 0xEF, B0) }, !,
    continuation(B1), continuation(B2),
    { C is (B0 /\ 0x0F) << 12 \/ B1 << 6 \/ B2,
      C >= 0x800, \+ surrogate(C) }.
char_bytes(utf8, C) --> [B0], { between(0xF0, 0xF4, B0) },
    continuation(B1), continuation(B2), continuation(B3),
    { C is (B0 /\ 0x07) << 18 \/ B1 << 12 \/ B2 << 6 \/ B3,
      between(0x10000, 0x10FFFF, C) }.
char_bytes(utf16(Order), C) -->
    unit16(Order, U),
    (   { between(0xD800, 0xDBFF, U) }
    ->  unit16(Order, L),
        { between(0xDC00, 0xDFFF, L),
          C is 0x10000 + (U - 0xD800) << 10 + (L - 0xDC00) }
    ;   { \+ surrogate(U), C = U }
    ).

continuation(Bits) --> [B], { B /\ 0xC0 =:= 0x80, Bits is B /\ 0x3F }.

unit16(le, U) --> [Lo, Hi], { U is Hi << 8 \/ Lo }.
unit16(be, U) --> [Hi, Lo], { U is Hi << 8 \/ Lo }.

surrogate(C) :-
    between(0xD800, 0xDFFF, C).
