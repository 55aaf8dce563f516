"""The formats (issue 38, item 5; issue 73: registered by plugins): every registered format is chosen by
each of its names and suffixes, and its writer and reader carry a file's values there and back.
The sweep is generated from the registry, so a new format is covered by its registration."""

from __future__ import annotations

import numpy as np
import pytest

from chain_helpers import REAL, read_bytes
from filterkit.arff import read_arff
from filterkit.formats import format_of
from filterkit.plugins import load_plugins

IRIS = REAL / "iris.arff"
FORMATS = {entry.name: entry.value for entry in load_plugins().formats.values()}

#: Each format's suffixes and names (of the formats named by suffix), paired so that each is used once at least.
SPELLINGS = [
    pytest.param(key, suffix, name, id=f"{key}{suffix}-{name}")
    for key, form in FORMATS.items()
    if form.suffixes
    for suffix, name in (
        (form.suffixes[i % len(form.suffixes)], form.names[i % len(form.names)])
        for i in range(max(len(form.suffixes), len(form.names)))
    )
]


@pytest.mark.parametrize("key, suffix, name", SPELLINGS)
def test_each_format_is_chosen_by_its_suffixes_and_names(key, suffix, name):
    assert format_of(f"dir.csv/data{suffix.upper()}.gz", None) == key
    assert format_of("data.arff", name.upper()) == key


#: The spellings of the formats filterkit writes.
WRITTEN = [spelling for spelling in SPELLINGS if FORMATS[spelling.values[0]].writer is not None]


@pytest.mark.parametrize("key, suffix, name", WRITTEN)
def test_each_format_writes_what_it_reads_back(key, suffix, name, run_filterkit, tmp_path):
    written = tmp_path / f"iris{suffix}"
    assert run_filterkit(IRIS, "-o", written).status == 0
    assert run_filterkit(IRIS, "--to", name).stdout == written.read_bytes()
    back = run_filterkit("-q", written, "-o", tmp_path / "back.arff")
    assert back.status == 0, back.stderr
    _, original = read_arff(IRIS)
    _, chunk = read_bytes((tmp_path / "back.arff").read_bytes())
    features = chunk.values.toarray() if hasattr(chunk.values, "toarray") else chunk.values
    np.testing.assert_array_equal(features[:, :4], original.values[:, :4])
