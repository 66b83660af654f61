"""RDF background knowledge: graphs closed under an entailment regime, as
facts of an engine."""
