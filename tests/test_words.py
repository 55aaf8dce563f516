"""The ``words`` stage against Weka 3.6's StringToWordVector, and the chain from documents to ``evaluate``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from chain_helpers import REAL, needs_weka, weka_java
from filterkit.arff import read_arff
from filterkit.errors import FilterkitError
from filterkit.kernels import WordVocabulary
from filterkit.model import save_model
from filterkit.plugins import Registered, Registry
from filterkit.runner import Chain
from filterkit.schema import NOMINAL, STRING, Attribute, Chunk, Schema
from filterkit.sources import MemorySource
from filterkit.testing import check_stage, read_output, run_filterkit
from filterkit.word_statistics import kept_pairs
from filterkit.word_tokens import WEKA_STOPWORDS, read_stopwords, tokenizer, unescaped
from filterkit_plugins.words import WordVector
from oracles import java_order

#: Debian's weka package ships Reuters-21578's grain and corn documents (one string, the class last).
EXAMPLES = Path("/usr/share/doc/weka/examples")
CORPORA = ("ReutersGrain", "ReutersCorn")
STRING_TO_WORD_VECTOR = "weka.filters.unsupervised.attribute.StringToWordVector"
NGRAM = "weka.core.tokenizers.NGramTokenizer"
#: Weka's delimiters and - < > /, with the escapes both --delimiters and Weka's option parser read.
DELIMITERS = r" \r\n\t.,;:'\"()?!-<>/"
#: Weka's delimiters and < > /: NGramTokenizer puts them in a regular expression's [...], where - would mean a range.
NGRAM_DELIMITERS = r" \r\n\t.,;:'\"()?!<>/"
#: Per compared option set: filterkit's options and Weka's.
OPTION_SETS = {
    "counts-lowercase-all": (["--counts", "--lowercase", "--words-to-keep", "100000"], ["-C", "-L", "-W", "100000"]),
    "per-class-1000": (["--words-to-keep", "1000"], ["-W", "1000"]),
    "whole-corpus-min-2": (["--whole-corpus", "--min-term-freq", "2"], ["-O", "-M", "2"]),
    "log-tf-idf-counts": (["--log-tf", "--idf", "--counts"], ["-T", "-I", "-C"]),
    "stopwords-prefix": (["--stopwords", "weka", "--lowercase", "--prefix", "w_"], ["-S", "-L", "-P", "w_"]),
    "delimiters": (
        ["--words-to-keep", "100000", "--delimiters", DELIMITERS],
        ["-W", "100000", "-tokenizer", f'weka.core.tokenizers.WordTokenizer -delimiters "{DELIMITERS}"'],
    ),
    "ngrams-1-2": (
        ["--ngrams", "1-2", "--counts", "--lowercase", "--words-to-keep", "100000", "--delimiters", NGRAM_DELIMITERS],
        ["-C", "-L", "-W", "100000", "-tokenizer", f'{NGRAM} -min 1 -max 2 -delimiters "{NGRAM_DELIMITERS}"'],
    ),
    "ngrams-2-3-stopwords": (
        ["--ngrams", "2-3", "--stopwords", "weka", "--lowercase"],
        ["-S", "-L", "-tokenizer", f"{NGRAM} -min 2 -max 3"],
    ),
    "alphabetic": (
        ["--tokenizer", "alphabetic", "--counts", "--words-to-keep", "100000"],
        ["-C", "-W", "100000", "-tokenizer", "weka.core.tokenizers.AlphabeticTokenizer"],
    ),
}
COMPARED = [(corpus, options) for corpus in CORPORA for options in OPTION_SETS]
#: Documents (two string attributes, the second's first value missing) for the tokenizers' edge cases:
#: words holding spaces (--delimiters without one) that NGramTokenizer trims, n-grams that stop at an
#: attribute's end, documents shorter than MIN, stop words around n-grams, letters outside a-z.
EDGE_DOCUMENTS = [
    (" one two, three ,four", None),
    ("The cat sat on the mat", "of the"),
    ("café2go x_y Ünïcode 3D", "solo"),
    ("", "Five. six seven"),
    ("100%sure ue g\\\\h", "e%f"),
]
#: Per edge case: filterkit's options and Weka's, both run on EDGE_DOCUMENTS.
EDGE_OPTION_SETS = {
    "ngrams-1-3-trimmed": (
        ["--ngrams", "1-3", "--delimiters", ".,"],
        ["-C", "-tokenizer", f'{NGRAM} -min 1 -max 3 -delimiters ".,"'],
    ),
    "ngrams-2-2-stopwords": (
        ["--ngrams", "2-2", "--stopwords", "weka"],
        ["-C", "-S", "-tokenizer", f"{NGRAM} -min 2 -max 2"],
    ),
    "ngrams-3-4": (["--ngrams", "3-4"], ["-C", "-tokenizer", f"{NGRAM} -min 3 -max 4"]),
    "escaped-delimiters": (  # Weka's Utils.unbackQuoteChars reads \\% and \\u001E too; a backslash is no delimiter
        ["--delimiters", " \\%\\u001E"],
        ["-C", "-tokenizer", 'weka.core.tokenizers.WordTokenizer -delimiters " \\\\%\\\\u001E"'],
    ),
    "alphabetic": (
        ["--tokenizer", "alphabetic", "--lowercase"],
        ["-C", "-L", "-tokenizer", "weka.core.tokenizers.AlphabeticTokenizer"],
    ),
}
#: Words whose lowercase depends on where they stand (Greek final sigma: ΟΔΟΣ.ΚΑΙ is οδος and
#: και, each word lowercased alone as Java's toLowerCase does), or that grow when lowercased.
CASED_DOCUMENTS = ["ΟΔΟΣ.ΚΑΙ ΣΟΦΟΣ", "İSTANBUL ΣΑΣ.Σ Ǆemal ẞtraße", "ΟΔΟΣ ΌΣΟΙ"]

#: One JVM for every Weka run: per line a filter class and its arguments, or STOPWORDS and a file
#: to write Weka's built-in stop words to.
RUN_WEKA_JAVA = """
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Enumeration;
import weka.core.Stopwords;
import weka.filters.Filter;

