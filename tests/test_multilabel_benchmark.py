"""benchmarks/multilabel.py's builder: corpora.py's split, the labels kept, and one corpus in two formats that
filterkit reads as the same data."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))  # multilabel.py imports corpora.py beside it
spec = importlib.util.spec_from_file_location("multilabel", BENCHMARKS / "multilabel.py")
assert spec is not None and spec.loader is not None
multilabel = importlib.util.module_from_spec(spec)
spec.loader.exec_module(multilabel)
corpora = sys.modules["corpora"]


def test_only_the_chosen_facets_tags_are_read():
    record = {"Tag": "devel::lang:python, use::editing,\n works-with::text, use::TODO, role::program"}
    assert multilabel.debtags(record) == ["use::editing", "works-with::text"]
    assert multilabel.debtags({"Package": "untagged"}) == []


def test_labels_need_enough_training_documents_and_the_split_is_corpora_s(monkeypatch):
    monkeypatch.setattr(multilabel, "MIN_TRAINING_POSITIVES", 5)
    documents = [(f"p{n}", f"text {n}", ["use::editing", "use::viewing"][: 1 + (n < 2)]) for n in range(60)]
    documents += [(f"q{n}", f"view {n}", ["use::viewing"]) for n in range(2)]  # 4 viewing documents in all
    documents += [("p0-dbg", "text 0", ["works-with::text"]), ("untagged", "no tag", [])]
    train, test, labels = multilabel.split(documents)
    assert labels == ["use::editing"]
    expected_test = {f"text {n}" for n in range(60) if corpora.residue(f"p{n}", 10) in corpora.TEST_RESIDUES}
    assert {text for text, _ in test} == expected_test and 10 <= len(expected_test) <= 30
    assert {text for text, _ in train} == {f"text {n}" for n in range(60)} - expected_test
    assert all(tags == ["use::editing"] for _, tags in train + test)


def test_the_meka_and_json_lines_files_read_as_the_same_data(tmp_path, run_filterkit):
    labels = ["use::editing", "works-with::text", "works-with::image:raster"]
    rows = [
        ("An editor for 'text'\nwith \\ escapes", ["use::editing", "works-with::text"]),
        ("Views images", ["works-with::image:raster"]),
        ("Edits images, tabs\tand all", ["use::editing", "works-with::image:raster"]),
    ]
    meka, lines = tmp_path / "corpus.arff", tmp_path / "corpus.jsonl"
    multilabel.write_meka(meka, sorted(labels), rows)
    multilabel.write_jsonl(lines, rows)
    chain = ["words", "--lowercase", "bns", "l2"]
    from_meka = run_filterkit(meka, *chain)
    from_lines = run_filterkit("--labels-column", "labels", lines, *chain)
    assert from_meka.status == 0 and from_lines.status == 0, from_meka.stderr + from_lines.stderr
    assert from_meka.stdout == from_lines.stdout
    assert b"@relation 'corpus: -C 3'" in from_meka.stdout
    read = run_filterkit(meka).stdout.decode()
    assert read == run_filterkit("--labels-column", "labels", lines).stdout.decode()
    data = read.split("@data\n")[1].splitlines()
    assert [line.split(",")[:3] for line in data] == [["1", "0", "1"], ["0", "1", "0"], ["1", "1", "0"]]


@pytest.mark.nightly  # runs the benchmark script's run and summary: documented work (CONTRIBUTING.md)
@pytest.mark.skipif(shutil.which("filterkit") is None, reason="run calls the filterkit console script")
def test_run_and_summarize_check_the_formats_and_the_measures_on_a_small_corpus(tmp_path):
    words = {"use::editing": "editor edit", "works-with::audio": "sound audio", "works-with::text": "text plain"}
    rows = []
    for n in range(120):
        tags = [label for bit, label in enumerate(words) if (n + 1) >> bit & 1 or n % 7 == bit]
        text = " ".join(words[label].split()[n % 2] for label in tags) + f" package {n} word{n % 11} tool"
        rows.append((text, tags))
    (tmp_path / "data").mkdir()
    for part, kept in (("train", rows[:80]), ("test", rows[80:])):
        multilabel.write_meka(tmp_path / "data" / f"debtags-{part}.arff", sorted(words), kept)
        multilabel.write_jsonl(tmp_path / "data" / f"debtags-{part}.jsonl", kept)
    sizes = multilabel.corpus_sizes(sorted(words), rows[:80], rows[80:])
    (tmp_path / "data" / "sizes.json").write_text(json.dumps({**sizes, "lists": "Date: made up"}))
    multilabel.run(tmp_path, ["selection", "shape"], ["arff", "jsonl"])
    summary = multilabel.summarize(tmp_path)
    assert "against sklearn.metrics and scipy.stats on its --predictions: all agree" in summary
    assert "run 'selection': the same results, paired tests and predictions" in summary
    assert "run 'shape': the same results, paired tests and predictions" in summary
    run_chains = {chain for run in ("selection", "shape") for chain in multilabel.RUNS[run]}
    assert summary.count("| scikit-learn | `") == len(run_chains) == len(multilabel.CHAINS) - 2  # not shape's copies,
    # nor the route only the thresholds table cuts
