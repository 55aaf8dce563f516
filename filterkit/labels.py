"""Several labels per row (multi-label data): which attributes are the labels.

MEKA marks them in the relation name, ``@relation 'enron: -C 53'``: the first 53 attributes are the
labels (``-C -53``: the last 53), each ``{0,1}``.  Mulan names them in an XML file beside the ARFF
(``--labels FILE.xml``), at any positions, nested labels standing for a hierarchy (read here as a flat
list).  A label attribute is nominal ``{0,1}``: MEKA's multi-target data (labels of other values) is
refused, not guessed at.  The labels are tracked by name through a chain, as the class is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from filterkit.errors import ArffError, FilterkitError
from filterkit.schema import NOMINAL, Attribute, Chunk, Schema
from filterkit.stage import Option
from filterkit.text import shown

#: The first ``-C`` (or ``-c``) option in the relation name after its first colon, and its value: MEKA's ``-C k``
#: where the value is a whole number k ≠ 0 (``+k`` too, as Java's ``Integer.parseInt`` reads it).  Another value is
#: not MEKA's: Weka's filters write their classifiers' options into the relation (``…J48 -C 0.25 -M 2``), after a
#: colon of StringToWordVector's delimiters.
_FIRST_C_OPTION = re.compile(r"(?:^|\s)-[Cc]\s+(\S+)")
_WHOLE_NUMBER = re.compile(r"[-+]?\d+")


def _meka_option(options: str) -> re.Match | None:
    """The match of MEKA's ``-C k`` in a relation name's ``options`` (after its first colon), or None."""
    found = _FIRST_C_OPTION.search(options)
    return found if found is not None and _WHOLE_NUMBER.fullmatch(found.group(1)) else None


#: Joins a row's label names where one text holds them: ``evaluate --predictions``, ``predict``'s CSV.
LABEL_SEPARATOR = "|"

#: What to do about a label :func:`unjoinable_label` names, where no other form of the output is written.
RENAME_LABEL = "rename the label in the data"


def unjoinable_label(labels: Sequence[str]) -> str | None:
    """Why the first of ``labels`` that a text of a row's labels joined by :data:`LABEL_SEPARATOR` cannot show
    cannot (``label 'a|b' holds |, …``), or None: one holding the separator, or an empty one (a row of it alone
    would read as a row of no label, and ``''`` with ``rare`` as ``|rare``)."""
    for label in labels:
        if LABEL_SEPARATOR in label:
            return f"label {shown(label)} holds {LABEL_SEPARATOR}, which joins a row's labels"
        if not label:
            return f"label {shown(label)} is empty, which a row's labels joined by {LABEL_SEPARATOR} cannot show"
    return None


#: The values a label attribute holds, in this order (MEKA's and Mulan's ``{0,1}``).
LABEL_VALUES = ("0", "1")


@dataclass(frozen=True)
class NamedLabels:
    """The label attributes' names as a file gives them (Mulan's XML: ``path``, each name's ``lines``), or a
    model (no file)."""

    names: tuple[str, ...]
    path: str | None = None
    lines: tuple[int, ...] = ()

    def where(self, name: str) -> tuple[str | None, int | None]:
        """The file and line that name ``name``."""
        line = self.lines[self.names.index(name)] if self.lines else None
        return self.path, line


def meka_label_count(relation: str) -> int | None:
    """MEKA's ``-C`` in ``relation`` (after its first colon): k > 0 for the first k attributes, k < 0 for
    the last −k; None when the name carries none."""
    _, colon, options = relation.partition(":")
    found = _meka_option(options) if colon else None
    if found is None:
        return None
    count = int(found.group(1))
    if count == 0:
        raise ArffError(f"relation {shown(relation)}: MEKA's -C 0 names no label")
    return count


def with_meka_label_count(relation: str, count: int) -> str:
    """``relation`` with its MEKA ``-C`` set to ``count`` (added after a colon when it has none)."""
    name, colon, options = relation.partition(":")
    found = _meka_option(options) if colon else None
    if found is not None:
        return name + colon + options[: found.start(1)] + str(count) + options[found.end(1) :]
    if colon and _FIRST_C_OPTION.search(options):  # another -C comes first after the colon: put MEKA's before it
        return f"{name}: -C {count} :{options}"
    return f"{relation}: -C {count}"


def without_meka_label_count(relation: str) -> str:
    """``relation`` without its MEKA ``-C`` (and without the colon where nothing else follows it)."""
    name, _, options = relation.partition(":")
    found = _meka_option(options)
    rest = options if found is None else options[: found.start()] + options[found.end() :]
    return f"{name}:{rest}".rstrip().removesuffix(":").rstrip() if rest.strip() else name


def check_meka_header(schema: Schema) -> None:
    """ArffError (the caller names the line) when the relation's ``-C`` asks for more labels than the
    header declares attributes, or a label attribute is not nominal ``{0,1}``."""
    count = meka_label_count(schema.relation)
    if count is None:
        return
    if abs(count) > len(schema.attributes):
        raise ArffError(
            f"MEKA's -C {count} in the relation name asks for {abs(count)} labels; "
            f"the header declares {len(schema.attributes)} attributes"
        )
    for position in meka_positions(schema, count):
        check_label_attribute(schema.attributes[position], "MEKA's -C")


def meka_positions(schema: Schema, count: int) -> range:
    """The positions ``-C count`` names in ``schema``."""
    return range(count) if count > 0 else range(len(schema.attributes) + count, len(schema.attributes))


def meka_label_positions(schema: Schema) -> tuple[int, ...]:
    """The positions of the label attributes MEKA's ``-C`` in ``schema``'s relation name names (none without it)."""
    count = meka_label_count(schema.relation)
    return () if count is None else tuple(meka_positions(schema, count))


def check_label_attribute(attribute: Attribute, named_by: str) -> None:
    """FilterkitError unless ``attribute`` is nominal ``{0,1}``."""
    if attribute.kind != NOMINAL or tuple(attribute.labels) != LABEL_VALUES:
        declared = "{" + ",".join(attribute.labels) + "}" if attribute.kind == NOMINAL else attribute.kind
        target = ": multi-target data (labels of other values) is not supported" if attribute.kind == NOMINAL else ""
        raise ArffError(f"label attribute {shown(attribute.name)} ({named_by}) is {declared}, not {{0,1}}{target}")


def label_names(schema: Schema, named: NamedLabels | None = None) -> tuple[str, ...]:
    """The label attributes' names: ``named`` (Mulan's XML), else MEKA's ``-C`` in the relation name,
    else none; FilterkitError naming the file and line for a name the schema lacks or an attribute that
    is not ``{0,1}``."""
    if named is None:
        count = meka_label_count(schema.relation)
        if count is None:
            return ()
        check_meka_header(schema)
        return tuple(schema.attributes[position].name for position in meka_positions(schema, count))
    for name in named.names:
        try:
            check_label_attribute(schema.attributes[schema.index_of(name)], "--labels")
        except KeyError:
            raise FilterkitError(f"label {shown(name)}: the input has no attribute of that name", *named.where(name))
        except FilterkitError as error:
            raise FilterkitError(error.message, *named.where(name)) from None
    return named.names


#: Why ``-c`` does not apply to data with labels: they take the class's place.
LABELS_TAKE_THE_CLASS = "holds label sets (MEKA's -C in its relation name, or --labels), which take the class's place"


def refuse_class_choice(class_spec: str | None, name: str | None = None) -> None:
    """FilterkitError for ``-c`` other than the default on data with labels, where it would be ignored."""
    if class_spec not in (None, "last"):
        raise FilterkitError(f"-c {class_spec}: the data {LABELS_TAKE_THE_CLASS}: leave -c out", name)


def label_positions(schema: Schema, names: Sequence[str]) -> tuple[int, ...]:
    """The positions of the attributes called ``names`` in ``schema`` (those it holds), in schema order."""
    wanted = set(names)
    return tuple(position for position, attribute in enumerate(schema.attributes) if attribute.name in wanted)


def chosen_labels(stage, schema: Schema, labels: tuple[int, ...]) -> tuple[int, ...]:
    """The labels ``stage`` learns from: the one its ``--label`` names, else all of ``labels``."""
    named = stage.params.get("label")
    if named is None:
        return labels
    if stage.params.get("label_powerset"):
        raise FilterkitError(
            f"stage '{stage.name}': --label {shown(named)} learns from one label, --label-powerset from the sets of "
            "all of them: give one"
        )
    for position in labels:
        if schema.attributes[position].name == named:
            return (position,)
    known = ", ".join(shown(schema.attributes[position].name) for position in labels[:5])
    more = ", …" if len(labels) > 5 else ""
    raise FilterkitError(f"stage '{stage.name}': --label {shown(named)} is not a label of this data ({known}{more})")


def refuse_missing_labels(held: np.ndarray, rows_before: int, names: Sequence[str], output: str) -> None:
    """A FilterkitError for the first row of ``held`` (rows × labels: 1, 0 or NaN) where a label is missing, naming
    the row (counted after ``rows_before`` written) and the label; ``output`` is what cannot hold it."""
    if np.isnan(held).any():
        row, label = (int(at[0]) for at in np.nonzero(np.isnan(held)))
        raise FilterkitError(f"row {rows_before + row + 1} has a missing label ({shown(names[label])}), which {output}")


def mulan_labels(path: str) -> NamedLabels:
    """The label names of Mulan's XML file at ``path``, in document order (nested labels flattened);
    FilterkitError naming the file and line when it is not such a file (expat: no external entities)."""
    from xml.parsers import expat  # here: only Mulan's label files are XML

    names: list[str] = []
    lines: dict[str, int] = {}
    parser = expat.ParserCreate(namespace_separator="}")

    def start(tag: str, attributes: dict) -> None:
        line, local = parser.CurrentLineNumber, tag.rpartition("}")[2]
        if not names and not lines and local == "labels":
            lines[""] = line
            return
        if local != "label" or "name" not in attributes or not lines:
            expected = 'expected Mulan\'s <labels> holding <label name="..."> elements'
            raise FilterkitError(f"{expected}, found <{local}>", path, line)
        name = attributes["name"]
        if name in lines:
            raise FilterkitError(f"label {shown(name)} is named twice (first on line {lines[name]})", path, line)
        names.append(name)
        lines[name] = line

    parser.StartElementHandler = start
    try:
        with open(path, "rb") as opened:
            parser.ParseFile(opened)
    except expat.ExpatError as error:
        raise FilterkitError(f"not XML: {expat.ErrorString(error.code)}", path, error.lineno) from None
    except OSError as error:
        raise FilterkitError(f"cannot read the labels file: {error.strerror}", path) from None
    if not names:
        raise FilterkitError("the labels file names no label", path, 1)
    return NamedLabels(tuple(names), path, tuple(lines[name] for name in names))


def meka_layout(schema: Schema, names: Sequence[str]) -> tuple[Schema, list[int] | None]:
    """An output ``schema`` whose MEKA ``-C`` stays true: the label attributes (called ``names``, in that
    order) moved back where ``-C`` puts them (first for ``-C k``, last for ``-C -k``, after a stage that adds
    its attributes after the kept ones), ``-C`` counting those the chain kept; and the order to take each
    chunk's columns in (None: as they are)."""
    count = meka_label_count(schema.relation)
    if count is None:  # not MEKA's: a wide schema's names are not looked up
        return schema, None
    held = {attribute.name: position for position, attribute in enumerate(schema.attributes)}
    labels = [held[name] for name in names if name in held]
    if not labels:  # every label removed: the output is no longer MEKA's
        return Schema(without_meka_label_count(schema.relation), schema.attributes), None
    others = [position for position in range(len(schema.attributes)) if position not in set(labels)]
    order = labels + others if count > 0 else others + labels
    relation = with_meka_label_count(schema.relation, len(labels) if count > 0 else -len(labels))
    if order == sorted(order) and relation == schema.relation:
        return schema, None
    return Schema(relation, tuple(schema.attributes[position] for position in order)), order


