"""Formats whose code raises, for the guard that names a format plugin (issue 73): ``scanfails`` raises in its
scan, ``rowsfail`` scans its JSON records but raises reading them on a pass, ``writefails`` raises writing a
chunk and ``makefails`` making its writer."""

import json

from filterkit.plugin import Format, RecordFormat, hookimpl


class ScanFails:
    """A reader whose scan raises."""

    def scan(self, opened, name, options, known_schema):
        raise RuntimeError("no scan today")

    def scan_reads_rows(self, known_schema):
        return True

    def chunks(self, stream, name, layout, chunk_rows):
        raise AssertionError("never read: the scan failed")


class RowsFail(RecordFormat):
    """JSON records, one a line, that it scans but fails to read on a pass."""

    def record_groups(self, stream, name, rows, scanning):
        if not scanning:
            raise KeyError("no rows today")
        lines = stream.read().splitlines()
        yield [json.loads(line) for line in lines], list(range(1, len(lines) + 1))


class WriteFails:
    """A writer whose writes raise."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, chunk):
        raise ValueError("no writing today")


class MakeFails:
    """A writer that cannot be made."""

    def __init__(self, stream):
        raise TypeError("no writer today")


@hookimpl
def register_formats(register):
    """Register the formats that raise."""
    register(Format("scanfails", ScanFails, suffixes=(".scanfails",)))
    register(Format("rowsfail", RowsFail, suffixes=(".rowsfail",)))
    register(Format("writefails", RowsFail, WriteFails, suffixes=(".writefails",), writer_arguments=("stream",)))
    register(Format("makefails", RowsFail, MakeFails, suffixes=(".makefails",), writer_arguments=("stream",)))
