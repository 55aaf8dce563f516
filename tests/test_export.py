"""``filterkit export MODEL --c OUT.c`` (issue 78): the C scorer compiled with the system's compiler and held to
``predict`` — every decision value bit for bit, every answer equal — on models of each task, each default candidate
of ``train`` and each kind of tokens, over the shipped documents and hostile ones; and no model string becomes code."""

from __future__ import annotations

import base64
import csv
import ctypes
import json
import shlex
import shutil
import subprocess
import tempfile
import zlib
from pathlib import Path

import numpy as np
import pytest

from filterkit.errors import FilterkitError
from filterkit.schema import Chunk
from filterkit.testing import read_output, run_filterkit
from filterkit.trained import load_model

ROOT = Path(__file__).resolve().parents[1]
GRAIN = ROOT / "arff_samples" / "reuters_grain.csv"
LABEL_SETS = ROOT / "tests" / "data" / "multilabel" / "reuters-grain-corn.arff"
COMPILER = shutil.which("cc") or shutil.which("gcc")

pytestmark = pytest.mark.skipif(COMPILER is None, reason="no C compiler (cc or gcc) to build the exported scorer")

DEFAULTS = "words --counts --lowercase"
#: Chains on two classes: train's four default candidates on text, then each kind of tokens and weighting.
BINARY_CHAINS = {
    "default-shape": f"{DEFAULTS} --stopwords weka shape bns l2",
    "default-bns": f"{DEFAULTS} --stopwords weka bns --multiply l2",
    "default-alphabetic": f"{DEFAULTS} --words-to-keep 1000000 --tokenizer alphabetic bns --multiply l2",
    "default-idf": f"{DEFAULTS} --words-to-keep 1000000 --tokenizer alphabetic --log-tf "
    "idf --presence --multiply --smooth l2",
    "words-weights": "words --counts --log-tf --idf --min-df 2 l2",
    "presence-select-l1": "words --lowercase ig --multiply select --top 50 l1",
    "bigrams": f"{DEFAULTS} --ngrams 1-2 --stopwords weka bns --multiply l2",
    "characters": "words --counts --char-ngrams 2-4 --words-to-keep 3000 idf --multiply l2",
    "hashing": f"{DEFAULTS} --hash 12 chi --multiply l2",
    "no-scale": "words --counts --delimiters ' .,;:—…“”«»' bns --no-scale l2",
    "scaled-presence": "words --lowercase ig select --top 50 l1",
    "binarize": "words --counts --lowercase binarize bns --multiply l2",
}

HOSTILE_DOCUMENTS = [
    "",
    " ",
    "wheat",
    "WHEAT Wheat wheat wheat.",
    "İstanbul ẞTRASSE straße ΟΔΟΣ ΣΑ Σ σς Ǆemal ǅ ﬃ",
    "café cafe\u0301 naïve e\u0301\u0301\u0301 ",
    "emoji 🌾 wheat🌾corn 𝔴𝔥𝔢𝔞𝔱 \U0010fffd \ue000",
    "“grain” ‘corn’ — wheat…\u00a0wheat\u2003corn\u3000grain",
    "control \x01\x02\x1f\x7f\x85 chars\r\nwheat\tcorn\x0bgrain\x0cend",
    "wheat " * 20_000,
    "wheat " * 9_169,  # ln(1 + 9169) is one of the counts where numpy's logarithm and the C library's differ
    "x" * 100_000 + " grain",
    "grain corn wheat tonnes export " * 5,
]


def documents() -> list[str]:
    """The texts of the shipped Reuters sample, then the hostile documents."""
    with open(GRAIN, newline="", encoding="utf-8") as handle:
        texts = [row[0] for row in list(csv.reader(handle))[1:]]
    return texts + HOSTILE_DOCUMENTS


def three_classes(folder: Path, names: tuple[str, str, str] = ("wheat", "corn", "other")) -> Path:
    """The Reuters sample with a class of three labels (``names``): wheat, corn or other, by the words a document
    holds."""
    with open(GRAIN, newline="", encoding="utf-8") as handle:
        texts = [row[0] for row in list(csv.reader(handle))[1:]]
    path = folder / f"topics-{zlib.crc32(repr(names).encode()):08x}.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Text", "topic"])
        for text in texts:
            lowered = text.lower()
            writer.writerow([text, names[0] if "wheat" in lowered else names[1] if "corn" in lowered else names[2]])
    return path


