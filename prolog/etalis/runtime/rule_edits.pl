:- module(etalis_rule_edits,
          [ remove_label/3,             % +Engine, +Label, -Compiled
            make_rule_change/2,         % +Engine, +Change
            changes_possible/4,         % +Engine, +From, +Changes, -Compiled
            initial_rules/1             % +Engine
          ]).
:- use_module(library(error)).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module('../reader/syntax', [read_etl_string/3, pattern_text/2]).
:- use_module('../compiler/compile', [compile_more/3, compile_without/3]).
:- use_module('../safety/sandbox', [sandbox_check/2]).
:- use_module(load, [reload_compiled/3]).
:- use_module(engine_load, [add_items/3, remember_initial/1, engine_compiled/2, is_static/1]).
:- use_module(protocol, [message_text/2]).
:- use_module(feed_state, [feed_warning/2]).
:- use_module(rule_changes, []).

/** <module> Changing the rules of a running engine

What changes an engine's rules after it is made, but for adding rules
(etalis_engine_load:add_items/3): removing a rule, making again the
changes of the rules that a snapshot holds (first checking that they
can all be made), going back to the rules the engine was made with,
and making the changes that its running rules asked for (ETALIS's
ins_event_rule/1, del_event_rule/1, ins_static_rule/1, recorded by
etalis_rule_changes).
*/

%!  remove_label(+Engine, +Label, -Compiled) is det.
%
%   Engine no longer runs the rule labelled Label; Compiled is its new
%   rule set.  The change is recorded (as '$rule_change'(remove(Label)))
%   for its snapshots.
%
%   @error etalis_engine_error(Message) if no rule is labelled Label.

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

%!  make_rule_change(+Engine, +Change) is det.
%
%   Make again a change of the rules that an engine of the same rules
%   made (see add_items/3 and remove_label/3, which record them):
%   add(Items) or remove(Label).

make_rule_change(M, add(Items)) :-
    add_items(M, Items, _).
make_rule_change(M, remove(Label)) :-
    remove_label(M, Label, _).

%!  changes_possible(+Engine, +From, +Changes:list, -Compiled) is det.
%
%   The changes of the rules Changes (as make_rule_change/2 takes them) can be made in
%   Engine, one after the other, to its rules `now` or to its `initial`
%   ones, those it was made with, and give the rules Compiled (`now` for
%   no change of the rules now): they are compiled (and proven safe, for
%   untrusted rules) without changing Engine, so that a snapshot whose
%   changes cannot be made is refused before any is.
%
%   @error etalis_snapshot_error(Message) for a change that cannot be
%   made.

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

%!  initial_rules(+Engine) is det.
%
%   Engine's rules become again those it was made with (see
%   remember_initial/1): the rules and static clauses added while it ran
%   are taken out, and those removed are back.

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

%   make_rule_update(+Engine, +Update): make a change that a running
%   rule asked for (see etalis_rule_changes:rule_update/2).

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

%   rule_update_warning(+Engine, +Update, +Error): the change Update
%   could not be made: a warning of the input line.

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
