"""A fit reads its input once: each pass keeps the chunks its stage is given (or, for ``words``, its own form of
them) and the next pass, and the one writing the output, read them back instead of the input
(:meth:`filterkit.runner.Chain.fit` with ``keep``).  The output must be the bytes the saved model's ``apply``
writes, whatever the chain and the chunk size; a pass that cannot keep leaves the pass before it to be read."""

from __future__ import annotations

import errno
import io
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_words_kept import documents_file

from chain_helpers import without_comments
from filterkit import sources
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.schema import Chunk
from filterkit.sources import FileSource, KeptChunks, StreamSource
from filterkit.stage import Stage

REAL = Path(__file__).parent / "data" / "real"


def made(name: str, **params) -> Stage:
    return load_plugins().make_stage(name, params)


class CountedPasses(FileSource):
    """A file source that counts the passes over its input."""

    passes = 0

    def chunks(self):
        self.passes += 1
        return super().chunks()


def dense_rows(chunks) -> np.ndarray:
    return np.vstack([chunk.dense_values() for chunk in chunks])


def test_words_ig_select_reads_its_documents_once(tmp_path):
    data = documents_file(tmp_path)
    stages = [made("words", counts=True), made("ig"), made("select", top=5), made("l2")]
    source, kept = CountedPasses(str(data), 40), KeptChunks()
    chain = Chain(stages).fit(source, keep=kept)
    # words' pass kept its token numbers; ig's pass read them back and kept the counts it was given
    assert source.passes == 1
    assert (kept.stage_position, kept.own_form, kept.rows) == (1, False, 300)
    written = dense_rows(chain.transform_kept(kept))
    kept.close()
    assert source.passes == 1
    expected = dense_rows(chain.transform(FileSource(str(data)).chunks()))
    assert written.shape == expected.shape == (300, 6)  # the five best-ranked features and the class
    assert np.array_equal(written, expected, equal_nan=True)