def trained_model_of(chain: str) -> Path:
    """A two-class model of ``chain`` on the Reuters sample, trained once per process."""
    folder = Path(tempfile.mkdtemp(prefix="export-"))
    return trained(folder, "model", "--positive", "1", GRAIN, *shlex.split(chain))


def trained(folder: Path, name: str, *arguments: str) -> Path:
    """A model trained by ``filterkit train -o NAME.json ARGUMENTS…``."""
    model = folder / f"{name}.json"
    result = run_filterkit("train", "-q", "-o", model, *arguments)
    assert result.status == 0, result.stderr
    return model


class Scorer:
    """An exported scorer compiled as a shared library, called through ctypes."""

    def __init__(self, model: Path, folder: Path, entry: str = "decide"):
        source = folder / f"{model.stem}.c"
        result = run_filterkit("export", model, "--c", source)
        assert result.status == 0, result.stderr
        self.library_path = folder / f"{model.stem}.so"
        compiled = subprocess.run(
            [COMPILER, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-DFILTERKIT_NO_MAIN"]
            + ["-o", str(self.library_path), str(source), "-lm"],
            capture_output=True,
            text=True,
        )
        assert compiled.returncode == 0, compiled.stderr[-3000:]
        self.source = source
        self.library = ctypes.CDLL(str(self.library_path))
        doubles = ctypes.POINTER(ctypes.c_double)
        if entry == "decide":
            self.library.decide.argtypes = [ctypes.c_char_p, ctypes.c_size_t, doubles]
        else:
            self.library.decide_values.argtypes = [ctypes.POINTER(ctypes.c_int64), doubles, ctypes.c_size_t, doubles]
        self.library.answer.argtypes = [ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_ubyte)]
        self.library.answer_name.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_size_t)]
        self.library.answer_name.restype = ctypes.c_void_p

    def score(self, document: bytes, outputs: int) -> tuple[int, np.ndarray, list[str] | str]:
        """``decide``'s status, decision values and the answer named (a list of labels for label sets)."""
        decisions = (ctypes.c_double * outputs)()
        status = self.library.decide(document, len(document), decisions)
        chosen = (ctypes.c_ubyte * outputs)()
        given = self.library.answer(decisions, chosen)
        names = [self.name(k) for k in range(outputs)] if outputs > 1 else []
        return status, np.array(decisions[:]), given, chosen[:], names

    def score_values(self, columns: np.ndarray, values: np.ndarray) -> tuple[int, float, int]:
        """``decide_values``' status, decision value and answer of a two-class model's row."""
        columns = np.ascontiguousarray(columns, dtype=np.int64)
        values = np.ascontiguousarray(values, dtype=np.float64)
        decisions = (ctypes.c_double * 1)()
        status = self.library.decide_values(
            columns.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
            values.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
            len(columns),
            decisions,
        )
        return status, decisions[0], self.library.answer(decisions, (ctypes.c_ubyte * 1)())

    def name(self, k: int) -> str:
        size = ctypes.c_size_t()
        address = self.library.answer_name(k, ctypes.byref(size))
        return ctypes.string_at(address, size.value).decode("utf-8", "surrogatepass")


def assert_scores_as_predict(model_path: Path, scorer: Scorer, texts: list[str]) -> None:
    """Every text's decision values are predict's to the bit, and its answer is predict's."""
    model = load_model(model_path)
    outputs = len(model.classes)
    expected = np.asarray(model.decision_function(texts), dtype=np.float64).reshape(len(texts), outputs)
    answers = model.predict(texts)
    for row, text in enumerate(texts):
        status, decisions, given, chosen, names = scorer.score(text.encode("utf-8"), outputs)
        assert status == 0
        assert decisions.tobytes() == expected[row].tobytes(), (row, decisions, expected[row])
        if model.label_sets:
            assert [label for label, yes in zip(model.classes, chosen) if yes] == answers[row], row
        else:
            assert scorer.name(given) == answers[row], row


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("export")


