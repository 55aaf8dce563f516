"""The statistics ``words`` learns (:mod:`filterkit_plugins.words`): the occurrence and document counts of each
(class, word) pair that occurs, which merge by adding, the pairs each class keeps, and the plain data a model saved
``--updatable`` holds them as (:mod:`filterkit.updating`)."""

from __future__ import annotations

import numpy as np

from filterkit.kernels import WordTally, WordVocabulary
from filterkit.word_tokens import StopWords


class WordStatistics:
    """Per (class, token) pair that occurs, the token's occurrences in the class's documents and the
    number of them holding it (tokens by the ``vocabulary``'s numbers); and the number of documents.
    Pairs that do not occur take no space: the size follows the data, not declared classes × words.
    The pairs are keyed ``token · n_classes + class`` in a compiled hash table (``Tally``), so a chunk's
    pairs cost a probe each, no table is copied whole per chunk and no Python object is made per pair
    (sorted runs merged by numpy took a fifth of ``words --counts`` on Debian's short descriptions).  Two
    parts' statistics merge by adding.  They hold the ``stop_words`` they were counted without: the rows an
    update adds are counted without the same ones, whatever the ``--stopwords`` file holds by then."""

    def __init__(self, n_classes: int, vocabulary, stop_words: StopWords):
        self.n_classes = n_classes
        self.vocabulary = vocabulary
        self.stop_words = stop_words
        self._tally: WordTally | None = WordTally()
        #: what :meth:`pairs` last gave, once it has given the tally's memory back
        self._pairs: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self.n_documents = 0

    @property
    def tally(self) -> WordTally:
        """The pairs' sums, made again from :meth:`pairs`' arrays if they were given back."""
        if self._tally is None:
            assert self._pairs is not None
            classes, ids, occurrences, documents = self._pairs
            self._tally, self._pairs = WordTally(ids * self.n_classes + classes, occurrences, documents), None
        return self._tally

    def add(self, labels: np.ndarray, indptr: np.ndarray, ids: np.ndarray, counts: np.ndarray) -> None:
        """Count rows whose distinct tokens are ``ids[indptr[r]:indptr[r + 1]]`` in class ``labels[r]``."""
        keys = ids if self.n_classes == 1 else ids * self.n_classes + np.repeat(labels, np.diff(indptr))
        self.tally.add(np.ascontiguousarray(keys), np.ascontiguousarray(counts))
        self.n_documents += len(labels)

    def merge(self, other: "WordStatistics") -> "WordStatistics":
        """The statistics of both parts (these, grown by the other's)."""
        numbers = np.frombuffer(self.vocabulary.ids(other.vocabulary), dtype=np.int64)
        keys, occurrences, documents = (np.frombuffer(a, dtype=np.int64) for a in other.tally.arrays())
        ids, labels = np.divmod(keys, self.n_classes)
        self.tally.add(numbers[ids] * self.n_classes + labels, occurrences, documents)
        self.n_documents += other.n_documents
        return self

    def add_pairs(self, pairs: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], n_documents: int) -> None:
        """Count ``pairs`` (``(classes, ids, occurrences, documents)``, as :meth:`pairs` gives them) of
        ``n_documents`` documents."""
        classes, ids, occurrences, documents = pairs
        self.tally.add(
            ids * self.n_classes + classes, np.ascontiguousarray(occurrences), np.ascontiguousarray(documents)
        )
        self.n_documents += n_documents

    def pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every pair that occurs, ordered by class then token: ``(classes, ids, occurrences, documents)``.
        The tally's memory is given back meanwhile (a fit's last use of it, before its widest header is made:
        that was 10 MB of a 150,000-word fit's peak); adding again makes it from these arrays."""
        if self._pairs is None:
            keys, occurrences, documents = (np.frombuffer(a, dtype=np.int64) for a in self.tally.arrays())
            self._tally = None
            ids, classes = np.divmod(keys, self.n_classes)
            order = np.lexsort((ids, classes))
            self._pairs = classes[order], ids[order], occurrences[order], documents[order]
        return self._pairs


