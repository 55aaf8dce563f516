"""``filterkit export MODEL --onnx OUT.onnx`` (issue 78): a trained model as an ONNX graph from the raw document
string to ``predict``'s decision values and answer (docs/serving.md, "ONNX").

The chain is the C scorer's (:mod:`filterkit.export.c_source`): the same steps (:mod:`filterkit.export.steps`), the
same classifier columns and rules; only the ``words`` stage is read again for its tokenizer's settings
(:func:`filterkit.export.words.refusal` refuses what the C cannot compute, and so refuses it here too).

The graph works one document at a time (a ``Loop`` over the batch).  No operator that depends on a locale is used:

- lowercasing is ``str.lower`` as a table of the code points it changes (a ``LabelEncoder``), applied to the
  document's code points (a ``Tokenizer`` matching ``(?s:.)``) and joined again by halving (``StringConcat``); a
  capital sigma is final or not by its context within its token, found from each code point's flags (cased,
  case-ignorable) by counting.  Lowercasing the document before cutting it is cutting it then lowercasing its tokens
  because each boundary of a token (a delimiter, or whitespace) becomes one boundary that no lowercase holds and
  lowercasing makes no byte up to U+0020 (both checked at export), and a sigma's context stops at a boundary;
- tokens are the matches of a regular expression of explicit code points (RE2, UTF-8: no locale, no class);
- words are looked up in a ``LabelEncoder`` of the vocabulary, hashed by the contributed ``MurmurHash3`` (seed 0,
  signed, as scikit-learn's), counted by ``Unique`` into the C scorer's sparse row: the columns a document holds,
  ascending, and their values;
- the numeric steps and the linear classifier are float64 arithmetic on that row, each step's per-column numbers
  gathered from its tables, the sums taken in column order (``CumSum``) as the C scorer takes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from filterkit.errors import FilterkitError
from filterkit.export.c_source import LOG_TABLE_SIZE, classifier_columns, classifier_rules, exported_step_of
from filterkit.export.steps import Keep, Normalize, Presence, Scale, Shape, Step, Unchanged, Words
from filterkit.export.words import (
    ALPHABETIC,
    CASE_IGNORABLE,
    CASED,
    CHARACTERS,
    SPACE,
    checked_settings,
    refusal,
    unicode_properties,
)

#: The opsets the graph is written for: ONNX 20 (StringConcat), ai.onnx.ml 3 (LabelEncoder), com.microsoft 1
#: (Tokenizer, MurmurHash3: onnxruntime's contributed operators).
OPSETS = (("", 20), ("ai.onnx.ml", 3), ("com.microsoft", 1))
#: The most columns a chain's row may have: a step's tables over them are dense (8 bytes a column), and so is
#: words_counts_model's row; room for ``--hash 24`` and the attributes the stage keeps.
MOST_COLUMNS = 1 << 25
#: The capital sigma and its two lowercases.
SIGMA, SMALL_SIGMA, FINAL_SIGMA = "\u03a3", "\u03c3", "\u03c2"
#: A code point's flags in the graph's table: cased and case-ignorable (as words.py finds them), lowercased by the
#: table, and a boundary of a token (a delimiter, or whitespace to str.split for character n-grams).
FLAG_CASED, FLAG_IGNORABLE, FLAG_CHANGED, FLAG_BOUNDARY = 1, 2, 4, 8
#: Java's String.trim cuts these from an n-gram's ends.
TRIMMED = "\x00-\x20"
#: A document's row in the graph, as the C scorer's sparse vector: the columns it stores (int64, ascending), their
#: values (float64), and the width of the row.
Row = tuple[str, str, int]


def onnx_model(model) -> bytes:
    """The serialized ONNX graph of ``model`` (a chain starting with ``words``, a linear classifier); FilterkitError
    naming the stage or setting that a graph cannot compute exactly."""
    stages = list(model.chain.stages)
    steps = [exported_step_of(stage) for stage in stages]
    if not steps or not isinstance(steps[0], Words):
        raise FilterkitError("the model does not start with stage 'words': an ONNX graph reads documents")
    words = steps[0]
    others = [name for name in words.kept if name not in model.targets]
    if others:
        raise FilterkitError(
            f"the model reads attribute '{others[0]}' besides its text: an ONNX graph reads one document"
        )
    for stage, step in zip(stages[1:], steps[1:]):
        if isinstance(step, Words):
            raise FilterkitError(
                f"stage '{stage.name}' makes words after another stage: an ONNX graph reads them first"
            )
    if model.linear is None:
        raise FilterkitError(f"classifier '{model.section['name']}' is not linear: it cannot be exported")
    body = _Graph("document")
    row = _words_row(body, stages[0], words)
    for step in steps[1:]:
        row = _numeric_step(body, step, row)
    return _model_outputs(model, body, _linear(body, model, row))


@dataclass
class _Graph:
    """Nodes and constants of one graph under construction, each value given a fresh name."""

    prefix: str
    nodes: list = field(default_factory=list)
    constants: list = field(default_factory=list)
    count: int = 0

    def name(self, hint: str) -> str:
        self.count += 1
        return f"{self.prefix}_{hint}_{self.count}"

    def const(self, value: Any, hint: str = "const") -> str:
        """A constant tensor of ``value`` (a numpy array; strings as an object array)."""
        name = self.name(hint)
        array = np.asarray(value)
        if array.dtype.kind in "USO":
            array = np.asarray(array, dtype=object)
        self.constants.append(numpy_helper.from_array(array, name))
        return name

    def op(self, op_type: str, *inputs: str, domain: str = "", **attributes: Any) -> str:
        """The output of a new node."""
        return self.ops(op_type, inputs, 1, domain=domain, **attributes)[0]

    def ops(self, op_type: str, inputs, n_outputs: int, domain: str = "", **attributes: Any) -> list[str]:
        """The outputs of a new node."""
        outputs = [self.name(op_type.lower()) for _ in range(n_outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outputs, domain=domain, **attributes))
        return outputs

    def ints(self, *values: int) -> str:
        return self.const(np.array(values, dtype=np.int64), "ints")

    def double(self, value: float) -> str:
        return self.const(np.array(value, dtype=np.float64), "double")

    def size(self, tensor: str) -> str:
        """The length of a 1-D tensor, as a 1-element int64 tensor."""
        return self.op("Shape", tensor)

    def slice(self, tensor: str, start: str, end: str, step: int = 1) -> str:
        return self.op("Slice", tensor, start, end, self.ints(0), self.ints(step))

    def where(self, condition: str, yes: str, no: str) -> str:
        return self.op("Where", condition, yes, no)

    def either(self, condition: str, yes: str, no: str) -> str:
        """``where`` of booleans, which ONNX Runtime's Where does not take: (c and yes) or (not c and no)."""
        return self.op("Or", self.op("And", condition, yes), self.op("And", self.op("Not", condition), no))

    def matches(self, texts: str, expression: str) -> str:
        """The matches of ``expression`` in a 1-D string tensor of one text, as a 1-D tensor."""
        found = self.op(
            "Tokenizer", texts, domain="com.microsoft", mark=0, mincharnum=1, pad_value="", tokenexp=expression
        )
        return self.op("Reshape", found, self.ints(-1))

    def first_match(self, texts: str, expression: str, matching: str) -> str:
        """Per text of a 1-D tensor its first match of ``expression`` ("" for none); ``matching`` is a text that
        matches, added for the call so that the Tokenizer's answer has two dimensions however many texts match."""
        added = self.op("Concat", texts, self.const(np.array([matching], dtype=object)), axis=0)
        found = self.op(
            "Tokenizer", added, domain="com.microsoft", mark=0, mincharnum=1, pad_value="", tokenexp=expression
        )
        first = self.op(
            "Slice", found, self.ints(0, 0), self.op("Concat", self.size(texts), self.ints(1), axis=0), self.ints(0, 1)
        )
        return self.op("Reshape", first, self.ints(-1))

    def joined(self, pieces: str) -> str:
        """The strings of a 1-D tensor joined into one (a 1-element tensor): pairs joined by halving, so that a
        long document costs its length times the logarithm of its length."""
        body = _Graph(self.name("halving"))
        carried = body.name("pieces")
        paired = body.op("Concat", carried, body.const(np.array([""], dtype=object)), axis=0)
        end = body.ints(1 << 62)
        evens = body.slice(carried, body.ints(0), end, 2)
        odds = body.slice(paired, body.ints(1), end, 2)
        halved = body.op("StringConcat", evens, odds)
        more = body.op("Greater", body.op("Squeeze", body.size(halved)), body.const(np.array(1, dtype=np.int64)))
        loop_body = helper.make_graph(
            body.nodes,
            body.name("body"),
            [
                helper.make_tensor_value_info(body.name("iteration"), TensorProto.INT64, []),
                helper.make_tensor_value_info(body.name("condition"), TensorProto.BOOL, []),
                helper.make_tensor_value_info(carried, TensorProto.STRING, [None]),
            ],
            [
                helper.make_tensor_value_info(more, TensorProto.BOOL, []),
                helper.make_tensor_value_info(halved, TensorProto.STRING, [None]),
            ],
            initializer=body.constants,
        )
        width = self.op("Squeeze", self.size(pieces))
        start = self.op("Greater", width, self.const(np.array(1, dtype=np.int64)))
        result = self.op("Loop", "", start, pieces, body=loop_body)
        with_blank = self.op("Concat", result, self.const(np.array([""], dtype=object)), axis=0)
        return self.slice(with_blank, self.ints(0), self.ints(1))


