"""The ``words`` stage's tokenizer as C (issue 78): :func:`words_source` writes a fitted stage's settings, its
vocabulary (a hash table built here) and the Unicode tables its lowercasing needs as data, then the algorithms of
``tokens.c``, whose ``words_count`` gives a document's (word number, occurrences) pairs as the stage's ``counted``
gives them for a transform.

Nothing from a model becomes code: every string a model holds (words, stop words, delimiters) is written as the
numbers of its UTF-8 bytes, every size checked.  The Unicode tables (``str.lower``'s full mappings, the properties
of the final sigma's context, ``str.split``'s whitespace) are read from the running interpreter, so that the C
lowercases as the Python it was exported from does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Sequence

import numpy as np

from filterkit.errors import FilterkitError

#: The tokenizers, as ``tokens.c`` numbers them.
WORD, ALPHABETIC, CHARACTERS = 0, 1, 2
#: The most hashed columns ``count`` takes (a power of two).
MOST_HASH_COLUMNS = 1 << 31
#: The longest word n-gram and character n-gram the stage takes (word_tokens.LONGEST_NGRAM, LONGEST_CHARACTER_NGRAM).
LONGEST_NGRAM, LONGEST_CHARACTER_NGRAM = 10, 20
#: The most words, and bytes of them, a table holds: its numbers are 32-bit.
MOST_WORDS, MOST_WORD_BYTES = (1 << 31) - 1, (1 << 32) - 1
#: The numbers written on one line of an array.
NUMBERS_PER_LINE = 32
#: The code points of one block of the two-stage Unicode table (a power of two) and its shift.
BLOCK_SHIFT = 7
#: The flags of a code point in the Unicode table, as ``tokens.c`` reads them: cased (and not case-ignorable, the
#: only ``cased`` the final sigma's context asks about), case-ignorable, whitespace to ``str.split``, and a
#: lowercase of more than one code point (its delta then the number of its mapping in the special table).
CASED, CASE_IGNORABLE, SPACE, SPECIAL = 1, 2, 4, 8
#: The most UTF-8 bytes lowercasing makes of one byte (``tokens.c``'s room for a lowercased token).
ROOM_PER_BYTE = 3
#: The polynomial hash of ``tokens.c``'s tables (:func:`table_hashes`): its seed and its factor (FNV's 64-bit prime).
HASH_SEED, HASH_FACTOR = 0x9E3779B97F4A7C15, 0x100000001B3
#: The capital sigma, lowercased by its context.
SIGMA = "\u03a3"


def refusal(stage: Any) -> str | None:
    """What keeps a fitted ``words`` stage from being written as C, in one line; None when nothing does."""
    params = getattr(stage, "params", {})
    if getattr(stage, "stem", None) is not None or params.get("stemmer") is not None:
        return f"stage 'words': its stemmer {params.get('stemmer')!r} is Python code, which a C source cannot hold"
    features = getattr(stage, "features", None)
    if features is None or getattr(stage, "words", None) is None or getattr(stage, "settings", None) is None:
        return "stage 'words' is not fitted"
    if len(features) != 1:
        return (
            f"stage 'words' converts {len(features)} text attributes, and the exported scorer reads one document: "
            "convert one with --attributes"
        )
    if getattr(stage, "n_columns", 0) and getattr(stage, "stop_words", None) is None:
        return "stage 'words': the model does not record the stop words its hashed columns leave out: refit the chain"
    try:
        checked_settings(stage)
    except FilterkitError as error:
        return str(error)
    return None


@dataclass(frozen=True)
class _Settings:
    """A fitted stage's tokenizer, checked."""

    tokenizer: int
    lowercase: bool
    ngram_min: int
    ngram_max: int
    hash_columns: int
    delimiters: str
    words: Sequence[str]
    stop_words: Sequence[str]


