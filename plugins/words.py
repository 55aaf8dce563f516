"""``words``: documents to word vectors, as Weka 3.6's ``StringToWordVector`` (docs/algorithms.md
§12 is the reference: the tokenizers, the stop words, the per-class dictionaries, the values and the
attribute order).

Each string attribute in ``--attributes`` (Weka's ``-R``; the class and other kinds are never
converted) is cut into words; the output attributes are the attributes not converted, in their
order, then one numeric attribute ``PREFIX + word`` per kept word (``-P``).  Instance weights are
not used by the fit (as in Weka) and pass through.  The output rows are sparse (Weka writes sparse
instances); ``--dense`` writes them dense.

The statistics are the occurrence and document counts of each (class, word) pair that occurs:
they merge by adding, so memory follows the vocabulary, not the documents or the declared
classes (``filterkit/_words.c`` cuts and counts every document, lowercasing as :meth:`WordVector.tokens_of`, the
Python tokenizer the tests hold it to, lowercases: docs/algorithms.md §12).  **Decision**: the output's
attributes are bounded by those a file may declare (``FILTERKIT_MAX_ATTRIBUTES``, 1,000,000 by
default), the distinct words held while fitting by twice as many, so --words-to-keep and
--min-term-freq can still bring a larger vocabulary within the first: beyond either, an error naming
the options that make fewer, not gigabytes and a file filterkit would refuse to read.

The tokenizers and the stop words are in :mod:`filterkit.word_tokens`, the statistics and how a model saves
them in :mod:`filterkit.word_statistics`; this module is the stage.
"""

from __future__ import annotations

import itertools
import os
import re
from concurrent.futures import ThreadPoolExecutor
from functools import cache, partial
from typing import Iterator

import numpy as np

from filterkit.export.steps import Words, words_step
from filterkit.kernels import WordVocabulary, count_words, hash_columns, join_kept_words, renumber_words
from filterkit.limits import VARIABLES, Limits
from filterkit.plugin import (
    NOMINAL,
    STRING,
    Accepts,
    Attribute,
    Chunk,
    Explainable,
    FilterkitError,
    KeptPass,
    Option,
    StateArray,
    Updatable,
    hookimpl,
    invalid_state,
    row_labels,
)
from filterkit.plugins import registered_stemmer
from filterkit.saved_state import OPTIONS_KEY, fitted_options
from filterkit.schema import collector_paused, refuse_unreadable_output, weka_range
from filterkit.word_columns import hashed_column_names, no_text_message, refuse_too_many_columns, word_names
from filterkit.word_statistics import WordStatistics, checked_saved_statistics, kept_pairs, saved_word_statistics
from filterkit.word_tokens import (
    BUILT_IN_STOPWORDS,
    LONGEST_CHARACTER_NGRAM,
    NO_STOP_WORDS,
    WEKA_DELIMITERS,
    WEKA_STOPWORDS,
    StopWords,
    character_ngrams,
    ngram_sizes,
    read_stopwords,
    tokenizer,
    unescaped,
)

#: The most ``--hash`` BITS: 2**24 columns, beyond any file's attributes (``FILTERKIT_MAX_ATTRIBUTES``).
LARGEST_HASH_BITS = 24


def document_bound(text: str | None, flag: str, n_documents: int, absent: float) -> float:
    """``--min-df``/``--max-df`` as a number of training documents, as scikit-learn's ``CountVectorizer``
    reads ``min_df``/``max_df``: a whole number (``5``) counts documents, a number with a point (``0.05``,
    ``1.0``) is a fraction of ``n_documents``; ``absent`` when not given."""
    if text is None:
        return absent
    if re.fullmatch(r"[0-9]+", text):
        return float(int(text))
    if re.fullmatch(r"[0-9]*\.[0-9]*", text) and text != "." and float(text) <= 1.0:
        return float(text) * n_documents
    raise FilterkitError(
        f"option {flag}: {text!r} is neither a number of documents (e.g. 5) nor a fraction of them from 0.0 to 1.0"
    )


#: The rows a chunk needs in each half for the halves to be counted on two threads (the compiled count
#: releases the GIL): fewer are counted on one.
HALF_CHUNK_ROWS = 64


@cache
def _helper() -> ThreadPoolExecutor:
    """The thread counting the first half of each chunk while the caller counts the second."""
    return ThreadPoolExecutor(1, thread_name_prefix="filterkit-words")


if hasattr(os, "register_at_fork"):  # POSIX: a forked child has no helper thread, so it starts its own
    os.register_at_fork(after_in_child=_helper.cache_clear)


#: The renamed words the fit's warning names (then their count).
RENAMED_SHOWN = 5


