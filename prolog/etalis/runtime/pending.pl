:- module(etalis_pending,
          [ pending_part/4              % +Engine, +Nodes, +Ids, -Part
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module('../reader/syntax', [pattern_text/2]).
:- use_module('../compiler/compile', [node_pattern/3]).
:- use_module('../compiler/operators', [store_index/3, stored_input/5]).
:- use_module(runtime, [engine_store/3]).
:- use_module(store, [store_entry/3]).

/** <module> The pending goals of a rule, as the pending request shows them

A rule's pattern is compiled into goals (see etalis_compile); an
occurrence that matched part of a goal waits in the goal's store for
the rest.  pending_part/4 shows each such occurrence with the goal and
the part it matched written as patterns of the rule file (a hidden
intermediate event as the sub-pattern it stands for), and what it waits
for.
*/

%!  pending_part(+Engine, +Nodes:list, +Ids:list, -Part:dict) is nondet.
%
%   Part is one pending occurrence of Engine in a goal Id of Ids (the
%   goals of a rule, among the goals Nodes of Engine's rule set), as
%   JSON: the goal, the part matched (with its bindings), its interval,
%   and what it waits for.

pending_part(M, Nodes, Ids, Part) :-
    member(Id, Ids),
    memberchk(node(Id, Op, Inputs, Out, W, Policy), Nodes),
    Node = node(Id, Op, Inputs, Out, W, Policy),
    stored_input(Node, Side, In, Key, Payload),
    store_index(Id, Side, I),
    engine_store(M, I, Store),
    store_entry(Store, Key, e(Payload, T1, T2)),
    shown(In, Nodes, Matched),
    copy_term(Node, node(_, Op1, Inputs1, _, _, _)),
    shown_goal(Op1, Inputs1, Nodes, Goal),
    waiting(Op, Side, Waiting),
    Part = _{goal: Id, pattern: Goal, matched: Matched, side: Side,
             waiting: Waiting, start: T1, end: T2}.

%   waiting(+Op, +Side, -Text): what an occurrence on Side of a goal of
%   operator Op waits for.

waiting(chain(_, _), _, "the rest of the sequence") :- !.
waiting(cnot, right, "blocks the sequence") :- !.
waiting(fnot, right, "blocks the pattern") :- !.
waiting(_, left, "the right operand") :- !.
waiting(_, right, "the left operand").

%   shown_goal(+Op, +Inputs, +Nodes, -Text): the goal of operator Op
%   over Inputs as the pattern it stands for.

shown_goal(Op, Inputs, Nodes, Text) :-
    maplist(shown_term(Nodes), Inputs, Shown),
    node_pattern(Op, Shown, Term),
    pattern_text(Term, Text).

%   shown(+In, +Nodes, -Text): the matched input In as the pattern it
%   stands for.

shown(In, Nodes, Text) :-
    shown_term(Nodes, In, Term),
    pattern_text(Term, Text).

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