def checked_settings(stage: Any) -> _Settings:
    """The tokenizer of ``stage``, each setting checked: FilterkitError naming the first that is not as a fit
    makes it."""
    settings = stage.settings
    if not isinstance(settings, tuple) or len(settings) != 5:
        raise FilterkitError("stage 'words': its settings are not (delimiters, alphabetic, lowercase, min, max)")
    delimiters, alphabetic, lowercase, ngram_min, ngram_max = settings
    characters = bool(getattr(stage, "characters", False))
    if not isinstance(delimiters, str):
        raise FilterkitError("stage 'words': its delimiters are not a string")
    n_columns = getattr(stage, "n_columns", 0) or 0
    _check_sizes(ngram_min, ngram_max, characters, n_columns)
    words, stop_words = _checked_words(stage, n_columns, characters)
    return _Settings(
        CHARACTERS if characters else ALPHABETIC if alphabetic else WORD,
        bool(lowercase),
        ngram_min,
        ngram_max,
        n_columns,
        "" if alphabetic or characters else delimiters,
        [] if n_columns else words,
        sorted(stop_words),
    )


def _check_sizes(ngram_min: Any, ngram_max: Any, characters: bool, n_columns: Any) -> None:
    """FilterkitError for n-gram sizes outside what the stage allows, or hashed columns that are not a power of two
    up to 2**31."""
    sizes = (ngram_min, ngram_max)
    if not all(isinstance(size, int) and not isinstance(size, bool) for size in sizes):
        raise FilterkitError("stage 'words': its n-gram sizes are not whole numbers")
    longest = LONGEST_CHARACTER_NGRAM if characters else LONGEST_NGRAM
    if (sizes != (0, 0) or characters) and not 1 <= ngram_min <= ngram_max <= longest:
        raise FilterkitError(f"stage 'words': n-grams of {ngram_min} to {ngram_max} are not within 1 to {longest}")
    if not isinstance(n_columns, int) or n_columns < 0 or n_columns > MOST_HASH_COLUMNS or n_columns & (n_columns - 1):
        raise FilterkitError(f"stage 'words': {n_columns!r} hashed columns is not a power of two up to 2**31")


def _checked_words(stage: Any, n_columns: int, characters: bool) -> tuple[Sequence[str], frozenset | set]:
    """The stage's words (distinct, unless hashed) and the stop words its hashed columns leave out (none
    otherwise); FilterkitError for anything else."""
    words = stage.words
    if not isinstance(words, (list, tuple)) or not all(isinstance(word, str) for word in words):
        raise FilterkitError("stage 'words': its words are not a list of strings")
    if not n_columns and len(set(words)) != len(words):
        raise FilterkitError("stage 'words': its words name a word twice")
    stop_words = getattr(stage.stop_words, "words", None) if n_columns and not characters else frozenset()
    if not isinstance(stop_words, (set, frozenset)) or not all(isinstance(word, str) for word in stop_words):
        raise FilterkitError("stage 'words': its stop words are not a set of strings")
    return words, stop_words


def words_source(stage: Any) -> str:
    """The C source of a fitted ``words`` stage's tokenizer: its data, then ``tokens.c``, which defines
    ``words_count`` (and only names starting ``words_``/``WORDS_``, besides ``WordPair``); FilterkitError for a
    stage :func:`refusal` refuses."""
    refused = refusal(stage)
    if refused is not None:
        raise FilterkitError(refused)
    settings = checked_settings(stage)
    parts = [
        "/* The words stage's tokenizer (generated by filterkit export: every string of the model is written as the\n"
        " * numbers of its UTF-8 bytes). */\n",
        "#include <stdint.h>\n#include <stddef.h>\n#include <stdlib.h>\n#include <string.h>\n\n",
        f"#define WORDS_TOKENIZER {settings.tokenizer}\n",
        f"#define WORDS_LOWERCASE {int(settings.lowercase)}\n",
        f"#define WORDS_NGRAM_MIN {settings.ngram_min}\n",
        f"#define WORDS_NGRAM_MAX {settings.ngram_max}\n",
        f"#define WORDS_HASH_COLUMNS INT64_C({settings.hash_columns})\n",
        f"#define WORDS_HASH_SEED UINT64_C({HASH_SEED})\n#define WORDS_HASH_FACTOR UINT64_C({HASH_FACTOR})\n",
        _delimiter_tables(settings),
        _table_source("WORDS_VOCABULARY", settings.words),
        _table_source("WORDS_STOP", settings.stop_words),
        _unicode_source(),
        resources.files("filterkit").joinpath("ascii_bytes.h").read_text(encoding="utf-8"),
        resources.files("filterkit.export").joinpath("tokens.c").read_text(encoding="utf-8"),
    ]
    return "".join(parts)


