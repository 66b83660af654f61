:- module(etalis_binarize,
          [ binarize_rules/2,          % +Rules, -Program
            binarize_rules/3,          % +Rules, +Program0, -Program
            intermediate/1             % +Event
          ]).
:- use_module(library(apply)).
:- use_module(library(lists)).
:- use_module(library(ordsets)).
:- use_module(library(assoc)).
:- use_module('../errors', [etalis_error/3]).
:- use_module(optable, [operator_policy/2]).

/** <module> Binarization: patterns into binary goals

Every pattern is split into goals of at most two inputs, each producing
an intermediate event `'$ieN'(Vars...)` that carries the variables of
its sub-pattern.  A rule `H <- P` becomes the goals of P plus a link
from P's event to H.  Identical sub-patterns (equal up to variable
renaming, with the same window and policy) become one shared goal,
except a temporal goal under a policy that consumes (see consuming/2).

A program is program(Nodes, Links):

  - node(Id, Op, Inputs, Out, Window, Policy)
    Op is temporal(Name) or `or` (Inputs [L, R]), `cnot` (Inputs
    [L, R, N]: L seq R with no N in between), `fnot` (Inputs [P, N]: P
    with no N inside its interval), where(Goal), `filter` or
    aggregate(Fun, X, Window, Result) (Inputs [In]).  Window is a number of seconds or `inf`.
  - link(Label, Out, Head, Where)
*/

%!  binarize_rules(+Rules, -Program) is det.
%
%   Rules is a list of rule(Label, Head, Pattern, Where, VarNames, Policy).
%
%   A variable of a head that its pattern does not bind stays unbound in
%   the events the rule derives (see etalis_rule_facts:head_unbound/3).
%
%   @error etalis_error(Message, Hint) for an `or` whose branches bind
%   different variables that are used outside it.

binarize_rules(Rules, Program) :-
    binarize_rules(Rules, program([], []), Program).

%!  binarize_rules(+Rules, +Program0, -Program) is det.
%
%   Program is Program0 extended with Rules: their goals are shared with
%   those of Program0 where they are identical, and new goals get new
%   numbers.

binarize_rules(Rules, program(Nodes0, Links0), program(Nodes, Links)) :-
    foldl(max_id, Nodes0, 0, Max),
    reverse(Nodes0, Rev0),
    empty_assoc(Index0),
    foldl(index_node, Nodes0, Index0, Index),
    foldl(binarize_rule, Rules, NewLinks, nodes(Max, Rev0, Index), nodes(_, RevNodes, _)),
    reverse(RevNodes, Nodes),
    append(Links0, NewLinks, Links).

max_id(node(Id, _, _, _, _, _), M0, M) :-
    M is max(M0, Id).

%!  intermediate(+Event) is semidet.
%
%   Event is the intermediate event of a goal, `'$ieN'(Vars...)`.

intermediate(E) :-
    functor(E, Name, _),
    sub_atom(Name, 0, _, _, '$ie').

%   The goals made so far are indexed on the variant hash of their key
%   (see node_key/2), so that finding the goal to share with takes the
%   same time however many goals there are.

index_node(Node, Index0, Index) :-
    Node = node(_, Op, Inputs, Out, W, Policy),
    Out =.. [_|Vars],
    node_key(key(Op, Inputs, Vars, W, Policy), Hash),
    (   get_assoc(Hash, Index0, Bucket)
    ->  true
    ;   Bucket = []
    ),
    put_assoc(Hash, Index0, [Node|Bucket], Index).

node_key(Key, Hash) :-
    variant_hash(Key, Hash).

binarize_rule(rule(Label, Head, Pattern, Where, VarNames, Policy),
              link(Label, Out, Head, Where), S0, S) :-
    Ctx = ctx(Policy, inf, Where, VarNames),
    term_variables(Head, Outside),
    binarize(Pattern, Ctx, Outside, Out, S0, S).

var_name(V, VarNames, Name) :-
    (   member(Name = V0, VarNames), V0 == V
    ->  true
    ;   Name = '_'
    ).

%   binarize(+Pattern, +Ctx, +Outside, -Out, +S0, -S)
%
%   Out is the event that signals an occurrence of Pattern.  Outside
%   holds the variables used by the rest of the rule.  A clause of it
%   is the template of a construct of the operator table: it may come
%   from another file, with the construct's row (docs/architecture.md,
%   "Adding an operator").

:- multifile binarize/6.

