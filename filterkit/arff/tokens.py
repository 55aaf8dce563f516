"""A linear tokenizer for ARFF lines (header lines, and data rows the vectorized reader cannot take).

No input can make it backtrack (liac-arff 2.5.0's nominal regex takes seconds on a crafted
header): its patterns are character classes and possessive quantifiers.
"""

from __future__ import annotations

import re
from typing import Iterator, NamedTuple

from filterkit.errors import ArffError

# Named here too for the modules that still import it from this one.
from filterkit.text import shown as shown

WORD = "word"
QUOTED = "quoted"
OPEN = "{"
CLOSE = "}"

#: What separates tokens outside quotes, as in Weka (its StreamTokenizer's white space is every character up to the
#: space, and the comma): the line ends aside, which are not in a line.
SEPARATORS = "".join(map(chr, range(0x21))) + ","
#: A line without these is only words and separators.
_MARKED = re.compile("['\"{}%]")
_PLAIN_WORD = re.compile(r"[^\x00-\x20,]++")
#: The next token after any separators: a word, a brace, a quoted string's body (escapes still in),
#: a comment, a quote never closed, or the end of the line.
_NEXT_TOKEN = re.compile(
    r"[\x00-\x20,]*+(?:"
    r"""([^\x00-\x20,{}%'"]++)"""
    r"|([{}])"
    r"|'([^'\\]*+(?:\\.[^'\\]*+)*+)'"
    r'|"([^"\\]*+(?:\\.[^"\\]*+)*+)"'
    r"""|(['"])"""
    r"|%|\Z)",
    re.DOTALL,
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "a": "\a", "v": "\v"}
_OTHER_ESCAPE = re.compile(r"\\([^0-7])", re.DOTALL)
_OCTAL_ESCAPE = re.compile(r"\\([0-3][0-7]{0,2}|[4-7][0-7]?)")


class Token(NamedTuple):
    kind: str
    text: str


def iter_tokens(line: str) -> Iterator[Token]:
    """The words, quoted strings and braces of one line, one at a time (a caller can stop early); ``%``
    starts a comment, a comma and every control character separate like white space (:data:`SEPARATORS`).
    In quotes a backslash escapes as Java's StreamTokenizer (Weka's) does: ``\\n``, ``\\t`` … as usual,
    one to three octal digits for a code, any other character for itself.
    """
    if _MARKED.search(line) is None:
        for word_match in _PLAIN_WORD.finditer(line):
            yield Token(WORD, word_match.group())
        return
    position = 0
    while True:
        match = _NEXT_TOKEN.match(line, position)
        assert match is not None  # its last alternatives, '%' and the end of the line, always match
        word, brace, single, double, unclosed = match.groups()
        if word is not None:
            yield Token(WORD, word)
        elif brace is not None:
            yield Token(brace, brace)
        elif single is not None or double is not None:
            yield Token(QUOTED, unescape(single if double is None else double))
        elif unclosed is not None:
            raise ArffError(f"unterminated {unclosed} quote starting at column {match.start(5) + 1}")
        else:
            return
        position = match.end()


def unescape(body: str) -> str:
    """A quoted body unescaped: split at escaped backslashes, every backslash left starts an escape."""
    if "\\" not in body:
        return body
    return "\\".join(_unescape_piece(piece) for piece in body.split("\\\\"))


def _unescape_piece(piece: str) -> str:
    if "\\" not in piece:
        return piece
    for letter, char in _ESCAPES.items():
        piece = piece.replace("\\" + letter, char)
    piece = _OTHER_ESCAPE.sub(r"\1", piece)
    # last, as a code may stand for a backslash that the steps above must not see
    return _OCTAL_ESCAPE.sub(lambda match: chr(int(match.group(1), 8)), piece)


#: Each character a quoted text escapes and its escape, the backslash first (``str.replace`` runs in C:
#: a generator over the characters, or ``str.translate``, took 3 s to write 60 MB of documents; this, 0.1 s).
_QUOTE_ESCAPES = (("\\", "\\\\"), ("'", "\\'"), ("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t"), ("%", "\\%"))
#: What a text written bare cannot hold (``?`` aside): white space, ``,{}'"%\\`` and control characters, the line
#: end apart (for scanning texts joined by line ends), and the white space beyond ASCII that ``str.isspace`` holds,
#: which other readers split on or end a line at (liac-arff's patterns, Python's ``\\s``, had failed on a label
#: holding U+2028, and on a word holding U+00A0).
_REFUSED_BUT_LINE_END = r" ,{}'\"%\\\x00-\x09\x0b-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
#: A text written bare.
_BARE = re.compile(rf"[^{_REFUSED_BUT_LINE_END}\n]++")


