"""The stage contract and stages that filter rows: the class column of fewer rows is not a changed class."""

from __future__ import annotations

import numpy as np
import pytest

from filterkit.contract import ContractError, OutputContract
from filterkit.schema import NOMINAL, NUMERIC, Attribute, Chunk, Schema
from filterkit.stage import Context, Stage

SCHEMA = Schema("r", [Attribute("x", NUMERIC), Attribute("class", NOMINAL, labels=("a", "b"))])


class EveryOtherRow(Stage):
    """Keeps rows 0, 2, 4, …; with ``relabel`` it also flips their class, which it does not declare."""

    name = "every-other-row"
    summary = "Keep every other row."
    filters_rows = True
    relabel = False

    def transform(self, chunk: Chunk) -> Chunk:
        values = chunk.values[::2].copy()
        if self.relabel:
            values[:, 1] = 1 - values[:, 1]
        return Chunk(values)


def contract_of(stage: Stage) -> OutputContract:
    stage.prepare(SCHEMA, Context(class_index=1))
    return OutputContract.of(stage)


def test_a_row_filter_returning_fewer_rows_keeps_the_class_without_declaring_changes_class():
    stage = EveryOtherRow()
    given = Chunk(np.array([[1.0, 0], [2.0, 1], [3.0, 1], [4.0, 0]]))
    result, _ = contract_of(stage).checked(given, stage.transform(given))
    np.testing.assert_array_equal(result.values, [[1.0, 0], [3.0, 1]])


def test_a_stage_that_keeps_every_row_and_changes_the_class_still_breaks_the_contract():
    stage = EveryOtherRow()
    stage.relabel = True
    given = Chunk(np.array([[1.0, 0], [3.0, 1]]))
    with pytest.raises(ContractError, match="changed the class column's values"):
        contract_of(stage).checked(given, Chunk(np.array([[1.0, 1], [3.0, 0]])))
