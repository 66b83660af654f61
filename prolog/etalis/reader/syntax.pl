:- module(etalis_syntax,
          [ read_etl_file/2,            % +File, -Items
            etl_file_encoding/3,        % +File, -Encoding, -Where
            read_etl_string/3,          % +Text, +Source, -Items
            etalis_error/3,             % +Message, +Hint, +Where
            syntax_message/2,           % +What, -Message
            duration_seconds/3,         % +Duration, +Where, -Seconds
            finite_number/1,            % @X
            pattern_text/2,             % +Pattern, -Text
            pattern_functor/1,          % @Term
            kleene_event/1,             % +Event
            correlated_conditions/2,    % +Pattern0, -Pattern
            run_event/2                 % +Event, -Kind
          ]).
:- use_module(library(error)).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- reexport('../compiler/optable', [etl_operator/3, temporal_operator/1]).
:- use_module('../dialect/etalis_library', [etalis_library_items/2]).
:- use_module('../compiler/optable', [operator/3, map_sub_patterns/3]).

/** <module> Reading ETALIS Language for Events (.etl) files

An `.etl` file is read with SWI-Prolog's own reader and the ETALIS
operator table (etalis_optable), so a file that original ETALIS accepts (written
with unquoted operators) reads the same here.  Unlike ETALIS, `*`, `#`,
`/\` and `\/` keep their Prolog meaning, so `W2 >= W1 * 1.1` in a
`where` condition is arithmetic.

Each clause of the file becomes one item:

  - rule(Label, Head, Pattern, Where, VarNames)
    An event rule `Head <- Pattern` or `Label : Head <- Pattern`.
    Pattern is validated and normalised into the pattern language:
    `event(E)`, `op(Op, P, Q)` for the temporal binary operators,
    `or(P, Q)`, `cnot(P, C)`, `fnot(P, C)`, `where(P, Goal)`, `within(P, Seconds)` and
    aggregate(Fun, X, P, Window, Result); `iteration(P, N)` is unrolled
    into a sequence.
  - static(Clause, Where)
    A static Prolog rule or fact: background knowledge.
  - directive(Directive, Where)

Files written for original ETALIS read with ETALIS's meaning: quoted
operators and their capitalised aliases (etalis_quoted_operators/2),
`'rule:'` labels, label properties (rule_property/4), `do` actions
(rule_action/3), and print_trigger/1 and event_rule_property/3 facts
(etalis_declarations/2).

Where is `pos(Source, Line, Column)` (both 1-based).  All errors are
thrown as error(etalis_error(Message, Hint), pos(Source, Line, Column)).
*/

%   The operators of the table (etalis_optable) are declared in this
%   module, where rule files are read and patterns written: at load, and
%   again before each read, so that an operator added to the table later
%   is known too.

declare_operators :-
    forall(etl_operator(P, T, N), op(P, T, etalis_syntax:N)).

:- declare_operators.

%!  pattern_text(+Pattern, -Text) is det.
%
%   Text shows the pattern term Pattern (written with the event
%   operators, e.g. `a(X) seq b(X)`) as a rule file would, variables as
%   A, B, ... (`_` for those that occur once).

pattern_text(Pattern, Text) :-
    copy_term(Pattern, T),
    numbervars(T, 0, _, [singletons(true)]),
    with_output_to(string(Text), write_pattern(T, 1200)).

write_pattern(T, Max) :-
    compound(T),
    compound_name_arguments(T, Op, [L, R]),
    etl_operator(P, Type, Op),
    !,
    argument_priorities(Type, P, LP, RP),
    (   P > Max -> write('(') ; true ),
    write_pattern(L, LP),
    format(" ~w ", [Op]),
    write_pattern(R, RP),
    (   P > Max -> write(')') ; true ).
write_pattern(T, Max) :-
    write_term(T, [quoted(true), numbervars(true), spacing(next_argument),
                   priority(Max), module(etalis_syntax)]).

argument_priorities(xfx, P, A, A) :- A is P - 1.
argument_priorities(yfx, P, P, A) :- A is P - 1.
argument_priorities(xfy, P, A, P) :- A is P - 1.

%!  read_etl_file(+File, -Items) is det.
%
%   Read all items of the rule file File.  The file is UTF-8 (a byte
%   order mark is skipped) or, after a UTF-16 byte order mark, UTF-16.
%   A file without byte order mark that is not UTF-8 is read as
%   Windows-1252 (Latin-1 with printable characters at 0x80-0x9F), as
%   original ETALIS on SWI-Prolog and XSB read source files, if it is
%   text in that encoding: no control characters but tab, line and page
%   ends, none of the five bytes Windows-1252 leaves undefined, and no
%   valid UTF-8 character beyond ASCII, which would make it damaged UTF-8
%   (etl_file_encoding/3 says where, for a warning).  Anything else is
%   refused at the first byte that is not UTF-8.
%
%   @error existence_error(source_sink, File) if File does not exist.
%   @error etalis_error(Message, Hint) with the position of the problem,
%          also for a byte that is not UTF-8.

read_etl_file(File, Items) :-
    must_be(atom, File),
    (   exists_file(File)
    ->  true
    ;   existence_error(source_sink, File)
    ),
    size_file(File, Bytes0),
    rule_text_bound(Bytes0, File, bytes),
    catch(( read_file_to_codes(File, Bytes, [type(binary)]),
            decode_bytes(Bytes, File, Codes),
            string_codes(Text, Codes),
            catch(read_etl_string(Text, File, Items), error(etalis_error(M, H0), Where),
                  ( encoding_hint(File, H0, H),
                    throw(error(etalis_error(M, H), Where)) )) ),
          error(resource_error(_), _),
          ( size_file(File, Size), too_large(File, Size, bytes) )).

%   rule_text_bound(+Size, +Source, +Unit): a rule file or text is read
%   whole, so it may hold at most 10,000,000 Units (bytes of a file,
%   characters of a text), whatever room the stacks have.

rule_text_bound(Size, Source, Unit) :-
    (   Size =< 10_000_000
    ->  true
    ;   format(string(M), "rule file is too large to read: ~D ~w, more than the 10,000,000 a rule file may hold",
               [Size, Unit]),
        etalis_error(M, "split it into several files: the rules, and --static files of its facts and static rules \c
                         (each is read on its own)",
                     pos(Source, 1, 1))
    ).

%   too_large(+Source, +Size, +Unit): reading the rule file or text
%   Source, of Size Units, ran out of stack.

too_large(Source, Size, Unit) :-
    current_prolog_flag(stack_limit, Limit),
    format(string(M), "rule file is too large to read: ~D ~w, within a stack limit of ~D bytes", [Size, Unit, Limit]),
    etalis_error(M, "split it into several files: the rules, and --static files of its facts and static rules \c
                     (each is read on its own)",
                 pos(Source, 1, 1)).

%   encoding_hint(+File, +Hint0, -Hint): an error in a file read as
%   Windows-1252 says so, since a character read wrongly may be its cause.

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

%   decode_bytes(+Bytes, +File, -Codes): the characters of a rule file,
%   or an error at the first byte that is not part of one.

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

%!  read_etl_string(+Text, +Source, -Items) is det.
%
%   Read all items of Text; Source names it in positions and errors.  A
%   leading byte order mark (U+FEFF) is skipped.

read_etl_string(Text, Source, Items) :-
    must_be(string, Text),
    string_length(Text, Length),
    rule_text_bound(Length, Source, characters),
    catch(read_text_items(Text, Source, Items),
          error(resource_error(_), _),
          ( string_length(Text, Size), too_large(Source, Size, characters) )).

read_text_items(Text0, Source, Items) :-
    (   sub_string(Text0, 0, 1, _, "\uFEFF")
    ->  sub_string(Text0, 1, _, 0, Text)
    ;   Text = Text0
    ),
    declare_operators,
    source_text(Source, Text, Src),
    no_control_character(Src),
    not_too_deep(Src),
    etalis_quoted_operators(Text, Read),
    setup_call_cleanup(
        open_string(Read, In),
        read_items(In, Src, Items0),
        close(In)),
    etalis_declarations(Items0, Items1),
    etalis_library_items(Items1, Items).

%   etalis_quoted_operators(+Text, -Read): Text with every quoted
%   operator of original ETALIS between two operands (`a 'seq' b`,
%   `a 'SEQ' b`, `r1 'rule:' h <- a`), or after one for a postfix
%   operator (`b 'star_times'`), written unquoted, in as many
%   characters, so that positions stay.  ETALIS ran on Prologs where a
%   quoted atom is an operator as the unquoted one is; SWI-Prolog 7
%   reads it as a plain atom (and `'a' 'seq' 'b'` as a syntax error).
%   The capitalised aliases (`'SEQ'`, `'Seq'`) become the operator
%   they stand for, and `'rule:'` the label operator `:`.  A quoted
%   atom anywhere else (`f('seq')`, `'seq'(a, b)`) is left alone.

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

%   etalis_operator_alias(+Quoted, -Operator, -Kind): Quoted is written
%   for the infix or postfix (Kind) operator Operator in original
%   ETALIS: the operator itself, or
%   one of ETALIS's capitalised aliases (SEQ, Seq, FORALL_SEQ,
%   Forall_Seq, Event_multiply, ...), or `rule:` for a rule label.

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


%   source_text(+Source, +Text, -Src): Src holds Text with the offsets
%   of its lines, so that an offset becomes a line and column quickly.

