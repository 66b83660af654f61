"""The output of a replay: detections as a typed table, and the output
directory written atomically (local or on a Hadoop file system)."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from .names import T_FLOAT, T_INT, T_TEXT


@dataclass(frozen=True)
class TableSpec:
    """The columns of the detections table."""

    key: Optional[str]                  # Spark type of the key column, None: no key column
    args: Optional[tuple[str, ...]]     # Spark types of arg1..argN, None: one JSON `args` column
    timestamps: bool                    # start and end as timestamps (else seconds)
    key_json: bool = False              # keys of several types: the key column holds JSON text
    provenance: bool = False            # a provenance column of JSON (replay with explain)

    def ddl(self) -> str:
        cols = [f"key {self.key}"] if self.key else []
        cols.append("event string")
        if self.args is None:
            cols.append("args string")
        else:
            cols += [f"arg{i} {t}" for i, t in enumerate(self.args, start=1)]
        kind = "timestamp" if self.timestamps else "double"
        cols += [f"start {kind}", f"end {kind}"]
        if self.provenance:
            cols.append("provenance string")
        return ", ".join(cols)


_SPARK_TYPE = {T_INT: "long", T_FLOAT: "double", T_TEXT: "string"}
_ARROW_TYPE = {"long": pa.int64(), "double": pa.float64(), "string": pa.string()}


def _typed(spec: TableSpec) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    def seconds_array(values: list[Any]) -> pa.Array:
        if spec.timestamps:
            return pa.array([None if v is None else round(float(v) * 1_000_000) for v in values],
                            pa.int64()).cast(pa.timestamp("us", tz="UTC"))
        return pa.array([None if v is None else float(v) for v in values], pa.float64())

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            ds = [json.loads(x) for x in batch.column("line").to_pylist()]
            arrays: list[pa.Array] = []
            names: list[str] = []
            if spec.key:
                keys = [None if k is None else (k if spec.key_json else json.loads(k))
                        for k in batch.column("key").to_pylist()]
                arrays.append(pa.array(keys, _ARROW_TYPE[spec.key]))
                names.append("key")
            arrays.append(pa.array([d["event"] for d in ds], pa.string()))
            names.append("event")
            if spec.args is None:
                arrays.append(pa.array([json.dumps(d["args"]) for d in ds], pa.string()))
                names.append("args")
            else:
                for i, t in enumerate(spec.args):
                    arrays.append(pa.array([d["args"][i] if i < len(d["args"]) else None for d in ds],
                                           _ARROW_TYPE[t]))
                    names.append(f"arg{i + 1}")
            arrays += [seconds_array([d["start"] for d in ds]), seconds_array([d["end"] for d in ds])]
            names += ["start", "end"]
            if spec.provenance:
                arrays.append(pa.array([json.dumps(d.get("provenance", [])) for d in ds], pa.string()))
                names.append("provenance")
            yield pa.RecordBatch.from_arrays(arrays, names=names)

    return run


def _table_spec(masks: list[int], kmask: Optional[int], timestamps: bool, provenance: bool = False) -> TableSpec:
    """Typed argument columns where every value of an argument has one
    type (``masks``: the OR of the type codes by position)."""
    args: Optional[tuple[str, ...]] = None
    if masks and all(m in _SPARK_TYPE for m in masks):
        args = tuple(_SPARK_TYPE[m] for m in masks)
    key = None
    key_json = False
    if kmask is not None:
        key = _SPARK_TYPE.get(kmask or T_TEXT, "string")
        key_json = (kmask or T_TEXT) not in _SPARK_TYPE
    return TableSpec(key, args, timestamps, key_json, provenance)


class _OutputDir:
    """An output directory: a local path, or a URI of a Hadoop file system
    (hdfs://, s3a://, file://), handled through Spark's JVM."""

    def __init__(self, spark: "SparkSession", path: str) -> None:
        self.spark = spark
        self.path = path.rstrip("/") or path
        self.local = "://" not in path

    def _fs(self, path: str) -> tuple[Any, Any]:
        jvm = self.spark.sparkContext._jvm
        assert jvm is not None
        p = jvm.org.apache.hadoop.fs.Path(path)
        return p.getFileSystem(self.spark.sparkContext._jsc.hadoopConfiguration()), p

    def _local_path(self) -> Path:
        return Path(self.path)

    def exists(self) -> bool:
        if self.local:
            return self._local_path().exists()
        fs, p = self._fs(self.path)
        return bool(fs.exists(p))

    def staging(self) -> "_Staging":
        if self.local:
            target = self._local_path().resolve()
            target.parent.mkdir(parents=True, exist_ok=True)
            local = target.parent / f".{target.name}.staging-{uuid.uuid4().hex[:12]}"
            local.mkdir()
            return _Staging(self, str(local))
        where = f"{self.path.rsplit('/', 1)[0]}/.{self.path.rsplit('/', 1)[-1]}.staging-{uuid.uuid4().hex[:12]}"
        return _Staging(self, where)

    def replace_with(self, staging: "_Staging", overwrite: bool) -> None:
        if self.local:
            target = self._local_path().resolve()
            old = None
            if target.exists():
                if not overwrite:
                    raise FileExistsError(f"{target} exists")
                old = target.parent / f".{target.name}.old-{uuid.uuid4().hex[:12]}"
                os.rename(target, old)
            os.rename(staging.where, target)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
            return
        fs, p = self._fs(self.path)
        if fs.exists(p):
            if not overwrite:
                raise FileExistsError(f"{self.path} exists")
            fs.delete(p, True)
        _, sp = self._fs(staging.where)
        if not fs.rename(sp, p):
            raise OSError(f"cannot rename {staging.where} to {self.path}")


class _Staging:
    def __init__(self, target: _OutputDir, where: str) -> None:
        self.target = target
        self.where = where

    def child(self, name: str) -> str:
        return f"{self.where}/{name}"

    def write_lines(self, name: str, lines: Iterable[str]) -> None:
        """Write the file ``name`` (driver side)."""
        if self.target.local:
            with open(Path(self.where) / name, "w", encoding="utf-8") as f:
                f.writelines(lines)
            return
        fs, p = self.target._fs(self.child(name))
        stream = fs.create(p, True)
        try:
            chunk: list[str] = []
            size = 0
            for line in lines:
                chunk.append(line)
                size += len(line)
                if size >= 1 << 20:
                    stream.write(bytearray("".join(chunk).encode("utf-8")))
                    chunk, size = [], 0
            if chunk:
                stream.write(bytearray("".join(chunk).encode("utf-8")))
        finally:
            stream.close()

    def write_single(self, table: "DataFrame", format: str, name: str) -> None:
        """``table`` as the one file ``name.format``: written by one task
        (keeping its order), then its part file renamed."""
        parts = self.child(f".{name}.parts")
        table.coalesce(1).write.format(format).save(parts)
        single = self.child(f"{name}.{format}")
        if self.target.local:
            (part,) = Path(parts).glob("part-*")
            os.rename(part, single)
            shutil.rmtree(parts)
            return
        fs, p = self.target._fs(parts)
        (status,) = fs.globStatus(self.target._fs(f"{parts}/part-*")[1])
        _, dest = self.target._fs(single)
        if not fs.rename(status.getPath(), dest):
            raise OSError(f"cannot rename {status.getPath()} to {single}")
        fs.delete(p, True)

    def remove(self) -> None:
        if self.target.local:
            shutil.rmtree(self.where, ignore_errors=True)
        else:
            fs, p = self.target._fs(self.where)
            fs.delete(p, True)
