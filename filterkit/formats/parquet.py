"""Parquet (``.parquet``, ``.pq``) through pyarrow (``pip install 'filterkit-arff[parquet]'``), read a record
batch at a time, so memory holds one chunk; filterkit reads Parquet but does not write it.

Each column becomes an attribute, by its Parquet type:

* strings (``string``, ``large_string``) and booleans (the labels ``true`` and ``false``) go through the
  typing step (:mod:`filterkit.formats.records`), as a JSON Lines field of strings or booleans does: a
  column of documents is text, one of labels nominal (a string column of digits is nominal, not numeric);
* dictionary columns (a pandas ``category``) are nominal, their labels in the order the rows first use
  them, whatever each row group's dictionary holds (``--text`` reads one as text,
  ``--numeric`` its labels as numbers);
* integers, floats and decimals are numeric (NaN is missing), and go through the typing step's class rule:
  in a file with a text column the class column of whole numbers (a Hugging Face export's ``label``) is
  nominal;
* dates and timestamps are date attributes (milliseconds since 1970 UTC, as ARFF dates are held; a
  timestamp without a time zone is read as UTC, a finer one truncated to the millisecond), written
  ``yyyy-MM-dd`` (a date) or ``yyyy-MM-dd'T'HH:mm:ss.SSS`` (a timestamp);
* nulls are missing; a list, struct or map column is an error naming it (a column of several labels is
  not read yet), as is a column of bytes, times of day or durations.

A file that is not Parquet, or damaged, is an error naming it (and the row group whose data is damaged).  The
columns are typed and read by the base of the columnar formats (:mod:`filterkit.formats.arrow_format`): this
module opens the file and reads its record batches.
"""

from __future__ import annotations

from typing import IO, Iterator, Sequence, cast

import pyarrow as pa
import pyarrow.parquet as pq

from filterkit.errors import ArffError
from filterkit.formats.arrow_format import ArrowFormat, is_string
from filterkit.limits import Limits
from filterkit.text import shown

#: Bytes read from the file at a time: a column chunk is read as it is decoded, not whole into memory first.
READ_BYTES = 1 << 20


class ParquetFormat(ArrowFormat):
    """Reads Parquet files (see the module's description): a row group's record batches at a time."""

    nothing_found = "a Parquet file without a column"

    def arrow_file(self, stream: IO[bytes], name: str) -> pq.ParquetFile:
        """``stream`` opened as Parquet (its footer read); an error naming the file when it is not Parquet."""
        return _parquet_file(stream, name)

    def arrow_schema(self, opened: object) -> pa.Schema:
        """The file's Arrow schema."""
        return cast(pq.ParquetFile, opened).schema_arrow

    def arrow_rows(self, opened: object) -> int:
        """The rows the file's footer counts."""
        return cast(pq.ParquetFile, opened).metadata.num_rows

    def arrow_batches(self, opened: object, name: str, rows: int, columns: Sequence[str]) -> Iterator[pa.RecordBatch]:
        """The record batches of ``columns``, row group by row group (:func:`_batches`)."""
        return _batches(cast(pq.ParquetFile, opened), name, rows, columns, self.limits)


def _parquet_file(stream: IO[bytes], name: str) -> pq.ParquetFile:
    """``stream`` opened as Parquet (its footer read); an error naming the file when it is not Parquet."""
    try:
        return pq.ParquetFile(stream, pre_buffer=False, buffer_size=READ_BYTES)
    except (pa.ArrowException, OSError, ValueError) as error:
        raise ArffError(f"not a Parquet file, or a damaged one ({_one_line(error)})", name) from None


def _batches(
    parquet: pq.ParquetFile, name: str, rows: int, columns: Sequence[str], limits: Limits
) -> Iterator[pa.RecordBatch]:
    """The record batches of ``columns``, row group by row group, each of at most ``rows`` rows or about
    ``limits.chunk_bytes`` bytes of values (by the row group's average row), as the line formats' chunks
    end; damaged data, or a string that is not UTF-8, is an error naming the row group or the row."""
    fields = parquet.schema_arrow  # made afresh at each access: once, not once a column
    positions = [fields.get_field_index(column) for column in columns]
    strings = [position for position, column in enumerate(columns) if _holds_strings(fields.field(column).type)]
    first_row = 1
    for group in range(parquet.num_row_groups):
        metadata = parquet.metadata.row_group(group)
        held = sum(metadata.column(position).total_uncompressed_size for position in positions)
        batch_rows = max(1, min(rows, limits.chunk_bytes * metadata.num_rows // max(held, 1)))
        batches = parquet.iter_batches(
            batch_size=batch_rows, row_groups=[group], columns=list(columns), use_threads=False
        )
        while True:
            try:
                batch = next(batches, None)
            except (pa.ArrowException, OSError, ValueError) as error:
                raise ArffError(f"row group {group + 1}: damaged Parquet data ({_one_line(error)})", name) from None
            if batch is None:
                break
            for position in strings:
                _check_utf8(batch.column(position), columns[position], name, first_row)
            first_row += batch.num_rows
            yield batch


def _holds_strings(kind: pa.DataType) -> bool:
    """Whether a column of ``kind`` holds strings (itself or as its dictionary's values)."""
    return is_string(kind.value_type if pa.types.is_dictionary(kind) else kind)


def _check_utf8(array: pa.Array, column_name: str, name: str, first_row: int) -> None:
    """An error naming the row (counted from 1 over the file, ``first_row`` the array's first) of a string
    that is not UTF-8 text, which Parquet's strings must be but a writer may not have checked."""
    try:
        array.validate(full=True)
    except pa.ArrowInvalid as invalid:
        texts = array.dictionary_decode() if pa.types.is_dictionary(array.type) else array
        for row, raw in enumerate(texts.cast(pa.large_binary()).to_pylist()):
            try:
                if raw is not None:
                    raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise ArffError(
                    f"row {first_row + row}: the column {shown(column_name)} holds bytes that are not UTF-8 text "
                    f"({error.reason} at byte {error.start + 1})",
                    name,
                ) from None
        raise ArffError(f"the column {shown(column_name)}: damaged Parquet data ({_one_line(invalid)})", name) from None


def _one_line(error: Exception) -> str:
    """pyarrow's message of ``error`` on one line (it may hold several)."""
    return " ".join(str(error).split())