class WordVector(KeptPass, Updatable, Explainable):
    """String attributes to one numeric attribute per word, as Weka's StringToWordVector."""

    name = "words"
    accepts = Accepts(text=True)
    examples = (
        {},
        {"min_df": "2", "max_df": "0.9", "counts": True},
        {"char_ngrams": "2-4", "hash": 8, "lowercase": True},
        {"hash": 6, "hash_names": "number", "stopwords": "weka"},
    )
    summary = "Documents (string attributes) to word vectors, as Weka's StringToWordVector."
    options = (
        Option("counts", bool, False, "Each word's number of occurrences, not its presence (Weka's -C)."),
        Option("lowercase", bool, False, "Lowercase every word (Weka's -L)."),
        Option(
            "words_to_keep",
            int,
            1000,
            "Per class, keep the words this many most frequent words reach, ties kept (Weka's -W).",
            minimum=1,
        ),
        Option("whole_corpus", bool, False, "Keep words by their counts over all classes, not per class (Weka's -O)."),
        Option(
            "min_term_freq", int, 1, "Keep only words occurring at least this often in a class (Weka's -M).", minimum=1
        ),
        Option(
            "stopwords",
            str,
            None,
            f"Leave out stop words: '{BUILT_IN_STOPWORDS}' for Weka's built-in list, or a file of one word per line "
            "(Weka's -S, -stopwords).",
            names_file=True,
            built_in=(BUILT_IN_STOPWORDS,),
        ),
        Option("log_tf", bool, False, "Each value v becomes log(1 + v) (Weka's -T)."),
        Option("idf", bool, False, "Each value times log(documents / documents holding the word) (Weka's -I)."),
        Option("prefix", str, "", "Put this before each word's attribute name (Weka's -P)."),
        Option(
            "delimiters",
            str,
            WEKA_DELIMITERS,
            "The characters between words; \\n \\r \\t \\\\ \\' \\\" are read as escapes (Weka's WordTokenizer).",
        ),
        Option("attributes", str, "first-last", "The string attributes, 1-based (Weka's -R).", attribute_range=True),
        Option("stemmer", str, None, "Stem each word with this registered stemmer (see register_stemmers)."),
        Option(
            "tokenizer",
            str,
            "word",
            "Words are cut at --delimiters ('word', Weka's WordTokenizer) or are the runs of ASCII letters "
            "('alphabetic', Weka's AlphabeticTokenizer).",
            choices=("word", "alphabetic"),
        ),
        Option(
            "ngrams",
            str,
            None,
            "Tokens are the runs of MIN to MAX consecutive words, e.g. 1-2 (Weka's NGramTokenizer -min -max).",
        ),
        Option(
            "char_ngrams",
            str,
            None,
            "Tokens are the runs of MIN to MAX characters within each whitespace-separated word padded with a "
            "space each side, e.g. 2-5 (scikit-learn's analyzer='char_wb'; not in Weka 3.6).",
        ),
        Option(
            "hash",
            int,
            None,
            "Write 2**BITS columns, a token's column its MurmurHash3 as scikit-learn's HashingVectorizer's, each "
            "named as --hash-names says (not in Weka 3.6).",
            minimum=1,
            maximum=LARGEST_HASH_BITS,
        ),
        Option(
            "hash_names",
            str,
            "token",
            "With --hash, name each column by the most frequent training token in it ('token'), or PREFIX#COLUMN "
            "('number': nothing is learned, no vocabulary held, the output written in one pass).",
            choices=("token", "number"),
        ),
        Option(
            "min_df",
            str,
            None,
            "Keep only words in at least this many training documents (5), or this fraction of them (0.01), "
            "as CountVectorizer's min_df; counted over the whole training set, before --words-to-keep.",
        ),
        Option(
            "max_df",
            str,
            None,
            "Keep only words in at most this many training documents (500), or this fraction of them (0.9), "
            "as CountVectorizer's max_df; counted over the whole training set, before --words-to-keep.",
        ),
    )
    #: no warning that the output is wide: one attribute per word is what the stage is for (a warning on
    #: every corpus is noise), and the attribute limit bounds it
    widening_hint = None
    #: after a fit, per token number of its vocabulary, the token's column among the words (-1: not kept)
    column_of_number: np.ndarray | None = None
    #: Per kept word, in attribute order: the training documents holding it.
    state_arrays = {"document_counts": StateArray(length=None, whole=True, low=1)}

    @property
    def learns(self) -> bool:  # type: ignore[override]  # a class attribute in Stage; not with --hash-names number
        """Whether the stage counts its training documents: not with ``--hash-names number``."""
        return self.params["hash_names"] != "number"

    def check_params(self) -> None:
        ngram_sizes(self.params["ngrams"])
        if self.params["hash_names"] == "number" and self.params["hash"] is None:
            raise FilterkitError("option --hash-names number: it names hashed columns, so it takes --hash BITS")
        if not self.learns and self.params["stopwords"] not in (None, BUILT_IN_STOPWORDS):
            raise FilterkitError(
                "option --stopwords: with --hash-names number nothing is fitted to hold a file's words, and a model "
                f"opens no file it names: give --stopwords {BUILT_IN_STOPWORDS}, or --hash-names token"
            )
        if self.params["hash"] is not None:
            defaults = {option.name: option.default for option in self.options}
            pruning = ("words_to_keep", "min_term_freq", "whole_corpus", "min_df", "max_df", "idf")
            fixed = [f"--{name.replace('_', '-')}" for name in pruning if self.params[name] != defaults[name]]
            if fixed:
                raise FilterkitError(
                    "option --hash: every one of its columns is written and no column's documents are counted, "
                    f"so it takes no {' or '.join(fixed)}"
                )
        if self.params["char_ngrams"] is not None:
            ngram_sizes(self.params["char_ngrams"], "--char-ngrams", LONGEST_CHARACTER_NGRAM)
            given = {
                "--ngrams": self.params["ngrams"] is not None,
                "--stopwords": self.params["stopwords"] is not None,
                "--stemmer": self.params["stemmer"] is not None,
                "--tokenizer alphabetic": self.params["tokenizer"] == "alphabetic",
                "--delimiters": self.params["delimiters"] != WEKA_DELIMITERS,
            }
            if any(given.values()):
                raise FilterkitError(
                    "option --char-ngrams: its words are the runs of non-whitespace, as scikit-learn's char_wb "
                    f"cuts them, so it takes no {' or '.join(flag for flag, on in given.items() if on)}"
                )
        document_bound(self.params["min_df"], "--min-df", 1, 0.0)
        document_bound(self.params["max_df"], "--max-df", 1, 0.0)
        if self.params["tokenizer"] == "alphabetic" and self.params["delimiters"] != WEKA_DELIMITERS:
            raise FilterkitError(
                "option --delimiters: the alphabetic tokenizer has none (its words are letters a-z, A-Z)"
            )

    def select_features(self, schema, context) -> np.ndarray:
        chosen = weka_range(self.params["attributes"], len(schema), "--attributes")[0].tolist() if len(schema) else []
        return np.array(
            [i for i in chosen if schema.attributes[i].kind == STRING and i != context.class_index],
            dtype=np.int64,
        )

    def prepare(self, schema, context) -> None:
        super().prepare(schema, context)
        class_index = context.class_index
        if not len(self.features):
            raise FilterkitError(no_text_message(schema, class_index, self.params["attributes"]))
        per_class = (  # --hash names a column by its token's occurrences in every class
            not self.params["whole_corpus"]
            and self.params["hash"] is None
            and class_index is not None
            and schema.attributes[class_index].kind == NOMINAL
        )
        self.n_classes = max(len(schema.attributes[class_index].labels), 1) if per_class else 1
        self.label_column = class_index if per_class else None
        delimiters, ngrams = unescaped(self.params["delimiters"]), ngram_sizes(self.params["ngrams"])
        alphabetic = self.params["tokenizer"] == "alphabetic"
        characters = ngram_sizes(self.params["char_ngrams"], "--char-ngrams", LONGEST_CHARACTER_NGRAM)
        self.split = character_ngrams(characters) if characters else tokenizer(delimiters, ngrams, alphabetic)
        self.stem = registered_stemmer(self.params["stemmer"]).function if self.params["stemmer"] else None
        #: ``count_words``' settings
        sizes = characters or ngrams or (0, 0)
        self.settings = (delimiters, alphabetic, self.params["lowercase"], *sizes)
        self.characters = characters is not None
        #: with --hash, the hashed columns, else 0
        self.n_columns = 1 << self.params["hash"] if self.params["hash"] is not None else 0
        self.stems: dict[str, str] = {}
        self.kept = [i for i in range(len(schema)) if i not in set(self.features.tolist())]
        if self.n_columns:
            refuse_too_many_columns(self.params["hash"], len(self.kept))
        #: the stop words of the fit: read from the --stopwords file by a new fit's statistics, then those its
        #: statistics were counted without, or a model's (None: a model saved before they were recorded)
        self.stop_words: StopWords | None = None
        self.most_words = 2 * Limits.from_environment().attributes
        if not self.learns:
            self._number_columns()

    def _number_columns(self) -> None:
        """``--hash-names number``'s state, whole at prepare: no words, no counts, every column named by its number
        (``PREFIX#COLUMN``), and the stop words of ``--stopwords`` (none or Weka's, which a model saves)."""
        self.stop_words = self._given_stop_words()
        self.words: list[str] = []
        self.columns, self.collisions = np.zeros(0, dtype=np.int64), 0
        self.document_counts, self.n_documents = np.zeros(0, dtype=np.int64), 0
        self._layout()

    def tokens_of(self, text: str, stopwords: frozenset[str] = frozenset()) -> Iterator[str]:
        """A text's tokens, lowercased and stemmed as asked, without ``stopwords`` (compared lowercased),
        made one at a time as they are read."""
        if self.params["char_ngrams"] is not None:  # the n-grams of the lowercased text, as scikit-learn's
            return iter(self.split(text.lower() if self.params["lowercase"] else text))
        tokens = iter(self.split(text))
        if self.params["lowercase"]:  # each token alone, as Java's toLowerCase: ΟΔΟΣ.ΚΑΙ is οδος, και
            tokens = (token.lower() for token in tokens)
        if self.stem is not None:
            tokens = (self._stemmed(token) for token in tokens)
        if stopwords:
            tokens = (token for token in tokens if token.lower() not in stopwords)
        return tokens

    def stemmed_token(self, token: str, stopwords: frozenset[str] = frozenset()) -> str | None:
        """A token the compiled count cut and lowercased (as asked), stemmed; None for one of ``stopwords`` (compared
        lowercased, once stemmed, as :meth:`tokens_of` compares them)."""
        stem = self._stemmed(token)
        return None if stopwords and stem.lower() in stopwords else stem

    def counted(self, chunk: Chunk, vocabulary, add: bool, stop_words: StopWords = NO_STOP_WORDS):
        """Per row of ``chunk``, the numbers in ``vocabulary`` of its distinct tokens over the converted
        attributes (tokens not in it, and ``stop_words``, left out; or added with ``add``, the fit's, and then not
        in ascending order) and their occurrences: CSR's ``indptr``, ``ids``, ``counts``.  The compiled
        ``count`` cuts every text, without the GIL (a stemmer is called per token, with it); ``tokens_of`` only
        what it cannot (bytes that are not UTF-8, which it refuses)."""
        raw = [chunk.raw_text(int(position)) for position in self.features]
        columns: list = raw if None not in raw else [list(chunk.text[int(position)]) for position in self.features]
        stop_vocabulary = stop_words.vocabulary
        fallback = partial(self.tokens_of, stopwords=stop_words.words)
        stemmed = (
            None if self.stem is None or self.characters else partial(self.stemmed_token, stopwords=stop_words.words)
        )
        cut = (self.characters, 0 if add else self.n_columns)  # character n-grams; a transform's hashed columns

        def count(into, start: int, end: int, shared=None) -> tuple[np.ndarray, np.ndarray]:
            texts = [column[start:end] if isinstance(column, list) else column.rows(start, end) for column in columns]
            counted = count_words(
                into,
                texts,
                end - start,
                add,
                self.most_words,
                *self.settings,
                stemmed,
                stop_vocabulary,
                fallback,
                *cut,
                shared,
            )
            if counted is None:  # the fit's vocabulary reached the bound, checked as each token is counted
                raise self._too_many_words()
            indptr, pairs = counted
            return np.frombuffer(indptr, dtype=np.int64), np.frombuffer(pairs, dtype=np.int64).reshape(-1, 2)

        if chunk.n_rows < 2 * HALF_CHUNK_ROWS or self.stem is not None:  # a stemmer runs with the GIL, on one thread
            indptr, pairs = count(vocabulary, 0, chunk.n_rows)
            return indptr, pairs[:, 0], pairs[:, 1]
        half = chunk.n_rows // 2
        # a fit's halves only read the vocabulary, each adding the tokens it lacks to one of its own, numbered after
        # it; those are then added in row order, so the numbers are those one thread gives
        owns = (WordVocabulary(), WordVocabulary()) if add else (vocabulary, vocabulary)
        shared = vocabulary if add else None
        first_half = _helper().submit(count, owns[0], 0, half, shared)
        try:
            second_indptr, second_pairs = count(owns[1], half, chunk.n_rows, shared)
        except BaseException:
            first_half.result()  # the first half's error, if any, comes first in row order
            raise
        first_indptr, first = first_half.result()
        second_ids = second_pairs[:, 0]
        if add:
            known = len(vocabulary)
            vocabulary.ids(owns[0])  # the first half's own tokens, absent from it: numbered as they were counted
            added = np.frombuffer(vocabulary.ids(owns[1]), np.int64)
            second_ids = second_ids.copy()
            new = second_ids >= known
            second_ids[new] = added[second_ids[new] - known]
        indptr = np.concatenate([first_indptr, first_indptr[-1] + second_indptr[1:]])
        return indptr, np.concatenate([first[:, 0], second_ids]), np.concatenate([first[:, 1], second_pairs[:, 1]])

    def _stemmed(self, word: str) -> str:
        stem = self.stems.get(word)
        if stem is None:
            try:
                stem = self.stem(word) if self.stem is not None else word
                wrong = None if isinstance(stem, str) else f"returned {type(stem).__name__} for {word!r}, not a string"
            except Exception as error:  # the stemmer's plugin's fault, not this stage's
                wrong = f"failed on {word!r}: {type(error).__name__}: {error} (filterkit plugins lists its plugin)"
            if wrong is not None or not isinstance(stem, str):  # (the second: for the type checker)
                raise FilterkitError(f"stage 'words': stemmer '{self.params['stemmer']}' {wrong}")
            if len(self.stems) >= self.most_words:  # a cache, not a second vocabulary: applying grows it
                self.stems.clear()
            self.stems[word] = stem
        return stem

    def _given_stop_words(self) -> StopWords:
        """The stop words ``--stopwords`` gives: none, Weka's, or those of its file, read once per fit."""
        if self.stop_words is None:
            given = self.params["stopwords"]
            if given is None:
                self.stop_words = NO_STOP_WORDS
            else:
                self.stop_words = StopWords(WEKA_STOPWORDS if given == BUILT_IN_STOPWORDS else read_stopwords(given))
        return self.stop_words

    def _fitted_stop_words(self) -> StopWords:
        """The stop words the fit left out, which a model records; FilterkitError for a model that does not."""
        if self.stop_words is None:
            raise FilterkitError(
                f"stage 'words': the model does not record the stop words of --stopwords {self.params['stopwords']!r} "
                "(it was saved before models held them), and no file a model names is read: refit the chain"
            )
        return self.stop_words

    def new_statistics(self) -> WordStatistics:
        return WordStatistics(self.n_classes, WordVocabulary(), self._given_stop_words())

    def accumulate(self, statistics: WordStatistics, chunk: Chunk) -> WordStatistics:
        labels, _ = row_labels(chunk, self.label_column)  # a missing class counts as the first, as in Weka
        statistics.add(labels, *self.counted(chunk, statistics.vocabulary, True, statistics.stop_words))
        return self._bounded(statistics)

    @property
    def keeps_fit_pass(self) -> bool:  # type: ignore[override]
        """Word tokens are cut once: a run that writes after fitting renumbers the fit's rows (``--counts`` then
        takes 0.73 of the CPU it took on Debian ×10, 0.66 on Reuters ×50).  Not character n-grams: a document holds
        hundreds of distinct ones, mostly not kept, and writing them all cost more than cutting the text again."""
        return self.params["char_ngrams"] is None

    def accumulate_kept(self, statistics: WordStatistics, chunk: Chunk) -> tuple[WordStatistics, Chunk]:
        """:meth:`accumulate`, and the chunk as its kept attributes followed by its rows' (token number, occurrences)
        in the fit's numbering: the documents are cut once, and :meth:`transform_kept` renumbers them."""
        labels, _ = row_labels(chunk, self.label_column)
        indptr, ids, counts = self.counted(chunk, statistics.vocabulary, True, statistics.stop_words)
        statistics.add(labels, indptr, ids, counts)
        values, columns, row_starts = _kept_then_words(chunk.values[:, self.kept], indptr, ids, counts)
        shape = (chunk.n_rows, len(self.kept) + len(statistics.vocabulary))
        kept = Chunk.from_csr(values, columns, row_starts, shape, self._kept_text(chunk), chunk.weights)
        return self._bounded(statistics), kept

    def transform_kept(self, kept: Chunk) -> Chunk:
        """:meth:`transform`'s output from :meth:`accumulate_kept`'s form: each fit's token number made its column
        (left out when not kept), in order."""
        rows, n_words = kept.csr(), self.n_columns or len(self.words)
        renumbered = renumber_words(
            indptr=rows.indptr,
            indices=rows.indices,
            data=rows.data,
            first=len(self.kept),
            table=self.column_of_number,
            n_numbers=n_words,
        )
        indptr, columns, data = (np.frombuffer(a, dtype) for a, dtype in zip(renumbered, (np.int64, np.int64, float)))
        if not self.params["counts"] or self.params["log_tf"] or self.params["idf"]:  # else the values are the counts
            words = np.flatnonzero(columns >= len(self.kept))
            data[words] = self._weighted(data[words], columns[words] - len(self.kept), weighted=True)
        shape = (kept.n_rows, len(self.kept) + n_words)
        return Chunk.from_csr(data, columns, indptr, shape, kept.text, kept.weights).with_stored(data)

    def merge(self, first: WordStatistics, second: WordStatistics) -> WordStatistics:
        return self._bounded(first.merge(second))

    def _bounded(self, statistics: WordStatistics) -> WordStatistics:
        """``statistics``, unless they hold more than twice the words a file may declare
        attributes: an error then, before the vocabulary outgrows memory."""
        if len(statistics.vocabulary) > self.most_words:
            raise self._too_many_words()
        return statistics

    def _too_many_words(self) -> FilterkitError:
        return FilterkitError(
            f"stage 'words': the training documents hold more than {self.most_words:,} distinct words, twice "
            f"the attributes a file may declare (set {VARIABLES['attributes']} to allow more): make fewer "
            "with --stopwords, --lowercase, --stemmer, --delimiters or a smaller --ngrams"
        )

    def finalize(self, statistics: WordStatistics) -> None:
        self.stop_words = statistics.stop_words
        if self.n_columns:
            return self._name_columns(statistics)
        vocabulary = statistics.vocabulary
        classes, ids, occurrences, documents = statistics.pairs()
        holding = np.bincount(ids, weights=documents, minlength=len(vocabulary)).astype(np.int64)  # below 2**53
        n = statistics.n_documents
        low = document_bound(self.params["min_df"], "--min-df", n, 0.0)
        high = document_bound(self.params["max_df"], "--max-df", n, float(n))
        frequent_enough = (holding >= low) & (holding <= high)
        if len(vocabulary) and not frequent_enough.any():
            raise FilterkitError(
                f"stage 'words': no word of the {n:,} training documents is in {low:g} to {high:g} of them "
                "(--min-df, --max-df): nothing would be left to write"
            )
        within = frequent_enough[ids]
        classes, ids, occurrences = classes[within], ids[within], occurrences[within]
        kept = kept_pairs(classes, occurrences, self.params["words_to_keep"], self.params["min_term_freq"])
        classes, ids = classes[kept], ids[kept]
        # each class's kept words in Java's order, class after class, each word where it is first met: Weka's
        # order, from one sort of the distinct kept words (by word, a class at a time, 150,000 bigrams took 0.2 s)
        present = np.zeros(len(vocabulary), dtype=bool)
        present[ids] = True
        distinct = np.flatnonzero(present)
        rank = np.empty(len(vocabulary), dtype=np.int64)
        rank[distinct[np.frombuffer(vocabulary.java_order(distinct), np.int64)]] = np.arange(len(distinct))
        met = ids[np.argsort(classes * len(distinct) + rank[ids])]  # (class, rank) is one pair's alone
        first_met = np.full(len(vocabulary), len(met), dtype=np.int64)
        np.minimum.at(first_met, met, np.arange(len(met)))
        numbers = met[np.sort(first_met[distinct])]
        self.words = vocabulary.words_of(numbers)  # made in column order, as the passes after this read them
        self.document_counts = holding[numbers]
        self.column_of_number = np.full(len(vocabulary), -1, dtype=np.int64)
        self.column_of_number[numbers] = np.arange(len(self.words))
        self.n_documents = statistics.n_documents
        self._layout()

    def _name_columns(self, statistics: WordStatistics) -> None:
        """``--hash``'s fit: per column that a training token falls into, ascending, its name, the token
        with the most occurrences in the training documents (on a tie the first in Java's string order);
        and the collisions, the tokens that fall into a column with another."""
        vocabulary = statistics.vocabulary
        _, ids, occurrences, documents = statistics.pairs()
        totals = np.bincount(ids, weights=occurrences, minlength=len(vocabulary))  # whole numbers below 2**53
        holding = np.bincount(ids, weights=documents, minlength=len(vocabulary)).astype(np.int64)
        columns = np.frombuffer(hash_columns(vocabulary, self.n_columns), dtype=np.int64)
        order = np.lexsort((-totals, columns))  # by column, the most frequent first
        starts_column = np.diff(columns[order], prepend=-1) != 0
        first, group = np.flatnonzero(starts_column), np.cumsum(starts_column) - 1
        most = np.bincount(group[totals[order] == totals[order[first]][group]], minlength=len(first))
        chosen = order[first]
        for tied in np.flatnonzero(most > 1).tolist():
            candidates = order[first[tied] : first[tied] + most[tied]]
            chosen[tied] = candidates[np.frombuffer(vocabulary.java_order(candidates), np.int64)[0]]
        self.words = vocabulary.words_of(chosen)  # made in column order, as the passes after this read them
        self.columns, self.column_of_number = columns[chosen], columns
        self.collisions = len(vocabulary) - len(chosen)
        self.document_counts = holding[chosen]
        self.n_documents = statistics.n_documents
        self._layout()

    def saved_statistics(self, statistics: WordStatistics) -> dict:
        """The (class, word) pairs with their occurrences and documents (:func:`saved_word_statistics`)."""
        return saved_word_statistics(statistics)

    def loaded_statistics(self, saved: dict) -> WordStatistics:
        """The statistics :meth:`saved_statistics` gave, counted without the stop words the fit left out."""
        words, n_documents, pairs = checked_saved_statistics(saved, self.n_classes)
        statistics = WordStatistics(self.n_classes, WordVocabulary(words), self._fitted_stop_words())
        statistics.add_pairs(pairs, n_documents)
        return statistics

    def values_after_refit(self, before, before_statistics) -> list[str] | None:
        """A word's value in a document is its count there, which more documents leave as it is (not with
        --idf); the names of the words kept now that the old documents hold but were not kept then.  A word
        renamed (:func:`word_names`) as it was before changes nothing; FilterkitError saying which word where a
        name now belongs to another word than before."""
        if self.params["idf"] or self.n_columns or before_statistics is None:
            return None
        named_now, named_before = self._names_of_words(), before._names_of_words()
        word_named_before = {name: word for word, name in named_before.items()}
        for word, name in named_now.items():
            if named_before.get(word, name) != name:
                raise FilterkitError(f"names the word {word!r} {name!r} now, where it named it {named_before[word]!r}")
            if word_named_before.get(name, word) != word:
                raise FilterkitError(
                    f"names the word {word!r} {name!r} now, the name it gave the word {word_named_before[name]!r}"
                )
        vocabulary = before_statistics.vocabulary.words
        held = {vocabulary[i] for i in np.unique(before_statistics.pairs()[1]).tolist()}
        return [name for word, name in named_now.items() if word not in named_before and word in held]

    def _names_of_words(self) -> dict[str, str]:
        """Each kept word's attribute name: ``--prefix`` and the word, unless renamed (:func:`word_names`)."""
        return dict(zip(self.words, (attribute.name for attribute in self.word_schema.attributes[len(self.kept) :])))

    @collector_paused
    def _layout(self) -> None:
        """The output attributes, the word columns and the IDF factors."""
        schema = self.input_schema
        attributes = [schema.attributes[i] for i in self.kept]
        names, self.renamed = word_names(self.params["prefix"], self.words, {a.name for a in attributes})
        if self.n_columns:
            taken = {a.name for a in attributes}
            names, placeholders_renamed = hashed_column_names(
                self.params["prefix"], self.n_columns, self.columns, names, taken
            )
            self.renamed += placeholders_renamed
        # the names' UTF-8 bytes (a lone surrogate, which only the Python API gives, as three): characters, plus what
        # encoding adds beyond ASCII (encoding them joined, 150,000 bigrams' names took 12-23 ms; this, 5 ms)
        every = [a.name for a in attributes] + names
        wider = (len(name.encode("utf-8", "surrogatepass")) - len(name) for name in every if not name.isascii())
        name_bytes = sum(map(len, every)) + sum(wider)
        fewer = (
            "hash into fewer --hash bits"
            if self.n_columns
            else "keep fewer words with --words-to-keep or --min-term-freq"
        )
        refuse_unreadable_output(self.name, len(attributes) + len(names), 0, name_bytes, fewer)
        self._vocabulary = None
        attributes += Attribute.numerics(names, ["numeric"] * len(names))
        self.word_schema = schema.with_attributes(attributes)
        with np.errstate(divide="ignore"):
            self.idf = np.log(self.n_documents / self.document_counts.astype(np.float64))

    def output_schema(self):
        return self.word_schema

    def fit_warnings(self) -> list[str]:
        """The words (with ``--hash``: the columns, ``PREFIX#COLUMN`` too) renamed because another attribute has
        their name (:func:`word_names`), in one line; with ``--hash``, the collisions."""
        if self.n_columns and self.collisions:
            return [
                f"--hash {self.params['hash']}: {self.collisions:,} of the {len(self.words) + self.collisions:,} "
                "distinct training tokens fall into a column with a more frequent one, which names it "
                f"({len(self.words):,} of the {self.n_columns:,} columns hold a token)",
                *self._renamed_warning(),
            ]
        return self._renamed_warning()

    def _renamed_warning(self) -> list[str]:
        if not self.renamed:
            return []
        shown = ", ".join(f"{word!r} as {name!r}" for word, name in self.renamed[:RENAMED_SHOWN])
        more = f", … ({len(self.renamed):,} in all)" if len(self.renamed) > RENAMED_SHOWN else ""
        named = "columns" if self.n_columns else "words"
        return [f"renames {named} named like another attribute (give --prefix to keep them): {shown}{more}"]

    @property
    def vocabulary(self):
        """The kept words numbered in order, for a transform to look the tokens up in: made at its first use, as a
        fit that writes its own rows renumbers them (:meth:`transform_kept`) and needs none (150,000 bigrams: 30 ms)."""
        if self._vocabulary is None:
            self._vocabulary = WordVocabulary(self.words)
        return self._vocabulary

    def transform(self, chunk: Chunk) -> Chunk:
        return self._words_of(chunk, weighted=True)

    def exported_step(self) -> Words:
        """The stage in an exported scorer (:mod:`filterkit.export`): its tokenizer and its words' values."""
        return words_step(self)

    def explained_counts(self, chunk: Chunk) -> Chunk | None:
        """Each word's count (or presence), before ``--log-tf`` and ``--idf``: what ``explain`` shows."""
        return self._words_of(chunk, weighted=False) if self.params["log_tf"] or self.params["idf"] else None

    def _words_of(self, chunk: Chunk, weighted: bool) -> Chunk:
        """``chunk``'s kept attributes, then its words' counts (presence without ``--counts``), each made
        ln(1 + x) by ``--log-tf`` and times its idf by ``--idf`` when ``weighted``."""
        # stop words hash into columns as every token does: a transform by columns leaves them out itself
        stop_words = self._fitted_stop_words() if self.n_columns else NO_STOP_WORDS
        indptr, ids, counts = self.counted(chunk, self.vocabulary, False, stop_words)
        data = self._weighted(counts.astype(np.float64), ids, weighted)
        shape = (chunk.n_rows, len(self.kept) + (self.n_columns or len(self.words)))
        kept = chunk.values[:, self.kept]  # a CSR matrix (and scipy imported) only for sparse input rows
        values, columns, row_starts = _kept_then_words(kept, indptr, ids, data)
        # a stored 0 left out: a word in every training document has idf 0
        return Chunk.from_csr(values, columns, row_starts, shape, self._kept_text(chunk), chunk.weights).with_stored(
            values
        )

    def _weighted(self, occurrences: np.ndarray, ids: np.ndarray, weighted: bool) -> np.ndarray:
        """The values of words (numbered ``ids``) that occur ``occurrences`` times: the counts, or presence without
        ``--counts``; made ln(1 + x) by ``--log-tf`` and times the idf by ``--idf`` when ``weighted``."""
        data = occurrences if self.params["counts"] else np.ones(len(occurrences))
        if weighted and self.params["log_tf"]:
            data = np.log(data + 1.0)
        if weighted and self.params["idf"]:
            data = data * self.idf[ids]
        return data

    def _kept_text(self, chunk: Chunk) -> dict[int, list]:
        """The texts of the kept attributes of ``chunk``, by their output position."""
        kept = ((k, chunk.text_column(position)) for k, position in enumerate(self.kept))
        return {k: texts for k, texts in kept if texts is not None}

    def state(self) -> dict:
        return {
            "words": list(self.words),
            # a list, as the words are: the vocabulary is not bounded by the input's attributes
            "document_counts": self.document_counts.tolist(),
            "n_documents": self.n_documents,
            OPTIONS_KEY: fitted_options(self),
            # the stop words the fit left out, which a --hash transform and an update leave out too: no command
            # opens the --stopwords file a model names (it may be edited, gone, a FIFO by then)
            **({} if self.stop_words is None else {"stopwords": sorted(self.stop_words.words)}),
            **({"columns": self.columns.tolist(), "collisions": self.collisions} if self.n_columns else {}),
        }

    def load_state(self, state: dict) -> None:
        super().load_state(state)
        words, n_documents = state.get("words"), state.get("n_documents")
        if not isinstance(words, list) or not all(isinstance(word, str) for word in words) or not _text(words):
            raise invalid_state(self, "'words' is not a list of strings (of text: no lone surrogate)")
        if len(set(words)) != len(words):
            raise invalid_state(self, "'words' names a word twice")
        if len(words) != len(self.document_counts):
            raise invalid_state(
                self, f"{len(words)} words where 'document_counts' has {len(self.document_counts)} entries"
            )
        if isinstance(n_documents, bool) or not isinstance(n_documents, int) or not 0 <= n_documents < 2**53:
            raise invalid_state(self, "'n_documents' is not a whole number in [0, 2**53)")
        self._check_saved_words(words, n_documents, state)
        self._load_stop_words(state.get("stopwords"))
        if self.n_columns:
            self._load_columns(state.get("columns"), state.get("collisions"), len(words))
        self.words, self.n_documents = words, n_documents
        self._layout()

    def _check_saved_words(self, words: list[str], n_documents: int, state: dict) -> None:
        """A saved state's words lowercased where they were, held by at most its documents, and none (nor documents,
        nor columns) with --hash-names number, which fits nothing."""
        if self.params["lowercase"] and self.stem is None:
            uppercase = next((word for word in words if word.lower() != word), None)
            if uppercase is not None:
                raise invalid_state(self, f"{uppercase!r} is not lowercase, yet the words were lowercased")
        if np.any(self.document_counts > n_documents):
            raise invalid_state(self, "a word is held by more documents than 'n_documents'")
        if not self.learns and (words or n_documents or state.get("columns") or state.get("collisions")):
            raise invalid_state(self, "with --hash-names number nothing is fitted, yet it holds words or documents")

    def _load_stop_words(self, stopwords) -> None:
        """The saved stop words, checked; a model saved before they were recorded (never with ``--hash``) has
        those ``--stopwords`` gives without a file, or none known."""
        if stopwords is None and not self.n_columns:
            given = self.params["stopwords"]
            self.stop_words = None if given not in (None, BUILT_IN_STOPWORDS) else self._given_stop_words()
            return
        if (
            not isinstance(stopwords, list)
            or not all(isinstance(word, str) for word in stopwords)
            or not _text(stopwords)
        ):
            raise invalid_state(self, "'stopwords' is not a list of strings (of text: no lone surrogate)")
        self.stop_words = StopWords(frozenset(stopwords))

    def _load_columns(self, columns, collisions, n_words: int) -> None:
        """``--hash``'s saved columns (ascending, one per word) and collisions, checked."""
        if (
            not isinstance(columns, list)
            or len(columns) != n_words
            or not all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c < self.n_columns for c in columns)
            or any(a >= b for a, b in itertools.pairwise(columns))
        ):
            raise invalid_state(self, f"'columns' is not one ascending column below {self.n_columns} per word")
        if isinstance(collisions, bool) or not isinstance(collisions, int) or collisions < 0:
            raise invalid_state(self, "'collisions' is not a whole number")
        self.columns, self.collisions = np.array(columns, dtype=np.int64), collisions


