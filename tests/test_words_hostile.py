"""``words`` under hostile input (issue 47): crafted words, one long document, many declared labels,
edited models and a stop word file with a byte-order mark."""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
import time
import tracemalloc

import numpy as np
import pytest

from filterkit import _words
from filterkit.errors import FilterkitError
from filterkit.schema import NOMINAL, STRING, Attribute, Chunk, Schema
from filterkit.stage import Context
from filterkit.word_tokens import read_stopwords
from filterkit_plugins.words import WordVector

FNV_START, FNV_PRIME = 14695981039346656037, 1099511628211
LETTERS = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)


def fnv_colliding_words(n: int, bits: int = 16) -> list[str]:
    """``n`` distinct 18-letter words whose unkeyed FNV-1a hashes (what ``_words.c`` hashed with
    before) share their low ``bits`` bits, so that they all probed the same run of an open-addressing
    table of up to 2**bits slots.  The low bits of FNV-1a depend on the low bits of its state alone:
    from one state, the 4-letter blocks leading to the most common low bits are interchangeable, and
    four such steps multiply."""
    blocks = np.array(list(itertools.product(LETTERS, repeat=4)), dtype=np.uint64)
    state, choices = np.uint64(FNV_START), []
    with np.errstate(over="ignore"):
        for _ in range(4):
            hashes = np.full(len(blocks), state, dtype=np.uint64)
            for column in range(4):
                hashes = (hashes ^ blocks[:, column]) * np.uint64(FNV_PRIME)
            low = (hashes & np.uint64((1 << bits) - 1)).astype(np.int64)
            common = np.flatnonzero(low == np.bincount(low).argmax())
            choices.append([bytes(blocks[k].astype(np.uint8)).decode() for k in common])
            state = hashes[common[0]]
    words = ["".join(parts) + "zz" for parts in itertools.islice(itertools.product(*choices), n)]
    assert len(words) == n
    return words


def fnv_low_bits(word: str, bits: int) -> int:
    value = FNV_START
    for byte in word.encode():
        value = ((value ^ byte) * FNV_PRIME) % 2**64
    return value & ((1 << bits) - 1)


SCHEMA = Schema("docs", (Attribute("text", STRING), Attribute("class", NOMINAL, ("n", "y"))))


def fitted_statistics(stage: WordVector, texts: list[str], labels=None):
    """``stage``'s statistics of one chunk of ``texts``."""
    values = np.zeros((len(texts), 2))
    if labels is not None:
        values[:, 1] = labels
    statistics = stage.new_statistics()
    return stage.accumulate(statistics, Chunk(values, {0: texts})), statistics


def counting_time(words: list[str]) -> float:
    """The least CPU time of three fits of documents of 100 of ``words`` each."""
    texts = [" ".join(words[start : start + 100]) for start in range(0, len(words), 100)]
    times = []
    for _ in range(3):
        stage = WordVector()
        stage.prepare(SCHEMA, Context(class_index=1))
        started = time.process_time()
        fitted_statistics(stage, texts)
        times.append(time.process_time() - started)
    return min(times)


@pytest.mark.slow
def test_crafted_words_cost_linear_time():
    crafted = fnv_colliding_words(30_000)
    assert len({fnv_low_bits(word, 16) for word in crafted[::1000]}) == 1  # they did collide unkeyed
    generator = random.Random(47)
    random_words = ["".join(generator.choices("abcdefghijklmnopqrstuvwxyz", k=18)) for _ in range(30_000)]
    # 30,000 words in one run of probes took 40 times the random words' time unkeyed
    assert counting_time(crafted) < 5 * counting_time(random_words) + 0.01


def tally_time(keys: np.ndarray) -> float:
    """The least CPU time of three tallies of ``keys``, 10,000 at a time (as a chunk's pairs come)."""
    times = []
    for _ in range(3):
        tally, started = _words.Tally(), time.process_time()
        for start in range(0, len(keys), 10_000):
            tally.add(keys[start : start + 10_000], np.ones(len(keys[start : start + 10_000]), dtype=np.int64))
        times.append(time.process_time() - started)
    return min(times)


@pytest.mark.slow
def test_pairs_made_to_share_their_low_bits_cost_linear_time():
    # (class, word) keys alike in their low 24 bits: unhashed they would all probe one run of slots
    crafted = np.arange(300_000, dtype=np.int64) << 24
    spread = np.random.default_rng(4).integers(0, 2**62, 300_000, dtype=np.int64)
    assert tally_time(crafted) < 5 * tally_time(spread) + 0.01


@pytest.mark.slow
def test_the_output_does_not_depend_on_the_hash_key(tmp_path):
    words = fnv_colliding_words(3_000) + ["Wheat", "corn", "rice"] * 10
    random.Random(1).shuffle(words)
    rows = "\n".join(f"'{' '.join(words[k : k + 30])}',{'ny'[k % 2]}" for k in range(0, len(words), 30))
    path = tmp_path / "docs.arff"
    path.write_text(f"@relation docs\n@attribute text string\n@attribute class {{n,y}}\n@data\n{rows}\n")
    outputs = {
        subprocess.run(
            [sys.executable, "-m", "filterkit", str(path), "words", "--lowercase", "--ngrams", "1-2"],
            capture_output=True,
            check=True,
        ).stdout
        for _ in range(3)  # three processes, three keys
    }
    assert len(outputs) == 1 and outputs.pop().count(b"@attribute") > 3_000


def peak_while(call) -> int:
    """The most memory (bytes, tracemalloc's: Python's, numpy's and _words.c's) ``call`` held at once."""
    tracemalloc.start()
    try:
        call()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


