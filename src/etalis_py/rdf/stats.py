"""What an engine's background knowledge came to after a load: a value
that the public API names without loading rdflib."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KnowledgeStats:
    """An engine's background knowledge after a load.

    ``input_triples`` counts the distinct triples loaded so far, ``triples``
    those of their closure (the answers of ``rdf(S, P, O)``), ``facts`` the
    Prolog facts holding them, and ``seconds`` the time the load took.
    """

    entailment: str
    sources: tuple[str, ...]
    input_triples: int
    triples: int
    facts: int
    seconds: float