public class RunWeka {
    public static void main(String[] args) throws Exception {
        for (String line : Files.readAllLines(Path.of(args[0]))) {
            String[] words = line.split("\\t");
            if (words[0].equals("STOPWORDS")) {
                try (PrintWriter out = new PrintWriter(words[1], "UTF-8")) {
                    for (Enumeration e = new Stopwords().elements(); e.hasMoreElements();) {
                        out.println(e.nextElement());
                    }
                }
                continue;
            }
            Filter filter = (Filter) Class.forName(words[0]).getDeclaredConstructor().newInstance();
            Filter.filterFile(filter, Arrays.copyOfRange(words, 1, words.length));
        }
    }
}
"""


def _corpus(name: str, part: str = "train") -> Path:
    path = EXAMPLES / f"{name}-{part}.arff"
    if not path.is_file():
        pytest.skip(f"{path} is missing: Debian's weka package installs it")
    return path


@pytest.fixture(scope="session")
def weka_outputs(tmp_path_factory) -> dict:
    """Weka's StringToWordVector output per compared (corpus, option set), and its stop words."""
    folder = tmp_path_factory.mktemp("weka_words")
    outputs: dict = {"stopwords": folder / "stopwords.txt"}
    runs = [["STOPWORDS", str(outputs["stopwords"])]]
    for corpus, options in COMPARED:
        path = EXAMPLES / f"{corpus}-train.arff"
        if not path.is_file():
            continue
        out = folder / f"{corpus}.{options}.arff"
        runs.append([STRING_TO_WORD_VECTOR, *OPTION_SETS[options][1], "-i", str(path), "-c", "last", "-o", str(out)])
        outputs[corpus, options] = out
    cased = folder / "cased.arff"
    rows = "".join(f"'{text}',{'ab'[k % 2]}\n" for k, text in enumerate(CASED_DOCUMENTS))
    cased.write_text(f"@relation cased\n@attribute text string\n@attribute c {{a,b}}\n@data\n{rows}", encoding="utf-8")
    outputs["cased"] = cased
    runs.append([STRING_TO_WORD_VECTOR, "-L", "-i", str(cased), "-c", "last", "-o", str(folder / "cased.weka.arff")])
    edges = folder / "edges.arff"
    rows = "".join(
        f"'{first}',{'?' if second is None else repr(second)},{'ab'[k % 2]}\n"
        for k, (first, second) in enumerate(EDGE_DOCUMENTS)
    )
    edges.write_text(
        f"@relation edges\n@attribute t1 string\n@attribute t2 string\n@attribute c {{a,b}}\n@data\n{rows}",
        encoding="utf-8",
    )
    outputs["edges"] = edges
    for name, (_, weka_options) in EDGE_OPTION_SETS.items():
        out = folder / f"edges.{name}.arff"
        runs.append(
            [STRING_TO_WORD_VECTOR, *weka_options, "-W", "100000", "-i", str(edges), "-c", "last", "-o", str(out)]
        )
        outputs["edges", name] = out
    jobs = folder / "jobs.tsv"
    jobs.write_text("".join("\t".join(run) + "\n" for run in runs))
    java = weka_java(RUN_WEKA_JAVA, "-Xmx1g", "-Dfile.encoding=UTF-8")
    subprocess.run([*java, str(jobs)], check=True, capture_output=True, timeout=900)
    return outputs