def _outside(points) -> str:
    """An RE2 expression of a run of one or more code points none of which is one of ``points``."""
    ranges: list[list[int]] = []
    for point in sorted(set(points)):
        if ranges and point == ranges[-1][1] + 1:
            ranges[-1][1] = point
        else:
            ranges.append([point, point])
    body = "".join(f"\\x{{{low:X}}}" if low == high else f"\\x{{{low:X}}}-\\x{{{high:X}}}" for low, high in ranges)
    return f"[^{body}]+"


def words_counts_model(stage) -> bytes:
    """The fitted ``words`` stage's tokens alone as a serialized ONNX graph: per document of its input
    ``documents`` the count of each of the stage's columns (``counts``, float64 [N, columns]: a word's number in the
    vocabulary, or its hashed column), as the stage's ``counted`` counts a transform; FilterkitError for a stage
    the graph cannot count exactly."""
    refused = refusal(stage)
    if refused is not None:
        raise FilterkitError(refused)
    settings = checked_settings(stage)
    width = _width(stage, settings, 0)
    body = _Graph("document")
    columns, found = _counted(body, _token_columns(body, stage, settings))
    zeros = body.op("ConstantOfShape", body.ints(width), value=_double_tensor(0.0))
    counts = body.op("ScatterElements", zeros, columns, found, axis=0)
    g = _Graph("batch")
    g.nodes.append(helper.make_node("Identity", [_document_loop(g, body, counts, width)], ["counts"]))
    return _serialized(g, {"counts": (TensorProto.DOUBLE, ["N", width])})


