"""The SparkSession of a replay, and Spark's JVM started quietly."""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import subprocess
import sys
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Optional, cast

import pyspark
from pyspark import SparkConf, SparkContext
from pyspark.java_gateway import launch_gateway
from pyspark.sql import SparkSession

from ..bridge.columns import cache_dir
from .names import BATCH_ROWS, DEFAULT_MASTER


def session(master: Optional[str] = None, conf: Optional[dict[str, str]] = None) -> "SparkSession":
    """A SparkSession for replay: the active one if there is one, else a new
    one on ``master`` (default ``local[*,4]``: local mode on all cores, with
    up to 4 attempts per task).  Unless PYSPARK_PYTHON is set, the Python
    workers run this interpreter (it sets PYSPARK_PYTHON for that); on a
    cluster whose nodes have it elsewhere, see docs/spark.md."""
    quiet_pyspark_on_pandas_3()
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
            # compilation costs far less CPU than the second, one thread
            # collects garbage with less CPU than several, and on one
            # machine compressing shuffle files only costs CPU
            "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
            "spark.shuffle.compress": "false",
            "spark.shuffle.spill.compress": "false",
            "spark.driver.memory": "2g",        # the executors' too, in local mode
        })
    archive = class_archive() if chosen.startswith("local") else None
    # Spark's own log: errors only (its WARN lines are noise on a normal run)
    log = f"-Dlog4j2.configurationFile={(Path(__file__).parent / 'log4j2.properties').as_uri()}"
    options = [settings.get("spark.driver.extraJavaOptions", ""), log, archive.option() if archive else ""]
    settings["spark.driver.extraJavaOptions"] = " ".join(o for o in options if o)
    settings["spark.sql.execution.arrow.maxRecordsPerBatch"] = str(BATCH_ROWS)
    if not os.environ.get("PYSPARK_PYTHON") and "spark.pyspark.python" not in (conf or {}):
        # PySpark takes the workers' interpreter from the environment of
        # the process that makes the SparkContext
        os.environ["PYSPARK_PYTHON"] = sys.executable
    settings.update(conf or {})
    for k, v in settings.items():
        builder = builder.config(k, v)
    if archive is not None and settings["spark.driver.extraJavaOptions"].find(archive.option()) < 0:
        archive = None          # the caller's --conf replaced the options
    _start_jvm(chosen, settings, archive)
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


@dataclass(frozen=True)
class ClassArchive:
    """Class data sharing for Spark's JVM in local mode: the JVM maps the
    classes it needs from an archive instead of reading and verifying them
    out of Spark's jars, which halves the CPU of its start (about 4 of 8
    CPU seconds, see docs/benchmarks.md).  The first JVM writes the
    archive as it exits (``making``, a name of its own, kept as ``path``
    only if the JVM exited normally: a JVM crashes on a truncated
    archive); the next ones use it."""

    path: Path
    making: Optional[Path] = None

    def option(self) -> str:
        """The JVM's options (its notes on the archive silenced: a JVM that
        cannot use it, say after an update of Java, just starts without)."""
        if self.making is not None:
            return f"-XX:ArchiveClassesAtExit={self.making} -Xlog:cds*=off"
        return f"-XX:SharedArchiveFile={self.path} -Xlog:cds*=off"

    def finish(self, proc: "subprocess.Popen[bytes]") -> None:
        """At the driver's exit, stop the JVM that writes the archive and
        keep the archive if it exited normally."""
        if self.making is None:
            return
        try:
            active = SparkContext._active_spark_context
            if active is not None:
                active.stop()
            if proc.stdin is not None:
                proc.stdin.close()          # the JVM exits when its stdin closes
            code = proc.wait(timeout=120)
        except (subprocess.TimeoutExpired, OSError, ValueError):
            code = None
        try:
            if code == 0 and self.making.is_file():
                os.replace(self.making, self.path)
            else:
                self.making.unlink(missing_ok=True)
        except OSError:
            pass


def class_archive() -> Optional[ClassArchive]:
    """The class archive of this Java and PySpark (see :class:`ClassArchive`),
    or None if ``ETALIS_SPARK_CDS=0`` or there is no place for it."""
    if os.environ.get("ETALIS_SPARK_CDS", "") == "0":
        return None
    home = os.environ.get("JAVA_HOME")
    java = shutil.which("java", path=str(Path(home) / "bin")) if home else shutil.which("java")
    if java is None:
        return None
    java = os.path.realpath(java)
    key = f"{java} {os.stat(java).st_mtime_ns} {pyspark.__file__} {pyspark.__version__}"
    directory = cache_dir() / "spark-classes"
    path = directory / f"{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsa"
    if " " in str(path):            # Spark splits the JVM's options at spaces
        return None
    if path.is_file():
        return ClassArchive(path)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for left in directory.glob("*.making"):    # of a driver that was killed: its JVM wrote it unseen
            if not _alive(int(left.suffixes[-2].lstrip("."))):
                left.unlink(missing_ok=True)
    except (OSError, ValueError, IndexError):
        return None
    return ClassArchive(path, path.with_suffix(f".{os.getpid()}.making"))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:     # another user's
        return True
    return True


def _start_jvm(master: str, settings: dict[str, str], archive: Optional[ClassArchive] = None) -> None:
    """Start Spark's JVM (unless it runs) with its stderr through a filter
    that drops the one line no setting silences (Spark 4 loads the JDK's
    incubating vector module, and the JVM says so on every start); if it
    writes a class archive, it is kept at the driver's exit."""
    if SparkContext._gateway is not None or SparkContext._active_spark_context is not None:
        return
    conf = SparkConf().setMaster(master).setAppName("etalis replay").setAll(list(settings.items()))
    gateway = cast(Any, launch_gateway)(conf, popen_kwargs={"stderr": subprocess.PIPE})
    proc = getattr(gateway, "proc", None)
    if proc is not None and proc.stderr is not None:
        threading.Thread(target=_forward_stderr, args=(proc.stderr,), daemon=True).start()
    if proc is not None and archive is not None and archive.making is not None:
        atexit.register(archive.finish, proc)
    SparkContext(conf=conf, gateway=gateway)


_DROPPED = (
    b"WARNING: Using incubator modules",
    # PySpark's driver-side worker of transformWithStateInPandas prints each of
    # its steps (each with a blank line after it) to the JVM's output
    b"Starting Streaming TransformWithStateInPandas Python worker",
    b"Streaming TransformWithStateInPandas Python worker",
)


def _forward_stderr(stream: IO[bytes]) -> None:
    dropped = False
    for line in iter(stream.readline, b""):
        if line.startswith(_DROPPED) or (dropped and not line.strip()):
            dropped = True
            continue
        dropped = False
        os.write(2, line)
