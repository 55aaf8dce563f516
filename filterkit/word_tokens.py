"""How ``words`` cuts a document into tokens, as Weka 3.6's tokenizers and scikit-learn's ``char_wb`` do, and
the stop words it leaves out (docs/algorithms.md §12): shared by the stage (:mod:`filterkit_plugins.words`) and
its statistics (:mod:`filterkit.word_statistics`), which hold the stop words they were counted without."""

from __future__ import annotations

import re
from typing import Callable, Iterable, Iterator

from filterkit.arff.reader import JAVA_BLANKS
from filterkit.errors import FilterkitError
from filterkit.kernels import WordVocabulary
from filterkit.option_files import OPTION_FILE_BYTES, option_file

#: Weka's ``WordTokenizer`` delimiters, written with the escapes ``--delimiters`` reads.
WEKA_DELIMITERS = " \\r\\n\\t.,;:'\"()?!"

#: ``--stopwords`` naming Weka 3.6's built-in list (``weka.core.Stopwords``) instead of a file.
BUILT_IN_STOPWORDS = "weka"

#: Weka 3.6's built-in stop words (``java weka.core.Stopwords -p``), the 525 of Rainbow's list.
WEKA_STOPWORDS = frozenset(
    """
    a able about above according accordingly across actually after afterwards again against all allow allows
    almost alone along already also although always am among amongst an and another any anybody anyhow anyone
    anything anyway anyways anywhere apart appear appreciate appropriate are around as aside ask asking
    associated at available away awfully b be became because become becomes becoming been before beforehand
    behind being believe below beside besides best better between beyond both brief but by c came can cannot
    cant cause causes certain certainly changes clearly co com come comes concerning consequently consider
    considering contain containing contains corresponding could course currently d definitely described despite
    did different do does doing done down downwards during e each edu eg eight either else elsewhere enough
    entirely especially et etc even ever every everybody everyone everything everywhere ex exactly example
    except f far few fifth first five followed following follows for former formerly forth four from further
    furthermore g get gets getting given gives go goes going gone got gotten greetings h had happens hardly has
    have having he hello help hence her here hereafter hereby herein hereupon hers herself hi him himself his
    hither hopefully how howbeit however i ie if ignored immediate in inasmuch inc indeed indicate indicated
    indicates inner insofar instead into inward is it its itself j just k keep keeps kept know known knows l
    last lately later latter latterly least less lest let like liked likely little ll look looking looks ltd m
    mainly many may maybe me mean meanwhile merely might more moreover most mostly much must my myself n name
    namely nd near nearly necessary need needs neither never nevertheless new next nine no nobody non none noone
    nor normally not nothing novel now nowhere o obviously of off often oh ok okay old on once one ones only
    onto or other others otherwise ought our ours ourselves out outside over overall own p particular
    particularly per perhaps placed please plus possible presumably probably provides q que quite qv r rather rd
    re really reasonably regarding regardless regards relatively respectively right s said same saw say saying
    says second secondly see seeing seem seemed seeming seems seen self selves sensible sent serious seriously
    seven several shall she should since six so some somebody somehow someone something sometime sometimes
    somewhat somewhere soon sorry specified specify specifying still sub such sup sure t take taken tell tends
    th than thank thanks thanx that thats the their theirs them themselves then thence there thereafter thereby
    therefore therein theres thereupon these they think third this thorough thoroughly those though three
    through throughout thru thus to together too took toward towards tried tries truly try trying twice two u un
    under unfortunately unless unlikely until unto up upon us use used useful uses using usually uucp v value
    various ve very via viz vs w want wants was way we welcome well went were what whatever when whence whenever
    where whereafter whereas whereby wherein whereupon wherever whether which while whither who whoever whole
    whom whose why will willing wish with within without wonder would x y yes yet you your yours yourself
    yourselves z zero
    """.split()
)

_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", "'": "'", '"': '"', "%": "%", "u001E": "\x1e"}


def unescaped(text: str) -> str:
    """``text`` with the escapes Weka's ``Utils.unbackQuoteChars`` reads (``\\n \\r \\t \\\\ \\' \\" \\%`` and
    ``\\u001E``) replaced by their characters; any other backslash stays as it is."""
    return re.sub(r"\\([nrt\\'\"%]|u001E)", lambda match: _ESCAPES[match.group(1)], text)


#: The longest n-gram ``--ngrams`` takes: a document's tokens are then at most 10 times its words,
#: each at most 10 words long, not a number of n-grams that grows with the square of its length.
LONGEST_NGRAM = 10