@pytest.mark.parametrize("accent", ["", "é"], ids=["compiled", "python tokenizer"])
def test_one_long_document_stops_at_the_word_bound_while_it_is_counted(accent, monkeypatch):
    monkeypatch.setenv("FILTERKIT_MAX_ATTRIBUTES", "1000")  # at most 2,000 distinct words while fitting
    generator = random.Random(2)
    document = accent + " ".join("".join(generator.choices("abcdefghij", k=7)) for _ in range(100_000))
    stage = WordVector(ngrams="1-10")
    stage.prepare(SCHEMA, Context(class_index=1))

    def fit():
        with pytest.raises(FilterkitError, match="hold more than 2,000 distinct words"):
            fitted_statistics(stage, [document])

    # counted whole, its 1,000,000 n-grams held about 100 times the document's 800 KB
    assert peak_while(fit) < 12 * len(document)


def test_per_class_counts_cost_the_pairs_that_occur_not_declared_classes_times_words():
    labels = tuple(f"c{k}" for k in range(3_000))
    schema = Schema("docs", (Attribute("text", STRING), Attribute("class", NOMINAL, labels)))
    stage = WordVector()
    stage.prepare(schema, Context(class_index=1))
    texts = [f"word{k}" for k in range(3_000)]
    # dense, the two int64 tables of 3,000 classes x 3,000 words took 144 MB
    assert peak_while(lambda: fitted_statistics(stage, texts, np.arange(3_000))) < 4_000_000
    stage.finalize(fitted_statistics(stage, texts, np.arange(3_000))[1])
    assert stage.words == texts and stage.document_counts.tolist() == [1] * 3_000


def test_statistics_merged_are_the_statistics_of_the_whole():
    labels = tuple(f"c{k}" for k in range(5))
    schema = Schema("docs", (Attribute("text", STRING), Attribute("class", NOMINAL, labels)))
    generator = random.Random(3)
    texts = [" ".join(generator.choices(["a", "b", "c", "d", "e", "f"], k=5)) for _ in range(200)]
    classes = np.array([generator.randrange(5) for _ in texts])
    stage = WordVector(words_to_keep=2, counts=True)
    stage.prepare(schema, Context(class_index=1))
    whole = fitted_statistics(stage, texts, classes)[1]
    parts = [fitted_statistics(stage, texts[k : k + 30], classes[k : k + 30])[1] for k in range(0, 200, 30)]
    merged = parts[0]
    for part in parts[1:]:
        merged = stage.merge(merged, part)
    words = whole.vocabulary.words
    expected = sorted(zip(*(a.tolist() for a in whole.pairs())), key=lambda p: (p[0], words[p[1]]))
    renamed = merged.vocabulary.words
    found = sorted(
        ((c, words.index(renamed[i]), o, d) for c, i, o, d in zip(*merged.pairs())), key=lambda p: (p[0], words[p[1]])
    )
    assert found == expected and merged.n_documents == whole.n_documents == 200


def model_state(**changes) -> dict:
    stage = WordVector(lowercase=True)
    stage.prepare(SCHEMA, Context(class_index=1))
    stage.finalize(fitted_statistics(stage, ["wheat corn", "corn"])[1])
    return {**stage.state(), **changes}


@pytest.mark.parametrize(
    "changes, reason",
    [
        ({"document_counts": [True, 1]}, "'document_counts' holds true or false"),
        ({"n_documents": 2**70}, "'n_documents' is not a whole number"),
        ({"n_documents": True}, "'n_documents' is not a whole number"),
        ({"words": ["corn", "Wheat"]}, "'Wheat' is not lowercase"),
    ],
    ids=["a boolean count", "2**70 documents", "true documents", "an uppercase word"],
)
def test_a_model_with_impossible_words_state_is_refused(changes, reason):
    stage = WordVector(lowercase=True)
    stage.prepare(SCHEMA, Context(class_index=1))
    state = json.loads(json.dumps(model_state(**changes)))  # as a model file holds it
    with pytest.raises(FilterkitError, match=reason):
        stage.load_state(state)


def test_a_model_as_saved_loads():
    stage = WordVector(lowercase=True)
    stage.prepare(SCHEMA, Context(class_index=1))
    stage.load_state(json.loads(json.dumps(model_state())))
    assert stage.words == ["corn", "wheat"] and stage.document_counts.tolist() == [2, 1]


def test_saved_counts_past_2_to_the_53_are_refused_before_a_sum_could_wrap():
    stage = WordVector(counts=True)
    stage.prepare(SCHEMA, Context(class_index=1))
    saved = stage.saved_statistics(fitted_statistics(stage, ["wheat corn", "corn"])[1])
    assert stage.loaded_statistics(saved).pairs()[2].tolist() == [2, 1]  # corn, wheat: as saved, it loads
    saved["occurrences"] = np.array([1, 2**63 - 1], dtype=np.int64)
    with pytest.raises(ValueError, match="below 2\\*\\*53"):
        stage.loaded_statistics(saved)


def test_a_byte_order_mark_is_not_part_of_the_first_stop_word(tmp_path):
    path = tmp_path / "stop.txt"
    path.write_bytes("\ufeffThe\nand\n".encode())
    assert read_stopwords(str(path)) == {"the", "and"}


def test_a_stop_word_line_is_trimmed_as_java_trims_it(tmp_path):
    """Weka's Stopwords.read trims each line with String.trim: U+00A0 and U+3000 stay part of the word;
    its lines end at \\n, \\r or both (readLine), not at U+2028 as str.splitlines would."""
    path = tmp_path / "stop.txt"
    path.write_bytes("\tthe \r\n\u00a0and\ror\u3000\na\u2028b\n".encode())
    assert read_stopwords(str(path)) == {"the", "\u00a0and", "or\u3000", "a\u2028b"}