def _width(stage, settings, first_column: int) -> int:
    """The columns of the words step's dense row; FilterkitError past :data:`MOST_COLUMNS`."""
    width = settings.hash_columns or len(settings.words)
    if first_column + width > MOST_COLUMNS:
        raise FilterkitError(
            f"stage '{stage.name}' makes {first_column + width:,} columns, more than the {MOST_COLUMNS:,} of an "
            "ONNX graph's tables"
        )
    return width


def _words_row(g: _Graph, stage, words: Words) -> Row:
    """The words step on one document: the columns of the words it holds (after the attributes the stage keeps)
    and their values."""
    settings = checked_settings(stage)
    width = _width(stage, settings, words.first_column)
    columns, counts = _counted(g, _token_columns(g, stage, settings))
    values = counts if words.counts else g.op("Expand", g.double(1.0), g.size(counts))
    if words.log_tf:
        whole = g.op("Cast", values, to=TensorProto.INT64)
        table = g.const(np.log(np.arange(LOG_TABLE_SIZE, dtype=np.float64) + 1.0), "log_table")
        tabled = g.op("Gather", table, g.op("Min", whole, g.const(np.array(LOG_TABLE_SIZE - 1, dtype=np.int64))))
        inside = g.op("Less", whole, g.const(np.array(LOG_TABLE_SIZE, dtype=np.int64)))
        values = g.where(inside, tabled, g.op("Log", g.op("Add", values, g.double(1.0))))
    if words.idf is not None:
        values = g.op("Mul", values, g.op("Gather", g.const(np.asarray(words.idf, dtype=np.float64), "idf"), columns))
    shifted = g.op("Add", columns, g.const(np.array(words.first_column, dtype=np.int64)))
    return shifted, values, words.first_column + width


def _counted(g: _Graph, columns: str) -> tuple[str, str]:
    """The distinct columns met, ascending (-1, a word not in the vocabulary, left out), and how often each
    (float64)."""
    found = g.op("Compress", columns, g.op("GreaterOrEqual", columns, g.const(np.array(0, dtype=np.int64))), axis=0)
    distinct, _, _, counts = g.ops("Unique", [found], 4, sorted=1)
    return distinct, g.op("Cast", counts, to=TensorProto.DOUBLE)


def _token_columns(g: _Graph, stage, settings) -> str:
    """The column of each token of the document the Loop is at (-1: a word not in the vocabulary)."""
    document = g.op("Reshape", g.op("Gather", "documents", "iteration"), g.ints(1))
    boundaries = _boundaries(settings)
    stop_words = settings.stop_words if settings.tokenizer != CHARACTERS else []
    lowered, separator = document, -1
    if settings.lowercase or stop_words:
        lowered, separator = _lowercased(g, stage, document, boundaries, settings.tokenizer == ALPHABETIC)
    if settings.tokenizer == CHARACTERS:
        return _columns(g, _character_ngrams(g, lowered, settings), settings)
    expression = _outside(boundaries) if boundaries else "(?s:.)+"
    if settings.tokenizer == ALPHABETIC:
        expression = "[A-Za-z]+"
    lowered_expression = _outside([separator]) if separator >= 0 else expression
    keys = _word_ngrams(g, g.matches(lowered, lowered_expression), settings)
    tokens = keys if lowered == document else _word_ngrams(g, g.matches(document, expression), settings)
    if stop_words:
        stopped = g.op(
            "LabelEncoder",
            keys,
            domain="ai.onnx.ml",
            keys_strings=_encodable(stop_words),
            values_int64s=[1] * len(_encodable(stop_words)),
            default_int64=0,
        )
        kept = g.op("Not", g.op("Cast", stopped, to=TensorProto.BOOL))
        keys, tokens = g.op("Compress", keys, kept, axis=0), g.op("Compress", tokens, kept, axis=0)
    return _columns(g, keys if settings.lowercase else tokens, settings)


def _encodable(words) -> list[str]:
    """The words that UTF-8 can hold: a lone surrogate, which no document given as UTF-8 holds, matches no token."""
    return [word for word in words if not any(0xD800 <= ord(character) < 0xE000 for character in word)]


def _boundaries(settings) -> list[int]:
    """The code points that end a token: the delimiters, str.split's whitespace for character n-grams, none for the
    alphabetic tokenizer (which takes ASCII letters)."""
    if settings.tokenizer == CHARACTERS:
        _, flags, _ = _unicode_tables()
        return np.flatnonzero(flags & SPACE).tolist()
    if settings.tokenizer == ALPHABETIC:
        return []
    return sorted({ord(character) for character in settings.delimiters})


@cache
def _unicode_tables():
    """str.lower's deltas, the flags and the special mappings of every code point (words.py's tables), made once
    per process."""
    return unicode_properties()