def tokenizer(
    delimiters: str, ngrams: tuple[int, int] | None = None, alphabetic: bool = False
) -> Callable[[str], Iterable[str]]:
    """A function cutting a text into its tokens, as Weka 3.6's tokenizers do.

    The words are the maximal runs of characters that are not in ``delimiters`` (Java's
    ``StringTokenizer``, as Weka's ``WordTokenizer`` uses it), or with ``alphabetic`` of ASCII
    letters (``AlphabeticTokenizer``).  With ``ngrams`` (MIN, MAX) the tokens are, as
    ``NGramTokenizer``'s, the runs of MIN to MAX consecutive words joined by one space, each
    trimmed as Java's ``String.trim`` trims; none for a text of fewer than MIN words.  The n-grams
    are made one at a time, as they are read: one long document's are never held together."""
    split: Callable[[str], list[str]]
    if alphabetic:
        split = re.compile("[A-Za-z]+").findall
    elif not delimiters:
        split = lambda text: [text] if text else []  # noqa: E731
    else:
        split = re.compile("[^" + "".join(re.escape(c) for c in sorted(set(delimiters))) + "]+").findall
    if ngrams is None:
        return split
    shortest, longest = ngrams

    def grams(text: str) -> Iterator[str]:
        words = split(text)
        return (
            " ".join(words[start : start + n]).strip(JAVA_BLANKS)
            for n in range(shortest, min(longest, len(words)) + 1)
            for start in range(len(words) - n + 1)
        )

    return grams


#: The longest character n-gram ``--char-ngrams`` takes: a document's tokens are then at most 20 times its
#: characters (and two spaces per word).
LONGEST_CHARACTER_NGRAM = 20


def ngram_sizes(text: str | None, flag: str = "--ngrams", longest: int = LONGEST_NGRAM) -> tuple[int, int] | None:
    """``--ngrams MIN-MAX`` (or ``flag``'s) read: (MIN, MAX), 1 ≤ MIN ≤ MAX ≤ ``longest``; None when not given."""
    if text is None:
        return None
    sizes = re.fullmatch(r"([0-9]+)-([0-9]+)", text.strip())
    if sizes is None or not 1 <= int(sizes[1]) <= int(sizes[2]) <= longest:
        raise FilterkitError(f"option {flag}: {text!r} is not MIN-MAX with 1 ≤ MIN ≤ MAX ≤ {longest} (e.g. 1-2)")
    return int(sizes[1]), int(sizes[2])


def character_ngrams(sizes: tuple[int, int]) -> Callable[[str], Iterator[str]]:
    """A function cutting a text into scikit-learn's ``char_wb`` tokens (``_char_wb_ngrams``): each word
    (``str.split``: runs of non-whitespace), padded with one space each side, gives its runs of n characters
    for MIN ≤ n ≤ MAX; a padded word of n characters or fewer gives itself once and no longer n-gram."""
    shortest, longest = sizes

    def grams(text: str) -> Iterator[str]:
        for word in text.split():
            padded = f" {word} "
            for n in range(shortest, longest + 1):
                yield from (padded[start : start + n] for start in range(max(len(padded) - n, 0) + 1))
                if len(padded) <= n:
                    break

    return grams


#: The most a stop word file may hold (a list of words; ``/dev/zero`` or a corpus given by mistake is refused).
STOPWORD_FILE_CHARACTERS = 16 * 1024 * 1024


def read_stopwords(path: str) -> frozenset[str]:
    """The stop words of a file as Weka's ``Stopwords.read`` takes them: one per line, trimmed,
    lowercased, blank lines and lines starting with ``#`` ignored; but a leading byte-order mark is
    not part of the first word, as it is in Weka (docs/algorithms.md §12)."""
    try:
        data = option_file(path)
        text = "" if len(data) > OPTION_FILE_BYTES else data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise FilterkitError(f"option --stopwords: cannot read the stop word file {path!r}: {reason}") from None
    if len(data) > OPTION_FILE_BYTES or len(text) > STOPWORD_FILE_CHARACTERS:
        raise FilterkitError(
            f"option --stopwords: {path!r} holds more than {STOPWORD_FILE_CHARACTERS:,} characters: "
            "not a stop word list"
        )
    lines = re.split("\r\n|\r|\n", text.removeprefix("\ufeff"))  # Java's readLine: not str.splitlines' U+2028
    return frozenset(
        word.lower() for word in (line.strip(JAVA_BLANKS) for line in lines) if word and not word.startswith("#")
    )


class StopWords:
    """The stop words a fit leaves out, and the vocabulary of them ``count_words`` looks tokens up in (None
    when there are none)."""

    def __init__(self, words: frozenset[str]):
        self.words = words
        self.vocabulary = WordVocabulary(sorted(words)) if words else None


#: A fit without stop words.
NO_STOP_WORDS = StopWords(frozenset())
