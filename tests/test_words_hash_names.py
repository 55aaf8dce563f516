"""``words --hash BITS --hash-names number`` (issue 74): every hashed column named ``PREFIX#COLUMN``, nothing learned
(no vocabulary, no document counts, no fit pass), each value the one ``--hash-names token`` (the default) writes; a
``--stopwords`` file refused, as no model opens a file it names; and every consumer of the stage: ``train``,
``predict``, ``explain``, ``update``, ``export --c`` and ``--onnx``, the scikit-learn adapter."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import numpy as np
import pytest
from test_export import GRAIN, Scorer, assert_scores_as_predict, documents, trained
from test_export_words import SCHEMA, grain_texts

from filterkit.arff import read_arff
from filterkit.errors import OptionError
from filterkit.runner import Chain
from filterkit.schema import Chunk
from filterkit.sklearn import transformer_for
from filterkit.sources import MemorySource
from filterkit.testing import read_output, run_filterkit
from filterkit.word_tokens import WEKA_STOPWORDS
from filterkit_plugins.words import WordVector

#: --hash settings, each written with token names and with number names.
HASHED = {
    "words": "--counts --lowercase --hash 10",
    "stop words": "--hash 9 --stopwords weka",
    "bigrams": "--counts --ngrams 1-2 --hash 12 --prefix w_",
    "characters": "--counts --lowercase --char-ngrams 2-4 --hash 11 --log-tf",
}


def written(*arguments: str, stdin: bytes = b"") -> tuple[list[str], np.ndarray]:
    """The attribute names and the dense values of ``filterkit ARGUMENTS…``'s output."""
    run = run_filterkit(*arguments, stdin=stdin)
    assert run.status == 0, run.stderr
    schema, chunk = read_output(run.stdout)
    return [attribute.name for attribute in schema.attributes], chunk.dense_values()


@pytest.mark.parametrize("options", list(HASHED.values()), ids=list(HASHED))
def test_number_names_write_the_values_token_names_write_each_column_named_by_its_number(options):
    token_names, token_values = written(GRAIN, "words", *shlex.split(options))
    number_names, number_values = written(GRAIN, "words", *shlex.split(options), "--hash-names", "number")
    prefix = "w_" if "--prefix" in options else ""
    n_columns = len(number_names) - 1
    assert number_names == ["class-att", *(f"{prefix}#{column}" for column in range(n_columns))]
    assert n_columns == 2 ** int(shlex.split(options)[shlex.split(options).index("--hash") + 1])
    assert number_values.tobytes() == token_values.tobytes()
    assert np.count_nonzero(number_values[:, 1:]) > 1000  # the documents hold tokens
    assert token_names != number_names  # the default still names columns by their tokens


def test_a_number_name_another_attribute_has_is_renamed_as_a_placeholder_is():
    arff = (
        "@relation clash\n@attribute '#3' numeric\n@attribute '#3_1' numeric\n@attribute text string\n"
        "@attribute class {a,b}\n@data\n1,2,'wheat corn',a\n3,4,'tonnes of wheat',b\n"
    ).encode()
    names, values = written("-", "words", "--hash", "2", "--hash-names", "number", stdin=arff)
    assert names == ["#3", "#3_1", "class", "#0", "#1", "#2", "#3_2"]
    _, token_values = written("-", "words", "--hash", "2", stdin=arff)
    assert values.tobytes() == token_values.tobytes()


def test_number_names_need_hash_and_refuse_a_stop_words_file_as_option_errors(tmp_path):
    stop_words = tmp_path / "stop.txt"
    stop_words.write_text("wheat\n", encoding="utf-8")
    with pytest.raises(OptionError, match="^option --hash-names number: it names hashed columns, so it takes --hash"):
        WordVector(hash_names="number")
    with pytest.raises(OptionError, match="^option --stopwords: with --hash-names number .* give --stopwords weka, or"):
        WordVector(hash=8, hash_names="number", stopwords=str(stop_words))
    output = tmp_path / "out.arff"
    numbered = ["--hash", "8", "--hash-names", "number"]
    run = run_filterkit(GRAIN, "words", *numbered, "--stopwords", stop_words, "-o", output)
    assert run.status == 2 and "Error: option --stopwords: with --hash-names number" in run.stderr
    assert "Traceback" not in run.stderr and not output.exists()
    assert run_filterkit(GRAIN, "words", "--hash", "8", "--stopwords", stop_words, "-o", output).status == 0