def _kept_then_words(kept, indptr: np.ndarray, ids: np.ndarray, data: np.ndarray):
    """CSR arrays ``(values, columns, row starts)`` of each row's values of the ``kept`` attributes (a dense or
    CSR block; its zeros left out) followed by its words (CSR ``indptr``, their token numbers ``ids``, at columns
    after the kept ones, and their counts or values ``data``), as scipy's ``hstack`` joins the two blocks, without
    its cost (a third of one document's trip through ``words … shape bns l2``); a dense block in one pass."""
    if isinstance(kept, np.ndarray):
        joined = join_kept_words(np.ascontiguousarray(kept, dtype=np.float64), indptr, ids, data)
        return tuple(np.frombuffer(array, dtype) for array, dtype in zip(joined, (np.float64, np.int64, np.int64)))
    n_rows = len(indptr) - 1
    columns, data = kept.shape[1] + ids, data.astype(np.float64)
    kept = kept.tocsr()  # a scipy sparse matrix
    kept_per_row, kept_columns, kept_values = np.diff(kept.indptr), kept.indices, kept.data
    words_per_row = np.diff(indptr)
    row_starts = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(kept_per_row + words_per_row, out=row_starts[1:])
    # where each entry goes: its row's start, after the row's kept values for a word, plus its rank in the row
    kept_at = np.arange(len(kept_values)) + np.repeat(
        row_starts[:-1] + kept_per_row - np.cumsum(kept_per_row), kept_per_row
    )
    words_at = np.arange(len(data)) + np.repeat(row_starts[:-1] + kept_per_row - indptr[:-1], words_per_row)
    values, joined_columns = np.empty(row_starts[-1]), np.empty(row_starts[-1], dtype=np.int64)
    values[kept_at], joined_columns[kept_at] = kept_values, kept_columns
    values[words_at], joined_columns[words_at] = data, columns
    return values, joined_columns, row_starts


@hookimpl
def register_stages(register):
    """The ``words`` stage."""
    register(WordVector)


def _text(words: list[str]) -> bool:
    """Whether every one of ``words`` is text UTF-8 can write (a lone surrogate, ``"\\ud800"``, is none)."""
    try:
        "".join(words).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