@pytest.mark.parametrize("name", list(BINARY_CHAINS))
def test_a_two_class_model_scores_every_document_as_predict_does(folder, name):
    model = trained(folder, name, "--positive", "1", GRAIN, *shlex.split(BINARY_CHAINS[name]))
    assert_scores_as_predict(model, Scorer(model, folder), documents())


def test_thresholds_chosen_by_f1_are_applied_as_predict_applies_them(folder):
    chain = f"{DEFAULTS} --stopwords weka shape bns l2".split()
    model = trained(folder, "threshold", "--positive", "1", "--svm-threshold", "f1", GRAIN, *chain)
    assert load_model(model).thresholds()[0] is not None
    assert_scores_as_predict(model, Scorer(model, folder), documents())


@pytest.mark.parametrize(("threshold", "shaping"), [("fixed", "max"), ("f1", "max"), ("fixed", "one-vs-rest")])
def test_a_multi_class_model_scores_and_answers_as_predict_does(folder, threshold, shaping):
    chain = f"{DEFAULTS} --stopwords weka shape --multiclass {shaping} bns l2".split()
    name = f"topics-{threshold}-{shaping}"
    model = trained(folder, name, "--multiclass", "--svm-threshold", threshold, three_classes(folder), *chain)
    scorer = Scorer(model, folder)
    assert [scorer.name(k) for k in range(3)] == list(load_model(model).classes)
    assert_scores_as_predict(model, scorer, documents())


@pytest.mark.parametrize("shaping", ["max", "one-vs-rest"])
def test_a_label_set_model_scores_each_label_as_predict_does(folder, shaping):
    chain = f"{DEFAULTS} --stopwords weka shape --multiclass {shaping} bns l2".split()
    model = trained(folder, f"labels-{shaping}", LABEL_SETS, *chain)
    assert_scores_as_predict(model, Scorer(model, folder), documents())


RARE_LABEL_SETS = ROOT / "tests" / "data" / "multilabel" / "three-labels-synthetic.arff"


def rare_label_documents() -> list[str]:
    """The documents of :data:`RARE_LABEL_SETS` (its label ``rare`` held by one row), and some of no word it has."""
    rows = RARE_LABEL_SETS.read_text(encoding="utf-8").split("@data\n", 1)[1].splitlines()
    return [row.split(",", 3)[3].strip("'") for row in rows if row] + ["", "omega", "pi pi pi zeta"]


@pytest.mark.parametrize("threshold", ["fixed", "f1", "fbr"])
def test_a_label_set_whose_rare_label_has_no_sigmoid_scores_each_label_by_its_own_rule(folder, threshold):
    """A label too rare for Platt's inner folds is decided by its margin, the others by their probabilities; the
    export refused such a model ("the labels' classifiers apply different rules")."""
    model = trained(folder, f"rare-{threshold}", "--svm-threshold", threshold, RARE_LABEL_SETS, "words", "bns", "l2")
    rules = [call("exported_rule") for call in load_model(model).classifiers]
    assert [sigmoids is None for sigmoids, _ in rules] == [False, False, True]
    scorer = Scorer(model, folder)
    assert_scores_as_predict(model, scorer, rare_label_documents())
    # probabilities(): each label's, NaN for the rare one, as predict_proba (it returned -1 for them all)
    loaded, texts = load_model(model), rare_label_documents()
    expected, decisions = loaded.predict_proba(texts), loaded.decision_function(texts)
    doubles = ctypes.POINTER(ctypes.c_double)
    scorer.library.probabilities.argtypes = [doubles, doubles]
    for row in range(len(texts)):
        given, out = (ctypes.c_double * 3)(*decisions[row]), (ctypes.c_double * 3)()
        assert scorer.library.probabilities(given, out) == 0
        np.testing.assert_allclose(out[:], expected[row], rtol=1e-6, atol=0)
        assert np.isnan(out[2]) and np.isnan(expected[row, 2])


