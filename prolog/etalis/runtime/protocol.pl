:- module(etalis_protocol,
          [ feed_header/2,              % +Summary, -Header
            limit_json/5,               % +Line, +Event, +Limit, +In, -Json
            rule_json/8,                % +Label, +Head, +Pattern, +Where, +VarNames, +Overrides, +Default, -Json
            bindings_json/2,            % +VarNames, -Dict
            error_reply/3,              % +Error, -Header, -Body
            message_text/2,             % +Error, -Text
            bounded_text/2,                % +Term, -Text
            shallow/1,                  % @Term
            calling_message/1,          % @Message
            write_detection/2,          % +Format, +Detection
            write_detection/3,          % +Format, +Detection, +Provenance
            detection_format/1,         % +Format
            json_arg_text/2             % +Value, -Text
          ]).
:- use_module(library(apply)).
:- use_module(library(lists)).
:- use_module(library(error)).
:- use_module(library(http/json), [json_write/3]).
:- use_module('../reader/syntax', [pattern_text/2]).
:- use_module('../reader/terms', [finite_number/1]).
:- use_module(columns, [columns_loaded/0]).
:- use_module('../reader/runs', [run_event/2]).
:- use_module('../compiler/optable', [pattern_parts/3, sub_pattern/3, pattern_kind/1, waiting_side/2]).
:- use_module('../compiler/rule_facts', [event_steps/2, where_unbound/2, where_never/2, numeric_head_args/3, head_unbound/3,
                          source_pattern/2,
                          lasting/2]).
:- use_module('../compiler/strategies', [reported_head/2]).

/** <module> The JSON of the replies to Python

What the engine says to Python, as JSON (see etalis:etalis_api/3): the
detections, one line each (write_detection/2), the header of a feed (counts, rejected lines, warnings, where it stopped),
the parsed rules of the `rules` request (each pattern a tree whose
nodes have the keys of the operator table), the bindings of a query,
and the error replies.
*/

%!  feed_header(+Summary, -Header) is det.
%
%   Header is the reply header of a feed with Summary (see
%   etalis_feed:engine_feed/5): the counts, the rejected lines and
%   the warnings as [Line, Text], and where the feed stopped, if it did;
%   for a flush or advance, the events released from the reorder buffer,
%   the events raised and the warnings.

feed_header(released(Released, Raised, Warnings), _{released: Released, raised: Raised, warnings: Ws}) :- !,
    maplist([warning(L, W), [L, W]]>>true, Warnings, Ws).
feed_header(summary(Accepted, Raised, Rejected, Warnings, Stopped), Header) :-
    maplist([rejected(L, R), [L, R]]>>true, Rejected, Rs),
    maplist([warning(L, W), [L, W]]>>true, Warnings, Ws),
    Header0 = _{accepted: Accepted, raised: Raised, rejected: Rs, warnings: Ws},
    (   Stopped == none
    ->  Header = Header0
    ;   stopped_json(Stopped, Hit),
        Header = Header0.put(stopped, Hit)
    ).

%!  stopped_json(+Hit, -Json) is det.
%
%   Json is where a feed stopped, the limit an event reached (see
%   etalis_feed:engine_feed/5): limit(Line, Event, Limit, In) (see
%   limit_json/5), time(Line, Event, Seconds, Limit, In), an event that
%   ran for longer than the Seconds that Limit inferences allow, or
%   memory(Line, Event, Bytes), an event that ran out of the stacks,
%   whose limit is Bytes.

stopped_json(limit(Line, E, Limit, In), Json) :-
    limit_json(Line, E, Limit, In, Json).
stopped_json(time(Line, E, Seconds, Limit, In), Json) :-
    limit_json(Line, E, Limit, In, Json0),
    Json = Json0.put(_{kind: time, seconds: Seconds}).
stopped_json(memory(Line, E, Bytes), _{kind: memory, line: Line, event: Text, limit: Bytes}) :-
    bounded_text(E, Text).

%!  limit_json(+Line, +Event, +Limit, +In, -Json) is det.
%
%   Json is an event that took more than Limit inferences (in the `where` condition G if In is
%   where(G)), as the `stopped` of a feed reply or an error.

