:- module(etalis_knowledge,
          [ expand_prefixes/2,          % +Items0, -Items
            prefix_declaration/4,       % +Prefix, +IRI, +Where, -Namespace
            standard_prefix/2,          % ?Prefix, ?Namespace
            ontology_declaration/3,     % +Directive, +Where, -Ontology
            knowledge_init/1,           % +Engine
            knowledge_update/4,         % +Engine, +Action, +Text, -Count
            knowledge_size/2            % +Engine, -Size
          ]).
:- use_module(library(error)).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(option)).
:- use_module(library(terms), [mapsubterms/3]).
:- use_module('../reader/syntax', [etalis_error/3]).
:- use_module(graph_events, [graph_events_init/1, graph_predicate/1, graph_schema_update/1]).

/** <module> Background knowledge: triples, classes, prefixes

An engine's background knowledge is the closure of the RDF graphs loaded
into it (Python computes it with rdflib and owlrl, see
`etalis_py.rdf.knowledge`), stored as facts in the engine's own module, so
that `where` conditions and static rules, which run there, see them and
no other engine does:

  - '$kb_triple'(S, P, O): a triple whose predicate is not rdf:type;
  - '$kb_node'(X, K): the types of X are the classes of signature K;
  - '$kb_class'(K, C): C is one of the classes of signature K.

Most nodes share a handful of type signatures, so a node costs one fact
whatever the depth of its class hierarchy.  IRIs are atoms of the full
IRI, blank nodes atoms `'_:Id'`; literals are numbers, strings, the
atoms `true` and `false`, or `literal(type(Datatype, Lexical))`.

The engine module gets two predicates over these facts:

  - rdf(?S, ?P, ?O): the triple S P O is in the closure; an atom O
    also matches a string literal of its text (`'KSAN'` the literal
    `"KSAN"`): the text of an event's argument from a CSV column or a
    JSON string is an atom, and a rule that looks it up in the
    knowledge means the literal;
  - isa(?X, ?Class): X is an instance of Class in the closure
    (the triple X rdf:type Class).

Each answers every triple of the closure exactly once, with SWI-Prolog's
just-in-time indexes on whichever arguments are bound.

Rule files name IRIs with prefixes: `wt:'Diablo'` is read as the term
`wt:'Diablo'` and expanded by expand_prefixes/2, after
`:- prefix(wt, 'http://...#').`, into the atom of the full IRI.  The
prefixes `rdf`, `rdfs`, `owl` and `xsd` are predeclared.
*/

%!  standard_prefix(?Prefix, ?Namespace) is nondet.
%
%   The prefixes every rule file may use without declaring them.

standard_prefix(rdf,  'http://www.w3.org/1999/02/22-rdf-syntax-ns#').
standard_prefix(rdfs, 'http://www.w3.org/2000/01/rdf-schema#').
standard_prefix(owl,  'http://www.w3.org/2002/07/owl#').
standard_prefix(xsd,  'http://www.w3.org/2001/XMLSchema#').

rdf_type('http://www.w3.org/1999/02/22-rdf-syntax-ns#type').

                 /*******************************
                 *            PREFIXES          *
                 *******************************/

%!  expand_prefixes(+Items0, -Items) is det.
%
%   Replace every prefixed name `Prefix:Local` (Prefix and Local atoms)
%   in the rules and static clauses of Items0 by the
%   atom of its full IRI.  A prefix applies from its `:- prefix(P, IRI).`
%   directive on; the standard prefixes apply everywhere.  A term
%   `Module:Local` whose Module is a loaded module and not a prefix is
%   left alone (a module-qualified goal), and so is `Host:Port` with a
%   number after the colon.
%
%   @error etalis_error(Message, Hint) at the rule or clause that uses
%   an unknown prefix, or writes a variable after a prefix, and at a
%   static clause for rdf/3 or isa/2, which answer from the background
%   knowledge only.

expand_prefixes(Items0, Items) :-
    must_be(list, Items0),
    findall(P-Where, member(directive(prefix(P, _), Where), Items0), Declared),
    findall(P-NS, standard_prefix(P, NS), Standard),
    foldl(expand_item(Declared), Items0, Items, Standard, _).

expand_item(_, directive(prefix(P, IRI), Where), directive(prefix(P, NS), Where), Ps, [P-NS|Ps]) :- !,
    prefix_declaration(P, IRI, Where, NS).
expand_item(Declared, rule(L, H0, P0, Where, VN), rule(L, H, P, Where, VN), Ps, Ps) :- !,
    expand_names(H0, ctx(Ps, Declared, Where), H),
    expand_names(P0, ctx(Ps, Declared, Where), P).
expand_item(Declared, static(C0, Where), static(C, Where), Ps, Ps) :- !,
    not_reserved(C0, Where),
    expand_names(C0, ctx(Ps, Declared, Where), C).
expand_item(_, Item, Item, Ps, Ps).