#: Each byte's number as text.
_BYTE_TEXTS = [str(byte) for byte in range(256)]


def _array(c_type: str, name: str, values: bytes | list[int]) -> str:
    """A ``static const`` C array of ``values`` (at least one element: C has no empty array)."""
    numbers = list(map(_BYTE_TEXTS.__getitem__, values) if isinstance(values, bytes) else map(str, values)) or ["0"]
    lines = (",".join(numbers[at : at + NUMBERS_PER_LINE]) for at in range(0, len(numbers), NUMBERS_PER_LINE))
    return f"static const {c_type} {name}[{len(numbers)}] = {{\n" + ",\n".join(lines) + "\n};\n"


def _delimiter_tables(settings: _Settings) -> str:
    """Per byte, whether a token holds it (a byte past ASCII: unless alphabetic, where a delimiter past ASCII
    starting there is told apart by code point), and the delimiters past ASCII, ascending; with character n-grams,
    per ASCII byte whether ``str.split`` cuts at it."""
    if settings.tokenizer == ALPHABETIC:
        word_byte = [int(chr(byte).isascii() and chr(byte).isalpha()) for byte in range(256)]
    else:
        word_byte = [int(byte >= 0x80 or chr(byte) not in settings.delimiters) for byte in range(256)]
    wide = sorted({ord(character) for character in settings.delimiters if ord(character) >= 0x80})
    return (
        _array("unsigned char", "WORDS_WORD_BYTE", bytes(word_byte))
        + f"#define WORDS_N_WIDE_DELIMITERS {len(wide)}\n"
        + _array("uint32_t", "WORDS_WIDE_DELIMITERS", wide)
    )


def _padded(encoded: Sequence[bytes]) -> bytes:
    """The words' bytes one after another, each padded with zeros to a multiple of 8."""
    return b"".join(word + bytes(-len(word) % 8) for word in encoded)


def _table_source(name: str, words: Sequence[str]) -> str:
    """``words`` (distinct) as a hash table ``tokens.c`` looks tokens up in: their UTF-8 bytes one after another, each
    padded with zeros to a multiple of 8, then 8 zeros more, so that 8 bytes may be read from any word's start
    (``NAME_BYTES``); per word where its bytes start and their length (``NAME_SPANS``); and per slot of a power of
    two of them, at least twice the words, the high half of the hash (:func:`table_hashes`) of the word there and its
    number + 1 (0: an empty slot), by linear probing from the hash's low bits."""
    encoded = [word.encode("utf-8", "surrogatepass") for word in words]
    lengths = np.array([len(word) for word in encoded], dtype=np.int64)
    padded = lengths + (-lengths % 8)
    if len(encoded) > MOST_WORDS or int(padded.sum()) + 8 > MOST_WORD_BYTES:
        raise FilterkitError(f"stage 'words': {len(encoded):,} words are more than a C table of 32-bit numbers holds")
    starts = np.zeros(len(encoded), dtype=np.int64)
    np.cumsum(padded[:-1], out=starts[1:])
    n_slots = 1
    while n_slots < 2 * len(encoded):
        n_slots *= 2
    mask = n_slots - 1
    slots = [0] * (2 * n_slots)
    for number, hashed in enumerate(table_hashes(encoded).tolist()):
        slot = hashed & mask
        while slots[2 * slot + 1]:
            slot = (slot + 1) & mask
        slots[2 * slot : 2 * slot + 2] = hashed >> 32, number + 1
    return (
        f"#define {name}_N {len(encoded)}\n#define {name}_MASK UINT64_C({mask})\n"
        + _array("unsigned char", f"{name}_BYTES", _padded(encoded) + bytes(8))
        + _array("uint32_t", f"{name}_SPANS", np.stack([starts, lengths], axis=1).reshape(-1).tolist())
        + _array("uint32_t", f"{name}_SLOTS", slots)
    )


