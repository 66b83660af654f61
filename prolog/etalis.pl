:- module(etalis,
          [ etalis_api/3,               % +Request, +Payload, -Reply
            load_engine/5               % +Source, +Options, -Engine, -Items, -Compiled
          ]).
:- use_module(library(error)).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(option)).
:- use_module(library(assoc)).
:- use_module(library(pairs)).
:- use_module(library(http/json)).
:- use_module(etalis/reader/syntax).
:- use_module(etalis/errors, [etalis_error/3]).
:- use_module(etalis/reader/decode, [etl_file_encoding/3]).
:- use_module(etalis/compiler/compile).
:- use_module(etalis/compiler/strategies, [skip_kept/2]).
:- use_module(etalis/compiler/hidden_names, [no_hidden_names/1, numbered_items/4]).
:- use_module(etalis/runtime/load).
:- use_module(etalis/runtime/runtime).
:- use_module(etalis/runtime/feed).
:- use_module(etalis/runtime/feed_state, [feed_warning/2]).
:- use_module(etalis/runtime/prefixes, [engine_prefixes/2]).
:- use_module(etalis/rdf/knowledge).
:- use_module(etalis/safety/sandbox, [sandbox_check/2, item_goal/3, undefined_predicates/2]).
:- use_module(etalis/safety/guard, [guard_engine/1]).
:- use_module(etalis/compiler/operators, [store_index/3, stored_input/5]).
:- use_module(etalis/runtime/protocol).
:- use_module(etalis/runtime/columns).
:- use_module(etalis/runtime/batches).
:- use_module(etalis/compiler/rule_facts).
:- use_module(etalis/dialect/driver, [etalis_driver/4]).
:- use_module(etalis/runtime/engine_state).
:- use_module(etalis/runtime/snapshot).

/** <module> etalis-py: the engine's face towards Python

Python talks to the engine through etalis_api/3 only: a request term as
text, a payload (rule text or event lines) and a reply as text (or,
for a snapshot, reply(Header, Bytes), see api_reply/3).  The
reply starts with one line of JSON, the header; for `feed` the
detections follow, one JSON object a line.  An error is a header
`{"error": {...}}` with the file, line and column where it applies.

Requests:

  - create(Source, Options): payload is rule text (Source is `file(Path)`
    to read Path instead, or `text(Name)`; `with_static(Files, Source)`
    adds the static knowledge of the files Files before the rules of
    Source, as consulting them first would); Options as compile_items/3,
    and analysis(true): the reply's `analysis` is then the `rules` reply
    of Source, made from the same reading.
  - feed(Engine, Batch, Options): one batch of events, or the engine's
    time moved on.  Batch is `lines` (the payload is event lines),
    list(Count) (the payload is one Prolog list of Count event terms,
    one a line: Python's batches, read at once), columns(Count, Spec)
    (the batch packed as columns whose addresses Spec gives, see
    etalis_columns:column_terms/3; no payload), flush(Timers) (process
    the events held back by a lateness, then, if Timers is `true`, fire
    the timers still pending: the end of a finite input need not be the
    end of time) or advance(Time) (the engine's time moves on to Time
    with no event, as the machine's clock on an idle live stream: the
    events held back up to Time are processed and the timers due by then
    fire; no later event may be earlier than Time); see
    etalis_batches and etalis_feed:engine_feed/5.  Options:
    first(Line), the line of the batch's first event in its source (1);
    format(Format), the detections as `object` (a JSON object a line,
    as `etalis run` prints them), `row` (a JSON array a line,
    `["c", [1], 1, 2]`, which Python decodes faster) or `packed` (packed
    in buffers that the header's `packed` describes, see
    etalis_columns:packed_detections/1, the body a newline for each);
    segments(Resets): the batch is segments (many keys' events in one
    crossing), each fed on its own after a reset of the engine if its
    element of Resets is 1: the payload's segments are separated by the
    character 0x1D (never part of an event line), and Count is a list of
    counts, one a segment; the reply has one header per segment and the
    detections of the segments separated by 0x1D.  With
    states(Counters, Starts, Ends) too, the segments are keys' events fed
    into their own states in one crossing: the payload starts with the
    snapshots to restore, each restored before the segment whose element
    of Starts is its length (0: the engine goes on with the state it
    holds); after a segment whose element of Ends is 1, the engine's state
    is taken as a snapshot if the events since the last restore changed
    it, and the segment's header has its `state`: `head` (as
    snapshot's), `length` and `due` (as due's), else null.  Counters are
    Python's counters of the engine as the request starts; the reply has
    them as it ends (`counters`), the header of the restores
    (`restored`), and the length of the detections' text (`length`),
    which the snapshots' payloads follow in the body.  If an event takes
    more inferences than the engine's limit, the feed stops before it and
    the header has `stopped: {kind: limit, line, event, limit, where}`
    (where: the `where` condition that was running, or null); `kind` is
    `time` (with `seconds`) for an event that ran longer than its limit
    allows and `memory` for one that ran out of memory.  A flush or
    advance that reaches a limit is an error of the same fields.
  - columns_library(File): load the foreign library of packed columns;
    prolog_home: SWI-Prolog's home directory (to build it).
  - due(Engine): the earliest time to which advance does something.
  - stats(Engine), destroy(Engine).
  - reset(Engine): fresh state (no pending goals, no last time), same rules.
  - add_rules(Engine, Source): payload is rule text to add while running.
  - remove_rule(Engine, Label).
  - pending(Engine, Name): the matched parts of a rule's pattern that wait
    for the rest.
  - listing(Source, Options): the binary goals and clauses.
  - rules(Source): the parsed rules as JSON (head, pattern, policy,
    position, and the facts of etalis_rule_facts for `etalis check`),
    with the reported events, the `:- input` declarations, the max_age
    (null for none), the static clauses that use event operators, the
    predicates its goals call that nothing defines, the IRIs its goals
    ask as classes and properties, its ontologies and prefixes.
  - solve(Engine): all solutions of the goal in the payload, run in the
    engine's module (so its static rules are visible), as JSON bindings.
  - etalis_driver(File, Run): the event stream of an original ETALIS
    test driver, as event lines (see etalis_driver/4); the header is
    its Info.
  - snapshot(Engine, Counters): the state of the engine as bytes (see
    etalis_snapshot), with Counters (a list of integers: Python's
    counters of the engine) among it, in the parts of
    etalis_snapshot:snapshot_parts/4: the header's `snapshot_head` is
    its Head, the body its Payload, each byte a character of code
    0..255; the caller puts the Payload's SHA-256 between them.
  - restore(Engine): payload is the bytes of a snapshot of an engine of
    the same rules; the engine takes up its state, with the rules of the
    snapshot's engine: the changes of the rules made while it ran are
    made again, to this engine's rules if it made the first of them
    already, else to the rules it was made with.  The reply has the
    Counters given to snapshot, and the rules, goals, printed events and
    prefixes as add_rules has.
  - knowledge(Engine, Action): replace (Action `reset`) or extend (`add`,
    payload: fact lines) the engine's background knowledge, see
    knowledge_update/4.

The reply to create lists the `:- ontology(File)` directives of the
rules, for Python to load (it owns RDF parsing and reasoning).
*/

