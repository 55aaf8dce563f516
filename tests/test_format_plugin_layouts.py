"""A third-party format's scan and text are checked as its chunks are (a review's faults): a schema with a label or
an attribute named twice wrote one row's class as another's, or ARFF no reader takes, with status 0; a text that is
no str was blamed on the ARFF writer, or a missing one written as ''; a reader or writer lacking a method, or a scan
returning no Layout, was a traceback."""

from __future__ import annotations

import pytest

from chain_helpers import REAL

PLUGIN = """
import numpy as np
from filterkit.plugin import NOMINAL, NUMERIC, STRING, Attribute, Chunk, Format, Layout, Schema, hookimpl

TEXT = Schema("t", (Attribute("text", STRING), Attribute("class", NOMINAL, labels=("a", "b"))))


def reader(schema=TEXT, texts=("x y", "z"), layout=True):
    class Reader:
        def scan(self, opened, name, options, known_schema):
            return Layout(schema, (), None, 2) if layout is True else layout

        def scan_reads_rows(self, known_schema):
            return True

        def chunks(self, stream, name, layout, chunk_rows):
            yield Chunk(np.array([[0.0, 0.0], [0.0, 1.0]]), {0: list(texts)} if schema is TEXT else {})

    return Reader


class Sparse(reader()):
    def chunks(self, stream, name, layout, chunk_rows):
        yield Chunk.from_csr(np.array([1.0]), np.array([1]), np.array([0, 0, 1]), (2, 2), {0: ["x y", "z"]})


class EmptyWhereMissing(reader()):
    def chunks(self, stream, name, layout, chunk_rows):
        yield Chunk(np.array([[np.nan, 0.0], [0.0, 1.0]]), {0: ["", "z"]})


class WithoutChunks:
    def scan(self, opened, name, options, known_schema):
        return Layout(TEXT, (), None, 2)

    def scan_reads_rows(self, known_schema):
        return True


class WithoutWrite:
    def __init__(self, stream, schema):
        pass


@hookimpl
def register_formats(register):
    twice = Schema("t", (Attribute("text", STRING), Attribute("class", NOMINAL, labels=("a", "a"))))
    names = Schema("t", (Attribute("x", NUMERIC), Attribute("x", NUMERIC)))
    for name, made in (
        ("twolabels", reader(twice)),
        ("twonames", reader(names)),
        ("intext", reader(texts=(1, "z"))),
        ("nonetext", reader(texts=(None, "z"))),
        ("surrogate", reader(texts=("a\\ud800b", "z"))),
        ("nolayout", reader(layout={"rows": 2})),
        ("nochunks", WithoutChunks),
        ("nocomments", reader(layout=Layout(TEXT, None, None, 2))),
        ("sparse", Sparse),
        ("emptywheremissing", EmptyWhereMissing),
    ):
        register(Format(name, made, suffixes=("." + name,)))
    for name, arguments in (("nowrite", ("stream", "schema")), ("oddarguments", ("stream", "schemas"))):
        register(Format(name, "filterkit.formats.csv:CsvFormat", WithoutWrite, writer_arguments=arguments))
"""


@pytest.fixture(scope="module")
def plugins(tmp_path_factory):
    folder = tmp_path_factory.mktemp("layouts")
    (folder / "layouts.py").write_text(PLUGIN)
    return folder


@pytest.mark.parametrize(
    "name, step, what",
    [
        ("twolabels", "scan", "its attribute 'class' declares a label twice"),
        ("twonames", "scan", "its schema declares the attribute 'x' twice"),
        ("nolayout", "scan", "it returned a builtins.dict, expected a Layout"),
        ("nocomments", "scan", "its header comments are not all texts"),
        ("intext", "reading", "row 1 of a chunk holds a builtins.int as the text of column 0 (its value present)"),
        ("nonetext", "reading", "row 1 of a chunk holds None as the text of column 0 (its value present)"),
        ("surrogate", "reading", "row 1 of a chunk holds a str UTF-8 cannot write (a lone surrogate)"),
    ],
)
def test_a_plugin_reader_s_schema_and_texts_are_checked_as_its_values_are(
    run_filterkit, tmp_path, plugins, name, step, what
):
    given, out = tmp_path / f"in.{name}", tmp_path / "out.arff"
    given.write_bytes(b"anything\n")
    result = run_filterkit(given, "-o", out, plugins_dir=plugins)
    assert result.status == 1 and not out.exists()
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"filterkit: error: format '{name}' (plugin 'layouts ") and "Traceback" not in result.stderr
    assert f"broke the format contract during {step}: {what}" in line


def test_a_plugin_reader_or_writer_lacking_a_method_is_one_error_naming_it(run_filterkit, tmp_path, plugins):
    given = tmp_path / "in.nochunks"
    given.write_bytes(b"anything\n")
    read = run_filterkit(given, plugins_dir=plugins)
    assert read.status == 1 and read.stderr.endswith(
        "failed during reading: AttributeError: 'WithoutChunks' object has no attribute 'chunks'\n"
    )
    for name, said in (
        ("nowrite", "failed during writing: AttributeError: 'WithoutWrite' object has no attribute 'write'"),
        ("oddarguments", "its writer_arguments name 'schemas', none of stream, schema, sparse, comments,"),
    ):
        written = run_filterkit(REAL / "iris.arff", "--to", name, plugins_dir=plugins)
        assert written.status == 1 and len(written.stderr.splitlines()) == 1 and said in written.stderr


def test_a_plugin_reader_s_sparse_chunks_and_a_text_where_a_value_is_missing_are_read(run_filterkit, tmp_path, plugins):
    """The text check read a sparse chunk's column as a dense array's (a traceback), and refused a text ('') where
    the value is missing, which had been written as '?'."""
    for name, rows in (("sparse", [b"{0 'x y'}", b"{0 z,1 b}"]), ("emptywheremissing", [b"?,a", b"z,b"])):
        given = tmp_path / f"in.{name}"
        given.write_bytes(b"anything\n")
        result = run_filterkit(given, plugins_dir=plugins)
        assert result.status == 0, result.stderr
        assert result.stdout.split(b"@data\n")[1].splitlines() == rows
