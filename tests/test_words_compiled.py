"""The compiled tokenizer and counter of ``words`` (``filterkit/_words.c``) against a Python
oracle over ``WordVector.tokens_of``, the tokenizer the Weka tests check."""

from __future__ import annotations

import os
import pickle
import random
import signal
import sys
import threading
import time
import tracemalloc
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from filterkit import _words  # type: ignore[attr-defined]  # a C extension without stubs
from filterkit.schema import NOMINAL, STRING, Attribute, Chunk, RawTexts, Schema
from filterkit.stage import Context
from filterkit.word_statistics import WordStatistics
from filterkit_plugins.words import WordVector
from oracles import java_order

#: Characters documents are drawn from: letters, Weka's delimiters, control characters, and
#: non-ASCII text whose lowercasing only Python's (Java's) rules give (Σ, İ, the Kelvin sign K).
ALPHABET = list("abcXYZ ") + list(" \r\n\t.,;:'\"()?!") + ["\x01", "\x1f", "-"] + list("éΣσςİ\u212aß😀")
SCHEMA = Schema(
    "docs", (Attribute("title", STRING), Attribute("text", STRING), Attribute("class", NOMINAL, ("n", "y")))
)
OPTION_SETS = [
    {},
    {"lowercase": True},
    {"lowercase": True, "stopwords": "weka"},
    {"ngrams": "1-2", "lowercase": True},
    {"ngrams": "2-3", "stopwords": "weka"},
    {"tokenizer": "alphabetic", "lowercase": True, "ngrams": "1-3"},
    {"delimiters": "", "lowercase": True},
    {"delimiters": "a\\t\u00e9", "ngrams": "1-2"},
]
OPTION_IDS = [" ".join(f"{k}={v}" for k, v in options.items()) for options in OPTION_SETS]


def documents(n: int, seed: int) -> list[str | None]:
    """``n`` documents: random ones (a third of them ASCII only; one in ten long enough to hold several of the
    batches of tokens the compiled count looks up together), empty ones, missing ones (None)."""
    generator = random.Random(seed)
    ascii_only = [c for c in ALPHABET if c.isascii()]
    made: list[str | None] = []
    for k in range(n):
        alphabet = ascii_only if k % 3 else ALPHABET
        made.append("".join(generator.choice(alphabet) for _ in range(generator.randrange(400 if k % 10 == 1 else 40))))
    return made + ["", None, "THE The the a AN", "İ K ΣΑΣ σας", 'a\\\'b \\"c\\"']


def counted_in_python(stage: WordVector, chunk: Chunk, words: list[str], add: bool, stopwords=frozenset()):
    """The oracle of ``stage.counted``: per row, its distinct tokens' numbers in ``words`` (new ones
    appended with ``add``, else left out), ascending, and their occurrences."""
    numbers = {word: k for k, word in enumerate(words)}
    indptr, pairs = [0], []
    for texts in zip(*(chunk.text[int(position)] for position in stage.features)):
        counted: Counter = Counter()
        for token in (token for text in texts if text is not None for token in stage.tokens_of(text, stopwords)):
            if add and token not in numbers:
                numbers[token] = len(words)
                words.append(token)
            if token in numbers:
                counted[numbers[token]] += 1
        pairs += sorted(counted.items())
        indptr.append(len(pairs))
    return [indptr, [pair[0] for pair in pairs], [pair[1] for pair in pairs]]


def in_number_order(counted) -> list[list[int]]:
    """``counted`` (CSR arrays) as lists, each row's pairs by ascending number (a fit's come in the order met)."""
    indptr, ids, counts = (a.tolist() for a in counted)
    rows = [sorted(zip(ids[start:end], counts[start:end])) for start, end in zip(indptr, indptr[1:])]
    return [indptr, [pair[0] for row in rows for pair in row], [pair[1] for row in rows for pair in row]]


def stage_for(**options) -> WordVector:
    stage = WordVector(**options)
    stage.prepare(SCHEMA, Context(class_index=2))
    return stage


