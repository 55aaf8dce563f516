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

Weka's ``StringToWordVector -C -L -W 100000`` turns them into word counts,
filterkit runs a chain on Weka's output (``filterkit.cli.run``, in this process:
what is tested is the file it writes, not the console script, which other tests
start), and Weka's ``SMO`` cross-validates (``-t OUT -c first -x 5``) on
filterkit's output.  The
chain is fitted on all 200 documents before Weka's folds are drawn, so that
accuracy is optimistic (supervised filtering sees the test folds); it shows
that Weka reads and learns from what filterkit writes.  A second test fits the
chain on 150 documents only (``--save-model``), applies it to the other 50
(``filterkit apply``) and lets Weka train on the one and test on the other
(``-t TRAIN -T TEST``).

Every Weka run of the module happens in two JVMs, started once by a module
fixture: one makes both sets of word counts (``chain_helpers.run_weka_filters``),
the other (``chain_helpers.run_weka_jobs``) reads every relation name and runs
every ``SMO`` evaluation exactly as the classifier's command line does.  Weka
reports a failure as an exception on stderr, so each job is checked for one and
its output for the lines parsed.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

from chain_helpers import NEEDS_WEKA, REAL, WekaJob, run_weka_filters, run_weka_jobs
from filterkit import __version__
from filterkit.arff import read_arff
from filterkit.arff.writer import ArffWriter
from filterkit.schema import NOMINAL, STRING, Attribute, Chunk, Schema
from filterkit.testing import Run, run_filterkit

WEKA_REUTERS = Path("/usr/share/doc/weka/examples/ReutersGrain-train.arff")
TOKENIZER_DELIMITERS = " \r\n\t.,;:'\"()?!"  # WordTokenizer's default, as StringToWordVector uses it

pytestmark = NEEDS_WEKA

CHAINS = {
    "shape-bns-l2": ["shape", "bns", "l2"],
    "ig-select-binarize-l2": ["ig", "--presence", "select", "--top", "100", "binarize", "l2"],
}


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
    """The first 60 grain and 140 other articles of Weka's own ReutersGrain-train.arff (its caller
    checks that it is installed)."""
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
#: Why a source is skipped when it is not there.
MISSING_SOURCE = {"weka-reuters-grain": f"{WEKA_REUTERS} is not installed (Debian's weka package ships it)"}
STRING_TO_WORD_VECTOR = ["weka.filters.unsupervised.attribute.StringToWordVector", "-C", "-L", "-W", "100000"]
SMO = "weka.classifiers.functions.SMO"


@dataclasses.dataclass
class Source:
    """One set of documents: Weka's word counts of it, what the documents were made of, the
    filterkit runs on the counts and the Weka jobs run on filterkit's output."""

    folder: Path
    counts: Path
    made_of: dict
    filterkit: dict[str, Run] = dataclasses.field(default_factory=dict)
    weka: dict[str, WekaJob] = dataclasses.field(default_factory=dict)


