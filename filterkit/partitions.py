"""The partitions of an input that the Dask engine's tasks read (:mod:`filterkit.distributed`):
the ARFF files of a folder or a glob pattern, each one partition, or one file's data section cut right
after line feeds into byte ranges, so that no row is ever cut.  A range is read with the schema
already known, and its errors name the file's own line, its line ends counted as the reader counts
lines (LF, CRLF and CR each end one).

A CSV or JSON Lines file is one file cut so (:func:`record_plan`), its header from the scan of the
whole file a local run makes (:class:`filterkit.sources.ScannedSource`).  A JSON Lines row is one line
(JSON escapes a line end in a string).  A CSV row may hold line ends in a double-quoted value: the
file's values are parsed as its reader splits them, and a cut falls only after a line feed outside a
quoted value, so such a file is cut where it is safe, never inside a row."""

from __future__ import annotations

import codecs
import glob
import gzip
import io
import itertools
import mmap
import os
import re
import stat
from dataclasses import dataclass
from typing import Iterable, Iterator, cast

from filterkit.arff.reader import ArffReader, KnownHeader
from filterkit.contract import called, stage_origin
from filterkit.errors import FilterkitError
from filterkit.formats import Layout, registered, scanned_format
from filterkit.limits import Limits
from filterkit.outputs import OutputFile, checked_output
from filterkit.schema import Chunk, Schema
from filterkit.sources import ARFF_READING

_GLOB_CHARACTERS = re.compile(r"[*?\[]")
_BLOCK_BYTES = 1 << 20
_LINE_END = re.compile(rb"\r\n|\r|\n")


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
        if called(stage_origin(stage), "planning the partitions", stage.needs_row_positions):
            raise FilterkitError(
                f"stage '{stage.name}' cannot run with --engine dask with these options: its result depends on "
                "each row's position in the whole input, which a partition does not know (use --engine local)"
            )


@dataclass(frozen=True)
class Partition:
    """The rows one task reads: bytes ``start:end`` of a file, from where its rows begin or from a
    line start within them; or, for a gzip-compressed file (``start`` None), the whole file.

    ``label`` names the file in errors and ``output_name`` is the partition's file in ``--output-dir``.
    """

    path: str
    label: str
    output_name: str
    start: int | None = None
    end: int = 0

    def chunks(self, schema: Schema, chunk_rows: int, sparse_rows: bool | None) -> Iterator[Chunk]:
        """The partition's rows, stored as CSR or dense as the whole input's reader would store them
        (``sparse_rows``: by the form of the input's first row, which a partition's first row may
        not share in a file mixing sparse and dense rows)."""
        try:
            with open(self.path, "rb") as handle:
                if self.start is None:
                    reader = ArffReader(handle, self.label, chunk_rows)
                else:
                    stream = _Spans(handle, ((self.start, self.end),))
                    reader = ArffReader(stream, self.label, chunk_rows, KnownHeader.rows_only(schema))
                for chunk in reader.chunks():
                    yield _stored_as(chunk, sparse_rows)
        except FilterkitError as error:
            if self.start is None or error.path != self.label or error.line is None:
                raise
            line = error.line + count_line_ends(self.path, self.start)
            raise type(error)(error.message, error.path, line) from None


@dataclass(frozen=True)
class RecordPartition:
    """The rows one task reads of a CSV or JSON Lines file (:func:`record_plan`): its format reads the
    byte ``spans`` of the file as one stream with the whole file's ``layout``; or, for a gzip-compressed
    file (``spans`` None), the whole file.  The spans start with what the reader must see before the
    partition's rows (CSV's header row; for JSON Lines, the line end before them), which holds
    ``head_lines`` line ends; the rows begin at byte ``start``, and errors name the file's own line."""

    path: str
    label: str
    output_name: str
    format_name: str
    layout: Layout
    spans: tuple[tuple[int, int], ...] | None = None
    start: int = 0
    head_lines: int = 0

    def chunks(self, schema: Schema, chunk_rows: int, sparse_rows: bool | None) -> Iterator[Chunk]:
        """The partition's rows, read by its format with the whole file's layout (``schema`` is its schema)."""
        reader = scanned_format(self.format_name)
        try:
            with open(self.path, "rb") as handle:
                stream = gzip.GzipFile(fileobj=handle) if self.spans is None else _Spans(handle, self.spans)
                with io.BufferedReader(stream) as buffered:
                    yield from reader.chunks(buffered, self.label, self.layout, chunk_rows)
        except FilterkitError as error:
            if self.spans is None or error.path != self.label or error.line is None or error.line <= self.head_lines:
                raise
            line = error.line - self.head_lines + count_line_ends(self.path, self.start)
            raise type(error)(error.message, error.path, line) from None


