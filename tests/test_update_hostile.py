"""Issue 72, item 2: a model carries the stop words it was fitted with, and no command opens the file its
``--stopwords`` names.  After the fit that file may be edited, replaced by other content (``/etc/passwd``'s)
or by a FIFO, or removed: ``update``, ``apply`` and ``predict`` give what the refit on the stop words the
model was fitted with gives, and never open it."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from pathlib import Path

import pytest
from test_update import fitted, reuters_documents, split_arff

from chain_helpers import REAL, without_comments
from filterkit.distributed import DaskEngine
from filterkit.option_files import files_of, option_file, sent_files
from filterkit.partitions import file_plan
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.sources import FileSource

STOP_WORDS = "the\nof\nsaid\nwheat\n"
#: What the stop word file becomes after the fit.
REPLACEMENTS = ["edited", "passwd", "fifo", "removed"]
PASSWD = "root:x:0:0:root:/root:/bin/bash\ngrain\ncorn\nthe\n"
CHAINS = {
    "words shape bns l2": [
        *("words", "--stopwords", "stop.txt", "--lowercase", "--words-to-keep", "100000", "shape", "bns", "l2")
    ],
    "words --hash": ["words", "--stopwords", "stop.txt", "--hash", "6"],
}


@contextlib.contextmanager
def replaced(path: Path, how: str):
    """``path`` replaced as ``how`` says; yields the list of the times a reader opened it (a FIFO's opens
    are seen by a writer that gives each reader the word 'grain', so that a reader never waits)."""
    opened: list[float] = []
    path.unlink()
    if how == "edited":
        path.write_text("grain\ncorn\n")
    elif how == "passwd":
        path.write_text(PASSWD)
    if how != "fifo":
        yield opened
        return
    os.mkfifo(path)
    done = threading.Event()

    def give_each_reader_a_word() -> None:
        while not done.is_set():
            try:
                writer = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader yet
                time.sleep(0.005)
                continue
            opened.append(time.monotonic())
            os.write(writer, b"grain\n")
            os.close(writer)

    watcher = threading.Thread(target=give_each_reader_a_word, daemon=True)
    watcher.start()
    try:
        yield opened
    finally:
        done.set()
        watcher.join()


@pytest.mark.parametrize("how", REPLACEMENTS)
@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_update_uses_the_models_stop_words_not_the_file_it_names(run_filterkit, tmp_path, monkeypatch, chain, how):
    monkeypatch.chdir(tmp_path)
    first, more, both = split_arff(reuters_documents(tmp_path), tmp_path, 40)
    stopwords = tmp_path / "stop.txt"
    stopwords.write_text(STOP_WORDS)
    fitted(run_filterkit, tmp_path / "first.json", first, CHAINS[chain])
    fitted(run_filterkit, tmp_path / "both.json", both, CHAINS[chain])
    with replaced(stopwords, how) as opened:
        result = run_filterkit("update", "-q", tmp_path / "first.json", more, "-o", tmp_path / "updated.json")
    assert result.status == 0, result.stderr
    assert opened == []
    assert (tmp_path / "updated.json").read_bytes() == (tmp_path / "both.json").read_bytes()


@pytest.mark.parametrize("how", REPLACEMENTS)
def test_apply_uses_the_models_stop_words_not_the_file_it_names(run_filterkit, tmp_path, monkeypatch, how):
    monkeypatch.chdir(tmp_path)
    first, more, _ = split_arff(reuters_documents(tmp_path), tmp_path, 40)
    stopwords = tmp_path / "stop.txt"
    stopwords.write_text(STOP_WORDS)
    fitted(run_filterkit, tmp_path / "model.json", first, CHAINS["words --hash"])
    before = run_filterkit("apply", tmp_path / "model.json", more)
    with replaced(stopwords, how) as opened:
        after = run_filterkit("apply", tmp_path / "model.json", more)
    assert before.status == after.status == 0, after.stderr
    assert opened == []
    assert without_comments(after.stdout) == without_comments(before.stdout)


@pytest.mark.parametrize("how", REPLACEMENTS)
def test_predict_uses_the_models_stop_words_not_the_file_it_names(run_filterkit, tmp_path, monkeypatch, how):
    monkeypatch.chdir(tmp_path)
    first, more, _ = split_arff(REAL / "reuters_grain_sample.arff", tmp_path, 40)
    stopwords = tmp_path / "stop.txt"
    stopwords.write_text(STOP_WORDS)
    trained = run_filterkit(
        "train",
        "-q",
        "-o",
        "model.json",
        "--svm-c-values",
        "1",
        "--svm-inner-folds",
        "2",
        first,
        *CHAINS["words --hash"],
    )
    assert trained.status == 0, trained.stderr
    before = run_filterkit("predict", "model.json", more)
    with replaced(stopwords, how) as opened:
        after = run_filterkit("predict", "model.json", more)
    assert before.status == after.status == 0, after.stderr
    assert opened == []
    assert before.stdout.count(b"\n") == 1 + (more.read_text().split("@data\n", 1)[1].count("\n"))
    assert after.stdout == before.stdout


def test_the_dask_client_sends_only_the_files_of_the_stage_being_fitted(tmp_path, monkeypatch):
    """A fitted stage carries what it read in its state: the writing pass's tasks need no file, so the client
    opens none there (a FIFO would hang it, a file edited since would differ from the one the fit read)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "stop.txt").write_text(STOP_WORDS)
    documents = str(REAL / "reuters_grain_sample.arff")
    chain = Chain([load_plugins().make_stage("words", {"stopwords": "stop.txt"})], class_spec="last")
    plan = file_plan(documents, documents)
    engine = DaskEngine(client=None, plugins_dir=None, chunk_rows=100)
    chain.input_schema = plan.schema
    assert engine.recipe(chain, plan, fitting=0).files == {"stop.txt": STOP_WORDS.encode()}
    chain.fit(FileSource(documents))
    assert engine.recipe(chain, plan).files == {}


def test_a_task_reads_no_file_the_client_did_not_send_nor_another_the_client_could_not_read(tmp_path, monkeypatch):
    """A worker's file system is not the client's: a path is looked up in what the client sent alone, and a file
    the client could not read fails as it failed there."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "stop.txt").write_text(STOP_WORDS)
    missing = load_plugins().make_stage("words", {"stopwords": "missing.txt"})
    with sent_files(files_of([missing])):
        with pytest.raises(FileNotFoundError, match="No such file"):
            option_file("missing.txt")
        with pytest.raises(FileNotFoundError, match="not sent with the task"):
            option_file("stop.txt")


def test_a_model_saved_before_it_recorded_its_stop_words_is_refused_not_refitted_on_the_file(
    run_filterkit, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    first, more, _ = split_arff(reuters_documents(tmp_path), tmp_path, 40)
    (tmp_path / "stop.txt").write_text(STOP_WORDS)
    fitted(run_filterkit, tmp_path / "first.json", first, CHAINS["words shape bns l2"])
    model = json.loads((tmp_path / "first.json").read_text())
    del model["stages"][0]["state"]["stopwords"]  # as models were saved before they recorded it
    (tmp_path / "first.json").write_text(json.dumps(model))
    result = run_filterkit("update", "-q", "first.json", more, "-o", "updated.json")
    assert result.status == 1 and not (tmp_path / "updated.json").exists()
    assert result.stderr == (
        "filterkit: error: first.json: stage 'words': the model does not record the stop words of --stopwords "
        "'stop.txt' (it was saved before models held them), and no file a model names is read: refit the chain\n"
    )
