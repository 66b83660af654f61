:- module(etalis_graph_batch,
          [ graph_batch_terms/3         % +Text, +Count, -Terms
          ]).
:- use_module(library(error)).
:- use_module(library(lists)).
:- use_module(library(apply)).

/** <module> Graph batches: graph events handed over as numbers

A batch of graph events read from an N-Quads stream (see nquads.py)
crosses from Python as one string that Prolog's reader reads only in
part: the batch's distinct terms once, and each graph and triple as
character codes that index them.  Text is

    RS Lengths NL Atoms Others Graphs Triples

with RS the character 0x1E, NL a newline and Lengths the lengths of
Atoms, Others and Graphs and the number of atoms, separated by spaces:

  - Atoms: the atoms of the batch's IRIs and blank nodes, separated by
    newlines (split at once, never read as Prolog text);
  - Others: a Prolog list of the other terms (literals, times);
  - Graphs: five codes a graph: the number of lines before it since the
    last graph (its gap), its name, its time, its stream (0 for none)
    and its number of triples;
  - Triples: three codes a triple, S, P and O, the graphs' triples in
    order.

The table of terms is Atoms followed by Others, numbered from 1.  A
code that names a term of the table (a name, a time, S, P, O) is its
number, except that the numbers of the surrogates, 0xD800 to 0xDFFF,
are skipped (no character has them): the table holds 2048 unused
entries there.  A code that counts (gap, stream, triples) is the count
plus 1 (0 would end a C string), again with the surrogates skipped.

The atoms, graphs and triples are decoded by the foreign library of
etalis_columns (`etalis_graph_terms/7` in etalis_columns.c) once it is
loaded, unless the environment variable ETALIS_TEXT_PATH asks for the
text path; else here, in Prolog, to the same list.
*/

%!  graph_batch_terms(+Text, +Count, -Terms) is semidet.
%
%   Terms is the batch list of Count elements (see etalis_batches)
%   of the graph batch Text: `event(graph(rdf_graph(Name, Triples)),
%   Time)`, or `rdf_graph(Name, Triples, Stream)` for a graph on a
%   stream, at the line of each graph, `[]` at the other lines.  Fails
%   if Text is no graph batch (it does not start with 0x1E); raises a
%   domain error for one that does not decode.

graph_batch_terms(Text, Count, Terms) :-
    sub_string(Text, 0, 1, _, "\x1e\"),
    must_be(nonneg, Count),
    (   once(sub_string(Text, HeadEnd, 1, _, "\n")),
        HeadLength is HeadEnd - 1,
        sub_string(Text, 1, HeadLength, _, Head),
        split_string(Head, " ", "", Lengths),
        maplist(number_string, [A, O, G, N], Lengths),
        AtomStart is HeadEnd + 1,
        sub_string(Text, AtomStart, A, _, AtomText),
        OtherStart is AtomStart + A,
        sub_string(Text, OtherStart, O, _, OtherText),
        GraphStart is OtherStart + O,
        sub_string(Text, GraphStart, G, After, Graphs),
        sub_string(Text, _, After, 0, Triples),
        batch_terms(N, AtomText, OtherText, Graphs, Triples, Count, Terms)
    ->  true
    ;   domain_error(graph_batch, Text)
    ).

%   batch_terms(+N, +AtomText, +OtherText, +Graphs, +Triples, +Count, -Terms):
%   decoded by the foreign library of etalis_columns if it is loaded
%   (and ETALIS_TEXT_PATH does not ask for the text path), else here.
%   The library registers its predicates in etalis_columns itself, so
%   asking for one does not load columns.pl, which loads the runtime.

batch_terms(N, AtomText, OtherText, Graphs, Triples, Count, Terms) :-
    (   current_predicate(etalis_columns:etalis_graph_terms/7),
        \+ text_path_forced
    ->  term_string(Others, OtherText),
        catch(etalis_columns:etalis_graph_terms(AtomText, N, Others, Graphs, Triples, Count, Terms),
              error(domain_error(graph_batch, _), _),
              fail)
    ;   table(N, AtomText, OtherText, Table),
        string_codes(Graphs, Gs),
        string_codes(Triples, Ts),
        graph_terms(Gs, Ts, Table, 0, Count, Terms)
    ).

text_path_forced :-
    getenv('ETALIS_TEXT_PATH', Value),
    Value \== '',
    Value \== '0'.

table(N, AtomText, OtherText, Table) :-
    (   N =:= 0
    ->  Atoms = []
    ;   atomic_list_concat(Atoms, '\n', AtomText)
    ),
    term_string(Others, OtherText),
    append(Atoms, Others, Entries0),
    skip_surrogates(Entries0, Entries),
    compound_name_arguments(Table, t, Entries).

%   skip_surrogates(+Entries0, -Entries): Entries0 with 2048 unused
%   entries from number 0xD800 on, if it reaches that far.

skip_surrogates(Entries0, Entries) :-
    (   length(Entries0, N),
        N >= 0xD800
    ->  length(Before, 0xD7FF),
        append(Before, After, Entries0),
        length(Unused, 0x800),
        maplist(=([]), Unused),
        append([Before, Unused, After], Entries)
    ;   Entries = Entries0
    ).

graph_terms([], [], _, Line, Count, Terms) :-
    Rest is Count - Line,
    unused_lines(Rest, Terms, []).
graph_terms([G, N, T, S, K|Gs], Ts0, Table, Line0, Count, Terms) :-
    count(G, Gap),
    unused_lines(Gap, Terms, [event(graph(Graph), Time)|Terms1]),
    Line is Line0 + Gap + 1,
    arg(N, Table, Name),
    arg(T, Table, Time),
    count(K, Size),
    triples(Size, Ts0, Table, Triples, Ts),
    (   S == 1
    ->  Graph = rdf_graph(Name, Triples)
    ;   count(S, I),
        arg(I, Table, Stream),
        Graph = rdf_graph(Name, Triples, Stream)
    ),
    graph_terms(Gs, Ts, Table, Line, Count, Terms1).

count(C, N) :-
    (   C < 0xD800
    ->  N is C - 1
    ;   N is C - 0x801
    ).

%   unused_lines(+N, -Terms, ?Tail): Terms is N elements `[]` followed
%   by Tail.  A gap of up to 32 lines (a graph's other quads, its time
%   triple) is one lookup of a prepared list.

unused_lines(N, Terms, Tail) :-
    (   N < 33
    ->  unused(N, Terms, Tail)
    ;   Terms = [[], [], [], [], [], [], [], [], [], [], [], [], [], [], [], [],
                 [], [], [], [], [], [], [], [], [], [], [], [], [], [], [], []|Terms1],
        N1 is N - 32,
        unused_lines(N1, Terms1, Tail)
    ).

term_expansion(unused_lines, Clauses) :-
    findall(unused(N, Terms, Tail),
            ( between(0, 32, N),
              length(Unused, N),
              maplist(=([]), Unused),
              append(Unused, Tail, Terms)
            ),
            Clauses).

unused_lines.

triples(0, Ts, _, [], Ts) :- !.
triples(N, [S0, P0, O0|Ts0], Table, [t(S, P, O)|Triples], Ts) :-
    arg(S0, Table, S),
    arg(P0, Table, P),
    arg(O0, Table, O),
    N1 is N - 1,
    triples(N1, Ts0, Table, Triples, Ts).