def _stored_as(chunk: Chunk, sparse_rows: bool | None) -> Chunk:
    """The chunk as CSR (``sparse_rows``) or dense, or as it is (None)."""
    if sparse_rows is None or chunk.is_sparse == sparse_rows:
        return chunk
    if not sparse_rows:
        return Chunk(chunk.dense_values(), chunk.text, chunk.weights)
    import scipy.sparse as sp  # only for a file mixing sparse and dense rows

    return Chunk(sp.csr_matrix(chunk.values), chunk.text, chunk.weights)


@dataclass(frozen=True)
class Plan:
    """The partitions of one input, their shared schema, how its first data row is stored, the
    comments before its first file's ``@relation`` (earlier runs' provenance among them) and the format
    and reading options a saved model records (a source's ``reading``)."""

    partitions: tuple[Partition | RecordPartition, ...]
    schema: Schema
    sparse_rows: bool | None
    header_comments: tuple[str, ...] = ()
    reading: tuple[str, dict] = ARFF_READING


def file_plan(path: str, label: str, output_name: str = "part-00000.arff", count: int = 1) -> Plan:
    """The file at ``path`` (named ``label`` in errors) as one partition, or with ``count`` its rows
    cut at line ends into at most ``count`` non-empty byte ranges of about equal size,
    ``part-00000.arff``, ``part-00001.arff``, …  A gzip-compressed file cannot be cut and is one partition."""
    with ArffReader(path, label, 1) as reader:
        first = next(reader.chunks(), None)
        compressed = isinstance(reader.stream, gzip.GzipFile)
    if compressed:
        partitions = [Partition(path, label, output_name)]
    else:  # read from where the rows begin on each pass, without parsing the header again
        ranges = cut_at_line_ends(path, _rows_start(path, reader.header.lines), os.path.getsize(path), count)
        names = [output_name] if count == 1 else [f"part-{number:05d}.arff" for number in range(len(ranges))]
        partitions = [Partition(path, label, name, start, end) for name, (start, end) in zip(names, ranges)]
    sparse_rows = None if first is None else first.is_sparse
    return Plan(tuple(partitions), reader.schema, sparse_rows, reader.header_comments)


def record_plan(
    path: str, label: str, format_name: str, layout: Layout, reading: tuple[str, dict], count: int = 1
) -> Plan:
    """The CSV or JSON Lines file at ``path`` (named ``label`` in errors), whose whole-file scan gave
    ``layout`` and ``reading`` (the source's), as at most ``count`` partitions of about equal size cut
    between rows (see the module's description), ``part-00000.arff``, …; a gzip-compressed file is one
    partition."""
    with open(path, "rb") as handle:
        compressed = handle.read(2) == b"\x1f\x8b"
    if compressed:
        partitions = [RecordPartition(path, label, "part-00000.arff", format_name, layout)]
        return Plan(tuple(partitions), layout.schema, None, layout.header_comments, reading)
    if registered(format_name).ranges == "csv":
        begin, ranges = csv_cuts(path, count)
        heads = [((0, begin), count_line_ends(path, begin))] * len(ranges)
    else:  # a range but the first starts with the line end before it, which the reader skips as a blank line
        ranges = cut_at_line_ends(path, 0, os.path.getsize(path), count)
        heads = [((start - 1, start), 1) if start else ((0, 0), 0) for start, _ in ranges]
    partitions = []
    for number, ((start, end), (head, head_lines)) in enumerate(zip(ranges, heads)):
        name = "part-00000.arff" if len(ranges) == 1 else f"part-{number:05d}.arff"
        spans = (head, (start, end))
        partitions.append(RecordPartition(path, label, name, format_name, layout, spans, start, head_lines))
    return Plan(tuple(partitions), layout.schema, None, layout.header_comments, reading)