expand_names(T0, Ctx, T) :-
    mapsubterms(prefixed_term(Ctx), T0, T).

prefixed_term(Ctx, Prefix:Local, IRI) :-
    atom(Prefix),
    prefixed_name(Prefix, Local, Ctx, IRI).

%   prefixed_name(+Prefix, ?Local, +Ctx, -IRI) is semidet.
%
%   IRI is the full IRI of Prefix:Local; fails for a term that is not a
%   prefixed name (a module-qualified goal).

prefixed_name(Prefix, Local, ctx(Ps, Declared, Where), IRI) :-
    (   memberchk(Prefix-NS, Ps)
    ->  (   atom(Local)
        ->  atom_concat(NS, Local, IRI)
        ;   var(Local)
        ->  format(string(M), "the local name after ~w: is a variable, not a name", [Prefix]),
            etalis_error(M, "quote a local name that starts with a capital letter: wt:'Diablo', not wt:Diablo", Where)
        )
    ;   \+ current_module(Prefix),
        ( atom(Local) ; var(Local) )
    ->  unknown_prefix(Prefix, Local, Declared, Where)
    ).

%   rdf/3 and isa/2 answer from the background knowledge, triple/4,
%   isa/3, graph_name/2 and graph_stream/2 from graph events; a static
%   rule cannot add to them.

not_reserved(Clause, Where) :-
    (   ( Clause = (Head :- _) -> true ; Head = Clause ),
        callable(Head),
        functor(Head, Name, Arity),
        (   memberchk(Name/Arity, [rdf/3, isa/2])
        ->  What = "the background knowledge"
        ;   graph_predicate(Name/Arity)
        ->  What = "graph events"
        )
    ->  format(string(M), "~w/~w answers from ~w and cannot be redefined", [Name, Arity, What]),
        etalis_error(M, "rename your predicate; to add triples, load them with :- ontology(File).", Where)
    ;   true
    ).

unknown_prefix(Prefix, Local, Declared, Where) :-
    (   var(Local)
    ->  format(string(M), "unknown prefix ~q", [Prefix])
    ;   format(string(M), "unknown prefix ~q in ~q", [Prefix, Prefix:Local])
    ),
    (   memberchk(Prefix-pos(_, Line, _), Declared)
    ->  format(string(Hint), "~q is declared on line ~d: declare a prefix before its first use", [Prefix, Line])
    ;   format(string(Hint), "declare it before its first use, e.g. :- prefix(~q, 'http://example.org/vocabulary#').", [Prefix])
    ),
    etalis_error(M, Hint, Where).

%!  prefix_declaration(+Prefix, +IRI, +Where, -Namespace) is det.
%
%   Check the directive `:- prefix(Prefix, IRI).`: Prefix must be an
%   atom and IRI an atom or string; Namespace is IRI as an atom.
%
%   @error etalis_error(Message, Hint) at Where otherwise.

prefix_declaration(Prefix, IRI, Where, NS) :-
    (   atom(Prefix)
    ->  true
    ;   etalis_error("a prefix must be an atom",
                     "write e.g. :- prefix(wt, 'http://example.org/weather#').", Where)
    ),
    (   ( atom(IRI) ; string(IRI) )
    ->  atom_string(NS, IRI)
    ;   format(string(M), "the namespace of prefix ~q must be an IRI in quotes", [Prefix]),
        etalis_error(M, "write e.g. :- prefix(wt, 'http://example.org/weather#').", Where)
    ).

                 /*******************************
                 *          ONTOLOGIES          *
                 *******************************/

%!  ontology_declaration(+Directive, +Where, -Ontology) is det.
%
%   Check the directive `:- ontology(File).` or
%   `:- ontology(File, [entailment(E)]).` (E is rdfs, the default,
%   owlrl or none).  Ontology is ontology(Path, E, Where) with Path the
%   absolute path of File, which is relative to the directory of the
%   rule file (or to the working directory for rules given as text).
%
%   @error etalis_error(Message, Hint) at Where for a bad directive or
%   a file that does not exist.

ontology_declaration(ontology(File), Where, Ontology) :- !,
    ontology_declaration(ontology(File, []), Where, Ontology).