def _filterkit(*args) -> bytes:
    result = run_filterkit(*args)
    assert result.status == 0, result.stderr
    return result.stdout


@needs_weka
@pytest.mark.slow
@pytest.mark.parametrize("corpus, options", COMPARED, ids="-".join)
def test_words_are_wekas_words_and_values(weka_outputs, corpus, options):
    ours_schema, ours = read_output(_filterkit(_corpus(corpus), "words", *OPTION_SETS[options][0]))
    weka_schema, weka = read_arff(str(weka_outputs[corpus, options]))
    assert [a.name for a in ours_schema.attributes] == [a.name for a in weka_schema.attributes]
    assert ours_schema.attributes[0].same_declaration(weka_schema.attributes[0])  # the class, moved first
    assert ours.is_sparse
    ours_values, weka_values = ours.values.tocsr(), weka.values.tocsr()
    # the same non-zeros in every document; values as Weka prints them (6 decimals)
    assert (ours_values != 0).nnz == (weka_values != 0).nnz
    assert abs(ours_values - weka_values).max() <= 5e-7 + 1e-12
    assert ours_values.nnz > 40_000


@needs_weka
@pytest.mark.slow
@pytest.mark.parametrize("options", EDGE_OPTION_SETS)
def test_tokenizers_edge_cases_are_wekas(weka_outputs, options):
    ours_options = [*EDGE_OPTION_SETS[options][0], "--counts", "--words-to-keep", "100000"]
    ours_schema, ours = read_output(_filterkit(weka_outputs["edges"], "words", *ours_options))
    weka_schema, weka = read_arff(str(weka_outputs["edges", options]))
    assert [a.name for a in ours_schema.attributes] == [a.name for a in weka_schema.attributes]
    assert ours.values.toarray().tolist() == weka.values.toarray().tolist()
    assert len(ours_schema) > 4


@needs_weka
@pytest.mark.slow
def test_lowercase_lowercases_each_word_as_weka(weka_outputs):
    ours, _ = read_output(_filterkit(weka_outputs["cased"], "words", "--lowercase"))
    theirs, _ = read_arff(str(weka_outputs["cased"].with_name("cased.weka.arff")))
    assert [a.name for a in ours.attributes] == [a.name for a in theirs.attributes]
    assert {"οδος", "και", "σας", "σ"} <= {a.name for a in ours.attributes}


@needs_weka
@pytest.mark.slow
def test_the_built_in_stop_words_are_wekas(weka_outputs):
    assert WEKA_STOPWORDS == frozenset(weka_outputs["stopwords"].read_text(encoding="utf-8").split())
    assert len(WEKA_STOPWORDS) == 525


@pytest.fixture(scope="module")
def grain_chain(tmp_path_factory) -> tuple[Path, bytes]:
    """``words --counts shape bns l2`` fitted on ReutersGrain's training documents, once for the
    module: the saved model and the output."""
    model = tmp_path_factory.mktemp("grain") / "grain.json"
    return model, _filterkit("--save-model", model, _corpus("ReutersGrain"), "words", "--counts", "shape", "bns", "l2")


