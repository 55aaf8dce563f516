"""Whole files as scikit-learn's ``(X, y, feature_names)``, or ``(X, y, feature_names, sample_weight)`` with the rows'
instance weights (docs/sklearn.md): :func:`load` reads any file the command line reads, :func:`load_arff` an ARFF file;
both are importable from :mod:`filterkit.sklearn`."""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import warnings
from typing import BinaryIO, ContextManager

import numpy as np
import scipy.sparse as sp

from filterkit.arff import read_arff
from filterkit.arff.reader import DEFAULT_CHUNK_ROWS
from filterkit.formats import ARFF, FormatOptions, format_of, registered, scanned_format
from filterkit.labels import label_names, label_positions, mulan_labels
from filterkit.runner import resolve_class
from filterkit.schema import NOMINAL, Attribute, Chunk, Schema, concatenate


class Loaded(tuple):
    """What :func:`load` and :func:`load_arff` return: the tuple ``(X, y, feature_names)``, or with
    ``sample_weight`` (``return_weights=True``) ``(X, y, feature_names, sample_weight)``; and in ``label_names``
    the names of multi-label data's labels, Y's columns (``()`` for data with a class)."""

    label_names: tuple[str, ...]

    def __new__(cls, X, y, feature_names: list[str], label_names: tuple[str, ...] = (), sample_weight=None):
        loaded = super().__new__(cls, (X, y, feature_names) + (() if sample_weight is None else (sample_weight,)))
        loaded.label_names = tuple(label_names)
        return loaded

    def __getnewargs__(self):
        return (*self[:3], self.label_names, *self[3:])


def load(
    path,
    class_: str | int | None = "last",
    as_frame: bool = False,
    format: str | None = None,
    labels: str | os.PathLike | None = None,
    return_weights: bool = False,
    **format_options,
) -> Loaded:
    """Any file the command line reads (docs/sklearn.md), in ``format`` (``--from``'s names; None: by its
    name, as the command line decides) with the formats' reading options ``format_options`` (``text=``,
    ``nominal=``, ``numeric=``, ``zero_based=``, ``labels_column=``; TypeError for one the format does not take), as
    ``(X, y, feature_names)``: see :func:`load_arff`, also for ``labels`` (Mulan's XML) and ``return_weights``."""
    options = FormatOptions(None if class_ is None else str(class_), **format_options)
    read_as = format_of(os.fspath(path), format) if isinstance(path, (str, os.PathLike)) else ARFF
    untaken = options.untaken(read_as)
    if untaken is not None:
        raise TypeError(f"load: {read_as} input does not take the format option {untaken}={options.given[untaken]!r}")
    return _loaded(_read_whole(path, format, options), options.class_spec, as_frame, "load", labels, return_weights)


def load_arff(
    path,
    class_: str | int | None = "last",
    as_frame: bool = False,
    labels: str | os.PathLike | None = None,
    return_weights: bool = False,
) -> Loaded:
    """An ARFF file (plain or gzip) as ``(X, y, feature_names)``, the class picked by ``class_`` as ``-c``
    does (docs/sklearn.md); ``as_frame=True`` gives a pandas DataFrame and a Series whose categories are the
    class's labels in the header's order (a numpy y holds the labels, which the adapters order sorted).  On
    multi-label data (MEKA's ``-C``, or the labels Mulan's XML file ``labels`` names, as ``--labels``) y is the
    label matrix Y, one column per label, and the result's ``label_names`` names them; ``class_`` is not used.
    ``return_weights=True`` adds the rows' instance weights (``{w}``; 1 where none), for ``fit``'s ``sample_weight``:
    without it, a file with a weight other than 1 gives a warning, as X and y leave the weights out."""
    class_spec = None if class_ is None else str(class_)
    return _loaded(read_arff(path), class_spec, as_frame, "load_arff", labels, return_weights)


def _read_whole(path, format_name: str | None, options: FormatOptions) -> tuple[Schema, Chunk]:
    """The schema and every row of the file at ``path`` (or of a binary stream, read in the default format), read
    as the command line reads it.  A format that streams (ARFF) is read as it comes in this thread: a reading
    thread's memory arena would stay with the process (a quarter more at its peak on a 36 MB file)."""
    from filterkit.running import open_source

    if isinstance(path, (str, os.PathLike)):
        read_as = format_of(os.fspath(path), format_name)
        if not registered(read_as).streams:
            with open_source(os.fspath(path), DEFAULT_CHUNK_ROWS, False, format_name, options) as source:
                schema = source.schema
                return schema, concatenate(list(source.chunks()), len(schema), schema.text_columns())
        opened: ContextManager[BinaryIO] = open(path, "rb")
        name = os.fspath(path)
    else:
        if isinstance(path, io.TextIOBase):
            raise TypeError("load: give a path or a binary stream (a file opened 'rb'), not a text stream")
        read_as, opened, name = ARFF, contextlib.nullcontext(path), str(getattr(path, "name", "<stream>"))
    with opened as stream:
        layout, chunks = scanned_format(read_as).streamed(stream, name, DEFAULT_CHUNK_ROWS)
        schema = layout.schema
        return schema, concatenate(list(chunks), len(schema), schema.text_columns())