limit_json(Line, E, Limit, In, _{kind: limit, line: Line, event: Text, limit: Limit, where: Where}) :-
    bounded_text(E, Text),
    (   In = where(G)
    ->  bounded_text(G, Where)
    ;   Where = null
    ).

%!  rule_json(+Label, +Head, +Pattern, +Where, +VarNames, +Overrides, +Default, -Json) is det.
%
%   Json is the parsed rule, for `etalis check` and tools such as the
%   reference evaluator: its label, head, pattern, position and policy
%   (from Overrides, else Default; `own_policy` tells which), the steps
%   of its events, the unbound variables of its `where` conditions and
%   of its head, and the kind of ETALIS run whose hidden event it
%   derives, if any (see etalis_runs:run_event/2).

rule_json(Label, Head0, Pattern, pos(_, Line, Column), VarNames, Overrides, Default, Json) :-
    reported_head(Head0, Head),                 % a timer's event
    copy_term(Head-Pattern-VarNames, H-P-VN),
    where_unbound(P, Unbound),
    where_never(P, Never),
    numeric_head_args(H, P, Numeric),
    head_unbound(H, P, HeadUnbound),
    findall(N, ( member(N=V, VN),
                 \+ sub_atom(N, 0, _, _, '_'),
                 occurrences_of_var(V, H-P, 1),
                 sub_term(S, P), compound(S), S = event(E),
                 \+ hidden_event(E),
                 occurrences_of_var(V, E, 1) ),
            Singletons),
    maplist([N=V]>>(V = '$VAR'(N)), VN),
    term_variables(H-P, Anon),
    findall(N, member(N=_, VN), Taken),
    foldl(anonymous_named(Taken), Anon, 0, _),
    timer_steps(Head0, P, Steps, Timer),
    (   run_event(Head0, Run) -> true ; Run = null ),
    (   Label \== '', memberchk(Label-Pol-_, Overrides) -> Own = true ; Pol = Default, Own = false ),
    term_json(H, HJ),
    bounded_pattern_json(P, PJ),
    term_string(Pol, PolS),
    maplist([E-S, _{event: EJ, step: S}]>>term_json(E, EJ), Steps, StepsJ),
    maplist(unbound_json, Unbound, UnboundJ),
    maplist(never_json, Never, NeverJ),
    maplist([V, N]>>(V = '$VAR'(N)), HeadUnbound, HeadUnboundJ),
    Json = _{label: Label, head: HJ, pattern: PJ, line: Line, column: Column, policy: PolS, own_policy: Own,
             steps: StepsJ, unbound: UnboundJ, never: NeverJ, numeric: Numeric, head_unbound: HeadUnboundJ, timer: Timer,
             run: Run, singletons: Singletons}.