source_text(Source, Text, src(Source, Text, Lines)) :-
    findall(Start, ( sub_string(Text, Before, 1, _, "\n"), Start is Before + 1 ), Starts),
    compound_name_arguments(Lines, lines, [0|Starts]).

%   A rule file is text: a control character other than a tab, a line
%   or a page break means binary data (or UTF-16 read as UTF-8).

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

read_items(In, Src, Items) :-
    read_item_term(In, Src, Term, Pos, VarNames),
    (   Term == end_of_file
    ->  Items = []
    ;   catch(item(Term, Pos, VarNames, Src, Item),
              Error,
              clause_error(Error, Pos, Src)),
        (   Item = items(Some)
        ->  append(Some, Rest, Items)
        ;   Items = [Item|Rest]
        ),
        read_items(In, Src, Rest)
    ).

read_item_term(In, Src, Term, Pos, VarNames) :-
    stream_property(In, position(Here)),
    stream_position_data(char_count, Here, Start),
    catch(read_term(In, Term,
                    [ subterm_positions(Pos),
                      variable_names(VarNames),
                      module(etalis_syntax),
                      syntax_errors(error)
                    ]),
          Error,
          read_error(Error, Start, Src)).

read_error(error(syntax_error(What), Context), Start, Src) :- !,
    syntax_error(What, Context, Start, Src).
read_error(Error, Start, Src) :-
    Src = src(_, Text, _),
    sub_string(Text, Start, _, 0, Rest),
    string_codes(Rest, Codes),
    layout_end(Codes, Start, At),
    clause_error(Error, At-At, Src).

%   clause_error(+Error, +Pos, +Src): an error of ours passes; any other
%   is said in words at the clause's position, never as a Prolog term.

clause_error(error(etalis_error(M, H), Where), _, _) :- !,
    throw(error(etalis_error(M, H), Where)).
clause_error(Error, Pos, Src) :-
    error_words(Error, Words, Hint),
    format(string(M), "cannot read this clause: ~w", [Words]),
    pos_where(Pos, Src, Where),
    etalis_error(M, Hint, Where).

error_words(error(domain_error(compound_non_zero_arity, _), _), "an empty argument list ()",
            "write an atom without parentheses, e.g. a instead of a()") :- !.
error_words(error(resource_error(_), _), "it is too large or nested too deeply",
            "split it into smaller rules, or nest less deeply") :- !.
error_words(error(Formal, _), Words, Hint) :-
    compound(Formal), !,
    compound_name_arguments(Formal, Name, Args),
    name_words(Name, Kind),
    include(atom, Args, Atoms),
    atomic_list_concat([Kind|Atoms], ' ', Words),
    Hint = "simplify the clause; if it looks right, report this as a bug".
error_words(_, "unexpected error", "simplify the clause; if it looks right, report this as a bug").

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

%   token(+Codes, +Offset, -Token, -Rest, -RestOffset): the first token
%   of Codes as far as brackets, comments and quotes go: a comment, a
%   name, a quoted text, an unclosed(Kind, At) comment or quote, or
%   char(C).  Fails on the end of the text.

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

%   Each of these takes codes and the offset of the first, and gives
%   what follows the construct and its offset.

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

%   layout_end(+Codes, +Offset, -At): At is the offset of the first
%   code after the layout and comments that Codes start with.

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

%!  syntax_message(+What, -Message) is det.
%
%   Message says in words what the reader's syntax_error(What) means.

syntax_message(What, Message) :-
    (   syntax_words(What, Body)
    ->  true
    ;   atom(What)
    ->  name_words(What, Body)
    ;   compound(What)
    ->  compound_name_arity(What, Name, _),
        name_words(Name, Body)
    ;   Body = "unreadable text"
    ),
    format(string(Message), "syntax error: ~w", [Body]).

name_words(Name, Words) :-
    atomic_list_concat(Parts, '_', Name),
    atomic_list_concat(Parts, ' ', Words).

syntax_words(end_of_clause, "unexpected end of clause").
syntax_words(end_of_clause_expected, "end of clause (a full stop) expected").
syntax_words(end_of_file, "unexpected end of file").
syntax_words(end_of_file_in_quoted(Quote), Words) :-
    format(string(Words), "a quote (~w) is never closed", [Quote]).
syntax_words(end_of_file_in_block_comment, "a block comment (/*) is never closed").
syntax_words(cannot_start_term, "a term cannot start here").
syntax_words(operator_balance, "unbalanced operator").
syntax_words(operator_clash, "operator priority clash").
syntax_words(quoted_punctuation, "an operand expected, found an unquoted comma or bar").
syntax_words(list_rest, "unexpected comma or bar in the rest of a list").
syntax_words(void_not_allowed, "empty argument list ()").
syntax_words(punct(Punct, End), Words) :-
    format(string(Words), "unexpected ~w before ~w", [Punct, End]).
syntax_words(undefined_char_escape(C), Words) :-
    format(string(Words), "unknown escape \\~w in quoted text", [C]).

%!  etalis_error(+Message, +Hint, +Where) is det.
%
%   Throw an error about a rule file: Message says what is wrong, Hint
%   how to fix it, Where is pos(Source, Line, Column).

etalis_error(Message, Hint, Where) :-
    throw(error(etalis_error(Message, Hint), Where)).

%   Classify one clause of the file.

item(Term, Pos, _, Src, _) :-
    var(Term),
    !,
    pos_where(Pos, Src, Where),
    etalis_error("a clause cannot be a variable", "remove it, or write a fact, a rule or a directive", Where).
item((:- Directive), Pos, _, Src, directive(Directive, Where)) :-
    !,
    pos_where(Pos, Src, Where),
    (   var(Directive)
    ->  etalis_error("a directive cannot be a variable", "write e.g. :- policy(recent).", Where)
    ;   true
    ).
item((?- _), Pos, _, Src, _) :-
    !,
    pos_where(Pos, Src, Where),
    etalis_error("a query (?- Goal) has no place in a rule file",
                 "write a directive (:- Goal.), an event rule or a fact", Where).
item(Term, Pos, VarNames, Src, Item) :-
    compound(Term),
    compound_name_arguments(Term, Name, [Left, Body]),
    operator(Name, _, same_as(<-)),             % ETALIS's iff
    !,
    item((Left <- Body), Pos, VarNames, Src, Item).
item((Left <- Body), Pos, VarNames, Src, Item) :-
    !,
    b_setval(etalis_var_names, VarNames),
    b_setval(etalis_nested_rules, []),
    b_setval(etalis_kleene, []),
    pos_where(Pos, Src, Where),
    pos_args(Pos, 2, [LeftPos, BodyPos]),
    rule_left(Left, LeftPos, Src, Label, Head, Properties, Action),
    (   running_aggregate(Body, BodyPos, Src, rule(Label, Head, Where, VarNames, Properties, Action), Items0)
    ->  true
    ;   pattern(Body, BodyPos, Src, Pattern0),
        rule_action(Action, Pattern0, Pattern1),
        rule_properties(Properties, Pattern1, Pattern2),
        b_getval(etalis_kleene, Kleene),
        reverse(Kleene, InnerFirst),
        kleene_rules(InnerFirst, Pattern2, Pattern3, VarNames),
        correlated_conditions(Pattern3, Pattern),
        Items0 = [rule(Label, Head, Pattern, Where, VarNames)]
    ),
    b_getval(etalis_nested_rules, Nested),
    reverse(Nested, Inner),
    append(Inner, Items0, Items),
    (   Items = [Item]
    ->  true
    ;   Item = items(Items)
    ).
item(Clause, Pos, VarNames, Src, static(Clause, Where)) :-
    b_setval(etalis_var_names, VarNames),
    pos_where(Pos, Src, Where),
    static_clause(Clause, Where).

%   rule_left(+Left, +Pos, +Src, -Label, -Head, -Properties, -Action):
%   the left of `<-`: `Head`, `Label : Head`, and in original ETALIS's
%   forms `Label([property(Name, Value), ...]) : Head` (properties of
%   the rule) and `Head do Action` (a goal run when the rule fires).

rule_left(Left, Pos, Src, Label, Head, Properties, Action) :-
    (   nonvar(Left), Left = do(Left1, Action0)
    ->  pos_args(Pos, 2, [LeftPos, ActionPos]),
        where_goal(Action0, ActionPos, Src),
        Action = Action0,
        rule_left(Left1, LeftPos, Src, Label, Head, Properties, true)
    ;   nonvar(Left), Left = (Label0 : Head0)
    ->  Action = true,
        pos_args(Pos, 2, [LabelPos, HeadPos]),
        pos_where(LabelPos, Src, W),
        rule_label(Label0, W, Label, Properties),
        rule_head(Head0, HeadPos, Src, Head)
    ;   Label = '',
        Properties = [],
        Action = true,
        rule_head(Left, Pos, Src, Head)
    ).

rule_label(Label0, W, Label, Properties) :-
    (   atom(Label0), Label0 \== '', Label0 \== []
    ->  Label = Label0,
        Properties = []
    ;   compound(Label0),
        compound_name_arguments(Label0, Label, [Properties0]),
        Label \== '',
        is_list(Properties0)
    ->  maplist(rule_property(W), Properties0, Properties)
    ;   etalis_error("a rule label must be a non-empty atom", "write e.g. my_rule : h(X) <- a(X) seq b(X).", W)
    ).