def _lowercase_table(stage, boundaries: list[int], ascii_only: bool) -> tuple[list[str], list[str], list[int], int]:
    """The code points whose flags matter to lowercasing (keys), what they become in the lowercased document (their
    lowercase; a boundary, the separator) and their flags; and the separator: the first boundary no lowercase holds.
    FilterkitError when every boundary is in some lowercase, or lowercasing makes a byte Java's trim cuts."""
    if ascii_only:
        letters = [chr(point) for point in range(ord("A"), ord("Z") + 1)]
        return letters, [letter.lower() for letter in letters], [FLAG_CHANGED] * len(letters), -1
    deltas, flags, _ = _unicode_tables()
    boundary = np.zeros(0x110000, dtype=bool)
    boundary[boundaries] = True
    changed = ((deltas != 0) | ((flags & 8) != 0)) & ~boundary
    changed[ord(SIGMA)] = False
    lowercases = {point: chr(point).lower() for point in np.flatnonzero(changed).tolist()}
    made = {ord(character) for lowercase in lowercases.values() for character in lowercase}
    if any(point <= 0x20 for point in made):
        raise FilterkitError(f"stage '{stage.name}': lowercasing makes a byte up to U+0020, which n-grams trim")
    separator = next((point for point in boundaries if point not in made), -1)
    if boundaries and separator < 0:
        raise FilterkitError(
            f"stage '{stage.name}': each of its delimiters is in the lowercase of a character a token holds, so an "
            "ONNX graph cannot mark where its tokens end"
        )
    table = np.where(flags & CASED, FLAG_CASED, 0) | np.where(flags & CASE_IGNORABLE, FLAG_IGNORABLE, 0)
    table |= np.where(changed | boundary, FLAG_CHANGED, 0) | np.where(boundary, FLAG_BOUNDARY, 0)
    table[0xD800:0xE000] = 0
    points = np.flatnonzero(table).tolist()
    keys = [chr(point) for point in points]
    lowered = [chr(separator) if boundary[point] else lowercases.get(point, chr(point)) for point in points]
    return keys, lowered, [int(table[point]) for point in points], separator


def _lowercased(g: _Graph, stage, document: str, boundaries: list[int], ascii_only: bool) -> tuple[str, int]:
    """The document lowercased as ``str.lower`` lowercases each of its tokens, each boundary (the delimiters, or
    whitespace for character n-grams) made one that no lowercase holds (a 1-element tensor); and that boundary
    (-1: none)."""
    keys, lowered, flags, separator = _lowercase_table(stage, boundaries, ascii_only)
    points = g.matches(document, "(?s:.)")
    flag = g.op("LabelEncoder", points, domain="ai.onnx.ml", keys_strings=keys, values_int64s=flags, default_int64=0)
    mapped = g.op(
        "LabelEncoder", points, domain="ai.onnx.ml", keys_strings=keys, values_strings=lowered, default_string=""
    )
    changed = _has_flag(g, flag, FLAG_CHANGED)
    result = g.where(changed, mapped, points)
    if not ascii_only:
        result = _sigmas(g, points, flag, result)
    return g.joined(result), separator


def _has_flag(g: _Graph, flags: str, bit: int) -> str:
    return g.op("Cast", g.op("BitwiseAnd", flags, g.const(np.array(bit, dtype=np.int64))), to=TensorProto.BOOL)


def _sigmas(g: _Graph, points: str, flag: str, lowered: str) -> str:
    """``lowered`` with each capital sigma of ``points`` made final (ς) or not (σ) as str.lower makes it within its
    token: final when the first code point before it that is not case-ignorable is cased, and the first after it
    is not (a token's boundary, or its ends, taken for neither)."""
    boundary = _has_flag(g, flag, FLAG_BOUNDARY)
    stops = g.op("Or", boundary, g.op("Not", _has_flag(g, flag, FLAG_IGNORABLE)))
    cased = g.op("And", _has_flag(g, flag, FLAG_CASED), g.op("Not", boundary))
    edge = g.const(np.array([True]))
    no = g.const(np.array([False]))
    stops = g.op("Concat", edge, stops, edge, axis=0)
    cased = g.op("Concat", no, cased, no, axis=0)
    stop_numbers = g.op("Cast", stops, to=TensorProto.INT64)
    before = g.op("CumSum", stop_numbers, g.const(np.array(0, dtype=np.int64)), exclusive=1)
    positions = g.op("Reshape", g.op("NonZero", stops), g.ints(-1))
    inner = g.slice(before, g.ints(1), g.ints(-1))
    inner_stops = g.slice(stop_numbers, g.ints(1), g.ints(-1))
    previous = g.op("Gather", positions, g.op("Sub", inner, g.const(np.array(1, dtype=np.int64))))
    following = g.op("Gather", positions, g.op("Add", inner, inner_stops))
    final = g.op("And", g.op("Gather", cased, previous), g.op("Not", g.op("Gather", cased, following)))
    sigma = g.op("And", g.op("Equal", points, g.const(np.array([SIGMA], dtype=object))), g.op("Not", boundary))
    small = g.where(
        final, g.const(np.array([FINAL_SIGMA], dtype=object)), g.const(np.array([SMALL_SIGMA], dtype=object))
    )
    return g.where(sigma, small, lowered)


def _word_ngrams(g: _Graph, tokens: str, settings) -> str:
    """The n-grams of MIN to MAX consecutive tokens joined by a space and trimmed as Java trims (the tokens
    themselves without n-grams)."""
    if settings.ngram_min == 0:
        return tokens
    count = g.size(tokens)
    grams = []
    for n in range(settings.ngram_min, settings.ngram_max + 1):
        ends = [g.op("Max", g.op("Add", count, g.ints(k - n + 1)), g.ints(k)) for k in range(n)]
        grams.append(_side_by_side(g, [g.slice(tokens, g.ints(k), ends[k]) for k in range(n)], " "))
    every = g.op("Concat", *grams, axis=0) if len(grams) > 1 else grams[0]
    return g.first_match(every, f"[^{TRIMMED}](?s:.*[^{TRIMMED}])?", "!")


def _side_by_side(g: _Graph, parts: list[str], separator: str) -> str:
    """The strings of tensors of one length joined element by element, ``separator`` between them."""
    joined = parts[0]
    for part in parts[1:]:
        if separator:
            joined = g.op("StringConcat", joined, g.const(np.array([separator], dtype=object)))
        joined = g.op("StringConcat", joined, part)
    return joined