def split_train_test(source: Source) -> dict[str, np.ndarray]:
    """Weka's word counts as two files, every fourth row held out; the rows of each."""
    schema, data = read_arff(source.counts)
    rows = np.arange(data.n_rows)
    parts = {"train": rows[rows % 4 != 0], "test": rows[rows % 4 == 0]}
    for name, take in parts.items():
        with open(source.folder / f"split_{name}.arff", "w", encoding="utf-8", newline="\n") as stream:
            ArffWriter(stream, schema).write(Chunk(data.values[take], {}))
    return parts


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict[str, Source]:
    """Every source that is there: Weka's word counts (one JVM), filterkit's chains on them, and
    Weka's relation names and SMO evaluations of filterkit's output (one more JVM)."""
    root = tmp_path_factory.mktemp("interop")
    found: dict[str, Source] = {}
    for name, make in SOURCES.items():
        if name == "weka-reuters-grain" and not WEKA_REUTERS.is_file():
            continue
        folder = root / name
        folder.mkdir()
        found[name] = Source(folder, folder / "counts.arff", make(folder / "text.arff"))
    run_weka_filters(
        root,
        [
            [*STRING_TO_WORD_VECTOR, "-c", "last", "-i", str(s.folder / "text.arff"), "-o", str(s.counts)]
            for s in found.values()
        ],
    )
    jobs: list[tuple[Source, str, list[str]]] = []
    for source in found.values():
        assert source.counts.is_file() and source.counts.stat().st_size > 0
        jobs.append((source, "relation counts", ["relation", str(source.counts)]))
        for chain, stages in CHAINS.items():
            out = source.folder / f"{chain}.arff"
            source.filterkit[chain] = run_filterkit("-q", "-c", "first", "-o", out, source.counts, *stages)
            jobs.append((source, f"relation {chain}", ["relation", str(out)]))
            jobs.append(
                (source, f"cv {chain}", ["evaluate", SMO, "-t", str(out), "-c", "first", "-x", "5", "-v", "-o"])
            )
        split_train_test(source)
        folder = source.folder
        model, train_out = folder / "model.json", folder / "train_out.arff"
        source.filterkit["fit"] = run_filterkit(
            "-q",
            "-c",
            "first",
            "--save-model",
            model,
            "-o",
            train_out,
            folder / "split_train.arff",
            "shape",
            "bns",
            "l2",
        )
        source.filterkit["apply"] = run_filterkit(
            "apply", folder / "model.json", folder / "split_test.arff", "-o", folder / "test_out.arff"
        )
        jobs.append((source, "relation test_out", ["relation", str(folder / "test_out.arff")]))
        train, test = str(folder / "train_out.arff"), str(folder / "test_out.arff")
        jobs.append((source, "held out", ["evaluate", SMO, "-t", train, "-T", test, "-c", "first", "-v", "-o"]))
    for (source, key, _), result in zip(jobs, run_weka_jobs(root, [job for _, _, job in jobs])):
        source.weka[key] = result
    return found


def source_named(sources: dict[str, Source], name: str) -> Source:
    """The source of that name; the test skips, with the reason, when it is not there."""
    if name not in sources:
        pytest.skip(MISSING_SOURCE[name])
    return sources[name]


def weka_output(source: Source, key: str) -> str:
    """The output of one of the source's Weka jobs, after checking it ran without an exception."""
    job = source.weka[key]
    assert job.ok, job.output[-3000:]
    return job.output


def weka_relation(source: Source, key: str) -> str:
    """The relation name of a file as Weka reads it."""
    return weka_output(source, f"relation {key}").rstrip("\n")


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


@pytest.mark.parametrize("name", list(SOURCES))
def test_weka_word_counts_are_read_as_weka_wrote_them(sources, name):
    source = source_named(sources, name)
    counts, made_of = source.counts, source.made_of
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
@pytest.mark.parametrize("name", list(SOURCES))
def test_weka_cross_validates_on_filterkit_output(sources, name, chain):
    source = source_named(sources, name)
    counts, out = source.counts, source.folder / f"{chain}.arff"
    result = source.filterkit[chain]
    assert result.status == 0, result.stderr
    assert result.stderr == ""

    # The relation name is kept exactly (as filterkit and as Weka read it); the chain is a comment.
    assert read_arff(out)[0].relation == read_arff(counts)[0].relation
    assert weka_relation(source, chain) == weka_relation(source, "counts")
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
    report = weka_output(source, f"cv {chain}")
    percent, total = accuracy(report, "=== Stratified cross-validation ===")
    assert total == 200
    majority = majority_percent(out)
    assert percent > majority, f"SMO {percent}% is not above the majority class's {majority:.1f}%"


@pytest.mark.parametrize("name", list(SOURCES))
def test_weka_tests_on_a_chain_fitted_on_training_rows_only(sources, name):
    source = source_named(sources, name)
    folder = source.folder
    fitted, applied = source.filterkit["fit"], source.filterkit["apply"]
    assert fitted.status == 0, fitted.stderr
    assert applied.status == 0, applied.stderr
    assert (
        (folder / "test_out.arff")
        .read_text(encoding="utf-8")
        .startswith(f"% filterkit apply model.json: shape bns l2 (filterkit {__version__})\n")
    )
    assert weka_relation(source, "test_out") == weka_relation(source, "counts")

    report = weka_output(source, "held out")
    percent, total = accuracy(report, "=== Error on test data ===")
    _, test_rows = read_arff(folder / "split_test.arff")
    assert total == test_rows.n_rows == 50
    majority = majority_percent(folder / "test_out.arff")
    assert percent > majority, f"SMO {percent}% on held-out rows is not above the majority class's {majority:.1f}%"