%   rule_property(+Where, +Property, -Window): a property of an original
%   ETALIS rule label, as the window it puts on the rule (none for one
%   that changes only when memory is freed).  `event_rule_window` and
%   `window` both keep the occurrences whose interval lasts at most
%   that many seconds (as `within`); `window_step` is how often ETALIS
%   sweeps expired goals, which etalis-py does as events arrive.

rule_property(W, Property, Window) :-
    (   Property = property(Name, Value), atom(Name)
    ->  rule_property(Name, Value, W, Window)
    ;   term_words(Property, Words),
        format(string(M), "~w is not a rule property", [Words]),
        etalis_error(M, "write Label([property(event_rule_window, Seconds)]) : Head <- Pattern.", W)
    ).

rule_property(event_rule_window, D, W, within(S)) :- !,
    duration_seconds(D, W, S).
rule_property(window, D, W, within(S)) :- !,
    duration_seconds(D, W, S).
rule_property(window_step, D, W, none) :- !,
    duration_seconds(D, W, _).
rule_property(Name, _, W, _) :-
    format(string(M), "unknown rule property ~q", [Name]),
    etalis_error(M, "etalis-py knows event_rule_window and window (both as `within`) and window_step (no effect: expired goals are dropped as events arrive); for out-of-order events use the lateness option", W).

%   rule_properties(+Windows, +Pattern0, -Pattern): Pattern0 within
%   each window of the rule's properties.

rule_properties(Windows, Pattern0, Pattern) :-
    foldl(rule_window, Windows, Pattern0, Pattern).

rule_window(none, P, P).
rule_window(within(S), P0, P) :-
    windowed(P0, S, P).

windowed(where(P0, G), S, where(P, G)) :- !,
    windowed(P0, S, P).
windowed(P, S, within(P, S)).

%   rule_action(+Action, +Pattern0, -Pattern): original ETALIS runs the
%   action of `Head do Action <- Pattern` as a condition after the
%   pattern, before the head is derived (its `do` is its `where`).

rule_action(true, P, P) :- !.
rule_action(Action, P, where(P, Action)).

rule_head(Head0, Pos, Src, Head) :-
    pos_where(Pos, Src, Where),
    (   var(Head0)
    ->  etalis_error("the head of an event rule cannot be a variable",
                     "write the complex event, e.g. alarm(X) <- a(X) seq b(X).", Where)
    ;   timer(Head0, Name, E, When0)
    ->  pos_args(Pos, 2, [EPos, WhenPos]),
        rule_head(E, EPos, Src, E1),
        (   E1 = '$timer'(_, _)
        ->  etalis_error("the event of a timer cannot be a timer", "write the event that occurs when the timer is due", Where)
        ;   true
        ),
        pos_where(WhenPos, Src, WhenWhere),
        timer_when(Name, When0, WhenWhere, When),
        Head = '$timer'(E1, When)
    ;   Head = Head0,
        plain_head(Head, Where)
    ).

plain_head(Head, Where) :-
    (   \+ callable(Head)
    ->  term_words(Head, Words),
        format(string(M), "the head of an event rule must be an event, not ~w", [Words]),
        etalis_error(M, "an event is an atom or a compound term such as alarm(X)", Where)
    ;   not_an_event(Head, What)
    ->  format(string(M), "the head of an event rule must be an event, not ~w", [What]),
        etalis_error(M, "an event is an atom or a compound term such as alarm(X)", Where)
    ;   pattern_functor(Head)
    ->  functor(Head, Op, Arity),
        format(string(M), "the head of an event rule must be a single event, not a pattern: ~q/~d is the operator ~q",
               [Op, Arity, Op]),
        etalis_error(M, "put the pattern on the right of <-; an event cannot be named like an operator (`check(R, S)` is `R check S`): rename the event", Where)
    ;   reserved_name(Head)
    ->  etalis_error("event names starting with $ are reserved", "rename the event", Where)
    ;   true
    ).

%   timer(+Head, -Name, -Event, -When): Head is one of original ETALIS's
%   timers: `exceptionAlarm(Event, Seconds)` makes Event occur Seconds
%   after the pattern, `exceptionAlarmAbsoluteDatime(Event, Time)` at
%   Time.  The rule's head becomes '$timer'(Event, after(Seconds)) or
%   '$timer'(Event, at(Time)), which schedules Event in event time (see
%   etalis_runtime:timer_set/5).

timer(exceptionAlarm(E, D), exceptionAlarm, E, after(D)).
timer(exceptionAlarmAbsoluteDatime(E, T), exceptionAlarmAbsoluteDatime, E, at(T)).

%   timer_when(+Name, +When0, +Where, -When): the delay or time of a
%   timer, checked where it is written; a variable is bound by the
%   pattern or its condition and checked when the timer is set.

timer_when(_, When, _, When) :-
    arg(1, When, X),
    var(X),
    !.
timer_when(exceptionAlarm, after(D), Where, after(S)) :-
    (   number(D), finite_number(D), D > 0
    ->  S = D
    ;   term_words(D, Words),
        format(string(M), "the delay of exceptionAlarm/2 must be a positive number of seconds, not ~w", [Words]),
        etalis_error(M, "write e.g. exceptionAlarm(b(X), 60) <- a(X). for b(X) 60 s after a(X)", Where)
    ).
timer_when(exceptionAlarmAbsoluteDatime, at(T), Where, at(S)) :-
    (   number(T), finite_number(T)
    ->  S = T
    ;   T = datime(_, _, _, _, _, _)
    ->  S = T
    ;   T = datime(_, _, _, _, _, _, _)
    ->  S = T
    ;   term_words(T, Words),
        format(string(M), "the time of exceptionAlarmAbsoluteDatime/2 must be a number of seconds or a datime(Y,M,D,H,Min,S), not ~w", [Words]),
        etalis_error(M, "write e.g. exceptionAlarmAbsoluteDatime(c(X), T) <- a(X) where (end(E), T is E + 60).", Where)
    ).

%   not_an_event(+Term, -What): Term is callable but cannot be an event
%   (nor a fact or the head of a rule); What says what it is.

not_an_event(Term, What) :-
    control_construct(Term, Name),
    !,
    format(string(What), "Prolog control (~w)", [Name]).
not_an_event([], "the empty list []") :- !.
not_an_event([_|_], "a list") :- !.
not_an_event({_}, "a term in braces {...}") :- !.
not_an_event(_:_, "a module-qualified term (M:G)").

static_clause(Clause, Where) :-
    (   var(Clause)
    ->  etalis_error("a clause cannot be a variable", "remove it", Where)
    ;   \+ callable(Clause)
    ->  term_words(Clause, Words),
        format(string(M), "~w is not a rule, a fact or a directive", [Words]),
        etalis_error(M, "end each clause with a full stop", Where)
    ;   clause_head(Clause, Head), var(Head)
    ->  etalis_error("the head of a rule cannot be a variable",
                     "write e.g. warm(T) :- T > 20.", Where)
    ;   clause_head(Clause, Head), \+ callable(Head)
    ->  term_words(Head, Words),
        format(string(M), "the head of a rule must be an atom or a compound term, not ~w", [Words]),
        etalis_error(M, "write e.g. warm(T) :- T > 20.", Where)
    ;   clause_head(Clause, Head), not_an_event(Head, What)
    ->  format(string(M), "~w cannot be a fact or the head of a rule", [What]),
        etalis_error(M, "a fact is an atom or a compound term such as station(kjfk); write Prolog control only in a rule's body", Where)
    ;   Clause = (Head :- _), callable(Head), \+ control_construct(Head, _)
    ->  (   Clause = (_ :- Body), rule_update_goal(Body, Update)
        ->  rule_update_error(Update, Where)
        ;   true
        )
    ;   pattern_functor(Clause)
    ->  (   leftmost_comparison(Clause, Op)
        ->  format(string(Hint), "the head and the pattern are joined by ~w: write <- (Head <- Pattern.)",
                   [Op])
        ;   Hint = "write an event rule: Head <- Pattern."
        ),
        etalis_error("an event pattern without a head", Hint, Where)
    ;   true
    ).

%   leftmost_comparison(+Pattern, -Op): the leftmost operand of Pattern is
%   a comparison H Op P (`alarm(X) < hot(X) seq smoke(X)`), most likely
%   a rule whose arrow lost its dash.

leftmost_comparison(Pattern, Op) :-
    compound(Pattern),
    compound_name_arguments(Pattern, Name, [Left|_]),
    (   memberchk(Name, [<, =<, =, ==, -])
    ->  Op = Name
    ;   pattern_functor(Pattern),
        leftmost_comparison(Left, Op)
    ).

%   term_words(+Term, -Text): Term as the rule file wrote it, with its
%   variable names, and at most a few levels deep.

term_words(Term, Text) :-
    (   nb_current(etalis_var_names, VarNames)
    ->  true
    ;   VarNames = []
    ),
    copy_term(Term-VarNames, T-Names),
    maplist([Name = V]>>(var(V) -> V = '$VAR'(Name) ; true), Names),
    term_variables(T, Anonymous),
    maplist(=('$VAR'('_')), Anonymous),
    with_output_to(string(Text),
                   write_term(T, [quoted(true), numbervars(true), max_depth(6),
                                  portray(false), module(etalis_syntax)])).

clause_head((Head :- _), Head) :- !.
clause_head(Head, Head).

%!  pattern_functor(@Term) is semidet.
%
%   Term is built by an event operator (`seq`, `and`, `or`, `cnot`,
%   `where`, `within`, `iteration`, `any`, `aggregate`, ...).

