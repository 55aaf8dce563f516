"""The partitions of an ARFF input that the Dask engine's tasks read (:mod:`filterkit.distributed`):
the files of a folder or a glob pattern, each one partition, or one file's data section cut at line
ends into byte ranges, with the schema they share."""

from __future__ import annotations

import contextlib
import glob
import os
import re
import stat
from dataclasses import dataclass
from typing import Iterator

from filterkit.arff.partition import cut_at_line_ends, locate_rows, range_reader
from filterkit.arff.reader import ArffReader
from filterkit.errors import FilterkitError
from filterkit.schema import Chunk, Schema

_GLOB_CHARACTERS = re.compile(r"[*?\[]")


def check_runnable(stages, input_path: str) -> None:
    """Refuse, before any cluster starts, what this engine cannot run identically to the local one:
    standard input, a FIFO or device, and a stage that needs each row's position in the whole
    input (:meth:`Stage.needs_row_positions`)."""
    if input_path == "-":
        raise FilterkitError("--engine dask reads files its workers can open; it cannot partition standard input")
    if os.path.exists(input_path) and not (os.path.isdir(input_path) or stat.S_ISREG(os.stat(input_path).st_mode)):
        raise FilterkitError(
            f"--engine dask reads files its workers can open again; {input_path} is not a regular file "
            "(a FIFO or device can be read once only: use --engine local)"
        )
    for stage in stages:
        if stage.needs_row_positions():
            raise FilterkitError(
                f"stage '{stage.name}' cannot run with --engine dask with these options: its result depends on "
                "each row's position in the whole input, which a partition does not know (use --engine local)"
            )


@dataclass(frozen=True)
class Partition:
    """The rows one task reads: bytes ``start:end`` of a file, from where its rows begin or
    from a line start within them; or, for a gzip-compressed file (start None), the whole file.

    ``label`` names the file in errors and ``output_name`` is the partition's
    file in ``--output-dir``.
    """

    path: str
    label: str
    output_name: str
    start: int | None = None
    end: int | None = None

    @contextlib.contextmanager
    def reader(self, schema: Schema, chunk_rows: int) -> Iterator[ArffReader]:
        """An :class:`ArffReader` of this partition's rows; its errors name the file's line."""
        if self.start is None:
            with ArffReader(self.path, self.label, chunk_rows) as reader:
                yield reader
            return
        assert self.end is not None  # a partition with a start has an end
        with range_reader(self.path, self.label, self.start, self.end, schema, chunk_rows) as reader:
            yield reader

    def chunks(self, schema: Schema, chunk_rows: int, sparse_rows: bool | None) -> Iterator[Chunk]:
        """The partition's rows, stored as the input's first row is (see :func:`_stored_as`)."""
        with self.reader(schema, chunk_rows) as reader:
            for chunk in reader.chunks():
                yield _stored_as(chunk, sparse_rows)

    def first_row_sparse(self, schema: Schema) -> bool | None:
        """Whether the partition's first row is sparse (None: it has no rows)."""
        with self.reader(schema, 1) as reader:
            first = next(reader.chunks(), None)
        return None if first is None else first.is_sparse


def _stored_as(chunk: Chunk, sparse_rows: bool | None) -> Chunk:
    """The chunk as CSR or dense, as the whole input's reader would store it.

    A reader stores rows by the form of the first row it reads; a partition's
    first row may differ from the input's in a file mixing sparse and dense rows.
    """
    if sparse_rows is None or chunk.is_sparse == sparse_rows:
        return chunk
    if not sparse_rows:
        return Chunk(chunk.dense_values(), chunk.text, chunk.weights)
    import scipy.sparse as sp  # only for a file mixing sparse and dense rows

    return Chunk(sp.csr_matrix(chunk.values), chunk.text, chunk.weights)


@dataclass(frozen=True)
class Plan:
    """The partitions of one input, their shared schema, how its first data row is stored and the
    comments before its first file's ``@relation`` (earlier runs' provenance among them)."""

    partitions: tuple[Partition, ...]
    schema: Schema
    sparse_rows: bool | None
    header_comments: tuple[str, ...] = ()


def header_comments(path: str) -> tuple[str, ...]:
    """The comments before ``path``'s ``@relation`` (its earlier runs' provenance lines among them)."""
    with ArffReader(path, path, 1) as reader:
        return reader.header_comments


def first_known(forms: Iterator[bool | None]) -> bool | None:
    """The first of the partitions' first-row forms that is known (a partition with rows)."""
    return next((form for form in forms if form is not None), None)


def partition_files(input_path: str) -> list[str]:
    """The files ``input_path`` stands for: a folder's or a glob pattern's files, else itself."""
    return input_files(input_path) or [input_path]


def checked_output_folder(folder: str) -> str:
    """``--output-dir`` as an absolute path (workers may run elsewhere), checked before any
    work: a folder, or one that can be created, where files may be written."""
    if not folder:
        raise FilterkitError("cannot write into --output-dir '': the folder name is empty")
    absolute = os.path.abspath(folder)
    existing = absolute
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise FilterkitError(f"cannot write into --output-dir {folder}: {existing} is not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise FilterkitError(f"cannot write into --output-dir {folder}: the folder {existing} is not writable")
    return absolute


def input_files(input_path: str) -> list[str] | None:
    """The files of a folder (``*.arff``, ``*.arff.gz``) or of a glob pattern, by name; None for one file."""
    if os.path.isdir(input_path):
        files = sorted(
            os.path.join(input_path, name)
            for name in os.listdir(input_path)
            if name.endswith((".arff", ".arff.gz")) and os.path.isfile(os.path.join(input_path, name))
        )
        if not files:
            raise FilterkitError(f"no *.arff or *.arff.gz file in the folder {input_path}")
        return files
    if not os.path.exists(input_path) and _GLOB_CHARACTERS.search(input_path):
        files = sorted(path for path in glob.glob(input_path) if os.path.isfile(path))
        if not files:
            raise FilterkitError(f"no file matches {input_path}")
        return files
    return None


def output_names(files: list[str]) -> list[str]:
    """Each input file's name without ``.gz``: what its output is called in ``--output-dir``."""
    names: list[str] = []
    seen: dict[str, str] = {}
    for path in files:
        name = os.path.basename(path)
        name = name[: -len(".gz")] if name.endswith(".gz") else name
        if name in seen:
            raise FilterkitError(f"two inputs would give the output {name}: {seen[name]} and {path}")
        seen[name] = path
        names.append(name)
    return names


def split_file(path: str, count: int) -> tuple[Schema, list[Partition]]:
    """One file's schema and its rows cut at line ends into at most ``count`` non-empty byte ranges.

    A gzip-compressed file cannot be cut and is one partition.
    """
    absolute = os.path.abspath(path)
    schema, rows_start, size = locate_rows(absolute, path)
    if rows_start is None:
        return schema, [Partition(absolute, path, "part-00000.arff")]
    ranges = cut_at_line_ends(absolute, rows_start, size, count)
    return schema, [
        Partition(absolute, path, f"part-{number:05d}.arff", start, end) for number, (start, end) in enumerate(ranges)
    ]
