:- module(etalis_engine_load,
          [ load_engine/5,              % +Source, +Options, -Engine, -Items, -Compiled
            source_items/2,             % +Source, -Items
            source_decoded/2,           % +Source, -Decoded
            static_file_items/2,        % +File, -Items
            untrusted_check/2,          % +Options, +Items
            is_static/1,                % +Item
            add_items/3,                % +Engine, +Items, -Compiled
            remember_initial/1,         % +Engine
            engine_identity/2,          % +Engine, -Rules
            engine_exists/1,            % +Engine
            engine_compiled/2,          % +Engine, -Compiled
            compiled_size/3,            % +Compiled, -Rules, -Goals
            reported_strings/2,         % +Settings, -Strings
            printed_strings/2           % +Printed, -Strings
          ]).
:- use_module(library(error), [must_be/2, existence_error/2, domain_error/2]).
:- use_module(library(lists), [append/2, append/3, member/2]).
:- use_module(library(apply), [include/3, maplist/3]).
:- use_module('../reader/syntax', [read_etl_file/2, read_etl_string/3]).
:- use_module('../reader/decode', [etl_file_encoding/3]).
:- use_module('../errors', [etalis_error/3]).
:- use_module('../compiler/compile', [compile_items/3, compile_more/3]).
:- use_module('../rdf/knowledge', [expand_prefixes/2, knowledge_init/1]).
:- use_module('../safety/sandbox', [sandbox_check/2]).
:- use_module('../safety/guard', [guard_engine/1]).
:- use_module(load, [load_compiled/2, reload_compiled/3, load_statics/3]).
:- use_module(runtime, [engine_create/1, engine_destroy/1]).
:- use_module(snapshot, [rules_identity/2]).

/** <module> Making an engine of rule files, and adding rules to it

load_engine/5 reads the rules of a source (a file, a text, with files of
static knowledge before them), proves them safe unless they are trusted,
compiles them and loads them into a new engine; add_items/3 adds rules
to a running engine.  An engine's module keeps what these made: the rule
set it runs ('$compiled'), the static items proven safe ('$sandboxed'),
the changes of its rules ('$rule_change') and the rules it was made with
('$initial', '$identity'), which its snapshots name.
*/

%!  engine_exists(+Engine) is det.
%
%   Engine is an engine (without copying its compiled rules, as
%   engine_compiled/2 does).
%
%   @error existence_error(etalis_engine, Engine) if it is not.

engine_exists(M) :-
    (   current_predicate(M:'$compiled'/1)
    ->  true
    ;   existence_error(etalis_engine, M)
    ).

%!  engine_compiled(+Engine, -Compiled) is det.
%
%   Compiled is the rule set that Engine runs now.
%
%   @error existence_error(etalis_engine, Engine) if Engine is no engine.

engine_compiled(M, C) :-
    (   catch(M:'$compiled'(C), _, fail)
    ->  true
    ;   existence_error(etalis_engine, M)
    ).

%!  printed_strings(+Printed:list, -Strings:list(string)) is det.
%
%   Strings are the reported events Printed, each Name/Arity, as strings
%   "Name/Arity".

printed_strings(Printed, Strings) :-
    maplist([N/A, S]>>format(string(S), "~w/~w", [N, A]), Printed, Strings).

%!  reported_strings(+Settings:dict, -Strings:list(string)) is det.
%
%   Strings are the events an engine of a rule set with Settings reports,
%   as Name/Arity strings: those always reported, and those a
%   print_trigger/1 rule is asked about occurrence by occurrence.

reported_strings(Settings, Strings) :-
    (   get_dict(asked, Settings, Asked) -> true ; Asked = [] ),
    append(Settings.printed, Asked, Reported0),
    sort(Reported0, Reported),
    printed_strings(Reported, Strings).

%!  compiled_size(+Compiled, -Rules:nonneg, -Goals:nonneg) is det.
%
%   The rule set Compiled has Rules rules and Goals goals.

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

%!  untrusted_check(+Options:list, +Items:list) is det.
%
%   Unless Options say trusted(true), the items Items must be proven
%   safe (see sandbox_check/2), which raises the error of the first that
%   is not.

untrusted_check(Options, Items) :-
    (   memberchk(trusted(true), Options)
    ->  true
    ;   sandbox_check(Items, [])
    ).

%!  is_static(+Item) is semidet.
%
%   Item is a static clause of a rule file.

is_static(static(_, _)).

%!  source_items(+Source, -Items:list) is det.
%
%   Items are the items of the rules of Source, source(Spec, Text), read
%   with their prefixed names expanded: Spec is file(Path) (Text is
%   unused), text(Name) (the rules are Text, read as the file Name) or
%   with_static(Files, Spec1) (the items of the static knowledge Files,
%   see static_file_items/2, then those of Spec1).
%
%   @error domain_error(etalis_source, Spec) for another Spec.

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

%!  source_decoded(+Source, -Decoded:list(dict)) is det.
%
%   Decoded are the files of Source read as Windows-1252 because they
%   are not UTF-8 (see read_etl_file/2), each a dict with its file,
%   encoding and the position of its first byte that is not UTF-8.

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

%!  static_file_items(+File, -Items:list) is det.
%
%   Items are the items of a file of static knowledge given beside the
%   rules (etalis --static FILE), as ETALIS's test drivers consult a .db
%   or .P file before compiling the rules: its facts, static rules and
%   directives.  File is its path, or text(Name, Text) for its text (as
%   Spark's workers get it).  An event rule there is an error at the
%   rule.

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

%!  add_items(+Engine, +Items:list, -Compiled) is det.
%
%   Engine runs the rules of Items too (sandboxed unless the engine is
%   trusted); Compiled is its new rule set.  The change is recorded (as
%   '$rule_change'(add(Items))) for its snapshots.

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

%!  engine_identity(+Engine, -Rules) is det.
%
%   Rules identifies the rules Engine was made with (see
%   etalis_snapshot:rules_identity/2), worked out at the first snapshot
%   or restore.

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

%!  remember_initial(+Engine) is det.
%
%   Before the first change of Engine's rules, keep what they are as
%   '$initial'(Compiled, HiddenNames, Sandboxed), Sandboxed the static
%   items proven safe or `trusted`: a restore goes back to them (see etalis_rule_edits:initial_rules/1).

remember_initial(M) :-
    (   M:'$initial'(_, _, _)
    ->  true
    ;   engine_compiled(M, C),
        M:'$hidden_names'(Counts),
        (   M:'$sandboxed'(Statics) -> Sandboxed = Statics ; Sandboxed = trusted ),
        assertz(M:'$initial'(C, Counts, Sandboxed))
    ).

%   compiled_names(+Engine, +Compiled): Engine's hidden events are
%   numbered on from those of its rule set Compiled (see
%   etalis_hidden_names), which its snapshots hold.

compiled_names(M, compiled(_, _, _, Settings)) :-
    get_dict(hidden_names, Settings, Names),
    retractall(M:'$hidden_names'(_)),
    assertz(M:'$hidden_names'(Names)).