def _loaded(
    read: tuple[Schema, Chunk], class_spec: str | None, as_frame: bool, caller: str, labels, return_weights: bool
) -> Loaded:
    """``(X, y, feature_names)`` of a whole file's schema and rows (``caller`` names the loader in its warnings),
    and the rows' weights when ``return_weights``; on multi-label data (the labels MEKA's ``-C`` or Mulan's XML file
    ``labels`` names) y is the label matrix."""
    schema, chunk = read
    weights = _row_weights(chunk, return_weights, caller)
    names_of_labels = label_names(schema, None if labels is None else mulan_labels(os.fspath(labels)))
    targets = label_positions(schema, names_of_labels)
    class_index = None if targets else resolve_class(schema, class_spec)
    if class_index is not None:
        targets = (class_index,)
    features = [position for position in range(len(schema.attributes)) if position not in targets]
    names = [schema.attributes[position].name for position in features]
    X = chunk.values[:, features]
    y = None if class_index is None else _class_values(schema.attributes[class_index], chunk.column(class_index))
    if class_index in chunk.text:
        y = np.array(chunk.text[class_index], dtype=object)
    if names_of_labels:  # Y's columns in the attributes' order, as the chain takes the labels
        names_of_labels = tuple(schema.attributes[position].name for position in targets)
        y = chunk.values[:, list(targets)]
        y = sp.csr_matrix(y) if sp.issparse(y) else np.asarray(y, dtype=np.float64)
    if as_frame:
        frame, target = _as_frame(schema, features, names, X, chunk.text, class_index, y, caller, names_of_labels)
        return Loaded(frame, target, names, names_of_labels, weights)
    return Loaded(_feature_array(schema, features, X, chunk.text, caller), y, names, names_of_labels, weights)


def _row_weights(chunk: Chunk, return_weights: bool, caller: str) -> np.ndarray | None:
    """The rows' instance weights (float64, 1 where a row has none) when ``return_weights``, else None, with a
    warning where a weight is not 1: the adapters would fit the rows unweighted, unlike the command line."""
    if return_weights:
        return np.ones(chunk.n_rows) if chunk.weights is None else np.asarray(chunk.weights, dtype=np.float64)
    if chunk.weights is not None and np.any(chunk.weights != 1):
        warnings.warn(
            f"{caller}: the rows carry instance weights other than 1, which X and y leave out and the command line "
            f"uses: {caller}(..., return_weights=True) gives them, for fit(X, y, sample_weight=...)",
            stacklevel=4,
        )
    return None


def _feature_array(schema: Schema, features: list[int], X, text: dict, caller: str):
    """X, the values of the attributes at ``features`` (CSR if sparse), as objects holding the ``text`` of
    text attributes; a warning that nominal attributes are their label positions."""
    nominal = [schema.attributes[position].name for position in features if schema.attributes[position].kind == NOMINAL]
    if nominal:
        warnings.warn(
            f"{caller}: X holds the label positions of the nominal attributes {', '.join(map(repr, nominal))}, "
            "which the adapters take as numbers; as_frame=True keeps them nominal",
            stacklevel=4,
        )
    texts = [k for k, position in enumerate(features) if position in text]
    if texts:
        X = (X.toarray() if sp.issparse(X) else np.asarray(X)).astype(object)
        for k in texts:
            X[:, k] = text[features[k]]
    return sp.csr_matrix(X) if sp.issparse(X) else np.asarray(X)


def _class_values(attribute: Attribute, codes: np.ndarray) -> np.ndarray:
    """A class column as y: labels (None for missing) for a nominal class, else numbers."""
    if attribute.kind != NOMINAL:
        return codes
    labels = np.array([*attribute.labels, None], dtype=object)
    return labels[np.where(np.isnan(codes), len(attribute.labels), codes).astype(np.intp)]


def _as_frame(
    schema: Schema,
    features: list[int],
    names: list[str],
    X,
    text: dict,
    class_index: int | None,
    y,
    caller: str,
    label_names: tuple[str, ...] = (),
):
    """``(X, y)`` as a pandas DataFrame and Series (None without a class), or with ``label_names`` X and the
    label matrix y as a DataFrame of nullable ``Int8`` columns named by the labels."""
    try:
        pd = importlib.import_module("pandas")
    except ImportError:
        raise ImportError(f"{caller}(as_frame=True) needs pandas: pip install pandas") from None
    if sp.issparse(X):
        frame = pd.DataFrame.sparse.from_spmatrix(sp.csr_matrix(X), columns=names)
    else:
        frame = pd.DataFrame(np.asarray(X), columns=names)
    for name, position in zip(names, features):
        attribute = schema.attributes[position]
        if attribute.kind == NOMINAL:
            codes = frame[name].sparse.to_dense() if sp.issparse(X) else frame[name]
            frame[name] = pd.Categorical.from_codes(codes.fillna(-1).astype(int), categories=list(attribute.labels))
        elif position in text:
            frame[name] = pd.array(text[position], dtype="string")
    target = None
    if label_names:
        target = pd.DataFrame(y.toarray() if sp.issparse(y) else y, columns=list(label_names)).astype("Int8")
    if class_index is not None:
        attribute = schema.attributes[class_index]
        labels = list(attribute.labels) if attribute.kind == NOMINAL else None
        target = pd.Series(pd.Categorical(y, categories=labels) if labels else y, name=attribute.name)
    return frame, target