def chunk_of(titles: list, texts: list) -> Chunk:
    values = np.zeros((len(texts), 3))
    values[:, 2] = np.arange(len(texts)) % 2
    return Chunk(values, {0: titles, 1: texts})


def assert_counts_as_python(stage: WordVector, chunk: Chunk, known: list[str], more_than: int, kept_of) -> None:
    """A fit adding to a vocabulary of the ``known`` words numbers and counts ``chunk``'s tokens as the Python
    oracle does, more than ``more_than`` of them new; a transform looking tokens up in ``kept_of(words)`` (the others
    left out, none added) counts as the oracle's."""
    stop_words = stage._given_stop_words()
    compiled, words = _words.Vocabulary(known), list(known)
    counted = stage.counted(chunk, compiled, True, stop_words)
    assert in_number_order(counted) == counted_in_python(stage, chunk, words, True, stop_words.words)
    assert compiled.words == words and len(words) > len(known) + more_than
    kept = kept_of(words)
    found = stage.counted(chunk, _words.Vocabulary(kept), False)
    assert [a.tolist() for a in found] == counted_in_python(stage, chunk, list(kept), False)


@pytest.mark.parametrize("options", OPTION_SETS, ids=OPTION_IDS)
def test_the_compiled_count_is_the_python_count(options):
    texts = documents(300, seed=len(options))
    assert_counts_as_python(stage_for(**options), chunk_of(list(reversed(texts)), texts), [], 10, lambda w: w[::3])


#: Words enough that the vocabulary's table passes the size from which the compiled count looks tokens up in
#: batches (``BATCH_FROM_SLOTS`` in _words.c: more than 2**16 words).
MANY_WORDS = [f"w{k}" for k in range(70_000)]


@pytest.mark.parametrize("options", OPTION_SETS[1:4], ids=OPTION_IDS[1:4])
def test_a_vocabulary_past_the_caches_counts_as_python_counts(options):
    """Tokens looked up in batches number and count as one at a time: a fit adding to a large vocabulary, then a
    transform reading it."""
    texts = documents(300, seed=7) + [" ".join(MANY_WORDS[k] for k in range(0, 70_000, 997)) + " W5 new"]
    chunk = chunk_of(list(reversed(texts)), texts)
    assert_counts_as_python(stage_for(**options), chunk, MANY_WORDS, 10, lambda words: words[:-7])


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="Python 3.13 made the case tables the C path uses internal")
def test_no_document_goes_to_the_python_tokenizer_whatever_its_characters():
    stage = stage_for(lowercase=True)
    asked = []
    tokens_of = stage.tokens_of
    stage.tokens_of = lambda text, stopwords: asked.append(text) or tokens_of(text, stopwords)
    texts = ["Plain ASCII text", "Straße", "more plain text", "ΟΔΟΣ.ΚΑΙ"]
    indptr, ids, counts = stage.counted(chunk_of([None] * 4, texts), vocabulary := _words.Vocabulary(), True)
    assert asked == []
    words = vocabulary.words
    assert [sorted(words[i] for i in ids[indptr[r] : indptr[r + 1]]) for r in range(4)] == [
        ["ascii", "plain", "text"],
        ["straße"],
        ["more", "plain", "text"],
        ["και", "οδος"],  # each token lowercased alone, as Java does: the final sigma of ΟΔΟΣ is ς
    ]


def raw_of(texts: list[str]) -> RawTexts:
    """``texts`` as the ARFF reader leaves a column of quoted texts: their UTF-8 bytes one after another."""
    encoded = [text.encode() for text in texts]
    return RawTexts(b"".join(encoded), np.cumsum([len(text) for text in encoded], dtype=np.int64))


