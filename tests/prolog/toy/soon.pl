/*  A toy operator, for tests only: `A soon B` is `A seq B` with B
    starting at most 5 seconds after A ends.  Its one table entry is all
    it takes (docs/architecture.md, "Adding an operator").
*/

:- multifile etalis_optable:operator/3.

etalis_optable:operator(soon, op(1040, yfx),
                        temporal(i(A1,A2), i(B1,B2), (A2 < B1, B1 - A2 =< 5), i(A1,B2), [left])).
