/*  A toy construct, for tests only: `P unless N` is P with no N during
    P's interval, as `P fnot N` is, under a name of its own.  Its row of
    the operator table and its template, a binarize/6 clause that makes
    its goal (here fnot's), are all it takes (docs/architecture.md,
    "Adding an operator").
*/

:- multifile etalis_optable:operator/3, etalis_binarize:binarize/6.

etalis_optable:operator(unless, op(1060, xfx), construct([left:pattern, right:negated], [right])).

etalis_binarize:binarize(unless(P, N), Ctx, Outside, Out, S0, S) :-
    etalis_binarize:binarize(fnot(P, N), Ctx, Outside, Out, S0, S).
