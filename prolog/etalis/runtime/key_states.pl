:- module(etalis_key_states,
          [ state_snapshot/4,           % +Engine, +Counters, -Head, -Payload
            state_content/4,            % +Engine, +Counters, -Opening, -Content
            restore_state/3,            % +Engine, +Bytes, -Header
            feed_segment/6,             % +Engine, +Options, +Reset, +Batch, -Header, -Detections
            feed_key_segment/6,         % +Engine, +Options, +Segment, -Fed, +Keys0, -Keys
            segments_text/2             % +Outs, -Text
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(aggregate)).
:- use_module(runtime, [engine_reset/1, engine_due/2]).
:- use_module(feed, [engine_feed/5]).
:- use_module(protocol, [feed_header/2]).
:- use_module(engine_state, [engine_state_get/2, engine_state_put/2, engine_state_check/3]).
:- use_module(snapshot, [snapshot_parts/4, snapshot_opening/2, snapshot_content/3]).
:- use_module(engine_load, [engine_identity/2, engine_exists/1, engine_compiled/2,
                            compiled_size/3, reported_strings/2]).
:- use_module(rule_edits, [changes_possible/4, initial_rules/1, make_rule_change/2]).

/** <module> An engine's state taken and taken up, and feeds of keys' segments

The snapshot and restore requests take an engine's state as the bytes
of a snapshot (see etalis_snapshot) and take one up, with the changes
of the rules it holds.  A feed of segments feeds many keys' events in
one crossing, each segment after a reset of the engine or, with the
keys' states, after a restore of its key's snapshot, whose state is
then taken again for Python to keep.
*/

%!  state_snapshot(+Engine, +Counters:list(integer), -Head, -Payload) is det.
%
%   Head and Payload are the parts of a snapshot (see
%   etalis_snapshot:snapshot_parts/4) of the state of Engine, with
%   Counters (Python's counters of the engine) among it.

state_snapshot(M, Counters, Head, Payload) :-
    engine_identity(M, Rules),
    engine_state_get(M, State),
    snapshot_parts(Rules, snapshot{state: State, counters: Counters}, Head, Payload).

%!  state_content(+Engine, +Counters:list(integer), -Opening, -Content) is det.
%
%   Content is the term that a snapshot of the state of Engine (with
%   Counters among it) holds, the term itself, not a copy, and Opening
%   the snapshot's start up to its content's length (see
%   etalis_snapshot:snapshot_opening/2), for a caller that makes the
%   bytes of Content itself, without a string of them on the stacks,
%   whose garbage would cost a collection of the whole state.

state_content(M, Counters, Opening, snapshot{state: State, counters: Counters}) :-
    engine_identity(M, Rules),
    engine_state_get(M, State),
    snapshot_opening(Rules, Opening).

%!  restore_state(+Engine, +Bytes:string, -Header:dict) is det.
%
%   Engine takes up the state of the snapshot Bytes, with the rules of
%   the snapshot's engine (see the request restore(Engine) of
%   etalis:etalis_api/3); Header is the reply: the snapshot's counters,
%   the engine's prefixes and, if its rules changed, their sizes and
%   printed events.
%
%   @error etalis_snapshot_error(Message) for a snapshot that this
%   engine cannot take up.

restore_state(M, Payload, Header) :-
    engine_exists(M),
    engine_identity(M, Rules),
    snapshot_content(Rules, Payload, Content),
    (   is_dict(Content, snapshot),
        get_dict(state, Content, State),
        get_dict(counters, Content, Counters),
        is_list(Counters),
        is_dict(State),
        get_dict(rule_changes, State, Theirs),
        is_list(Theirs)
    ->  true
    ;   throw(error(etalis_snapshot_error("cannot restore the snapshot: its content is not an engine's state"), _))
    ),
    findall(C, M:'$rule_change'(C), Own),
    (   append(Own, New, Theirs)
    ->  From = now
    ;   From = initial,
        New = Theirs
    ),
    changes_possible(M, From, New, Final),
    engine_state_check(M, Final, State),
    (   From == initial
    ->  initial_rules(M)
    ;   true
    ),
    forall(member(Change, New), make_rule_change(M, Change)),
    engine_state_put(M, State),
    findall(P-NS, M:'$prefix'(P, NS), PrefixPairs),
    dict_pairs(Prefixes, _, PrefixPairs),
    (   From == now,
        New == []
    ->  Header = _{counters: Counters, prefixes: Prefixes}     % the same rules: their sizes are the engine's
    ;   engine_compiled(M, Compiled),
        compiled_size(Compiled, N, G),
        Compiled = compiled(_, _, _, Settings),
        reported_strings(Settings, Printed),
        Header = _{rules: N, goals: G, printed: Printed, prefixes: Prefixes, counters: Counters}
    ).

%!  feed_segment(+Engine, +Options, +Reset, +Batch, -Header, -Detections) is det.
%
%   One segment of a feed of segments: Batch fed to Engine with Options
%   (see etalis_feed:engine_feed/5), after a reset of the engine if
%   Reset is 1.

feed_segment(M, Options, Reset, Batch, Header, Detections) :-
    (   Reset == 1
    ->  engine_reset(M)
    ;   true
    ),
    engine_feed(M, Batch, Options, Summary, Detections),
    feed_header(Summary, Header).

%!  feed_key_segment(+Engine, +Options, +Segment, -Fed, +Keys0, -Keys) is det.
%
%   One segment seg(Reset, Start, End, Batch) of a feed of many keys'
%   segments (the option states/3), Fed its fed(Header, Detections,
%   Taken): before it, the state of the
%   next Start characters of the states (a snapshot) is restored if Start
%   is not 0; after it, if End is 1, the engine's state is taken as a
%   snapshot (Taken its payload, the segment's header its head and its
%   due time) when the events since the restore changed it, else Taken is
%   "" and the header's state is null.  Keys is keys(States, Offset,
%   Counters, Accepted, Restored): the states not yet restored, the
%   counters of the engine (Python's, see Engine._feed, whose counting
%   they follow: accepted, rejected, raised, detections, dropped), the
%   events accepted since the restore and the header of the last restore.

