:- module(etalis_graph_events,
          [ graph_events_init/1,        % +Engine
            graph_schema_update/1,      % +Engine
            graph_predicate/1           % ?Name/Arity
          ]).
:- use_module(library(error)).
:- use_module(library(lists)).

/** <module> Graph events: events whose value is an RDF graph

A graph event is the input event `graph(G)` with G the term
`rdf_graph(Name, Triples)`, or `rdf_graph(Name, Triples, Stream)` for a
graph of a named stream: Name is the graph's IRI (an atom) or blank
node (`'_:Id'`), Triples a list of `t(S, P, O)` in the terms of the
background knowledge (see knowledge.pl), Stream the stream's IRI.
`where` conditions ask it with

  - triple(+G, ?S, ?P, ?O): S P O is a triple of G or one that G's
    triples entail with the background schema; an atom O also matches
    a string literal of its text, as for rdf/3;
  - isa(+G, ?X, ?Class): X is an instance of Class by G's triples and
    the background schema;
  - graph_name(+G, ?Name): Name is the name of G;
  - graph_stream(+G, ?Stream): Stream is the stream of G (no answer for
    a graph read without one).

What G's triples entail is computed when it is asked, from G's triples
and the materialized RDFS closure of the background (the background is
never closed again):

  - S Q O for each super-property Q of P (rdfs7);
  - X rdf:type C for X typed C by G (rdf:type), for X the subject of a
    triple whose property (or a super-property of it) has domain C
    (rdfs2), for X the object of one whose property has range C
    (rdfs3), C = rdfs:Resource for every subject and object (rdfs4),
    and C = rdf:Property for every property of these triples (rdf1);
    each type with its super-classes (rdfs9);
  - Q rdfs:subPropertyOf Q for every such property Q (rdfs6).

Each answer comes once.  An event's own schema triples (rdfs:subClassOf
...) are plain triples of the event: they do not change the schema.
*/

%!  graph_predicate(?PI) is nondet.
%
%   PI is a predicate that graph_events_init/1 gives an engine module;
%   static rules cannot redefine them.

graph_predicate(triple/4).
graph_predicate(isa/3).
graph_predicate(graph_name/2).
graph_predicate(graph_stream/2).

%!  graph_events_init(+Engine) is det.
%
%   Give the engine module Engine the predicates triple/4, isa/3,
%   graph_name/2 and graph_stream/2 over graph events.  They read the background schema
%   of Engine ('$kb_triple'/3, see knowledge_init/1), which must exist.

graph_events_init(M) :-
    must_be(atom, M),
    dynamic(M:'$graph_class'/3),
    forall(graph_clause(Clause), assertz(M:Clause)),
    findall(M:PI, ( graph_predicate(PI) ; helper(PI) ), PIs),
    compile_predicates(PIs).