def constant_label_sets(folder: Path) -> Path:
    """:data:`RARE_LABEL_SETS` with its label ``rare`` held by no row: a constant label, which no classifier decides."""
    head, rows = RARE_LABEL_SETS.read_text(encoding="utf-8").split("@data\n", 1)
    fields = [row.split(",", 3) for row in rows.splitlines() if row]
    path = folder / "constant-label.arff"
    path.write_text(head + "@data\n" + "".join(f"{a},{b},0,{text}\n" for a, b, _, text in fields), encoding="utf-8")
    return path


def test_a_label_set_with_a_constant_label_scores_as_predict_does(folder):
    model = trained(folder, "constant", constant_label_sets(folder), "words", "bns", "l2")
    assert load_model(model).constants == [None, None, False]
    assert_scores_as_predict(model, Scorer(model, folder), rare_label_documents())


def test_bytes_that_are_not_utf8_are_refused_by_the_scorer(folder):
    model = trained(folder, "refusing", "--positive", "1", GRAIN, *BINARY_CHAINS["default-bns"].split())
    scorer = Scorer(model, folder)
    for document in (b"\xff", b"wheat \xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf"):
        assert scorer.score(document, 1)[0] == -1, document


def test_the_main_scores_one_document_a_line_or_each_ended_by_nul(folder):
    model = trained(folder, "main", "--positive", "1", GRAIN, *BINARY_CHAINS["default-shape"].split())
    source = folder / "main.c"
    assert run_filterkit("export", model, "--c", source).status == 0
    program = folder / "main-scorer"
    subprocess.run([COMPILER, "-std=c99", "-O2", "-o", str(program), str(source), "-lm"], check=True)
    texts = ["wheat and corn exports", "", "the weather was fine"]
    lines = subprocess.run([program], input="\n".join(texts).encode(), capture_output=True, check=True).stdout
    ended = subprocess.run([program, "-0"], input=b"".join(t.encode() + b"\0" for t in texts), capture_output=True)
    assert lines == ended.stdout
    loaded = load_model(model)
    expected = loaded.decision_function(texts)
    rows = [line.split("\t") for line in lines.decode().splitlines()]
    assert [row[0] for row in rows] == loaded.predict(texts)
    assert [float(row[1]) for row in rows] == expected.tolist()
    refused = subprocess.run([program], input=b"wheat\n\xff\n", capture_output=True)
    assert refused.returncode == 1 and b"document 2: not UTF-8" in refused.stderr


def hostile_model(model: Path, folder: Path, hostile: list[str]) -> Path:
    """``model`` with its first words and stop words rewritten to ``hostile``."""
    document = json.loads(model.read_text())
    words = document["stages"][0]["state"]["words"]
    words[: len(hostile)] = hostile
    document["stages"][0]["state"]["stopwords"][:2] = ["*/", "??/"]
    path = folder / "hostile.json"
    path.write_text(json.dumps(document))
    return path


def test_no_string_of_a_model_becomes_code(folder):
    model = trained(folder, "plain", "--positive", "1", GRAIN, *BINARY_CHAINS["default-bns"].split())
    hostile = ['"', "\\", "*/", "??/", "a\x00b", "line\nbreak", "??=define", "'\\0'", "*/ int x; /*", "\u2028"]
    path = hostile_model(model, folder, hostile)
    scorer = Scorer(path, folder)
    text = scorer.source.read_text(encoding="utf-8")
    assert "??/" not in text and "line\nbreak" not in text and "*/ int x" not in text
    assert_scores_as_predict(path, scorer, documents()[:5] + ['" \\ */ ??/ a b', "line break ??=define"])


def test_labels_that_would_break_out_of_c_source_are_data(folder):
    names = ("*/ int x; /*", '??/ "quoted" \\', "line\nbreak ??=")
    chain = f"{DEFAULTS} shape --multiclass max bns l2".split()
    model = trained(folder, "hostile-labels", "--multiclass", three_classes(folder, names), *chain)
    scorer = Scorer(model, folder)
    assert sorted(scorer.name(k) for k in range(3)) == sorted(names)
    assert "*/ int x" not in scorer.source.read_text(encoding="utf-8")
    assert_scores_as_predict(model, scorer, documents()[:20])