@pytest.mark.parametrize(
    "stages, position",
    [
        (["shape", "bns", "l2"], 0),  # bns's statistics come from shape's pass: the writing pass reads shape's input
        (["l2", "ig", "select", "--top", "40", "discretize"], 3),  # ig's pass keeps l2's output; discretize's, select's
        (["minmax", "pow", "dfreq", "select", "--top", "9"], 1),  # dfreq's statistics come from pow's pass
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else str(value),
)
def test_a_numeric_chain_reads_its_file_once_and_writes_what_apply_writes(run_filterkit, tmp_path, stages, position):
    data, model = REAL / "grain_wc.arff", tmp_path / "m.json"
    made_stages, words = [], list(stages)
    while words:
        name, params = words.pop(0), {}
        while words and words[0].startswith("--"):
            option = words.pop(0).removeprefix("--")
            params[option] = int(words.pop(0))
        made_stages.append(made(name, **params))
    source, kept = CountedPasses(str(data), 100), KeptChunks()
    Chain(made_stages, class_spec="first").fit(source, keep=kept)
    assert source.passes == 1 and kept.stage_position == position and not kept.own_form
    kept.close()
    outputs = set()
    for chunk_rows in ("1", "7", "100000"):
        fitted = run_filterkit("-c", "first", "--chunk-rows", chunk_rows, "--save-model", model, data, *stages)
        assert fitted.status == 0, fitted.stderr
        applied = run_filterkit("apply", model, data)
        assert applied.status == 0, applied.stderr
        assert without_comments(fitted.stdout) == without_comments(applied.stdout)
        outputs.add(without_comments(fitted.stdout))
    assert len(outputs) == 1 and next(iter(outputs)).count(b"\n{") == 1554


def test_a_spooled_stream_is_not_copied_again_but_a_later_stage_is_kept():
    data = (REAL / "iris.arff").read_bytes()
    source = StreamSource(io.BufferedReader(io.BytesIO(data)), chunk_rows=40)
    source.spool()
    kept = KeptChunks()
    Chain([made("bns")]).fit(source, keep=kept)
    assert kept.stage_position is None  # its passes read the spool's parsed chunks already
    kept = KeptChunks()
    Chain([made("l2"), made("minmax")]).fit(source, keep=kept)
    assert (kept.stage_position, kept.rows) == (1, 150)
    kept.close()
    source.close()


def test_a_pass_that_cannot_keep_leaves_the_pass_before_it_to_be_read(run_filterkit, tmp_path, monkeypatch):
    data, model = REAL / "grain_wc.arff", tmp_path / "m.json"
    stages = [made("ig"), made("l2"), made("bns")]
    kept_by = []

    def fills_up(spool, chunk, **options):
        if len(kept_by) and kept_by[-1] == 2:  # bns's pass (position 2): the folder is full
            raise OSError(errno.ENOSPC, "No space left on device")
        return save_chunk(spool, chunk, **options)

    def keeping(self, stage_position, kept, class_column, own_form):
        kept_by.append(stage_position)
        return keep(self, stage_position, kept, class_column, own_form)

    save_chunk, keep = sources._save_chunk, KeptChunks.keep
    monkeypatch.setattr(sources, "_save_chunk", fills_up)
    monkeypatch.setattr(KeptChunks, "keep", keeping)
    source, kept = CountedPasses(str(data), 100), KeptChunks()
    Chain(stages, class_spec="first").fit(source, keep=kept)
    # ig's chunks are still the ones to read: the input was read once, bns's pass gave up at its first chunk
    assert source.passes == 1 and (kept.stage_position, kept.rows) == (0, 1554)
    assert kept_by.count(0) == 16 and kept_by.count(2) == 1
    kept.close()
    result = run_filterkit("-c", "first", "--save-model", model, data, "ig", "l2", "bns")
    applied = run_filterkit("apply", model, data)
    assert result.status == applied.status == 0, result.stderr + applied.stderr
    assert without_comments(result.stdout) == without_comments(applied.stdout)
    assert result.stdout.count(b"\n{") == 1554


@pytest.mark.skipif(sys.platform != "linux", reason="sets a file size limit (RLIMIT_FSIZE) for the run")
# ig's pass keeps 1.1 MB at --chunk-rows 7, bns's 1.6 MB: both give up, bns's alone, neither
@pytest.mark.parametrize("limit", [20_000, 1_200_000, 2_000_000])
def test_a_file_size_limit_in_the_temporary_folder_gives_the_output_of_apply(run_filterkit, tmp_path, limit):
    """Past the limit a write fails with EFBIG (Python ignores SIGXFSZ), in a buffered write or its flush.  The
    output is the same whichever pass gave up."""
    data, model = REAL / "grain_wc.arff", tmp_path / "m.json"
    assert run_filterkit("-c", "first", "--save-model", model, data, "ig", "l2", "bns").status == 0
    applied = run_filterkit("apply", model, data)

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    command = [sys.executable, "-m", "filterkit", "-q", "--chunk-rows", "7", "-c", "first", str(data), "ig", "l2"]
    result = subprocess.run([*command, "bns"], capture_output=True, preexec_fn=limited, cwd=tmp_path)
    assert (result.returncode, result.stderr) == (0, b"")
    assert without_comments(result.stdout) == without_comments(applied.stdout)


@pytest.mark.parametrize("chunk_rows", ["1", "7", "10000"])
@pytest.mark.parametrize("from_stdin", [False, True], ids=["file", "stdin"])
def test_documents_through_words_and_learners_write_what_apply_writes(run_filterkit, tmp_path, chunk_rows, from_stdin):
    """Two string attributes, a number, missing values and instance weights; words keeps its form, ig's pass
    the counts, shape's (after select) what select gave it."""
    data, model = documents_file(tmp_path), tmp_path / "m.json"
    stages = ["words", "--counts", "ig", "select", "--top", "6", "shape", "bns", "l2"]
    given = ("-",) if from_stdin else (data,)
    stdin = data.read_bytes() if from_stdin else None
    fitted = run_filterkit("--chunk-rows", chunk_rows, "--save-model", model, *given, *stages, stdin=stdin)
    applied = run_filterkit("apply", model, data)
    assert fitted.status == applied.status == 0, fitted.stderr + applied.stderr
    assert without_comments(fitted.stdout) == without_comments(applied.stdout)
    assert fitted.stdout.count(b"\n{") == 300 and b"} {" in fitted.stdout  # weights written


def test_documents_given_to_a_stage_without_a_form_of_its_own_are_not_kept(tmp_path):
    data = documents_file(tmp_path)
    kept = KeptChunks()
    Chain([made("words", char_ngrams="2-3")]).fit(FileSource(str(data), 50), keep=kept)
    assert kept.stage_position is None


def test_passes_reading_kept_chunks_report_the_inputs_bytes_and_rows(run_filterkit):
    result = run_filterkit("--progress", "-c", "first", REAL / "grain_wc.arff", "ig", "l2", "bns")
    assert result.status == 0, result.stderr
    # ig's pass read the file; bns's read what ig's kept, the writing pass what bns's kept
    assert result.stderr.count("100% of 1.2 MB, 1,554 rows in") == 3, result.stderr


@pytest.mark.skipif(sys.platform != "linux", reason="sets a file size limit (RLIMIT_FSIZE) for the run")
def test_standard_input_without_room_to_spool_is_an_error_naming_the_folder(tmp_path):
    """Standard input must be spooled to be read again: past the limit the run stops, saying where and why (the
    spool's last buffered bytes, which cannot be written either, do not replace that error)."""
    data = (REAL / "grain_wc.arff").read_bytes()

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))

    command = [sys.executable, "-m", "filterkit", "-q", "--chunk-rows", "7", "-c", "first", "-", "ig", "l2", "bns"]
    result = subprocess.run(command, input=data, capture_output=True, preexec_fn=limited, cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, b"")
    assert result.stderr.decode().startswith("filterkit: error: cannot spool <stdin> into the temporary folder ")
    assert "(File too large): free space there, or set TMPDIR" in result.stderr.decode()