binarize(event(E), _, _, E, S, S).
binarize(op(Op, P, Q), Ctx, Outside, Out, S0, S) :-
    operands(P, Q, Ctx, Outside, OP, OQ, S0, S1),
    term_variables(OP-OQ, Vs),
    (   operator_policy(Op, Policy)             % e.g. forall_seq
    ->  Ctx = ctx(_, W, Where, VN),
        OpCtx = ctx(Policy, W, Where, VN)
    ;   OpCtx = Ctx
    ),
    node(temporal(Op), [OP, OQ], Vs, OpCtx, Out, S1, S).
binarize(or(P, Q), Ctx, Outside, Out, S0, S) :-
    operands(P, Q, Ctx, Outside, OP, OQ, S0, S1),
    or_variables(OP, OQ, Outside, Ctx, Vs),
    node(or, [OP, OQ], Vs, Ctx, Out, S1, S).
binarize(where(P, Goal), Ctx, Outside, Out, S0, S) :-
    term_variables(Outside-Goal, Outside1),
    binarize(P, Ctx, Outside1, OP, S0, S1),
    term_variables(OP, InVs),
    term_variables(Goal, GoalVs),
    include(in_vars(Outside), GoalVs, Exported),
    term_variables(InVs-Exported, Vs),
    node(where(Goal), [OP], Vs, Ctx, Out, S1, S).
binarize(within(P, W), ctx(Pol, W0, Where, VN), Outside, Out, S0, S) :-
    W1 is min(W0, W),
    Ctx = ctx(Pol, W1, Where, VN),
    (   P = event(E)
    ->  term_variables(E, Vs),
        node(filter, [E], Vs, Ctx, Out, S0, S)
    ;   binarize(P, Ctx, Outside, Out, S0, S)
    ).
binarize(aggregate(Fun, X, P, Window, R), Ctx, Outside, Out, S0, S) :-
    binarize(P, Ctx, Outside, OP, S0, S1),
    term_variables(OP, PVs),
    include(in_vars(Outside), PVs, Group0),
    exclude(==(X), Group0, Group),
    append(Group, [R], Vs),
    node(aggregate(Fun, X, Window, R), [OP], Vs, Ctx, Out, S1, S).
binarize(cnot(op(seq, P, Q), N), Ctx, Outside, Out, S0, S) :-
    negation_outside(N, Outside, OutsideSeq),
    operands(P, Q, Ctx, OutsideSeq, OP, OQ, S0, S1),
    term_variables(OP-OQ-Outside, OutsideN),
    binarize_negation(N, OP-OQ, Ctx, OutsideN, ON, S1, S2),
    term_variables(OP-OQ, Vs),
    node(cnot, [OP, OQ, ON], Vs, Ctx, Out, S2, S).

binarize(fnot(P, N), Ctx, Outside, Out, S0, S) :-
    negation_outside(N, Outside, OutsideP),
    binarize(P, Ctx, OutsideP, OP, S0, S1),
    term_variables(OP-Outside, OutsideN),
    binarize_negation(N, OP, Ctx, OutsideN, ON, S1, S2),
    term_variables(OP, Vs),
    node(fnot, [OP, ON], Vs, Ctx, Out, S2, S).

