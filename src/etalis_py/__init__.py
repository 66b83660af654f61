"""etalis-py: a logic-programming complex event reasoner in the style of ETALIS.

>>> from etalis_py import Engine
>>> engine = Engine.from_string("c(X) <- a(X) seq b(X).")
>>> engine.emit("a", 1, at=1)
[]
>>> engine.emit("b", 1, at=2)
[Detection(event='c', args=(1,), start=1, end=2)]
"""

from importlib.metadata import PackageNotFoundError, version as _version

from .bridge.engine import BatchResult, Engine, EngineStats, FeedResult, PendingPart, compile_listing
from .errors import (CallbackError, EtalisError, EventError, InferenceLimitError, MemoryLimitError, OntologyError,
                     Rejection, RuleError, RuleFileNotFound, SnapshotError)
from .events import Detection, Event, InvalidEvent, format_time, to_time
from .outputs.detections import Detections
from .rdf.stats import KnowledgeStats

try:
    __version__ = _version("etalis-py")
except PackageNotFoundError:  # run from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = [
    "BatchResult",
    "CallbackError",
    "Detection",
    "Detections",
    "Engine",
    "EngineStats",
    "EtalisError",
    "Event",
    "EventError",
    "FeedResult",
    "InferenceLimitError",
    "MemoryLimitError",
    "InvalidEvent",
    "KnowledgeStats",
    "OntologyError",
    "PendingPart",
    "Rejection",
    "RuleError",
    "RuleFileNotFound",
    "SnapshotError",
    "__version__",
    "compile_listing",
    "format_time",
    "to_time",
]
