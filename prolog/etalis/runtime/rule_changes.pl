:- module(etalis_rule_changes,
          [ rule_update_builtins/1,     % +Module
            rule_update/2,              % +Engine, +Update
            raise_event/2,              % +Engine, +Event
            taken_rule_updates/2,       % +Engine, -Updates
            apply_rule_updates/2        % +Engine, +Updates
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(feed_state, [feed_warning/2, changed/1]).
:- use_module('../dialect/etalis_library', [etalis_flags/1]).

/** <module> What a running rule changes: ETALIS's rule updates and raised events

A rule's condition or action (or a static rule it calls) may change the
rules of its engine (ins_event_rule/1, del_event_rule/1,
ins_static_rule/1) or raise an event (event/1).  Both are recorded here
while the input event runs, in dynamic facts of the engine's module, and
made or fed once it has been processed (see etalis_process:run/5), so
that the event runs over the rules it found.
*/

%!  rule_update_builtins(+Module) is det.
%
%   Define in Module original ETALIS's predicates that change the rules
%   of the running engine: ins_event_rule(Rule), del_event_rule(Label
%   or labelled Rule) and ins_static_rule(Clause).  A call records the
%   change (rule_update/2); it is made once the input event that led to
%   it has been processed, so that the event runs over the rules it
%   found (see apply_rule_updates/2).  Also ETALIS's event/1 (see
%   raise_event/2) and its named flags (etalis_flags/1).

rule_update_builtins(M) :-
    etalis_flags(M),
    dynamic([M:'$rule_update'/1, M:'$raised'/1]),
    forall(member(Name-Kind, [ins_event_rule-ins, del_event_rule-del, ins_static_rule-ins_static]),
           (   Head =.. [Name, X],
               Update =.. [Kind, X],
               assertz(M:(Head :- etalis_rule_changes:rule_update(M, Update)))
           )),
    assertz(M:(event(E) :- etalis_rule_changes:raise_event(M, E))).

%!  raise_event(+Engine, +Event) is det.
%
%   Original ETALIS's event/1, called by a rule's condition or action or
%   by a static rule: Event is raised as an input event at the time of
%   the input event being processed, and fed after it (see
%   etalis_process:raised_events/3).  An Event that is not a ground event term is a
%   warning of the line being processed.

raise_event(M, E) :-
    (   callable(E),
        ground(E),
        functor(E, Name, _),
        \+ sub_atom(Name, 0, 1, _, $)
    ->  assertz(M:'$raised'(E)),
        changed(M)
    ;   copy_term(E, Shown),
        numbervars(Shown, 0, _, [singletons(true)]),
        format(string(W), "event/1 was given ~W, which is not an event (a ground term with a name): nothing raised",
               [Shown, [quoted(true), numbervars(true), max_depth(1000)]]),  % see bounded_text/2
        feed_warning(M, W)
    ).

%!  rule_update(+Engine, +Update) is det.
%
%   Record a change of Engine's rules, to be made after the current
%   input event.  At most max_rule_updates/1 changes per input event
%   (each change compiles the rules again, so a rule that adds rules in
%   a loop would never end): the rest are dropped, marked by one
%   '$dropped' that taken_rule_updates/2 reports.

rule_update(M, Update) :-
    max_rule_updates(Max),
    (   predicate_property(M:'$rule_update'(_), number_of_clauses(N)),
        N >= Max
    ->  (   N =:= Max
        ->  assertz(M:'$rule_update'('$dropped'))
        ;   true
        )
    ;   assertz(M:'$rule_update'(Update)),
        changed(M)
    ).

max_rule_updates(1000).

%!  apply_rule_updates(+Engine, +Updates) is det.
%
%   Hook (defined by the engine's API module): make the changes Updates
%   of Engine's rules, in order, reporting what fails as a warning.

:- multifile apply_rule_updates/2.

%!  taken_rule_updates(+Engine, -Updates) is det.
%
%   Updates are the changes of Engine's rules that the last input
%   event's rules recorded, in order, now taken: those past
%   max_rule_updates/1 are dropped with a warning.

taken_rule_updates(M, Updates) :-
    findall(U, retract(M:'$rule_update'(U)), Updates0),
    (   selectchk('$dropped', Updates0, Updates)
    ->  max_rule_updates(Max),
        format(string(W), "the rules asked for more than ~D changes of the rules (ins_event_rule/1, del_event_rule/1, ins_static_rule/1) for one input event: the rest are dropped", [Max]),
        feed_warning(M, W)
    ;   Updates = Updates0
    ).
