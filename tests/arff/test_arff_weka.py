"""What our writer produces, Weka 3.6 reads: same instances, attributes and values.

Runs ``java -cp weka.jar weka.core.Instances FILE`` on files we wrote and parses
its summary (relation, counts, and per attribute its type, missing count and
number of distinct values).  The jar is $WEKA_JAR or /usr/share/java/weka.jar;
without java or the jar these tests are skipped.
"""

from __future__ import annotations

import io
import re
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from arff_helpers import REAL, assert_same_data, read_all, write_text
from chain_helpers import JAVA, JAVA_OPTIONS, NEEDS_WEKA
from chain_helpers import WEKA_JAR as JAR
from filterkit.schema import DATE, NOMINAL, NUMERIC, RELATIONAL, STRING

pytestmark = NEEDS_WEKA

# Our dates are UTC; Weka reads them in the JVM's zone.
_JAVA = [JAVA or "java", *JAVA_OPTIONS, "-Duser.timezone=UTC", "-Xmx1g", "-cp", str(JAR)]

_ATTRIBUTE_LINE = re.compile(
    r"^\s*(\d+) (.{25}) +(Num|Nom|Str|Dat|Rel) +\d+% +\d+% +\d+% +(\d+) / +\d+% +\d+ / +\d+% +(\d+) *$"
)
_WEKA_TYPE = {NUMERIC: "Num", NOMINAL: "Nom", STRING: "Str", DATE: "Dat", RELATIONAL: "Rel"}

MIXED = (
    "@relation 'mixed bag'\n"
    "@attribute id numeric\n"
    "@attribute 'a note' string\n"
    '@attribute when date "yyyy-MM-dd HH:mm:ss"\n'
    "@attribute cls {a,'b c'}\n"
    "@data\n"
    "1,'hello, world','2020-01-02 03:04:05',a\n"
    "0,?,?,'b c',{2}\n"
    "?,'','1999-12-31 23:59:59',?\n"
    "2,'it\\'s % not a comment\\tand a tab','2001-02-03 04:05:06',a,{0.5}\n"
    "0,'',?,a\n"
)


def weka_summary(path: Path) -> dict:
    """Weka's reading of ``path``: relation, counts and one tuple per attribute."""
    result = subprocess.run([*_JAVA, "weka.core.Instances", str(path)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    summary = {
        "relation": re.search(r"^Relation Name:  (.*)$", out, re.M).group(1),
        "instances": int(re.search(r"^Num Instances:\s+(\d+)$", out, re.M).group(1)),
        "attributes": int(re.search(r"^Num Attributes:\s+(\d+)$", out, re.M).group(1)),
        "columns": [],
    }
    for line in out.splitlines():
        match = _ATTRIBUTE_LINE.match(line)
        if match:
            index, name, kind, missing, distinct = match.groups()
            summary["columns"].append((int(index), name.rstrip(), kind, int(missing), int(distinct)))
    return summary


def expected_summary(schema, chunk) -> dict:
    """The summary Weka must print for our data."""
    matrix = chunk.dense_values()
    columns = []
    for position, attribute in enumerate(schema.attributes):
        values = matrix[:, position]
        present = ~np.isnan(values)
        if attribute.kind == STRING:
            distinct = len({t for t, ok in zip(chunk.text[position], present.tolist()) if ok})
        else:
            distinct = len(np.unique(values[present]))
        columns.append(
            (position + 1, attribute.name[:25].rstrip(), _WEKA_TYPE[attribute.kind], int((~present).sum()), distinct)
        )
    return {
        "relation": schema.relation,
        "instances": chunk.n_rows,
        "attributes": len(schema),
        "columns": columns,
    }


def _mixed():
    return read_all(io.BytesIO(MIXED.encode()), name="mixed")


CASES = {
    "iris-dense": (lambda: read_all(REAL / "iris.arff"), False),
    "credit-g-dense": (lambda: read_all(REAL / "credit-g.arff"), False),
    "wine-dense": (lambda: read_all(REAL / "wine.arff"), False),
    "oh0-sparse": (lambda: read_all(REAL / "oh0.wc.arff"), True),
    "mixed-sparse": (_mixed, True),
    "mixed-dense": (_mixed, False),
}


@pytest.mark.parametrize("case", list(CASES))
def test_weka_reads_what_we_write(case, tmp_path):
    load, sparse = CASES[case]
    schema, chunk = load()
    path = tmp_path / f"{case}.arff"
    path.write_text(write_text(schema, chunk, sparse=sparse), encoding="utf-8")
    summary = weka_summary(path)
    expected = expected_summary(schema, chunk)
    assert summary["instances"] == expected["instances"]
    assert summary["attributes"] == expected["attributes"]
    assert summary["relation"] == expected["relation"]
    assert summary["columns"] == expected["columns"]


def test_summary_of_known_files_has_the_right_counts(tmp_path):
    # Guards the summary parser itself against a silently empty parse.
    path = tmp_path / "iris.arff"
    path.write_text(write_text(*read_all(REAL / "iris.arff"), sparse=False), encoding="utf-8")
    summary = weka_summary(path)
    assert (summary["relation"], summary["instances"], summary["attributes"]) == ("iris", 150, 5)
    assert summary["columns"][4] == (5, "class", "Nom", 0, 3)
    assert summary["columns"][0][:4] == (1, "sepallength", "Num", 0)


@pytest.mark.parametrize("sparse", [True, False], ids=["sparse", "dense"])
def test_weka_gives_back_our_strings_dates_missing_values_and_weights(sparse, tmp_path):
    # Weka reads our file and writes it out again (dense, via SparseToNonSparse);
    # reading Weka's file gives back exactly our data, weights included.
    schema, chunk = _mixed()
    ours = tmp_path / "ours.arff"
    ours.write_text(write_text(schema, chunk, sparse=sparse), encoding="utf-8")
    weka_out = tmp_path / "weka.arff"
    result = subprocess.run(
        [*_JAVA, "weka.filters.unsupervised.instance.SparseToNonSparse", "-i", str(ours), "-o", str(weka_out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    weka_schema, weka_chunk = read_all(weka_out)
    assert weka_schema.relation == "mixed bag-weka.filters.unsupervised.instance.SparseToNonSparse"
    assert_same_data(schema, chunk, replace(weka_schema, relation=schema.relation), weka_chunk)
    assert weka_chunk.text[1] == ["hello, world", None, "", "it's % not a comment\tand a tab", ""]
    np.testing.assert_array_equal(weka_chunk.weights, [1, 2, 1, 0.5, 1])