def test_a_model_predict_would_not_load_is_not_exported(folder):
    model = trained(folder, "surrogate", "--positive", "1", GRAIN, *BINARY_CHAINS["default-bns"].split())
    path = hostile_model(model, folder, ["\udcff"])
    result = run_filterkit("export", path, "--c", folder / "surrogate.c")
    assert result.status == 1 and "not a filterkit model" in result.stderr
    assert "stages[0].state.words[0] holds a lone surrogate" in result.stderr
    assert "UnicodeEncodeError" not in result.stderr
    assert not (folder / "surrogate.c").exists()


def test_a_chain_it_cannot_compute_exactly_is_refused_naming_the_stage(folder):
    model = trained(folder, "logodds", "--positive", "1", GRAIN, *f"{DEFAULTS} shape --transform logodds l2".split())
    result = run_filterkit("export", model, "--c", folder / "refused.c")
    assert result.status == 1
    assert "stage 'shape' cannot be exported" in result.stderr and "logodds" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (folder / "refused.c").exists()


def test_shaping_on_knots_too_far_apart_is_refused_naming_that_cause(folder):
    """The refusal named three causes, one of them an option the user never gave (--transform logodds)."""
    head, rows = (ROOT / "arff_samples" / "iris.arff").read_text(encoding="utf-8").split("@DATA\n", 1)
    wide = [row.split(",") for row in rows.splitlines() if row[:1].isdigit()]
    path = folder / "iris-wide.arff"
    lines = [
        f"{float(a) * 1e-300!r},{float(b) * 1e305!r},{float(c) * 1e-315!r},{d},{label}" for a, b, c, d, label in wide
    ]
    path.write_text(head + "@DATA\n" + "\n".join(lines) + "\n", encoding="utf-8")
    model = trained(folder, "wide", "--positive", "Iris-versicolor", path, "shape", "bns", "l2")
    result = run_filterkit("export", model, "--c", folder / "wide.c")
    assert result.status == 1 and not (folder / "wide.c").exists()
    assert "stage 'shape' cannot be exported: two knots of a feature are so far apart or so close" in result.stderr
    assert "logodds" not in result.stderr


def test_a_file_that_is_not_a_model_is_refused_before_anything_is_written(folder):
    bad = folder / "bad.json"
    bad.write_text('{"format_version": 2}')
    result = run_filterkit("export", bad, "--c", folder / "bad.c")
    assert result.status == 1 and str(bad) in result.stderr
    assert not (folder / "bad.c").exists()


def test_the_model_is_never_overwritten_by_its_own_export(folder):
    model = trained(folder, "kept", "--positive", "1", GRAIN, *BINARY_CHAINS["default-bns"].split())
    before = model.read_bytes()
    result = run_filterkit("export", model, "--c", model)
    assert result.status == 2 and "the model" in result.stderr and "--c" in result.stderr
    assert model.read_bytes() == before


WORD_COUNT_CHAINS = {
    "shape": "shape bns l2",
    "bns": "bns --multiply l2",
    "idf": "idf --presence --multiply l2",
    "binarize": "binarize l2",
}


@pytest.mark.parametrize("name", list(WORD_COUNT_CHAINS))
def test_a_model_of_word_counts_scores_each_row_as_predict_does(folder, name):
    data = ROOT / "arff_samples" / "oh0.wc.arff"
    model_path = trained(folder, f"counts-{name}", "--positive", "Ethics", data, *WORD_COUNT_CHAINS[name].split())
    scorer = Scorer(model_path, folder, entry="decide_values")
    model = load_model(model_path)
    _, chunk = read_output(data.read_bytes())
    expected = model.decisions(model.features(chunk))
    answers = [model.labels[k] for k in model.predicted(model.features(chunk))]
    values = np.asarray(chunk.dense_values())
    values[:, model.input_schema.index_of("class")] = 0
    values[5, 3] = np.nan  # a missing value: shaped into its bin
    expected[5] = model.decisions(model.features(Chunk(values[5:6], {})))[0]
    for row in range(len(values)):
        columns = np.flatnonzero(values[row]).astype(np.int64)
        status, decisions, given = scorer.score_values(columns, values[row, columns])
        assert status == 0
        assert np.float64(decisions).tobytes() == np.float64(expected[row]).tobytes(), row
        assert row == 5 or scorer.name(given) == answers[row]
    assert scorer.score_values(np.array([model.input_schema.index_of("class")]), np.ones(1))[0] == -1
    assert scorer.score_values(np.array([3, 2]), np.ones(2))[0] == -1


