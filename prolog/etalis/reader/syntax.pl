:- module(etalis_syntax,
          [ read_etl_file/2,            % +File, -Items
            read_etl_string/3,          % +Text, +Source, -Items
            pattern_text/2              % +Pattern, -Text
          ]).
:- use_module(library(error)).
:- use_module(library(lists)).
:- use_module('../compiler/optable', [etl_operator/3]).
:- use_module('../errors', [etalis_error/3]).
:- use_module(positions, [source_text/3]).
:- use_module(tokens, [no_control_character/1, not_too_deep/1]).
:- use_module(decode, [decode_bytes/3, encoding_hint/3, rule_text_bound/3, too_large/3]).
:- use_module(syntax_errors, [read_error/3, clause_error/3]).
:- use_module(items, [item/5]).
:- use_module('../dialect/quoted_operators', [etalis_quoted_operators/2]).
:- use_module('../dialect/declarations', [etalis_declarations/2]).
:- use_module('../dialect/etalis_library', [etalis_library_items/2]).

/** <module> Reading ETALIS Language for Events (.etl) files

An `.etl` file is read with SWI-Prolog's own reader and the ETALIS
operator table (etalis_optable), so a file that original ETALIS accepts (written
with unquoted operators) reads the same here.  Unlike ETALIS, `*`, `#`,
`/\` and `\/` keep their Prolog meaning, so `W2 >= W1 * 1.1` in a
`where` condition is arithmetic.

Each clause of the file becomes one item (etalis_items):

  - rule(Label, Head, Pattern, Where, VarNames)
    An event rule `Head <- Pattern` or `Label : Head <- Pattern`.
    Pattern is validated and normalised into the pattern language
    (etalis_patterns).
  - static(Clause, Where)
    A static Prolog rule or fact: background knowledge.
  - directive(Directive, Where)

Files written for original ETALIS read with ETALIS's meaning: quoted
operators (etalis_quoted_operators), label properties, `do` actions and
declaration facts (etalis_declarations).

The reader's parts, in the order a text goes through them: its bytes
as characters (etalis_decode), its characters and tokens
(etalis_tokens), ETALIS's quoted operators, SWI-Prolog's reader with
the operators declared in this module (a syntax error explained by
etalis_syntax_errors), each clause as items (etalis_items, with
etalis_patterns, etalis_kleene for `P+` and etalis_runs for ETALIS's
runs), then ETALIS's declarations and library (etalis_declarations,
etalis_library).

Where is `pos(Source, Line, Column)` (both 1-based, etalis_positions).
All errors are thrown as error(etalis_error(Message, Hint), pos(Source,
Line, Column)) (etalis_errors).
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
%   (etalis_decode:etl_file_encoding/3 says where, for a warning).  Anything else is
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
                    etalis_error(M, H, Where) )) ),
          error(resource_error(_), _),
          ( size_file(File, Size), too_large(File, Size, bytes) )).

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