def csv_cuts(path: str, count: int) -> tuple[int, list[tuple[int, int]]]:
    """Where a CSV file's rows begin (after its header row and the line feed ending it) and its rows
    cut into at most ``count`` non-empty ranges of about equal size, each right after the first line feed
    outside a double-quoted value at or past its share of the bytes, the values parsed as its reader
    splits them.  The file is mapped, not read: only the rows around each share are parsed
    (:func:`_cut`), the rest searched for line feeds and double quotes at C speed.  A file whose header
    row does not end in a line feed (CR line ends) is one range from its start; a line longer than the
    reader's line bound before the last cut ends the cutting there (the rest is one range), as the
    reader would stop at it."""
    size = os.path.getsize(path)
    longest = Limits.from_environment().line_bytes
    with open(path, "rb") as handle:
        begin = _rows_begin(handle, size, longest)
        if begin is None:
            return 0, [(0, size)]
        cuts: list[int] = []
        if count > 1 and begin < size:
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                cuts = _row_cuts(data, begin, size, count)
                stop = _first_long_line(data, begin, cuts[-1] if cuts else begin, longest)
                cuts = [cut for cut in cuts if cut <= stop]
    edges = [begin, *cuts, size]
    return begin, [(start, end) for start, end in zip(edges, edges[1:]) if end > start] or [(begin, size)]


def _rows_begin(handle, size: int, longest: int) -> int | None:
    """The offset after a CSV file's header row and the line feed ending it (``size`` for a file of blank
    lines or a quoted value never closed), its lines followed from the start as the reader joins them into
    rows; None where the rows cannot be cut apart from it: a row after the header row on its line (no line
    feed between, as with CR line ends) or a line longer than ``longest`` bytes before the header row ends."""
    quoted = written = False
    offset = 0
    while line := handle.readline(longest):
        offset += len(line)
        if not line.endswith(b"\n") and offset < size:
            return None
        text = line.removeprefix(codecs.BOM_UTF8) if offset == len(line) else line
        followed = _followed(text, quoted, written)
        if followed is None:
            return None
        quoted, written = followed
        if written and not quoted:
            return offset
    return size


def _followed(text: bytes, quoted: bool, written: bool) -> tuple[bool, bool] | None:
    """A CSV line's pieces (split at CR) followed as the reader joins lines into rows until the header row:
    whether a double-quoted value is open at its end (``quoted``: open at its start) and whether the header
    row is written yet; None for a row that follows the header row on its line."""
    from filterkit.formats.csv import ends_quoted

    for piece in text.removesuffix(b"\n").split(b"\r"):
        if written and not quoted and piece.strip():
            return None
        if b'"' in piece:
            quoted = ends_quoted(piece, quoted)
        written = written or bool(piece.strip())
    return quoted, written


#: One value of a CSV row, as :func:`filterkit.formats.csv.ends_quoted` reads it, blanks before it
#: included: double-quoted (``""`` is one quote, line ends are part of it) and whatever follows its
#: closing quote up to a comma or line end; single-quoted on one piece of a line, blanks alone after it;
#: or anything else up to a comma or line end that does not open with a double quote.
_CSV_VALUE = (
    rb'(?>[ \t]*+(?:"(?:[^"]++|"")*+"[^,\r\n]*+'
    rb"|'[^'\\\r\n]*+(?:\\[^\r\n][^'\\\r\n]*+)*+'[ \t]*+(?=[,\r\n])"
    rb'|(?!")[^,\r\n]*+))'
)
#: A CSV row from a line start outside a quoted value through the first line feed outside one (a CR
#: ends a line as a comma ends a value: a value opens after it).
_CSV_ROW = re.compile(rb"(?:" + _CSV_VALUE + rb"[,\r])*+" + _CSV_VALUE + rb"\n")
#: The rest of a CSV row from a line start inside a double-quoted value through the first line feed
#: outside one: the value closes, what follows it up to a comma or line end is skipped, and the row goes on.
_CSV_QUOTED_ROW = re.compile(
    rb'(?:[^"]++|"")*+"[^,\r\n]*+(?:\n|[,\r](?:' + _CSV_VALUE + rb"[,\r])*+" + _CSV_VALUE + rb"\n)"
)
#: How far before a cut's share the rows are read first when they do not agree from the line it falls on.
_FIRST_LOOK_BACK = 1 << 16
#: CSV rows one after the other, each with a double quote on its first line, and between two such up to
#: 64 lines without one (a longer stretch is found by byte search).
_CSV_ROWS = re.compile(
    rb'(?:(?:[^"\n]*+\n){1,64}+(?=[^"\n]*+")|(?=[^"\n]*+")(?:' + _CSV_VALUE + rb"[,\r])*+" + _CSV_VALUE + rb"\n)*+"
)


def _row_cuts(data, begin: int, size: int, count: int) -> list[int]:
    """The cuts of a CSV file's ``size`` bytes ``data`` whose rows begin at ``begin`` into at most ``count``
    ranges: each the first row end (:func:`_cut`) past the cut before it at or past its share."""
    cuts: list[int] = []
    while len(cuts) + 1 < count:
        after = cuts[-1] if cuts else begin
        share = begin + (size - begin) * (len(cuts) + 1) // count
        cut = _cut(data, after, max(share, after + 1))
        if cut is None or cut >= size:
            break
        cuts.append(cut)
    return cuts


