:- module(etalis_batches,
          [ request_batches/4           % +Batch, +Payload, +Segments, -Batches
          ]).
:- use_module(library(error)).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(columns, [column_terms/3, list_text_terms/4]).
:- use_module(graph_batch, [graph_batch_terms/3]).

/** <module> The batches of a feed request, as the runtime takes them

A feed request (see etalis.pl) names its batch as it crosses from
Python, with the request's payload; etalis_feed:engine_feed/5 takes
it as event lines, lines(Text), or as a list of terms, terms(Terms,
Checked).  The forms of a request's batch:

  - `lines`: the payload is event lines;
  - list(Count): the payload is one Prolog list of Count elements with
    one element a line (see list_terms/4);
  - columns(Count, Spec): the batch is packed as columns whose
    addresses Spec gives (see etalis_columns:column_terms/3); no
    payload;
  - flush(Timers) and advance(Time): no events (see engine_feed/5).

A request of segments (a batch of several keys' events, each fed on
its own) gives a list of counts, one a segment, in place of Count, and
separates the payload's segments of lines or lists by the character
0x1D (never part of an event line).
*/

%!  request_batches(+Batch, +Payload, +Segments, -Batches) is det.
%
%   Batches are the batches of engine_feed/5 of the request's Batch with
%   Payload: one if Segments is `false`, else one a segment.

request_batches(Batch, Payload, false, [Runtime]) :- !,
    request_batch(Batch, Payload, Runtime).
request_batches(columns(Counts, Spec), _, true, Batches) :- !,
    must_be(list(nonneg), Counts),
    sum_list(Counts, Count),
    spec_terms(Spec, Count, Terms, Checked),
    segment_batches(Counts, Terms, Checked, Batches).
