"""Batch replay over Spark (docs/spark.md).

``replay(data, rules, ...)`` maps the rows of a DataFrame (or a CSV,
Parquet or JSON path) to events with the same options as ``etalis run``,
and runs the rules over them on Spark, in stages (see
:mod:`etalis_py.spark.planning`):

1. *Mapping.*  A Python pass (``mapInArrow``, in the same tasks as the
   scan, before stage 1's shuffle) turns each row into the engine's input
   line exactly as ``etalis run`` does, or into a rejection with the
   reason.  Each row keeps its number in the input (``row``), so that ties
   in time are broken as ``etalis run`` breaks them: by input order.
2. *Stages.*  Each stage repartitions the events it consumes by its key
   (or into one partition), sorts each partition by key, time, row and
   derivation path, and feeds each key's events in order to an engine
   compiled once per Python worker process and reset for each key.  Events
   derived in a stage that later stages consume leave it as exact Prolog
   text (through a hidden transfer rule), with the row and derivation
   path of the input event that caused them, so later stages see them in
   the order one engine over all the data would have derived them.
3. *Output.*  Detections as JSON lines exactly as ``etalis run`` prints
   them (in its order), or as a typed table; rejected rows with their
   original values and the reason.  ``rows = events + rejected``.

Every task is deterministic given its input, so a task that Spark retries
gives identical output, and Spark's output commit protocol keeps a failed
attempt's output out.  ``ReplayResult.write`` writes into a staging
directory that is renamed into place only when everything succeeded.

The package: :mod:`~etalis_py.spark.session` (the SparkSession),
:mod:`~etalis_py.spark.reading` (the input table),
:mod:`~etalis_py.spark.mapping` (rows to events),
:mod:`~etalis_py.spark.planning` (the stages),
:mod:`~etalis_py.spark.partition` (a stage on one partition),
:mod:`~etalis_py.spark.writing` (the output) and
:mod:`~etalis_py.spark.driver` (:func:`replay`).
"""

from .driver import ReplayResult, StageReport, replay
from .planning import replay_plan
from .reading import read_input
from .session import session
from .stream import LiveDetection, detect_stream, read_stream, stream_session

__all__ = ["LiveDetection", "ReplayResult", "StageReport", "detect_stream", "read_input", "read_stream", "replay",
           "replay_plan", "session", "stream_session"]
