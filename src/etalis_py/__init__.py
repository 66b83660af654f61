"""etalis-py: a logic-programming complex event reasoner in the style of ETALIS.

>>> from etalis_py import Engine
>>> engine = Engine.from_string("c(X) <- a(X) seq b(X).")
>>> engine.emit("a", 1, at=1)
[]
>>> engine.emit("b", 1, at=2)
[Detection(event='c', args=(1,), start=1, end=2)]
"""

from .engine import BatchResult, Engine, EngineStats, FeedResult, PendingPart, compile_listing
from .errors import EtalisError, EventError, RuleError, RuleFileNotFound
from .events import Detection, Event, Rejection
from .knowledge import KnowledgeStats, OntologyError

__all__ = [
    "BatchResult",
    "Detection",
    "Engine",
    "EngineStats",
    "EtalisError",
    "Event",
    "EventError",
    "FeedResult",
    "KnowledgeStats",
    "OntologyError",
    "PendingPart",
    "Rejection",
    "RuleError",
    "RuleFileNotFound",
    "compile_listing",
]