@pytest.fixture(scope="module")
def corn_counts_idf() -> bytes:
    """``words --counts --idf`` on ReutersCorn's training documents, read as one chunk, once for the module."""
    return _filterkit(_corpus("ReutersCorn"), "words", "--counts", "--idf")


@pytest.mark.slow
def test_the_reuters_grain_chain_runs_and_is_evaluated(grain_chain):
    train = _corpus("ReutersGrain")
    schema, chunk = read_output(grain_chain[1])
    assert schema.attributes[0].name == "class-att" and len(schema) == 1485
    lengths = np.sqrt(np.asarray(chunk.values.multiply(chunk.values)[:, 1:].sum(axis=1))).ravel()
    assert np.allclose(lengths[lengths > 0], 1.0)
    # each fold fits the words on its training documents only
    report = run_filterkit("evaluate", "--json", "--folds", "3", train, "words", "--counts", "shape", "bns", "l2")
    assert report.status == 0, report.stderr
    assert 0.95 < json.loads(report.stdout)["auc"] <= 1.0


@pytest.mark.slow
def test_a_saved_words_model_applies_to_the_test_documents(tmp_path):
    train, test = _corpus("ReutersGrain"), _corpus("ReutersGrain", "test")
    model = tmp_path / "words.json"
    options = ["words", "--counts", "--idf", "--words-to-keep", "100000"]
    trained = _filterkit("--save-model", model, train, *options)
    assert _filterkit("apply", model, train).split(b"\n", 1)[1] == trained.split(b"\n", 1)[1]
    schema, applied = read_output(_filterkit("apply", model, test))
    assert schema.attributes == read_output(trained)[0].attributes and len(schema) > 10_000
    assert applied.n_rows == 604 and applied.values.nnz > 20_000


@pytest.mark.slow
def test_a_saved_documents_chain_applies_to_the_test_documents(grain_chain):
    test = _corpus("ReutersGrain", "test")
    model, trained = grain_chain
    schema, applied = read_output(_filterkit("apply", model, test))
    assert schema.attributes == read_output(trained)[0].attributes and applied.n_rows == 604


@pytest.mark.slow
def test_words_gives_the_same_bytes_for_any_chunk_size(corn_counts_idf):
    assert _filterkit("--chunk-rows", "7", _corpus("ReutersCorn"), "words", "--counts", "--idf") == corn_counts_idf


@pytest.mark.slow
@pytest.mark.parametrize(
    "options",
    [{}, {"counts": True, "log_tf": True, "idf": True}, {"whole_corpus": True, "lowercase": True, "words_to_keep": 3}],
    ids=str,
)
def test_words_passes_the_stage_contract(options):
    assert "generated rows (dense)" in check_stage(WordVector, **options)


def test_the_tokenizer_splits_at_wekas_delimiters():
    split = tokenizer(unescaped(WordVector().params["delimiters"]))
    assert split("It's 3.5 (tons),\tsaid\r\nU.S.! \"Why?\" x-y_z") == [
        "It", "s", "3", "5", "tons", "said", "U", "S", "Why", "x-y_z",
    ]  # fmt: skip
    assert tokenizer("")("one two") == ["one two"]
    assert tokenizer("-")("a--b-") == ["a", "b"]
    assert unescaped(r"\n\t\\x\q") == "\n\t\\x\\q"


def test_ties_at_the_last_word_kept_are_all_kept():
    """Per class (pairs ordered by class), the pairs reaching the words_to_keep-th largest count, ties kept."""
    classes = np.array([0, 0, 0, 0, 1, 1, 1])
    counts = np.array([5, 3, 3, 1, 2, 7, 2])
    assert kept_pairs(classes, counts, 2, 1).tolist() == [True, True, True, False, True, True, True]
    assert kept_pairs(classes, counts, 4, 1).tolist() == [True] * 7
    assert kept_pairs(classes, counts, 5, 1).tolist() == [True] * 7
    assert kept_pairs(classes, counts, 1, 1).tolist() == [True, False, False, False, False, True, False]
    assert kept_pairs(classes, counts, 10, 4).tolist() == [True, False, False, False, False, True, False]
    assert kept_pairs(classes[:0], counts[:0], 3, 1).tolist() == []
    assert kept_pairs(classes, counts, 2, 2**63).tolist() == [False] * 7  # beyond int64: nothing reaches it


