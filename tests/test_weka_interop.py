"""A round trip through real Weka 3.6 (issue 7): Weka makes word counts, filterkit filters them, Weka learns.

For each of two sets of 200 real documents, written by filterkit's writer as a
string ARFF:

* ``oh0-words``: rows of oh0 (60% England, 40% Ethics) written back as text,
  each word repeated as often as oh0 counts it (the 5 oh0 words holding a
  character Weka's tokenizer splits on are left out); the class attribute is
  called ``@@class@@`` as Weka's TextDirectoryLoader calls it, so no word can
  take its name;
* ``weka-reuters-grain``: the first 60 grain and 140 other articles of the
  ReutersGrain-train.arff that Debian's weka package ships in
  /usr/share/doc/weka/examples (skipped when absent);

Weka's ``StringToWordVector -C -L -W 100000`` turns them into word counts, the
installed ``filterkit`` console script runs a chain on Weka's output, and Weka's
``SMO`` cross-validates (``-t OUT -c first -x 5``) on filterkit's output.  The
chain is fitted on all 200 documents before Weka's folds are drawn, so that
accuracy is optimistic (supervised filtering sees the test folds); it shows
that Weka reads and learns from what filterkit writes.  A second test fits the
chain on 150 documents only (``--save-model``), applies it to the other 50
(``filterkit apply``) and lets Weka train on the one and test on the other
(``-t TRAIN -T TEST``).

Weka's command-line tools exit with 0 even when they fail (the exception goes
to stderr), so stderr is checked for one and stdout for the lines parsed.
"""

from __future__ import annotations

import functools
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from chain_helpers import JAVA, NEEDS_WEKA, REAL
from chain_helpers import WEKA_JAR as JAR
from filterkit import __version__
from filterkit.arff import read_arff
from filterkit.arff.writer import ArffWriter
from filterkit.schema import NOMINAL, STRING, Attribute, Chunk, Schema

WEKA_REUTERS = Path("/usr/share/doc/weka/examples/ReutersGrain-train.arff")
TOKENIZER_DELIMITERS = " \r\n\t.,;:'\"()?!"  # WordTokenizer's default, as StringToWordVector uses it

pytestmark = NEEDS_WEKA

CHAINS = {
    "shape-bns-l2": ["shape", "bns", "l2"],
    "ig-select-binarize-l2": ["ig", "--presence", "select", "--top", "100", "binarize", "l2"],
}


