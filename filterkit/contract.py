"""The stage contract, checked on every chunk every stage returns.

What a stage hands on must be something the next stage and the writer can trust: a
:class:`~filterkit.schema.Chunk` of float64 values (a 2-D array, a CSR matrix or CSR arrays);
as many rows as it was given (unless the stage declares ``filters_rows``), one weight per row;
the output schema's columns, a text column per string or relational attribute, only label codes
or NaN in nominal attributes; and the class attribute kept, declaration and values (unless the
stage declares ``changes_class``).  The schema rules are checked once per pass
(:meth:`OutputContract.of`), the chunk rules on each chunk in linear time; a violation is a
:class:`ContractError` naming the stage, its plugin and distribution.
"""

from __future__ import annotations

import pickle
import reprlib
import signal
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from filterkit.errors import FilterkitError
from filterkit.schema import NOMINAL, Chunk, CsrArrays, Schema, column_of, describe, is_sparse_matrix, shown_name


class ContractError(FilterkitError):
    """A stage returned something the stage contract does not allow."""


class PluginCrash(FilterkitError):
    """A plugin's code failed where a model is read: its plugin's fault, not the model file's."""


#: What a plugin's ``load_state`` raises for a saved state that does not fit it: the model file's fault.
STATE_MISFITS = (KeyError, TypeError, ValueError, IndexError, OverflowError)


def stage_origin(stage) -> str:
    """How an error names a stage: ``stage 'x' (plugin 'p', distribution 'd 1.0')``, or by its class."""
    origin = (
        stage.provenance
        if stage.provenance is not None
        else f"class {type(stage).__module__}.{type(stage).__qualname__}"
    )
    return f"stage '{stage.name}' ({origin})"


def plugin_fault(error: BaseException) -> bool:
    """Whether ``error``, raised out of a plugin's code, is the plugin's fault: any exception,
    ``SystemExit`` and ``GeneratorExit`` too, and a ``KeyboardInterrupt`` no signal raised (the console
    script handles SIGTERM until a stopping signal comes; a program with Python's handlers gets Ctrl-C; a
    process that ignores Ctrl-C and has no Python handler for SIGTERM, as a ``--jobs`` worker, gets none; nor does
    a thread but the main one, where Python runs every signal handler: a Dask worker's task threads)."""
    if isinstance(error, KeyboardInterrupt):
        if threading.current_thread() is not threading.main_thread():
            return True
        terminate = signal.getsignal(signal.SIGTERM)
        unraised = signal.getsignal(signal.SIGINT) is signal.SIG_IGN and terminate is not signal.SIG_IGN
        return callable(terminate) or unraised
    return isinstance(error, (Exception, SystemExit, GeneratorExit))


@dataclass(frozen=True)
class Declared:
    """What an attribute a plugin declares (a stage's ``learns``, a metric's ``joint``…) must be: a value
    ``fits`` accepts, said as ``expected`` in the error."""

    fits: Callable[[Any], bool]
    expected: str


def declared_type(*types: type, expected: str) -> Declared:
    """The declaration of an attribute that is an instance of one of ``types`` (a bool is no int here)."""
    return Declared(lambda value: isinstance(value, types) and (bool in types or not isinstance(value, bool)), expected)


DECLARED_BOOL = declared_type(bool, expected="True or False")


def declaration_problem(thing: Any, declarations: dict[str, Declared]) -> str | None:
    """Why ``thing``, made or registered by a plugin, does not declare its attributes as ``declarations``
    says (reading one raised, or it is of another type), or None; a FilterkitError it raises is raised."""
    for attribute, declared in declarations.items():
        try:
            value = getattr(thing, attribute)
        except FilterkitError:
            raise
        except BaseException as error:
            if not plugin_fault(error):
                raise
            return f"reading its {attribute} raised {type(error).__name__}: {error}"
        if not declared.fits(value):
            return f"its {attribute} is {reprlib.repr(value)} ({type(value).__name__}), expected {declared.expected}"
    return None


