"""``apply`` writes the relation name of the rows it is given, in every format (issue 72 item 11c): an ARFF
file's own ``@relation`` (as documented), and for CSV, JSON Lines or svmlight the name the format gives that
file, as a chain run on it would, never the training file's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

SAMPLES = Path(__file__).parent.parent / "arff_samples"


def relation_of(arff: bytes) -> str:
    return next(line for line in arff.decode().splitlines() if line.startswith("@relation ")).split(" ", 1)[1]


@pytest.mark.parametrize(
    "sample, test_name, relation",
    [
        ("reuters_grain.csv", "new-grain.csv", "new-grain"),
        ("reuters_grain.jsonl", "new-grain.jsonl", "new-grain"),
        ("iris.arff", "new-iris.arff", "iris"),  # an ARFF file's own relation, whatever its name
    ],
)
def test_apply_writes_the_new_rows_relation(run_filterkit, tmp_path, sample, test_name, relation):
    model = tmp_path / "model.json"
    chain = ("words", "l2") if sample != "iris.arff" else ("minmax",)
    fitted = run_filterkit("-q", "--save-model", model, "-o", tmp_path / "train.arff", SAMPLES / sample, *chain)
    assert fitted.status == 0, fitted.stderr
    test_path = tmp_path / test_name
    shutil.copy(SAMPLES / sample, test_path)
    applied = run_filterkit("apply", "-q", model, test_path)
    assert applied.status == 0, applied.stderr
    assert relation_of(applied.stdout) == relation
    assert relation_of(run_filterkit("-q", test_path, *chain).stdout) == relation  # as a chain run on it names it


def test_apply_on_svmlight_keeps_the_extension_as_libsvmloader_does(run_filterkit, tmp_path):
    train_path, test_path = tmp_path / "train.svm", tmp_path / "new.svm"
    train_path.write_text("1 1:0.5 2:1\n0 2:2\n1 1:1\n0 2:1.5\n")
    shutil.copy(train_path, test_path)
    model = tmp_path / "model.json"
    assert run_filterkit("-q", "--save-model", model, "-o", tmp_path / "t.arff", train_path, "l2").status == 0
    applied = run_filterkit("apply", "-q", model, test_path)
    assert applied.status == 0, applied.stderr
    assert relation_of(applied.stdout) == relation_of(run_filterkit("-q", test_path, "l2").stdout) == "new.svm"