def _character_ngrams(g: _Graph, document: str, settings) -> str:
    """scikit-learn's char_wb n-grams of the document: each word (what str.split cuts) padded with a space each
    side gives its runs of n code points, n from MIN to MAX; a padded word of fewer than MIN code points gives
    itself."""
    space = g.const(np.array([" "], dtype=object))
    words = g.matches(document, _outside(_boundaries(settings)))
    padded = g.op("StringConcat", g.op("StringConcat", space, words), space)
    points = g.matches(g.joined(padded), "(?s:.)")
    is_space = g.op("Equal", points, space)
    following = g.op("Concat", g.slice(is_space, g.ints(1), g.ints(1 << 62)), g.const(np.array([True])), axis=0)
    leading = g.op("And", is_space, g.op("Not", following))
    word_number = g.op("CumSum", g.op("Cast", leading, to=TensorProto.INT64), g.const(np.array(0, dtype=np.int64)))
    count = g.size(points)
    grams = []
    for n in range(settings.ngram_min, settings.ngram_max + 1):
        end = g.op("Max", g.op("Add", count, g.ints(1 - n)), g.ints(0))
        joined = _side_by_side(g, [g.slice(points, g.ints(k), g.op("Add", end, g.ints(k))) for k in range(n)], "")
        first = g.slice(word_number, g.ints(0), end)
        last = g.slice(word_number, g.ints(n - 1), g.op("Add", end, g.ints(n - 1)))
        grams.append(g.op("Compress", joined, g.op("Equal", first, last), axis=0))
    if settings.ngram_min > 3:
        short = g.op("RegexFullMatch", padded, pattern=f"(?s:.{{0,{settings.ngram_min - 1}}})")
        grams.append(g.op("Compress", padded, short, axis=0))
    return g.op("Concat", *grams, axis=0) if len(grams) > 1 else grams[0]


def _columns(g: _Graph, tokens: str, settings) -> str:
    """Each token's column: its number in the vocabulary (-1 when absent), or its hashed column."""
    if settings.hash_columns:
        hashed = g.op("MurmurHash3", tokens, domain="com.microsoft", seed=0, positive=0)
        magnitude = g.op("Abs", g.op("Cast", hashed, to=TensorProto.INT64))
        return g.op("BitwiseAnd", magnitude, g.const(np.array(settings.hash_columns - 1, dtype=np.int64)))
    numbers = [number for number, word in enumerate(settings.words) if _encodable([word])]
    return g.op(
        "LabelEncoder",
        tokens,
        domain="ai.onnx.ml",
        keys_strings=[settings.words[number] for number in numbers],
        values_int64s=numbers,
        default_int64=-1,
    )


def _double_tensor(value: float):
    return helper.make_tensor("value", TensorProto.DOUBLE, [1], [value])


def _numeric_step(g: _Graph, step: Step, row: Row) -> Row:
    """One step of the chain on a document's row."""
    columns, values, width = row
    if isinstance(step, Shape):
        return _shaped(g, step, row)
    if isinstance(step, Scale):
        return columns, _scaled(g, step, row), width
    if isinstance(step, Presence):
        acted = g.op("And", _acted(g, step.acted, row), g.op("Not", g.op("IsNaN", values)))
        present = g.op("Cast", g.op("Not", g.op("Equal", values, g.double(0.0))), to=TensorProto.DOUBLE)
        return columns, g.where(acted, present, values), width
    if isinstance(step, Keep):
        return _renumbered(g, row, np.asarray(step.columns, dtype=np.int64))
    if isinstance(step, Normalize):
        if step.order not in (1, 2):
            raise FilterkitError(f"a norm of order {step.order}: an ONNX graph has l1 and l2")
        return columns, _normalized(g, step, row), width
    if isinstance(step, Unchanged):
        return row
    raise FilterkitError(f"an exported step of an unknown kind ({type(step).__name__})")


def _per_column(g: _Graph, row: Row, positions, table, fill, hint: str) -> str:
    """Each stored column's entry of a table over the row's columns: ``table`` at ``positions``, ``fill``
    elsewhere."""
    columns, _, width = row
    values = np.asarray(table)
    dense = np.full(width, fill, dtype=values.dtype)
    dense[np.asarray(positions, dtype=np.int64)] = values
    return g.op("Gather", g.const(dense, hint), columns)


def _acted(g: _Graph, acted, row: Row) -> str:
    """Whether each stored column is one of ``acted``."""
    return _per_column(g, row, acted, np.ones(len(acted), dtype=bool), False, "acted")


def _renumbered(g: _Graph, row: Row, kept: np.ndarray) -> Row:
    """Only the columns ``kept`` (ascending), renumbered 0, 1, …"""
    _, values, _ = row
    numbers = _per_column(g, row, kept, np.arange(len(kept), dtype=np.int64), -1, "renumbered")
    present = g.op("GreaterOrEqual", numbers, g.const(np.array(0, dtype=np.int64)))
    return g.op("Compress", numbers, present, axis=0), g.op("Compress", values, present, axis=0), len(kept)


def _scaled(g: _Graph, step: Scale, row: Row) -> str:
    """Each value of an acted column times its factor (through the powers of two of a range beyond the safe
    doubles)."""
    _, values, _ = row
    factors = _per_column(g, row, step.acted, np.asarray(step.factor, dtype=np.float64), 1.0, "factor")
    if step.exponents is None:
        return g.op("Mul", values, factors)
    inner, outer = (np.asarray(exponent, dtype=np.int64) for exponent in step.exponents)
    scaled = g.op("Mul", _times_power_of_two(g, row, step.acted, inner, values), factors)
    return _times_power_of_two(g, row, step.acted, outer, scaled)