%!  etalis_api(+Request:string, +Payload:string, -Reply:string) is det.
%
%   Serve one request from Python; never raises, but for a snapshot
%   that fills the stacks, whose error the bridge words (as for any
%   request whose reply does not fit).

etalis_api(RequestText, Payload, Reply) :-
    catch(( term_string(Request, RequestText),
            serve(Request, Payload, Header, Body) ),
          Error,
          (   Error = error(resource_error(_), _),
              string_concat("snapshot(", _, RequestText)   % catch/3 undid the binding of Request
          ->  throw(Error)
          ;   error_reply(Error, Header, Body)
          )),
    !,
    with_output_to(string(H), json_write_dict(current_output, Header, [width(0)])),
    api_reply(H, Body, Reply).
etalis_api(RequestText, _, Reply) :-
    format(string(Reply), "{\"error\": {\"kind\": \"internal\", \"message\": \"request failed: ~w\"}}\n",
           [RequestText]).

%   api_reply(+Header, +Body, -Reply): Reply is the Header line and the
%   Body; a Body bytes(Bytes) (the megabytes of a snapshot) is not
%   copied behind the header: the reply is reply(Header, Bytes), which
%   Python reads in two parts.

api_reply(H, bytes(Bytes), reply(H, Bytes)) :-
    !.
api_reply(H, Body, Reply) :-
    string_concat(H, "\n", H1),
    string_concat(H1, Body, Reply).

serve(create(Source, Options), Payload, Header, "") :-
    load_engine(source(Source, Payload), Options, M, Items, Compiled),
    Compiled = compiled(program(Nodes, _), _, _, Settings),
    _{policy: Policy, rules: NRules} :< Settings,
    length(Nodes, NNodes),
    reported_strings(Settings, PrintedS),
    declared_ontologies(Settings, Ontologies),
    event_prefixes(M, Settings, Prefixes),
    term_string(Policy, PolicyS),
    source_decoded(Source, Decoded),
    Header0 = _{engine: M, rules: NRules, goals: NNodes, policy: PolicyS, printed: PrintedS,
                ontologies: Ontologies, prefixes: Prefixes, decoded: Decoded},
    (   memberchk(analysis(true), Options)
    ->  analysis_settings(Items, Options, Settings, FileSettings),
        rules_header(Source, Items, FileSettings, Analysis),
        Header = Header0.put(analysis, Analysis)
    ;   Header = Header0
    ).