def declared(stage, attribute: str, declaration: Declared = DECLARED_BOOL) -> Any:
    """``stage``'s ``attribute``, which the chain reads (``learns``, ``accepts``…); a FilterkitError naming the
    stage and its plugin when reading it raises or it is not as ``declaration`` says (by default a bool)."""
    problem = declaration_problem(stage, {attribute: declaration})
    if problem is not None:
        raise FilterkitError(f"{stage_origin(stage)}: {problem}")
    return getattr(stage, attribute)


def called(origin: str, step: str, function, *args):
    """``function(*args)``, a crash of the plugin (:func:`plugin_fault`) becoming a FilterkitError naming ``origin``,
    caused by the crash where pickle can take it (a Dask task's error crosses with its cause, and one that cannot
    had come back as a bare ``Exception``: a traceback)."""
    try:
        return function(*args)
    except FilterkitError:
        raise
    except BaseException as error:
        if not plugin_fault(error):
            raise
        fault = FilterkitError(f"{origin} failed during {step}: {type(error).__name__}: {error}")
        cause = crossing_cause(error)
    raise fault from cause  # outside the handler: no context that pickle cannot take


def crossing_cause(error: BaseException) -> BaseException | None:
    """``error`` as the cause of the FilterkitError a plugin's crash becomes, where pickle can take it (a Dask task's
    error crosses to the client with its cause), else None: raise it outside the handler, so that no context is kept."""
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        return None
    return error


def broken(stage, step: str, what: str) -> ContractError:
    """The error for a contract violation of ``stage`` during ``step``."""
    return ContractError(f"{stage_origin(stage)} broke the stage contract during {step}: {what}")


