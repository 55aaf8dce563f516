"""The conformance files Weka rejects, through the command line (issue 9).

tests/arff/test_arff_conformance.py shows the reader raises an ArffError with
the file and line for each of them; here ``filterkit -o out.arff FILE`` and
``filterkit -o out.arff -`` (in this process, through ``filterkit.cli.run``)
must exit 1 with exactly ``filterkit: error: FILE:LINE: message`` for that
same line and message, and leave no output file or temporary behind.
"""

from __future__ import annotations

import os
import shutil

import pytest

from arff_helpers import CONFORMANCE, rejected_files
from filterkit.arff import read_arff
from filterkit.errors import ArffError


def _reader_error(path) -> ArffError:
    with pytest.raises(ArffError) as caught:
        read_arff(path)
    return caught.value


@pytest.mark.slow
@pytest.mark.parametrize("from_stdin", [False, True], ids=["path", "stdin"])
@pytest.mark.parametrize("name", rejected_files())
def test_rejected_conformance_file_exits_1_with_file_line_and_message(
    run_filterkit, tmp_path, monkeypatch, name, from_stdin
):
    source = CONFORMANCE / name
    error = _reader_error(source)
    monkeypatch.chdir(tmp_path)
    if from_stdin:
        result = run_filterkit("-o", "out.arff", "-", stdin=source.read_bytes())
        shown = "<stdin>"
    else:
        shown = os.path.basename(name)
        shutil.copyfile(source, tmp_path / shown)
        result = run_filterkit("-o", "out.arff", shown)
    assert result.status == 1
    assert result.stdout == b""
    assert result.stderr == f"filterkit: error: {shown}:{error.line}: {error.message}\n"
    assert sorted(os.listdir(tmp_path)) == ([] if from_stdin else [shown])