def test_the_main_of_a_model_of_word_counts_reads_the_values_predict_reads(folder):
    """strtod's nan, inf, hexadecimal and a number past the doubles were each taken as a value (nan as missing)."""
    data = ROOT / "arff_samples" / "oh0.wc.arff"
    model = trained(folder, "counts-main", "--positive", "Ethics", data, *WORD_COUNT_CHAINS["bns"].split())
    source, program = folder / "counts-main.c", folder / "counts-main"
    assert run_filterkit("export", model, "--c", source).status == 0
    subprocess.run([COMPILER, "-std=c99", "-O2", "-o", str(program), str(source), "-lm"], check=True)
    for value in ("2", "2.5e0", "-.5", "?"):
        read = subprocess.run([program], input=f"2:{value} 3:1\n".encode(), capture_output=True)
        assert read.returncode == 0 and read.stdout.count(b"\t") == 1, (value, read.stderr)
    for value in ("nan", "inf", "-infinity", "1e999", "0x1p3", "2x"):
        refused = subprocess.run([program], input=f"2:1\n2:{value} 3:1\n".encode(), capture_output=True)
        assert refused.returncode == 1 and b"row 2: not INDEX:VALUE pairs" in refused.stderr, value


def test_a_stage_of_a_subclass_that_computes_otherwise_is_refused():
    from filterkit.errors import FilterkitError
    from filterkit.export.c_source import c_source
    from filterkit_plugins.normalizers import L2Normalizer

    class Doubled(L2Normalizer):
        name = "l2x"

        def transform(self, chunk):
            return super().transform(chunk)

    class Renamed(L2Normalizer):
        name = "l2y"

    model = load_model(trained_model_of(BINARY_CHAINS["default-bns"]))
    model.chain.stages[-1].__class__ = Doubled
    with pytest.raises(FilterkitError, match="its class .*Doubled defines its own transform"):
        c_source(model)
    model.chain.stages[-1].__class__ = Renamed
    assert "decide(" in c_source(model)


def nan_class_model(folder: Path) -> Path:
    """A three-class model whose second class weighs "wheat" and "corn" at the edge of the doubles: a document holding
    both has a NaN decision value there (the products overflow in the order predict sums them)."""
    chain = DEFAULTS.split()
    path = trained(folder, "nan-class", "--multiclass", "--svm-decision", "margin", three_classes(folder), *chain)
    document = json.loads(path.read_text())
    words = document["stages"][0]["state"]["words"]
    weights = document["classifier"]["state"]["weights"]["array"]
    values = np.frombuffer(base64.b64decode(weights["base64"]), dtype="<f8").reshape(weights["shape"]).copy()
    values[1, words.index("wheat")], values[1, words.index("corn")] = 1.7e308, -1.7e308
    weights["base64"] = base64.b64encode(values.tobytes()).decode()
    path.write_text(json.dumps(document))
    return path


def test_a_nan_score_answers_as_numpy_argmax_does(folder):
    """A class whose decision value is NaN (weights at the edge of the doubles): ``decide`` refuses the row (-3), as
    filterkit's own decision_function and predict do (a decision that is not a finite number), with the values as
    the model computes them written all the same, and ``answer`` of them answers as np.argmax does (the first NaN)."""
    path = nan_class_model(folder)
    scorer, model = Scorer(path, folder), load_model(path)
    texts = ["wheat wheat corn corn tonnes", "wheat", "corn"]
    with pytest.raises(FilterkitError, match="^row 1: its decision value is not a finite number"):
        model.decision_function(texts)
    features = model.transform(texts)
    expected, answers = model.decisions(features), [model.labels[k] for k in model.predicted(features)]
    assert np.isnan(expected[0, 1]) and np.isfinite(expected[1:]).all()
    for row, text in enumerate(texts):
        status, decisions, given, _, _ = scorer.score(text.encode("utf-8"), len(model.classes))
        assert status == (-3 if row == 0 else 0)
        assert decisions.tobytes() == expected[row].tobytes() and scorer.name(given) == answers[row]