pattern_functor(Term) :-
    compound(Term),
    compound_name_arity(Term, Name, Arity),
    (   operator(Name, op(_, Type), Meaning),
        Meaning \== rule,
        Meaning \== same_as(<-),
        type_arity(Type, Arity)
    ;   operator(Name, functor(Arity), _)
    ),
    !.

type_arity(Type, 2) :- infix(Type).
type_arity(Type, 1) :- memberchk(Type, [xf, yf, fx, fy]).

infix(xfx).
infix(xfy).
infix(yfx).

reserved_name(Term) :-
    functor(Term, Name, _),
    sub_atom(Name, 0, _, _, $).

%   pattern(+Term, +Pos, +Src, -Pattern)
%
%   Validate an event pattern and normalise it.

pattern(Term, Pos, Src, _) :-
    var(Term),
    !,
    pos_where(Pos, Src, Where),
    etalis_error("a pattern cannot be a variable",
                 "name the event, e.g. a(X) instead of X", Where).
pattern(iteration(P, N), Pos, Src, Pattern) :-
    !,
    pos_where(Pos, Src, Where),
    (   integer(N), N >= 1
    ->  true
    ;   term_words(N, Words),
        format(string(M), "iteration needs a count of 1 or more, not ~w", [Words]),
        etalis_error(M, "write e.g. iteration(reading(S, _), 3)", Where)
    ),
    pos_args(Pos, 2, [PP, _]),
    pattern(P, PP, Src, P1),
    iterate(N, P1, Pattern).
pattern(any(N, List), Pos, Src, Pattern) :-
    !,
    pos_where(Pos, Src, Where),
    (   is_list(List), List \== []
    ->  true
    ;   etalis_error("any takes a count and a list of events",
                     "write e.g. any(2, [a(X), b(X), c(X)])", Where)
    ),
    length(List, Len),
    (   integer(N), N >= 1, N =< Len
    ->  true
    ;   term_words(N, Words),
        format(string(M), "any needs a count from 1 to ~d, not ~w", [Len, Words]),
        etalis_error(M, "write e.g. any(2, [a(X), b(X), c(X)])", Where)
    ),
    pos_args(Pos, 2, [_, ListPos]),
    list_positions(ListPos, List, Poss),
    maplist(any_event(Src), List, Poss, Ps),
    combinations(N, Ps, Combinations),
    maplist(all_of, Combinations, Alternatives),
    one_of(Alternatives, Pattern).
pattern(aggregate(Fun, P, Window, Result), Pos, Src, aggregate(F, X, P1, Win, Result)) :-
    !,
    pos_where(Pos, Src, Where),
    pos_args(Pos, 4, [_, PP, _, _]),
    pattern(P, PP, Src, P1),
    aggregate_function(Fun, F, X, Where),
    aggregate_window(Window, Win, Where),
    (   var(Result)
    ->  true
    ;   etalis_error("the result of an aggregate must be a variable",
                     "write e.g. aggregate(avg(T), temp(S, T), count(5), Avg)", Where)
    ),
    (   F == count
    ->  true
    ;   var(X)
    ->  (   event_variable(X, P1)
        ->  true
        ;   term_words(Fun, FunWords),
            term_words(X, XWords),
            format(string(M), "~w aggregates ~w, which no event of the pattern binds (the values are taken \c
                               from the events, not from a where condition)", [FunWords, XWords]),
            etalis_error(M, "aggregate an argument of an event of the pattern, e.g. \c
                             aggregate(sum(V), reading(S, V), count(10), Total)", Where)
        )
    ;   etalis_error("an aggregate is taken over a variable of its pattern",
                     "write e.g. sum(V) where V occurs in the pattern", Where)
    ).
pattern(Term, Pos, Src, _) :-
    refused_operator(Term, Name, Why, Instead),
    !,
    operator_where(Pos, Src, Where),
    format(string(M), "ETALIS's ~w is not supported here: ~w", [Name, Why]),
    etalis_error(M, Instead, Where).
pattern(aggregate(Fun, P, Result), Pos, Src, _) :-
    !,
    pos_where(Pos, Src, Where),
    term_words(aggregate(Fun, P, Result), Words),
    format(string(M), "ETALIS's three-argument aggregate ~w is understood only as the whole body Start seq aggregate(F, P, R), the running aggregate since Start", [Words]),
    etalis_error(M, "write the rule as d(C) <- start seq aggregate(count, a(Y), C), or give the aggregate a window: aggregate(count, a(Y), count(100), C) or aggregate(sum(Y), a(Y), time(minutes(5)), S)", Where).
pattern(Term, Pos, Src, _) :-
    goal_step(Term, Name, _),
    !,
    pos_where(Pos, Src, Where),
    format(string(M), "a ~w(Goal) step is only understood as an operand of seq: `P seq ~w(G)` or `~w(G) seq P`",
           [Name, Name, Name]),
    etalis_error(M, "write the goal as a condition: P where G", Where).
pattern(Term, Pos, Src, event(Plus)) :-
    compound(Term),
    compound_name_arguments(Term, Name, [P]),
    operator(Name, _, kleene),
    !,
    pos_where(Pos, Src, Where),
    pos_args(Pos, 1, [PP]),
    pattern(P, PP, Src, P1),
    b_getval(etalis_kleene, Pending),
    b_setval(etalis_kleene, [kleene(Plus, P1, Where)|Pending]).
pattern((Head <- Body), Pos, Src, event(Head)) :-
    !,
    pos_args(Pos, 2, [HeadPos, BodyPos]),
    pos_where(Pos, Src, Where),
    rule_head(Head, HeadPos, Src, Head1),
    (   Head1 = '$timer'(_, _)
    ->  etalis_error("a timer cannot be a rule nested in a pattern: its event does not occur with the pattern",
                     "write the timer as a rule of its own and use its event in the pattern", Where)
    ;   true
    ),
    pattern(Body, BodyPos, Src, Pattern),
    b_getval(etalis_var_names, VarNames),
    copy_term(Head-Pattern-VarNames, Rule),
    Rule = H1-P1-VN1,
    b_getval(etalis_nested_rules, Nested),
    b_setval(etalis_nested_rules, [rule('', H1, P1, Where, VN1)|Nested]).
pattern(Term, Pos, Src, Pattern) :-
    compound(Term),
    compound_name_arguments(Term, Name, [L, R]),
    pattern_operator(Name, Op, Kind),
    !,
    pos_args(Pos, 2, [LP, RP]),
    operator_pattern(Kind, Op, L, LP, R, RP, Pos, Src, Pattern).
pattern(Term, Pos, Src, event(Term)) :-
    pos_where(Pos, Src, Where),
    (   Term == !
    ->  etalis_error("! (cut) is Prolog control, not an event",
                     "combine events with seq, and, par or or; put Prolog goals after where", Where)
    ;   control_construct(Term, Name)
    ->  format(string(M), "~w is Prolog control, not an event operator", [Name]),
        etalis_error(M, "combine events with seq, and, par or or; put Prolog goals after where", Where)
    ;   callable(Term), not_an_event(Term, What)
    ->  format(string(M), "~w is not an event", [What]),
        etalis_error(M, "an event is an atom or a compound term such as a(X)", Where)
    ;   callable(Term), \+ reserved_name(Term)
    ->  true
    ;   callable(Term)
    ->  etalis_error("event names starting with $ are reserved", "rename the event", Where)
    ;   term_words(Term, Words),
        format(string(M), "unknown construct ~w in a pattern", [Words]),
        etalis_error(M, "expected an event such as a(X), or a pattern built with seq, and, par, or, cnot, fnot, an Allen relation, where or within", Where)
    ).

%!  kleene_event(+E) is semidet.
%
%   E is the hidden event of a `P+` (see kleene_rules/3), whose first
%   argument is the list of the positions of its events.

kleene_event(E) :-
    compound(E),
    functor(E, Name, _),
    sub_atom(Name, 0, _, _, '$plus').

%   kleene_rules(+Kleene, +Pattern0, -Pattern, +VarNames)
%
%   Each kleene(E, P, Where) stands for `P+` in Pattern0, the event E in
%   its place.  P+ is one or more occurrences of P in sequence.  The
%   variables of P that events elsewhere in the rule share (outside the
%   `+`) keep their value in every occurrence; each other variable X of
%   P is bound afresh by each occurrence, and outside the `+` X is the
%   list of its values, oldest first.  E becomes '$plusN'(Ps, Outer...,
%   Lists...), derived by two hidden rules (added as nested rules):
%
%       '$plusN'(Ps, O, [X]) <- P.
%       '$plusN'(Ps, O, L1) <- ('$plusN'(Ps0, O, L0) seq P') where append(L0, [X'], L1).
%
%   (P' a copy of P with fresh own variables; Ps, the positions of the
%   events of a match, are bound by the compiler where a selection
%   strategy needs them.)  A window around the `+` applies to its
%   rules too, so that no run outlives it.
%
%   A condition in P that reads a variable which no event of P binds but
%   an event before the `+` does (a correlation, `a(X) seq (b(Y) where
%   Y > X)+`) needs that binding in every occurrence, so the runs start
%   with what comes before: for `L seq P+` in Pattern0, O holds the
%   variables of L too, the first rule is `'$plusN'(Ps, O, [X]) <- L seq
%   P` and `L seq P+` becomes E in Pattern.