class CountedPasses(MemorySource):
    """Rows in memory that count the passes read over them."""

    passes = 0

    def chunks(self):
        self.passes += 1
        return super().chunks()


@pytest.mark.parametrize(("hash_names", "fit_passes"), [("number", 0), ("token", 1)])
def test_number_names_learn_nothing_and_keep_no_vocabulary(hash_names, fit_passes):
    texts = grain_texts()
    values = np.zeros((len(texts), 2))
    values[:, 1] = np.arange(len(texts)) % 2
    source = CountedPasses(SCHEMA, Chunk(values, {0: texts}, None))
    chain = Chain([WordVector(hash=10, hash_names=hash_names, stopwords="weka")], class_spec="last")
    assert chain.planned_passes() == fit_passes
    chain.fit(source)
    assert source.passes == fit_passes
    stage = chain.stages[0]
    written = next(chain.transform(source.chunks()))
    assert written.n_rows == len(texts) and len(written.csr().data) > 1000
    state = stage.state()
    held = (state["words"], state["document_counts"], state["columns"], len(stage.vocabulary))
    if hash_names == "number":
        assert held == ([], [], [], 0) and state["n_documents"] == 0
        assert state["stopwords"] == sorted(WEKA_STOPWORDS)  # saved: a model needs no --stopwords to find them
    else:
        assert len(state["words"]) > 800 and len(stage.vocabulary) > 800


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("hash-names")


NUMBERED_WORDS = "words --counts --lowercase --stopwords weka --hash 10 --hash-names number"
NUMBERED_CHAIN = f"{NUMBERED_WORDS} chi --multiply l2"


def test_a_trained_model_predicts_explains_and_updates_as_token_names_do(folder):
    numbered = trained(folder, "numbered", "--positive", "1", GRAIN, *shlex.split(NUMBERED_CHAIN))
    token_chain = NUMBERED_CHAIN.replace(" --hash-names number", "")
    tokens = trained(folder, "tokens", "--positive", "1", GRAIN, *shlex.split(token_chain))
    predicted = [run_filterkit("predict", model, GRAIN).stdout for model in (numbered, tokens)]
    assert predicted[0] == predicted[1] and predicted[0].count(b"\n") == 61
    explained = run_filterkit("explain", "--json", "--top", "3", numbered, GRAIN)
    assert explained.status == 0, explained.stderr
    words = [word["word"] for line in explained.stdout.splitlines() for word in json.loads(line)["words"]]
    assert words and all(word.startswith("#") and 0 <= int(word[1:]) < 1024 for word in words)
    updatable = folder / "updatable.json"
    saved = run_filterkit("--save-model", updatable, "--updatable", GRAIN, *shlex.split(NUMBERED_WORDS))
    assert saved.status == 0, saved.stderr
    updated = folder / "updated.json"
    assert run_filterkit("update", updatable, GRAIN, "-o", updated).status == 0
    assert updated.read_bytes() == updatable.read_bytes()  # nothing learned: more rows change nothing


def test_a_model_edited_to_name_a_stop_words_file_is_refused_without_opening_it(folder):
    model = trained(folder, "edited", "--positive", "1", GRAIN, *shlex.split(NUMBERED_CHAIN))
    document = json.loads(model.read_text(encoding="utf-8"))
    document["stages"][0]["params"]["stopwords"] = str(folder / "absent-stop-words.txt")
    model.write_text(json.dumps(document), encoding="utf-8")
    run = run_filterkit("predict", model, GRAIN)
    assert run.status == 1 and "give --stopwords weka" in run.stderr and "absent" not in run.stderr.split(":")[-1]
    assert len(run.stderr.strip().splitlines()) == 1