@pytest.mark.parametrize(
    "options", [*OPTION_SETS, {"char_ngrams": "2-4", "lowercase": True}], ids=[*OPTION_IDS, "char_ngrams=2-4"]
)
def test_the_readers_bytes_are_counted_as_their_strings(options):
    # 150 rows: two halves on two threads; a third of them not ASCII (decoded for the Python tokenizer)
    titles, texts = ([text or "" for text in documents(150, seed)] for seed in (7, 8))
    stage = stage_for(**options)
    stopwords = stage._given_stop_words()
    as_strings = chunk_of(titles, texts)
    as_bytes = Chunk(as_strings.values, {0: raw_of(titles), 1: raw_of(texts)})
    vocabulary = _words.Vocabulary()
    expected = [a.tolist() for a in stage.counted(as_strings, vocabulary, True, stopwords)]
    from_bytes = _words.Vocabulary()
    assert [a.tolist() for a in stage.counted(as_bytes, from_bytes, True, stopwords)] == expected
    assert from_bytes.words == vocabulary.words
    assert as_bytes.raw_text(1) is not None  # counted from the bytes: no strings made
    kept = _words.Vocabulary(vocabulary.words[::2])  # a transform's lookup
    assert [a.tolist() for a in stage.counted(as_bytes, kept, False)] == [
        a.tolist() for a in stage.counted(as_strings, kept, False)
    ]
    assert as_bytes.text == {0: titles, 1: texts}  # and made strings when asked


def test_a_stemmer_sees_the_readers_bytes_as_strings():
    stage = stage_for(lowercase=True)
    stage.stem = lambda word: word[:4]
    texts = ["Stemmed words here", "Straße ΟΔΟΣ.ΚΑΙ", ""]
    vocabulary = _words.Vocabulary()
    indptr, ids, counts = stage.counted(
        Chunk(np.zeros((3, 3)), {0: raw_of([""] * 3), 1: raw_of(texts)}), vocabulary, True
    )
    assert vocabulary.words == ["stem", "word", "here", "stra", "οδος", "και"]
    assert indptr.tolist() == [0, 3, 6, 6]


def count_plain(vocabulary, columns: list, n_rows: int, fallback=None):
    """``_words.count`` adding to ``vocabulary``: words cut at spaces, as they are."""
    return _words.count(vocabulary, columns, n_rows, True, 100, " ", False, False, 0, 0, None, None, fallback)


def test_count_reads_its_own_copy_of_where_the_rows_are():
    # a stemmer runs with the GIL held, token by token, while the count holds the rows' places
    data = "é a\nb c\nd e".encode()
    starts, ends = np.array([0, 5, 9], np.int64), np.array([4, 8, 12], np.int64)

    def stem(token):
        ends[1:] = 1 << 40  # the caller's arrays changed mid-count: not read again
        return token

    vocabulary = _words.Vocabulary()
    indptr, _ = _words.count(
        vocabulary, [(data, starts, ends)], 3, True, 100, " ", False, False, 0, 0, stem, None, None
    )
    assert np.frombuffer(indptr, np.int64).tolist() == [0, 2, 4, 6]
    assert vocabulary.words == ["é", "a", "b", "c", "d", "e"]


def test_a_tuple_of_strings_is_still_a_column_of_strings():
    vocabulary = _words.Vocabulary()
    _words.count(
        vocabulary, [("one doc", "two docs", "three")], 3, True, 100, " ", False, False, 0, 0, None, None, None
    )
    assert vocabulary.words == ["one", "doc", "two", "docs", "three"]


def test_count_refuses_rows_given_in_other_than_int64():
    column = (b"ab cde", np.array([0, 3], np.int32), np.array([2, 6], np.int32))
    with pytest.raises(TypeError, match="must be an aligned int64 array"):
        count_plain(_words.Vocabulary(), [column], 2)


@pytest.mark.parametrize(
    "starts, ends, n_rows",
    [
        ([0, 2], [2, 9], 2),
        ([0, 4], [2, 3], 2),
        ([-1, 2], [2, 5], 2),
        ([0], [5], 2),
        ([0, 2], [2], 2),
        ([0], [2], 2**61 + 1),
    ],
    ids=["past the end", "start after end", "negative", "a row short", "ends short", "rows past 2**61"],
)
def test_count_refuses_bytes_whose_rows_are_out_of_place(starts, ends, n_rows):
    column = (b"ab cde", np.array(starts, np.int64), np.array(ends, np.int64))
    with pytest.raises(ValueError, match="a start and an end within them for each row"):
        count_plain(_words.Vocabulary(), [column], n_rows)


