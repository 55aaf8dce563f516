"""Parts that several stages share: feature positions by kind, the non-zero entries of a chunk,
nominal label layouts, a stage keeping a subset of its attributes, CSR rows of runs and checked
output schemas.  Exported through :mod:`filterkit.plugin`, so a third-party stage has them too."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from filterkit.errors import FilterkitError
from filterkit.export.steps import Keep
from filterkit.saved_state import invalid_state
from filterkit.schema import NOMINAL, Attribute, Chunk, CsrArrays, Schema, refuse_unreadable_output
from filterkit.stage import Context, Stage, Updatable, feature_positions

if TYPE_CHECKING:
    import scipy.sparse as sp


def kept_columns(rows: CsrArrays, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]:
    """CSR arrays holding only ``columns`` (sorted, distinct) of ``rows``, renumbered 0…len − 1:
    ``(data, indices, indptr, shape)``, each row's entries in their stored order."""
    return renumbered_columns(rows, feature_positions(rows.shape[1], columns), len(columns))


def renumbered_columns(
    rows: CsrArrays, new_index: np.ndarray, width: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]:
    """:func:`kept_columns` given each column's new number (``new_index``, −1: left out) and how many are kept."""
    renumbered = new_index[rows.indices]
    keep = renumbered >= 0
    kept_before = np.zeros(len(keep) + 1, dtype=np.int64)
    np.cumsum(keep, out=kept_before[1:])
    return rows.data[keep], renumbered[keep], kept_before[rows.indptr], (rows.shape[0], width)


class AttributeSubset(Updatable):
    """A stage whose output is some of its input's attributes, in their order, values untouched;
    ``columns`` (ascending positions) is set by the subclass.  :class:`Updatable`: one that learns writes the old
    rows' values as they were (:meth:`values_after_refit`)."""

    columns: np.ndarray

    def preserves_zeros(self) -> bool:
        """Kept attributes keep their values."""
        return True

    @property
    def changes_class(self) -> bool:  # type: ignore[override]  # a class attribute in Stage
        """True when the class attribute is not among the kept ones."""
        class_index = self.context.class_index
        return class_index is not None and class_index not in set(self.columns.tolist())

    def output_schema(self) -> Schema:
        return self.input_schema.with_attributes(self.input_schema.attributes[i] for i in self.columns)

    def values_after_refit(self, before: Stage, before_statistics) -> list[str]:
        """Kept attributes keep their values: the names kept now that were not kept before (the old rows'
        values of those are not known)."""
        kept_before = {attribute.name for attribute in before.output_schema().attributes}
        return [attribute.name for attribute in self.output_schema().attributes if attribute.name not in kept_before]

    def exported_step(self) -> Keep:
        """The stage in an exported scorer (:mod:`filterkit.export`): its kept columns."""
        return Keep(self.columns)

    def transform(self, chunk: Chunk) -> Chunk:
        """The chunk with only the kept columns, text side columns renumbered."""
        new_position = {int(old): new for new, old in enumerate(self.columns)}
        text = {new_position[column]: texts for column, texts in chunk.text.items() if column in new_position}
        if chunk.is_sparse:
            return Chunk.from_csr(*kept_columns(chunk.csr(), self.columns), text, chunk.weights)
        return Chunk(chunk.values[:, self.columns], text, chunk.weights)


def features_of_kinds(schema: Schema, context: Context, kinds: tuple[str, ...]) -> np.ndarray:
    """Positions of the attributes of ``kinds`` other than the class (or the labels of multi-label data): a new
    array, from the schema's kinds (not a pass over its attributes, :meth:`Schema.positions_of`)."""
    positions = schema.positions_of(*kinds)
    targets = [target for target in (context.class_index, *context.labels) if target is not None]
    return positions[~np.isin(positions, targets)]


def label_layout(attributes) -> tuple[np.ndarray, np.ndarray]:
    """Per attribute its number of labels (0 unless nominal) and where they start among all of them."""
    counts = np.array([len(a.labels) if a.kind == NOMINAL else 0 for a in attributes], dtype=np.int64)
    return counts, np.cumsum(counts) - counts


