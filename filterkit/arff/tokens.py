"""A hand-written linear tokenizer for ARFF lines.

One left-to-right pass over the characters, so no input can make it backtrack
(liac-arff 2.5.0's nominal regex takes seconds on a 16-repeat crafted header); the
only regular expression is a single character class, which cannot backtrack.  Used for every header line and for data rows the
vectorized reader cannot take (quoted values, weights, mixed rows).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from filterkit.errors import ArffError

WORD = "word"
QUOTED = "quoted"
OPEN = "{"
CLOSE = "}"

_SEPARATORS = " \t,"
_STOPS = " \t,{}%'\""
#: A line without these is only words and separators (split by str.split, in C); the
#: search is a single character class, linear in the line like the scan below.
_MARKED = re.compile("['\"{}%]")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "a": "\a", "v": "\v"}
_OCTAL = "01234567"


class Token(NamedTuple):
    kind: str
    text: str


def tokenize(line: str) -> list[Token]:
    """Split one line into words, quoted strings and braces; ``%`` starts a comment.

    Quotes are single or double; inside them a backslash escapes the next
    character as in Java's StreamTokenizer that Weka uses: ``\\n``, ``\\t``,
    ``\\r``, ``\\b``, ``\\f``, ``\\a``, ``\\v`` as usual, one to three octal digits
    for a character code (``\\0``, ``\\011``, up to ``\\377``), and any other
    character stands for itself.  As in Weka, a comma
    separates like white space, in the header and in data rows.
    """
    if _MARKED.search(line) is None:
        return [Token(WORD, word) for word in line.replace(",", " ").replace("\t", " ").split(" ") if word]
    tokens: list[Token] = []
    position = 0
    length = len(line)
    while position < length:
        char = line[position]
        if char in _SEPARATORS:
            position += 1
        elif char == "%":
            break
        elif char == "{" or char == "}":
            tokens.append(Token(char, char))
            position += 1
        elif char == "'" or char == '"':
            text, position = _read_quoted(line, position)
            tokens.append(Token(QUOTED, text))
        else:
            start = position
            while position < length and line[position] not in _STOPS:
                position += 1
            tokens.append(Token(WORD, line[start:position]))
    return tokens


def _read_quoted(line: str, start: int) -> tuple[str, int]:
    quote = line[start]
    pieces = []
    position = start + 1
    length = len(line)
    run_start = position
    while position < length:
        char = line[position]
        if char == quote:
            pieces.append(line[run_start:position])
            return "".join(pieces), position + 1
        if char == "\\":
            pieces.append(line[run_start:position])
            if position + 1 >= length:
                break
            escaped = line[position + 1]
            position += 2
            if escaped in _OCTAL:
                # Java's StreamTokenizer: up to three octal digits, the third
                # only when the first is 0-3 (so the code stays below 256).
                code = int(escaped)
                if position < length and line[position] in _OCTAL:
                    code = code * 8 + int(line[position])
                    position += 1
                    if escaped <= "3" and position < length and line[position] in _OCTAL:
                        code = code * 8 + int(line[position])
                        position += 1
                pieces.append(chr(code))
            else:
                pieces.append(_ESCAPES.get(escaped, escaped))
            run_start = position
        else:
            position += 1
    raise ArffError(f"unterminated {quote} quote starting at column {start + 1}")


_NEEDS_ESCAPE = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t", "%": "\\%"}
_NEEDS_QUOTES = set(" ,{}'\"%\\\t\n\r")


def quote(text: str) -> str:
    """Quote a name, label or string for ARFF where needed, escaping as Weka does.

    Quoted when empty, ``?``, or containing white space, ``,{}'"%\\`` or a
    control character; otherwise written bare.
    """
    if text and text != "?" and not any(c in _NEEDS_QUOTES or c < " " for c in text):
        return text
    escaped = "".join(_NEEDS_ESCAPE.get(c, c) for c in text)
    return "'" + escaped + "'"