@pytest.mark.parametrize("options", [{"lowercase": True, "ngrams": "1-1"}, {"stopwords": "weka", "ngrams": "1-2"}])
def test_an_empty_ngram_as_the_first_token_is_counted_as_python_counts_it(options):
    # a word of a control character trims to an empty n-gram: its bytes, in no buffer yet, were NULL,
    # and copying them (memcpy from NULL) is undefined behaviour, caught under UBSan
    stage = stage_for(**options)
    stopwords = stage._given_stop_words()
    chunk = chunk_of([None, None], ["\x01", "\x02 \x01 x"])
    compiled, words = _words.Vocabulary(), []
    counted = stage.counted(chunk, compiled, True, stopwords)
    assert in_number_order(counted) == counted_in_python(stage, chunk, words, True, stopwords.words)
    assert compiled.words == words and "" in words


def test_rows_without_tokens_give_empty_arrays_not_none():
    stage = stage_for()
    indptr, ids, counts = stage.counted(chunk_of(["", None], [" .,", None]), _words.Vocabulary(), True)
    assert indptr.tolist() == [0, 0, 0] and ids.tolist() == [] and counts.tolist() == []


def test_a_row_counts_each_token_once_with_its_occurrences_in_number_order_when_transformed():
    stage = stage_for(ngrams="1-2")
    vocabulary = _words.Vocabulary(["b", "a"])
    indptr, ids, counts = stage.counted(chunk_of(["a b a"], ["b a b"]), vocabulary, True)
    assert vocabulary.words == ["b", "a", "a b", "b a"]
    assert indptr.tolist() == [0, 4] and ids.tolist() == [1, 0, 2, 3] and counts.tolist() == [3, 3, 2, 2]
    indptr, ids, counts = stage.counted(chunk_of(["a b a"], ["b a b"]), vocabulary, False)
    assert indptr.tolist() == [0, 4] and ids.tolist() == [0, 1, 2, 3] and counts.tolist() == [3, 3, 2, 2]


def test_a_vocabulary_pickles_and_statistics_merge_by_their_words():
    stage = stage_for(lowercase=True)
    first, second = stage.new_statistics(), stage.new_statistics()
    stage.accumulate(first, chunk_of(["Wheat corn"], ["wheat"]))
    stage.accumulate(second, chunk_of(["rice"], ["CORN rice rice"]))
    second = pickle.loads(pickle.dumps(second))
    merged = stage.merge(first, second)
    assert isinstance(merged, WordStatistics) and merged.vocabulary.words == ["wheat", "corn", "rice"]
    classes, ids, occurrences, documents = merged.pairs()
    assert classes.tolist() == [0, 0, 0] and ids.tolist() == [0, 1, 2]
    assert occurrences.tolist() == [2, 2, 3] and documents.tolist() == [1, 2, 1]
    assert merged.n_documents == 2


def test_fitting_memory_follows_the_vocabulary_not_the_documents():
    stage = stage_for(lowercase=True)
    statistics = stage.new_statistics()
    for _ in range(200):
        stage.accumulate(statistics, chunk_of(["grain wheat"] * 50, ["Corn corn RICE"] * 50))
    assert len(statistics.vocabulary) == 4 and len(statistics.tally) == 2 * 4  # each word in both classes
    assert statistics.n_documents == 10_000 and statistics.pairs()[2].sum() == 10_000 * 5


@pytest.mark.parametrize("options", [{"ngrams": "1-10"}, {"ngrams": "1-10", "lowercase": True, "stopwords": "weka"}])
def test_a_long_documents_ngrams_are_made_in_a_scratch_of_one_batch_not_of_the_document(options):
    """N-grams counted at once (not lowercased) or left out (stop words) do not pile up in the scratch the batched
    ones wait in: a 2 MB document's ten sizes of n-grams would take some 110 MB there."""
    stage = stage_for(**options)
    document = " ".join(f"w{k % 1000}" if k % 3 else "the" for k in range(400_000))
    chunk = chunk_of([None], [document])
    tracemalloc.start()
    try:
        stage.counted(chunk, _words.Vocabulary(), True, stage._given_stop_words())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 * 2**20