def test_the_exported_c_scorer_scores_as_predict(folder):
    model = trained(folder, "exported", "--positive", "1", GRAIN, *shlex.split(NUMBERED_CHAIN))
    assert_scores_as_predict(model, Scorer(model, folder), documents())


def test_the_onnx_graph_answers_as_predict(folder):
    pytest.importorskip("onnxruntime", reason="onnxruntime, which runs the exported graphs, is not installed")
    from test_export_onnx import assert_graph_as_predict

    model = trained(folder, "onnx", "--positive", "1", GRAIN, *shlex.split(NUMBERED_CHAIN))
    assert_graph_as_predict(model, folder, documents())


def test_the_scikit_learn_adapter_names_columns_by_number_and_counts_as_token_names():
    texts = np.array(grain_texts(), dtype=object).reshape(-1, 1)
    adapter = transformer_for("words")
    numbered = adapter(hash=8, hash_names="number", counts=True, lowercase=True)
    by_tokens = adapter(hash=8, counts=True, lowercase=True)
    values = numbered.fit_transform(texts)
    assert (values != by_tokens.fit_transform(texts)).nnz == 0 and values.nnz > 1000
    assert numbered.get_feature_names_out().tolist() == [f"#{column}" for column in range(256)]
    assert (numbered.partial_fit(texts).transform(texts) != values).nnz == 0


def test_a_hash_model_saved_before_the_option_loads_with_token_names(folder):
    model = trained(folder, "before", "--positive", "1", GRAIN, *shlex.split(NUMBERED_CHAIN.replace("number", "token")))
    document = json.loads(model.read_text(encoding="utf-8"))
    stage = document["stages"][0]
    del stage["params"]["hash_names"], stage["state"]["fitted_options"]["hash_names"]
    older = folder / "older.json"
    older.write_text(json.dumps(document), encoding="utf-8")
    predicted = [run_filterkit("predict", path, GRAIN) for path in (model, older)]
    assert predicted[0].status == 0 and predicted[0].stdout == predicted[1].stdout, predicted[1].stderr
    explained = run_filterkit("explain", "--json", "--top", "3", older, GRAIN).stdout.splitlines()
    assert any(not word["word"].startswith("#") for word in json.loads(explained[0])["words"])


@pytest.mark.parametrize("edit", ["words of a token model", "number names on a token model"])
def test_a_number_model_holding_words_is_refused(folder, edit):
    names = "number" if edit == "words of a token model" else "token"
    model = trained(
        folder, f"held-{names}", "--positive", "1", GRAIN, *shlex.split(NUMBERED_CHAIN.replace("number", names))
    )
    document = json.loads(model.read_text(encoding="utf-8"))
    stage = document["stages"][0]
    if names == "number":
        stage["state"].update(words=["wheat"], document_counts=[1], n_documents=5, columns=[3], collisions=0)
    else:
        stage["params"]["hash_names"] = stage["state"]["fitted_options"]["hash_names"] = "number"
    model.write_text(json.dumps(document), encoding="utf-8")
    run = run_filterkit("predict", model, GRAIN)
    assert run.status == 1 and run.stdout == b""
    assert "with --hash-names number nothing is fitted, yet it holds words or documents" in run.stderr


def test_check_stage_round_trips_the_model_of_a_stage_that_learns_nothing():
    from filterkit.testing import StageCheckError, check_stage

    class Misloaded(WordVector):  # loads one stop word more than it saved ("row": every note of check_stage's rows)
        def load_state(self, state):
            super().load_state({**state, "stopwords": [*state["stopwords"], "row"]})

    with pytest.raises(StageCheckError, match="model round trip"):
        check_stage(Misloaded, hash=6, hash_names="number", stopwords="weka")


