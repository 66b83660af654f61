:- module(etalis_program_listing,
          [ compiled_listing/1,         % +Compiled
            node_pattern/3              % +Op, +Inputs, -Pattern
          ]).
:- use_module(library(lists), [member/2]).
:- use_module(library(listing), [portray_clause/3]).
:- use_module('../reader/syntax', [pattern_text/2]).
:- use_module(chains, [chain_pattern/2]).

/** <module> A compiled rule set as text

What `etalis compile` prints (compiled_listing/1), and a binary goal
written back as a pattern of the rule language (node_pattern/3), as the
listing and Engine.pending() show it.
*/

%!  compiled_listing(+Compiled) is det.
%
%   Print the binary goals and the generated clauses of Compiled.

compiled_listing(compiled(program(Nodes, Links), Clauses, _, Settings)) :-
    Policy = Settings.policy,
    Printed = Settings.printed,
    format("% default policy: ~w~n% reported events: ~q~n~n% Binary goals~n", [Policy, Printed]),
    forall(member(Node, Nodes), print_node(Node)),
    format("~n% Rules~n"),
    forall(member(link(Label, Out, Head, pos(_, Line, _)), Links),
           (   copy_term(Out-Head, O-H),
               numbervars(O-H, 0, _),
               format("~q <- ~q.    % ~w line ~w~n", [H, O, Label, Line]) )),
    format("~n% Event-driven clauses~n"),
    forall(member(C, Clauses), portray_clause(current_output, C, [module(etalis_syntax)])).

print_node(node(Id, Op, Inputs, Out, W, Policy)) :-
    node_pattern(Op, Inputs, Pattern),
    pattern_text('<-'(Out, Pattern), Text),
    format("~d: ~s    % window ~w, ~w~n", [Id, Text, W, Policy]).

%!  node_pattern(+Op, +Inputs, -Pattern) is det.
%
%   Pattern is the binary goal Op over Inputs written as a pattern (with
%   the operator names of the rule language), for listings and
%   Engine.pending().

node_pattern(chain(S, Spec), _, P) :- chain_pattern(chain(S, Spec), P).
node_pattern(temporal(Op), [L, R], P) :- P =.. [Op, L, R].
node_pattern(or, [L, R], or(L, R)).
node_pattern(cnot, [L, R, N0], cnot(seq(L, R), N)) :- guard_pattern(N0, N).
node_pattern(fnot, [P, N0], fnot(P, N)) :- guard_pattern(N0, N).
node_pattern(where(G), [In], where(In, G)).
node_pattern(filter, [In], In).
node_pattern(aggregate(Fun, X, Window, R), [In], aggregate(F, In, Window, R)) :-
    (   Fun == count -> F = count ; F =.. [Fun, X] ).

guard_pattern(guarded(E, G), where(E, G)) :- !.
guard_pattern(N, N).