def _cut(data, after: int, least: int) -> int | None:
    """The first offset at or past ``least`` right after a line feed outside a double-quoted value of a CSV
    file's bytes ``data``, whose line start ``after`` (before ``least``) is outside one; None where none
    follows.  The bytes between are read only as far back from ``least`` as it takes: from a line start
    where the row ends past ``least`` are the same whether a quoted value is open there or not
    (:func:`_agreed_row_end`), or back to the last double quote, before which the state is ``after``'s."""
    start = data.rfind(b"\n", after, least) + 1
    distance = _FIRST_LOOK_BACK
    while start > after:
        if data.rfind(b'"', after, start) < 0:
            return _first_row_end(data, start, least)
        agreed = _agreed_row_end(data, start, least, least + distance)
        if agreed is not None:
            return agreed
        start = data.rfind(b"\n", after, max(after, min(start - 1, least - distance))) + 1
        distance *= 4
    return _first_row_end(data, after, least)


def _agreed_row_end(data, start: int, least: int, reach: int) -> int | None:
    """The first offset at or past ``least`` and before ``reach`` right after a line feed outside a quoted
    value, read from the line start ``start`` of a CSV file's bytes ``data`` both as outside a quoted value
    and as inside one, where the two readings agree on it; None where they do not."""
    free = _first_row_end(data, start, least, reach)
    quoted = None if free is None else _CSV_QUOTED_ROW.match(data, start, free)
    if quoted is None:
        return None
    end = quoted.end()
    return free if (end if end >= least else _first_row_end(data, end, least, free)) == free else None


def _first_row_end(data, after: int, least: int, reach: int | None = None) -> int | None:
    """The first offset at or past ``least`` (and before ``reach``) right after a line feed outside a
    double-quoted value of a CSV file's bytes ``data``, read from ``after``, a line start outside one (at
    or before ``least``); None where none follows.  The rows before ``least`` are matched whole at C
    speed, stretches without a double quote skipped by byte search: the rows that end before ``least``
    end there in the whole file too, as no match looks past its row's line feed."""
    reached = after
    while (quote := data.find(b'"', reached, least)) >= 0:
        line = max(reached, data.rfind(b"\n", reached, quote) + 1)
        reached = cast(re.Match, _CSV_ROWS.match(data, line, least)).end()  # it matches rows or none
        if reached == line:
            break
    else:
        reached = max(reached, data.rfind(b"\n", reached, least) + 1)
    if reached == least:
        return reached
    row = _CSV_ROW.match(data, reached, len(data) if reach is None else reach)
    return None if row is None else row.end()


def _first_long_line(data, begin: int, end: int, longest: int) -> int:
    """The start of the first line (up to its line feed) of bytes ``begin:end`` of ``data`` that holds
    ``longest`` bytes or more before its line feed, where the reader's bounded ``readline`` stops; ``end``
    where none does (``begin`` and ``end`` are line starts)."""
    start = begin
    while start < end:
        line_feed = data.rfind(b"\n", start, start + longest)
        if line_feed < 0:
            return start
        start = line_feed + 1
    return end


def joined(plans: list[Plan], files: list[str]) -> Plan:
    """One plan of the ``plans`` of ``files``, each a file of one partition: every file must declare
    the same attributes as the first (FilterkitError naming the first file and attribute that differ)."""
    schema = plans[0].schema
    for path, plan in zip(files[1:], plans[1:]):
        difference = schema.first_difference(plan.schema)
        if difference is not None:
            raise FilterkitError(f"header differs from {files[0]}'s: {difference}", path)
    sparse_rows = next((plan.sparse_rows for plan in plans if plan.sparse_rows is not None), None)
    return Plan(tuple(plan.partitions[0] for plan in plans), schema, sparse_rows, plans[0].header_comments)


def partition_files(input_path: str) -> list[str]:
    """The files ``input_path`` stands for: a folder's or a glob pattern's files, else itself."""
    return input_files(input_path) or [input_path]


def checked_output_folder(folder: str) -> str:
    """``--output-dir`` as an absolute path (workers may run elsewhere), checked before any
    work: a folder, or one that can be created, where files may be written."""
    if not folder:
        raise FilterkitError("cannot write into --output-dir '': the folder name is empty")
    if folder == "-":
        raise FilterkitError("cannot write into --output-dir -: it names a folder, not standard output (./- does)")
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
    seen: dict[str, str] = {}
    for path in files:
        name = os.path.basename(path).removesuffix(".gz")
        if name in seen:
            raise FilterkitError(f"two inputs would give the output {name}: {seen[name]} and {path}")
        seen[name] = path
    return list(seen)


