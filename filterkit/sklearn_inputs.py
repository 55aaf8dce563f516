"""How the scikit-learn adapters read what they are given (:mod:`filterkit.sklearn`): X's columns as attributes and
chunk values (documents and categories as text and nominal attributes, the document path), and y as a class or a
label matrix Y of 0 and 1 (the label path)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from filterkit.schema import NOMINAL, NUMERIC, STRING, Attribute, shown_labels, shown_name


def x_columns(X, always: bool) -> tuple[list | None, bool]:
    """X's columns when it holds text or categories (or ``always``, unless sparse), None for numeric X;
    and whether X is one sequence of documents, as ``CountVectorizer`` takes.

    The one place X's form is decided: a list of strings becomes an array of references to them, never
    a unicode array (which holds every document at the longest one's width: 2 GB for 5,000 short
    documents and one of 100,000 characters)."""
    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        columns = [X.iloc[:, j] for j in range(X.shape[1])]
        unnumeric = [c for c in columns if getattr(c.dtype, "kind", "O") == "O"]
        if always or any(str(c.dtype) == "category" or holds_text(np.asarray(c, dtype=object)) for c in unnumeric):
            return columns, False
        return None, False
    if sp.issparse(X):
        return None, False
    array = X if isinstance(X, np.ndarray) and X.dtype != object else np.asarray(X, dtype=object)
    if _are_documents(array):
        return [array], True
    if always or (array.dtype == object and array.ndim == 2 and any(holds_text(c) for c in array.T)):
        return list(_as_matrix(array).T), array.ndim == 1
    return None, False


def _are_documents(array: np.ndarray) -> bool:
    """Whether ``array`` is one sequence of documents: 1-D, holding text or only missing documents (None); a
    sequence of numbers is none."""
    return array.ndim == 1 and (holds_text(array) or (len(array) > 0 and all(cell is None for cell in array.tolist())))


def _as_matrix(array: np.ndarray) -> np.ndarray:
    """A 1-D array as one column (an empty one too), else each row's values flattened into columns."""
    return array[:, None] if array.ndim == 1 else array.reshape(len(array), -1)


def stored_once(matrix):
    """A sparse ``matrix`` with each entry stored once (a copy, where scipy held one twice and added the two up; the
    adapters read its stored entries one by one); anything else as it is."""
    if sp.issparse(matrix) and matrix.format in ("csr", "csc") and not matrix.has_canonical_format:
        matrix = matrix.copy()
        matrix.sum_duplicates()
    return matrix


def holds_text(cells: np.ndarray) -> bool:
    return any(isinstance(cell, str) for cell in cells.tolist())


def as_targets(y):
    """y as given when it is an array, a Series or a DataFrame (a label matrix), else as an array of references
    to its values: a list of labels made a unicode array would hold each at the longest one's width.  A class
    column with missing values (NaN, ``pd.NA``: a frame's ``?``) is an array of references with None for each,
    which scikit-learn's checks pass and the adapters leave out of the class counts."""
    if y is None or hasattr(y, "columns") or sp.issparse(y):
        return y
    y = y if hasattr(y, "dtype") else np.asarray(y, dtype=object)
    if len(getattr(y, "shape", ())) != 1:
        return y
    if hasattr(y, "isna"):  # a Series, of any dtype (nullable integers hold pd.NA)
        missing = np.asarray(y.isna(), dtype=bool)
    elif y.dtype.kind == "f":
        missing = np.isnan(y)
    elif y.dtype.kind == "O":
        missing = np.array([is_missing(cell) for cell in y.tolist()], dtype=bool)
    else:
        return y
    if not missing.any():
        return y
    cells = np.asarray(y, dtype=object).copy()
    cells[missing] = None
    return cells


def categories_of(y) -> tuple[str, ...] | None:
    """The categories of a pandas Categorical y (or a Series of one) in their order, spelled ``str``, those no row
    has included; None for y of any other type (its labels have no order of their own)."""
    if str(getattr(y, "dtype", "")) != "category":
        return None
    return tuple(str(category) for category in getattr(y, "cat", y).categories)


def known_targets(y) -> np.ndarray:
    """y without its missing values; labels of text as an object array of strings."""
    y = np.asarray(y, dtype=object) if not isinstance(y, np.ndarray) else y
    if y.ndim != 1:
        return y
    kept = [value for value in y.tolist() if not is_missing(value)]
    # Rebuilt from the kept values so that numpy infers the type of numbers: a list of ints left as an
    # object array is a target of "unknown" type to scikit-learn, and y would be ignored.  Text is
    # spelled as numpy would (str), in an object array.
    if any(isinstance(value, str) for value in kept):
        return np.array([str(value) for value in kept], dtype=object)
    return np.asarray(kept)


def is_missing(cell) -> bool:
    return cell is None or (isinstance(cell, float) and cell != cell) or type(cell).__name__ == "NAType"


def column_attribute(name: str, column) -> Attribute:
    """A column's attribute: nominal for a categorical column, string for one holding text, else numeric."""
    if str(getattr(column, "dtype", "")) == "category":
        return Attribute(name, NOMINAL, labels=tuple(str(label) for label in column.cat.categories))
    if holds_text(np.asarray(column, dtype=object)):
        return Attribute(name, STRING)
    return Attribute(name, NUMERIC, declared_type="numeric")


