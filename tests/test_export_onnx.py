"""``filterkit export MODEL --onnx OUT.onnx`` (issue 78): the ONNX graph run in ONNX Runtime and held to ``predict``
— every label equal, every decision value and probability within 1e-6 relative — on the models tests/test_export.py
trains (each default candidate of ``train``, each kind of tokens and weighting, two classes, several, label sets)
over the shipped documents and hostile ones; its tokenizer held to the ``words`` stage's counts under every setting
tests/test_export_words.py exports, over hostile Unicode and every code point; and each refusal one line, exit
status 1, no file."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import numpy as np
import pytest
from test_export import (
    BINARY_CHAINS,
    DEFAULTS,
    GRAIN,
    LABEL_SETS,
    RARE_LABEL_SETS,
    ROOT,
    constant_label_sets,
    documents,
    hostile_model,
    nan_class_model,
    rare_label_documents,
    three_classes,
    trained,
)
from test_export_words import SETTINGS, expected_rows, fitted, grain_texts, hostile_documents

from filterkit.errors import FilterkitError
from filterkit.testing import run_filterkit
from filterkit.trained import load_model

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed (pip install 'filterkit-arff[onnx]')")
ort = pytest.importorskip("onnxruntime", reason="onnxruntime, which runs the exported graphs, is not installed")

from filterkit.export import onnx_graph  # noqa: E402
from filterkit.export.onnx_graph import words_counts_model  # noqa: E402

#: Chains the ONNX graph builds otherwise than the C scorer's: stop words of hashed words without lowercasing (the
#: stop words looked up lowercased, the words hashed as they are), character n-grams longer than a padded short
#: word, delimiters that are regular expressions' syntax, the alphabetic tokenizer keeping case, word trigrams.
ONNX_CHAINS = {
    "hashed-stop-words": "words --counts --hash 10 --stopwords weka bns --multiply l2",
    "long-character-ngrams": "words --counts --lowercase --char-ngrams 5-6 --words-to-keep 3000 idf --multiply l2",
    "regex-delimiters": "words --counts --lowercase --delimiters ' ]^\\-[.(|$*+?{}' bns --multiply l2",
    "alphabetic-cased": "words --counts --tokenizer alphabetic --words-to-keep 100000 bns --multiply l2",
    "trigrams-hashed": "words --counts --lowercase --ngrams 1-3 --hash 12 chi --multiply l2",
}


def scored(graph_path, texts: list[str]) -> dict[str, np.ndarray]:
    """The graph's outputs on ``texts``, by name."""
    session = ort.InferenceSession(str(graph_path), providers=["CPUExecutionProvider"])
    values = session.run(None, {"documents": np.array(texts, dtype=object)})
    return dict(zip([output.name for output in session.get_outputs()], values))


def exported(model_path, folder) -> object:
    """``model_path`` exported by ``filterkit export --onnx``, its path."""
    graph = folder / f"{model_path.stem}.onnx"
    result = run_filterkit("export", model_path, "--onnx", graph)
    assert result.status == 0, result.stderr
    return graph


def assert_graph_as_predict(model_path, folder, texts: list[str]) -> None:
    """The exported graph's labels are predict's for every text; its decision values and Platt probabilities
    predict's within 1e-6 relative (NaN where predict's are)."""
    model = load_model(model_path)
    outputs = scored(exported(model_path, folder), texts)
    # the values as the model computes them (decision_function refuses a row whose value is not finite)
    expected = np.asarray(model.decisions(model.transform(texts)), dtype=np.float64).reshape(len(texts), -1)
    np.testing.assert_allclose(outputs["decisions"], expected, rtol=1e-6, atol=0)
    answers = model.predict(texts)
    if model.label_sets:
        given = [[label for label, yes in zip(model.classes, row) if yes] for row in outputs["label"]]
    else:
        given = outputs["label"].tolist()
    assert [row for row, (mine, theirs) in enumerate(zip(given, answers)) if mine != theirs] == []
    assert outputs["classes"].tolist() == list(model.labels)
    if model.calibrated:
        probabilities = model.predict_proba(texts)
        expected = probabilities if model.multiclass or model.label_sets else probabilities[:, 1:]
        np.testing.assert_allclose(outputs["probabilities"], expected, rtol=1e-6, atol=0)
    else:
        assert "probabilities" not in outputs


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("export-onnx")


