"""Parsing and writing the ARFF header (``@relation``, ``@attribute``, ``@data``).

Keywords are case-insensitive; names and labels may be quoted; ``%`` comments
may stand anywhere.  Relational attributes are read with their member
attributes and written back unchanged (their values are kept as text).
"""

from __future__ import annotations

import re
from itertools import groupby, islice
from typing import Sequence, cast

from filterkit import kernels
from filterkit.arff.dates import DEFAULT_FORMAT, DateFormat
from filterkit.arff.tokens import CLOSE, OPEN, QUOTED, SEPARATORS, WORD, iter_tokens, one_line, quote
from filterkit.errors import ArffError
from filterkit.labels import check_meka_header, meka_label_count
from filterkit.limits import VARIABLES, Limits
from filterkit.schema import DATE, NOMINAL, NUMERIC, RELATIONAL, STRING, Attribute, Schema
from filterkit.text import shown

_NUMERIC_TYPES = ("numeric", "real", "integer")
#: The common header line, ``@attribute NAME numeric|real|integer`` with a bare name (which stops at a
#: separator, a control character among them, and at a line end, for the run patterns below) and only
#: blanks between: one match gives what the tokenizer would.
_PLAIN_NUMERIC = re.compile(
    r"[ \t]*+@attribute[ \t]++([^\x00-\x20,{}%'\"]++)[ \t]++(numeric|real|integer)[ \t]*+", re.IGNORECASE | re.ASCII
)
#: A run of such lines (bytes), and one such line with its end (text).
_PLAIN_RUN = re.compile(f"(?:{_PLAIN_NUMERIC.pattern}\n)+".encode("ascii"), re.IGNORECASE)
_PLAIN_LINE = re.compile(f"{_PLAIN_NUMERIC.pattern}\n", _PLAIN_NUMERIC.flags)