request_batches(Batch, Payload, true, Batches) :-
    split_string(Payload, "\x1d\", "", Texts),
    (   Batch == lines
    ->  maplist(request_batch(lines), Texts, Batches)
    ;   Batch = list(Counts),
        must_be(list(nonneg), Counts)
    ->  maplist([N, Text, B]>>request_batch(list(N), Text, B), Counts, Texts, Batches)
    ;   domain_error(etalis_segments, Batch)
    ).

request_batch(lines, Text, lines(Text)) :- !.
request_batch(list(Count), Text, Batch) :- !,
    must_be(string, Text),
    must_be(nonneg, Count),
    (   catch(list_terms(Text, Count, Terms, Checked), error(resource_error(Resource), _), true)
    ->  true
    ;   true
    ),
    (   nonvar(Resource)
    ->  first_term(Text, Term),
        Batch = full(Resource, Term)
    ;   nonvar(Terms)
    ->  Batch = terms(Terms, Checked)
    ;   headless(Text, List),
        list_lines(List, Lines),
        Batch = lines(Lines)
    ).
request_batch(columns(Count, Spec), _, terms(Terms, Checked)) :- !,
    must_be(nonneg, Count),
    spec_terms(Spec, Count, Terms, Checked).
request_batch(flush(Timers), _, flush(Timers)) :- !.
request_batch(advance(Time), _, advance(Time)) :- !.
request_batch(Batch, _, _) :-
    domain_error(etalis_batch, Batch).

%   list_terms(+Text, +Count, -Terms, -Checked) is semidet.
%
%   Text is one Prolog list of Count elements with one element a line (a
%   comma ends each line but the last): element I is the term of line I
%   of the batch (as a line of event lines would hold it, without its
%   full stop), or `[]` for a line that holds nothing (a row that Python
%   rejected).  The whole batch is read at once, which costs a fraction
%   of reading it a term at a time.  Should Text not read as a list of
%   Count elements, this fails, and the batch is fed line by line (see
%   list_lines/2), so that each bad line gets its own rejection.
%
%   The atoms that the elements share can be written once, at the head
%   of the batch: Text is then `Vars = Atoms, List`, with Vars a list of
%   distinct variables, Atoms a list of as many atoms and List the batch
%   list, whose elements write each of these atoms as its variable (the
%   IRIs of a batch of graph events, see graphs.py: an IRI is read once
%   a batch, not once a triple).  The head is the first line of Text:
%   should the batch not read, its list is fed line by line without it
%   (so a line that names an atom by its variable is rejected).
%
%   Text may also be a graph batch (see graph_batch_terms/3), whose
%   terms cross as numbers; it always decodes.  A batch of plain events
%   in the common shape is read by the foreign library (see
%   list_text_terms/4), to the same terms, in a fraction of the time;
%   Checked is then `checked` if they are known to be valid input events
%   (see etalis_feed:engine_feed/5), else `plain`.

list_terms(Text, Count, Terms, Checked) :-
    (   graph_batch_terms(Text, Count, Terms)
    ->  Checked = plain
    ;   list_text_terms(Text, Count, Terms, Checked)
    ->  true
    ;   Checked = plain,
        catch(term_string(Batch, Text), error(syntax_error(_), _), fail),
        batch_terms(Batch, Terms),
        is_list(Terms),
        length(Terms, Count)
    ).

%   batch_terms(+Batch, -Terms): the list of terms of a batch list read
%   as Batch, with its atoms in place of its variables if it has a head
%   `Vars = Atoms` (see list_terms/4).

batch_terms((Vars = Atoms, Terms), Terms) :- !,
    is_list(Vars),
    is_list(Atoms),
    maplist(atom, Atoms),
    Vars = Atoms.
batch_terms(Terms, Terms).

%   first_term(+Text, -Term): the term of the first line of the batch
%   list Text (the text of that line if it does not read), for a batch
%   that the stacks had no room to read whole.

first_term(Text, Term) :-
    headless(Text, List),
    (   sub_string(List, 0, 1, _, "[")
    ->  sub_string(List, 1, _, 0, List1)
    ;   List1 = List
    ),
    (   sub_string(List1, Before, _, _, "\n")
    ->  sub_string(List1, 0, Before, _, Part0)
    ;   Part0 = List1
    ),
    list_line(Part0, Line),
    (   catch(term_string(Term, Line), _, fail)
    ->  true
    ;   Term = Line
    ).

%   headless(+Text, -List): the batch list of Text, without the line of
%   its head if it has one (see list_terms/4).

headless(Text, List) :-
    (   sub_string(Text, 0, 2, _, "[_"),
        sub_string(Text, Before, 1, _, "\n")
    ->  Start is Before + 1,
        sub_string(Text, Start, _, 0, List)
    ;   List = Text
    ).

%   list_lines(+Text, -Lines): the event lines that the list Text
%   stands for.

list_lines(Text, Lines) :-
    (   sub_string(Text, 0, 1, _, "[")
    ->  sub_string(Text, 1, _, 0, Text1)
    ;   Text1 = Text
    ),
    split_string(Text1, "\n", "", Parts),
    maplist(list_line, Parts, Lines0),
    atomics_to_string(Lines0, Lines).

list_line(Part0, Line) :-
    (   ( string_concat(Part, ",", Part0) ; string_concat(Part, "]", Part0) )
    ->  true
    ;   Part = Part0
    ),
    (   Part == "[]"
    ->  Line = "\n"
    ;   string_concat(Part, ".\n", Line)
    ).

%   spec_terms(+Spec, +Count, -Terms, -Checked): the Count event terms of
%   the packed columns Spec, and whether they are known valid (see
%   etalis_columns:column_terms/3).

spec_terms(Spec, Count, Terms, Checked) :-
    (   ground(Spec)
    ->  true
    ;   domain_error(ground_columns, Spec)
    ),
    column_terms(Spec, Terms, Checked),
    must_be(list, Terms),
    length(Terms, Count).

%   segment_batches(+Counts, +Terms, +Checked, -Batches): Terms cut into
%   batches terms(Segment, Checked) of Counts elements each.

segment_batches([], [], _, []).
segment_batches([N|Ns], Terms, Checked, [terms(Segment, Checked)|Batches]) :-
    length(Segment, N),
    append(Segment, Rest, Terms),
    segment_batches(Ns, Rest, Checked, Batches).
