"""The svmlight/LibSVM format: ``LABEL INDEX:VALUE INDEX:VALUE … # comment`` per row.

Read as scikit-learn's ``load_svmlight_file`` reads it: the labels are numbers, the
indices ascend strictly in a row, and they are zero-based when some index of the
file is 0, one-based otherwise (``zero_based="auto"``; ``--zero-based`` or
``--one-based`` decide instead).  The rows become sparse chunks of ``att_1`` …
``att_N`` (N = the largest index, as Weka's LibSVMLoader names them) and a last
attribute ``class``, nominal, whose labels are the file's distinct label values in
increasing order, written in their shortest form (``+1`` is ``1``); one value written
two ways (``1`` and ``1.0``) is an error, as it may be two classes.
``qid:`` (ranking data) is refused.

Multi-label rows (``load_svmlight_file(multilabel=True)``) give each row a set of labels, numbers
separated by commas (``1,3 5:0.2``), or none (the row begins with its first ``INDEX:VALUE``).  A file is
read so when ``--multilabel`` says, or by default when a row has several labels or none: each label
becomes an attribute ``{0,1}`` named as written, before the features, in the order of their numbers, and
the relation name says so in MEKA's way (``name.svm: -C k``; docs/multilabel.md).

The scan that builds this header keeps the label set and the largest index only.
"""

from __future__ import annotations

import codecs
import math
import re
from dataclasses import dataclass
from operator import itemgetter
from typing import IO, BinaryIO, Iterator, Sequence, cast

import numpy as np
import scipy.sparse as sp

from filterkit import kernels
from filterkit.arff.reader import NumberedLines, line_blocks
from filterkit.arff.tokens import one_line
from filterkit.arff.writer import EXACT, NumberFormat, format_numbers, format_rows, refuse_long_lines
from filterkit.errors import ArffError, FilterkitError
from filterkit.formats import FormatOptions, Layout, Reopen, relation_of
from filterkit.formats.records import LabelledDetails, LabelSets, label_values, labelled_schema
from filterkit.labels import meka_label_count, meka_label_positions, refuse_missing_labels
from filterkit.limits import VARIABLES, Limits
from filterkit.schema import NOMINAL, NUMERIC, Attribute, Chunk, Schema, shown_labels, without_zeros
from filterkit.text import shown

#: A number as load_svmlight_file reads it; possessive, so no input makes the patterns backtrack.
_IS_NUMBER = re.compile(
    r"[+-]?+(?:(?:[0-9]++\.?+[0-9]*+|\.[0-9]++)(?:[eE][+-]?+[0-9]++)?+"
    r"|[nN][aA][nN]|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?+)"
)
_PAIR = re.compile(r"([^:]*+):(.*)", re.DOTALL)


@dataclass(frozen=True)
class _Details:
    """How to read the rows: the label values in code order, the index of the first
    feature (0 or 1) and the number of features."""

    labels: np.ndarray
    first_index: int
    n_features: int
    #: multi-label rows: the label attributes' names, in order (None: one label, the class)
    label_names: tuple[str, ...] | None = None


@dataclass
class _Rows:
    """A group of parsed rows: labels (as numbers and as written), and the entries as CSR arrays
    (indices as written)."""

    labels: np.ndarray
    label_texts: list[bytes]
    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    numbers: list[int]
    #: multi-label rows: each row's label set as written (``b"1,3"``; ``b""``: none)
    label_words: list[bytes] | None = None


class _LabelSetRow(ArffError):
    """A row of several labels or none, met while reading the rows as single-label."""