@pytest.mark.parametrize("name", list(BINARY_CHAINS) + list(ONNX_CHAINS))
def test_a_two_class_model_answers_as_predict_does(folder, name):
    chain = {**BINARY_CHAINS, **ONNX_CHAINS}[name]
    model = trained(folder, name, "--positive", "1", GRAIN, *shlex.split(chain))
    assert_graph_as_predict(model, folder, documents())


def test_thresholds_chosen_by_f1_are_applied_as_predict_applies_them(folder):
    chain = f"{DEFAULTS} --stopwords weka shape bns l2".split()
    model = trained(folder, "threshold", "--positive", "1", "--svm-threshold", "f1", GRAIN, *chain)
    assert load_model(model).thresholds()[0] is not None
    assert_graph_as_predict(model, folder, documents())


@pytest.mark.parametrize(("threshold", "shaping"), [("fixed", "max"), ("f1", "max"), ("fixed", "one-vs-rest")])
def test_a_multi_class_model_answers_as_predict_does(folder, threshold, shaping):
    chain = f"{DEFAULTS} --stopwords weka shape --multiclass {shaping} bns l2".split()
    name = f"topics-{threshold}-{shaping}"
    model = trained(folder, name, "--multiclass", "--svm-threshold", threshold, three_classes(folder), *chain)
    assert_graph_as_predict(model, folder, documents())


@pytest.mark.parametrize("shaping", ["max", "one-vs-rest"])
def test_a_label_set_model_answers_each_label_as_predict_does(folder, shaping):
    chain = f"{DEFAULTS} --stopwords weka shape --multiclass {shaping} bns l2".split()
    model = trained(folder, f"labels-{shaping}", LABEL_SETS, *chain)
    assert_graph_as_predict(model, folder, documents())


@pytest.mark.parametrize("threshold", ["fixed", "f1", "fbr"])
def test_a_label_set_whose_rare_label_has_no_sigmoid_answers_each_label_by_its_own_rule(folder, threshold):
    model = trained(folder, f"rare-{threshold}", "--svm-threshold", threshold, RARE_LABEL_SETS, "words", "bns", "l2")
    assert_graph_as_predict(model, folder, rare_label_documents())


def test_a_label_set_with_a_constant_label_answers_as_predict_does(folder):
    """Its graph chose the constant's answer by a Where of booleans, which ONNX Runtime has no kernel for: the graph
    did not load."""
    model = trained(folder, "constant", constant_label_sets(folder), "words", "bns", "l2")
    assert_graph_as_predict(model, folder, rare_label_documents())


def test_a_nan_score_answers_as_numpy_argmax_does(folder):
    """A class whose decision value is NaN (weights at the edge of the doubles, whose products overflow in the order
    predict sums them) gets np.argmax's answer (the first NaN), where filterkit's decision_function and predict
    refuse the row."""
    path = nan_class_model(folder)
    texts = ["wheat wheat corn corn tonnes", "wheat", "corn"]
    model = load_model(path)
    with pytest.raises(FilterkitError, match="^row 1: its decision value is not a finite number"):
        model.decision_function(texts)
    assert np.isnan(model.decisions(model.transform(texts))[0, 1])
    assert_graph_as_predict(path, folder, texts)


def operators(graph) -> set[tuple[str, str]]:
    """The (domain, operator) of every node of ``graph`` and of the graphs inside its nodes."""
    found = set()
    for node in graph.node:
        found.add((node.domain, node.op_type))
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                found |= operators(attribute.g)
    return found