def test_weights_given_as_a_list_are_kept_as_an_array(tmp_path):
    chunk = Chunk(np.array([[1.0], [2.0]]), weights=[0.5, 3])
    with open(tmp_path / "kept.chunks", "w+b") as spool:
        sources._save_chunk(spool, chunk, narrow=True)
        spool.seek(0)
        back, _ = sources._load_chunk(spool)
    assert back.weights.dtype == np.float64 and back.weights.tolist() == [0.5, 3.0]


def test_a_folds_training_documents_are_cut_into_words_once(tmp_path, monkeypatch):
    """``evaluate``'s and ``train``'s fit of a chain on a fold (:func:`~filterkit.evaluation.fitted_chain`) cuts
    the fold's training documents into words once: ``idf``'s pass and the training rows' features read what
    ``words``' pass kept (the documents were cut three times), the features those of the documents cut again."""
    from filterkit.arff import read_arff
    from filterkit.evaluation import Dataset, fitted_chain
    from filterkit.schema import take_rows
    from filterkit.tasks import ChainSpec

    registry = load_plugins()
    schema, data = read_arff(documents_file(tmp_path))
    dataset = Dataset(schema, take_rows(data, np.flatnonzero(~np.isnan(data.column(3)))), 3)
    words = type(registry.make_stage("words", {}))
    counted, cut = words.counted, []

    def counting(self, chunk, *arguments, **options):
        cut.append(chunk.n_rows)
        return counted(self, chunk, *arguments, **options)

    monkeypatch.setattr(words, "counted", counting)
    train, test = np.arange(200), np.arange(200, dataset.data.n_rows)
    chain = ChainSpec("words --counts idf l2", [("words", {"counts": True}), ("idf", {}), ("l2", {})])
    prepared = fitted_chain(registry, dataset, chain, train)[1]
    (features, codes), tested = prepared(train), prepared(test)
    assert cut == [200, len(test)]
    again, again_codes = prepared(train.copy())  # other rows than the fit's: cut from the documents
    assert cut == [200, len(test), 200]
    assert features.shape == again.shape and features.shape[1] > 10
    assert (features != again).nnz == 0 and np.array_equal(codes, again_codes)
    assert tested[0].shape == (len(test), features.shape[1])
    once_more = prepared(train)[0]  # what was kept is read once, then the documents are cut again
    assert cut == [200, len(test), 200, 200] and (once_more != features).nnz == 0