class SvmlightFormat:
    """Reads svmlight/LibSVM files (see the module's description)."""

    def __init__(self, limits: Limits | None = None):
        self.limits = Limits.from_environment() if limits is None else limits
        #: whether the rows are read as label sets (multi-label)
        self.multilabel = False

    def scan(self, opened: Reopen, name: str, options: FormatOptions, known_schema: Schema | None) -> Layout:
        """One pass: the labels, the smallest and largest index, the comments before the first row (a
        second, of label sets, when the first meets a row of several labels or none and ``--multilabel``
        leaves it open)."""
        comments: list[str] = []
        model_labels = None if known_schema is None else meka_label_count(known_schema.relation)
        self.multilabel = bool(options.multilabel) or bool(model_labels)
        label_sets = LabelSets("label", name, self.limits)
        try:
            labels, smallest, largest, rows_read = self._read_all(opened, name, comments, label_sets)
        except _LabelSetRow as error:
            if options.multilabel is False or known_schema is not None:
                raise ArffError(
                    f"{error.message}: multi-label rows (--multilabel reads them)", error.path, error.line
                ) from None
            self.multilabel, comments = True, []
            labels, smallest, largest, rows_read = self._read_all(opened, name, comments, label_sets)
        if not rows_read and known_schema is None:
            raise ArffError("empty input: no rows, so no labels or features to declare", name, 1)
        first_index = _first_index(options.zero_based, smallest, known_schema is not None, name)
        n_features = self._features(largest, first_index, name)
        if known_schema is not None and model_labels:
            return _known_labelled_layout(known_schema, first_index, comments, rows_read, label_sets)
        if known_schema is not None:
            return _known_layout(known_schema, first_index, comments, rows_read, name)
        settled = (("zero_based", first_index == 0),)
        relation = relation_of(name, keep_extension=True)
        features = [Attribute(f"att_{i}", NUMERIC, declared_type="numeric") for i in range(1, n_features + 1)]
        if self.multilabel:
            label_attributes = _numbered_labels(label_sets)
            schema = labelled_schema(relation, label_attributes, features)
            names = tuple(attribute.name for attribute in label_attributes)
            details = _Details(np.empty(0), first_index, n_features, names)
            return Layout(schema, tuple(comments), details, rows_read, settled)
        ordered = np.array(sorted(labels), dtype=np.float64)
        features.append(Attribute("class", NOMINAL, labels=tuple(format_numbers(ordered))))
        schema = Schema(relation, tuple(features))
        return Layout(schema, tuple(comments), _Details(ordered, first_index, n_features), rows_read, settled)

    def _features(self, largest: tuple, first_index: int, name: str) -> int:
        """How many feature attributes the largest index makes; an error past the bound on attributes."""
        n_features = 0 if largest[0] is None else largest[0] - first_index + 1
        if n_features + 1 > self.limits.attributes:
            raise ArffError(
                f"index {largest[0]} makes more than {self.limits.attributes:,} attributes: refused "
                f"(set {VARIABLES['attributes']} to allow more)",
                name,
                largest[1],
            )
        return n_features

    def _read_all(
        self, opened: Reopen, name: str, comments: list[str], label_sets: LabelSets
    ) -> tuple[dict, tuple, tuple, int]:
        """The scan's pass over the rows: each label value as first written and its line (multi-label:
        into ``label_sets``), the smallest and the largest index with the line of their first use
        ((None, 0) without any), and the rows; the comments before the first row go into ``comments``."""
        labels: dict[float, tuple[bytes, int]] = {}
        smallest: tuple = (None, 0)
        largest: tuple = (None, 0)
        rows_read = 0
        with opened() as stream:
            for rows in self._groups(stream, name, 10_000, comments):
                rows_read += len(rows.numbers)
                if rows.label_words is None:
                    _add_labels(labels, rows, name)
                else:
                    label_sets.observe(_label_sets(rows, name), rows.numbers)
                if len(labels) > self.limits.labels:
                    raise ArffError(
                        f"more than {self.limits.labels:,} distinct labels: refused "
                        f"(set {VARIABLES['labels']} to allow more)",
                        name,
                        rows.numbers[-1],
                    )
                if len(rows.indices):
                    ends = (int(np.argmin(rows.indices)), int(np.argmax(rows.indices)))
                    low, high = ((int(rows.indices[at]), rows.numbers[_row_of(rows, at)]) for at in ends)
                    if smallest[0] is None:
                        smallest, largest = low, high
                    # min and max keep the first of equals: an earlier line wins a tie
                    smallest = min(smallest, low, key=itemgetter(0))
                    largest = max(largest, high, key=itemgetter(0))
        return labels, smallest, largest, rows_read

    def scan_reads_rows(self, known_schema: Schema | None) -> bool:
        """Always: even with a model's header, the scan checks every row's indices."""
        return True

    def chunks(self, stream: IO[bytes], name: str, layout: Layout, chunk_rows: int) -> Iterator[Chunk]:
        """The rows as sparse chunks of at most ``chunk_rows`` rows."""
        details = cast(_Details, layout.details)
        self.multilabel = details.label_names is not None
        for rows in self._groups(stream, name, chunk_rows, None):
            yield _chunk(rows, details, name) if rows.label_words is None else _labelled_chunk(rows, details, name)

    def _groups(self, stream: IO[bytes], name: str, group_rows: int, comments: list[str] | None) -> Iterator[_Rows]:
        """The rows parsed (by the compiled ``_lines.parse_svmlight``) in groups of at most ``group_rows`` rows or
        ``chunk_bytes`` bytes of row text; the comment lines before the first row put in ``comments``."""
        limits = self.limits
        lines = NumberedLines(line_blocks(cast(BinaryIO, stream), limits.line_bytes), name, limits.line_bytes)
        pieces: list[tuple[dict, int, list[bytes] | None]] = []
        rows = size = 0
        for block, at in lines.blocks():
            if lines.line_number == 0 and block.startswith(codecs.BOM_UTF8):
                at = len(codecs.BOM_UTF8)
            words: list[bytes] | None = None
            if self.multilabel:  # each row's label set taken out, a label 0 in its place, for the compiled parser
                words = []
                block, at = _FIRST_WORD.sub(lambda found: _as_label_zero(found, cast(list, words)), block[at:]), 0
            while at < len(block):
                start = at
                parsed = kernels.lines.parse_svmlight(
                    block, at, group_rows - rows, limits.chunk_bytes - size, limits.line_bytes
                )
                at, first, error = parsed["stop"], parsed["first"], parsed["error"]
                if comments is not None:
                    _add_comments(block[start : at if first < 0 else first], comments)
                    comments = comments if first < 0 else None
                if error is not None:
                    refused = _LabelSetRow if _is_label_set_row(error) else ArffError
                    raise refused(_refusal(**error), name, lines.line_number + error["line"])
                found = len(parsed["label_texts"])
                pieces.append((parsed, lines.line_number + 1, None if words is None else words[:found]))
                words = None if words is None else words[found:]
                rows += len(parsed["label_texts"])
                size += parsed["held"]
                lines.line_number += parsed["lines"]
                if parsed["too_long"]:
                    raise lines.too_long()
                if rows == group_rows or size >= limits.chunk_bytes:
                    yield _joined_rows(pieces)
                    pieces, rows, size = [], 0, 0
        if rows:
            yield _joined_rows(pieces)