kleene_rules([], Pattern, Pattern, _).
kleene_rules([kleene(E, P, Where)|Ks], Pattern0, Pattern, VarNames) :-
    findall(Other, ( member(kleene(_, Other, _), Ks) ), Others),
    pattern_events([Pattern0|Others], Events),
    term_variables(P, PVs),
    term_variables(Events, EVs),
    partition(shared_with(EVs), PVs, Outer0, Own),
    (   correlated(P, EVs, Read)
    ->  run_start(Pattern0, E, Read, Where, Start),
        Start = op(seq, L, _),
        term_variables(L, LVs),
        exclude(shared_with(LVs), Outer0, Outer1),
        append(LVs, Outer1, Outer),
        replaced(Start, event(E), Pattern0, Pattern1)
    ;   L = none,
        Outer = Outer0,
        Pattern1 = Pattern0
    ),
    flag(etalis_kleene, N, N + 1),
    format(atom(Name), '$plus~d', [N]),
    append(Outer, Own, Args),
    E =.. [Name, _|Args],
    maplist([X, [X]]>>true, Own, Singles),
    append(Outer, Singles, FirstArgs),
    First =.. [Name, _|FirstArgs],
    copy_term(Outer-P, Outer-P1),
    term_variables(P1, P1Vs),
    exclude(shared_with(Outer), P1Vs, Own1),
    length(Own, NOwn),
    length(Before, NOwn),
    length(After, NOwn),
    append(Outer, Before, BeforeArgs),
    append(Outer, After, AfterArgs),
    Prev =.. [Name, _|BeforeArgs],
    Next =.. [Name, _|AfterArgs],
    maplist([B, X, A, append(B, [X], A)]>>true, Before, Own1, After, Appends),
    goal_conj(Appends, Append),
    (   enclosing_window(Pattern0, E, W)
    ->  Windowed = [Q, within(Q, W)]>>true
    ;   Windowed = [Q, Q]>>true
    ),
    (   L == none
    ->  FirstPattern = P
    ;   correlated_conditions(any, op(seq, L, P), FirstPattern)
    ),
    correlated_conditions(any, op(seq, event(Prev), P1), Step),
    (   Step = where(StepSeq, StepGoal)
    ->  NextPattern = where(StepSeq, (StepGoal, Append))
    ;   NextPattern = where(Step, Append)
    ),
    call(Windowed, FirstPattern, FirstBody),
    call(Windowed, NextPattern, NextBody),
    b_getval(etalis_nested_rules, Nested),
    copy_term(rule('', First, FirstBody, Where, VarNames), R1),
    copy_term(rule('', Next, NextBody, Where, VarNames), R2),
    b_setval(etalis_nested_rules, [R2, R1|Nested]),
    kleene_rules(Ks, Pattern1, Pattern, VarNames).

%   correlated(+P, +EVs, -Read): a condition in P reads the variables
%   Read, which no event of P binds and events of EVs do.

correlated(P, EVs, Read) :-
    pattern_events([P], PEvents),
    term_variables(PEvents, Bound),
    term_variables(P, PVs),
    exclude(shared_with(Bound), PVs, Unbound),
    include(shared_with(EVs), Unbound, Read),
    Read \== [].

%   run_start(+Pattern, +E, +Read, +Where, -Start): Start is `L seq E`
%   in Pattern, what a correlated `+` (the event E) starts its runs with.

run_start(Pattern, E, Read, Where, Start) :-
    (   sub_term(Start, Pattern),
        compound(Start),
        Start = op(seq, L, R),
        R == event(E),
        pattern_events([L], LEvents),
        term_variables(LEvents, LVs),
        forall(member(V, Read), shared_with(LVs, V))
    ->  true
    ;   b_getval(etalis_var_names, VarNames),
        variable_words(Read, VarNames, Words),
        format(string(M), "a condition inside P+ reads ~w, which only another event binds, and P+ does not follow that event in a sequence", [Words]),
        etalis_error(M, "write the event that binds it before the +, as in a(X) seq (b(Y) where Y > X)+", Where)
    ).

variable_words(Vars, VarNames, Words) :-
    maplist(variable_word(VarNames), Vars, Names),
    atomic_list_concat(Names, ', ', Words).

variable_word(VarNames, V, Name) :-
    (   member(Name = V0, VarNames),
        V0 == V
    ->  true
    ;   Name = '_'
    ).

%   replaced(+Old, +New, +T0, -T): T is T0 with its subterm Old (the same
%   term, ==) replaced by New.

replaced(Old, New, T0, T) :-
    (   T0 == Old
    ->  T = New
    ;   compound(T0)
    ->  T0 =.. [F|Args0],
        maplist(replaced(Old, New), Args0, Args),
        T =.. [F|Args]
    ;   T = T0
    ).

%!  correlated_conditions(+Pattern0, -Pattern) is det.
%
%   Pattern is Pattern0 with each condition on the right operand of a
%   sequence that reads a list of a `P+` (or of its runs under `stn`),
%   bound only by the left operand (`a(X)+ seq (b(Y) where sum_list(X,
%   S), S > Y)`), made a condition on the sequence, where both are
%   bound: `(a(X)+ seq b(Y)) where (sum_list(X, S), S > Y)`.

correlated_conditions(P0, P) :-
    correlated_conditions(hidden, P0, P).

%   correlated_conditions(+Which, +Pattern0, -Pattern): as
%   correlated_conditions/2 for a variable that a hidden event of a
%   `P+` binds on the left (Which `hidden`), or any event (`any`: the
%   rules of a correlated `P+`, see kleene_rules/4).

correlated_conditions(_, event(E), event(E)) :- !.
correlated_conditions(Which, op(seq, A0, B0), P) :- !,
    correlated_conditions(Which, A0, A),
    correlated_conditions(Which, B0, B1),
    (   B1 = where(B, G),
        pattern_events([A], AEvents0),
        (   Which == any
        ->  AEvents = AEvents0
        ;   include(plus_event, AEvents0, AEvents)
        ),
        term_variables(AEvents, AVs),
        pattern_events([B], BEvents),
        term_variables(BEvents, BVs),
        term_variables(G, GVs),
        member(V, GVs),
        shared_with(AVs, V),
        \+ shared_with(BVs, V)
    ->  P = where(op(seq, A, B), G)
    ;   P = op(seq, A, B1)
    ).
correlated_conditions(Which, P0, P) :-
    compound(P0),
    map_sub_patterns(correlated_conditions(Which), P0, P),
    !.
correlated_conditions(_, P, P).

%   plus_event(+E): E is the hidden event of a `P+` or of its runs
%   under `stn` (etalis_stn_runs, which cannot be imported here).

plus_event(E) :-
    compound(E),
    functor(E, Name, _),
    (   sub_atom(Name, 0, _, _, '$plus')
    ->  true
    ;   sub_atom(Name, 0, _, _, '$stn')
    ).

shared_with(Vs, V) :-
    member(V0, Vs),
    V0 == V,
    !.

goal_conj([], true).
goal_conj([G], G) :- !.
goal_conj([G|Gs], (G, C)) :-
    Gs = [_|_],
    goal_conj(Gs, C).

%   pattern_events(+Patterns, -Events): the events of Patterns (not
%   those still to be made for a `+`).

pattern_events(Patterns, Events) :-
    foldl(pattern_events_, Patterns, Events, []).

pattern_events_(event(E), Es0, Es) :- !,
    (   var(E) -> Es0 = Es ; Es0 = [E|Es] ).
pattern_events_(P, Es0, Es) :-
    compound(P),
    P =.. [_|Args],
    include(compound, Args, Parts),
    foldl(pattern_events_, Parts, Es0, Es).
pattern_events_(P, Es, Es) :-
    \+ compound(P).

%   enclosing_window(+Pattern, +E, -W): the narrowest window of Pattern
%   around event(E).

enclosing_window(Pattern, E, W) :-
    window_around(Pattern, E, none, W),
    W \== none.

window_around(event(E0), E, W, W) :-
    E0 == E,
    !.
window_around(within(P, W1), E, W0, W) :- !,
    (   W0 == none
    ->  W2 = W1
    ;   W2 is min(W0, W1)
    ),
    window_around(P, E, W2, W).
window_around(P, E, W0, W) :-
    compound(P),
    P \= event(_),
    P =.. [_|Args],
    member(A, Args),
    compound(A),
    window_around(A, E, W0, W),
    !.

control_construct(Term, Name) :-
    callable(Term),
    functor(Term, Name, Arity),
    memberchk(Name/Arity, [!/0, (',')/2, (;)/2, (->)/2, (*->)/2, (\+)/1, ('|')/2]).

any_event(Src, E, Pos, P) :-
    pattern(E, Pos, Src, P).

list_positions(list_position(_, _, Poss, none), List, Poss) :-
    same_length(List, Poss),
    !.
list_positions(Pos, List, Poss) :-
    same_length(List, Poss),
    maplist(=(Pos), Poss).

%   any(N, Es): N distinct events of Es, in any order, is the `or` of
%   the `and` of each N-combination of Es.

%   combinations(+N, +Ps, -Cs): the N-element sublists of Ps, sharing
%   the variables of Ps (so no findall/3, which would copy them).

combinations(0, _, [[]]) :- !.
combinations(_, [], []) :- !.
combinations(N, [P|Ps], Cs) :-
    N1 is N - 1,
    combinations(N1, Ps, With0),
    maplist(cons(P), With0, With),
    combinations(N, Ps, Without),
    append(With, Without, Cs).