%!  graph_schema_update(+Engine) is det.
%
%   Derive from the background schema of Engine (its materialized
%   closure) the classes that the subject and the object of a triple of
%   each property are instances of (rdfs2 and rdfs3, through the
%   property's super-properties, each class with its super-classes):
%   '$graph_class'(P, C, Which), Which `s` (the subject, by rdfs:domain),
%   `o` (the object, by rdfs:range) or `so` (both).  Called after each change of the
%   background, so that a graph event asks one fact a triple whether a
%   node is an instance of a class.

graph_schema_update(M) :-
    must_be(atom, M),
    retractall(M:'$graph_class'(_, _, _)),
    findall(P-C-W, schema_class(M, P, W, C), Classes0),
    sort(Classes0, Classes),
    class_ends(Classes, Facts),
    forall(member(P-C-W, Facts), assertz(M:'$graph_class'(P, C, W))).

%   class_ends(+Classes, -Facts): the sorted P-C-W of Classes, with one
%   P-C-so in place of P-C-o and P-C-s.

class_ends([], []).
class_ends([P-C-o, P-C-s|Classes], [P-C-so|Facts]) :- !,
    class_ends(Classes, Facts).
class_ends([Class|Classes], [Class|Facts]) :-
    class_ends(Classes, Facts).

schema_class(M, P, W, C) :-
    rdf_iri(subPropertyOf, SubProperty),
    rdf_iri(subClassOf, SubClass),
    (   rdf_iri(domain, Which),
        W = s
    ;   rdf_iri(range, Which),
        W = o
    ),
    M:'$kb_triple'(Q, Which, D),
    (   P = Q
    ;   M:'$kb_triple'(P, SubProperty, Q),
        P \== Q
    ),
    (   C = D
    ;   M:'$kb_triple'(D, SubClass, C),
        C \== D
    ).

helper('$graph_triple'/4).
helper('$graph_triples'/2).
helper('$graph_property'/4).
helper('$graph_property_of'/4).
helper('$graph_member'/4).
helper('$graph_type'/3).
helper('$graph_instance'/3).
helper('$graph_direct_type'/3).
helper('$graph_universal'/3).
helper('$graph_node'/2).
helper('$graph_predicate'/2).
helper('$graph_super_property'/2).
helper('$graph_sub'/2).
helper('$graph_super'/2).

%   The clauses, as terms: they run in the engine module, where
%   library(sandbox) sees them as the module's own.

graph_clause((triple(G, S, P, O) :-
                 (   atom(O),
                     atom_string(O, Text)       % as rdf/3: see etalis_knowledge
                 ->  (   '$graph_triple'(G, S, P, O)
                     ;   '$graph_triple'(G, S, P, Text)
                     )
                 ;   '$graph_triple'(G, S, P, O)
                 ))).
graph_clause(('$graph_triple'(G, S, P, O) :-
                 '$graph_triples'(G, Ts),
                 (   P == Type
                 ->  isa(G, S, O)
                 ;   atom(P)
                 ->  '$graph_property_of'(Ts, P, L0, Tail),
                     (   P == SubProperty
                     ->  findall(Q-Q, '$graph_predicate'(Ts, Q), Tail)
                     ;   Tail = []
                     ),
                     sort(L0, L),
                     member(S-O, L)
                 ;   nonvar(P)
                 ->  findall(S-O, '$graph_property'(Ts, S, P, O), L0),
                     sort(L0, L),
                     member(S-O, L)
                 ;   findall(t(S, P, O),
                             (   '$graph_property'(Ts, S, P, O)
                             ;   '$graph_type'(Ts, S, O),
                                 P = Type
                             ), L0),
                     sort(L0, L),
                     member(t(S, P, O), L)
                 ))) :-
    rdf_iri(type, Type),
    rdf_iri(subPropertyOf, SubProperty).
graph_clause((isa(G, X, C) :-
                 '$graph_triples'(G, Ts),
                 (   atom(C)
                 ->  '$graph_member'(Ts, C, Xs0, Tail),
                     (   \+ '$graph_universal'(Ts, _, C)
                     ->  Tail = []
                     ;   findall(U, '$graph_universal'(Ts, U, C), Tail)
                     ),
                     sort(Xs0, Xs),
                     member(X, Xs)
                 ;   nonvar(C)
                 ->  findall(X, '$graph_instance'(Ts, X, C), Xs0),
                     sort(Xs0, Xs),
                     member(X, Xs)
                 ;   findall(X-C, '$graph_type'(Ts, X, C), L0),
                     sort(L0, L),
                     member(X-C, L)
                 ))).
graph_clause((graph_name(G, Name) :-
                 '$graph_triples'(G, _),
                 arg(1, G, Name))).
graph_clause((graph_stream(G, Stream) :-
                 '$graph_triples'(G, _),
                 G = rdf_graph(_, _, Stream))).
graph_clause(('$graph_triples'(G, Ts) :-
                 (   nonvar(G),
                     ( G = rdf_graph(_, Ts) ; G = rdf_graph(_, Ts, _) ),
                     is_list(Ts)
                 ->  true
                 ;   type_error(rdf_graph, G)
                 ))).
graph_clause(('$graph_property'(Ts, S, P, O) :-
                 member(t(S, P0, O), Ts),
                 P0 \== Type,
                 (   P = P0
                 ;   '$kb_triple'(P0, SubProperty, Q),
                     Q \== P0,
                     Q \== Type,
                     P = Q
                 ))) :-
    rdf_iri(type, Type),
    rdf_iri(subPropertyOf, SubProperty).
%   '$graph_property_of'(+Ts, +P, -L, ?Tail): L is S-O for each triple
%   S P0 O of Ts whose property P0 is P or one of P's sub-properties
%   (each asked of the background once), followed by Tail.
graph_clause(('$graph_property_of'([], _, L, L))).
graph_clause(('$graph_property_of'([t(S, P0, O)|Ts], P, L0, L) :-
                 (   P0 \== Type,
                     (   P0 == P
                     ->  true
                     ;   '$kb_triple'(P0, SubProperty, P)
                     ->  true
                     )
                 ->  L0 = [S-O|L1]
                 ;   L0 = L1
                 ),
                 '$graph_property_of'(Ts, P, L1, L))) :-
    rdf_iri(type, Type),
    rdf_iri(subPropertyOf, SubProperty).
graph_clause(('$graph_property'(Ts, Q, SubProperty, Q) :-
                 '$graph_predicate'(Ts, Q))) :-
    rdf_iri(subPropertyOf, SubProperty).
graph_clause(('$graph_type'(Ts, X, C) :-
                 (   '$graph_direct_type'(Ts, X, C0)
                 ;   '$graph_node'(Ts, X),
                     C0 = Resource
                 ;   '$graph_predicate'(Ts, X),
                     C0 = Property
                 ),
                 '$graph_super'(C0, C))) :-
    rdf_iri(resource, Resource),
    rdf_iri(property, Property).
%   '$graph_member'(+Ts, +C, -Xs, ?Tail): Xs is, for each triple of
%   Ts, its subject if rdf:type (rdfs9) or its property's domain (rdfs2)
%   makes it an instance of the class C, its object if the property's
%   range (rdfs3) does, followed by Tail: a yes or no of the
%   background's schema a triple, without listing a node's other
%   classes.
graph_clause(('$graph_member'([], _, Xs, Xs))).
graph_clause(('$graph_member'([t(S, P, O)|Ts], C, Xs0, Xs) :-
                 (   P == Type
                 ->  (   '$graph_sub'(O, C)
                     ->  Xs0 = [S|Xs1]
                     ;   Xs0 = Xs1
                     )
                 ;   '$graph_class'(P, C, W)
                 ->  (   W == s
                     ->  Xs0 = [S|Xs1]
                     ;   W == o
                     ->  Xs0 = [O|Xs1]
                     ;   Xs0 = [S, O|Xs1]
                     )
                 ;   Xs0 = Xs1
                 ),
                 '$graph_member'(Ts, C, Xs1, Xs))) :-
    rdf_iri(type, Type).
graph_clause(('$graph_instance'(Ts, X, C) :-
                 '$graph_direct_type'(Ts, X, C0),
                 '$graph_sub'(C0, C))).
graph_clause(('$graph_instance'(Ts, X, C) :-
                 '$graph_universal'(Ts, X, C))).
%   '$graph_universal'(+Ts, ?X, ?C): X is an instance of C because C is
%   rdfs:Resource or above (every node of the graph, rdfs4) or
%   rdf:Property or above (every predicate, rdf1).
graph_clause(('$graph_universal'(Ts, X, C) :-
                 '$graph_sub'(Resource, C),
                 '$graph_node'(Ts, X))) :-
    rdf_iri(resource, Resource).
graph_clause(('$graph_universal'(Ts, X, C) :-
                 '$graph_sub'(Property, C),
                 '$graph_predicate'(Ts, X))) :-
    rdf_iri(property, Property).
graph_clause(('$graph_direct_type'(Ts, X, C) :-
                 member(t(X, P, O), Ts),
                 (   P == Type
                 ->  C = O
                 ;   '$graph_super_property'(P, Q),
                     '$kb_triple'(Q, Domain, C)
                 ))) :-
    rdf_iri(type, Type),
    rdf_iri(domain, Domain).
graph_clause(('$graph_direct_type'(Ts, X, C) :-
                 member(t(_, P, X), Ts),
                 P \== Type,
                 '$graph_super_property'(P, Q),
                 '$kb_triple'(Q, Range, C))) :-
    rdf_iri(type, Type),
    rdf_iri(range, Range).
graph_clause(('$graph_node'(Ts, X) :-
                 member(t(S, _, O), Ts),
                 ( X = S ; X = O ))).
graph_clause(('$graph_predicate'(Ts, Q) :-
                 member(t(_, P, _), Ts),
                 '$graph_super_property'(P, Q))).
%   '$graph_super_property'(+P, ?Q): Q is P or one of its
%   super-properties in the background's closure (rdfs5, rdfs7).
graph_clause(('$graph_super_property'(P, Q) :-
                 (   Q = P
                 ;   '$kb_triple'(P, SubProperty, Q),
                     Q \== P
                 ))) :-
    rdf_iri(subPropertyOf, SubProperty).
graph_clause(('$graph_sub'(C0, C) :-
                 (   C0 == C
                 ->  true
                 ;   '$kb_triple'(C0, SubClassOf, C)
                 ->  true
                 ))) :-
    rdf_iri(subClassOf, SubClassOf).
graph_clause(('$graph_super'(C, C))).
graph_clause(('$graph_super'(C, D) :-
                 '$kb_triple'(C, SubClassOf, D),
                 D \== C)) :-
    rdf_iri(subClassOf, SubClassOf).

rdf_iri(type,          'http://www.w3.org/1999/02/22-rdf-syntax-ns#type').
rdf_iri(subPropertyOf, 'http://www.w3.org/2000/01/rdf-schema#subPropertyOf').
rdf_iri(subClassOf,    'http://www.w3.org/2000/01/rdf-schema#subClassOf').
rdf_iri(domain,        'http://www.w3.org/2000/01/rdf-schema#domain').
rdf_iri(range,         'http://www.w3.org/2000/01/rdf-schema#range').
rdf_iri(resource,      'http://www.w3.org/2000/01/rdf-schema#Resource').
rdf_iri(property,      'http://www.w3.org/1999/02/22-rdf-syntax-ns#Property').
