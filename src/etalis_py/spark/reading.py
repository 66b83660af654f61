"""Reading the input of a replay or a stream on Spark, by the Spark data source of its input format."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StringType, StructField, StructType

from ..inputs.delimited import csv_rows
from ..inputs.lines import Lines, line_chunks
from ..inputs.mapping import Mapping
from ..inputs.registry import InputFormat, by_name, formats, of_path
from .names import CORRUPT


def read_input(spark: "SparkSession", path: str, mapping: Mapping, input_format: Optional[str] = None) -> "DataFrame":
    """The table at ``path`` (a file or a directory of files), read by the
    Spark data source that its input format names (see
    :mod:`etalis_py.inputs.registry`): CSV (every column read as text, as
    ``etalis run`` reads it; rows with the wrong number of fields keep
    their line in ``_corrupt_record``), Parquet, JSON lines, or event
    lines as text (a ``value`` column)."""
    fmt = by_name(input_format) if input_format else format_of(path)
    if fmt.spark == "csv":
        names = list(mapping.columns) if mapping.columns else _csv_header(spark, path)
        if len(set(names)) != len(names):
            raise ValueError(f"the header of {path} names a column twice: {', '.join(names)}")
        schema = StructType([StructField(n, StringType()) for n in names] + [StructField(CORRUPT, StringType())])
        return (spark.read.schema(schema)
                .option("header", mapping.columns is None)
                .option("escape", '"')
                .option("mode", "PERMISSIVE")
                .option("columnNameOfCorruptRecord", CORRUPT)
                .csv(path))
    if fmt.spark == "parquet":
        return spark.read.parquet(path)
    if fmt.spark == "json":
        # NaN and Infinity are no JSON: such a line is rejected, as by etalis run
        return spark.read.option("allowNonNumericNumbers", False).json(path)
    if fmt.spark == "text":
        return spark.read.text(path)
    spark_formats = [f.name for f in formats() if f.spark is not None]
    raise ValueError(f"Spark does not read {fmt.name}: use one of {', '.join(spark_formats)}")


def format_of(path: str) -> InputFormat:
    """The input format of the file at ``path``, or of the files in the
    directory ``path`` (all of one suffix), by their suffix."""
    p = Path(path.split("://", 1)[-1])
    if p.is_dir():
        suffixes = {f.suffix.lower() for f in p.iterdir() if f.is_file() and not f.name.startswith((".", "_"))}
        if len(suffixes) == 1:
            return of_path(Path("x" + suffixes.pop()))
        raise ValueError(f"cannot tell the format of the files in {path}: give --input-format")
    try:
        return of_path(p)
    except ValueError:
        raise ValueError(f"cannot tell the format of {path} from its name: give --input-format csv, parquet or jsonl") \
            from None


def _csv_header(spark: "SparkSession", path: str) -> list[str]:
    local = Path(path[len("file://"):] if path.startswith("file://") else path)
    if "://" not in path or path.startswith("file://"):
        first = local
        if local.is_dir():
            files = sorted(f for f in local.iterdir() if f.is_file() and not f.name.startswith((".", "_")))
            if not files:
                raise ValueError(f"no files in {path}")
            first = files[0]
        with first.open("rb") as f:
            lines = Lines(line_chunks(f), keepends=True)
            reader = csv_rows(lines)
            row = next(reader, None)
        bad = [lines.bad[n] for n in range(1, reader.line_num + 1) if n in lines.bad]
        if bad:
            raise ValueError(f"the header of {first}: {bad[0]}")
        if row is None:
            raise ValueError(f"{first} is empty: it has no header (give --columns)")
        return [h.strip() for h in row]
    return [h.strip() for h in spark.read.option("header", True).option("escape", '"').csv(path).columns]