def table_hashes(encoded: Sequence[bytes]) -> np.ndarray:
    """Each word's hash in ``tokens.c``'s tables (``words_key_hash``): of its bytes padded with zeros to a multiple of
    8, the polynomial h = h * FACTOR + chunk over its m 8-byte chunks (little-endian) from SEED and then its length n,
    modulo 2**64, which is SEED * FACTOR**(m + 1) + n + the sum of each chunk times FACTOR to the number of chunks
    after it plus one; mixed by MurmurHash3's 64-bit finalizer.  In numpy, with no loop over a word's chunks."""
    lengths = np.array([len(word) for word in encoded], dtype=np.int64)
    n_chunks = (lengths + 7) // 8
    chunks = np.frombuffer(_padded(encoded), dtype="<u8").astype(np.uint64)
    powers = np.full(int(n_chunks.max(initial=0)) + 2, HASH_FACTOR, dtype=np.uint64)
    powers[0] = 1
    with np.errstate(over="ignore"):  # modulo 2**64, as C's unsigned arithmetic
        powers = np.cumprod(powers, dtype=np.uint64)
        ends = np.cumsum(n_chunks)
        after = np.repeat(ends, n_chunks) - np.arange(len(chunks), dtype=np.int64)
        sums = np.zeros(len(chunks) + 1, dtype=np.uint64)
        np.cumsum(chunks * powers[after], dtype=np.uint64, out=sums[1:])
        h = np.uint64(HASH_SEED) * powers[n_chunks + 1] + lengths.astype(np.uint64)
        h += sums[ends] - sums[ends - n_chunks]
        for factor in (0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53, None):
            h ^= h >> np.uint64(33)
            if factor is not None:
                h *= np.uint64(factor)
    return h


