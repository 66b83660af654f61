:- module(etalis_snapshot,
          [ snapshot_parts/4,           % +Rules, +Content, -Head, -Payload
            snapshot_opening/2,         % +Rules, -Opening
            snapshot_content/3,         % +Rules, +Bytes, -Content
            rules_identity/2,           % +Compiled, -Rules
            snapshot_format/1           % -Version
          ]).
:- use_module(library(error)).
:- use_module(library(apply)).
:- use_module(library(lists)).
:- use_module(library(crypto), [crypto_data_hash/3]).
:- use_module(library(terms), [mapsubterms/3]).

/** <module> Snapshots of an engine as bytes

A snapshot is the state of an engine (see etalis_engine_state), written
so that an engine compiled from the same rules, in this process or
another, can take it up.  Its bytes are:

  - the line `etalis-py snapshot`;
  - a header line, the Prolog term
    `snapshot(Format, SWIVersion, Rules, Length, Checksum).`: the
    format's version (snapshot_format/1), SWI-Prolog's version (its
    version_data flag), the identity of the rules (rules_identity/2), and
    the length and SHA-256 (hex) of the content;
  - the content: the term, written by fast_term_serialized/2, which keeps
    the sharing of subterms that the goal stores' queues rely on (they
    are updated in place: a queue's last cell is also the end of its
    list of cells).

The content is read only once the header matches this engine and the
checksum matches the bytes: fast_term_serialized/2 trusts its input.
*/

%!  snapshot_format(-Version) is det.
%
%   Version is the version of the snapshot format that this code writes
%   and reads.

snapshot_format(2).

magic("etalis-py snapshot\n").

%!  snapshot_parts(+Rules, +Content, -Head, -Payload) is det.
%
%   The snapshot of Content for the rules of identity Rules is Head, the
%   SHA-256 of Payload in lowercase hex between single quotes, the text
%   `).` and a newline, then Payload: Head is the first line and the
%   header up to its checksum, Payload the content's bytes (a string of
%   codes 0..255).  The checksum is left to the caller, which may hash
%   the bytes faster where they go (Python's hashlib, without converting
%   a Prolog string) and joins the parts once.
%
%   @error etalis_snapshot_error(Message) if Content holds a blob (a
%   stream, a clause reference), which has no bytes.

snapshot_parts(Rules, Content, Head, Payload) :-
    must_be(atom, Rules),
    catch(fast_term_serialized(Content, Payload),
          error(permission_error(fast_serialize, blob, Blob), _),
          (   format(string(Msg), "cannot take a snapshot: the state holds ~p, which is no term that can be \c
                                  written (did a trusted rule put it into an event?)", [Blob]),
              throw(error(etalis_snapshot_error(Msg), _))
          )),
    string_length(Payload, Length),
    snapshot_opening(Rules, Opening),
    format(string(Head), "~w~d,", [Opening, Length]).

%!  snapshot_opening(+Rules, -Opening) is det.
%
%   Opening is the start of the snapshot of a content for the rules of
%   identity Rules, up to its length: the first line and the header
%   up to the comma before the length.  It is for a caller that writes
%   the content's bytes itself (Python's, from PL_record_external(),
%   which makes the bytes of fast_term_serialized/2 outside the stacks):
%   the length, a comma, the checksum between single quotes, the text
%   `).`, a newline and the bytes follow.

snapshot_opening(Rules, Opening) :-
    must_be(atom, Rules),
    snapshot_format(Format),
    swi_version(Swi),
    magic(Magic),
    format(string(Header), "~q", [snapshot(Format, Swi, Rules)]),
    sub_string(Header, 0, _, 1, Open),          % without its closing parenthesis
    atomics_to_string([Magic, Open, ','], Opening).

swi_version(V) :-
    current_prolog_flag(version_data, swi(Major, Minor, Patch, _)),
    format(atom(V), "~w.~w.~w", [Major, Minor, Patch]).

%!  snapshot_content(+Rules, +Bytes, -Content) is det.
%
%   Content is the term of the snapshot Bytes (a string of codes
%   0..255) of the rules of identity Rules.
%
%   @error etalis_snapshot_error(Message) for bytes that are no
%   snapshot, of another format, SWI-Prolog version or rules, truncated
%   or damaged.

snapshot_content(Rules, Bytes, Content) :-
    (   string(Bytes)
    ->  true
    ;   refuse("it is not a string of bytes")
    ),
    magic(Magic),
    (   string_concat(Magic, Rest, Bytes)
    ->  true
    ;   refuse("it does not start as an etalis-py snapshot does (is it one?)")
    ),
    (   sub_string(Rest, Before, 1, _, "\n"),
        Before < 1000
    ->  sub_string(Rest, 0, Before, _, HeaderText),
        Start is Before + 1,
        sub_string(Rest, Start, _, 0, Payload)
    ;   refuse("its header is cut off or damaged")
    ),
    (   catch(term_string(Header, HeaderText), _, fail),
        ground(Header),
        Header = snapshot(Format, Swi, Rules0, Length, Sum)
    ->  true
    ;   refuse("its header is damaged")
    ),
    snapshot_format(Own),
    (   Format == Own
    ->  true
    ;   format(string(M1), "it is of snapshot format ~q, and this etalis-py reads format ~q", [Format, Own]),
        refuse(M1)
    ),
    swi_version(Here),
    (   Swi == Here
    ->  true
    ;   format(string(M2), "it was written by SWI-Prolog ~w, and this is SWI-Prolog ~w \c
                            (restore it where the same version runs)", [Swi, Here]),
        refuse(M2)
    ),
    (   Rules0 == Rules
    ->  true
    ;   refuse("it is a snapshot of other rules (or of other options: lateness, explain, policy, max_age) \c
                than this engine's")
    ),
    string_length(Payload, Actual),
    (   Actual == Length
    ->  true
    ;   Actual < Length
    ->  format(string(M3), "it is truncated: ~D of its ~D bytes of content are there", [Actual, Length]),
        refuse(M3)
    ;   format(string(M3), "it has ~D bytes of content, more than the ~D it says", [Actual, Length]),
        refuse(M3)
    ),
    crypto_data_hash(Payload, Sum1, [algorithm(sha256), encoding(octet)]),
    (   Sum1 == Sum
    ->  true
    ;   refuse("it is damaged: its checksum does not match its bytes")
    ),
    (   catch(fast_term_serialized(Content, Payload), _, fail)
    ->  true
    ;   refuse("its content cannot be read")
    ).

refuse(Why) :-
    format(string(Msg), "cannot restore the snapshot: ~w", [Why]),
    throw(error(etalis_snapshot_error(Msg), _)).

%!  rules_identity(+Compiled, -Rules) is det.
%
%   Rules (a hex atom) identifies the compiled rule set Compiled: its
%   clauses, static rules and the settings that shape its state, but
%   not the name of its file or the inference limit, so that the same
%   rules read from another path, or as text, are the same rules.

rules_identity(compiled(Program, Clauses, Statics, Settings), Rules) :-
    dict_pairs(Settings, _, Pairs0),
    exclude(not_identity, Pairs0, Pairs),
    findall(C, member(static(C, _), Statics), StaticClauses),
    Term0 = rules(Program, Clauses, StaticClauses, Pairs),
    mapsubterms(fileless, Term0, Term),
    variant_sha1(Term, Rules).

not_identity(rule_items-_).
not_identity(inference_limit-_).

fileless(pos(_, L, C), pos(L, C)).