def _times_power_of_two(g: _Graph, row: Row, acted, exponents: np.ndarray, values: str) -> str:
    """``values`` times 2 ** (each acted column's exponent) (ldexp), by factors each a double."""
    remaining = exponents.copy()
    while np.any(remaining):
        part = np.clip(remaining, -1000, 1000)
        values = g.op("Mul", values, _per_column(g, row, acted, np.ldexp(1.0, part), 1.0, "power"))
        remaining -= part
    return values


def _normalized(g: _Graph, step: Normalize, row: Row) -> str:
    """The acted columns divided by their l1 or l2 norm; a row whose norm overflows, or whose largest power falls
    below 2**-968, first divided by its largest magnitude (the C scorer's power of two, to rounding)."""
    _, values, _ = row
    acted = _acted(g, step.acted, row)
    missing = g.op("IsNaN", values)
    counted = g.op("And", acted, g.op("Not", missing))
    zero = g.double(0.0)
    magnitudes = g.where(counted, g.op("Abs", values), zero)
    norm = _norm(g, magnitudes, step.order)
    largest = g.op("ReduceMax", g.op("Concat", magnitudes, g.const(np.zeros(1)), axis=0), keepdims=0)
    largest_power = g.op("Mul", largest, largest) if step.order == 2 else largest
    not_finite = g.op("Or", g.op("IsInf", norm), g.op("IsNaN", norm))
    small = g.op("Less", largest_power, g.double(float(np.ldexp(1.0, -968))))
    rescale = g.op("And", g.op("Greater", largest, zero), g.op("Or", not_finite, small))
    finite_largest = g.op("Not", g.op("IsInf", largest))
    infinite_parts = g.where(g.op("IsInf", values), g.op("Sign", values), g.where(missing, values, zero))
    divided = g.where(finite_largest, g.op("Div", values, largest), infinite_parts)
    rescaled = g.where(acted, divided, values)
    rescaled_norm = _norm(g, g.where(counted, g.op("Abs", rescaled), zero), step.order)
    values = g.where(rescale, rescaled, values)
    norm = g.where(rescale, rescaled_norm, norm)
    divisor = g.where(g.op("Greater", norm, zero), norm, g.double(1.0))
    return g.where(acted, g.op("Div", values, divisor), values)


def _norm(g: _Graph, magnitudes: str, order: int) -> str:
    """The l1 or l2 norm of a row of magnitudes, summed in column order as the C scorer sums it."""
    if order == 1:
        return _summed_in_order(g, magnitudes)
    return g.op("Sqrt", _summed_in_order(g, g.op("Mul", magnitudes, magnitudes)))


def _summed_in_order(g: _Graph, values: str) -> str:
    """The sum of the rows of ``values`` (1-D, or 2-D: one sum per column) from 0.0, one row after another (the
    running sum of ``CumSum``, whose order ONNX Runtime keeps, where a reduction may add in any order)."""
    shape = g.op("Shape", values)
    first = g.op(
        "ConstantOfShape",
        g.op("Concat", g.ints(1), g.slice(shape, g.ints(1), g.ints(1 << 62)), axis=0),
        value=_double_tensor(0.0),
    )
    running = g.op("CumSum", g.op("Concat", first, values, axis=0), g.const(np.array(0, dtype=np.int64)))
    last = g.op("Slice", running, g.ints(-1), g.ints(1 << 62), g.ints(0))
    return g.op("Squeeze", last, g.ints(0))


def _shaped(g: _Graph, step: Shape, row: Row) -> Row:
    """Forman's shaping of the acted columns (or, with copies, each input column copied to its output columns,
    each shaped by its own knots), as the compiled kernel ``shape_stored`` computes it."""
    if step.copies is None:
        acted = np.asarray(step.acted, dtype=np.int64)
        tables = _per_column(g, row, acted, np.arange(len(acted), dtype=np.int64), -1, "table")
    else:
        row = _copied(g, row, step.copies[0])
        tables = g.op("Gather", g.const(np.asarray(step.copies[1], dtype=np.int64), "table"), row[0])
    columns, values, width = row
    if len(step.tables["knot_start"]) < 2:
        return row
    shaped = _shaped_values(g, step, values, g.op("Max", tables, g.const(np.array(0, dtype=np.int64))))
    shaping = g.op("GreaterOrEqual", tables, g.const(np.array(0, dtype=np.int64)))
    return columns, g.where(shaping, shaped, values), width


def _copied(g: _Graph, row: Row, source) -> Row:
    """One-vs-rest shaping's copies: each input column's value at each of its output columns (``source``: per
    output column its input column, ascending)."""
    source = np.asarray(source, dtype=np.int64)
    if len(source) > MOST_COLUMNS:
        raise FilterkitError(
            f"stage 'shape' copies its words into {len(source):,} columns, more than the {MOST_COLUMNS:,} of an "
            "ONNX graph's tables"
        )
    if len(source) and np.any(np.diff(source) < 0):
        raise FilterkitError("shape's copies are not in the order of their columns: an ONNX graph keeps it")
    inputs = np.arange(int(source[-1]) + 1 if len(source) else 0)
    n_outputs = np.bincount(source, minlength=len(inputs))
    most = int(n_outputs.max(initial=0))
    firsts = _per_column(g, row, inputs, np.cumsum(n_outputs) - n_outputs, 0, "first_output")
    counts = _per_column(g, row, inputs, n_outputs, 0, "outputs")
    offsets = g.const(np.arange(most, dtype=np.int64)[None, :], "offsets")
    outputs = g.op("Add", g.op("Unsqueeze", firsts, g.ints(1)), offsets)
    taken = g.op("Reshape", g.op("Less", offsets, g.op("Unsqueeze", counts, g.ints(1))), g.ints(-1))
    copies = g.op("Expand", g.op("Unsqueeze", row[1], g.ints(1)), g.op("Shape", outputs))
    flat = [g.op("Compress", g.op("Reshape", part, g.ints(-1)), taken, axis=0) for part in (outputs, copies)]
    return flat[0], flat[1], len(source)