cons(H, T, [H|T]).

all_of([P], P) :- !.
all_of([P|Ps], op(and, P, Rest)) :-
    all_of(Ps, Rest).

one_of([P], P) :- !.
one_of([P|Ps], or(P, Rest)) :-
    one_of(Ps, Rest).

%   iterate(+N, +P, -Pattern): P N times in sequence.  The copies share
%   the named variables of P; the anonymous ones are fresh in each.

iterate(1, P, P) :- !.
iterate(N, P, op(seq, Rest, Copy)) :-
    N1 is N - 1,
    iterate(N1, P, Rest),
    fresh_anonymous(P, Copy).

fresh_anonymous(P, Copy) :-
    b_getval(etalis_var_names, VarNames),
    term_variables(P, Vs),
    exclude(named(VarNames), Vs, Anon),
    copy_term(Anon-P, _-Copy0),
    term_variables(Copy0, CVs),
    term_variables(P, PVs),
    pairs_keys_values(Pairs, PVs, CVs),
    maplist(rebind_named(VarNames), Pairs),
    Copy = Copy0.

named(VarNames, V) :-
    member(_ = V0, VarNames),
    V0 == V,
    !.

rebind_named(VarNames, V-C) :-
    (   named(VarNames, V)
    ->  C = V
    ;   true
    ).

%   event_variable(+X, +Pattern): the variable X occurs in an event of
%   the parsed Pattern (not only in its where conditions).

event_variable(X, P) :-
    sub_term(S, P),
    compound(S),
    S = event(E),
    term_variables(E, Vs),
    member(V, Vs),
    V == X,
    !.

aggregate_function(count, count, _, _) :- !.
aggregate_function(Fun, F, X, Where) :-
    (   compound(Fun), Fun =.. [F, X], memberchk(F, [sum, avg, min, max])
    ->  true
    ;   term_words(Fun, Words),
        format(string(M), "unknown aggregate ~w", [Words]),
        etalis_error(M, "use count, sum(X), avg(X), min(X) or max(X)", Where)
    ).

aggregate_window(count(N), count(N), _) :-
    integer(N), N >= 1, !.
aggregate_window(time(D), time(S), Where) :- !,
    duration_seconds(D, Where, S).
aggregate_window(W, _, Where) :-
    term_words(W, Words),
    format(string(M), "~w is not an aggregate window", [Words]),
    etalis_error(M, "use count(N) for the last N occurrences or time(D) for those of the last D seconds", Where).