def _first_index(zero_based: bool | None, smallest: tuple, known: bool, name: str) -> int:
    """The index of the first feature: as ``--zero-based``/``--one-based`` say, else 0 where the file uses
    index 0 or has no index (scikit-learn's ``zero_based='auto'``); an error for index 0 read as one-based
    (``known``: as a model's training data was)."""
    if zero_based is False and smallest[0] == 0:
        why = "as the model's training data, or --one-based" if known else "--one-based"
        raise ArffError(f"index 0 in a file read as one-based ({why})", name, smallest[1])
    if zero_based is None:
        return 1 if smallest[0] is not None and smallest[0] > 0 else 0
    return 0 if zero_based else 1


def _add_comments(text: bytes, comments: list[str]) -> None:
    """Put the comment lines of ``text`` in ``comments`` (without ``#`` and one blank)."""
    for line in text.split(b"\n"):
        if line.lstrip().startswith(b"#"):
            comment = line.lstrip()[1:].decode("utf-8", "replace")
            comments.append(comment[1:] if comment.startswith(" ") else comment)


def _joined_rows(pieces: list[tuple[dict, int, list[bytes] | None]]) -> _Rows:
    """One group of the rows of ``parse_svmlight``'s results (each with the number of its first line and,
    multi-label, its rows' label sets as written)."""
    ends = [np.frombuffer(parsed["indptr"], np.int64)[1:] for parsed, _, _ in pieces]
    offsets = np.cumsum([0] + [len(parsed["indices"]) // 8 for parsed, _, _ in pieces])
    return _Rows(
        np.frombuffer(b"".join(parsed["labels"] for parsed, _, _ in pieces), np.float64),
        [text for parsed, _, _ in pieces for text in parsed["label_texts"]],
        np.concatenate([[0], *(end + offset for end, offset in zip(ends, offsets))]),
        np.frombuffer(b"".join(parsed["indices"] for parsed, _, _ in pieces), np.int64),
        np.frombuffer(b"".join(parsed["values"] for parsed, _, _ in pieces), np.float64),
        np.concatenate([np.frombuffer(parsed["line_of"], np.int64) + first for parsed, first, _ in pieces]).tolist(),
        None if pieces and pieces[0][2] is None else [word for _, _, words in pieces for word in cast(list, words)],
    )


#: A line's first word, where the line is a row (neither blank nor a comment): its label set, or its first
#: ``INDEX:VALUE`` in a multi-label row of no label.
_FIRST_WORD = re.compile(rb"^[ \t\r\v\f]*+([^ \t\r\v\f\n#]++)", re.MULTILINE)


def _as_label_zero(found: re.Match, words: list[bytes]) -> bytes:
    """A row's first word (``found``) as the compiled parser reads a single label: the label set put in
    ``words`` (``b""``: none) and the label 0 in its place."""
    word = found.group(1)
    start = found.start(1) - found.start()
    if b":" in word:
        words.append(b"")
        return found.group()[:start] + b"0 " + word
    words.append(word)
    return found.group()[:start] + b"0"


def _is_label_set_row(error: dict) -> bool:
    """Whether a row ``parse_svmlight`` refused is a multi-label one: its first word a label set or, with
    no label, an ``INDEX:VALUE``."""
    words = error["text"].split()
    return error["what"] == kernels.lines.NOT_A_ROW and bool(words) and (b"," in words[0] or b":" in words[0])


def _label_sets(rows: _Rows, name: str) -> list[list[str]]:
    """Each row's labels (numbers as load_svmlight_file reads them, as written); an error naming the
    line of one that is not a number."""
    sets = []
    for word, line in zip(cast(list, rows.label_words), rows.numbers):
        written = word.decode("utf-8", "replace")
        labels = written.split(",") if word else []
        for label in labels:
            if _IS_NUMBER.fullmatch(label) is None or label.lower().lstrip("+-") == "nan":
                raise ArffError(
                    f"the label {shown(label)} of the label set {shown(written)} is not a number", name, line
                )
        sets.append(labels)
    return sets


def _numbered_labels(label_sets: LabelSets) -> tuple[Attribute, ...]:
    """The label attributes of multi-label rows, in the order of their numbers; an error naming the line of
    a number written a second way (``1`` and ``1.0``: one label or two, only the writer knows)."""
    attributes = label_sets.attributes(())
    seen: dict[float, str] = {}
    for attribute in attributes:
        earlier = seen.setdefault(float(attribute.name), attribute.name)
        if earlier != attribute.name:
            raise ArffError(
                f"labels {shown(earlier)} and {shown(attribute.name)} are one number written two ways: "
                "write each label one way",
                label_sets.name,
                max(label_sets.first_line[earlier], label_sets.first_line[attribute.name]),
            )
    return attributes


def _refusal(what: int, line: int, text: bytes, before: int, after: int) -> str:
    """Why a data line is not a row (``what`` and the rest as ``parse_svmlight``'s error says)."""
    if what == kernels.lines.NAN_LABEL:
        return "a label is a number, not NaN"
    if what == kernels.lines.DESCENDING:
        return (
            f"index {after} after index {before}: the indices of a row must ascend strictly "
            "(as load_svmlight_file requires)"
        )
    words = text.split()
    label = words[0].decode("utf-8", "replace")
    if b"," in words[0] or b":" in words[0]:
        return f"label {shown(label)}: a row of several labels (separated by commas) or none"
    if _IS_NUMBER.fullmatch(label) is None:
        return f"the label {shown(label)} is not a number"
    for word in words[1:]:
        field = word.decode("utf-8", "replace")
        pair = _PAIR.fullmatch(field)
        if field.startswith("qid:"):
            return "qid (ranking data) is not supported: remove the qid:N fields to read the rows for classification"
        if pair is None:
            return f"expected INDEX:VALUE, found {shown(field)}"
        index, value = pair.groups()
        if not (index.isascii() and index.isdigit() and len(index) <= 18):
            return f"the index {shown(index)} is not a whole number of at most 18 digits"
        if _IS_NUMBER.fullmatch(value) is None:
            return f"the value {shown(value)} of index {index} is not a number"
    return "not an svmlight row"


def _add_labels(labels: dict[float, tuple[bytes, int]], rows: _Rows, name: str) -> None:
    """Add the rows' label values to ``labels``; ArffError where a value is written a second way
    (``1``, ``1.0``, ``01``): one class or two, only the writer knows."""
    first = {text: at for at, text in reversed(list(enumerate(rows.label_texts)))}
    for at in sorted(first.values()):
        text, line = rows.label_texts[at], rows.numbers[at]
        seen, seen_line = labels.setdefault(rows.labels[at] + 0.0, (text, line))
        if seen != text:
            raise ArffError(
                f"labels {shown(seen.decode())} (line {seen_line}) and {shown(text.decode())} are one number "
                "written two ways: write each class's label one way",
                name,
                line,
            )


def _known_layout(schema: Schema, first_index: int, comments: list[str], rows: int, name: str) -> Layout:
    """The layout of a model's training header, for rows read with it (``filterkit apply``)."""
    attributes = schema.attributes
    if (
        not attributes
        or attributes[-1].kind != NOMINAL
        or not attributes[-1].labels
        or not all(a.is_numeric for a in attributes[:-1])
        or not all(_IS_NUMBER.fullmatch(label) for label in attributes[-1].labels)
    ):
        raise FilterkitError(
            "the model was not trained on svmlight data (numeric features and a last, nominal class of numbers)", name
        )
    labels = np.array([float(label) for label in attributes[-1].labels], dtype=np.float64)
    if len(set(labels.tolist())) < len(labels):
        raise FilterkitError(
            f"the model's class labels {shown_labels(attributes[-1].labels)} hold one number written two ways: "
            "svmlight labels cannot tell those classes apart",
            name,
        )
    settled = (("zero_based", first_index == 0),)
    return Layout(schema, tuple(comments), _Details(labels, first_index, len(attributes) - 1), rows, settled)


def _known_labelled_layout(schema: Schema, first_index: int, comments: list[str], rows: int, label_sets) -> Layout:
    """The layout of a multi-label model's training header (its labels first, MEKA's ``-C k``, then numeric
    features), for label-set rows read with it; an error naming the line of a label the model lacks."""

    def features(others: Schema) -> Layout:
        if not all(attribute.is_numeric for attribute in others.attributes):
            raise FilterkitError(
                "the model was not trained on svmlight data (numeric features after its labels)", label_sets.name
            )
        return Layout(others, (), None, rows)

    labels = cast(LabelledDetails, label_sets.known_layout(schema, features).details).labels
    details = _Details(np.empty(0), first_index, len(schema.attributes) - len(labels), labels)
    return Layout(schema, tuple(comments), details, rows, (("zero_based", first_index == 0),))


def _row_of(rows: _Rows, entry: int) -> int:
    """The row (within the group) holding entry number ``entry``."""
    return int(np.searchsorted(rows.indptr, entry, side="right")) - 1


def _chunk(rows: _Rows, details: _Details, name: str) -> Chunk:
    """The parsed rows as a sparse chunk, the label code in the last column."""
    n_rows = len(rows.labels)
    order = np.argsort(details.labels)  # a model's labels are in the order its training header declared them
    positions = np.minimum(np.searchsorted(details.labels[order], rows.labels + 0.0), len(order) - 1)
    codes = order[positions]
    known = details.labels[codes] == rows.labels
    if not known.all():
        row = int(np.flatnonzero(~known)[0])
        raise ArffError(
            f"label {format_numbers(rows.labels[row : row + 1])[0]} is not one of the training labels",
            name,
            rows.numbers[row],
        )
    columns = _feature_columns(rows, details, name)
    # each row's entries, then its label code in the last column where not 0: the indices ascend
    labelled = codes != 0
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.diff(rows.indptr) + labelled, out=indptr[1:])
    label_at = indptr[1:][labelled] - 1
    is_entry = np.ones(indptr[-1], dtype=bool)
    is_entry[label_at] = False
    data = np.empty(indptr[-1])
    indices = np.empty(indptr[-1], dtype=np.int64)
    data[is_entry], indices[is_entry] = rows.values, columns
    data[label_at], indices[label_at] = codes[labelled], details.n_features
    return Chunk.from_csr(*without_zeros(data, indices, indptr), (n_rows, details.n_features + 1))


def _feature_columns(rows: _Rows, details: _Details, name: str) -> np.ndarray:
    """The rows' entries' feature columns (from 0); an error naming the line of an index outside the features."""
    columns = rows.indices - details.first_index
    if len(columns) and (columns.min() < 0 or columns.max() >= details.n_features):
        entry = int(np.flatnonzero((columns < 0) | (columns >= details.n_features))[0])
        raise ArffError(
            f"index {rows.indices[entry]} is outside the {details.n_features} features "
            f"(indices {details.first_index} to {details.n_features - 1 + details.first_index})",
            name,
            rows.numbers[_row_of(rows, entry)],
        )
    return columns


def _labelled_chunk(rows: _Rows, details: _Details, name: str) -> Chunk:
    """Multi-label rows as a sparse chunk: the label columns (1 where the row holds the label) first."""
    names = cast(tuple, details.label_names)
    n_rows, width = len(rows.numbers), len(names) + details.n_features
    labels = sp.csr_matrix(label_values(_label_sets(rows, name), names))
    features = sp.csr_matrix(
        (rows.values, _feature_columns(rows, details, name), rows.indptr), shape=(n_rows, details.n_features)
    )
    matrix = sp.hstack([labels, features], format="csr")
    matrix.eliminate_zeros()
    return Chunk.from_csr(matrix.data, matrix.indices.astype(np.int64), matrix.indptr.astype(np.int64), (n_rows, width))


class SvmlightWriter:
    """Writes rows as svmlight: the class as the label, every other attribute (numeric
    ones only) as ``INDEX:VALUE`` where not 0, indices counted from 1 (from 0 with
    ``--zero-based``), NaN as ``nan``; the comments first, as ``#`` lines.  Numbers are
    written as ``numbers`` says (a numeric label too).

    A nominal class is written as its label where every label is a number, none NaN
    and no two the same number (``1`` and ``1.0``), else as the label's position (from
    0, as Weka's LibSVMSaver writes it): each class reads back as a class of its own.
    A numeric class's -0 is written ``0``.  A row with a missing class or an instance
    weight other than 1 cannot be written (an error).

    Multi-label rows (MEKA's ``-C`` in the relation name) are written as label sets, ``l1,l2``: each label
    named as its attribute where every name is a number, none NaN and no two the same number, else by its
    position among the labels (from 0); a row of no label begins with its first ``INDEX:VALUE`` (a row of
    no label and no feature with ``INDEX:0`` of the first feature, as a blank line would be no row).
    """

    def __init__(
        self,
        stream: BinaryIO,
        schema: Schema,
        comments: Sequence[str],
        class_name: str | None,
        options: FormatOptions,
        numbers: NumberFormat = EXACT,
    ):
        self.label_positions = meka_label_positions(schema)
        self.label_names = [schema.attributes[position].name for position in self.label_positions]
        labelled = bool(self.label_positions)
        if not labelled and (class_name is None or class_name not in [a.name for a in schema.attributes]):
            raise FilterkitError("svmlight output needs a class attribute (-c) to write as each row's label")
        self.stream = stream
        self.numbers = numbers
        self.class_index = -1 if labelled else schema.index_of(cast(str, class_name))
        target = None if labelled else schema.attributes[self.class_index]
        if target is not None and target.kind not in (NOMINAL, NUMERIC):
            raise FilterkitError(
                f"svmlight output: the class {shown(target.name)} is {target.kind}, not nominal or numeric"
            )
        self.not_feature = np.zeros(len(schema.attributes), dtype=bool)
        self.not_feature[[*self.label_positions, *([] if labelled else [self.class_index])]] = True
        for position, attribute in enumerate(schema.attributes):
            if not self.not_feature[position] and not attribute.is_numeric:
                raise FilterkitError(
                    f"svmlight output holds numbers only: attribute {shown(attribute.name)} is {attribute.kind}"
                )
        self.label_texts: list[str] | None = None
        if labelled:
            self.label_texts = _written_labels([schema.attributes[position].name for position in self.label_positions])
        elif cast(Attribute, target).kind == NOMINAL:
            self.label_texts = _written_labels(cast(Attribute, target).labels)
        first = 0 if options.zero_based else 1
        self.first_index = first
        self.written_index = np.zeros(len(schema.attributes), dtype=np.int64)
        others = np.flatnonzero(~self.not_feature)
        self.written_index[others] = np.arange(first, first + len(others))
        self.rows = 0
        self.line_bytes = Limits.from_environment().line_bytes
        header = "".join(f"# {one_line(comment)}\n" for comment in comments).encode("utf-8")
        refuse_long_lines(header, self.line_bytes, 1, "comment line")
        self.stream.write(header)

    def write(self, chunk: Chunk) -> None:
        """Append the rows of ``chunk``."""
        if chunk.weights is not None and (chunk.weights != 1).any():
            raise FilterkitError("svmlight output cannot hold instance weights other than 1")
        label_sets = self._label_sets(chunk) if self.label_positions else None
        labels = ["0"] * chunk.n_rows if label_sets is not None else self._labels(chunk.column(self.class_index))
        matrix = cast(sp.csr_matrix, chunk.values if chunk.is_sparse else sp.csr_matrix(chunk.values)).tocsr()
        matrix.sort_indices()
        n_rows = matrix.shape[0]
        rows = np.repeat(np.arange(n_rows), np.diff(matrix.indptr))
        keep = ~self.not_feature[matrix.indices] & (matrix.data != 0)
        # each row as the ARFF writer's sparse row "{0 LABEL,INDEX VALUE,...}", the label first
        indptr = np.searchsorted(rows[keep], np.arange(n_rows + 1)) + np.arange(n_rows + 1)
        is_label = np.zeros(indptr[-1], dtype=np.uint8)
        is_label[indptr[:-1]] = 1
        columns = np.zeros(indptr[-1], dtype=np.int64)
        values = np.zeros(indptr[-1])
        columns[is_label == 0] = self.written_index[matrix.indices[keep]]
        values[is_label == 0] = matrix.data[keep]
        digits = self.numbers.digits or 0
        text = format_rows(indptr, columns, values, is_label, labels, True, digits, self.numbers.float32)
        text = kernels.lines.svmlight_text(text)
        if label_sets is not None:
            text = self._with_label_sets(text, label_sets)
        refuse_long_lines(text, self.line_bytes, self.rows + 1, "row")
        self.stream.write(text)
        self.rows += matrix.shape[0]

    def _labels(self, targets: np.ndarray) -> list[str]:
        """Each row's label: its class."""
        if np.isnan(targets).any():
            row = self.rows + int(np.flatnonzero(np.isnan(targets))[0]) + 1
            raise FilterkitError(f"row {row} has a missing class, which svmlight output cannot hold")
        if self.label_texts is None:
            return ["0" if text == "-0" else text for text in format_numbers(targets, self.numbers)]
        return [self.label_texts[code] for code in targets.astype(np.int64).tolist()]

    def _with_label_sets(self, text: bytes, label_sets: list[str]) -> bytes:
        """The rows ``text`` (each headed by a label 0) with their ``label_sets`` instead: a row of no label
        begins with its first ``INDEX:VALUE``; one of no feature either is ``INDEX:0`` of the first feature,
        as a blank line would be no row (an error when there are no features)."""
        lines = text.split(b"\n")
        for row, (line, label_set) in enumerate(zip(lines, label_sets)):
            if label_set:
                lines[row] = label_set.encode("utf-8") + line[1:]
            elif len(line) > 1:
                lines[row] = line[2:]
            elif len(self.not_feature) > len(self.label_positions):
                lines[row] = f"{self.first_index}:0".encode("ascii")
            else:
                raise FilterkitError(f"row {self.rows + row + 1} has no label and no feature: svmlight cannot hold it")
        return b"\n".join(lines)

    def _label_sets(self, chunk: Chunk) -> list[str]:
        """Each row's label set, ``l1,l2`` (empty: none)."""
        texts = cast(list, self.label_texts)
        held = np.column_stack([chunk.column(position) for position in self.label_positions])
        refuse_missing_labels(held, self.rows, self.label_names, "svmlight output cannot hold")
        return [",".join(texts[label] for label in np.flatnonzero(row).tolist()) for row in held]


def _written_labels(labels: Sequence[str]) -> list[str]:
    """Labels as svmlight writes them: as they are where every one is a number, none NaN and no two the
    same number, else their positions (from 0, as Weka's LibSVMSaver writes a nominal class)."""
    values = {float(label) for label in labels if _IS_NUMBER.fullmatch(label)}
    readable = len(values) == len(labels) and not any(math.isnan(value) for value in values)
    return list(labels) if readable else [str(position) for position in range(len(labels))]
