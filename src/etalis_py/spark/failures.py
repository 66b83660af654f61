"""A failed Spark job, or a Spark that did not start, said in two lines:
what failed and its first cause, not the JVM's or a worker's traceback."""

from __future__ import annotations

import re
from typing import Optional

from py4j.protocol import Py4JError, Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.errors.exceptions.captured import CapturedException

_TASK = re.compile(r"Task \S+ in stage \S+ failed \d+ times?")
_LOST = re.compile(r"^.*?most recent failure: Lost task [^:]*: ")
_RAISED = re.compile(r"^\s*(?:[A-Z]\w*(?:Error|Exception)|Fatal Python error): \S.*$", re.MULTILINE)


def spark_failure(e: BaseException) -> Optional[str]:
    """``e`` in words, with a hint, if it is Spark's (the JVM did not
    start, a job failed, a query was refused); None for any other error."""
    if isinstance(e, Py4JJavaError):
        try:
            text = str(e.java_exception.getMessage())
        except Py4JError:       # the JVM is gone
            text = str(e.errmsg)
    elif isinstance(e, CapturedException):
        text = str(e)
    elif isinstance(e, PySparkException):
        return (f"Spark did not start: {_first_line(str(e))}\n"
                "  hint: check --master and --conf, and that a Java runtime is installed (java -version)")
    elif isinstance(e, Py4JError):
        return f"Spark failed: {_first_line(str(e))}\n  hint: Spark's JVM stopped; run the replay again"
    else:
        return None
    task = _TASK.search(text)
    where = f" ({task.group()})" if task else ""
    return (f"the Spark job failed{where}: {_cause(text)}\n"
            "  hint: that is the last attempt's error; docs/spark.md (When a replay fails) says what to check")


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "no message")


def _cause(text: str) -> str:
    """The exception that a Python worker raised (the last line of its
    traceback), or that stopped a worker from starting, else the first line
    of the JVM's message."""
    body = text.split("\nDriver stacktrace", 1)[0]
    lines = body.splitlines()
    starts = [i for i, line in enumerate(lines) if line.rstrip().endswith("Traceback (most recent call last):")]
    if starts:
        raised = [line.strip() for line in lines[starts[-1] + 1:] if line.strip() and not line[0].isspace()]
        if raised:
            return f"{raised[-1]} (in a Python worker)"
    worker = body.find("Error from python worker:")
    if worker >= 0:
        raised = _RAISED.findall(body[worker:].split("\nPYTHONPATH was:", 1)[0])
        if raised:
            return f"a Python worker did not start: {raised[-1].strip()}"
    return _LOST.sub("", _first_line(body))
