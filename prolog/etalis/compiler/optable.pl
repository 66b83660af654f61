:- module(etalis_optable,
          [ operator/3,                 % ?Name, ?Syntax, ?Meaning
            etl_operator/3,             % ?Priority, ?Type, ?Name
            temporal_operator/1,        % ?Name
            temporal_spec/6,            % ?Op, ?A, ?B, -Cond, -Result, -Stored
            operator_policy/2,          % +Op, -Policy
            waiting_side/2,             % +Operator, -Side
            end_point_instance/4,       % +Op, -A, -B, -Result
            pattern_parts/3,            % ?Pattern, ?Name, ?Parts
            sub_pattern/3,              % +Pattern, -Kind, -Sub
            map_sub_patterns/3,         % :Goal, +Pattern0, -Pattern
            pattern_kind/1,             % ?Kind
            construct_parts/3,          % ?Pattern, ?Name, ?Parts
            completing_part/3,          % +Pattern, -Kind, -Sub
            guarded_part/3              % +Pattern, -Sub, -Goal
          ]).
:- use_module(library(lists)).
:- use_module(library(apply)).

/** <module> The operator table of the ETALIS Language for Events

One fact of operator/3 per operator says everything the reader, the
binariser, the compiler, the JSON protocol and the rendering of
patterns need to know about it:

    operator(Name, op(Priority, Type), Meaning)

Name is how rule files spell it, op(Priority, Type) its syntax (as
op/3 takes it).  Meaning is one of

  - temporal(A, B, Cond, Result, Stored): a binary temporal operator.
    For operands with intervals A = i(A1,A2) and B = i(B1,B2), the
    pattern `L Name R` holds when Cond does, over the interval Result =
    i(Start, End) (arithmetic expressions).  Stored lists the operands
    (`left`, `right`) that may complete first and so wait as pending
    goals.  This is all a new temporal operator needs: the generic
    template of etalis_operators compiles it under every consumption
    policy and window, the pattern JSON gives it as
    `{"op": Name, "left": .., "right": .., "stored": Side}` and
    pattern_text/2 writes it back as `L Name R`.
  - consuming(Policy, temporal(...)): a temporal operator that
    consumes its operands under its own policy, whatever the rule's
    (ETALIS's `forall_seq` is `seq` under `continuous`: each B takes
    every pending A, and uses them up).
  - same_as(Other): another spelling of the operator Other (ETALIS's
    `check`, `timestamp`, `event_multiply`, `do` and `iff`); read as
    Other.
  - refused(Why, Instead): an ETALIS operator that this engine cannot
    give a sound meaning; a rule using it is refused at load, at its
    position, with Why and Instead (the etalis-py equivalent).
  - construct(Parts, Stored): a construct other than a binary temporal
    operator (`or`, `cnot`, `fnot`, `where`, `within`, `aggregate`).
    Its normalised pattern is the term Name(V1, ..., Vn), and Parts
    lists Key:Kind for each Vi: Key names it in the pattern JSON, Kind
    says what it is, and so how it is read, given as JSON and written
    back (see pattern_parts/3):
      - `pattern`: a sub-pattern; an occurrence of the construct is an
        occurrence of one of its `pattern` parts (of `or`'s either
        operand), which binds its variables;
      - `sequence`: a sub-pattern that must be `A seq B`; an occurrence
        of the construct is one of the whole sequence;
      - `aggregated`: a sub-pattern whose occurrences combine into one
        value: an occurrence of the construct counts as one event, and
        its values are new in every round of a recursion;
      - `negated`: a sub-pattern whose occurrences block the pattern; it
        binds nothing;
      - `goal`: a Prolog condition (`where`), its text in the JSON; the
        construct passes an occurrence of its `pattern` part only when
        the condition holds (the part is guarded), and the condition
        binds its variables;
      - `seconds`: a duration, read from e.g. minutes(5), in seconds;
      - `function`: count, sum, avg, min or max, written with the
        `value` part, the variable it is taken over (count(), sum(X));
      - `value`: that variable, `null` in the JSON of count;
      - `window`: count(N) or time(Seconds);
      - `result`: the variable bound to the result.
    What the kinds say is all the compiler's checks and annotations
    know of a construct: which operands complete it at once
    (completing_part/3, for the recursion check and `etalis check`'s
    steps), which are guarded (guarded_part/3), which variables it
    binds and what provenance and positions its occurrences carry.
    Stored lists the operands whose occurrences wait as pending goals
    (`left` the first pattern, `right` the negated one).  The
    construct's template (its goal in etalis_binarize, its clauses in
    etalis_operators) gives its meaning.  Syntax is op(Priority, Type)
    for an infix construct, functor(Arity) for one written as a term
    (`aggregate(Fun, P, Window, Result)`).
  - `unrolled`: a shorthand written as a term (functor(Arity)) that the
    reader writes out with the other operators: iteration(P, N), P N
    times in sequence, and any(N, Es), N distinct events of Es in any
    order (see etalis_patterns:pattern/6).
  - `rule`: the rule arrow `<-`.
  - `kleene`: `P+`, one or more occurrences of P in sequence (Kleene
    plus), which the reader turns into hidden rules (see
    etalis_kleene:kleene_rules/5).

The table is multifile: a file that adds facts to
etalis_optable:operator/3 before a rule file is read adds operators
(docs/architecture.md, "Adding an operator").

Priorities keep ETALIS's order: `seq` and the Allen relations bind
tightest, then `cnot`, `and`, `par`, ETALIS's `check`/`timestamp`/
`event_multiply`, `or`, `within`, and `where` loosest.
*/