def test_what_a_refused_chain_kept_is_closed_at_once(tmp_path, monkeypatch):
    """A chain refused after its fit (here: nothing left but the class) closes the file its passes kept (``words``'
    counts) before the error leaves :func:`~filterkit.evaluation.fitted_chain`, not when the error's frames are
    collected; rows in memory are not copied (:attr:`~filterkit.sources.MemorySource.rereads_chunks`)."""
    from filterkit.arff import read_arff
    from filterkit.errors import FilterkitError
    from filterkit.evaluation import Dataset, fitted_chain
    from filterkit.schema import take_rows
    from filterkit.tasks import ChainSpec

    schema, data = read_arff(documents_file(tmp_path))
    dataset = Dataset(schema, take_rows(data, np.flatnonzero(~np.isnan(data.column(3)))), 3)
    close, closed = KeptChunks.close, []
    monkeypatch.setattr(KeptChunks, "close", lambda self: closed.append(self._spool is not None) or close(self))
    for text, stages, kept in [
        ("words remove --type numeric", [("words", {}), ("remove", {"type": "numeric"})], True),
        ("minmax remove --type numeric", [("minmax", {}), ("remove", {"type": "numeric"})], False),
    ]:
        closed.clear()
        with pytest.raises(FilterkitError, match="no numeric feature"):
            fitted_chain(load_plugins(), dataset, ChainSpec(text, stages), np.arange(100))
        assert (True in closed) is kept


def test_a_folds_passes_keep_at_most_four_bytes_a_byte_of_its_rows(tmp_path, monkeypatch):
    """A fold's fit keeps its passes within :data:`~filterkit.sources.MOST_KEPT_PER_INPUT_BYTE` of its rows' bytes,
    as a file's fit does: ``words``' kept form of every 1- to 7-gram of words is past it (84 kB of 20 kB), so the fit
    keeps nothing and the training features are cut from the documents again, the same features."""
    from filterkit.arff import read_arff
    from filterkit.evaluation import Dataset, fitted_chain
    from filterkit.schema import take_rows
    from filterkit.tasks import ChainSpec

    registry = load_plugins()
    schema, data = read_arff(documents_file(tmp_path))
    dataset = Dataset(schema, take_rows(data, np.flatnonzero(~np.isnan(data.column(3)))), 3)
    words = type(registry.make_stage("words", {}))
    counted, cut = words.counted, []
    monkeypatch.setattr(
        words, "counted", lambda self, chunk, *a, **k: cut.append(chunk.n_rows) or counted(self, chunk, *a, **k)
    )
    train = np.arange(200)
    grams = {"counts": True, "ngrams": "1-7"}
    prepared = fitted_chain(registry, dataset, ChainSpec("words", [("words", grams), ("l2", {})]), train)[1]
    features = prepared(train)[0]
    assert cut == [200, 200]
    assert (features != prepared(train.copy())[0]).nnz == 0


def test_a_label_set_folds_training_documents_are_cut_into_words_once(monkeypatch):
    """A label-set chain's fit on a fold (:func:`~filterkit.evaluation_targets.fitted_label_chain`, ``evaluate``'s and
    ``train``'s) makes the training rows' features of what ``idf``'s pass kept: the documents are cut into words once
    (three times before), and the features are those of the documents cut again."""
    from filterkit.arff import read_arff
    from filterkit.classifying import classifier_matrix
    from filterkit.evaluation_targets import LabelledData, fitted_label_chain
    from filterkit.schema import take_rows
    from filterkit.tasks import ChainSpec

    registry = load_plugins()
    schema, data = read_arff(str(Path(__file__).parent / "data" / "multilabel" / "reuters-grain-corn.arff"))
    dataset = LabelledData(schema, data, ("grain", "corn"), None, np.column_stack([data.column(0), data.column(1)]))
    words = type(registry.make_stage("words", {}))
    counted, cut = words.counted, []
    monkeypatch.setattr(
        words, "counted", lambda self, chunk, *a, **k: cut.append(chunk.n_rows) or counted(self, chunk, *a, **k)
    )
    stages = [("words", {"counts": True}), ("idf", {}), ("l2", {})]
    train = np.arange(0, data.n_rows, 2)
    fitted, left_out, features = fitted_label_chain(registry, dataset, ChainSpec("w", stages), stages, train)
    assert cut == [len(train)]
    again = classifier_matrix(fitted.output_schema, next(iter(fitted.transform([take_rows(data, train)]))), left_out)
    assert features.shape == again.shape and features.shape[1] > 100 and (features != again).nnz == 0