def test_an_adapter_pickled_before_the_option_unpickles_with_token_names():
    texts = np.array(grain_texts(), dtype=object).reshape(-1, 1)
    fitted = transformer_for("words")(hash=6, counts=True).fit(texts)
    state = fitted.__getstate__()
    del state["hash_names"]  # as a pickle written before the option existed holds it
    older = type(fitted).__new__(type(fitted))
    older.__setstate__(state)
    assert older.hash_names == "token" and (older.transform(texts) != fitted.transform(texts)).nnz == 0
    assert older.get_feature_names_out().tolist() == fitted.get_feature_names_out().tolist()


def test_an_adapter_pickled_before_its_own_parameter_existed_gets_its_default():
    from filterkit.sklearn import transformer_for as adapter_of

    rows = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [0.0, 3.0]])
    fitted = adapter_of("bns")().fit(rows, ["a", "b", "a", "b"])
    state = fitted.__getstate__()
    del state["label_names"]  # an adapter parameter (not a stage option) that 0.3.0's pickles lack
    older = type(fitted).__new__(type(fitted))
    older.__setstate__(state)
    assert older.get_params() == fitted.get_params() and older.label_names is None
    assert np.array_equal(older.transform(rows), fitted.transform(rows))


def _numbered_clash(columns: int) -> bytes:
    """An ARFF file whose numeric attributes ``#0`` … are named as ``--hash-names number`` names its columns."""
    declared = "".join(f"@attribute '#{column}' numeric\n" for column in range(columns))
    rows = "".join(f"{','.join(['1'] * columns)},'wheat corn {k}',{'ab'[k % 2]}\n" for k in range(4))
    return f"@relation clash\n{declared}@attribute text string\n@attribute class {{a,b}}\n@data\n{rows}".encode()


def test_number_names_another_attribute_has_are_renamed_with_one_warning_naming_the_first():
    run = run_filterkit("-", "words", "--hash", "3", "--hash-names", "number", stdin=_numbered_clash(7))
    assert run.status == 0
    assert run.stderr == (
        "filterkit: warning: stage 1 'words' renames columns named like another attribute (give --prefix to keep "
        "them): '#0' as '#0_1', '#1' as '#1_1', '#2' as '#2_1', '#3' as '#3_1', '#4' as '#4_1', … (7 in all)\n"
    )
    names = [attribute.name for attribute in read_output(run.stdout)[0].attributes]
    assert names[8:] == [*(f"#{column}_1" for column in range(7)), "#7"]
    prefixed = run_filterkit(
        "-", "words", "--hash", "3", "--hash-names", "number", "--prefix", "w", stdin=_numbered_clash(7)
    )
    assert prefixed.status == 0 and prefixed.stderr == ""


@pytest.mark.parametrize("hash_names", ["number", "token"])
def test_more_hashed_columns_than_a_file_may_declare_are_refused_before_any_is_named(tmp_path, monkeypatch, hash_names):
    def never(*arguments):
        raise AssertionError("a column was named")

    monkeypatch.setattr("filterkit_plugins.words.hashed_column_names", never)
    monkeypatch.setenv("FILTERKIT_MAX_ATTRIBUTES", "1024")
    output = tmp_path / "out.arff"
    hashed = ("-o", output, "-", "words", "--hash", "10", "--hash-names", hash_names)
    run = run_filterkit(*hashed, stdin=_numbered_clash(1))  # the class and '#0' kept
    assert run.status == 1 and not output.exists()
    assert run.stderr == (
        "filterkit: error: option --hash 10: 1,024 columns and the attributes kept make 1,026, more than the 1,024 "
        "attributes filterkit reads back (set FILTERKIT_MAX_ATTRIBUTES to allow more): hash into fewer bits\n"
    )
    monkeypatch.undo()
    monkeypatch.setenv("FILTERKIT_MAX_ATTRIBUTES", "1026")
    assert run_filterkit(*hashed, stdin=_numbered_clash(1)).status == 0
    assert len(read_arff(output)[0].attributes) == 1026