serve(feed(M, Batch, Options0), Payload0, Header, Detections) :-
    must_be(list, Options0),
    (   selectchk(segments(Resets), Options0, Options1)
    ->  must_be(list(oneof([0, 1])), Resets),
        engine_compiled(M, _),
        (   selectchk(states(Counters, Starts, Ends), Options1, Options)
        ->  must_be(list(integer), Counters),
            must_be(list(nonneg), Starts),
            must_be(list(oneof([0, 1])), Ends),
            sum_list(Starts, Length),
            sub_string(Payload0, 0, Length, _, States),
            sub_string(Payload0, Length, _, 0, Payload),
            request_batches(Batch, Payload, true, Batches),
            maplist([R, S, E, B, seg(R, S, E, B)]>>true, Resets, Starts, Ends, Batches, Segments),
            foldl(feed_key_segment(M, Options), Segments, Fed, keys(States, 0, Counters, 0, _{}),
                  keys(_, _, Final, _, Restored)),
            maplist([fed(R, O, T), R, O, T]>>true, Fed, Results, Outs, Taken),
            segments_text(Outs, Text),
            string_length(Text, TextLength),
            exclude(==(""), Taken, Payloads),
            atomics_to_string([Text|Payloads], Detections),
            Header = _{segments: Results, length: TextLength, counters: Final, restored: Restored}
        ;   request_batches(Batch, Payload0, true, Batches),
            maplist(feed_segment(M, Options1), Resets, Batches, Results, Outs),
            Header = _{segments: Results},
            segments_text(Outs, Detections)
        )
    ;   request_batches(Batch, Payload0, false, [Runtime]),
        (   option(format(packed), Options0)
        ->  packed_reset,
            engine_feed(M, Runtime, Options0, Summary, Detections),
            packed_detections(Packed),
            feed_header(Summary, Header0),
            Header = Header0.put(packed, Packed)
        ;   engine_feed(M, Runtime, Options0, Summary, Detections),
            feed_header(Summary, Header)
        )
    ).
serve(columns_library(File), _, _{loaded: File}, "") :-
    columns_library(File).
serve(prolog_home, _, _{home: Home}, "") :-
    current_prolog_flag(home, Home).
serve(due(M), _, _{due: Due}, "") :-
    engine_due(M, Due).
serve(stats(M), _, _{pending: Total, stores: Stores, rules: Rules, buffered: Buffered, skip_kept: Kept}, "") :-
    engine_buffered(M, Buffered),
    skip_kept(M, Kept),
    findall(Id-Side-C, ( engine_pending(M, I, C), store_index(Id, Side, I) ), Counts),
    findall(_{goal: Id, side: Side, pending: C}, ( member(Id-Side-C, Counts), C > 0 ), Stores),
    aggregate_all(sum(C), member(_-_-C, Counts), Total),
    goal_counts(Counts, ByGoal),
    findall(_{rule: Name, pending: P},
            ( M:'$rule_goals'(Name, Ids),
              foldl(goal_count(ByGoal), Ids, 0, P) ),
            Rules).
serve(add_rules(M, Source), Payload, _{rules: N, goals: G, ontologies: Ontologies, prefixes: Prefixes,
                                       printed: Printed}, "") :-
    engine_compiled(M, _),
    source_items(source(Source, Payload), Items),
    add_items(M, Items, C),
    compiled_size(C, N, G),
    C = compiled(_, _, _, Settings),
    declared_ontologies(Settings, Ontologies),
    event_prefixes(M, Settings, Prefixes),
    reported_strings(Settings, Printed).
serve(remove_rule(M, Label), _, _{rules: N, goals: G, printed: Printed}, "") :-
    remove_label(M, Label, C),
    compiled_size(C, N, G),
    C = compiled(_, _, _, Settings),
    reported_strings(Settings, Printed).
serve(pending(M, Label), _, _{pending: Parts}, "") :-
    engine_compiled(M, compiled(program(Nodes, _), _, _, _)),
    (   M:'$rule_goals'(Label, Ids)
    ->  true
    ;   format(string(Msg), "no rule is named ~q", [Label]),
        throw(error(etalis_engine_error(Msg), _))
    ),
    findall(Part, pending_part(M, Nodes, Ids, Part), Parts).
serve(snapshot(M, Counters), _, _{snapshot_head: Head}, bytes(Payload)) :-
    engine_exists(M),
    must_be(list(integer), Counters),
    state_snapshot(M, Counters, Head, Payload).
serve(restore(M), Payload, Header, "") :-
    restore_state(M, Payload, Header).
serve(knowledge(M, Action), Payload, _{added: N, size: Size}, "") :-
    engine_compiled(M, _),
    knowledge_update(M, Action, Payload, N),
    knowledge_size(M, Size).
serve(etalis_driver(File, Run), _, Info, Lines) :-
    etalis_driver(File, Run, Info, Events),
    with_output_to(string(Lines), forall(member(E, Events), stream_line(E))).
serve(destroy(M), _, _{destroyed: M}, "") :-
    engine_destroy(M).
serve(reset(M), _, _{reset: M}, "") :-
    engine_compiled(M, _),
    engine_reset(M).
serve(rules(Source), Payload, Header, "") :-
    source_items(source(Source, Payload), Items),
    compile_items(Items, [recursion(unchecked)], compiled(_, _, _, Settings)),
    rules_header(Source, Items, Settings, Header).