%   binarize_negation(+N, +Ps, +Ctx, +Outside, -Out, +S0, -S): the
%   negated part N of cnot or fnot, whose operands are Ps.  A `where`
%   around N whose condition uses variables that only the operands bind
%   (`P fnot (temp(T) where T =< Set)`, Set bound by P) is a condition
%   on a blocker together with the occurrence it would block: it runs
%   when a blocker is looked for, with both bound (the paper evaluates
%   `C where t` under the rule's one assignment).  Out is then
%   guarded(E, Goal): E, the occurrences of N without the condition,
%   are kept, and Goal is tested on each candidate (see
%   etalis_operators:no_blocker/9).

binarize_negation(N, Ps, Ctx, Outside, Out, S0, S) :-
    guarded_negation(N, Ps, N1, Goal),
    !,
    term_variables(Outside-Goal, Outside1),
    binarize_negated(N1, Ctx, Outside1, ON, S0, S),
    Out = guarded(ON, Goal).
binarize_negation(N, _, Ctx, Outside, Out, S0, S) :-
    binarize_negated(N, Ctx, Outside, Out, S0, S).

%   guarded_negation(+N, +Ps, -N1, -Goal): N is N1 with `where`
%   conditions around it (Goal, the innermost first), one of which uses
%   a variable of the operands Ps that N1 does not bind.

guarded_negation(N, Ps, N1, Goal) :-
    where_chain(N, N1, Goals),
    Goals \== [],
    term_variables(Ps, PVs),
    term_variables(N1, NVs),
    term_variables(Goals, GVs),
    member(V, GVs),
    in_vars(PVs, V),
    \+ in_vars(NVs, V),
    !,
    conj_goals(Goals, Goal).

where_chain(where(P, G), N1, Goals) :- !,
    where_chain(P, N1, Goals0),
    append(Goals0, [G], Goals).
where_chain(N, N, []).

conj_goals([G], G) :- !.
conj_goals([G|Gs], (G, Rest)) :-
    conj_goals(Gs, Rest).

%   binarize_negated(+N, +Ctx, +Outside, -Out, +S0, -S): the negated
%   part N of cnot or fnot.  An `or` there carries every variable of
%   either branch that is used outside it; the branch that does not bind
%   one derives it unbound, so that its occurrence blocks whatever value
%   the rest has: `P fnot (a(X) or b)` is blocked by an a with P's X, or
%   by any b (see docs/language.md, "Negation").

binarize_negated(or(P, Q), Ctx, Outside, Out, S0, S) :- !,
    term_variables(Outside-Q, OutsideP),
    binarize_negated(P, Ctx, OutsideP, OP, S0, S1),
    term_variables(Outside-OP, OutsideQ),
    binarize_negated(Q, Ctx, OutsideQ, OQ, S1, S2),
    term_variables(OP-OQ, Vs0),
    include(in_vars(Outside), Vs0, Vs),
    node(or, [OP, OQ], Vs, Ctx, Out, S2, S).
binarize_negated(N, Ctx, Outside, Out, S0, S) :-
    binarize(N, Ctx, Outside, Out, S0, S).

%   negation_outside(+N, +Outside, -OutsideSeq): the negated pattern N
%   uses its variables from outside the sequence.  A variable that the
%   sequence binds only in a `where` (e.g. `b(Y) where Z is Y*2`) must be
%   carried out of it, or the negation would not be keyed on it and an
%   N with any value would block.

negation_outside(N, Outside, OutsideSeq) :-
    term_variables(Outside-N, OutsideSeq).

operands(P, Q, Ctx, Outside, OP, OQ, S0, S) :-
    term_variables(Outside-Q, OutsideP),
    binarize(P, Ctx, OutsideP, OP, S0, S1),
    term_variables(Outside-OP, OutsideQ),
    binarize(Q, Ctx, OutsideQ, OQ, S1, S).

in_vars(Vars, V) :-
    member(V0, Vars),
    V0 == V,
    !.

%   An `or` carries the variables bound by both branches.  A variable
%   bound by one branch only may not be used outside the `or`.

or_variables(OP, OQ, Outside, ctx(_, _, Where, VarNames), Vs) :-
    term_variables(OP, PV),
    term_variables(OQ, QV),
    include(in_vars(QV), PV, Vs),
    (   ( member(V, PV), \+ in_vars(QV, V)
        ; member(V, QV), \+ in_vars(PV, V)
        ),
        in_vars(Outside, V)
    ->  var_name(V, VarNames, Name),
        format(string(M), "variable ~w is bound by only one branch of `or` but used outside it", [Name]),
        etalis_error(M, "bind the variable in both branches, or use it only inside its branch", Where)
    ;   true
    ).

%   node(+Op, +Inputs, +Vars, +Ctx, -Out, +S0, -S)
%
%   Out is the event of the goal Op over Inputs, shared with an
%   identical goal made before.

node(Op, Inputs, Vars, ctx(Policy, W, _, _), Out, nodes(N0, Nodes, Index), S) :-
    Key = key(Op, Inputs, Vars, W, Policy),
    node_key(Key, Hash),
    (   \+ consuming(Op, Policy),
        get_assoc(Hash, Index, Bucket),
        member(node(_, Op1, In1, Out1, W1, P1), Bucket),
        Out1 =.. [_|Vars1],
        key(Op1, In1, Vars1, W1, P1) =@= Key
    ->  copy_term(key(Op1, In1, Vars1, W1, P1)-Out1, Key-Out),
        S = nodes(N0, Nodes, Index)
    ;   N is N0 + 1,
        format(atom(Name), '$ie~d', [N]),
        Out =.. [Name|Vars],
        Node = node(N, Op, Inputs, Out, W, Policy),
        index_node(Node, Index, Index1),
        S = nodes(N, [Node|Nodes], Index1)
    ).

%   consuming(+Op, +Policy): a goal of Op under Policy consumes the
%   occurrences it combines, so it is not shared: two rules with the same
%   sub-pattern but different conditions after it consume for themselves
%   (one rule's terminator that fails the other's condition leaves the
%   other's initiators), as they would if each rule were alone.

consuming(temporal(_), Policy) :-
    consuming_policy(Policy).

consuming_policy(chronological).
consuming_policy(chronological(_)).
consuming_policy(continuous).
consuming_policy(cumulative).
