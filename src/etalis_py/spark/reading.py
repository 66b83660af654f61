"""Reading the input table of a replay: CSV, Parquet or JSON lines."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ..inputs.streams import Lines, Mapping, csv_rows, line_chunks
from .names import CORRUPT

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def read_input(spark: "SparkSession", path: str, mapping: Mapping, input_format: Optional[str] = None) -> "DataFrame":
    """The table at ``path`` (a file or a directory of files): CSV (every
    column read as text, as ``etalis run`` reads it; rows with the wrong
    number of fields keep their line in ``_corrupt_record``), Parquet or
    JSON lines."""
    fmt = (input_format or _format_of(path)).lower()
    if fmt == "csv":
        from pyspark.sql.types import StringType, StructField, StructType

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
    if fmt == "parquet":
        return spark.read.parquet(path)
    if fmt in ("json", "jsonl"):
        # NaN and Infinity are no JSON: such a line is rejected, as by etalis run
        return spark.read.option("allowNonNumericNumbers", False).json(path)
    raise ValueError(f"unknown input format {fmt!r}: use csv, parquet or json")


def _format_of(path: str) -> str:
    p = Path(path.split("://", 1)[-1])
    if p.is_dir():
        suffixes = {f.suffix.lower() for f in p.iterdir() if f.is_file() and not f.name.startswith((".", "_"))}
        if len(suffixes) == 1:
            return suffixes.pop().lstrip(".")
        raise ValueError(f"cannot tell the format of the files in {path}: give --input-format")
    suffix = p.suffix.lower().lstrip(".")
    if suffix in ("csv", "parquet", "json", "jsonl"):
        return suffix
    raise ValueError(f"cannot tell the format of {path} from its name: give --input-format csv, parquet or json")


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