def test_no_operator_depends_on_a_locale(folder):
    chain = "words --counts --lowercase --ngrams 1-2 --stopwords weka --hash 10 shape bns l2"
    model = trained(folder, "operators", "--positive", "1", GRAIN, *chain.split())
    graph = onnx.load(str(exported(model, folder)))
    found = operators(graph.graph)
    assert ("", "StringNormalizer") not in found and ("", "TfIdfVectorizer") not in found
    assert {domain for domain, _ in found} <= {"", "ai.onnx.ml", "com.microsoft"}
    assert {op for domain, op in found if domain == "com.microsoft"} == {"Tokenizer", "MurmurHash3"}
    assert {(opset.domain, opset.version) for opset in graph.opset_import} == {
        ("", 20),
        ("ai.onnx.ml", 3),
        ("com.microsoft", 1),
    }


def test_a_batch_of_no_documents_gives_no_rows(folder):
    model = trained(folder, "empty-batch", "--positive", "1", GRAIN, *BINARY_CHAINS["default-bns"].split())
    outputs = scored(exported(model, folder), [])
    assert outputs["decisions"].shape == (0, 1) and outputs["label"].shape == (0,)


def test_words_and_labels_that_are_syntax_elsewhere_are_data(folder):
    model = trained(folder, "plain", "--positive", "1", GRAIN, *BINARY_CHAINS["default-bns"].split())
    hostile = ['"', "\\", "*/", "??/", "a\x00b", "line\nbreak", "[^", "(?s:.)", ".*", "\u2028"]
    path = hostile_model(model, folder, hostile)
    texts = documents()[:5] + ['" \\ */ ??/ a\x00b [^ (?s:.) .*', "line\nbreak \u2028", "a\x00b"]
    assert_graph_as_predict(path, folder, texts)
    names = ("*/ int x; /*", '??/ "quoted" \\', "line\nbreak (?s:.)")
    chain = f"{DEFAULTS} shape --multiclass max bns l2".split()
    labelled = trained(folder, "hostile-labels", "--multiclass", three_classes(folder, names), *chain)
    assert_graph_as_predict(labelled, folder, documents()[:20])


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return grain_texts() + hostile_documents()


@pytest.mark.parametrize("options", list(SETTINGS.values()), ids=list(SETTINGS))
def test_the_graphs_tokens_are_the_stages(options, texts):
    stage = fitted(texts[:80] + texts[-120:-60], **options)
    session = ort.InferenceSession(words_counts_model(stage), providers=["CPUExecutionProvider"])
    mismatched = []
    for start in range(0, len(texts), 64):
        batch = texts[start : start + 64]
        counts = session.run(None, {"documents": np.array(batch, dtype=object)})[0]
        for row, expected in enumerate(expected_rows(stage, batch)):
            found = [(int(column), int(counts[row, column])) for column in np.flatnonzero(counts[row])]
            if found != expected:
                mismatched.append(start + row)
    assert mismatched == [], [texts[row][:100] for row in mismatched[:3]]


def test_every_code_point_is_lowercased_as_str_lower_does():
    points = [chr(point) for point in range(1, 0x110000) if not 0xD800 <= point < 0xE000]
    changed = [character for character in points if character.lower() != character]
    stage = fitted([" ".join(changed), " ".join(changed[::-1])], lowercase=True, words_to_keep=10**7)
    assert len(stage.words) > 1000
    chunks = [" ".join(points[start : start + 8192]) for start in range(0, len(points), 8192)]
    session = ort.InferenceSession(words_counts_model(stage), providers=["CPUExecutionProvider"])
    counts = np.concatenate(
        [
            session.run(None, {"documents": np.array(chunks[at : at + 16], dtype=object)})[0]
            for at in range(0, len(chunks), 16)
        ]
    )
    expected = np.zeros_like(counts)
    for row, pairs in enumerate(expected_rows(stage, chunks)):
        for column, count in pairs:
            expected[row, column] = count
    assert np.array_equal(counts, expected)
    assert counts.sum() >= len(changed)


