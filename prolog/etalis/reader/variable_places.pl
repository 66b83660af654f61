:- module(etalis_variable_places,
          [ source_variable_places/3,   % +Source, +Text, -Places
            variable_places/3           % +Text, +Source, -Places
          ]).
:- use_module(library(apply)).
:- use_module(library(lists)).
:- use_module(library(error)).
:- use_module(positions, [source_text/3, pos_where/3, offset_where/3]).
:- use_module(decode, [decode_bytes/3]).
:- use_module('../dialect/quoted_operators', [etalis_quoted_operators/2]).

/** <module> Where each variable of a clause is first written

`etalis check` points a finding about one variable (a singleton) at the
variable itself rather than at its rule.  The reader's items keep the
position of each clause only; this module reads the text again, as the
reader reads it (the same operators, ETALIS's quoted operators written
unquoted in as many characters), for the positions of the variables.
*/

%!  source_variable_places(+Source, +Text, -Places) is det.
%
%   Places are the variable_places/3 of the rule source Source as the
%   `rules` request names it: file(Path) (its bytes decoded as the reader
%   decodes them), text(Name) with the text Text, or with_static(Files,
%   Source) (Source's own); [] for a file that cannot be read.

source_variable_places(with_static(_, Source), Text, Places) :- !,
    source_variable_places(Source, Text, Places).
source_variable_places(file(File), _, Places) :- !,
    must_be(atom, File),
    (   catch(( read_file_to_codes(File, Bytes, [type(binary)]),
                decode_bytes(Bytes, File, Codes) ), _, fail)
    ->  string_codes(Text, Codes),
        variable_places(Text, File, Places)
    ;   Places = []
    ).
source_variable_places(text(Name), Text, Places) :- !,
    variable_places(Text, Name, Places).
source_variable_places(_, _, []).

%!  variable_places(+Text, +Source, -Places) is det.
%
%   Places are place(Clause, Name, Where) for each named variable of
%   each clause of the rule text Text (named Source): Clause is the
%   position of the clause (as its item has it), Where that of the
%   variable's first occurrence.  The clauses up to the first that
%   cannot be read.

variable_places(Text0, Source, Places) :-
    must_be(string, Text0),
    (   sub_string(Text0, 0, 1, _, "\uFEFF")
    ->  sub_string(Text0, 1, _, 0, Text)
    ;   Text = Text0
    ),
    source_text(Source, Text, Src),
    etalis_quoted_operators(Text, Read),
    setup_call_cleanup(
        open_string(Read, In),
        clause_places(In, Src, Places),
        close(In)).

clause_places(In, Src, Places) :-
    (   catch(read_term(In, Term, [subterm_positions(Pos), variable_names(VarNames), module(etalis_syntax),
                                   syntax_errors(error)]),
              _, fail),
        Term \== end_of_file
    ->  pos_where(Pos, Src, Clause),
        term_offsets(Term, Pos, [], Offsets),
        findall(place(Clause, Name, Where),
                ( member(Name=Var, VarNames),
                  aggregate_all(min(O), ( member(V-O, Offsets), V == Var ), First),
                  offset_where(First, Src, Where) ),
                Places, Rest),
        clause_places(In, Src, Rest)
    ;   Places = []
    ).

%   term_offsets(+Term, +Pos, +Offsets0, -Offsets): Offsets0 with
%   Var-Offset for each occurrence of a variable in Term read at Pos.

term_offsets(Var, Pos, Os, [Var-From|Os]) :-
    var(Var),
    !,
    (   Pos = From-_ -> true ; arg(1, Pos, From) ).
term_offsets(Term, parentheses_term_position(_, _, Inner), Os0, Os) :- !,
    term_offsets(Term, Inner, Os0, Os).
term_offsets(Term, term_position(_, _, _, _, ArgsPos), Os0, Os) :-
    compound(Term),
    compound_name_arguments(Term, _, Args),
    same_length(Args, ArgsPos),
    !,
    foldl(term_offsets, Args, ArgsPos, Os0, Os).
term_offsets({Arg}, brace_term_position(_, _, ArgPos), Os0, Os) :- !,
    term_offsets(Arg, ArgPos, Os0, Os).
term_offsets(List, list_position(_, _, ElemsPos, TailPos), Os0, Os) :- !,
    list_offsets(List, ElemsPos, TailPos, Os0, Os).
term_offsets(_, _, Os, Os).

list_offsets(List, [], TailPos, Os0, Os) :- !,
    (   TailPos == none -> Os = Os0 ; term_offsets(List, TailPos, Os0, Os) ).
list_offsets([E|Es], [P|Ps], TailPos, Os0, Os) :- !,
    term_offsets(E, P, Os0, Os1),
    list_offsets(Es, Ps, TailPos, Os1, Os).
list_offsets(_, _, _, Os, Os).