class OutputContract:
    """What the chunks of one fitted stage must look like (see the module docstring)."""

    def __init__(self, stage, schema: Schema, class_in: int | None, class_out: int | None):
        self.stage = stage
        #: The stage's ``changes_class`` and ``filters_rows``, read once (:func:`declared`).
        self.changes_class = declared(stage, "changes_class")
        self.filters_rows = declared(stage, "filters_rows")
        self._laid_out(schema, class_in, class_out)

    def _laid_out(self, schema: Schema, class_in: int | None, class_out: int | None) -> None:
        """What the checks read of ``schema``: its width, text columns and each nominal column's labels."""
        self.schema = schema
        self.n_columns = len(schema)
        self.text_columns = frozenset(schema.text_columns())
        self.class_in = class_in
        self.class_out = class_out
        nominal = schema.positions_of(NOMINAL)  # by the schema's kinds: a listing of 150,000 attributes took 15 ms
        self.nominal_columns = nominal if self.changes_class or class_out is None else nominal[nominal != class_out]
        self._limit_by_column = np.full(self.n_columns, np.inf)  # a nominal column's labels, inf for the others
        self._limit_by_column[self.nominal_columns] = [
            len(schema.attributes[i].labels) for i in self.nominal_columns.tolist()
        ]

    @classmethod
    def of(cls, stage, step: str = "transform") -> "OutputContract":
        """The contract of a prepared (and, if it learns, fitted) stage; checks its output schema."""
        schema = stage.output_schema()
        if not isinstance(schema, Schema):
            raise broken(stage, step, f"output_schema() returned a {type(schema).__name__}, expected a Schema")
        class_in = stage.context.class_index
        class_out = None
        if class_in is not None:
            class_attribute = stage.input_schema.attributes[class_in]
            named = (i for i, attribute in enumerate(schema.attributes) if attribute.name == class_attribute.name)
            class_out = next(named, None)
            if not declared(stage, "changes_class"):
                if class_out is None:
                    raise broken(
                        stage, step, f"its output schema dropped the class attribute {describe(class_attribute)}"
                    )
                if not schema.attributes[class_out].same_declaration(class_attribute):
                    raise broken(
                        stage,
                        step,
                        f"its output schema changed the class attribute from {describe(class_attribute)} "
                        f"to {describe(schema.attributes[class_out])}",
                    )
        return cls(stage, schema, class_in, class_out)

    def class_before(self, given: Chunk, known: np.ndarray | None = None) -> np.ndarray | None:
        """The class column of ``given`` before the stage runs (a copy, so that a change in place is caught
        too), or ``known``, as the previous check read it; None when the stage may change it or there is none."""
        if self.class_in is None or self.class_out is None or self.changes_class:
            return None
        return input_class_column(self.stage, given) if known is None else known

    def class_entries(self, rows: CsrArrays) -> np.ndarray | None:
        """The positions of the class column's entries among the stored values of ``rows`` (None without a class)."""
        return None if self.class_in is None else np.flatnonzero(rows.indices == self.class_in)

    def checked(
        self, given: Chunk, result, step: str = "transform", class_before: np.ndarray | None = None
    ) -> tuple[Chunk, np.ndarray | None]:
        """``result`` when it is a chunk this stage may return for ``given``, else ContractError; and the
        result's class column (a copy) where ``class_before`` was given, for the next stage's check."""
        if not isinstance(result, Chunk):
            raise self._broken(step, f"transform returned {_kind_of(result)}, expected a filterkit Chunk")
        values = self._values(result, step)
        rows, columns = values.shape
        if rows != given.n_rows and not self.filters_rows:
            raise self._broken(
                step,
                f"it was given {given.n_rows} rows and returned {rows} "
                "(a stage that drops or adds rows declares filters_rows = True)",
            )
        if columns != self.n_columns:
            raise self._broken(step, f"it returned {columns} columns; its output schema declares {self.n_columns}")
        if result.weights is not None and np.shape(result.weights) != (rows,):
            raise self._broken(step, f"it returned weights of shape {np.shape(result.weights)} for {rows} rows")
        self._check_text(result, rows, step)
        self._check_labels(result.csr() if result.is_sparse else values, step)
        if self.class_in is None or self.class_out is None or rows != given.n_rows or self.changes_class:
            return result, None
        class_after = None
        if class_before is not None:
            class_after = np.array(column_of(_rows_of(result), self.class_out), dtype=np.float64, copy=True)
            unchanged = np.array_equal(class_before, class_after, equal_nan=True)
        else:
            unchanged = _same_column(_rows_of(given), self.class_in, _rows_of(result), self.class_out)
        if not unchanged:
            raise self._broken(
                step, "it changed the class column's values (a stage that does declares changes_class = True)"
            )
        return result, class_after

    def _values(self, result: Chunk, step: str) -> Any:
        """The chunk's values, checked to be float64 CSR arrays, a CSR matrix or a 2-D array."""
        values: Any = result.csr() if result.is_sparse and not result.has_matrix else result.values
        if isinstance(values, CsrArrays):
            self._check_arrays(values, step)
        elif is_sparse_matrix(values):
            if values.format != "csr":
                raise self._broken(step, f"transform returned a sparse {values.format.upper()} matrix, expected CSR")
        elif not isinstance(values, np.ndarray) or values.ndim != 2:
            raise self._broken(step, f"the chunk's values are {_kind_of(values)}, expected a 2-D array or CSR matrix")
        dtype = values.data.dtype if isinstance(values, CsrArrays) else values.dtype
        if dtype != np.float64:
            raise self._broken(step, f"the chunk's values are {dtype}, expected float64")
        return values

    def _check_arrays(self, arrays: CsrArrays, step: str) -> None:
        """CSR arrays that make a matrix: 1-D, ``indptr`` rising from 0 to the entries, indices in range."""
        if not all(isinstance(a, np.ndarray) for a in (arrays.data, arrays.indices, arrays.indptr)):
            kinds = ", ".join(_kind_of(a) for a in (arrays.data, arrays.indices, arrays.indptr))
            raise self._broken(step, f"the chunk's CSR arrays are {kinds}, expected numpy arrays")
        data, indices, indptr = arrays.data, arrays.indices, arrays.indptr
        n_rows, n_columns = arrays.shape
        problem = None
        if data.ndim != 1 or indices.ndim != 1 or indptr.ndim != 1:
            problem = "are not one-dimensional"
        elif indices.dtype not in _INDEX_TYPES or indptr.dtype not in _INDEX_TYPES:
            problem = f"have indices of {indices.dtype} and indptr of {indptr.dtype}, expected int32 or int64"
        elif len(indptr) != n_rows + 1 or len(indices) != len(data):
            problem = (
                f"hold {len(indptr)} row starts for {n_rows} rows and {len(indices)} indices for {len(data)} values"
            )
        elif indptr[0] != 0 or indptr[-1] != len(data) or (np.diff(indptr) < 0).any():
            problem = f"have row starts that do not rise from 0 to {len(data)}"
        elif len(indices) and (indices.min() < 0 or indices.max() >= n_columns):
            problem = f"hold a column index outside 0 to {n_columns - 1}"
        if problem is not None:
            raise self._broken(step, f"the chunk's CSR arrays {problem}")

    def _check_text(self, result: Chunk, rows: int, step: str) -> None:
        lengths = result.text_lengths()
        if set(lengths) != self.text_columns:
            raise self._broken(
                step,
                f"its text side columns are {sorted(lengths)}; its output schema's string and "
                f"relational attributes are at {sorted(self.text_columns)}",
            )
        for column, length in lengths.items():
            if length != rows:
                raise self._broken(step, f"text side column {column} holds {length} values for {rows} rows")

    def _check_labels(self, values, step: str) -> None:
        if not len(self.nominal_columns):
            return
        if isinstance(values, CsrArrays):
            in_nominal = np.isfinite(self._limit_by_column[values.indices])
            codes = values.data[in_nominal]
            columns = values.indices[in_nominal]
            limits = self._limit_by_column[columns]
        else:  # a broadcast row of limits: no per-cell lookup on this every-chunk path
            block = values[:, self.nominal_columns]
            codes = block.ravel()
            columns = np.broadcast_to(self.nominal_columns, block.shape).ravel()
            limits = np.broadcast_to(self._limit_by_column[self.nominal_columns], block.shape).ravel()
        present = ~np.isnan(codes)
        bad = present & ((codes < 0) | (codes >= limits) | (codes != np.floor(codes)))
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise self._broken(
                step,
                f"attribute {int(columns[first]) + 1} is nominal with {int(limits[first])} labels, "
                f"and a value came back as {float(codes[first])!r} "
                f"(a label's position, 0 to {int(limits[first]) - 1}, or NaN)",
            )

    def _broken(self, step: str, what: str) -> ContractError:
        return broken(self.stage, step, what)