@pytest.mark.nightly
@pytest.mark.parametrize("name", ["default-shape", "characters", "hashing"])
def test_the_whole_scorer_is_clean_under_the_sanitizers_and_every_warning(folder, name):
    model = trained(folder, f"sanitized-{name}", "--positive", "1", GRAIN, *shlex.split(BINARY_CHAINS[name]))
    source, program = folder / f"sanitized-{name}.c", folder / f"sanitized-{name}"
    assert run_filterkit("export", model, "--c", source).status == 0
    strict = ["-std=c99", "-O1", "-g", "-Wall", "-Wextra", "-pedantic", "-Werror", "-fno-sanitize-recover=all"]
    built = subprocess.run(
        [COMPILER, *strict, "-fsanitize=address,undefined", "-o", str(program), str(source), "-lm"],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    texts = documents()
    run = subprocess.run(
        [program, "-0"], input=b"".join(t.encode() + b"\0" for t in texts), capture_output=True, timeout=600
    )
    assert run.returncode == 0 and b"runtime error" not in run.stderr, run.stderr[-3000:]
    expected = load_model(model).decision_function(texts)
    assert [float(line.split(b"\t")[1]) for line in run.stdout.splitlines()] == expected.tolist()


def test_a_label_the_scorers_answer_lines_cannot_carry_whole_is_warned_of(folder):
    # main wrote it as it is, silently: a line break split one answer over two lines (answer_name gives it whole)
    iris = ROOT / "tests" / "data" / "real" / "iris.arff"
    renamed = folder / "iris-line-break.arff"
    renamed.write_text(iris.read_text().replace("Iris-setosa", "'Iris\\nsetosa'"))
    model = trained(folder, "line-break", "--svm-c-values", "1", "--multiclass", renamed, "l2")
    source = folder / "line-break.c"
    result = run_filterkit("export", "--c", source, model)
    assert result.status == 0 and source.exists()
    assert result.stderr == (
        "filterkit: warning: label 'Iris\\nsetosa' holds '\\n', which the C scorer's main writes as it is, "
        "making its answer lines ambiguous: read answers with answer_name() in a program\n"
    )
    assert run_filterkit("export", "--c", folder / "plain.c", trained_model_of(DEFAULTS)).stderr == ""


def test_a_decision_past_a_double_s_range_is_refused_as_predict_refuses_it(folder):
    """Weights edited to 1.7e308: predict refuses the row ("its decision value is not a finite number"); the scorer
    wrote ``inf`` and answered a label with status 0, and now returns -3 and its main refuses the document."""
    import base64

    model = trained(folder, "overflowing", "--positive", "1", GRAIN, *BINARY_CHAINS["default-bns"].split())
    document = json.loads(model.read_text())
    shape = document["classifier"]["state"]["weights"]["array"]["shape"]
    huge = np.full(shape, 1.7e308).astype("<f8")
    document["classifier"]["state"]["weights"] = {
        "array": {"dtype": "<f8", "shape": shape, "base64": base64.b64encode(huge.tobytes()).decode()}
    }
    edited = folder / "overflowing-edited.json"
    edited.write_text(json.dumps(document))
    text = "wheat grain corn exports"
    with pytest.raises(FilterkitError, match="its decision value is not a finite number"):
        load_model(edited).decision_function([text])
    scorer = Scorer(edited, folder)
    assert scorer.score(text.encode(), 1)[0] == -3
    assert scorer.score(b"", 1)[0] == 0  # no word: the intercept alone, finite
    program = folder / "overflowing-scorer"
    subprocess.run([COMPILER, "-std=c99", "-O2", "-o", str(program), str(scorer.source), "-lm"], check=True)
    refused = subprocess.run([program], input=f"\n{text}\n".encode(), capture_output=True)
    assert refused.returncode == 1 and refused.stdout.count(b"\n") == 1
    assert b"document 2: its decision value is not a finite number" in refused.stderr