:- multifile operator/3.
:- discontiguous operator/3.

%!  operator(?Name, ?Syntax, ?Meaning) is nondet.
%
%   The operator Name of the rule language has Syntax op(Priority,
%   Type) and Meaning (see the module documentation).

operator(<-,             op(1200, xfx), rule).
operator(iff,            op(1200, xfx), same_as(<-)).
operator(where,          op(1150, xfx), construct([pattern:pattern, goal:goal], [])).
operator(within,         op(1140, xfx), construct([pattern:pattern, window:seconds], [])).
operator(or,             op(1130, yfx), construct([left:pattern, right:pattern], [])).
operator(check,          op(1125, yfx), same_as(where)).
operator(timestamp,      op(1125, yfx), same_as(where)).
operator(event_multiply, op(1125, yfx), same_as(where)).
operator(do,             op(1160, yfx), same_as(where)).
operator(par,            op(1120, yfx),
         temporal(i(A1,A2), i(B1,B2), max(A1,B1) < min(A2,B2), i(min(A1,B1), max(A2,B2)), [left,right])).
operator(and,            op(1110, yfx),
         temporal(i(A1,A2), i(B1,B2), true, i(min(A1,B1), max(A2,B2)), [left,right])).
operator(cnot,           op(1060, xfx), construct([left:sequence, right:negated], [left, right])).
operator(fnot,           op(1060, xfx), construct([left:pattern, right:negated], [right])).
operator(aggregate,      functor(4),
         construct([fun:function, value:value, pattern:aggregated, window:window, result:result], [])).
operator(seq,            op(1040, yfx), temporal(i(A1,A2), i(B1,B2), A2 < B1, i(A1,B2), [left])).
operator(forall_seq,     op(1040, yfx),
         consuming(continuous, temporal(i(A1,A2), i(B1,B2), A2 < B1, i(A1,B2), [left]))).
operator(ntimes,         op(1040, yfx),
         refused("ETALIS declares `P ntimes N` but its compiler has no rules for it, so it never detects anything",
                 "write iteration(P, N) for P N times in sequence")).
operator(star_times,     op(200, xf),
         refused("it is understood only as the whole body S seq P star_times (S, then each later P extending the run)",
                 "write the rule as d(X) <- a(X) seq b(X) star_times, or a fixed count with iteration(b(X), 3)")).
