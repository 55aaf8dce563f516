"""Every call into a format plugin goes through the guard that names the plugin (issue 73): a reader or a writer
that raises is one ``filterkit: error:`` line naming the format and its plugin, exit 1, no traceback and no
output file; a reader's failure on a pass, in the reading thread, is reported so too."""

from __future__ import annotations

import pytest

from chain_helpers import FIXTURE_PLUGINS, REAL

RAISING = FIXTURE_PLUGINS / "raising_formats"
RECORDS = b'{"x": 1, "class": "a"}\n{"x": 2, "class": "b"}\n'


def one_error_line(stderr: str, format_name: str, step: str, error: str) -> bool:
    """Whether ``stderr`` is the one error line naming the format, its plugin, the step and the error."""
    lines = stderr.splitlines()
    origin = f"filterkit: error: format '{format_name}' (plugin 'raising_formats "
    return len(lines) == 1 and lines[0].startswith(origin) and lines[0].endswith(f"failed during {step}: {error}")


@pytest.mark.parametrize(
    ("suffix", "step", "error"),
    [
        (".scanfails", "scan", "RuntimeError: no scan today"),
        (".rowsfail", "reading", "KeyError: 'no rows today'"),
    ],
)
def test_a_format_whose_reader_raises_is_one_error_naming_its_plugin(run_filterkit, tmp_path, suffix, step, error):
    given = tmp_path / f"in{suffix}"
    given.write_bytes(RECORDS)
    out = tmp_path / "out.arff"
    result = run_filterkit(given, "-o", out, "l2", plugins_dir=RAISING)
    assert result.status == 1 and one_error_line(result.stderr, suffix[1:], step, error), result.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("format_name", "step", "error"),
    [
        ("writefails", "writing", "ValueError: no writing today"),
        ("makefails", "construction", "TypeError: no writer today"),
    ],
)
def test_a_format_whose_writer_raises_is_one_error_naming_its_plugin(run_filterkit, tmp_path, format_name, step, error):
    out = tmp_path / f"out.{format_name}"
    result = run_filterkit(REAL / "iris.arff", "-o", out, plugins_dir=RAISING)
    assert result.status == 1 and one_error_line(result.stderr, format_name, step, error), result.stderr
    assert not out.exists()


def test_arff_on_standard_input_is_read_through_its_format_as_it_comes(run_filterkit):
    """ARFF declares ``streams``: standard input is read as it comes, as the file is, by its format's reader."""
    from_file = run_filterkit(REAL / "iris.arff", "l2")
    assert from_file.status == 0 and run_filterkit("-", "l2", stdin=(REAL / "iris.arff").read_bytes()) == from_file


def test_a_plugin_format_cannot_declare_streams_as_only_arffs_reader_can(run_filterkit):
    """A streamed input is read with no options, and --engine dask cuts a streamed file with ARFF's reader: a
    format declaring either beside ``streams`` is refused when registered, naming why, and the run goes on."""
    result = run_filterkit(REAL / "iris.arff", "l2", plugins_dir=FIXTURE_PLUGINS / "streamed_formats")
    assert result.status == 0, result.stderr
    warnings = sorted(line for line in result.stderr.splitlines() if "is skipped" in line)
    assert len(warnings) == 2
    assert "format 'cut' streams, and --engine dask cuts only ARFF's streamed files: declare ranges=None" in warnings[0]
    assert "format 'optioned' streams, so it is read with no options: it cannot declare reading options" in warnings[1]


@pytest.mark.parametrize("error", [MemoryError, KeyboardInterrupt, OSError, ValueError])
def test_the_guard_blames_a_format_for_its_own_faults_only(error):
    """Memory running out, a Ctrl-C at a reader waiting for input and an input's OSError pass as they are (a
    program using filterkit sees them as before); any other exception is the format's."""
    from filterkit.errors import FilterkitError
    from filterkit.formats import format_called

    def fails():
        raise error("raised")

    expected = FilterkitError if error is ValueError else error
    with pytest.raises(expected) as raised:
        format_called("format 'x' (plugin 'p')", "reading", fails)
    if error is ValueError:
        assert str(raised.value) == "format 'x' (plugin 'p') failed during reading: ValueError: raised"