def test_words_are_ordered_as_java_orders_strings():
    # U+FF5E sorts after U+1F600 in UTF-16 (its surrogates start at U+D83D), before it by code point
    assert sorted(["\uff5e", "\U0001f600", "Z", "a"], key=java_order) == ["Z", "a", "\U0001f600", "\uff5e"]
    vocabulary = WordVocabulary(["\uff5e", "\U0001f600", "Z", "a"])
    assert np.frombuffer(vocabulary.java_order(np.arange(4)), np.int64).tolist() == [2, 3, 1, 0]
    assert np.frombuffer(vocabulary.java_order(np.array([0, 3, 2])), np.int64).tolist() == [2, 1, 0]


def _documents(texts: list[str], labels: list[int]) -> tuple[Schema, Chunk]:
    schema = Schema(
        "docs", (Attribute("text", STRING), Attribute("n", "numeric"), Attribute("class", NOMINAL, ("yes", "no")))
    )
    values = np.column_stack([np.zeros(len(texts)), np.arange(len(texts)), labels]).astype(np.float64)
    return schema, Chunk(values, {0: texts}, None)


def _fitted(schema: Schema, chunk: Chunk, **options) -> Chain:
    chain = Chain([WordVector(**options)], class_spec="last")
    chain.fit(MemorySource(schema, chunk))
    return chain


def test_per_class_words_come_class_by_class_and_values_follow_the_options():
    schema, chunk = _documents(["b a a", "c b", "z y", "y"], [0, 0, 1, 1])
    stage = _fitted(schema, chunk, counts=True, idf=True).stages[0]
    assert [a.name for a in stage.output_schema().attributes] == ["n", "class", "a", "b", "c", "y", "z"]
    out = stage.transform(chunk).values.toarray()
    assert out[0].tolist() == [0.0, 0.0, 2 * np.log(4 / 1), np.log(4 / 2), 0.0, 0.0, 0.0]
    assert out[3].tolist() == [3.0, 1.0, 0.0, 0.0, 0.0, np.log(4 / 2), 0.0]


def test_stop_words_come_from_a_file_as_weka_reads_it(tmp_path):
    stopwords = tmp_path / "stop.txt"
    stopwords.write_text("# a comment\n  The \n\nAND\n")
    assert read_stopwords(str(stopwords)) == {"the", "and"}
    schema, chunk = _documents(["The cat and THE dog", "a cat"], [0, 1])
    stage = _fitted(schema, chunk, stopwords=str(stopwords)).stages[0]
    assert stage.words == ["cat", "dog", "a"]


def test_a_missing_stop_word_file_is_an_error_naming_it(tmp_path):
    missing = tmp_path / "none.txt"
    result = run_filterkit(_corpus("ReutersGrain"), "words", "--stopwords", missing)
    assert result.status == 1
    assert f"cannot read the stop word file '{missing}'" in result.stderr and "Traceback" not in result.stderr


#: Documents holding words named like the other attributes ('n', 'n_1', 'class'): the class first.
CLASHING_DOCUMENTS = [("class n x", 1, "yes"), ("n_1 n", 2, "no"), ("x class", 3, "yes"), ("n x", 4, "no")]


def _clashing_file(path: Path, documents) -> Path:
    rows = "".join(f"'{text}',{n},{n * 10},{label}\n" for text, n, label in documents)
    path.write_text(
        "@relation docs\n@attribute text string\n@attribute n numeric\n@attribute n_1 numeric\n"
        f"@attribute class {{yes,no}}\n@data\n{rows}"
    )
    return path