operator(+,              op(200, xf), kleene).
operator(iteration,      functor(2), unrolled).
operator(any,            functor(2), unrolled).
operator(before,         op(1040, xfx), temporal(i(A1,A2), i(B1,B2), A2 < B1, i(A1,B2), [left])).
operator(after,          op(1040, xfx), temporal(i(A1,A2), i(B1,B2), B2 < A1, i(B1,A2), [right])).
operator(meets,          op(1040, xfx), temporal(i(A1,A2), i(B1,B2), A2 =:= B1, i(A1,B2), [left,right])).
operator(met_by,         op(1040, xfx), temporal(i(A1,A2), i(B1,B2), B2 =:= A1, i(B1,A2), [left,right])).
operator(overlaps,       op(1040, xfx),
         temporal(i(A1,A2), i(B1,B2), (A1 < B1, B1 < A2, A2 < B2), i(A1,B2), [left])).
operator(overlapped_by,  op(1040, xfx),
         temporal(i(A1,A2), i(B1,B2), (B1 < A1, A1 < B2, B2 < A2), i(B1,A2), [right])).
operator(starts,         op(1040, xfx),
         temporal(i(A1,A2), i(B1,B2), (A1 =:= B1, A2 < B2), i(B1,B2), [left])).
operator(started_by,     op(1040, xfx),
         temporal(i(A1,A2), i(B1,B2), (A1 =:= B1, B2 < A2), i(A1,A2), [right])).
operator(during,         op(1040, xfx),
         temporal(i(A1,A2), i(B1,B2), (B1 < A1, A2 < B2), i(B1,B2), [left])).
operator(contains,       op(1040, xfx),
         temporal(i(A1,A2), i(B1,B2), (A1 < B1, B2 < A2), i(A1,A2), [right])).
operator(finishes,       op(1040, xfx),
         temporal(i(A1,A2), i(B1,B2), (A2 =:= B2, B1 < A1), i(B1,B2), [left,right])).
operator(finished_by,    op(1040, xfx),
         temporal(i(A1,A2), i(B1,B2), (A2 =:= B2, A1 < B1), i(A1,A2), [left,right])).
operator(equals,         op(1040, xfx),
         temporal(i(A1,A2), i(B1,B2), (A1 =:= B1, A2 =:= B2), i(A1,A2), [left,right])).

%!  etl_operator(?Priority, ?Type, ?Name) is nondet.
%
%   The syntax of the operators of the table, as op/3 takes it.

etl_operator(Priority, Type, Name) :-
    operator(Name, op(Priority, Type), _).

%!  temporal_operator(?Name) is nondet.
%
%   Name is a binary event operator whose result depends on the
%   intervals of both operands (`seq`, `and`, `par`, the 13 Allen
%   relations, and any temporal operator added to the table).

temporal_operator(Name) :-
    operator(Name, _, Meaning),
    temporal_meaning(Meaning, _).

temporal_meaning(temporal(A, B, Cond, Result, Stored), temporal(A, B, Cond, Result, Stored)).
temporal_meaning(consuming(_, Temporal), Temporal).

%!  operator_policy(+Op, -Policy) is semidet.
%
%   The temporal operator Op consumes its operands under Policy, not
%   under the policy of its rule.

operator_policy(Op, Policy) :-
    operator(Op, _, consuming(Policy, _)).

%!  temporal_spec(?Op, ?A, ?B, -Cond, -Result, -Stored) is nondet.
%
%   The temporal operator Op holds for operands with intervals A and B
%   when Cond does, over Result; Stored are the sides that wait (see
%   the module documentation).

temporal_spec(Op, A, B, Cond, Result, Stored) :-
    operator(Op, _, Meaning),
    temporal_meaning(Meaning, temporal(A, B, Cond, Result, Stored)).

%!  waiting_side(+Operator, -Side) is det.
%
%   Side (left, right or none) is the operand of the binary temporal
%   Operator that is stored to wait for the other one; with none, both
%   operands wait for each other.

waiting_side(Op, Side) :-
    (   temporal_spec(Op, _, _, _, _, [Only])
    ->  Side = Only
    ;   Side = none
    ).

%!  end_point_instance(+Op, -A, -B, -Result) is nondet.
%
%   The temporal operator Op holds for operands over the intervals A
%   and B, over the interval Result, where A and B have their end
%   points in one of every order (with ties), which are all that
%   comparisons of end points can tell apart: what is true of every
%   instance is true of the operator (see
%   etalis_recursion:widening_side/2, etalis_rule_facts:lasting/2).

