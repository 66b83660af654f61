:- module(etalis,
          [ etalis_api/3                % +Request, +Payload, -Reply
          ]).
:- use_module(library(error)).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(option)).
:- use_module(library(assoc)).
:- use_module(library(pairs)).
:- use_module(library(aggregate)).
:- use_module(library(http/json)).
:- use_module(etalis/compiler/compile, [compile_items/3, compiled_listing/1]).
:- use_module(etalis/compiler/strategies, [skip_kept/2]).
:- use_module(etalis/compiler/hidden_names, [no_hidden_names/1, numbered_items/4]).
:- use_module(etalis/compiler/input_determined, [input_determined/1]).
:- use_module(etalis/compiler/operators, [store_index/3]).
:- use_module(etalis/compiler/rule_facts, [static_event_operators/2, vocabulary_use/3]).
:- use_module(etalis/runtime/runtime, [engine_destroy/1, engine_reset/1, engine_due/2,
                                       engine_buffered/2, engine_pending/3]).
:- use_module(etalis/runtime/feed, [engine_feed/5]).
:- use_module(etalis/runtime/limits, [stack_limit_restored/0]).
:- use_module(etalis/runtime/prefixes, [engine_prefixes/2]).
:- use_module(etalis/rdf/knowledge, [knowledge_update/4, knowledge_size/2, standard_prefix/2]).
:- use_module(etalis/safety/sandbox, [item_goal/3, undefined_predicates/2]).
:- use_module(etalis/runtime/protocol).
:- use_module(etalis/reader/variable_places, [source_variable_places/3]).
:- use_module(etalis/runtime/columns, [columns_library/1, packed_reset/0, packed_detections/1]).
:- use_module(etalis/runtime/batches, [request_batches/4]).
:- use_module(etalis/dialect/driver, [etalis_driver/4]).
:- use_module(etalis/runtime/engine_load).
:- use_module(etalis/runtime/rule_edits, [remove_label/3]).
:- use_module(etalis/runtime/key_states).
:- use_module(etalis/runtime/pending, [pending_part/4]).

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
  - snapshot_term(Engine, Counters): the same snapshot, its content
    left as a term, record(Header, Content), for the bridge to make
    its bytes (PL_record_external(), the bytes fast_term_serialized/2
    makes) without a string of them on the stacks; the header's
    `snapshot_opening` is the snapshot's start up to the content's
    length (see etalis_snapshot:snapshot_opening/2).  A content that
    has no bytes (a blob) is then taken with snapshot, for its error.
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

This module reads the requests and words the replies; the work is the
runtime's: etalis_engine_load makes engines and adds rules,
etalis_rule_edits makes the other changes of their rules,
etalis_key_states takes and restores their states (also for the keys'
segments of a feed) and etalis_pending shows their pending goals.
*/

%!  etalis_api(+Request:string, +Payload:string, -Reply:string) is det.
%
%   Serve one request from Python; never raises, but for a request
%   that fills the stacks where no event is running (a snapshot, a
%   reply that does not fit), whose error the bridge words.

etalis_api(RequestText, Payload, Reply) :-
    stack_limit_restored,
    catch(( term_string(Request, RequestText),
            serve(Request, Payload, Header, Body) ),
          Error,
          (   Error = error(resource_error(_), _)
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
%   Python reads in two parts; a Body term(Term) is record(Header, Term),
%   whose Term Python serializes itself.

api_reply(H, bytes(Bytes), reply(H, Bytes)) :-
    !.
api_reply(H, term(Term), record(H, Term)) :-
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
    (   input_determined(Compiled)
    ->  Determined = true
    ;   Determined = false
    ),
    Header0 = _{engine: M, rules: NRules, goals: NNodes, policy: PolicyS, printed: PrintedS,
                ontologies: Ontologies, prefixes: Prefixes, decoded: Decoded, input_determined: Determined},
    (   memberchk(analysis(true), Options)
    ->  analysis_settings(Items, Options, Settings, FileSettings),
        rules_header(Source, Payload, Items, FileSettings, Analysis),
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
    ;   findall(Name, M:'$rule_goals'(Name, _), Names0),
        sort(Names0, Names),
        atomic_list_concat(Names, ', ', Known),
        format(string(Msg), "no rule is named ~q; the rules are named ~w (a rule without a label by its line)",
               [Label, Known]),
        throw(error(etalis_engine_error(Msg), _))
    ),
    findall(Part, pending_part(M, Nodes, Ids, Part), Parts).
serve(snapshot(M, Counters), _, _{snapshot_head: Head}, bytes(Payload)) :-
    engine_exists(M),
    must_be(list(integer), Counters),
    state_snapshot(M, Counters, Head, Payload).
serve(snapshot_term(M, Counters), _, _{snapshot_opening: Opening}, term(Content)) :-
    engine_exists(M),
    must_be(list(integer), Counters),
    state_content(M, Counters, Opening, Content).
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
    rules_header(Source, Payload, Items, Settings, Header).
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

%   rules_header(+Source, +Text, +Items0, +Settings, -Header): the
%   `rules` reply of the rule file Source (of text Text, if given as a
%   text), its items Items0 as read and compiled with Settings.

rules_header(Source, Text, Items0, Settings, Header) :-
    no_hidden_names(Zero),
    numbered_items(Items0, Zero, Items, _),     % as the compiler numbered them
    _{policy: Policy, overrides: Overrides, printed: Printed, printed_explicit: Explicit,
      max_age: MaxAge, directives: Directives} :< Settings,
    findall(R, ( member(rule(L, H, P, Where, VN), Items),
                 rule_json(L, H, P, Where, VN, Overrides, Policy, R) ), Rules0),
    (   member(R1, Rules0), get_dict(singletons, R1, [_|_])
    ->  source_variable_places(Source, Text, Places),
        maplist(placed_singletons(Places), Rules0, Rules)
    ;   Rules = Rules0
    ),
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

%   placed_singletons(+Places, +Rule0, -Rule): the singleton variables
%   of a rule's reply, each with where it is written (the rule's own
%   position if that cannot be told).

placed_singletons(Places, Rule0, Rule) :-
    _{line: L, column: C, singletons: Names} :< Rule0,
    Clause = pos(_, L, C),
    findall(_{name: Name, line: Line, column: Col},
            ( member(Name, Names),
              (   memberchk(place(Clause, Name, pos(_, Line, Col)), Places)
              ->  true
              ;   Clause = pos(_, Line, Col)
              ) ),
            Singletons),
    put_dict(singletons, Rule0, Singletons, Rule).

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