%   anonymous_named(+Taken, ?Var, +I0, -I): Var, a variable the user
%   did not name, is '$VAR'('_GN') for the first N from I0 whose name is
%   not in Taken (a user's variable may be called _G0 too); I is N + 1.

anonymous_named(Taken, V, I0, I) :-
    format(atom(N), '_G~d', [I0]),
    (   memberchk(N, Taken)
    ->  I1 is I0 + 1,
        anonymous_named(Taken, V, I1, I)
    ;   V = '$VAR'(N),
        I is I0 + 1
    ).

%   hidden_event(+Event): Event is one the reader made ('$plusN', a
%   run's event); a variable the user wrote in the part it stands for
%   occurs there once, and is joined in that part's own rules.

hidden_event(E) :-
    compound(E),
    compound_name_arity(E, Name, _),
    sub_atom(Name, 0, _, _, '$').

%   timer_steps(+Head, +Pattern, -Steps, -Timer): the steps of Pattern
%   (see event_steps/2); for a rule whose head is a timer, Timer is its
%   name and every event of Pattern waits (the timer's event occurs
%   later than the pattern), else Timer is null.

timer_steps(Head, P, Steps, Timer) :-
    event_steps(P, Steps0),
    (   Head = '$timer'(_, When)
    ->  (   When = after(_) -> Timer = exceptionAlarm ; Timer = exceptionAlarmAbsoluteDatime ),
        maplist([E-S0, E-S]>>( S0 == negated -> S = negated ; S = waiting ), Steps0, Steps)
    ;   Timer = null,
        Steps = Steps0
    ).

unbound_json(unbound(G, Vars), _{goal: GS, variables: Names}) :-
    goal_text(G, GS),
    maplist([V, N]>>(V = '$VAR'(N)), Vars, Names).

%   never_json(+Never, -Json): a where condition that can never hold
%   (see etalis_rule_facts:where_never/2), its text and why in words.

never_json(never(G, Why), _{goal: GS, why: WhyS}) :-
    goal_text(G, GS),
    why_text(Why, WhyS).

why_text(false(L), Text) :-
    goal_text(L, LS),
    (   ( L == fail ; L == false )
    ->  format(string(Text), "`~s` never succeeds", [LS])
    ;   format(string(Text), "`~s` is false", [LS])
    ).
why_text(range(V, Cs), Text) :-
    maplist(goal_text, Cs, Ts),
    atomic_list_concat(Ts, '` and `', Joined),
    goal_text(V, VS),
    format(string(Text), "no number ~s satisfies `~w`", [VS, Joined]).
why_text(not_number(V, Value, A), Text) :-
    goal_text(V, VS),
    goal_text(Value, ValueS),
    goal_text(A, AS),
    format(string(Text), "~s is ~s, which is not a number, but `~s` needs one", [VS, ValueS, AS]).

goal_text(G, Text) :-
    with_output_to(string(Text),
                   write_term(G, [quoted(true), numbervars(true), ignore_ops(false), spacing(next_argument)])).

%   bounded_pattern_json(+Pattern, -Json): the JSON of Pattern, or, for a
%   pattern nested deeper than 200 operators (a generated chain of
%   thousands), a flat `deep` node with its events, its depth and the
%   start of its text: JSON readers and the analyses walk the tree
%   recursively, and the text of every sub-pattern of such a chain would
%   grow quadratically.

bounded_pattern_json(P, J) :-
    pattern_depth(P, Depth),
    (   Depth > 200
    ->  findall(_{op: event, event: EJ}, ( pattern_event(P, E), term_json(E, EJ) ), Events),
        source_pattern(P, Source),
        pattern_text(Source, Text0),
        (   sub_string(Text0, 0, 200, _, Start)
        ->  string_concat(Start, " ...", Text)
        ;   Text = Text0
        ),
        (   windowed(P) -> Windowed = true ; Windowed = false ),
        J = _{op: deep, depth: Depth, events: Events, text: Text, windowed: Windowed}
    ;   pattern_json(P, J)
    ).

%   windowed(+Pattern): Pattern as a whole is bounded by a window.

windowed(within(_, _)).
windowed(where(P, _)) :-
    windowed(P).

pattern_depth(event(_), 0) :- !.
pattern_depth(P, D) :-
    sub_patterns(P, Subs),
    foldl(deeper, Subs, 0, D).

deeper(S, D0, D) :-
    pattern_depth(S, DS),
    D is max(D0, DS + 1).

sub_patterns(P, Subs) :-
    findall(S, sub_pattern(P, _, S), Subs).

pattern_event(event(E), E) :- !.
pattern_event(P, E) :-
    sub_pattern(P, _, S),
    pattern_event(S, E).

%   pattern_json(+Pattern, -Json): a sub-pattern other than an event
%   also has its text, as the rule file would write it.

pattern_json(event(E), _{op: event, event: J}) :- !, term_json(E, J).
pattern_json(P, J) :-
    pattern_json_(P, J0),
    source_pattern(P, S),
    pattern_text(S, Text),
    J = J0.put(text, Text).

%   pattern_json_(+Pattern, -Json): the operator and its parts, each
%   under its key as its kind says (see etalis_optable:pattern_parts/3);
%   a binary temporal operator also has its stored side and how long
%   its occurrences last (see etalis_rule_facts:lasting/2), a construct
%   with a negated part the key of that part (`"negated": "right"`).

pattern_json_(P, J) :-
    pattern_parts(P, Op, Parts),
    foldl(part_json(Parts), Parts, _{op: Op}, J0),
    (   P = op(Op, _, _)
    ->  waiting_side(Op, Side),
        lasting(Op, Lasts),
        J = J0.put(_{stored: Side, lasts: Lasts})
    ;   memberchk(Key-negated-_, Parts)
    ->  J = J0.put(negated, Key)
    ;   J = J0
    ).

part_json(Parts, Key-Kind-V, J0, J) :-
    kind_json(Kind, V, Parts, VJ),
    J = J0.put(Key, VJ).

kind_json(Kind, P, _, J) :-
    pattern_kind(Kind),
    !,
    pattern_json(P, J).
kind_json(goal, G, _, S) :-
    goal_text(G, S).
kind_json(seconds, W, _, W).
kind_json(function, F, _, F).
kind_json(value, X, Parts, J) :-
    memberchk(_-function-F, Parts),
    (   F == count -> J = null ; term_json(X, J) ).
kind_json(window, Window, _, _{kind: Kind, size: Size}) :-
    Window =.. [Kind, Size].
kind_json(result, R, _, J) :-
    term_json(R, J).

term_json('$VAR'(N), _{var: N}) :- !.
term_json(T, T) :- number(T), !.
term_json(T, _{atom: T}) :- atom(T), !.
term_json([], _{atom: '[]'}) :- !.                  % not an atom in SWI-Prolog 7
term_json(T, _{string: T}) :- string(T), !.
term_json(T, _{functor: F, args: Js}) :-
    compound_name_arguments(T, F, As),
    maplist(term_json, As, Js).

%!  bindings_json(+VarNames, -Dict) is det.
%
%   Dict maps the name of each variable of VarNames (Name = Var) to its
%   value as JSON (`null` if unbound).

bindings_json(VN, Dict) :-
    findall(N-J, ( member(N=V, VN), value_json(V, J) ), Pairs),
    dict_pairs(Dict, _, Pairs).

value_json(V, J) :-
    (   var(V) -> J = null
    ;   number(V) -> J = V
    ;   atom(V) -> J = V
    ;   string(V) -> J = V
    ;   is_list(V) -> maplist(value_json, V, J)
    ;   format(string(J), "~q", [V])
    ).

%!  error_reply(+Error, -Header, -Body) is det.
%
%   The reply to a request that raised Error: a header
%   `{"error": {"kind": Kind, "message": ..}}`, with the file, line,
%   column and hint of an error in a rule file, the event and limit of
%   an event that took too many inferences, and no body.

error_reply(error(etalis_error(Message, Hint), pos(File, Line, Column)), Header, "") :- !,
    Header = _{error: _{kind: rule, message: Message, hint: Hint,
                        file: File, line: Line, column: Column}}.
error_reply(error(existence_error(source_sink, File), _), Header, "") :- !,
    (   exists_directory(File)
    ->  format(string(M), "rule file ~w is a directory, not a file", [File])
    ;   format(string(M), "rule file ~w does not exist", [File])
    ),
    Header = _{error: _{kind: file, message: M, file: File}}.
error_reply(error(existence_error(etalis_engine, E), _), Header, "") :- !,
    format(string(M), "engine ~w does not exist (it was closed)", [E]),
    Header = _{error: _{kind: engine, message: M}}.
error_reply(error(etalis_limit(Stopped), _), _{error: Hit}, "") :- !,
    stopped_json(Stopped, Hit).
error_reply(error(etalis_engine_error(Message), _), Header, "") :- !,
    Header = _{error: _{kind: engine, message: Message}}.
error_reply(error(etalis_snapshot_error(Message), _), Header, "") :- !,
    Header = _{error: _{kind: snapshot, message: Message}}.
error_reply(Error, Header, "") :-
    message_text(Error, M),
    Header = _{error: _{kind: internal, message: M}}.

%!  message_text(+Error, -Text:string) is det.
%
%   Text is Error as SWI-Prolog prints its message (without the line
%   end that print_message_lines/3 puts after it), or the term itself if
%   it has no message.

message_text(Error, Text) :-
    shallow(Error),
    \+ calling_message(Error),         % a rule's error(format("~@", [G]), _) would run G here
    catch(message_lines_text(Error, Text), _, fail),
    !.
message_text(Error, Text) :-
    bounded_text(Error, Text).

%!  bounded_text(+Term, -Text:string) is det.
%
%   Text is Term written quoted, as `~q` writes it; a term nested deeper
%   than 1,000 levels (which a rule's condition can build) is cut there,
%   with `...`, since writing it whole would overflow the C stack of the
%   process (pyswip starts SWI-Prolog without its signal handling, so
%   that would be a crash rather than an error).

bounded_text(Term, Text) :-
    (   shallow(Term)
    ->  format(string(Text), "~q", [Term])
    ;   format(string(Text), "~W", [Term, [quoted(true), max_depth(1000)]])
    ).

%!  calling_message(@Message) is semidet.
%
%   Message (acyclic), printed as a message (print_message/2, or an
%   error's message), would call a goal: it holds format(Format, Args)
%   with Format unbound or a text with the directive `~@`, which calls
%   its argument (print_message(error, format("~@", [G])), or
%   error(format(...), _) as SWI-Prolog's messages print it).

calling_message(Message) :-
    sub_term(T, Message),
    compound(T),
    T = format(Format, _),
    \+ ( catch(text_to_string(Format, String), _, fail),
          \+ sub_string(String, _, _, _, "~@") ),
    !.

%!  shallow(@Term) is semidet.
%
%   Term is acyclic and no part of it is nested deeper than 1,000
%   levels, counting as SWI-Prolog's writer recurses (the elements of a
%   list one level below it, its tail at its level): it can be written.

shallow(Term) :-
    acyclic_term(Term),
    nested_within(Term, 1000).

nested_within(T, D) :-
    (   compound(T)
    ->  D > 0,
        D1 is D - 1,
        (   T = [H|Tail]
        ->  nested_within(H, D1),
            list_within(Tail, D)
        ;   compound_name_arity(T, _, A),
            args_within(A, T, D1)
        )
    ;   true
    ).

list_within(Tail, D) :-
    (   nonvar(Tail), Tail = [H|T]
    ->  D1 is D - 1,
        nested_within(H, D1),
        list_within(T, D)
    ;   nested_within(Tail, D)
    ).

args_within(0, _, _) :- !.
args_within(I, T, D) :-
    arg(I, T, A),
    nested_within(A, D),
    I1 is I - 1,
    args_within(I1, T, D).

message_lines_text(Error, Text) :-
    '$messages':translate_message(Error, Lines, []),
    with_output_to(string(Printed), print_message_lines(current_output, '', Lines)),
    split_string(Printed, "", "\n", [Text]).

%!  write_detection(+Format, +Detection) is det.
%
%   Write det(E, T1, T2) as one line of JSON in Format (see
%   detection_format/1): an object
%   `{"event": "c", "args": [1], "start": 1, "end": 2}` or a row
%   `["c", [1], 1, 2]`; or pack it (`packed`).  The foreign library,
%   if it is loaded, writes the same bytes for a detection whose
%   arguments are numbers and plain texts, in a fraction of the time.

write_detection(Format, det(E, T1, T2)) :-
    (   Format == packed
    ->  etalis_columns:etalis_pack_detection(E, T1, T2),
        put_char('\n')                          % counts as the text of a detection
    ;   write_text_detection(Format, E, T1, T2)
    ).

write_text_detection(Format, E, T1, T2) :-
    (   columns_loaded,
        etalis_columns:etalis_write_detection(Format, E, T1, T2)
    ->  true
    ;   write_json_detection(Format, E, T1, T2)
    ).

%   write_json_detection(+Format, +E, +T1, +T2): the line of
%   write_text_detection/4, written by Prolog.

write_json_detection(Format, E, T1, T2) :-
    closing(Format, Close),
    detection_fields(Format, E, T1, T2, Parts, [Close, '\n']),
    atomics_to_string(Parts, Line),
    write(Line).

%!  detection_format(+Format) is det.
%
%   Format is a format of detections: JSON objects (`object`,
%   the lines of `etalis run`) or as JSON arrays (`row`: event, args,
%   start, end and, with provenance, the rows of the input occurrences;
%   shorter to write and to decode), or packed into the buffers of the
%   foreign library (`packed`, without provenance: see
%   etalis_columns:packed_detections/1), each written as a newline only.
%
%   @error domain_error(oneof([object, row, packed]), Format) for another Format.

detection_format(Format) :-
    must_be(oneof([object, row, packed]), Format).

closing(Format, Close) :-
    separators(Format, _, _, _, _, Close).

%   separators(?Format, -Open, -ArgsOpen, -StartSep, -EndSep, -Close):
%   what a detection line of Format writes before its event's name,
%   before its arguments, after them (before the start), between the
%   start and the end, and at its end.

separators(object, '{"event": ', ', "args": [', '], "start": ', ', "end": ', '}').
separators(row, '[', ', [', '], ', ', ', ']').

%   plain_text(+Text): Text, of at most 256 characters, needs no JSON
%   escapes.  A longer text is written by json_write/3, whose cost in
%   inferences does not grow with its length (a check code by code would
%   take an event of a 10 MB argument past the inference limit).

plain_text(Text) :-
    atom_length(Text, Length),
    Length =< 256,
    atom_codes(Text, Codes),
    plain_codes(Codes).

%!  write_detection(+Format, +Detection, +Provenance) is det.
%
%   As write_detection/2, with the input occurrences Provenance that
%   Detection was built from.
%
%   @error domain_error(detection_format_without_provenance, packed) for
%   the Format `packed`.

write_detection(Format, det(E, T1, T2), Prov) :-
    (   Format == packed
    ->  domain_error(detection_format_without_provenance, Format)
    ;   true
    ),
    closing(Format, Close),
    provenance_key(Format, Key),
    phrase(( detection_fields(Format, E, T1, T2),
             [Key],
             provenance_items(Prov, Format, Close)
           ), Parts, [']', Close, '\n']),
    atomics_to_string(Parts, Line),
    write(Line).

provenance_key(object, ', "provenance": [').
provenance_key(row, ', [').

provenance_items([], _, _) --> [].
provenance_items([det(E, T1, T2)|Ds], Format, Close) -->
    detection_fields(Format, E, T1, T2),
    [Close],
    (   { Ds == [] } -> [] ; [', '] ),
    provenance_items(Ds, Format, Close).

detection_fields(Format, E, T1, T2) -->
    { compound_name_arguments_(E, Name, Args) },
    fields(Format, Name, Args, T1, T2).

fields(Format, Name, Args, T1, T2) -->
    { separators(Format, Open, ArgsOpen, StartSep, EndSep, _) },
    [Open],
    json_value(Name),
    [ArgsOpen],
    json_values(Args),
    [StartSep, T1, EndSep, T2].

compound_name_arguments_(E, Name, Args) :-
    (   atom(E)
    ->  Name = E, Args = []
    ;   compound_name_arguments(E, Name, Args)
    ).

json_values([]) --> [].
json_values([H|T]) -->
    json_value(H),
    (   { T == [] }
    ->  []
    ;   [', '],
        json_values(T)
    ).

%!  json_arg_text(+Value, -Text) is det.
%
%   Text is Value as the JSON of a detection's argument (see
%   write_detection/2).

json_arg_text(X, Text) :-
    phrase(json_value(X), Parts),
    atomics_to_string(Parts, Text).

%   json_value(+X)//: X as JSON text, in atomic parts (numbers are
%   written as write/1 writes them).

json_value(X) -->
    (   { var(X) }                              % an unbound argument
    ->  [null]
    ;   { integer(X) }
    ->  [X]
    ;   { float(X) }
    ->  (   { finite_number(X) } -> [X] ; [null] )
    ;   { is_list(X) }
    ->  ['['], json_values(X), [']']
    ;   { atom(X) ; string(X) }
    ->  json_text(X)
    ;   { copy_term(X, C),
          term_variables(C, Vs),
          maplist(=('$VAR'('_')), Vs),
          (   shallow(C)
          ->  Options = [quoted(true), numbervars(true)]
          ;   Options = [quoted(true), numbervars(true), max_depth(1000)]  % see bounded_text/2
          ),
          format(string(S), "~W", [C, Options]) },
        json_text(S)
    ).

%   json_text(+Text)//: Text as a JSON string literal.

json_text(X) -->
    (   { plain_text(X) }
    ->  ['"', X, '"']
    ;   { with_output_to(string(S), json_write(current_output, X, [width(0)])) },
        [S]
    ).

plain_codes([]).
plain_codes([C|Cs]) :-
    C >= 0'\s, C < 127,
    C =\= 0'", C =\= 0'\\,
    plain_codes(Cs).