class HeaderParser:
    """Reads header lines one at a time (:meth:`feed`) until ``@data``, within ``limits`` (by default
    the environment's); :meth:`schema` gives the result, ``comments`` the text of the ``%`` comment
    lines before ``@relation`` (where filterkit writes its provenance lines)."""

    def __init__(self, limits: Limits | None = None):
        self.limits = Limits.from_environment() if limits is None else limits
        self.relation: str | None = None
        self.stack: list[tuple[str | None, list[Attribute], set[str]]] = [(None, [], set())]
        self.size = 0
        self.attributes = 0
        self.comments: list[str] = []

    def feed(self, line: str) -> str | None:
        """Take one header line; return what follows ``@data`` when it is reached."""
        self.size += (len(line) if line.isascii() else len(line.encode("utf-8"))) + 1
        if self.size > self.limits.header_bytes:
            raise ArffError(
                f"the header is longer than {self.limits.header_bytes:,} bytes: refused "
                f"(set {VARIABLES['header_bytes']} to allow more)"
            )
        remaining = iter_tokens(line)
        first = next(remaining, None)
        if first is None:
            if self.relation is None and line.lstrip(SEPARATORS).startswith("%"):
                self.comments.append(line.lstrip(SEPARATORS)[1:].strip())
            return None
        keyword = first.text.lower() if first.kind == WORD else ""
        if keyword == "@data":
            return self._data(line)
        # a nominal declaration: keyword, name, '{', the labels, '}'
        tokens = [first, *islice(remaining, self.limits.labels + 3)]
        if next(remaining, None) is not None:
            declared = f"attribute {shown(tokens[1].text)}" if keyword == "@attribute" else "a header line"
            raise ArffError(
                f"{declared}: more than {self.limits.labels:,} labels: refused "
                f"(set {VARIABLES['labels']} to allow more)"
            )
        if keyword == "@relation":
            self._relation(tokens)
        elif self.relation is None:
            raise ArffError(f"expected @relation before anything else, found {shown(tokens[0].text)}")
        elif keyword == "@attribute":
            self._attribute(tokens)
        elif keyword == "@end":
            self._end(tokens)
        else:
            raise ArffError(f"expected @attribute or @data, found {shown(tokens[0].text)}")
        return None

    def plain_run_end(self, data: bytes, start: int) -> int:
        """Where the run of plain ``@attribute NAME numeric`` lines (each ending with LF) that starts at
        ``start`` in the UTF-8 ``data`` ends; ``start`` when there is none (or no ``@relation`` yet)."""
        if self.relation is None:
            return start
        run = _PLAIN_RUN.match(data, start)
        return start if run is None else run.end()

    def feed_plain_run(self, text: str, size: int) -> bool:
        """Take ``text``, a run of plain numeric lines of ``size`` bytes, at once, as :meth:`feed` would;
        False, and nothing taken, when a line of it would be an error (:meth:`feed` then says which)."""
        declared = _PLAIN_LINE.findall(text)
        names = self.stack[-1][2]
        declared_names = [name for name, _ in declared]
        new_names = set(declared_names)
        if (
            self.size + size > self.limits.header_bytes
            or self.attributes + len(declared) > self.limits.attributes
            or len(new_names) < len(declared)
            or not names.isdisjoint(new_names)
        ):
            return False
        self.size += size
        self.attributes += len(declared)
        names |= new_names
        self.stack[-1][1].extend(Attribute.numerics(declared_names, [kind.lower() for _, kind in declared]))
        return True

    def _data(self, line: str) -> str:
        if self.relation is None:
            raise ArffError("expected @relation before anything else, found '@data'")
        if len(self.stack) > 1:
            raise ArffError(f"@data inside relational attribute {shown(cast(str, self.stack[-1][0]))} (missing @end)")
        if not self.stack[0][1]:
            raise ArffError("the header declares no attribute (as Weka, a relation needs at least one)")
        check_meka_header(self.schema())
        return line[line.lower().index("@data") + len("@data") :]

    def schema(self) -> Schema:
        """The schema read so far (call after ``@data`` was reached)."""
        return Schema(cast(str, self.relation), tuple(self.stack[0][1]))

    def _relation(self, tokens) -> None:
        if self.relation is not None:
            raise ArffError("a second @relation line")
        if len(tokens) != 2 or tokens[1].kind not in (WORD, QUOTED):
            raise ArffError("@relation takes one name (quote a name with spaces)")
        meka_label_count(tokens[1].text)  # MEKA's -C, if any, read here: its errors name this line
        self.relation = tokens[1].text

    def _attribute(self, tokens) -> None:
        if len(tokens) < 3 or tokens[1].kind not in (WORD, QUOTED):
            raise ArffError("@attribute needs a name and a type")
        name = tokens[1].text
        self._declare(name)
        siblings = self.stack[-1][1]
        rest = tokens[2:]
        if rest[0].kind == OPEN:
            siblings.append(Attribute(name, NOMINAL, labels=_labels(name, rest)))
            return
        if rest[0].kind != WORD:
            raise ArffError(f"attribute {shown(name)}: expected a type, found {shown(rest[0].text)}")
        kind = rest[0].text.lower()
        extra = rest[1:]
        if kind in _NUMERIC_TYPES and not extra:
            siblings.append(Attribute(name, NUMERIC, declared_type=kind))
        elif kind == "string" and not extra:
            siblings.append(Attribute(name, STRING))
        elif kind == "date" and len(extra) <= 1 and all(t.kind in (WORD, QUOTED) for t in extra):
            pattern = extra[0].text if extra else DEFAULT_FORMAT
            DateFormat(pattern)
            siblings.append(Attribute(name, DATE, date_format=pattern))
        elif kind == "relational" and not extra:
            if len(self.stack) > self.limits.nesting:
                raise ArffError(
                    f"attribute {shown(name)}: relational attributes nested more than {self.limits.nesting} "
                    f"deep: refused (set {VARIABLES['nesting']} to allow more)"
                )
            self.stack.append((name, [], set()))
        else:
            raise ArffError(
                f"attribute {shown(name)}: unknown type {shown(' '.join(t.text for t in rest))} "
                "(expected numeric, real, integer, string, date, relational or {labels})"
            )

    def _declare(self, name: str) -> None:
        """Count one more attribute called ``name`` (refused beyond the limit, or declared twice)."""
        if self.attributes >= self.limits.attributes:
            raise ArffError(
                f"more than {self.limits.attributes:,} attributes: refused "
                f"(set {VARIABLES['attributes']} to allow more)"
            )
        self.attributes += 1
        names = self.stack[-1][2]
        if name in names:
            raise ArffError(f"attribute {shown(name)} is declared twice")
        names.add(name)

    def _end(self, tokens) -> None:
        if len(self.stack) == 1:
            raise ArffError("@end without a relational attribute")
        popped, members, _ = self.stack.pop()
        name = cast(str, popped)  # only the bottom of the stack, the relation's, has no name
        if len(tokens) != 2 or tokens[1].text != name:
            raise ArffError(f"expected @end {shown(name)}")
        self.stack[-1][1].append(Attribute(name, RELATIONAL, members=tuple(members)))