serve(policy(Name), _, _{known: Known, hint: Hint}, "") :-
    (   catch(term_string(P, Name), _, fail),
        ground(P),
        etalis_policies:policy(P)
    ->  Known = true
    ;   Known = false
    ),
    etalis_policies:policy_hint(Hint).
serve(solve(M), Payload, _{solutions: Solutions}, "") :-
    term_string(Goal, Payload, [variable_names(VN)]),
    findall(S, ( M:Goal, bindings_json(VN, S) ), Solutions).
serve(listing(Source, Options), Payload, _{ok: true}, Text) :-
    source_items(source(Source, Payload), Items),
    untrusted_check(Options, Items),
    compile_items(Items, Options, Compiled),
    with_output_to(string(Text), compiled_listing(Compiled)).

%   analysis_settings(+Items, +Options, +Settings, -FileSettings): the
%   settings of the rule file's own, as the `rules` request compiles
%   Items: an engine's Settings unless Options change them.

analysis_settings(Items, Options, Settings, FileSettings) :-
    (   member(Option, Options),
        functor(Option, Name, 1),
        memberchk(Name, [policy, report, max_age, only_rules, explain])
    ->  compile_items(Items, [recursion(unchecked)], compiled(_, _, _, FileSettings))
    ;   FileSettings = Settings
    ).

%   rules_header(+Source, +Items0, +Settings, -Header): the `rules`
%   reply of the rule file Source, its items Items0 as read and
%   compiled with Settings.

rules_header(Source, Items0, Settings, Header) :-
    no_hidden_names(Zero),
    numbered_items(Items0, Zero, Items, _),     % as the compiler numbered them
    _{policy: Policy, overrides: Overrides, printed: Printed, printed_explicit: Explicit,
      max_age: MaxAge, directives: Directives} :< Settings,
    findall(R, ( member(rule(L, H, P, Where, VN), Items),
                 rule_json(L, H, P, Where, VN, Overrides, Policy, R) ), Rules),
    term_string(Policy, PolicyS),
    printed_strings(Printed, PrintedS),
    findall(_{name: N, arity: A, line: Line, column: Col},
            member(input(N/A, pos(_, Line, Col)), Directives), Inputs0),
    reverse(Inputs0, Inputs),
    findall(N/2, ( member(static(C, _), Items),
                   ( C = (H :- _) -> true ; H = C ),
                   callable(H), functor(H, N, 2) ),
            Own),                               % contains/2 of the file is its own predicate
    findall(_{head: HS, operators: Ops, line: Line, column: Col},
            ( member(static(Clause, pos(_, Line, Col)), Items),
              static_event_operators(Clause, Ops0),
              exclude(own_operator(Own), Ops0, Ops),
              Ops \== [],
              clause_indicator(Clause, HS) ),
            Statics),
    (   MaxAge == inf -> MaxAgeJ = null ; MaxAgeJ = MaxAge ),
    source_decoded(Source, Decoded),
    (   raises_events(Items) -> Raises = true ; Raises = false ),
    findall(_{name: N, arity: A, line: Line, column: Col},
            ( member(directive(print_events(Specs), pos(F, Line, Col)), Items),
              \+ memberchk(directive('$print_trigger_facts', pos(F, Line, Col)), Items),  % ETALIS's may name inputs
              is_list(Specs),
              member(N/A, Specs) ),
            Named),
    undefined_predicates(Items, Undefined0),
    findall(_{predicate: PIS, file: File, line: Line, column: Col, hint: Hint},
            ( member(undefined(PI, pos(File0, Line, Col), Hint), Undefined0),
              format(string(PIS), "~q", [PI]),
              format(string(File), "~w", [File0]) ),
            Undefined),
    findall(Use, ( member(Item, Items),
                   item_goal(Item, Goal, pos(File0, Line, Col)),
                   vocabulary_use(Goal, Kind, IRI),
                   format(string(File), "~w", [File0]),
                   Use = _{iri: IRI, kind: Kind, file: File, line: Line, column: Col} ),
            Uses0),
    list_to_set(Uses0, Uses),
    findall(Path, member(ontology(Path, _, _), Directives), Ontologies),
    findall(_{prefix: P, iri: NS}, member(prefix(P, NS), Directives), Prefixes),
    Header = _{rules: Rules, policy: PolicyS, printed: PrintedS, printed_explicit: Explicit,
               max_age: MaxAgeJ, inputs: Inputs, event_clauses: Statics, decoded: Decoded,
               raises: Raises, print_events: Named, undefined: Undefined,
               vocabulary: Uses, ontologies: Ontologies, prefixes: Prefixes}.