feed_key_segment(M, Options, seg(Reset, Start, End, Batch), fed(Header, Detections, Taken),
                 keys(States, At0, Counters0, Accepted0, Restored0), keys(States, At, Counters, Accepted, Restored)) :-
    (   Start > 0
    ->  sub_string(States, At0, Start, _, State),
        At is At0 + Start,
        restore_state(M, State, Header1),
        put_dict(Header1, Restored0, Restored),        % rules and printed events: the last restore's that had them
        length(Zeros, 5),
        maplist(=(0), Zeros),
        append(Header1.counters, Zeros, Padded),
        length(Counters1, 5),
        append(Counters1, _, Padded),
        Accepted1 = 0
    ;   At = At0,
        Counters1 = Counters0,
        Accepted1 = Accepted0,
        Restored = Restored0
    ),
    feed_segment(M, Options, Reset, Batch, Header0, Detections),
    Counters1 = [A0, R0, Ra0, D0, Dr],
    _{accepted: A, raised: Ra, rejected: Rs} :< Header0,
    length(Rs, NR),
    (   get_dict(stopped, Header0, _) -> Stop = 1 ; Stop = 0 ),
    aggregate_all(count, sub_string(Detections, _, 1, _, "\n"), ND),
    A1 is A0 + A, R1 is R0 + NR + Stop, Ra1 is Ra0 + Ra, D1 is D0 + ND,
    Counters2 = [A1, R1, Ra1, D1, Dr],
    Accepted2 is Accepted1 + A,
    (   End == 1
    ->  Accepted = 0,
        (   Accepted2 > 0
        ->  state_snapshot(M, Counters2, Head, Taken),
            string_length(Taken, Length),
            engine_due(M, Due),
            Header = Header0.put(state, _{head: Head, length: Length, due: Due})
        ;   Taken = "",
            Header = Header0.put(state, null)
        )
    ;   Accepted = Accepted2,
        Taken = "",
        Header = Header0
    ),
    Counters = Counters2.

%!  segments_text(+Outs:list(string), -Text:string) is det.
%
%   Text is the detections Outs of the segments, in order, separated by
%   the character 0x1D.

segments_text(Outs, Text) :-
    foldl([D, Acc0, Acc]>>(Acc0 == [] -> Acc = [D] ; Acc = [D, "\x1d\"|Acc0]), Outs, [], Rev),
    reverse(Rev, Parts),
    atomics_to_string(Parts, Text).