#: The integer types of a chunk's CSR index arrays (scipy's, and what the compiled parts read).
_INDEX_TYPES = (np.dtype(np.int32), np.dtype(np.int64))


def input_class_column(stage, chunk: Chunk) -> np.ndarray | None:
    """The class column of ``chunk``, a stage's input, as :meth:`OutputContract.class_before` reads it (a copy),
    before the stage is fitted; None when the stage may change it or there is none."""
    if declared(stage, "changes_class") or stage.context.class_index is None:
        return None
    return np.array(column_of(_rows_of(chunk), stage.context.class_index), dtype=np.float64, copy=True)


def _rows_of(chunk: Chunk):
    """A chunk's values as the contract compares them: CSR arrays for a sparse chunk, else the array."""
    return chunk.csr() if chunk.is_sparse else chunk.values


def _same_column(given, given_index: int, result, result_index: int) -> bool:
    """Whether column ``given_index`` of ``given`` equals column ``result_index`` of ``result`` (NaN = NaN)."""
    if (
        isinstance(given, CsrArrays)
        and isinstance(result, CsrArrays)
        and given_index == result_index
        and result.indices is given.indices
        and result.indptr is given.indptr
    ):
        entries = np.flatnonzero(given.indices == given_index)
        return np.array_equal(given.data[entries], result.data[entries], equal_nan=True)
    return np.array_equal(column_of(given, given_index), column_of(result, result_index), equal_nan=True)