def _labels(name: str, tokens) -> tuple[str, ...]:
    """The labels of ``{a, 'b c', d}``: as in Weka, commas and white space both separate labels."""
    labels: list[str] = []
    for position, token in enumerate(tokens[1:], 1):
        if token.kind == CLOSE:
            if position != len(tokens) - 1:
                raise ArffError(f"attribute {shown(name)}: text after the closing '}}'")
            if len(set(labels)) != len(labels):
                raise ArffError(f"attribute {shown(name)}: a label is declared twice")
            return tuple(labels)
        if token.kind not in (WORD, QUOTED):
            raise ArffError(f"attribute {shown(name)}: expected a label, found {shown(token.text)}")
        labels.append(token.text)
    raise ArffError(f"attribute {shown(name)}: label list has no closing '}}'")


def format_header(schema: Schema, comments: Sequence[str] = ()) -> bytes:
    """The header of ``schema`` as UTF-8, ending with the ``@data`` line."""
    head = "".join(f"% {one_line(comment)}\n" for comment in comments) + f"@relation {quote(schema.relation)}\n\n"
    return b"".join([head.encode("utf-8"), *_declarations(schema.attributes), b"\n@data\n"])


def _declarations(attributes: Sequence[Attribute]) -> list[bytes]:
    """The declaration lines of ``attributes``, each ending with a line end: a run of numeric attributes of one
    declared type by :func:`numeric_declarations`, the others a line (or a relational block) at a time."""
    types = [(attribute.declared_type or NUMERIC) if attribute.kind == NUMERIC else None for attribute in attributes]
    parts: list[bytes] = []
    start = 0
    for declared, run in groupby(types):
        stop = start + len(list(run))
        if declared is None:
            lines = (line for attribute in attributes[start:stop] for line in _attribute_lines(attribute))
            parts.append("".join(f"{line}\n" for line in lines).encode("utf-8"))
        else:
            parts.append(numeric_declarations([attribute.name for attribute in attributes[start:stop]], declared))
        start = stop
    return parts


def numeric_declarations(names: list[str], declared: str) -> bytes:
    """``@attribute NAME DECLARED`` for each name, quoted as :func:`quote` quotes, each line ending with a line end:
    by the compiled printer in one pass (by ``quote_all`` and joins, 150,000 bigrams' names took 0.17 s)."""
    return kernels.speedups.numeric_declarations(names, declared)


def _attribute_lines(attribute: Attribute) -> list[str]:
    name = quote(attribute.name)
    if attribute.kind == NOMINAL:
        return [f"@attribute {name} {{{','.join(quote(label) for label in attribute.labels)}}}"]
    if attribute.kind == DATE:
        return [f"@attribute {name} date {quote(cast(str, attribute.date_format))}"]
    if attribute.kind == RELATIONAL:
        lines = [f"@attribute {name} relational"]
        for member in attribute.members:
            lines.extend("  " + line for line in _attribute_lines(member))
        lines.append(f"@end {name}")
        return lines
    return [f"@attribute {name} {attribute.declared_type or attribute.kind}"]
