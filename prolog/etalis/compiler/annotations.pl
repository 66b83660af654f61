:- module(etalis_annotations,
          [ explained_rule/2,           % +Rule0, -Rule
            explained_specs/3,          % +Explain, +Specs0, -Specs
            kleene_positions/2,         % +Rule0, -Rule
            annotated_pattern/4         % +Kind, +Pattern0, -Pattern, -Prov
          ]).
:- use_module(library(aggregate), [aggregate_all/3]).
:- use_module(library(apply), [foldl/6, maplist/3]).
:- use_module(library(lists), [append/3, member/2]).
:- use_module('../reader/kleene', [kleene_event/1]).
:- use_module(optable, [construct_parts/3, map_sub_patterns/3]).
:- use_module(chains, [chain_event/1]).
:- use_module(stn_runs, [stn_run_event/1]).

/** <module> What an occurrence carries besides its event

A rule's pattern annotated so that each occurrence carries what it was
made of: the input occurrences (provenance, `explain`) or the positions
of its input events in the stream (for the selection and skip
strategies).
*/

%!  explained_rule(+Rule0, -Rule) is det.
%
%   With provenance (option explain(true)), every event carries one
%   more argument: the list of input occurrences det(E, T1, T2) it was
%   built from.  Input events get it when they arrive; a pattern's is
%   the concatenation of its operands' (an aggregate's is empty, and a
%   negated event's is not kept).

explained_rule(rule(L, H0, P0, W, V), rule(L, H, P, W, V)) :-
    annotated_pattern(explain, P0, P, Prov),
    with_provenance(H0, Prov, H).

%!  explained_specs(+Explain, +Specs0, -Specs) is det.
%
%   Specs are the Name/Arity Specs0 of events as they are with
%   provenance (Explain `true`: one argument more) or without it.

explained_specs(false, Specs, Specs).
explained_specs(true, Specs0, Specs) :-
    maplist(explained_spec, Specs0, Specs).

explained_spec(N/A0, N/A) :-
    A is A0 + 1.

%!  kleene_positions(+Rule0, -Rule) is det.
%
%   A rule of a `P+` (or of its runs under `stn`) binds the first
%   argument of its head to the positions of its events (which a
%   selection or skip strategy compares); other rules are left as they
%   are.

kleene_positions(rule(L, H, P0, W, V), rule(L, H, P, W, V)) :-
    (   (   kleene_event(H)
        ;   stn_run_event(H)
        )
    ->  annotated_pattern(position, P0, P, Prov),
        arg(1, H, Prov)
    ;   P = P0
    ).

%!  annotated_pattern(+Kind, +Pattern0, -Pattern, -Prov) is det.
%
%   Pattern is Pattern0 whose occurrences carry Prov, built up from its
%   events: with Kind `explain` the input occurrences det(E, T1, T2)
%   (see explained_rule/2), with Kind `position` the positions of the
%   input events in the stream (see etalis_strategies:position/1; an
%   aggregate counts as one event, at the position where it is
%   computed).  Each operator's is the concatenation of its operands';
%   a negated pattern's is not kept.

annotated_pattern(K, event(E0), P, Prov) :-
    annotated_event(K, E0, P, Prov).
annotated_pattern(K, op(Op, A0, B0), where(op(Op, A, B), append(PA, PB, Prov)), Prov) :-
    annotated_pattern(K, A0, A, PA),
    annotated_pattern(K, B0, B, PB).
annotated_pattern(K, P0, P, Prov) :-
    construct_parts(P0, Name, Parts0),
    (   memberchk(_-aggregated-_, Parts0)
    ->  annotated_aggregate(K, P0, P, Prov)
    ;   aggregate_all(count, member(_-pattern-_, Parts0), Alternatives),
        foldl(annotated_part(K, Alternatives, Prov), Parts0, Parts, none, Joined),
        construct_parts(P1, Name, Parts),
        joined_provenance(Joined, Alternatives, P1, P, Prov)
    ).

%   annotated_part(+Kind, +Alternatives, ?Prov, +Part0, -Part, +Joined0, -Joined):
%   a part of a construct annotated as its kind says: an occurrence of
%   the construct has the provenance of its one `pattern` part, or of
%   the one of its Alternatives that occurred, or of both operands of
%   its `sequence` part (Joined is then append(PA, PB), else `none`);
%   a negated part's is not kept.

annotated_part(K, N, Prov, Key-pattern-S0, Key-pattern-S, J, J) :-
    !,
    (   N =:= 1
    ->  annotated_pattern(K, S0, S, Prov)
    ;   annotated_pattern(K, S0, S1, PS),
        S = where(S1, Prov = PS)
    ).
annotated_part(K, _, _, Key-sequence-op(seq, A0, B0), Key-sequence-op(seq, A, B), _, append(PA, PB)) :-
    !,
    annotated_pattern(K, A0, A, PA),
    annotated_pattern(K, B0, B, PB).
annotated_part(K, _, _, Key-negated-C0, Key-negated-C, J, J) :-
    !,
    negated_pattern(K, C0, C).
annotated_part(_, _, _, Part, Part, J, J).

joined_provenance(none, N, P, P, Prov) :-
    (   N =:= 0 -> Prov = [] ; true ).
joined_provenance(append(PA, PB), _, P1, where(P1, append(PA, PB, Prov)), Prov).

annotated_event(explain, E0, event(E), Prov) :-
    with_provenance(E0, Prov, E).
annotated_event(position, E, event(E), Prov) :-
    (   kleene_event(E)
    ;   stn_run_event(E)
    ;   chain_event(E)
    ),
    !,
    arg(1, E, Prov).
annotated_event(position, E, where(event(E), etalis_strategies:position(P)), [P]).

negated_pattern(explain, C0, C) :-
    annotated_pattern(explain, C0, C, _).
negated_pattern(position, C, C).

annotated_aggregate(explain, Agg0, Agg, []) :-
    map_sub_patterns([S0, S]>>annotated_pattern(explain, S0, S, _), Agg0, Agg).
annotated_aggregate(position, Agg, where(Agg, etalis_strategies:position(P)), [P]).

with_provenance(E0, Prov, E) :-
    E0 =.. List0,
    append(List0, [Prov], List),
    E =.. List.