%   pattern_operator(+Name, -Op, -Kind): Name is a binary operator of
%   patterns, or another spelling of one (ETALIS's `check`); Op is the
%   operator it means, Kind says how it is read (see operator_pattern/9).

%   refused_operator(+Term, -Name, -Why, -Instead): Term is built by an
%   ETALIS operator Name that the table refuses.

refused_operator(Term, Name, Why, Instead) :-
    compound(Term),
    compound_name_arity(Term, Name, Arity),
    operator(Name, op(_, Type), refused(Why, Instead)),
    type_arity(Type, Arity).

pattern_operator(Name, Op, Kind) :-
    operator(Name, op(_, Type), Meaning),
    infix(Type),
    (   Meaning = same_as(Op)
    ->  operator(Op, _, Meaning1)
    ;   Op = Name,
        Meaning1 = Meaning
    ),
    meaning_kind(Meaning1, Kind).

%   goal_step(@Term, -Name, -Goal): Term is one of ETALIS's goal steps
%   prolog(Goal), query(Goal) and db(Goal), which its compiler runs
%   alike when a sequence reaches them.

goal_step(Term, Name, Goal) :-
    compound(Term),
    compound_name_arguments(Term, Name, [Goal]),
    memberchk(Name, [prolog, query, db]).

meaning_kind(temporal(_, _, _, _, _), temporal).
meaning_kind(consuming(_, _), temporal).
meaning_kind(construct(Form, _), construct(Form)).

operator_pattern(temporal, seq, L, LP, R, GP, _, Src, where(P, Goal)) :-
    goal_step(R, _, Goal),
    !,                                          % ETALIS: P seq prolog(G)
    pattern(L, LP, Src, P),
    pos_args(GP, 1, [GoalPos]),
    where_goal(Goal, GoalPos, Src).
operator_pattern(temporal, seq, L, GP, R, RP, _, Src, where(Q, Goal)) :-
    goal_step(L, _, Goal),
    !,                                          % ETALIS: prolog(G) seq P
    pos_args(GP, 1, [GoalPos]),
    where_goal(Goal, GoalPos, Src),
    pattern(R, RP, Src, Q).
operator_pattern(temporal, Op, L, LP, R, RP, _, Src, op(Op, P, Q)) :-
    pattern(L, LP, Src, P),
    pattern(R, RP, Src, Q).
operator_pattern(construct([_:KL, _:KR]), Op, L, LP, R, RP, Pos, Src, Pattern) :-
    construct_part(KL, Op, L, LP, Pos, Src, P),
    construct_part(KR, Op, R, RP, Pos, Src, Q),
    Pattern =.. [Op, P, Q].

%   construct_part(+Kind, +Op, +Term, +TermPos, +Pos, +Src, -Value): the
%   operand Term of the construct Op (at Pos) read as its Kind says (see
%   etalis_optable:operator/3).

construct_part(pattern, _, T, TP, _, Src, P) :-
    pattern(T, TP, Src, P).
construct_part(negated, _, T, TP, _, Src, P) :-
    pattern(T, TP, Src, P).
construct_part(sequence, Op, T, TP, Pos, Src, P) :-
    pattern(T, TP, Src, P),
    (   P = op(seq, _, _)
    ->  true
    ;   pos_where(Pos, Src, Where),
        format(string(M), "~w negates an event between the two parts of a sequence", [Op]),
        format(string(H), "write (A seq B) ~w C", [Op]),
        etalis_error(M, H, Where)
    ).
construct_part(goal, _, Goal, GP, _, Src, Goal) :-
    where_goal(Goal, GP, Src).
construct_part(seconds, _, Duration, DP, _, Src, Seconds) :-
    pos_where(DP, Src, Where),
    duration_seconds(Duration, Where, Seconds).

%   running_aggregate(+Body, +Pos, +Src, +Rule, -Items)
%
%   ETALIS's runs, in the one place its compiler takes them: the whole
%   body `S seq Run`, Run one of
%
%     - aggregate(F, P, R): each occurrence of S starts a running
%       aggregate F of the occurrences of P after it; H occurs at S
%       with the initial value (count and sum: 0; min and max have none)
%       and at each P with the aggregate so far, over [s1, p2];
%     - P star_times: H occurs at S and at each P after it, over
%       [s1, p2] (S followed by any number of Ps, each run extended by
%       the next P).
%
%   Each S starts a run of its own, which each later P extends under
%   `unrestricted`, as ETALIS's compiler keeps one per S; under
%   `recent` only the newest run goes on (a newer S with the same
%   bindings starts again), under `chronological` the oldest (see
%   etalis_compile:run_policy/3).  It becomes rules around a hidden
%   event '$Kind_L_C'(Vs..., Acc...), Vs the variables of S that H or P
%   use:
%
%       '$run'(Vs, Init) <- S.
%       '$run_taken'(Vs, A0, X) <- '$run'(Vs, A0) seq P.   (the run's policy)
%       '$run'(Vs, A1) <- '$run_taken'(Vs, A0, X) where Step.
%       H <- '$run'(Vs, R).

%!  run_event(+Event, -Kind) is semidet.
%
%   Event is a hidden event of an ETALIS run of Kind (`aggregate` or
%   `star_times`), '$Kind_L_C' or its step '$Kind_L_C_taken' (see
%   running_aggregate/5).

run_event(E, Kind) :-
    callable(E),
    functor(E, Name, _),
    atom_concat($, Rest0, Name),
    (   atom_concat(Rest, '_taken', Rest0) -> true ; Rest = Rest0 ),
    atomic_list_concat(Parts, '_', Rest),
    append(KindParts, [Line, Column], Parts),
    KindParts \== [],
    atom_number(Line, L), integer(L),
    atom_number(Column, C), integer(C),
    atomic_list_concat(KindParts, '_', Kind).

running_aggregate(Body, Pos, Src, Rule, Items) :-
    nonvar(Body),
    Body = within(Inner, Duration),
    !,
    pos_args(Pos, 2, [InnerPos, DPos]),
    running_aggregate(Inner, InnerPos, Src, Rule, Items0),
    pos_where(DPos, Src, DWhere),
    duration_seconds(Duration, DWhere, Seconds),
    maplist(step_within(Seconds), Items0, Items).
running_aggregate(Body, Pos, Src, rule(Label, Head, Where, VarNames, Properties, Action), Items) :-
    nonvar(Body),
    Body = seq(Start, Run),
    nonvar(Run),
    pos_args(Pos, 2, [StartPos, RunPos]),
    run(Run, RunPos, Src, Kind, P, P1, run(Init, A0, A1, Step, R, Shown)),
    pattern(Start, StartPos, Src, S1),
    term_variables(Start, StartVs),
    term_variables(Head-P, Used),
    include(occurs_in(Used), StartVs, Vs),
    Where = pos(_, Line, Column),
    format(atom(Name), '$~w_~d_~d', [Kind, Line, Column]),
    format(atom(StepLabel), '~w_step', [Name]),
    append(Vs, Init, InitArgs), Acc0 =.. [Name|InitArgs],
    append(Vs, A0, PrevArgs), Prev =.. [Name|PrevArgs],
    append(Vs, A1, NextArgs), Next =.. [Name|NextArgs],
    append(Vs, R, OutArgs), Out =.. [Name|OutArgs],
    conj_where(event(Out), Shown, OutPattern0),
    rule_action(Action, OutPattern0, OutPattern),
    run_steps(Step, Name, Prev, Next, P1, Vs, A1, StepLabel, Where, StepRules),
    append([ [rule('', Acc0, S1, Where)],
             StepRules,
             [rule(Label, Head, OutPattern, Where)]
           ], Rules),
    maplist(with_var_names(VarNames), Rules, RuleItems0),
    foldl(property_within, Properties, RuleItems0, RuleItems),
    append(RuleItems, [directive('$run_policy'(StepLabel), Where)], Items).

property_within(none, Items, Items).
property_within(within(Seconds), Items0, Items) :-
    maplist(step_within(Seconds), Items0, Items).

%   run(+Run, +Pos, +Src, -Kind, -P, -Pattern, -Spec): Run is an ETALIS
%   run over the pattern P (normalised: Pattern); Spec gives its
%   accumulator: the initial arguments, those before and after a step,
%   the step's goal, the arguments the head sees and the condition for
%   reporting them (lists of arguments; `true` for no goal).

run(aggregate(Fun, P, R), Pos, Src, aggregate, P, P1, run([Init], [A0], [A1], Step, [R], Shown)) :-
    pos_args(Pos, 3, [_, PPos, _]),
    pos_where(Pos, Src, Where),
    pattern(P, PPos, Src, P1),
    (   var(R)
    ->  true
    ;   etalis_error("the result of an aggregate must be a variable",
                     "write e.g. d(C) <- start seq aggregate(count, a(Y), C)", Where)
    ),
    running_function(Fun, Init, A0, A1, Step, Reported, Where),
    (   Reported == all
    ->  Shown = true
    ;   Shown = (R \== '$none')
    ).
run(star_times(P), Pos, Src, star_times, P, P1, run([], [], [], true, [], true)) :-
    pos_args(Pos, 1, [PPos]),
    pattern(P, PPos, Src, P1).

%   run_steps(+Step, +Name, +Prev, +Next, +P, +Vs, +A1s, +Label, +Where, -Rules):
%   the rules that take a run from Prev to Next at each P.  The goal of
%   a step is a rule of its own: a where condition directly on the seq
%   would make `recent` keep every earlier state of the run.

run_steps(true, _, Prev, Next, P, _, _, Label, Where, [rule(Label, Next, op(seq, event(Prev), P), Where)]) :- !.
run_steps(Step, Name, Prev, Next, P, Vs, A1s, Label, Where,
          [ rule(Label, Taken, op(seq, event(Prev), P), Where),
            rule('', Next, where(event(Taken), Step), Where)
          ]) :-
    term_variables(Step, StepVs0),
    exclude(occurs_in(A1s), StepVs0, StepVs1),
    exclude(occurs_in(Vs), StepVs1, StepVs),
    append(Vs, StepVs, TakenArgs),
    atom_concat(Name, '_taken', TakenName),
    Taken =.. [TakenName|TakenArgs].

conj_where(P, true, P) :- !.
conj_where(P, G, where(P, G)).

%   step_within(+Seconds, +Item0, -Item): `(S seq Run) within D` bounds
%   the start and each step: the run goes on for D seconds after S
%   began.

step_within(D, rule(L, H, P, W, VN), rule(L, H, within(P, D), W, VN)) :-
    \+ P = event(_),
    \+ P = where(event(_), _),
    !.
step_within(_, Item, Item).

with_var_names(VarNames, rule(L, H, P, W), rule(L1, H1, P1, W1, VN1)) :-
    copy_term(rule(L, H, P, W)-VarNames, rule(L1, H1, P1, W1)-VN1).

occurs_in(Vs, V) :-
    member(V0, Vs),
    V0 == V,
    !.

%   running_function(+Fun, -Init, ?A0, ?A1, -Step, -Reported, +Where):
%   the running aggregate Fun starts at Init and goes from A0 to A1
%   by Step; Reported is `all`, or `values` when Init is not a value to
%   report.

running_function(count, 0, A0, A1, A1 is A0 + 1, all, _) :- !.
running_function(sum(X), 0, A0, A1, A1 is A0 + X, all, _) :- !.
running_function(min(X), '$none', A0, A1,
                 ( A0 == '$none' -> A1 = X ; A1 is min(A0, X) ), values, _) :- !.
running_function(max(X), '$none', A0, A1,
                 ( A0 == '$none' -> A1 = X ; A1 is max(A0, X) ), values, _) :- !.
running_function(Fun, _, _, _, _, _, Where) :-
    term_words(Fun, Words),
    format(string(M), "unknown aggregate ~w", [Words]),
    etalis_error(M, "ETALIS's aggregate(F, P, R) takes count, sum(X), min(X) or max(X)", Where).

%   where_goal(+Goal, +Pos, +Src): Goal can be a where condition.

where_goal(Goal, GP, Src) :-
    pos_where(GP, Src, Where),
    (   var(Goal)
    ->  etalis_error("a where condition cannot be a variable",
                     "write a Prolog goal, e.g. where X > 10", Where)
    ;   \+ callable(Goal)
    ->  term_words(Goal, Words),
        format(string(M), "a where condition must be a Prolog goal, not ~w", [Words]),
        etalis_error(M, "write a Prolog goal, e.g. where X > 10", Where)
    ;   rule_update_goal(Goal, Update)
    ->  rule_update_error(Update, Where)
    ;   true
    ).

%   rule_update_goal(+Goal, -Update): Goal calls, through Prolog
%   control, original ETALIS's del_static_rule/1, which etalis-py does
%   not take over (ins_event_rule/1, del_event_rule/1 and
%   ins_static_rule/1 are the engine's, see rule_update_builtins/1).

rule_update_goal(Goal, Update) :-
    callable(Goal),
    (   control_construct(Goal, _)
    ->  Goal =.. [_|Args],
        member(Arg, Args),
        rule_update_goal(Arg, Update)
    ;   functor(Goal, Name, 1),
        Name == del_static_rule
    ->  Update = Name/1
    ).

rule_update_error(Update, Where) :-
    format(string(M), "~w (original ETALIS's removal of a static clause by a running rule) is not supported", [Update]),
    etalis_error(M, "static rules stay; keep changing facts in a predicate declared :- dynamic(Name/Arity) with retract/1, or remove rules with del_event_rule(Label)", Where).

%!  duration_seconds(+Duration, +Where, -Seconds) is det.
%
%   Seconds is the length of Duration: a number of seconds, or
%   milliseconds(N), seconds(N), minutes(N), hours(N) or days(N).

duration_seconds(D, Where, _) :-
    var(D),
    !,
    etalis_error("a window must be a known duration, not a variable",
                 "write e.g. within 30, within minutes(5), within hours(3)", Where).
duration_seconds(D, Where, Seconds) :-
    (   number(D)
    ->  Seconds = D
    ;   compound(D), D =.. [Unit, N], number(N), unit_seconds(Unit, S)
    ->  catch(Seconds is N*S, error(evaluation_error(_), _), Seconds = D)
    ;   term_words(D, Words),
        format(string(M), "~w is not a duration", [Words]),
        etalis_error(M, "write seconds as a number, or milliseconds(N), seconds(N), minutes(N), hours(N) or days(N)", Where)
    ),
    (   \+ finite_number(Seconds)
    ->  term_words(D, Words),
        format(string(M), "~w is not a finite duration", [Words]),
        etalis_error(M, "write a window of a finite number of seconds", Where)
    ;   Seconds >= 0
    ->  true
    ;   etalis_error("a window cannot be negative", "use a duration of zero or more", Where)
    ).

%!  finite_number(@X) is semidet.
%
%   X is a number, neither infinite nor NaN.

finite_number(X) :-
    number(X),
    \+ ( float(X), float_class(X, Class), memberchk(Class, [infinite, nan]) ).

unit_seconds(milliseconds, 0.001).
unit_seconds(seconds, 1).
unit_seconds(minutes, 60).
unit_seconds(hours, 3600).
unit_seconds(days, 86400).

%   Positions

%   pos_args(+Pos, +N, -Args): the positions of the N arguments of the
%   term at Pos; the term's own position where the reader gave none.

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

pos_where(Pos, Src, Where) :-
    pos_from(Pos, Offset),
    offset_where(Offset, Src, Where).

%   operator_where(+Pos, +Src, -Where): where the operator (or functor)
%   of the term at Pos is written.

operator_where(parentheses_term_position(_, _, Inner), Src, Where) :- !,
    operator_where(Inner, Src, Where).
operator_where(term_position(_, _, From, _, _), Src, Where) :- !,
    offset_where(From, Src, Where).
operator_where(Pos, Src, Where) :-
    pos_where(Pos, Src, Where).

%   offset_where(+Offset, +Src, -Where): Where is pos(Source, Line,
%   Column) of the character at Offset.  A carriage return before a line
%   end is not a column.

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

%   Declarations of original ETALIS rule files
%
%   Original ETALIS rule files declare some things with plain facts,
%   which are read as etalis-py's own directives and rule windows:
%
%     - `print_trigger(Name/Arity).` (also `print_trigger(all_defined_events)`,
%       and `_` for any name or arity): the events that are printed.
%       They become one `:- print_events([...])` of the events that the
%       file's rules derive and that some print_trigger names (etalis-py
%       reports derived events; an input event is not echoed);
%     - `event_rule_property(Label, Name, Value).`: a property of the
%       rule labelled Label, as in `Label([property(Name, Value)]) : Head
%       <- P` (see rule_property/3).
%
%   A print_trigger/1 defined by a rule with a body stays a static
%   predicate of the file, evaluated once at load for the events the
%   file derives (see trigger_rules/3); an event_rule_property/3 defined
%   by a rule with a body (a condition evaluated as ETALIS runs) is
%   refused with the etalis-py equivalent.

%   etalis_declarations(+Items0, -Items): Items are Items0 with the ETALIS
%   declaration facts turned into what they mean.
%
%   @error etalis_error(Message, Hint) at a declaration that cannot be
%   taken over.

etalis_declarations(Items0, Items) :-
    foldl(database_directive, Items0, Items000, []),
    trigger_rules(Items000, Items00, Kept),
    partition(declaration(Kept), Items00, Declarations, Items1),
    (   Declarations == []
    ->  Items = Items1
    ;   include(is_declaration(print_trigger), Declarations, Printed),
        include(is_declaration(event_rule_property), Declarations, Properties),
        foldl(property_window, Properties, Items1, Items2),
        print_directive(Printed, Items2, Items)
    ).

%   database_directive(+Item)//: a directive of original ETALIS that
%   declares dynamic predicates and adds facts (`:- dynamic(p/1),
%   assert(p(on)).`) as its parts: a `dynamic(PIs)` directive (PIs a
%   list of Name/Arity) and the static clauses it asserts; a wrapped
%   fact (wrapped_clause/2) as what it wraps.  Any other item is
%   itself.

database_directive(Item) -->
    (   { Item = directive(D, Where),
          database_goals(D, Goals)
        }
    ->  database_items(Goals, Where)
    ;   { Item = static(Wrapped, Where),
          wrapped_clause(Wrapped, Clause)
        }
    ->  { static_clause(Clause, Where) },
        [static(Clause, Where)]
    ;   [Item]
    ).

%   wrapped_clause(+Fact, -Clause): ETALIS asserts the Clause of a fact
%   db(Clause), prolog(Clause) or static(Clause), and takes
%   external_trigger(E) as print_trigger(E).

wrapped_clause(Fact, Clause) :-
    compound(Fact),
    compound_name_arguments(Fact, Name, [Arg]),
    (   memberchk(Name, [db, prolog, static])
    ->  Clause = Arg
    ;   Name == external_trigger
    ->  Clause = print_trigger(Arg)
    ).

database_goals(D, _) :-
    var(D), !, fail.
database_goals((A, B), Goals) :- !,
    database_goals(A, GA),
    database_goals(B, GB),
    append(GA, GB, Goals).
database_goals(dynamic(Spec), [dynamic(Spec)]) :- !.
database_goals(Assert, [assert(Clause)]) :-
    compound(Assert),
    compound_name_arguments(Assert, Name, [Clause]),
    memberchk(Name, [assert, asserta, assertz]).

database_items([], _) --> [].
database_items([G|Gs], Where) -->
    database_item(G, Where),
    database_items(Gs, Where).

database_item(dynamic(Spec), Where) -->
    { dynamic_indicators(Spec, Where, PIs) },
    [directive(dynamic(PIs), Where)].
database_item(assert(Clause), Where) -->
    { static_clause(Clause, Where) },
    [static(Clause, Where)].

dynamic_indicators(Spec, Where, PIs) :-
    (   var(Spec)
    ->  Specs = [Spec]
    ;   is_list(Spec)
    ->  Specs = Spec
    ;   comma_list(Spec, Specs)
    ),
    (   Specs \== [],
        forall(member(S, Specs), ( nonvar(S), S = N/A, atom(N), integer(A), A >= 0 ))
    ->  PIs = Specs
    ;   etalis_error("dynamic takes predicates Name/Arity",
                     "write e.g. :- dynamic(count/2). or :- dynamic([count/2, seen/1]).", Where)
    ).

%   trigger_rules(+Items0, -Items, -Kept): a print_trigger/1 that a
%   clause with a body defines is kept as the file's static predicate
%   (Kept = [print_trigger]), and a `'$print_trigger'` directive at its
%   first clause makes the compiler evaluate it for the events the file
%   derives, once, at load (see etalis_compile:compile_items/3), unless
%   the file has its own `:- print_events(...)`.  Otherwise Kept = [].

trigger_rules(Items0, Items, Kept) :-
    (   member(static(Clause, _), Items0),
        nonvar(Clause),
        Clause = (Head :- Body),
        nonvar(Head),
        Head = print_trigger(_),
        Body \== true
    ->  Kept = [print_trigger],
        (   member(directive(D, _), Items0), nonvar(D), D = print_events(_)
        ->  Items = Items0
        ;   once(( member(static(C, Where), Items0), is_declaration(print_trigger, static(C, Where)) )),
            Items = [directive('$print_trigger', Where)|Items0]
        )
    ;   Kept = [],
        Items = Items0
    ).

declaration(Kept, static(Clause, Where)) :-
    nonvar(Clause),
    (   Clause = (Head :- Body)
    ->  nonvar(Head),
        declaration_head(Head),
        \+ ( functor(Head, Name, _), memberchk(Name, Kept) ),
        declaration_with_body(Head, Body, Where)
    ;   declaration_head(Clause),
        \+ ( functor(Clause, Name, _), memberchk(Name, Kept) )
    ).

declaration_head(print_trigger(_)).
declaration_head(event_rule_property(_, _, _)).

is_declaration(Name, static(Clause, _)) :-
    nonvar(Clause),
    (   Clause = (Head :- _) -> true ; Head = Clause ),
    callable(Head),
    functor(Head, Name, _).

declaration_with_body(Head, Body, Where) :-
    (   Body == true
    ->  true
    ;   functor(Head, Name, Arity),
        format(string(M), "~w/~w defined by a rule (a condition ETALIS evaluates as it runs) is not supported", [Name, Arity]),
        declaration_hint(Name, Hint),
        etalis_error(M, Hint, Where)
    ).

declaration_hint(event_rule_property,
                 "give the rule its window: Label : Head <- Pattern within Seconds.").

%   print_directive(+PrintTriggers, +Items0, -Items): the print_trigger
%   facts as one print_events directive, at the first of them: the
%   events they name (also those a rule inserted later derives), and
%   those derived by the rules of Items0 that a pattern such as `c/_`
%   or all_defined_events matches.  A file with its own `:-
%   print_events(...)` keeps it.

print_directive([], Items, Items) :- !.
print_directive(Triggers, Items0, Items) :-
    (   member(directive(D, _), Items0),
        nonvar(D),
        D = print_events(_)
    ->  Items = Items0
    ;   Triggers = [static(_, Where)|_],
        maplist(trigger_spec(Where), Triggers, Specs),
        include(ground, Specs, Named),
        findall(N/A, ( member(rule(_, Head, _, _, _), Items0),
                       functor(Head, N, A),
                       \+ sub_atom(N, 0, _, _, $),       % hidden, see running_aggregate/5
                       member(Spec, Specs),
                       \+ ground(Spec),
                       printed_by(Spec, N/A)
                     ),
                Matched),
        append(Named, Matched, Printed0),
        sort(Printed0, Printed),
        Items = [directive(print_events(Printed), Where), directive('$print_trigger_facts', Where)|Items0]
    ).

trigger_spec(_, static(Clause, Where), Spec) :-
    (   Clause = (print_trigger(Spec0) :- _)
    ->  true
    ;   Clause = print_trigger(Spec0)
    ),
    (   var(Spec0)
    ->  Spec = _/_
    ;   Spec0 == all_defined_events
    ->  Spec = _/_
    ;   Spec0 == all_events
    ->  Spec = _/_
    ;   Spec0 = N/A,
        ( var(N) ; atom(N) ),
        ( var(A) ; integer(A) )
    ->  Spec = N/A
    ;   callable(Spec0), \+ Spec0 = _/_
    ->  functor(Spec0, N, A),
        Spec = N/A
    ;   format(string(M), "print_trigger(~q) does not name events", [Spec0]),
        etalis_error(M, "write print_trigger(Name/Arity), e.g. print_trigger(alarm/1)", Where)
    ).

printed_by(Spec, N/A) :-
    \+ Spec \= N/A.

%   property_window(+Property, +Items0, -Items): the rule labelled by
%   the event_rule_property fact Property, with the property's window.

property_window(static(Clause, Where), Items0, Items) :-
    (   Clause = (Fact :- _) -> true ; Fact = Clause ),
    Fact = event_rule_property(Label, Name, Value),
    (   atom(Label),
        nth0(I, Items0, rule(Label, Head, Pattern0, RWhere, VarNames))
    ->  rule_property(Where, property(Name, Value), Window),
        rule_properties([Window], Pattern0, Pattern),
        nth0(I, Items0, _, Rest),
        nth0(I, Items, rule(Label, Head, Pattern, RWhere, VarNames), Rest)
    ;   format(string(M), "event_rule_property/3 names ~q, and no rule has that label", [Label]),
        etalis_error(M, "label the rule: Label : Head <- Pattern.", Where)
    ).
