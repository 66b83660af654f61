:- module(etalis_columns,
          [ columns_library/1,          % +File
            columns_loaded/0,
            column_terms/3,             % +Spec, -Terms, -Checked
            list_text_terms/4,          % +Text, +Count, -Terms, -Checked
            packed_reset/0,
            packed_detections/1         % -Dict
          ]).
:- use_module(library(error)).
:- use_module(library(shlib)).
:- use_module(library(apply)).
:- use_module(library(lists)).
:- use_module(input_events, [event_name/1]).

/** <module> Batches of events as packed columns

Python packs a batch of events as columns of 8-byte cells (int64,
float64, or an index into a table of terms sent with the batch) and
passes their addresses; the foreign library built from
`etalis_columns.c` (beside this file) makes the batch list of event terms from them,
the same list that reading the batch's text (see etalis_batches) gives,
without the text.  pyswip runs SWI-Prolog in the Python process, so the
addresses of numpy's arrays are valid here for the time of the request.

The layout, `columns(N, heads(Codes, Heads), Columns, When)`:

  - Codes: the address of N int32 codes, one a row: the index of the
    row's `Name/Arity` in the list Heads, or -1 for a row with nothing
    to process (the batch list's `[]`).
  - Columns: the argument columns, then the time column (When =
    `point`) or the start and end columns (When = `interval`).  A column
    is `col(Tags, Values, Table)`: Values the address of N 8-byte cells,
    Tags the address of N uint8 tags or `all(Tag)`; tag 0 is an int64,
    1 a float64, 2 the element of Table at that index (a term read from
    the request's text: atoms, strings, big integers, lists, ...).

Row I is then `event(Name(A1, ..., Ak), T)` (`event(Name, T)` for k =
0), Ai the cell of row I in column i, T the time cell or the list
`[Start, End]` of the two time cells.  When may also be the address of
N uint8 flags: a row flagged 1 has the interval of the last two
columns, one flagged 0 the point of the second last.
*/

%!  columns_library(+File) is det.
%
%   Load the foreign library File (built from `etalis_columns.c`, beside
%   this file).  It is loaded into the process's global scope, where
%   Python finds its scanner of event lines (`etalis_scan_events()`).

columns_library(File) :-
    must_be(atom, File),
    (   columns_loaded
    ->  true
    ;   absolute_file_name(File, Path, [file_type(executable), access(read), file_errors(fail)])
    ->  open_shared_object(Path, _, [global]),
        load_foreign_library(Path)
    ;   load_foreign_library(File)
    ).

%!  columns_loaded is semidet.
%
%   The foreign library is loaded.

columns_loaded :-
    current_predicate(etalis_columns:etalis_column_terms/3).

%!  column_terms(+Spec, -Terms, -Checked) is det.
%
%   Terms is the batch list of the packed columns Spec (see the module's
%   documentation).  Checked is `checked` if every event of Terms is a
%   valid input event (its name not reserved, its arguments ground, its
%   time finite numbers, a start not after its end), as
%   etalis_feed:engine_feed/5 takes it, else `plain`.
%
%   @error existence_error(foreign_library, etalis_columns) if the
%   library is not loaded.

%!  packed_reset is det.
%
%   Forget the detections packed so far (detection format `packed`, see
%   etalis_protocol:detection_format/1).

packed_reset :-
    etalis_packed_reset.

%!  packed_detections(-Dict) is det.
%
%   Dict describes the detections packed since packed_reset/0, for
%   Python to read: `count` detections, `heads` and `arities` the
%   addresses of a int32 each (the index of its name in `atoms`, its
%   number of arguments), then `cells` cells (a cell each argument and
%   time, in order) at the addresses `tags` (uint8: 0 an int64, 1 a
%   float64, 2 the index of an atom in `atoms`, 3 of a JSON text in
%   `texts`) and `values` (8 bytes each).  The buffers stay until the next
%   reset.

packed_detections(_{count: N, heads: Heads, arities: Arities, cells: Cells, tags: Tags, values: Values,
                    atoms: Strings, texts: Texts}) :-
    etalis_packed_detections(packed(N, Heads, Arities, Cells, Tags, Values), Atoms, Texts),
    maplist(atom_string, Atoms, Strings).

%!  list_text_terms(+Text, +Count, -Terms, -Checked) is semidet.
%
%   Terms is the list of the Count events of the batch list Text (see
%   etalis_batches), read by the foreign library if Text is in the
%   shape it reads, `[event(Name(Args), Time),\n...]` with numbers and
%   plain atoms as arguments and numbers as times; the terms are those
%   term_string/2 gives.  Checked is as for column_terms/3.  Fails for
%   any other text, or without the library, leaving Text to Prolog's
%   reader.

list_text_terms(Text, Count, Terms, Checked) :-
    columns_loaded,
    etalis_list_terms(Text, Count, Terms, Names),
    (   is_list(Names),
        forall(member(Name, Names), event_name(Name))
    ->  Checked = checked
    ;   Checked = plain
    ).

column_terms(Spec, Terms, Checked) :-
    (   columns_loaded
    ->  etalis_column_terms(Spec, Terms, Valid),
        (   Valid == true,
            Spec = columns(_, heads(_, Heads), _, _),
            forall(member(Name/_, Heads), event_name(Name))
        ->  Checked = checked
        ;   Checked = plain
        )
    ;   existence_error(foreign_library, etalis_columns)
    ).