@cache
def _unicode_source() -> str:
    """The running interpreter's lowercasing and whitespace as C tables (made once per process): a two-stage
    table (per block of 2**BLOCK_SHIFT code points the number of its distinct row, per row and code point the
    number of its record) of records: the delta from a code point to its lowercase (or the number of its mapping
    in ``WORDS_SPECIAL_LOWER``) and its flags."""
    deltas, flags, special = unicode_properties()
    keys = (deltas * (SPECIAL << 1) + flags).reshape(-1, 1 << BLOCK_SHIFT)  # flags < SPECIAL << 1
    distinct: dict[bytes, int] = {}
    block_of = np.array([distinct.setdefault(row.tobytes(), len(distinct)) for row in keys], dtype=np.int64)
    first_of_block = np.unique(block_of, return_index=True)[1]
    values, blocks = np.unique(keys[first_of_block], return_inverse=True)
    records = np.stack([values // (SPECIAL << 1), values % (SPECIAL << 1)], axis=1)
    record_type = "uint8_t" if len(records) <= 256 else "uint16_t"
    return (
        f"#define WORDS_BLOCK_SHIFT {BLOCK_SHIFT}\n#define WORDS_ROOM_PER_BYTE {ROOM_PER_BYTE}\n"
        f"#define WORDS_CASED {CASED}\n#define WORDS_CASE_IGNORABLE {CASE_IGNORABLE}\n"
        f"#define WORDS_SPACE {SPACE}\n#define WORDS_SPECIAL {SPECIAL}\n"
        + _array("uint16_t", "WORDS_BLOCK_OF", block_of.tolist())
        + _array(record_type, "WORDS_RECORD_OF", blocks.reshape(-1).tolist())
        + _array("int32_t", "WORDS_LOWER_DELTA", records[:, 0].tolist())
        + _array("unsigned char", "WORDS_FLAGS", records[:, 1].tolist())
        + _array("uint32_t", "WORDS_SPECIAL_LOWER", [value for mapping in special for value in mapping])
    )


def _lowered_probes(points: np.ndarray, before: str, after: str) -> np.ndarray:
    """Each code point of ``points`` between ``before`` and ``after``, lowercased by ``str.lower`` in one string
    (each probe ended by a NUL, which no lowercase holds), as UTF-32 code points; and where each probe's NUL is."""
    columns = [np.full(len(points), ord(character), np.uint32) for character in before]
    columns += [points] + [np.full(len(points), ord(character), np.uint32) for character in after]
    columns.append(np.zeros(len(points), np.uint32))
    text = np.stack(columns, axis=1).tobytes().decode("utf-32-le")
    return np.frombuffer(text.lower().encode("utf-32-le"), np.uint32)


def _ends(lowered: np.ndarray, n: int) -> np.ndarray:
    """Where each of ``n`` probes' NUL is in ``lowered``."""
    ends = np.flatnonzero(lowered == 0)
    if len(ends) != n:
        raise FilterkitError("str.lower made or removed a NUL: its tables cannot be read")
    return ends


def _utf8_lengths(points: np.ndarray) -> np.ndarray:
    """The UTF-8 bytes of each code point."""
    return 1 + (points >= 0x80) + (points >= 0x800) + (points >= 0x10000)


def unicode_properties() -> tuple[np.ndarray, np.ndarray, list[list[int]]]:
    """Per code point (0 to U+10FFFF) the delta to its lowercase and its flags, and the lowercase mappings of more
    than one code point (each as its length and three code points).  ``str.lower`` tells what no module exposes:
    a capital sigma after the code point (after a cased letter, and after a space) is final when the code point is
    case-ignorable (skipped, the letter before it seen) or cased, and after a space only when it is cased; the
    surrogates, which no UTF-8 holds, are left as they are."""
    points = np.concatenate([np.arange(1, 0xD800), np.arange(0xE000, 0x110000)]).astype(np.uint32)
    lowered = _lowered_probes(points, "", "")
    ends = _ends(lowered, len(points))
    lengths = np.diff(ends, prepend=-1) - 1
    deltas = np.zeros(0x110000, dtype=np.int64)
    flags = np.zeros(0x110000, dtype=np.int64)
    single = lengths == 1
    deltas[points[single]] = lowered[ends[single] - 1].astype(np.int64) - points[single]
    special: list[list[int]] = []
    for point in points[~single].tolist():
        mapping = [ord(character) for character in chr(point).lower()]
        if not 1 <= len(mapping) <= 3:
            raise FilterkitError(f"str.lower maps U+{point:04X} to {len(mapping)} code points, more than three")
        flags[point] |= SPECIAL
        deltas[point] = len(special)
        special.append([len(mapping), *mapping, *[0] * (3 - len(mapping))])
    after_letter = _lowered_probes(points, "A", SIGMA)
    after_space = _lowered_probes(points, " ", SIGMA)
    final_after_letter = after_letter[_ends(after_letter, len(points)) - 1] == 0x3C2
    final_after_space = after_space[_ends(after_space, len(points)) - 1] == 0x3C2
    flags[points[final_after_space]] |= CASED
    flags[points[final_after_letter & ~final_after_space]] |= CASE_IGNORABLE
    text = points.tobytes().decode("utf-32-le")
    spaces = points[[match.start() for match in re.finditer(r"\s", text)]]
    if not all(chr(point).isspace() for point in spaces.tolist()):
        raise FilterkitError("the regular expressions' whitespace is not str.split's")
    flags[spaces] |= SPACE
    lowered_bytes = _utf8_lengths(points + deltas[points]) * single
    lowered_bytes[~single] = [len(chr(point).lower().encode()) for point in points[~single].tolist()]
    if np.any(lowered_bytes > ROOM_PER_BYTE * _utf8_lengths(points)):
        raise FilterkitError(f"str.lower makes a code point more than {ROOM_PER_BYTE} times its UTF-8 bytes")
    return deltas, flags, special