def test_a_tally_sums_each_key_and_refuses_what_is_not_int64_arrays_of_one_length():
    tally = _words.Tally()
    tally.add(np.array([7, 3, 7, 2**62], dtype=np.int64), np.array([2, 1, 5, 4], dtype=np.int64))
    tally.add(np.array([3], dtype=np.int64), np.array([6], dtype=np.int64), np.array([3], dtype=np.int64))
    arrays = [np.frombuffer(a, dtype=np.int64).tolist() for a in tally.arrays()]
    assert arrays == [[7, 3, 2**62], [7, 7, 4], [2, 4, 1]] and len(tally) == 3
    restored = pickle.loads(pickle.dumps(tally))
    assert [np.frombuffer(a, dtype=np.int64).tolist() for a in restored.arrays()] == arrays
    for refused, error in [
        ((np.zeros(2), np.zeros(2)), TypeError),
        ((np.zeros(2, np.int32), np.zeros(2, np.int32)), TypeError),
        ((np.zeros(2, np.int64), np.zeros(3, np.int64)), ValueError),
        ((np.zeros(2, np.int64), np.zeros(2, np.int64), np.zeros(1, np.int64)), ValueError),
        ((np.zeros(4, np.int64)[::2], np.zeros(2, np.int64)), ValueError),  # not contiguous
        ((np.zeros(8, np.uint8), np.zeros(8, np.uint8)), TypeError),  # only bytes are read as int64 bytes
        ((np.zeros(3, np.int64).view(np.uint8)[4:20].view(np.int64), np.zeros(2, np.int64)), TypeError),  # "=q"
        ((memoryview(bytearray(17))[1:].cast("q"), np.zeros(2, np.int64)), ValueError),  # unaligned
        ((None, None), TypeError),
        ((np.array([3], np.int64), np.array([2**63 - 1], np.int64)), OverflowError),
    ]:
        with pytest.raises(error):
            tally.add(*refused)
    assert [np.frombuffer(a, dtype=np.int64).tolist()[:2] for a in tally.arrays()] == [a[:2] for a in arrays]


def test_a_tally_is_not_read_or_added_to_while_another_thread_adds_to_it():
    keys = np.arange(3_000_000, dtype=np.int64)
    refused: Counter = Counter()
    for _ in range(5):  # until this thread has met the adding one at work (a loaded machine may not let it)
        tally = _words.Tally()
        adding = threading.Thread(target=tally.add, args=(keys, np.ones(len(keys), dtype=np.int64)))
        adding.start()
        while adding.is_alive():
            for name, call in {
                "arrays": tally.arrays,
                "len": lambda: len(tally),
                "pickle": lambda: pickle.dumps(tally),
                "add": lambda: tally.add(keys[:1], keys[:1]),
            }.items():
                try:
                    call()
                except RuntimeError as error:
                    assert "in use by another thread" in str(error)
                    refused[name] += 1
        adding.join()
        assert len(tally) == len(keys)
        if refused:
            break
    assert refused


def test_a_tally_grown_past_many_rehashes_holds_every_sum():
    keys = np.random.default_rng(5).permutation(np.arange(0, 300_000, dtype=np.int64) << 20)  # low bits all 0
    tally = _words.Tally()
    for start in range(0, len(keys), 7_000):
        tally.add(keys[start : start + 7_000], np.full(7_000, 2, dtype=np.int64)[: len(keys[start : start + 7_000])])
    tally.add(np.ascontiguousarray(keys[::3]), np.ones(len(keys[::3]), dtype=np.int64))
    held, occurrences, documents = (np.frombuffer(a, dtype=np.int64) for a in tally.arrays())
    assert held.tolist() == keys.tolist()  # in the order first met
    assert occurrences.tolist() == [3 if k % 3 == 0 else 2 for k in range(len(keys))]
    assert documents.tolist() == [2 if k % 3 == 0 else 1 for k in range(len(keys))]