def test_what_a_graph_cannot_follow_is_refused_in_one_line(texts, monkeypatch):
    with pytest.raises(FilterkitError, match="each of its delimiters is in the lowercase"):
        words_counts_model(fitted(texts[:20], delimiters="a", lowercase=True))
    monkeypatch.setattr(onnx_graph, "MOST_COLUMNS", 4000)
    with pytest.raises(FilterkitError, match="makes 4,096 columns, more than the 4,000"):
        words_counts_model(fitted(texts[:20], hash=12))
    stage = fitted(texts[:20])
    stage.stem = str.lower
    with pytest.raises(FilterkitError, match="stemmer"):
        words_counts_model(stage)


def assert_refused(result, *phrases: str) -> None:
    """One error line holding each phrase, exit status 1, no traceback."""
    assert result.status == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert all(phrase in lines[0] for phrase in phrases), lines[0]


def test_a_chain_it_cannot_compute_exactly_is_refused_naming_the_stage(folder):
    model = trained(folder, "logodds", "--positive", "1", GRAIN, *f"{DEFAULTS} shape --transform logodds l2".split())
    assert_refused(run_filterkit("export", model, "--onnx", folder / "refused.onnx"), "stage 'shape'", "logodds")
    assert not (folder / "refused.onnx").exists()


def test_a_model_of_attribute_values_is_refused_and_neither_file_is_written(folder):
    data = ROOT / "arff_samples" / "oh0.wc.arff"
    model = trained(folder, "counts", "--positive", "Ethics", data, "bns", "--multiply", "l2")
    c_path, graph = folder / "counts.c", folder / "counts.onnx"
    assert run_filterkit("export", model, "--c", c_path).status == 0
    c_path.unlink()
    assert_refused(run_filterkit("export", model, "--c", c_path, "--onnx", graph), str(model), "reads documents")
    assert not c_path.exists() and not graph.exists()


def test_without_the_onnx_package_the_export_says_how_to_install_it(folder, monkeypatch):
    model = trained(folder, "no-onnx", "--positive", "1", GRAIN, *BINARY_CHAINS["default-bns"].split())
    monkeypatch.setitem(sys.modules, "onnx", None)
    monkeypatch.delitem(sys.modules, "filterkit.export.onnx_graph")
    assert_refused(run_filterkit("export", model, "--onnx", folder / "none.onnx"), "filterkit-arff[onnx]")
    assert not (folder / "none.onnx").exists()


def test_a_file_that_is_not_a_model_is_refused_before_anything_is_written(folder):
    bad = folder / "bad.json"
    bad.write_text('{"format_version": 2}')
    assert_refused(run_filterkit("export", bad, "--onnx", folder / "bad.onnx"), str(bad))
    assert not (folder / "bad.onnx").exists()


@pytest.mark.parametrize("full", ["--c", "--onnx"])
def test_a_write_that_fails_leaves_neither_file(folder, full):
    """Both files are written and flushed before either is published: a full device as one leaves no other."""
    model = trained(folder, "full", "--positive", "1", GRAIN, *BINARY_CHAINS["default-bns"].split())
    kept = {"--c": folder / "full.c", "--onnx": folder / "full.onnx"}
    paths = {**kept, full: Path("/dev/full")}
    result = run_filterkit("export", model, "--c", paths["--c"], "--onnx", paths["--onnx"])
    assert_refused(result, "cannot write /dev/full: No space left on device")
    assert not any(path.exists() for role, path in kept.items() if role != full)


def test_one_vs_rest_copies_past_the_graphs_tables_are_refused(folder, monkeypatch):
    chain = f"{DEFAULTS} --stopwords weka shape --multiclass one-vs-rest bns l2".split()
    model = trained(folder, "copies", "--multiclass", three_classes(folder), *chain)
    words = len(load_model(model).chain.stages[0].words)
    monkeypatch.setattr(onnx_graph, "MOST_COLUMNS", words + 1)  # the words fit, their three copies do not
    result = run_filterkit("export", model, "--onnx", folder / "copies.onnx")
    assert_refused(result, "stage 'shape' copies its words into", f"more than the {words + 1:,}")
    assert not (folder / "copies.onnx").exists()