def _shaped_values(g: _Graph, step: Shape, x: str, tables: str) -> str:
    """Each value of ``x`` shaped by its table of knots: placed among them by the C scorer's binary search (the
    last knot at most the value: numpy's searchsorted, side right), interpolated, less the shift that keeps 0 at
    0."""
    knots = step.tables
    start = np.asarray(knots["knot_start"], dtype=np.int64)
    padded_value = g.const(np.concatenate([np.asarray(knots["knot_value"], dtype=np.float64), [0.0, 0.0]]), "value")
    padded_probability = g.const(
        np.concatenate([np.asarray(knots["knot_probability"], dtype=np.float64), [0.0, 0.0]]), "probability"
    )
    first = g.op("Gather", g.const(start[:-1], "knot_start"), tables)
    count = g.op("Gather", g.const(np.diff(start), "knot_count"), tables)
    low, high = g.op("Mul", count, g.const(np.array(0, dtype=np.int64))), count
    one = g.const(np.array(1, dtype=np.int64))
    for _ in range(int(np.diff(start).max(initial=0)).bit_length()):
        middle = g.op("Add", low, g.op("Div", g.op("Sub", high, low), g.const(np.array(2, dtype=np.int64))))
        searching = g.op("Less", low, high)
        right = g.op("And", searching, g.op("LessOrEqual", g.op("Gather", padded_value, g.op("Add", first, middle)), x))
        low = g.where(right, g.op("Add", middle, one), low)
        high = g.where(g.op("And", searching, g.op("Not", right)), middle, high)
    has_below = g.op("Greater", low, g.const(np.array(0, dtype=np.int64)))
    below = g.op("Add", first, g.op("Max", g.op("Sub", low, one), g.const(np.array(0, dtype=np.int64))))
    value_below = g.op("Gather", padded_value, below)
    probability_below = g.op("Gather", padded_probability, below)
    value_next = g.op("Gather", padded_value, g.op("Add", below, one))
    probability_next = g.op("Gather", padded_probability, g.op("Add", below, one))
    exact = g.op("Equal", value_below, x)
    slope = g.op("Div", g.op("Sub", probability_next, probability_below), g.op("Sub", value_next, value_below))
    interpolated = g.op("Add", g.op("Mul", slope, g.op("Sub", x, value_below)), probability_below)
    interpolate = g.op("And", g.op("Not", exact), g.op("Less", low, count))
    per_table = {
        key: g.op("Gather", g.const(np.asarray(knots[key], dtype=np.float64), key), tables)
        for key in ("first_probability", "zero_probability", "default_probability", "zero_shift", "missing_probability")
    }
    shaped = g.where(has_below, g.where(interpolate, interpolated, probability_below), per_table["first_probability"])
    if step.zero_bin:
        shaped = g.where(g.op("Equal", x, g.double(0.0)), per_table["zero_probability"], shaped)
    nominal = np.asarray(knots["column_nominal"], dtype=bool)
    if nominal.any():
        matched = g.where(g.op("And", has_below, exact), probability_below, per_table["default_probability"])
        shaped = g.where(g.op("Gather", g.const(nominal, "nominal"), tables), matched, shaped)
    shaped = g.op("Sub", shaped, per_table["zero_shift"])
    if knots["missing_bin"]:
        missing = g.op("Sub", per_table["missing_probability"], per_table["zero_shift"])
    else:
        missing = g.op("Mul", x, g.double(float("nan")))
    return g.where(g.op("IsNaN", x), missing, shaped)


def _linear(g: _Graph, model, row: Row) -> str:
    """The classifier's decision values w·x + b of the row's classifier columns, the products of its non-zero
    values summed in column order as scipy's sparse product sums them (a missing value read as 0; NaN for a label
    every training row held or none did)."""
    weights, intercepts = model.linear
    features, x, _ = _renumbered(g, row, np.asarray(classifier_columns(model), dtype=np.int64))
    x = g.op("Unsqueeze", g.where(g.op("IsNaN", x), g.double(0.0), x), g.ints(1))
    rows = g.op("Gather", g.const(np.ascontiguousarray(np.asarray(weights, dtype=np.float64).T), "weights"), features)
    products = g.where(g.op("Equal", x, g.double(0.0)), g.double(0.0), g.op("Mul", x, rows))
    decisions = g.op("Add", _summed_in_order(g, products), g.const(np.asarray(intercepts, dtype=np.float64)))
    constants = [constant is not None for constant in getattr(model, "constants", [None] * len(model.classes))]
    if any(constants):
        decisions = g.where(g.const(np.array(constants)), g.double(float("nan")), decisions)
    return decisions


def _document_loop(g: _Graph, body: _Graph, row: str, width: int) -> str:
    """A Loop over the documents of the input ``documents`` computing ``row`` (``width`` float64) of each by
    ``body`` (which reads ``documents`` at ``iteration``): the rows [N, width]."""
    passed = body.op("Identity", "condition")
    loop_body = helper.make_graph(
        body.nodes,
        "document",
        [
            helper.make_tensor_value_info("iteration", TensorProto.INT64, []),
            helper.make_tensor_value_info("condition", TensorProto.BOOL, []),
        ],
        [
            helper.make_tensor_value_info(passed, TensorProto.BOOL, []),
            helper.make_tensor_value_info(row, TensorProto.DOUBLE, [width]),
        ],
        initializer=body.constants,
    )
    scored = g.op("Loop", g.op("Squeeze", g.size("documents")), "", body=loop_body)
    return g.op("Reshape", scored, g.ints(-1, width))


