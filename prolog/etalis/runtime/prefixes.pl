:- module(etalis_prefixes,
          [ engine_prefixes/2,          % +Engine, +Prefixes
            prefixed_event/3            % +Settings, +Event0, -Event
          ]).
:- use_module(library(error)).
:- use_module(library(lists)).
:- use_module(library(apply)).

/** <module> Prefixed names in input events

Once the rules declare a prefix, an event's argument `wt:o1` (or the
atom `'wt:o1'`) becomes the IRI atom that `wt:o1` in a rule is.
*/

%!  engine_prefixes(+Engine, +Prefixes) is det.
%
%   Prefixes (a list of Prefix-Namespace) become those with which the
%   prefixed names in events are expanded: an argument `wt:o1`, or the
%   atom `'wt:o1'`, becomes the IRI atom that `wt:o1` in a rule is.

engine_prefixes(M, Prefixes) :-
    must_be(list(pair), Prefixes),
    retractall(M:'$prefix'(_, _)),
    forall(member(P-NS, Prefixes), assertz(M:'$prefix'(P, NS))).

%!  prefixed_event(+Settings, +E0, -E) is det.
%
%   E is E0 with each argument that is a prefixed name of a known prefix
%   replaced by its IRI (E0 itself, not a copy, when none is), if the
%   batch Settings expand prefixes (see
%   etalis_batch_settings:batch_settings/4).

prefixed_event(S, '$provenance'(E0, Prov), '$provenance'(E, Prov)) :- !,
    prefixed_event(S, E0, E).
prefixed_event(S, E0, E) :-
    (   compound(E0),
        S = batch(M, _, _, _, _, _, true, _),
        arg(_, E0, A),
        expanded(M, A, _)
    ->  compound_name_arguments(E0, Name, Args0),
        maplist(prefixed_argument(M), Args0, Args),
        compound_name_arguments(E, Name, Args)
    ;   E = E0
    ).

prefixed_argument(M, A0, A) :-
    (   expanded(M, A0, A1)
    ->  A = A1
    ;   A = A0
    ).

expanded(M, Name, IRI) :-
    prefixed_name(Name, Prefix, Local),
    M:'$prefix'(Prefix, NS),
    atom_concat(NS, Local, IRI).

prefixed_name(Prefix:Local, Prefix, Local) :- !,
    atom(Prefix),
    atomic(Local).
prefixed_name(Atom, Prefix, Local) :-
    atom(Atom),
    sub_atom(Atom, Before, 1, After, :),
    !,
    sub_atom(Atom, 0, Before, _, Prefix),
    sub_atom(Atom, _, After, 0, Local).