%   raises_events(+Items): a rule or static clause of Items may raise an
%   event (ETALIS's event/1) or add a rule (ins_event_rule/1) when it
%   runs: events may then occur that no rule of the file derives.

raises_events(Items) :-
    member(Item, Items),
    item_goal(Item, Goal, _),
    sub_term(T, Goal),
    compound(T),
    compound_name_arity(T, Name, 1),
    memberchk(Name, [event, ins_event_rule]),
    !.

stream_line(event(E, [T, T])) :- !,
    format("~q.~n", [event(E, T)]).
stream_line(E) :-
    format("~q.~n", [E]).

%   goal_counts(+Counts, -ByGoal): ByGoal maps each goal to its pending
%   goals (both sides), from the Id-Side-Count of each store.

goal_counts(Counts, ByGoal) :-
    findall(Id-C, member(Id-_-C, Counts), Pairs0),
    keysort(Pairs0, Pairs),
    group_pairs_by_key(Pairs, Groups),
    findall(Id-Sum, ( member(Id-Cs, Groups), sum_list(Cs, Sum) ), Sums),
    list_to_assoc(Sums, ByGoal).

goal_count(ByGoal, Id, P0, P) :-
    (   get_assoc(Id, ByGoal, C)
    ->  P is P0 + C
    ;   P = P0
    ).

%   state_snapshot(+M, +Counters, -Head, -Payload): the state of engine M
%   with Counters as the parts of a snapshot (see the request snapshot).

state_snapshot(M, Counters, Head, Payload) :-
    engine_identity(M, Rules),
    engine_state_get(M, State),
    snapshot_parts(Rules, snapshot{state: State, counters: Counters}, Head, Payload).

%   restore_state(+M, +Bytes, -Header): engine M takes up the state of
%   the snapshot Bytes (see the request restore(Engine)).

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

%   feed_segment(+M, +Options, +Reset, +Batch, -Header, -Detections): one
%   segment of a feed of segments: Batch fed with Options, after a reset
%   of the engine if Reset is 1.

feed_segment(M, Options, Reset, Batch, Header, Detections) :-
    (   Reset == 1
    ->  engine_reset(M)
    ;   true
    ),
    engine_feed(M, Batch, Options, Summary, Detections),
    feed_header(Summary, Header).

%   feed_key_segment(+M, +Options, +Segment, -Fed, +Keys0, -Keys): one
%   segment seg(Reset, Start, End, Batch) of a feed of many keys'
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

%   segments_text(+Outs, -Text): the detections of the segments, in
%   order, separated by the character 0x1D.

segments_text(Outs, Text) :-
    foldl([D, Acc0, Acc]>>(Acc0 == [] -> Acc = [D] ; Acc = [D, "\x1d\"|Acc0]), Outs, [], Rev),
    reverse(Rev, Parts),
    atomics_to_string(Parts, Text).

%   pending_part(+M, +Nodes, +Ids, -Part): one pending occurrence in a
%   goal of the rule, as JSON: the goal, the part matched (with its
%   bindings), its interval, and what it waits for.

pending_part(M, Nodes, Ids, Part) :-
    member(Id, Ids),
    memberchk(node(Id, Op, Inputs, Out, W, Policy), Nodes),
    Node = node(Id, Op, Inputs, Out, W, Policy),
    stored_input(Node, Side, In, Key, Payload),
    store_index(Id, Side, I),
    engine_store(M, I, Store),
    etalis_store:store_entry(Store, Key, e(Payload, T1, T2)),
    shown(In, Nodes, Matched),
    copy_term(Node, node(_, Op1, Inputs1, _, _, _)),
    shown_goal(Op1, Inputs1, Nodes, Goal),
    waiting(Op, Side, Waiting),
    Part = _{goal: Id, pattern: Goal, matched: Matched, side: Side,
             waiting: Waiting, start: T1, end: T2}.

waiting(chain(_, _), _, "the rest of the sequence") :- !.
waiting(cnot, right, "blocks the sequence") :- !.
waiting(fnot, right, "blocks the pattern") :- !.
waiting(_, left, "the right operand") :- !.
waiting(_, right, "the left operand").

shown_goal(Op, Inputs, Nodes, Text) :-
    maplist(shown_term(Nodes), Inputs, Shown),
    node_pattern(Op, Shown, Term),
    term_text(Term, Text).


shown(In, Nodes, Text) :-
    shown_term(Nodes, In, Term),
    term_text(Term, Text).

%   An intermediate event is shown as the sub-pattern it stands for.

shown_term(Nodes, E, Term) :-
    (   compound(E),
        functor(E, Name, Arity),
        sub_atom(Name, 0, _, _, '$ie'),
        member(node(_, Op, Inputs, Out, _, _), Nodes),
        functor(Out, Name, Arity)
    ->  copy_term(Out-Op-Inputs, E-Op1-Inputs1),
        maplist(shown_term(Nodes), Inputs1, Shown),
        node_pattern(Op1, Shown, Term)
    ;   Term = E
    ).

term_text(Term, Text) :-
    pattern_text(Term, Text).

%   declared_ontologies(+Settings, -Ontologies): the `:- ontology`
%   directives of the rules just read, in file order, for Python to load.

declared_ontologies(Settings, Ontologies) :-
    findall(_{path: Path, entailment: E, file: F, line: L},
            member(ontology(Path, E, pos(F, L, _)), Settings.directives), Ontologies0),
    reverse(Ontologies0, Ontologies).

%   event_prefixes(+M, +Settings, -Prefixes): once the rules declare a
%   prefix, events' prefixed names expand with the declared prefixes and
%   the standard ones (rdf, rdfs, owl, xsd); Prefixes is a dict of them.

event_prefixes(M, Settings, Prefixes) :-
    findall(P-NS, member(prefix(P, NS), Settings.directives), Declared0),
    (   Declared0 == []
    ->  Pairs = []
    ;   reverse(Declared0, Declared),            % directives are most recent first
        findall(P-NS, ( standard_prefix(P, NS), \+ memberchk(P-_, Declared) ), Standard),
        append(Declared, Standard, Pairs0),
        latest_prefixes(Pairs0, Pairs)
    ),
    engine_prefixes(M, Pairs),
    dict_pairs(Prefixes, _, Pairs).

%   latest_prefixes(+Pairs0, -Pairs): one pair per prefix, the one
%   declared last.

latest_prefixes(Pairs0, Pairs) :-
    reverse(Pairs0, Latest),
    foldl(keep_new_prefix, Latest, [], Pairs).

keep_new_prefix(P-NS, Pairs0, Pairs) :-
    (   memberchk(P-_, Pairs0)
    ->  Pairs = Pairs0
    ;   Pairs = [P-NS|Pairs0]
    ).

%   engine_exists(+Engine): Engine is an engine (without copying its
%   compiled rules, as engine_compiled/2 does).

engine_exists(M) :-
    (   current_predicate(M:'$compiled'/1)
    ->  true
    ;   existence_error(etalis_engine, M)
    ).

engine_compiled(M, C) :-
    (   catch(M:'$compiled'(C), _, fail)
    ->  true
    ;   existence_error(etalis_engine, M)
    ).

%   printed_strings(+Printed, -Strings): the reported events Name/Arity as
%   strings "Name/Arity".

printed_strings(Printed, Strings) :-
    maplist([N/A, S]>>format(string(S), "~w/~w", [N, A]), Printed, Strings).

%   reported_strings(+Settings, -Strings): the events an engine reports,
%   as Name/Arity strings: those always reported, and those a
%   print_trigger/1 rule is asked about occurrence by occurrence.

reported_strings(Settings, Strings) :-
    (   get_dict(asked, Settings, Asked) -> true ; Asked = [] ),
    append(Settings.printed, Asked, Reported0),
    sort(Reported0, Reported),
    printed_strings(Reported, Strings).

compiled_size(compiled(program(Nodes, Links), _, _, _), N, G) :-
    length(Links, N),
    length(Nodes, G).

%!  load_engine(+Source, +Options, -Engine, -Items, -Compiled) is det.
%
%   Compile the rules of Source, read as Items, into a new engine.  Options are those of
%   compile_items/3 and trusted(true): without it, the rules are
%   untrusted, and refused (before anything of them is loaded) unless
%   sandbox_check/2 proves them safe.

load_engine(Source, Options, M, Items, Compiled) :-
    source_items(Source, Items),
    untrusted_check(Options, Items),
    compile_items(Items, Options, Compiled),
    engine_create(M),
    compiled_names(M, Compiled),
    catch(( knowledge_init(M),
            (   memberchk(trusted(true), Options)
            ->  true
            ;   guard_engine(M)                 % before the clauses that call what it guards
            ),
            load_compiled(M, Compiled),
            (   memberchk(trusted(true), Options)
            ->  true
            ;   include(is_static, Items, Statics),
                assertz(M:'$sandboxed'(Statics))
            ) ),
          E,
          ( engine_destroy(M), throw(E) )).

%   untrusted_check(+Options, +Items): unless Options say trusted(true),
%   the items must be proven safe.

untrusted_check(Options, Items) :-
    (   memberchk(trusted(true), Options)
    ->  true
    ;   sandbox_check(Items, [])
    ).

is_static(static(_, _)).

source_items(source(file(Path), _), Items) :- !,
    read_etl_file(Path, Items0),
    expand_prefixes(Items0, Items).
source_items(source(text(Name), Text), Items) :- !,
    read_etl_string(Text, Name, Items0),
    expand_prefixes(Items0, Items).
source_items(source(with_static(Files, Source), Text), Items) :- !,
    must_be(list, Files),
    maplist(static_file_items, Files, Statics),
    append(Statics, Static),
    source_items(source(Source, Text), Own),
    append(Static, Own, Items).
source_items(source(Source, _), _) :-
    domain_error(etalis_source, Source).

%   source_decoded(+Source, -Decoded): the files of Source read as
%   Windows-1252 because they are not UTF-8 (see read_etl_file/2), each
%   a dict with its file, encoding and the position of its first byte
%   that is not UTF-8.

source_decoded(with_static(Files, Source), Decoded) :- !,
    findall(file(F), ( member(F, Files), atom(F) ), Sources),
    maplist(source_decoded, Sources, Ds),
    source_decoded(Source, Own),
    append(Ds, Ds1),
    append(Ds1, Own, Decoded).
source_decoded(file(File), [_{file: File, encoding: Enc, line: Line, column: Col}]) :-
    etl_file_encoding(File, Enc, pos(_, Line, Col)),
    !.
source_decoded(_, []).

%   static_file_items(+File, -Items): the items of a file of static
%   knowledge given beside the rules (etalis --static FILE), as ETALIS's
%   test drivers consult a .db or .P file before compiling the rules: its
%   facts, static rules and directives.  File is its path, or text(Name,
%   Text) for its text (as Spark's workers get it).  An event rule there
%   is an error at the rule.

static_file_items(File, Items) :-
    (   File = text(Name, Text)
    ->  must_be(atom, Name),
        must_be(string, Text),
        read_etl_string(Text, Name, Items0)
    ;   must_be(atom, File),
        read_etl_file(File, Items0)
    ),
    expand_prefixes(Items0, Items),
    (   member(rule(_, _, _, Where, _), Items)
    ->  (   File = text(Shown, _) -> true ; Shown = File ),
        format(string(M), "~w is given as static knowledge (--static): it holds Prolog facts and rules, \c
                           not event rules", [Shown]),
        etalis_error(M, "give a file with event rules as the rule file", Where)
    ;   true
    ).

%   add_items(+Engine, +Items, -Compiled): Engine runs the rules of
%   Items too (sandboxed unless the engine is trusted); Compiled is its
%   new rule set.

add_items(M, Items, C) :-
    remember_initial(M),
    engine_compiled(M, C0),
    (   M:'$sandboxed'(Earlier)
    ->  sandbox_check(Items, Earlier)
    ;   true
    ),
    compile_more(Items, C0, C),
    compiled_names(M, C),
    load_statics(M, C, Refs),
    forall(member(Ref, Refs), assertz(M:'$added_static'(Ref))),
    reload_compiled(M, C0, C),
    (   retract(M:'$sandboxed'(Earlier))
    ->  include(is_static, Items, New),
        append(Earlier, New, Statics),
        assertz(M:'$sandboxed'(Statics))
    ;   true
    ),
    assertz(M:'$rule_change'(add(Items))).

%   engine_identity(+Engine, -Rules): Rules identifies the rules Engine
%   was made with (see etalis_snapshot:rules_identity/2), worked out at
%   the first snapshot or restore.

engine_identity(M, Rules) :-
    (   M:'$identity'(Rules)
    ->  true
    ;   (   M:'$initial'(Compiled, _, _)
        ->  true
        ;   engine_compiled(M, Compiled)
        ),
        rules_identity(Compiled, Rules),
        assertz(M:'$identity'(Rules))
    ).

%   remember_initial(+Engine): before the first change of Engine's rules,
%   keep what they are as '$initial'(Compiled, HiddenNames, Sandboxed),
%   Sandboxed the static items proven safe or `trusted`: a restore goes
%   back to them (see initial_rules/1).

remember_initial(M) :-
    (   M:'$initial'(_, _, _)
    ->  true
    ;   engine_compiled(M, C),
        M:'$hidden_names'(Counts),
        (   M:'$sandboxed'(Statics) -> Sandboxed = Statics ; Sandboxed = trusted ),
        assertz(M:'$initial'(C, Counts, Sandboxed))
    ).

%   remove_label(+Engine, +Label, -Compiled): Engine no longer runs the
%   rule labelled Label.

remove_label(M, Label, C) :-
    remember_initial(M),
    engine_compiled(M, C0),
    (   compile_without(Label, C0, C)
    ->  reload_compiled(M, C0, C),
        assertz(M:'$rule_change'(remove(Label)))
    ;   format(string(Msg), "no rule is labelled ~q", [Label]),
        throw(error(etalis_engine_error(Msg), _))
    ).

%   The changes of the rules that a rule made as it ran (ETALIS's
%   ins_event_rule/1, del_event_rule/1, ins_static_rule/1), after the
%   input event that led to them: each is made as add_rules or
%   remove_rule would make it, and one that cannot be made is a warning
%   of that event's line.

etalis_rule_changes:apply_rule_updates(M, Updates) :-
    forall(member(Update, Updates),
           catch(make_rule_update(M, Update), E, rule_update_warning(M, Update, E))).

%   make_rule_change(+Engine, +Change): make again a change of the rules
%   that an engine of the same rules made (see add_items/3 and
%   remove_label/3, which record them): add(Items) or remove(Label).

make_rule_change(M, add(Items)) :-
    add_items(M, Items, _).
make_rule_change(M, remove(Label)) :-
    remove_label(M, Label, _).

%   changes_possible(+Engine, +From, +Changes, -Compiled): the changes of
%   the rules Changes (as make_rule_change/2 takes them) can be made in
%   Engine, one after the other, to its rules `now` or to its `initial`
%   ones, those it was made with, and give the rules Compiled (`now` for
%   no change of the rules now): they are compiled (and proven safe, for
%   untrusted rules) without changing Engine, so that a snapshot whose
%   changes cannot be made is refused before any is.

changes_possible(_, now, [], now) :- !.
changes_possible(M, From, Changes, C) :-
    (   From == initial
    ->  M:'$initial'(C0, _, Sandbox)
    ;   engine_compiled(M, C0),
        (   M:'$sandboxed'(Statics0) -> Sandbox = Statics0 ; Sandbox = trusted )
    ),
    catch(foldl(change_compiled, Changes, C0-Sandbox, C-_),
          E,
          ( message_text(E, Why),
            format(string(Msg), "cannot restore the snapshot: a change of the rules it holds cannot be made \c
                                 here: ~w", [Why]),
            throw(error(etalis_snapshot_error(Msg), _)) )).

%   initial_rules(+Engine): Engine's rules become again those it was
%   made with: the rules and static clauses added while it ran are
%   taken out, and those removed are back.

initial_rules(M) :-
    M:'$initial'(Initial, Counts, Sandboxed),
    engine_compiled(M, Now),
    forall(retract(M:'$added_static'(Ref)), ignore(catch(erase(Ref), _, true))),  % a rule or restore may have taken it
    reload_compiled(M, Now, Initial),
    retractall(M:'$sandboxed'(_)),
    (   Sandboxed == trusted
    ->  true
    ;   assertz(M:'$sandboxed'(Sandboxed))
    ),
    retractall(M:'$rule_change'(_)),
    retractall(M:'$hidden_names'(_)),
    assertz(M:'$hidden_names'(Counts)).

change_compiled(add(Items), C0-Sandbox0, C-Sandbox) :-
    must_be(list, Items),
    (   Sandbox0 == trusted
    ->  Sandbox = trusted
    ;   sandbox_check(Items, Sandbox0),
        include(is_static, Items, New),
        append(Sandbox0, New, Sandbox)
    ),
    compile_more(Items, C0, C).
change_compiled(remove(Label), C0-Sandbox, C-Sandbox) :-
    (   compile_without(Label, C0, C)
    ->  true
    ;   format(string(Msg), "no rule is labelled ~q", [Label]),
        throw(error(etalis_engine_error(Msg), _))
    ).

%   compiled_names(+Engine, +Compiled): Engine's hidden events are
%   numbered on from those of its rule set Compiled (see
%   etalis_hidden_names), which its snapshots hold.

compiled_names(M, compiled(_, _, _, Settings)) :-
    get_dict(hidden_names, Settings, Names),
    retractall(M:'$hidden_names'(_)),
    assertz(M:'$hidden_names'(Names)).

make_rule_update(M, ins(Rule)) :-
    update_items(Rule, ins_event_rule, Items),
    add_items(M, Items, _).
make_rule_update(M, ins_static(Clause)) :-
    update_items(Clause, ins_static_rule, Items),
    add_items(M, Items, _).
make_rule_update(M, del(Rule)) :-
    (   atom(Rule)
    ->  Label = Rule
    ;   nonvar(Rule), Rule = '<-'(Left, _), nonvar(Left), Left = ':'(Label, _), atom(Label)
    ->  true
    ;   throw(error(etalis_engine_error("del_event_rule takes a rule label, or a labelled rule Label : Head <- Pattern"), _))
    ),
    remove_label(M, Label, _).

%   update_items(+Term, +Source, -Items): the items of a rule or clause
%   given as a term, read as a rule file would read its text.

update_items(Term, Source, Items) :-
    copy_term(Term, T),
    numbervars(T, 0, _),
    with_output_to(string(Text),
                   ( write_term(T, [quoted(true), numbervars(true), ignore_ops(false),
                                    spacing(next_argument), module(etalis_syntax)]),
                     write('.') )),
    read_etl_string(Text, Source, Items).

rule_update_warning(M, Update, E) :-
    Update =.. [Kind, X],
    memberchk(Kind-Name, [ins-ins_event_rule, ins_static-ins_static_rule, del-del_event_rule]),
    (   E = error(etalis_error(Msg, _), _)
    ->  true
    ;   E = error(etalis_engine_error(Msg), _)
    ->  true
    ;   message_text(E, Msg)
    ),
    pattern_text(X, Text),
    format(string(Warning), "~w(~s) failed: ~w", [Name, Text, Msg]),
    feed_warning(M, Warning).

%   clause_indicator(+Clause, -Text): Name/Arity of Clause's head.

clause_indicator(Clause, Text) :-
    (   Clause = (H :- _) -> true
    ;   Clause = ((H, _) => _) -> true             % Head, Guard => Body
    ;   Clause = (H => _) -> true
    ;   H = Clause
    ),
    functor(H, N, A),
    format(string(Text), "~w/~w", [N, A]).

%   own_operator(+Own, +Op): the rule file defines a predicate Op/2
%   (Own: its static predicates of arity 2), so a call of Op in a
%   static clause is that predicate, not an event operator.

own_operator(Own, Op) :-
    memberchk(Op/2, Own).