def _text_of(text, missing: bool) -> bool:
    """Whether ``text`` is what a text column may hold for a value ``missing`` or not: a str that UTF-8 can write (no
    lone surrogate), or None where the value is missing."""
    if text is None:
        return missing
    if type(text) is not str:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _kind_of(value) -> str:
    if value is None:
        return "None"
    if isinstance(value, np.ndarray):
        return f"a {value.ndim}-D numpy array"
    return f"a {type(value).__module__}.{type(value).__qualname__}"


class ReadContract(OutputContract):
    """What the chunks a third-party format's reader yields must look like, as a stage's output must: the width of
    its layout's schema, float64 values, each nominal value (the class too) a label's position or NaN, a text
    column per string attribute, one weight a row."""

    def __init__(self, origin: str, schema: Schema):
        self.origin, self.stage = origin, None
        self.changes_class, self.filters_rows = True, True  # the class is read, not kept: its values are checked
        self._laid_out(schema, None, None)

    def layout(self, schema, comments) -> None:
        """A ContractError naming the format unless a scan's ``schema`` is one a reader of ARFF would take (distinct
        attribute names, each nominal attribute's labels distinct) and its ``comments`` are texts: repeated labels
        had written one row's class as another's, with status 0."""
        if not isinstance(schema, Schema):
            raise self._broken("scan", f"its Layout holds {_kind_of(schema)}, expected a Schema")
        if not isinstance(comments, (tuple, list)) or not all(isinstance(line, str) for line in comments):
            raise self._broken("scan", "its header comments are not all texts")
        names = [attribute.name for attribute in schema.attributes]
        repeated = next((name for name, count in Counter(names).items() if count > 1), None)
        if repeated is not None:
            raise self._broken("scan", f"its schema declares the attribute {shown_name(repeated)} twice")
        for attribute in schema.attributes:
            if attribute.kind == NOMINAL and len(set(attribute.labels)) != len(attribute.labels):
                raise self._broken("scan", f"its attribute {shown_name(attribute.name)} declares a label twice")

    def read(self, chunk) -> Chunk:
        """``chunk`` when it is one the layout's schema allows, else a ContractError naming the format."""
        if not isinstance(chunk, Chunk):
            raise self._broken("reading", f"it yielded {_kind_of(chunk)}, expected a filterkit Chunk")
        values = self._values(chunk, "reading")
        rows, columns = values.shape
        if columns != self.n_columns:
            raise self._broken("reading", f"it read {columns} columns; the layout's schema declares {self.n_columns}")
        if chunk.weights is not None and np.shape(chunk.weights) != (rows,):
            raise self._broken("reading", f"it read weights of shape {np.shape(chunk.weights)} for {rows} rows")
        self._check_text(chunk, rows, "reading")
        for column, texts in chunk.text.items():
            missing = np.isnan(chunk.column(column))
            wrong = next((row for row, text in enumerate(texts) if not _text_of(text, missing[row])), None)
            if wrong is not None:
                held = "a str UTF-8 cannot write (a lone surrogate)" if type(texts[wrong]) is str else None
                raise self._broken(
                    "reading",
                    f"row {wrong + 1} of a chunk holds {held or _kind_of(texts[wrong])} as the text of column {column} "
                    "(its value present): a str, or None where the value is missing",
                )
        self._check_labels(chunk.csr() if chunk.is_sparse else values, "reading")
        return chunk

    def all_read(self, rows: int, counted: int | None) -> None:
        """A ContractError naming the format where a pass read other than the ``counted`` rows of its scan."""
        if counted is not None and rows != counted:
            raise self._broken("reading", f"a pass read {rows} rows, where its scan counted {counted}")

    def _broken(self, step: str, what: str) -> ContractError:
        return ContractError(f"{self.origin} broke the format contract during {step}: {what}")