def quote(text: str) -> str:
    """Quote a name, label or string for ARFF where needed (empty, ``?``, white space, ``,{}'"%\\`` or a
    control character), escaping as Weka does."""
    if text != "?" and _BARE.fullmatch(text) is not None:
        return text
    for character, escape in _QUOTE_ESCAPES:
        text = text.replace(character, escape)
    return "'" + text + "'"


#: Characters that end a line for some reader (``\r``, ``\x85``, ``\u2028``) or that a terminal obeys; not
#: the tab, which ends no line and which files' own comments hold (they are copied as they were); and lone
#: surrogates, which UTF-8 cannot write (a file name's bytes that are not UTF-8, as Python holds them); and the
#: bidirectional marks, embeddings, overrides and isolates (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069),
#: which make a terminal show a line in another order than it holds ("Trojan Source"), so that a value read from a
#: file cannot disguise the line it is quoted in.
_CONTROL = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]"
)


def one_line(text: str) -> str:
    """``text`` for a comment line, each control, line-ending, bidirectional or surrogate character (:data:`_CONTROL`)
    written as a Python literal (``\\n``, ``\\x1b``, ``\\u202e``, ``\\udcff``), so that no value can end the comment
    and start a row, or reorder the line on a terminal, and every comment is UTF-8."""
    return _CONTROL.sub(lambda match: repr(match.group())[1:-1], text)


#: Texts written bare, each followed by a line end (a text holding a line end is quoted).
_BARE_LINES = re.compile(f"(?:{_BARE.pattern}\n)*+")
#: A text written bare (or ``?``) after a line end, before another (found from one line end to the next).
_BARE_LINE = re.compile(f"\n{_BARE.pattern}(?=\n)")
#: A text that is quoted, in texts joined by line ends: empty, ``?``, or holding a character :data:`_BARE` refuses.
_QUOTED_LINE = re.compile(rf"^(?:[^\n]*[{_REFUSED_BUT_LINE_END}][^\n]*|\??)$", re.MULTILINE)


def quote_all(texts: list[str]) -> list[str]:
    """:func:`quote` of each of ``texts``, all at once: all bare (names, the common case) found by one match; a
    few to quote among many (names of words holding ``%`` or ``{``) found by one scan and quoted one by one;
    otherwise all escaped and quoted together, and the few bare ones (in documents) found and put back."""
    joined = "\n".join(texts) + "\n"
    if joined.count("\n") != len(texts):  # a text holds a line end
        return [quote(text) for text in texts]
    if "?" not in texts and _BARE_LINES.fullmatch(joined) is not None:
        return texts
    # names: a few quoted among many, found by one scan (65,536 names took 65 ms the other way, 10 this)
    quoted_lines: list[int] = []
    line = at = 0
    for match in _QUOTED_LINE.finditer(joined, 0, len(joined) - 1):
        if len(quoted_lines) > len(texts) // 8:
            break
        line += joined.count("\n", at, match.start())
        at = match.start()
        quoted_lines.append(line)
    else:
        quoted = list(texts)
        for line in quoted_lines:
            quoted[line] = quote(texts[line])
        return quoted
    bare = []
    line = at = 0
    lines = "\n" + joined
    for match in _BARE_LINE.finditer(lines):
        line += lines.count("\n", at, match.start())  # the line ends before this one's
        at = match.start()
        bare.append(line)
    for character, escape in _QUOTE_ESCAPES:
        # not the line end, which parts the texts; and where a character is not held, not replace(), which scans
        # longer (text beyond Latin-1: 0.3 ms for 470,000 characters, ``in`` 0.01 ms)
        if character != "\n" and character in joined:
            joined = joined.replace(character, escape)
    quoted = [f"'{text}'" for text in joined[:-1].split("\n")]  # (one string made, where + makes two)
    for line in bare:
        if texts[line] != "?":
            quoted[line] = texts[line]
    return quoted