def _serialized(g: _Graph, outputs: dict[str, tuple[int, list]]) -> bytes:
    """The graph ``g`` from ``documents`` (strings [N]) to ``outputs`` (each value of ``g`` of that name: its type
    and shape), checked and serialized."""
    graph = helper.make_graph(
        g.nodes,
        "filterkit",
        [helper.make_tensor_value_info("documents", TensorProto.STRING, ["N"])],
        [helper.make_tensor_value_info(name, *kind) for name, kind in outputs.items()],
        initializer=g.constants,
    )
    opsets = [helper.make_opsetid(domain, version) for domain, version in OPSETS]
    exported = helper.make_model(graph, opset_imports=opsets, producer_name="filterkit")
    exported.ir_version = 9
    try:
        onnx.checker.check_model(exported)
        return exported.SerializeToString()
    except ValueError as error:  # protobuf's bound on one message: 2 GB
        raise FilterkitError(f"the graph cannot be written as one ONNX file ({error})") from None


def _model_outputs(model, body: _Graph, decisions: str) -> bytes:
    """The whole model's graph: each document's decision values by ``body``, then the answers of all of them."""
    g = _Graph("batch")
    k = len(model.classes)
    outputs = {"decisions": _document_loop(g, body, decisions, k)}
    outputs.update(_answers(g, model, outputs["decisions"]))
    for name, value in outputs.items():
        g.nodes.append(helper.make_node("Identity", [value], [name]))
    kinds: dict[str, tuple[int, list]] = {
        "decisions": (TensorProto.DOUBLE, ["N", k]),
        "label": (TensorProto.BOOL, ["N", k]) if model.label_sets else (TensorProto.STRING, ["N"]),
        "probabilities": (TensorProto.DOUBLE, ["N", k]),
        "classes": (TensorProto.STRING, [len(model.labels)]),
    }
    return _serialized(g, {name: kinds[name] for name in kinds if name in outputs})


def _said_yes(g: _Graph, rules, scores: str) -> str:
    """Per output, whether its score (probability, or decision value without a sigmoid) says yes: at or above its
    threshold, else a probability of at least 0.5, else a decision value above 0 (each label by its own rule)."""
    cuts = np.where(rules.threshold_of, 0.0 if rules.thresholds is None else rules.thresholds, 0.5)
    at_least = g.op("GreaterOrEqual", scores, g.const(np.asarray(cuts, dtype=np.float64)))
    margin = ~rules.sigmoid_of & ~rules.threshold_of
    if not margin.any():
        return at_least
    above = g.op("Greater", scores, g.double(0.0))
    return above if margin.all() else g.either(g.const(margin), above, at_least)


def _answers(g: _Graph, model, decisions: str) -> dict[str, str]:
    """``predict``'s answers from the decision values [N, k]: the label (a two-class model's positive class or the
    other, a multi-class model's class of the largest score less its offset, the first NaN first), or for label
    sets a matrix of the labels said yes; the Platt probabilities where the model has them; the classes' names."""
    outputs = len(model.classes)
    rules = classifier_rules(model, outputs)
    sigmoids, thresholds = rules.sigmoids, rules.thresholds
    names = g.const(np.array(list(model.labels), dtype=object), "names")
    answers = {"classes": names}
    scores = decisions
    if sigmoids is not None:
        slopes, offsets = (g.const(np.asarray(sigmoids[:, k], dtype=np.float64)) for k in (0, 1))
        exponent = g.op("Exp", g.op("Add", g.op("Mul", slopes, decisions), offsets))
        scores = g.op("Div", g.double(1.0), g.op("Add", g.double(1.0), exponent))
        if rules.every_sigmoid:
            answers["probabilities"] = scores
        else:  # a label set whose rare label has no probability and is decided by its margin
            answers["probabilities"] = g.where(g.const(rules.sigmoid_of), scores, g.double(np.nan))
            scores = g.where(g.const(rules.sigmoid_of), scores, decisions)
    if model.label_sets or not model.multiclass:
        yes = _said_yes(g, rules, scores)
        constants = list(getattr(model, "constants", [None] * outputs))
        if any(constant is not None for constant in constants):
            fixed = g.const(np.array([constant is not None for constant in constants]))
            held = g.const(np.array([bool(constant) for constant in constants]))
            yes = g.either(fixed, held, yes)
        if model.label_sets:
            answers["label"] = yes
        else:
            chosen = g.op("Cast", g.op("Not", g.op("Reshape", yes, g.ints(-1))), to=TensorProto.INT64)
            answers["label"] = g.op("Gather", names, chosen)
        return answers
    if thresholds is not None:
        scores = g.op("Sub", scores, g.const(np.asarray(thresholds, dtype=np.float64)))
    missing = g.op("IsNaN", scores)
    first_missing = g.op("ArgMax", g.op("Cast", missing, to=TensorProto.INT64), axis=1, keepdims=0)
    largest = g.op("ArgMax", g.where(missing, g.double(float("-inf")), scores), axis=1, keepdims=0)
    any_missing = g.op(
        "Cast",
        g.op("ReduceMax", g.op("Cast", missing, to=TensorProto.INT64), g.ints(1), keepdims=0),
        to=TensorProto.BOOL,
    )
    answers["label"] = g.op("Gather", names, g.where(any_missing, first_missing, largest))
    return answers