def table_values(attributes, columns) -> tuple[np.ndarray, dict[int, list]]:
    """Columns as chunk values and text for ``attributes``; ValueError naming a column's unfit value."""
    values = np.zeros((len(columns[0]) if columns else 0, len(columns)))
    text: dict[int, list] = {}
    for position, (attribute, column) in enumerate(zip(attributes, columns)):
        if attribute.kind == NUMERIC and getattr(column, "dtype", np.dtype(object)).kind in "biuf":
            values[:, position] = np.asarray(column, dtype=np.float64)
            continue
        cells = np.asarray(column, dtype=object).tolist()
        missing = [is_missing(cell) for cell in cells]
        accepts, code, expected = _cell_reader(attribute)
        wrong = [cell for cell, gap in zip(cells, missing) if not gap and not accepts(cell)]
        if wrong:
            raise ValueError(
                f"column {shown_name(attribute.name)} holds {shown_name(str(wrong[0]))}, which is not {expected} "
                "(as when fitted)"
            )
        if attribute.kind == STRING:
            text[position] = [None if gap else cell for cell, gap in zip(cells, missing)]
        values[:, position] = [np.nan if gap else code(cell) for cell, gap in zip(cells, missing)]
    return values, text


def _cell_reader(attribute: Attribute) -> tuple[Callable, Callable, str]:
    """Whether a present cell suits ``attribute``, its chunk value, and what it should be (for messages)."""
    if attribute.kind == STRING:
        return (lambda cell: isinstance(cell, str)), (lambda cell: 0.0), "text"
    if attribute.kind == NOMINAL:
        index = {label: float(k) for k, label in enumerate(attribute.labels)}
        expected = f"one of its categories {shown_labels(attribute.labels)}"
        return (lambda cell: str(cell) in index), (lambda cell: index[str(cell)]), expected
    number = (int, float, np.integer, np.floating, np.bool_)
    return (lambda cell: isinstance(cell, number)), (lambda cell: cell), "a number"


def with_targets(X, targets, n_targets: int):
    """X as chunk values, with the ``n_targets`` columns of y appended: the class's codes or a label matrix's
    values (``targets``), or missing values (None)."""
    X = sp.csr_matrix(X) if sp.issparse(X) else X
    if not n_targets:
        return X
    if sp.issparse(targets):
        return sp.hstack([X, targets], format="csr") if sp.issparse(X) else np.hstack([X, targets.toarray()])
    columns = np.full((X.shape[0], n_targets), np.nan) if targets is None else targets.reshape(len(targets), -1)
    return sp.hstack([X, sp.csr_matrix(columns)], format="csr") if sp.issparse(X) else np.hstack([X, columns])


def is_label_matrix(y) -> bool:
    """True for a label matrix: sparse, or two-dimensional with more than one column (scikit-learn's
    multi-label targets; one column is a column of labels)."""
    return y is not None and (sp.issparse(y) or (len(getattr(y, "shape", ())) == 2 and y.shape[1] > 1))


def label_values(Y, where: str):
    """A label matrix's values as float64, CSR if sparse; ValueError for values that are not numbers."""
    if hasattr(Y, "columns"):
        return Y.to_numpy(dtype=np.float64, na_value=np.nan)
    if sp.issparse(Y):
        if Y.dtype.kind not in "biuf":
            raise ValueError(f"{where}: Y holds {Y.dtype}, not numbers: a label matrix holds 0 and 1")
        return stored_once(sp.csr_matrix(Y, dtype=np.float64))
    array = np.asarray(Y)
    if array.dtype.kind in "biuf":
        return np.asarray(array, dtype=np.float64)
    if array.dtype.kind != "O" or holds_text(array.ravel()):
        raise ValueError(f"{where}: Y holds text, not numbers: a label matrix holds 0 and 1")
    try:
        return np.asarray(np.where(array == None, np.nan, array), dtype=np.float64)  # noqa: E711  # None: not known
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"{where}: Y holds something other than numbers ({error}): a label matrix holds 0 and 1"
        ) from None


def refuse_unlabelled_values(values, names: list[str], where: str) -> None:
    """ValueError naming the first value of a label matrix other than 0, 1 and NaN (not known), its row and label."""
    cells = values.data if sp.issparse(values) else values
    wrong = (cells != 0) & (cells != 1) & ~np.isnan(cells)
    if not wrong.any():
        return
    if sp.issparse(values):
        coordinates = values.tocoo()  # its entries in the order of values.data
        found = np.flatnonzero(wrong)
        first = found[np.lexsort((coordinates.col[found], coordinates.row[found]))[0]]
        row, column = coordinates.row[first], coordinates.col[first]
    else:
        row, column = np.argwhere(wrong)[0]
    raise ValueError(
        f"{where}: Y holds {values[row, column]:g} in row {row} for the label {names[column]!r}: "
        "a label matrix holds 0 and 1 (NaN: not known)"
    )
