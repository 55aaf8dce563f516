"""An outside format plugin (issue 73, item 1): examples/filterkit-fasttext, loaded from ``--plugins-dir``, reads
fastText's ``__label__`` lines for ``--from``, suffix detection, ``--engine dask``, ``filterkit.sklearn.load``,
``train`` and ``predict``, each giving what the same documents give as ARFF."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import filterkit.sklearn
from chain_helpers import REAL
from filterkit.arff import read_arff
from filterkit.arff.writer import write_arff
from filterkit.plugins import load_plugins, running_registry
from filterkit.schema import NOMINAL, STRING, Attribute, Chunk, Schema

FASTTEXT_DIR = Path(__file__).resolve().parents[1] / "examples" / "filterkit-fasttext"
#: The words of each document kept in its line: fastText lines are short.
WORDS = 40


@pytest.fixture(scope="module")
def grain(tmp_path_factory):
    """The grain documents as fastText lines and as ARFF (:func:`write_grain_files`)."""
    return write_grain_files(tmp_path_factory.mktemp("fasttext"))


def write_grain_files(folder: Path) -> Path:
    """The 60 Reuters grain documents, the first 40 as ``train`` and the rest as ``test``, each written into
    ``folder`` as fastText lines (``train.ft``) and as the ARFF the format should read them as (``train.arff``)."""
    _, chunk = read_arff(REAL / "reuters_grain_sample.arff")
    texts = [" ".join(text.split()[:WORDS]) for text in chunk.text[0]]
    labels = ["grain" if code == 1 else "other" for code in chunk.values[:, 1]]
    classes = tuple(dict.fromkeys(labels[:40]))  # the order the reader meets them in the training lines
    for name, rows in (("train", slice(0, 40)), ("test", slice(40, 60))):
        lines = [f"__label__{label} {text}\n" for label, text in zip(labels[rows], texts[rows])]
        (folder / f"{name}.ft").write_text("".join(lines), encoding="utf-8")
        schema = Schema(name, (Attribute("text", STRING), Attribute("class", NOMINAL, labels=classes)))
        codes = np.array([classes.index(label) for label in labels[rows]], dtype=np.float64)
        values = np.column_stack([np.zeros(len(codes)), codes])
        with open(folder / f"{name}.arff", "wb") as stream:
            write_arff(stream, schema, [Chunk(values, {0: texts[rows]})])
    return folder


def test_from_fasttext_reads_labels_text_and_unlabelled_lines(run_filterkit, tmp_path):
    path = tmp_path / "news.txt"
    path.write_bytes(b"__label__grain wheat  exports rose\n\nfeed corn __label__other and cocoa\nno label here\n")
    result = run_filterkit("--from", "fasttext", path, plugins_dir=FASTTEXT_DIR)
    assert result.status == 0, result.stderr
    assert result.stdout.decode().split("\n", 1)[1] == (
        "@relation news\n\n"
        "@attribute text string\n"
        "@attribute class {grain,other}\n\n"
        "@data\n"
        "'wheat exports rose',grain\n"
        "'feed corn and cocoa',other\n"
        "'no label here',?\n"
    )


@pytest.mark.parametrize("suffix", [".ft", ".fasttext"])
def test_suffix_picks_the_format_and_words_give_the_arff_output(run_filterkit, grain, tmp_path, suffix):
    renamed = tmp_path / f"train{suffix}"
    renamed.write_bytes((grain / "train.ft").read_bytes())
    from_fasttext = run_filterkit(renamed, "words", "--lowercase", plugins_dir=FASTTEXT_DIR)
    from_arff = run_filterkit(grain / "train.arff", "words", "--lowercase")
    assert from_fasttext.status == 0, from_fasttext.stderr
    assert from_fasttext.stdout == from_arff.stdout
    assert b"@attribute wheat numeric" in from_fasttext.stdout


@pytest.mark.slow
def test_dask_engine_gives_the_local_output(filterkit_script, grain):
    chain = ("words", "--counts", "--lowercase", "shape", "bns", "l2")
    local = filterkit_script("--plugins-dir", FASTTEXT_DIR, grain / "train.ft", *chain)
    dask = filterkit_script(
        "--plugins-dir", FASTTEXT_DIR, "--engine", "dask", "--partitions", "3", grain / "train.ft", *chain
    )
    assert local.status == 0, local.stderr
    assert dask.status == 0, dask.stderr
    assert dask.stdout == local.stdout


def test_sklearn_load_reads_texts_and_labels(grain):
    with running_registry(lambda: load_plugins(FASTTEXT_DIR)):  # load takes no plugins folder: the run's registry
        texts, labels, names = filterkit.sklearn.load(grain / "train.ft", format="fasttext")
    schema, chunk = read_arff(grain / "train.arff")
    classes = schema.attributes[1].labels
    assert names == ["text"]
    assert texts[:, 0].tolist() == chunk.text[0]
    assert labels.tolist() == [classes[int(code)] for code in chunk.values[:, 1]]


def test_train_then_predict_decide_as_on_the_arff_files(run_filterkit, grain, tmp_path):
    chain = ("words", "--counts", "--lowercase", "bns", "--multiply", "l2")
    trained = run_filterkit("train", "-o", tmp_path / "ft.json", grain / "train.ft", *chain, plugins_dir=FASTTEXT_DIR)
    assert trained.status == 0, trained.stderr
    assert run_filterkit("train", "-o", tmp_path / "arff.json", grain / "train.arff", *chain).status == 0
    predicted = run_filterkit("predict", tmp_path / "ft.json", grain / "test.ft", plugins_dir=FASTTEXT_DIR)
    assert predicted.status == 0, predicted.stderr
    lines = predicted.stdout.decode().splitlines()
    assert lines[0] == "row,label,decision,probability"
    assert len(lines) == 21
    assert predicted.stdout == run_filterkit("predict", tmp_path / "arff.json", grain / "test.arff").stdout


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (b"__label__a one\n\n__label__a __label__b two\n", 3, "2 labels (__label__a, __label__b): a line has one"),
        (b"__label__a one\n__label__ two\n", 2, "__label__ with no label name after it"),
        (b"__label__a one\n\xff two\n", 2, "not UTF-8 text (invalid start byte at byte 1)"),
    ],
)
def test_a_malformed_line_is_one_error_naming_it(run_filterkit, tmp_path, text, line, message):
    path = tmp_path / "bad.ft"
    path.write_bytes(text)
    result = run_filterkit(path, "words", plugins_dir=FASTTEXT_DIR)
    assert result.status == 1
    assert result.stdout == b""
    assert result.stderr.startswith(f"filterkit: error: {path}:{line}: {message}")
    assert result.stderr.count("\n") == 1


def test_predict_refuses_a_label_the_model_never_saw(run_filterkit, grain, tmp_path):
    model = tmp_path / "m.json"
    assert run_filterkit("train", "-o", model, grain / "train.ft", "words", plugins_dir=FASTTEXT_DIR).status == 0
    unknown = tmp_path / "new.ft"
    unknown.write_bytes(b"__label__grain wheat\n__label__corn maize crop\n")
    result = run_filterkit("predict", model, unknown, plugins_dir=FASTTEXT_DIR)
    assert result.status == 1
    assert result.stderr == (
        f"filterkit: error: {unknown}:2: the label 'corn' is not one of the model's classes (other, grain)\n"
    )


def test_predict_refuses_a_model_not_trained_on_fasttext_lines(run_filterkit, tmp_path):
    model = tmp_path / "iris.json"
    assert run_filterkit("train", "-o", model, "--positive", "Iris-setosa", REAL / "iris.arff", "l2").status == 0
    lines = tmp_path / "new.ft"
    lines.write_bytes(b"__label__Iris-setosa small petals\n")
    result = run_filterkit("predict", model, lines, plugins_dir=FASTTEXT_DIR)
    assert result.status == 1
    assert result.stderr == (
        f"filterkit: error: {lines}: the model was not trained on fastText data (attributes text and class)\n"
    )