def taken_columns(chunk: Chunk, order: list[int]) -> Chunk:
    """``chunk``'s columns in ``order`` (:func:`meka_layout`)."""
    if chunk.is_sparse:
        values = chunk.values.tocsr()[:, order]
        values.sort_indices()
    else:
        values = chunk.values[:, order]
    text = {new: chunk.text[old] for new, old in enumerate(order) if old in chunk.text}
    return Chunk(values, text, chunk.weights)


class LabelTally:
    """``filterkit info``'s statistics of multi-label rows, one pass: each label's rows, the labels per row
    and the distinct label sets (a missing label value counts as not held)."""

    def __init__(self, schema: Schema, positions: Sequence[int]):
        self.names = [schema.attributes[position].name for position in positions]
        self.positions = list(positions)
        self.rows = 0
        self.label_rows = np.zeros(len(positions), dtype=np.int64)
        #: each distinct label set, as its row of held labels packed into bytes
        self.sets: set[bytes] = set()

    def add(self, chunk: Chunk) -> None:
        """Count the labels of ``chunk``'s rows."""
        held = np.column_stack([chunk.column(position) == 1 for position in self.positions])
        self.rows += chunk.n_rows
        self.label_rows += held.sum(axis=0)
        packed = np.packbits(held, axis=1)
        self.sets.update(row.tobytes() for row in np.unique(packed, axis=0))

    def summary(self) -> dict:
        """Label cardinality (mean labels a row), density (cardinality / labels), distinct label sets and
        each label's rows and share of rows, as a JSON-ready dict."""
        rows = self.rows
        cardinality = float(self.label_rows.sum() / rows) if rows else None
        return {
            "count": len(self.names),
            "cardinality": cardinality,
            "density": None if cardinality is None else cardinality / len(self.names),
            "distinct_sets": len(self.sets),
            "frequency": [
                {"label": name, "rows": int(count), "percent": 100.0 * int(count) / rows if rows else 0.0}
                for name, count in zip(self.names, self.label_rows.tolist())
            ],
        }