def test_a_word_named_like_another_attribute_is_renamed_with_the_first_free_suffix_and_one_warning(tmp_path):
    train = _clashing_file(tmp_path / "train.arff", CLASHING_DOCUMENTS)
    result = run_filterkit("--save-model", tmp_path / "m.json", "-o", tmp_path / "out.arff", train, "words")
    assert result.status == 0
    assert result.stderr == (
        "filterkit: warning: stage 1 'words' renames words named like another attribute (give --prefix to keep "
        "them): 'class' as 'class_1', 'n' as 'n_2', 'n_1' as 'n_1_1'\n"
    )
    schema, _ = read_arff(tmp_path / "out.arff")
    names = [a.name for a in schema.attributes]
    assert names == ["n", "n_1", "class", "class_1", "n_2", "x", "n_1_1"]
    # the words met in another order, a row at a time: the same names
    reordered = _clashing_file(tmp_path / "reordered.arff", CLASHING_DOCUMENTS[::-1])
    again = run_filterkit("--chunk-rows", "1", reordered, "words")
    assert [a.name for a in read_output(again.stdout)[0].attributes] == names
    applied = run_filterkit("apply", tmp_path / "m.json", train)
    assert applied.status == 0 and applied.stderr == ""
    assert [a.name for a in read_output(applied.stdout)[0].attributes] == names
    prefixed = run_filterkit(train, "words", "--prefix", "w:")
    assert prefixed.stderr == ""
    assert [a.name for a in read_output(prefixed.stdout)[0].attributes][3:] == ["w:class", "w:n", "w:x", "w:n_1"]


def test_the_warning_names_the_first_renamed_words_then_their_count():
    texts = [" ".join(f"a{k}" for k in range(8))]
    schema = Schema("docs", (Attribute("text", STRING), *(Attribute(f"a{k}", "numeric") for k in range(8))))
    chunk = Chunk(np.zeros((1, 9)), {0: texts}, None)
    chain = Chain([WordVector()], class_spec=None)
    chain.fit(MemorySource(schema, chunk))
    assert chain.warnings == [
        "stage 1 'words' renames words named like another attribute (give --prefix to keep them): "
        "'a0' as 'a0_1', 'a1' as 'a1_1', 'a2' as 'a2_1', 'a3' as 'a3_1', 'a4' as 'a4_1', … (8 in all)"
    ]


def test_a_registered_stemmer_stems_every_word(tmp_path):
    plugin = tmp_path / "suffixes.py"
    plugin.write_text(
        "from filterkit.hookspecs import hookimpl\n"
        "from filterkit.plugins import Stemmer\n\n\n"
        "@hookimpl\n"
        "def register_stemmers(register):\n"
        "    register(Stemmer('no-s', lambda word: word.removesuffix('s'), 'Drops a final s.'))\n"
    )
    documents = tmp_path / "docs.arff"
    documents.write_text("@relation d\n@attribute t string\n@attribute c {x,y}\n@data\n'cats cat dogs',x\n'dog',y\n")
    result = run_filterkit(documents, "words", "--counts", "--stemmer", "no-s", plugins_dir=tmp_path)
    assert result.status == 0, result.stderr
    schema, chunk = read_output(result.stdout)
    assert [a.name for a in schema.attributes] == ["c", "cat", "dog"]
    assert chunk.values.toarray().tolist() == [[0, 2, 1], [1, 0, 1]]
    unknown = run_filterkit(documents, "words", "--stemmer", "porter", plugins_dir=tmp_path)
    assert unknown.status == 1 and "no stemmer called 'porter' (installed: no-s)" in unknown.stderr


def test_the_stem_cache_stays_within_the_vocabulary_bound():
    schema, chunk = _documents(["cats dogs", "cat"], [0, 1])
    stage = _fitted(schema, chunk).stages[0]
    stage.stem, stage.most_words = (lambda word: word.removesuffix("s")), 3
    assert [stage._stemmed(f"w{k}s") for k in range(10)] == [f"w{k}" for k in range(10)]
    assert len(stage.stems) <= 3


def test_an_edited_model_is_refused(tmp_path):
    schema, chunk = _documents(["a b", "c"], [0, 1])
    chain = _fitted(schema, chunk)
    registry = Registry(stages={"words": Registered("words", WordVector, "words", "filterkit")})
    path = tmp_path / "model.json"
    save_model(path, chain, registry)
    document = json.loads(path.read_text())
    state = document["stages"][0]["state"]
    assert state["words"] == ["a", "b", "c"]
    state["words"][1] = "a"
    path.write_text(json.dumps(document))
    result = run_filterkit("apply", path, "-")
    assert result.status == 1 and "'words' names a word twice" in result.stderr