def kept_pairs(classes: np.ndarray, occurrences: np.ndarray, words_to_keep: int, min_term_freq: int) -> np.ndarray:
    """Which (class, word) pairs (ordered by class) a class keeps: those whose occurrences reach the larger of
    ``min_term_freq`` and the ``words_to_keep``-th largest occurrence count of the class's words (ties kept)."""
    if not len(occurrences) or min_term_freq > occurrences.max():  # none reaches it (nor int64 holds it, maybe)
        return np.zeros(len(occurrences), dtype=bool)
    bounds = np.r_[np.flatnonzero(np.diff(classes, prepend=-1)), len(classes)]
    sizes = np.diff(bounds)
    thresholds = np.full(len(sizes), min_term_freq, dtype=np.int64)
    for position in np.flatnonzero(sizes >= words_to_keep).tolist():
        start, end = bounds[position], bounds[position + 1]
        reached = np.partition(occurrences[start:end], end - start - words_to_keep)[end - start - words_to_keep]
        thresholds[position] = max(min_term_freq, reached)
    return occurrences >= np.repeat(thresholds, sizes)


def saved_word_statistics(statistics: WordStatistics) -> dict:
    """The (class, word) pairs with their occurrences and documents, words in code point order and each
    pair by class then word: the same whatever order the documents came in."""
    classes, ids, occurrences, documents = statistics.pairs()
    vocabulary = statistics.vocabulary.words
    words = sorted({vocabulary[i] for i in np.unique(ids).tolist()})
    numbers = np.frombuffer(WordVocabulary(words).ids([vocabulary[i] for i in ids.tolist()]), dtype=np.int64)
    order = np.lexsort((numbers, classes))
    return {
        "n_documents": statistics.n_documents,
        "words": words,
        "classes": classes[order],
        "words_of_pairs": numbers[order],
        "occurrences": occurrences[order],
        "documents": documents[order],
    }


#: The arrays of the pairs in saved statistics, in :meth:`WordStatistics.pairs`' order.
PAIR_ARRAYS = ("classes", "words_of_pairs", "occurrences", "documents")


def checked_saved_statistics(
    saved: dict, n_classes: int
) -> tuple[list[str], int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """The words, the number of documents and the pairs of what :func:`saved_word_statistics` gave, for
    ``n_classes`` classes; ValueError (KeyError for an entry missing) saying what does not fit."""
    words, n_documents = saved["words"], saved["n_documents"]
    if not isinstance(words, list) or not all(isinstance(word, str) for word in words) or len(set(words)) != len(words):
        raise ValueError("'words' is not a list of distinct strings")
    if isinstance(n_documents, bool) or not isinstance(n_documents, int) or not 0 <= n_documents < 2**53:
        raise ValueError("'n_documents' is not a whole number")
    pairs = checked_pairs(saved, len(words), n_classes)
    classes, ids, _, documents = pairs
    if np.any(documents > n_documents):
        raise ValueError("a pair's documents are more than 'n_documents'")
    if np.any(np.diff(classes * len(words) + ids) <= 0):
        raise ValueError("the pairs are not each (class, word) once, in that order")
    return words, n_documents, pairs


def checked_pairs(saved: dict, n_words: int, n_classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The pairs of saved statistics of ``n_words`` words (:data:`PAIR_ARRAYS`); ValueError saying what does not
    fit."""
    classes, ids, occurrences, documents = pairs = tuple(saved[key] for key in PAIR_ARRAYS)
    if any(not isinstance(a, np.ndarray) or a.dtype != np.int64 or a.shape != classes.shape for a in pairs):
        raise ValueError("the pairs are not int64 arrays of one length")
    if len(ids) and (ids.min() < 0 or ids.max() >= n_words or classes.min() < 0 or classes.max() >= n_classes):
        raise ValueError("a pair names a word or a class that is not there")
    if np.any(occurrences < documents) or np.any(documents < 1) or np.any(occurrences >= 2**53):
        raise ValueError("a pair's counts are not whole numbers of documents and occurrences below 2**53")
    return classes, ids, occurrences, documents