def label_summary_lines(labels: dict | None) -> list[str]:
    """``info``'s lines of a :meth:`LabelTally.summary` (none for single-label data)."""
    if labels is None:
        return []
    width = max(len(entry["label"]) for entry in labels["frequency"])
    cardinality = "n/a" if labels["cardinality"] is None else f"{labels['cardinality']:.4g}"
    density = "n/a" if labels["density"] is None else f"{labels['density']:.4g}"
    return [
        f"labels:      {labels['count']} (MEKA's -C): cardinality {cardinality} a row, density {density}, "
        f"{labels['distinct_sets']} distinct label sets",
        *(f"  {e['label']:<{width}}  {e['rows']:>8}  {e['percent']:6.2f}%" for e in labels["frequency"]),
    ]


#: How each label's scores are scaled before they are combined (Mulan's ``BinaryRelevanceAttributeEvaluator``).
NORMALIZE_CHOICES = ("none", "length", "max")
#: ``--label``, ``--normalize`` and ``--label-powerset``: a supervised stage's options on multi-label data.
LABEL_OPTIONS = (
    Option("label", str, None, "Multi-label data: learn from this label alone (its one-vs-rest task)."),
    Option(
        "normalize",
        str,
        "none",
        "Multi-label data: divide each label's scores by their Euclidean length or their largest before "
        "--combine (Mulan's binary relevance normalizations 'dl' and 'dm').",
        choices=NORMALIZE_CHOICES,
    ),
    Option(
        "label_powerset",
        bool,
        False,
        "Multi-label data: each distinct set of labels a row carries is one class (the label powerset), scored "
        "as a class of that many labels (--combine joint by default for ig, chi and igm).",
    ),
)


def refuse_label_options(stage, context) -> None:
    """A FilterkitError where ``stage`` is given one of :data:`LABEL_OPTIONS` on data without labels (a class, or
    none): they are multi-label data's, and had been ignored without a word (``bns --label foo`` on iris)."""
    if context.labels:
        return
    given = next((o for o in stage.options if o in LABEL_OPTIONS and stage.params.get(o.name) != o.default), None)
    if given is not None:
        held = "data with a class" if context.class_index is not None else "data with neither a class nor labels"
        # the flag before a comma: scikit-learn's adapters spell "--label word" as "label=word"
        raise FilterkitError(f"stage '{stage.name}': {given.flag}, an option of multi-label data, is given on {held}")