ontology_declaration(ontology(File, Options), Where, ontology(Path, Entailment, Where)) :-
    (   ( atom(File) ; string(File) )
    ->  true
    ;   etalis_error("an ontology is named by its file, in quotes",
                     "write e.g. :- ontology('weather.ttl').", Where)
    ),
    (   is_list(Options),
        forall(member(O, Options), ( nonvar(O), O = entailment(_) )),
        option(entailment(Entailment), Options, rdfs),
        memberchk(Entailment, [rdfs, owlrl, none])
    ->  true
    ;   format(string(M), "bad ontology options ~q", [Options]),
        etalis_error(M, "the only option is entailment(E), E one of rdfs, owlrl or none", Where)
    ),
    Where = pos(Source, _, _),
    (   atom(Source), exists_file(Source)
    ->  file_directory_name(Source, Dir0),
        absolute_file_name(Dir0, Dir)
    ;   working_directory(Dir, Dir)
    ),
    (   catch(absolute_file_name(File, Path, [relative_to(Dir)]), _, fail),
        \+ sub_atom(File, _, _, _, '://')
    ->  true
    ;   format(string(M), "ontology ~w is not a file name (the engine reads no URL)", [File]),
        etalis_error(M, "save the ontology to a file and name it, e.g. :- ontology('weather.ttl').", Where)
    ),
    (   exists_file(Path)
    ->  true
    ;   format(string(M), "ontology file ~w does not exist", [Path]),
        etalis_error(M, "the path of an ontology is relative to the rule file's directory", Where)
    ).

                 /*******************************
                 *      KNOWLEDGE OF ENGINES    *
                 *******************************/

%!  knowledge_init(+Engine) is det.
%
%   Give the engine module Engine empty background knowledge and the
%   predicates rdf/3 and isa/2 over it, and those over graph events
%   (graph_events_init/1).  Static rules of the engine cannot redefine
%   them.

knowledge_init(M) :-
    must_be(atom, M),
    dynamic([ M:'$kb_triple'/3, M:'$kb_node'/2, M:'$kb_class'/2 ]),
    rdf_type(Type),
    assertz(M:( rdf(S, P, O) :-
                  (   P == Type
                  ->  isa(S, O)
                  ;   atom(O),
                      atom_string(O, Text)      % as data give it: see the module's documentation
                  ->  (   '$kb_triple'(S, P, O)
                      ;   '$kb_triple'(S, P, Text)
                      ;   var(P),
                          P = Type,
                          isa(S, O)
                      )
                  ;   var(P)
                  ->  (   '$kb_triple'(S, P, O)
                      ;   P = Type,
                          isa(S, O)
                      )
                  ;   '$kb_triple'(S, P, O)
                  ) )),
    assertz(M:( isa(X, C) :-
                  (   nonvar(X)
                  ->  '$kb_node'(X, K),
                      (   nonvar(C)
                      ->  '$kb_class'(K, C),
                          !
                      ;   '$kb_class'(K, C)
                      )
                  ;   '$kb_class'(K, C),
                      '$kb_node'(X, K)
                  ) )),
    compile_predicates([M:rdf/3, M:isa/2]),
    graph_events_init(M).

%!  knowledge_update(+Engine, +Action, +Text, -Count) is det.
%
%   Action `reset` removes all of Engine's background knowledge (Text is
%   ignored, Count is 0).  Action `add` adds the facts of Text, one term
%   a line, and Count is how many:
%
%     - t(S, P, O): the triple S P O (P is not rdf:type);
%     - n(X, K): X has the type signature K;
%     - c(K, C): class C belongs to type signature K.
%
%   Strings in Text are written in double quotes.

knowledge_update(M, reset, _, 0) :- !,
    must_be(atom, M),
    retractall(M:'$kb_triple'(_, _, _)),
    retractall(M:'$kb_node'(_, _)),
    retractall(M:'$kb_class'(_, _)),
    graph_schema_update(M).
knowledge_update(M, add, Text, Count) :- !,
    must_be(atom, M),
    must_be(string, Text),
    setup_call_cleanup(
        open_string(Text, In),
        add_facts(In, M, 0, Count),
        close(In)),
    graph_schema_update(M).
knowledge_update(_, Action, _, _) :-
    domain_error(knowledge_action, Action).

add_facts(In, M, N0, N) :-
    read_term(In, Fact, [double_quotes(string), syntax_errors(error)]),
    (   Fact == end_of_file
    ->  N = N0
    ;   add_fact(Fact, M),
        N1 is N0 + 1,
        add_facts(In, M, N1, N)
    ).

add_fact(t(S, P, O), M) :- !, assertz(M:'$kb_triple'(S, P, O)).
add_fact(n(X, K), M) :- !, assertz(M:'$kb_node'(X, K)).
add_fact(c(K, C), M) :- !, assertz(M:'$kb_class'(K, C)).
add_fact(Fact, _) :-
    domain_error(knowledge_fact, Fact).

%!  knowledge_size(+Engine, -Size) is det.
%
%   Size is a dict with the number of `triples` (other than rdf:type),
%   typed `nodes` and type `signatures` that Engine holds.

knowledge_size(M, _{triples: T, nodes: N, signatures: S}) :-
    must_be(atom, M),
    count(M:'$kb_triple'(_, _, _), T),
    count(M:'$kb_node'(_, _), N),
    aggregate_all(count, distinct(K, M:'$kb_class'(K, _)), S).

count(Head, N) :-
    (   predicate_property(Head, number_of_clauses(N0))
    ->  N = N0
    ;   N = 0
    ).
