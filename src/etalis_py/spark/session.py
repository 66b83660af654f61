"""The SparkSession of a replay, and Spark's JVM started quietly."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Optional, cast

from .names import BATCH_ROWS, DEFAULT_MASTER

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def session(master: Optional[str] = None, conf: Optional[dict[str, str]] = None) -> "SparkSession":
    """A SparkSession for replay: the active one if there is one, else a new
    one on ``master`` (default ``local[*,4]``: local mode on all cores, with
    up to 4 attempts per task).  Unless PYSPARK_PYTHON is set, the Python
    workers run this interpreter (it sets PYSPARK_PYTHON for that); on a
    cluster whose nodes have it elsewhere, see docs/spark.md."""
    quiet_pyspark_on_pandas_3()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    chosen = master or DEFAULT_MASTER
    builder = SparkSession.builder.master(chosen).appName("etalis replay")
    settings = {
        "spark.ui.showConsoleProgress": "false",
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "8",
        "spark.sql.adaptive.enabled": "true",
    }
    if chosen.startswith("local"):
        settings.update({
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            # a replay is a few short jobs: the JVM's first tier of JIT
            # compilation costs far less CPU than the second, and on one
            # machine compressing shuffle files only costs CPU
            "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseParallelGC",
            "spark.shuffle.compress": "false",
            "spark.shuffle.spill.compress": "false",
            "spark.driver.memory": "2g",        # the executors' too, in local mode
        })
    # Spark's own log: errors only (its WARN lines are noise on a normal run)
    log = f"-Dlog4j2.configurationFile={(Path(__file__).parent / 'log4j2.properties').as_uri()}"
    settings["spark.driver.extraJavaOptions"] = f"{settings.get('spark.driver.extraJavaOptions', '')} {log}".strip()
    settings["spark.sql.execution.arrow.maxRecordsPerBatch"] = str(BATCH_ROWS)
    if not os.environ.get("PYSPARK_PYTHON") and "spark.pyspark.python" not in (conf or {}):
        # PySpark takes the workers' interpreter from the environment of
        # the process that makes the SparkContext
        os.environ["PYSPARK_PYTHON"] = sys.executable
    settings.update(conf or {})
    for k, v in settings.items():
        builder = builder.config(k, v)
    _start_jvm(chosen, settings)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def quiet_pyspark_on_pandas_3() -> None:
    """Silence PySpark's FutureWarning that it does not fully support
    pandas 3, here and in the Python workers: replay uses pandas only
    through Arrow batches of plain columns, which the tests hold exact."""
    message = "PySpark does not yet fully support pandas"
    warnings.filterwarnings("ignore", message=message, category=FutureWarning)
    quiet = f"ignore:{message}:FutureWarning"
    current = os.environ.get("PYTHONWARNINGS", "")
    if quiet not in current:
        os.environ["PYTHONWARNINGS"] = f"{current},{quiet}" if current else quiet


def _start_jvm(master: str, settings: dict[str, str]) -> None:
    """Start Spark's JVM (unless it runs) with its stderr through a filter
    that drops the one line no setting silences (Spark 4 loads the JDK's
    incubating vector module, and the JVM says so on every start)."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None or SparkContext._active_spark_context is not None:
        return
    conf = SparkConf().setMaster(master).setAppName("etalis replay").setAll(list(settings.items()))
    gateway = cast(Any, launch_gateway)(conf, popen_kwargs={"stderr": subprocess.PIPE})
    proc = getattr(gateway, "proc", None)
    if proc is not None and proc.stderr is not None:
        threading.Thread(target=_forward_stderr, args=(proc.stderr,), daemon=True).start()
    SparkContext(conf=conf, gateway=gateway)


def _forward_stderr(stream: IO[bytes]) -> None:
    for line in iter(stream.readline, b""):
        if not line.startswith(b"WARNING: Using incubator modules"):
            os.write(2, line)