def nonzero_entries(chunk: Chunk) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The chunk's non-zero values (NaN included) as (rows, columns, values), row by row."""
    if chunk.is_sparse:
        matrix = chunk.csr()
        rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
        stored = matrix.data != 0
        return rows[stored], matrix.indices[stored].astype(np.int64), matrix.data[stored]
    values = np.asarray(chunk.values)
    rows, columns = np.nonzero(values != 0)
    return rows.astype(np.int64), columns.astype(np.int64), values[rows, columns]


#: Output entries :func:`csr_of_runs` makes at a time, so its temporaries stay about 32 MiB.
_RUN_BLOCK = 1 << 20


def csr_of_runs(rows: np.ndarray, starts: np.ndarray, lengths: np.ndarray, values: np.ndarray, shape) -> sp.csr_matrix:
    """The CSR matrix whose row ``rows[i]`` holds ``values[i]`` in the ``lengths[i]`` columns from
    ``starts[i]`` on (runs do not overlap), made a block of entries at a time: it holds 12 bytes
    an entry (16 past 2³¹), where a COO matrix and its conversion held about 100."""
    order = np.lexsort((starts, rows))
    rows, starts, lengths, values = rows[order], starts[order], lengths[order], values[order]
    ends = np.cumsum(lengths)
    total = int(ends[-1]) if len(ends) else 0
    index_type = np.int32 if max(total, shape[1]) < 2**31 else np.int64
    indptr = np.r_[0, ends][np.searchsorted(rows, np.arange(shape[0] + 1))].astype(index_type)
    indices, data = np.empty(total, dtype=index_type), np.empty(total)
    bounds = np.unique(np.r_[0, np.searchsorted(ends, np.arange(_RUN_BLOCK, total, _RUN_BLOCK)), len(ends)])
    for first, stop in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        counts, begin, end = lengths[first:stop], ends[first] - lengths[first], ends[stop - 1]
        within = np.arange(end - begin) - np.repeat(ends[first:stop] - counts - begin, counts)
        indices[begin:end] = np.repeat(starts[first:stop], counts) + within
        data[begin:end] = np.repeat(values[first:stop], counts)
    import scipy.sparse as sp  # here, not at import: the stages that share the other parts never load scipy

    return sp.csr_matrix((data, indices, indptr), shape=shape)


def output_offsets(stage: Stage, width: np.ndarray, labels: int, fewer: str) -> np.ndarray:
    """Each input attribute's first output column when it becomes ``width`` columns of at most ``labels``
    labels, refused first when the output header would be unreadable (``fewer``: the remedy)."""
    name_bytes = np.array([len(attribute.name.encode()) for attribute in stage.input_schema.attributes])
    refuse_unreadable_output(stage.name, int(width.sum()), labels, int(width @ name_bytes), fewer)
    return np.cumsum(width) - width


def unique_schema(stage: Stage, groups: list[list[Attribute]], what: str) -> Schema:
    """The input schema with each attribute replaced by its group, refused when a name repeats."""
    attributes = [attribute for group in groups for attribute in group]
    seen: set[str] = set()
    for attribute in attributes:
        if attribute.name in seen:
            raise FilterkitError(f"stage '{stage.name}': the {what} name '{attribute.name}' is already taken")
        seen.add(attribute.name)
    return stage.input_schema.with_attributes(attributes)


def check_runs(stage: Stage, values: np.ndarray, counts: np.ndarray, what: str, counts_key: str) -> None:
    """Refuse a saved state unless ``values`` hold ``counts[j]`` ascending values of each feature j in turn."""
    if counts.sum() != len(values):
        raise invalid_state(stage, f"{len(values)} {what} where '{counts_key}' adds up to {counts.sum()}")
    owner = np.repeat(np.arange(len(counts)), counts)
    if np.any((owner[1:] == owner[:-1]) & (values[1:] <= values[:-1])):
        raise invalid_state(stage, f"an attribute's {what} do not ascend")