def test_threads_sharing_the_transforms_vocabulary_count_as_one_thread():
    stage = stage_for(lowercase=True)
    texts = documents(400, seed=7)
    chunk = chunk_of(texts, list(reversed(texts)))
    vocabulary = _words.Vocabulary()
    stage.counted(chunk, vocabulary, True)
    alone = [a.tolist() for a in stage.counted(chunk, vocabulary, False)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch inside the Python tokenizer of the non-ASCII texts
    try:
        with ThreadPoolExecutor(4) as pool:
            together = list(pool.map(lambda _: [a.tolist() for a in stage.counted(chunk, vocabulary, False)], range(8)))
    finally:
        sys.setswitchinterval(interval)
    assert all(counted == alone for counted in together)


def test_a_count_that_only_reads_a_shared_vocabulary_numbers_new_tokens_after_it():
    """A fit's half counts with the vocabulary shared, only read: a token it holds has its number, any other its
    number in the half's own vocabulary after the shared one's; the shared one is left as it was, and one being
    added to is refused."""
    shared, own = _words.Vocabulary(["b", "a"]), _words.Vocabulary()

    def count(vocabulary, texts, add=True, most=100, given=shared, stem=None):
        arguments = (len(texts), add, most, " ", False, False, 0, 0, stem, None, None, False, 0, given)
        return _words.count(vocabulary, [texts], *arguments)

    indptr, pairs = count(own, ["a c b c", "d é a"])
    assert np.frombuffer(pairs, dtype=np.int64).tolist() == [1, 1, 2, 2, 0, 1, 3, 1, 4, 1, 1, 1]
    assert np.frombuffer(indptr, dtype=np.int64).tolist() == [0, 3, 6]
    assert shared.words == ["b", "a"] and own.words == ["c", "d", "é"]
    assert count(own, ["a z y"], most=5) is None  # the bound counts the shared words too: z is the fifth new
    with pytest.raises(TypeError, match="add true"):
        count(_words.Vocabulary(), ["a"], add=False)

    def adding(token):  # a stemmer, inside a count adding to ``shared``
        with pytest.raises(RuntimeError, match="in use by another thread"):
            count(_words.Vocabulary(), ["a"])
        return token

    count(shared, ["é"], given=None, stem=adding)
    assert shared.words == ["b", "a", "é"]


def test_changing_the_list_of_words_leaves_the_vocabulary_as_it_was():
    vocabulary = _words.Vocabulary(["a", "b"])
    vocabulary.words.append("c")
    assert vocabulary.words == ["a", "b"] and len(vocabulary) == 2
    assert np.frombuffer(vocabulary.ids(["c", "a"]), dtype=np.int64).tolist() == [2, 0]


def test_a_vocabulary_being_added_to_is_refused_to_other_threads():
    stage = stage_for(stemmer=None)
    vocabulary = _words.Vocabulary(["a"])
    seen = []

    def stem(token):  # a stemmer runs inside count, which holds the vocabulary for adding
        for use in (lambda: vocabulary.words, lambda: vocabulary.ids(["z"]), lambda: counted(False)):
            with pytest.raises(RuntimeError, match="in use by another thread"):
                use()
        seen.append(token)
        return token

    def counted(add):
        return _words.count(vocabulary, [["é", "b a"]], 2, add, 100, " ", False, False, 0, 0, stem, None, None)

    indptr, pairs = counted(True)
    assert seen == ["é", "b", "a"] and vocabulary.words == ["a", "é", "b"]
    assert np.frombuffer(pairs, dtype=np.int64).tolist() == [1, 1, 2, 1, 0, 1]
    assert np.frombuffer(indptr, dtype=np.int64).tolist() == [0, 1, 3]
    assert vocabulary.words == ["a", "é", "b"] and len(stage.counted(chunk_of(["a"], ["é"]), vocabulary, True)[1]) == 2


def test_counting_ascii_texts_lets_other_threads_run():
    """The tokenizer releases the GIL: a Python thread keeps running while it counts."""
    texts = ["wheat corn rice " * 20_000] * 80
    vocabulary = _words.Vocabulary()
    ticks: list[None] = []
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            ticks.append(None)
            time.sleep(0)  # gives the GIL back at once: the main thread never waits on it

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000)  # no forced switch: the spinner runs only while the main thread lets go of the GIL
    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        before = len(ticks)
        _words.count(vocabulary, [texts], 80, True, 10**6, " ", False, True, 0, 0, None, None, None)
        during = len(ticks) - before
    finally:
        stop.set()
        spinner.join()
        sys.setswitchinterval(interval)
    assert vocabulary.words == ["wheat", "corn", "rice"]
    assert during > 0  # a count holding the GIL throughout: none