def output_targets(plan: Plan, folder: str) -> list[OutputFile]:
    """The output file of each partition in ``folder`` (named as the inputs, or ``part-NNNNN.arff``),
    checked as ``-o`` is (:func:`filterkit.outputs.checked_output`); FilterkitError when one cannot be
    written or is an input."""
    paths = [os.path.join(folder, partition.output_name) for partition in plan.partitions]
    if not os.path.isdir(folder):
        return [OutputFile(path, path, "replace", None) for path in paths]
    names = {partition.output_name for partition in plan.partitions}
    stale = sorted(name for name in os.listdir(folder) if name.endswith((".arff", ".arff.gz")) and name not in names)
    if stale:
        raise FilterkitError(
            f"--output-dir {folder} holds {stale[0]}, which this run does not write: read back, the folder would not "
            "be this output alone; empty it or give another folder"
        )
    targets = [checked_output(path) for path in paths]
    for target in targets:
        for partition in plan.partitions:
            if target.existing is not None and os.path.samefile(partition.path, target.target):
                raise FilterkitError(f"--output-dir {folder} would overwrite the input {partition.path}")
    return targets


def cut_at_line_ends(path: str, begin: int, end: int, count: int) -> list[tuple[int, int]]:
    """Bytes ``begin:end`` of a file as at most ``count`` non-empty ``(start, end)`` ranges,
    each cut right after a line feed, of about equal size, in order (one empty range if
    there are no bytes)."""
    cuts = [begin]
    size = end - begin
    number = 1
    with open(path, "rb") as handle:
        while number < count and cuts[-1] < end:
            handle.seek(max(begin, begin + size * number // count - 1))  # past more partitions than bytes: begin
            while (line := handle.readline(_BLOCK_BYTES)) and not line.endswith(b"\n"):
                pass
            cuts.append(min(handle.tell(), end))
            # the next cut whose byte lies past this one (those before would repeat it): --partitions 2**63
            # on a small file makes as many cuts as it has lines, not 2**63
            number = max(number + 1, -(-(cuts[-1] - begin + 1) * count // size))
    cuts.append(end)
    return [(start, stop) for start, stop in zip(cuts, cuts[1:]) if stop > start] or [(begin, end)]


def count_line_ends(path: str, end: int) -> int:
    """The line ends (LF, CRLF, CR) before offset ``end`` of a file, counted as the reader counts lines."""
    with open(path, "rb") as handle:
        return sum(len(_LINE_END.findall(block)) for block in _blocks(handle, end))


def _rows_start(path: str, header_lines: int) -> int:
    """The offset right after the ``@data`` keyword, which is on line ``header_lines`` of a file:
    a row written on that line is read."""
    with open(path, "rb") as handle:
        line_starts = _line_starts(_blocks(handle, os.fstat(handle.fileno()).st_size))
        start = next(itertools.islice(line_starts, header_lines - 2, None)) if header_lines > 1 else 0
        line_end = next(line_starts, None)
        handle.seek(start)
        line = handle.read(None if line_end is None else line_end - start)
    return start + line.lower().index(b"@data") + len(b"@data")


def _line_starts(blocks: Iterable[bytes]) -> Iterator[int]:
    """The offset after each line end of consecutive ``blocks`` from a file's start."""
    offset = 0
    for block in blocks:
        for match in _LINE_END.finditer(block):
            yield offset + match.end()
        offset += len(block)


def _blocks(handle, end: int) -> Iterator[bytes]:
    """The bytes of ``handle`` up to offset ``end`` (or one further, to end a CRLF), in blocks
    none of which ends between the two bytes of a CRLF."""
    left = end - handle.tell()
    while left > 0 and (block := handle.read(min(_BLOCK_BYTES, left))):
        while block.endswith(b"\r") and (extra := handle.read(1)):
            block += extra
        left -= len(block)
        yield block


class _Spans(io.RawIOBase):
    """Byte ranges ``(start, end)`` of an open file, one after the other, as a stream."""

    def __init__(self, handle, spans: Iterable[tuple[int, int]]):
        self._handle = handle
        self._spans = iter(spans)
        self._left = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while self._left <= 0:
            span = next(self._spans, None)
            if span is None:
                return 0
            self._handle.seek(span[0])
            self._left = span[1] - span[0]
        read = self._handle.readinto(memoryview(buffer).cast("B")[: self._left])
        self._left = self._left - read if read else 0
        return read
