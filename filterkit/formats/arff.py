"""ARFF as a format like the others: its reader (:class:`ArffFormat`) reads the header at the top of the
input and then its rows (:class:`filterkit.arff.reader.ArffReader`), so it needs no scan, and it streams a
one-pass input as it comes (its Format declares ``streams``)."""

from __future__ import annotations

from typing import IO, Iterator

from filterkit.arff.reader import ArffReader, KnownHeader
from filterkit.formats import FormatOptions, Layout, Reopen
from filterkit.schema import Chunk, Schema


class ArffFormat:
    """The reader of ARFF: the "scan" reads the header alone (its schema, the comments before
    ``@relation`` and the :class:`KnownHeader` each pass checks its header against by digest); the
    chunks are the rows after it.  The ARFF header is the file's own: a model's header is not given to
    the reader but checked against it by the chain."""

    def scan(self, opened: Reopen, name: str, options: FormatOptions, known_schema: Schema | None) -> Layout:
        """The header at the top of the input (its rows are not read)."""
        with opened() as stream, ArffReader(stream, name, 1) as reader:
            return layout_of(reader)

    def scan_reads_rows(self, known_schema: Schema | None) -> bool:
        """False: the header comes before the rows."""
        return False

    def chunks(self, stream: IO[bytes], name: str, layout: Layout, chunk_rows: int) -> Iterator[Chunk]:
        """The rows of ``stream`` from its beginning, its header checked against the scanned one."""
        header = layout.details
        assert isinstance(header, KnownHeader)  # made by scan
        return ArffReader(stream, name, chunk_rows, known_header=header).chunks()

    def streamed(self, stream: IO[bytes], name: str, chunk_rows: int) -> tuple[Layout, Iterator[Chunk]]:
        """The header of ``stream`` (read once, as it comes: standard input, a FIFO) and its rows to come."""
        reader = ArffReader(stream, name, chunk_rows)
        return layout_of(reader), reader.chunks()


def layout_of(reader: ArffReader) -> Layout:
    """What an ARFF reader read of its header, as the Layout of a scan."""
    return Layout(reader.schema, reader.header_comments, reader.header, None)