def test_words_are_cut_before_they_are_lowercased():
    # a delimiter that is a letter cuts at its own case only, as Weka cuts before lowercasing
    schema, chunk = _documents(["aXb axb", "AxB"], [0, 1])
    stage = _fitted(schema, chunk, delimiters="x ", lowercase=True, counts=True).stages[0]
    assert stage.words == ["a", "axb", "b"]
    assert stage.transform(chunk).values.toarray()[:, 2:].tolist() == [[1, 1, 1], [1, 0, 1]]


@pytest.mark.slow
def test_dask_engine_gives_the_local_output(tmp_path, corn_counts_idf):
    pytest.importorskip("dask.distributed")
    corpus = _corpus("ReutersCorn")
    distributed = tmp_path / "dask.arff"
    _filterkit("--engine", "dask", "--partitions", "3", "-o", distributed, corpus, "words", "--counts", "--idf")
    assert distributed.read_bytes() == corn_counts_idf


def test_a_document_with_a_missing_class_counts_in_the_first_class_as_in_weka():
    schema, chunk = _documents(["b", "a", "c"], [1, 1, 0])
    chunk.values[0, 2] = np.nan
    stage = _fitted(schema, chunk).stages[0]
    assert stage.words == ["b", "c", "a"]


def test_a_plugin_registering_something_else_as_a_stemmer_is_skipped(tmp_path):
    (tmp_path / "wrong.py").write_text(
        "from filterkit.hookspecs import hookimpl\n\n\n"
        "@hookimpl\n"
        "def register_stemmers(register):\n"
        "    register(str.lower)\n"
    )
    result = run_filterkit("plugins", plugins_dir=tmp_path)
    assert result.status == 0
    assert "where a filterkit.plugins.Stemmer is expected (in register_stemmers)" in result.stderr


def test_a_stop_word_file_that_never_ends_is_refused(monkeypatch):
    monkeypatch.setattr("filterkit.word_tokens.STOPWORD_FILE_CHARACTERS", 1000)
    result = run_filterkit(str(REAL / "reuters_grain_sample.arff"), "words", "--stopwords", "/dev/zero")
    assert result.status == 1
    assert result.stderr == (
        "filterkit: error: option --stopwords: '/dev/zero' holds more than 1,000 characters: not a stop word list\n"
    )


def test_words_on_a_file_without_text_is_an_error_naming_its_attributes_and_how_to_mark_text(tmp_path):
    iris = REAL / "iris.arff"
    output = tmp_path / "out.arff"
    result = run_filterkit("-o", output, iris, "words")
    assert result.status == 1
    assert result.stderr == (
        "filterkit: error: stage 'words' finds no string attribute to turn into words: the input holds "
        "'sepallength' numeric, 'sepalwidth' numeric, 'petallength' numeric, 'petalwidth' numeric, "
        "'class' nominal (3 labels) (the class); read a CSV or JSON Lines column as text with --text COLUMN "
        "(an ARFF file declares it 'string'), or choose string attributes with --attributes\n"
    )
    assert not output.exists()
    grain = REAL / "reuters_grain_sample.arff"
    chosen = run_filterkit(grain, "words", "--attributes", "2")
    assert chosen.status == 1
    assert chosen.stderr.startswith(
        "filterkit: error: stage 'words' finds no string attribute to turn into words among --attributes 2: "
        "the input holds 'Text' string, 'class-att' nominal (2 labels) (the class);"
    )
    with_text = run_filterkit(grain, "words")
    assert (with_text.status, with_text.stderr) == (0, "")


def test_the_attributes_words_names_without_text_are_bounded():
    schema = Schema("wide", tuple(Attribute("a" * 1000 + str(k), NOMINAL, ("x" * 1000,) * 1) for k in range(5000)))
    with pytest.raises(FilterkitError) as raised:
        Chain([WordVector()], class_spec=None).fit(MemorySource(schema, Chunk(np.zeros((1, 5000)), {}, None)))
    assert len(str(raised.value)) < 1000 and str(raised.value).count("…") == 7  # six names cut, then the count