end_point_instance(Op, i(A1, A2), i(B1, B2), i(S, E)) :-
    between(0, 3, A1), between(A1, 3, A2),
    between(0, 3, B1), between(B1, 3, B2),
    temporal_spec(Op, i(A1, A2), i(B1, B2), Cond, i(SX, EX), _),
    catch(Cond, _, fail),
    S is SX,
    E is EX.

%!  pattern_parts(?Pattern, ?Name, ?Parts) is semidet.
%
%   Pattern, a normalised pattern other than an event, is the operator
%   Name over Parts, a list of Key-Kind-Value: op(Name, L, R) of a
%   binary temporal operator has [left-pattern-L, right-pattern-R], a
%   construct those of its table row (see the module documentation).
%   Either Pattern, or Name and Parts, must be given.

pattern_parts(P, Name, Parts) :-
    (   var(P)
    ->  (   temporal_operator(Name)
        ->  Parts = [left-pattern-L, right-pattern-R],
            P = op(Name, L, R)
        ;   construct_parts(P, Name, Parts)
        )
    ;   P = op(Name, L, R)
    ->  Parts = [left-pattern-L, right-pattern-R]
    ;   P \= event(_),
        construct_parts(P, Name, Parts)
    ).

%!  construct_parts(?Pattern, ?Name, ?Parts) is semidet.
%
%   Pattern is a construct (a row construct(...) of the table, not an
%   event or a binary temporal operator) Name over Parts, a list of
%   Key-Kind-Value.  Either Pattern, or Name and Parts, must be given.

construct_parts(P, Name, Parts) :-
    (   compound(P)
    ->  compound_name_arguments(P, Name, Values)
    ;   true
    ),
    operator(Name, _, construct(Form, _)),
    maplist(part, Form, Values, Parts),
    compound_name_arguments(P, Name, Values).

part(Key:Kind, Value, Key-Kind-Value).

%!  sub_pattern(+Pattern, -Kind, -Sub) is nondet.
%
%   Sub is a sub-pattern of Pattern, in order, of Kind `pattern`,
%   `sequence` or `negated`.

sub_pattern(P, Kind, Sub) :-
    pattern_parts(P, _, Parts),
    member(_-Kind-Sub, Parts),
    pattern_kind(Kind).

%!  pattern_kind(?Kind) is nondet.
%
%   Kind is a kind of construct part that is a sub-pattern.

pattern_kind(pattern).
pattern_kind(sequence).
pattern_kind(aggregated).
pattern_kind(negated).

%!  completing_part(+Pattern, -Kind, -Sub) is nondet.
%
%   Sub, of Kind `pattern`, `sequence` or `aggregated`, is an operand of
%   the construct Pattern whose occurrence completes Pattern at once:
%   not a negated one, and none of a construct with a condition (whose
%   operand is guarded, see guarded_part/3).

completing_part(P, Kind, Sub) :-
    construct_parts(P, _, Parts),
    \+ memberchk(_-goal-_, Parts),
    member(_-Kind-Sub, Parts),
    memberchk(Kind, [pattern, sequence, aggregated]).

%!  guarded_part(+Pattern, -Sub, -Goal) is semidet.
%
%   Pattern is a construct with the condition Goal over its operand Sub
%   (`where`): an occurrence of Sub completes Pattern only when Goal
%   holds.

guarded_part(P, Sub, Goal) :-
    construct_parts(P, _, Parts),
    memberchk(_-goal-Goal, Parts),
    memberchk(_-pattern-Sub, Parts).

:- meta_predicate map_sub_patterns(2, +, -).

%!  map_sub_patterns(:Goal, +Pattern0, -Pattern) is det.
%
%   Pattern is Pattern0 with each sub-pattern S0 replaced by S of
%   call(Goal, S0, S).

map_sub_patterns(G, P0, P) :-
    pattern_parts(P0, Name, Parts0),
    maplist(mapped_part(G), Parts0, Parts),
    pattern_parts(P, Name, Parts).

mapped_part(G, Key-Kind-V0, Key-Kind-V) :-
    (   pattern_kind(Kind)
    ->  call(G, V0, V)
    ;   V = V0
    ).