def test_a_stemmer_is_called_on_the_callers_thread_alone():
    """Stemmers promise no thread safety: with one, a chunk's halves are not counted on two threads."""
    stage = stage_for(lowercase=True)
    threads = set()
    stage.stem = lambda word: threads.add(threading.get_ident()) or word[:4]
    texts = ["wheat corn rice"] * 300
    for add in (True, False):
        indptr, ids, counts = stage.counted(chunk_of(texts, texts), _words.Vocabulary(["whea", "corn"]), add)
        assert indptr[-1] == 300 * (3 if add else 2)
    assert threads == {threading.get_ident()}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Python 3.12 warns of fork in a process with threads
def test_a_forked_child_counts_with_a_helper_thread_of_its_own():
    """The parent's helper thread is not in a forked child: the child must not wait for it forever."""
    stage = stage_for(lowercase=True)
    texts = ["wheat corn"] * 300
    stage.counted(chunk_of(texts, texts), _words.Vocabulary(), True)  # the helper thread now runs
    child = os.fork()
    if child == 0:
        signal.alarm(20)  # a child waiting for a thread it does not have dies here
        indptr, ids, counts = stage.counted(chunk_of(texts, texts), _words.Vocabulary(["corn"]), False)
        os._exit(0 if indptr[-1] == 300 and counts.sum() == 600 else 1)
    assert os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == 0


@pytest.mark.parametrize("seed", range(4))
def test_the_compiled_java_order_is_java_s_on_any_characters(seed):
    """The vocabulary's compiled order of any of its words is Java's (UTF-16 code units: :func:`java_order`), lone
    surrogates and characters beyond the Basic Multilingual Plane among U+E000-U+FFFF included; two words Java holds
    for one (U+10000, and its surrogates written apart) by their UTF-8 bytes, whatever order they were met in."""
    generator = random.Random(seed)
    pieces = ["a", "z", "é", "\ud7ff", "\ue000", "\uff5e", "\uffff", "\U00010000", "\U0001f600", "\U0010ffff"]
    pieces += ["\ud800", "\udc00", "\udbff", "\udfff"]
    key = lambda word: (java_order(word), word.encode("utf-8", "surrogatepass"))  # noqa: E731
    for _ in range(500):
        words = list({"".join(generator.choices(pieces, k=generator.randint(0, 5))) for _ in range(20)})
        vocabulary = _words.Vocabulary(words)
        numbers = np.frombuffer(vocabulary.ids(words), np.int64)[generator.sample(range(len(words)), len(words))]
        order = np.frombuffer(vocabulary.java_order(np.ascontiguousarray(numbers)), np.int64)
        assert [vocabulary.words[k] for k in numbers[order].tolist()] == sorted(words, key=key)
    with pytest.raises(ValueError, match="not in the vocabulary"):
        _words.Vocabulary(["a"]).java_order(np.array([1]))


def test_words_of_gives_the_tokens_of_numbers_as_new_strings_in_their_order():
    words = ["corn", "wheat", "é\ud800", "\U0001f600", ""]
    vocabulary = _words.Vocabulary(words)
    numbers = np.frombuffer(vocabulary.ids(words), np.int64)[[3, 0, 4, 2, 0]]
    made = vocabulary.words_of(np.ascontiguousarray(numbers))
    assert made == ["\U0001f600", "corn", "", "é\ud800", "corn"]
    assert made[1] is not made[4]  # each made anew, in the order asked
    assert vocabulary.words_of(np.zeros(0, dtype=np.int64)) == []
    with pytest.raises(ValueError, match="not in the vocabulary"):
        vocabulary.words_of(np.array([5]))