def run_weka(*args: str) -> str:
    """Run a Weka class; its standard output, after checking it reported no failure."""
    result = subprocess.run(
        [JAVA or "java", "-Xmx1g", "-cp", str(JAR), *args], capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "exception" not in result.stderr.lower(), result.stderr[-3000:]  # Weka reports failures here
    return result.stdout


def write_string_arff(path: Path, relation: str, class_name: str, labels, texts: list[str], codes) -> None:
    """A string ARFF (text, class) written by filterkit's writer."""
    schema = Schema(relation, (Attribute("text", STRING), Attribute(class_name, NOMINAL, labels=tuple(labels))))
    values = np.zeros((len(texts), 2))
    values[:, 1] = codes
    with open(path, "w", encoding="utf-8", newline="\n") as stream:
        ArffWriter(stream, schema, sparse=False).write(Chunk(values, {0: list(texts)}))


def oh0_documents(path: Path) -> dict:
    """200 oh0 rows as text; returns the words and counts each document was made of."""
    schema, data = read_arff(REAL / "oh0.wc.arff")
    matrix = data.dense_values()
    labels = schema.attributes[-1].labels
    codes = matrix[:, -1].astype(int)
    england, ethics = labels.index("England"), labels.index("Ethics")
    rows = np.sort(np.r_[np.flatnonzero(codes == england)[:120], np.flatnonzero(codes == ethics)[:80]])
    words = [a.name for a in schema.attributes[:-1]]
    usable = np.array([not any(c in TOKENIZER_DELIMITERS for c in w) for w in words])
    assert (~usable).sum() == 5
    counts = matrix[np.ix_(rows, np.flatnonzero(usable))]
    kept_words = [w for w, ok in zip(words, usable) if ok]
    texts = [" ".join(w for w, n in zip(kept_words, row) for _ in range(int(n))) for row in counts]
    write_string_arff(
        path, "oh0 as text", "@@class@@", ("England", "Ethics"), texts, (codes[rows] == ethics).astype(float)
    )
    return {"words": kept_words, "counts": counts}


def reuters_documents(path: Path) -> dict:
    """The first 60 grain and 140 other articles of Weka's own ReutersGrain-train.arff."""
    if not WEKA_REUTERS.is_file():
        pytest.skip(f"{WEKA_REUTERS} is not installed (Debian's weka package ships it)")
    schema, data = read_arff(WEKA_REUTERS)
    codes = data.dense_values()[:, 1]
    rows = np.sort(np.r_[np.flatnonzero(codes == 1)[:60], np.flatnonzero(codes == 0)[:140]])
    write_string_arff(
        path,
        schema.relation,
        schema.attributes[1].name,
        schema.attributes[1].labels,
        [data.text[0][r] for r in rows],
        codes[rows],
    )
    return {}


SOURCES = {"oh0-words": oh0_documents, "weka-reuters-grain": reuters_documents}


@pytest.fixture(scope="module", params=list(SOURCES))
def word_counts(request, tmp_path_factory):
    """(folder, Weka's word-count ARFF, what the documents were made of) for one source."""
    folder = tmp_path_factory.mktemp(request.param)
    text = folder / "text.arff"
    made_of = SOURCES[request.param](text)
    counts = folder / "counts.arff"
    run_weka(
        "weka.filters.unsupervised.attribute.StringToWordVector",
        "-C",
        "-L",
        "-W",
        "100000",
        "-c",
        "last",
        "-i",
        str(text),
        "-o",
        str(counts),
    )
    assert counts.is_file() and counts.stat().st_size > 0
    return folder, counts, made_of


@functools.lru_cache(maxsize=None)
def weka_relation(path: Path) -> str:
    """The relation name as Weka reads it."""
    summary = run_weka("weka.core.Instances", str(path))
    return re.search(r"^Relation Name:  (.*)$", summary, re.M).group(1)


def accuracy(report: str, section: str) -> tuple[float, int]:
    """Weka's "Correctly Classified Instances" percentage and instance count of one section."""
    assert section in report, report[-3000:]
    after = report.split(section, 1)[1]
    correct = re.search(r"^Correctly Classified Instances\s+\d+\s+([\d.]+)\s*%", after, re.M)
    total = re.search(r"^Total Number of Instances\s+(\d+)", after, re.M)
    assert correct and total, after[:3000]
    return float(correct.group(1)), int(total.group(1))


def majority_percent(path: Path) -> float:
    """The share of the most frequent class (first attribute), in percent."""
    _, data = read_arff(path)
    codes = data.dense_values()[:, 0].astype(int)
    return 100.0 * np.bincount(codes).max() / len(codes)


def test_weka_word_counts_are_read_as_weka_wrote_them(word_counts):
    _, counts, made_of = word_counts
    schema, data = read_arff(counts)
    assert data.is_sparse and data.n_rows == 200
    assert schema.attributes[0].kind == NOMINAL, "StringToWordVector puts the class first"
    assert all(a.is_numeric for a in schema.attributes[1:])
    if made_of:
        # Every word of the documents, and its count in every document, as oh0 has it.
        counts_by_word = dict(zip(made_of["words"], made_of["counts"].T))
        used = {w for w, column in counts_by_word.items() if column.any()}
        names = [a.name for a in schema.attributes[1:]]
        assert set(names) == used
        weka = data.dense_values()[:, 1:]
        expected = np.column_stack([counts_by_word[name] for name in names])
        np.testing.assert_array_equal(weka, expected)


@pytest.mark.parametrize("chain", list(CHAINS))
def test_weka_cross_validates_on_filterkit_output(word_counts, filterkit_script, chain):
    folder, counts, _ = word_counts
    out = folder / f"{chain}.arff"
    result = filterkit_script("-q", "-c", "first", "-o", out, counts, *CHAINS[chain])
    assert result.status == 0, result.stderr
    assert result.stderr == ""

    # The relation name is kept exactly (as filterkit and as Weka read it); the chain is a comment.
    assert read_arff(out)[0].relation == read_arff(counts)[0].relation
    assert weka_relation(out) == weka_relation(counts)
    first_line = out.read_text(encoding="utf-8").split("\n", 1)[0]
    assert first_line == f"% filterkit chain: -c first {' '.join(CHAINS[chain])} (filterkit {__version__})", (
        "the chain as typed, options included"
    )

    schema, data = read_arff(out)
    assert data.n_rows == 200
    if chain.startswith("ig-select"):
        assert len(schema) == 101
        words = data.values[:, 1:].tocsr()
        for row in range(words.shape[0]):
            present = words.data[words.indptr[row] : words.indptr[row + 1]]
            np.testing.assert_allclose(present, 1 / np.sqrt(len(present)), rtol=1e-12)  # presence, length 1
    report = run_weka("weka.classifiers.functions.SMO", "-t", str(out), "-c", "first", "-x", "5", "-v", "-o")
    percent, total = accuracy(report, "=== Stratified cross-validation ===")
    assert total == 200
    majority = majority_percent(out)
    assert percent > majority, f"SMO {percent}% is not above the majority class's {majority:.1f}%"


def test_weka_tests_on_a_chain_fitted_on_training_rows_only(word_counts, filterkit_script):
    folder, counts, _ = word_counts
    schema, data = read_arff(counts)
    rows = np.arange(data.n_rows)
    parts = {"train": rows[rows % 4 != 0], "test": rows[rows % 4 == 0]}
    for name, take in parts.items():
        with open(folder / f"split_{name}.arff", "w", encoding="utf-8", newline="\n") as stream:
            ArffWriter(stream, schema).write(Chunk(data.values[take], {}))
    model = folder / "model.json"
    fitted = filterkit_script(
        "-q",
        "-c",
        "first",
        "--save-model",
        model,
        "-o",
        folder / "train_out.arff",
        folder / "split_train.arff",
        "shape",
        "bns",
        "l2",
    )
    assert fitted.status == 0, fitted.stderr
    applied = filterkit_script("apply", model, folder / "split_test.arff", "-o", folder / "test_out.arff")
    assert applied.status == 0, applied.stderr
    assert (
        (folder / "test_out.arff")
        .read_text(encoding="utf-8")
        .startswith(f"% filterkit apply model.json: shape bns l2 (filterkit {__version__})\n")
    )
    assert weka_relation(folder / "test_out.arff") == weka_relation(counts)

    report = run_weka(
        "weka.classifiers.functions.SMO",
        "-t",
        str(folder / "train_out.arff"),
        "-T",
        str(folder / "test_out.arff"),
        "-c",
        "first",
        "-v",
        "-o",
    )
    percent, total = accuracy(report, "=== Error on test data ===")
    assert total == len(parts["test"])
    majority = majority_percent(folder / "test_out.arff")
    assert percent > majority, f"SMO {percent}% on held-out rows is not above the majority class's {majority:.1f}%"
