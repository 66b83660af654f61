:- module(test_knowledge, []).
:- use_module(library(plunit)).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module('../../prolog/etalis/reader/syntax').
:- use_module('../../prolog/etalis/rdf/knowledge').

items(Text, Items) :-
    read_etl_string(Text, t, Items0),
    expand_prefixes(Items0, Items).

error_of(Text, Message-Line) :-
    catch(( items(Text, _), Message = none, Line = 0 ),
          error(etalis_error(Message, _), pos(_, Line, _)),
          true).

:- begin_tests(prefixes).

test(prefixed_names_become_iris_in_patterns_goals_and_statics,
     [H, G, S] == [c('http://w#x'), isa(X, 'http://w#Wind'), f('http://w#a')]) :-
    items(":- prefix(w, 'http://w#').\nc(w:x) <- a(X) where isa(X, w:'Wind').\nf(w:a).",
          [_, rule(_, H, where(_, G), _, ['X'=X]), static(S, _)]).

test(standard_prefixes_are_predeclared, G == rdf(X, 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type', 'http://www.w3.org/2000/01/rdf-schema#Class')) :-
    items("c(X) <- a(X) where rdf(X, rdf:type, rdfs:'Class').", [rule(_, _, where(_, G), _, ['X'=X])]).

test(unknown_prefix_is_an_error_at_the_clause, E == "unknown prefix q in q:x"-2) :-
    error_of("c <- a.\nc <- b(q:x).", E).

test(a_prefix_applies_from_its_declaration_on, E == "unknown prefix w in w:x"-1) :-
    error_of("c <- b(w:x).\n:- prefix(w, 'http://w#').", E).

test(module_qualified_goals_are_left_alone, G == (lists:member(X, [1]), Y = host:80)) :-
    items("c(X) <- a(X) where lists:member(X, [1]), Y = host:80.", [rule(_, _, where(_, G), _, ['X'=X, 'Y'=Y])]).

test(static_rules_cannot_define_rdf, E == "rdf/3 answers from the background knowledge and cannot be redefined"-1) :-
    error_of("rdf(a, b, c).", E).

:- end_tests(prefixes).

:- begin_tests(ontologies).

test(path_is_relative_to_the_rule_file, [Path, E] == [Expected, rdfs]) :-
    source_file(test_knowledge:items(_, _), Here),
    ontology_declaration(ontology('../../ontologies/weather.ttl'), pos(Here, 1, 1), ontology(Path, E, _)),
    file_directory_name(Here, Dir),
    absolute_file_name('../../ontologies/weather.ttl', Expected, [relative_to(Dir)]).

test(missing_file_is_an_error, error(etalis_error(M, _), pos(t, 3, 1))) :-
    ontology_declaration(ontology('no/such/file.ttl'), pos(t, 3, 1), _),
    M = _.

test(entailment_option, E == owlrl) :-
    source_file(test_knowledge:items(_, _), Here),
    ontology_declaration(ontology('../../ontologies/weather.ttl', [entailment(owlrl)]), pos(Here, 1, 1), ontology(_, E, _)).

:- end_tests(ontologies).

:- begin_tests(knowledge).

kb(M) :-
    gensym(kb_test_, M),
    knowledge_init(M),
    knowledge_update(M, add, "t(a,'http://p',\"s\").\nt(a,'http://q',1).\nc(1,'http://C').\nc(1,'http://D').\nc(2,'http://D').\nn(a,1).\nn(b,2).\n", N),
    N == 7.

test(isa_in_every_mode_answers_each_class_once, [Cs, Xs, Both] == [['http://C', 'http://D'], [a, b], [yes]]) :-
    kb(M),
    findall(C, M:isa(a, C), Cs),
    findall(X, M:isa(X, 'http://D'), Xs0), msort(Xs0, Xs),
    findall(yes, M:isa(b, 'http://D'), Both).

test(rdf_answers_type_triples_through_isa, N == 5) :-
    kb(M),
    aggregate_all(count, M:rdf(_, _, _), N).

test(rdf_with_a_known_predicate, O == "s") :-
    kb(M),
    M:rdf(a, 'http://p', O).

test(isa_is_semidet_with_both_arguments_known) :-
    kb(M),
    M:isa(a, 'http://C').

test(reset_forgets_everything, fail) :-
    kb(M),
    knowledge_update(M, reset, "", 0),
    M:rdf(_, _, _).

test(size, [T, N, S] == [2, 2, 2]) :-
    kb(M),
    knowledge_size(M, _{triples: T, nodes: N, signatures: S}).

:- end_tests(knowledge).
