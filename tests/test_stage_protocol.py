"""The stage protocol's shared behaviour (issue 19): ``learns`` (and the deprecated ``fitted``),
the default ``merge``, and the state arrays a stage declares, checked once by ``Stage.load_state``."""

from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass

import numpy as np
import pytest

from chain_helpers import REAL
from filterkit.arff import read_arff
from filterkit.errors import FilterkitError
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.saved_state import OPTIONS_KEY, fitted_options
from filterkit.schema import Chunk
from filterkit.sources import MemorySource
from filterkit.stage import ATTRIBUTES, Context, Option, Stage, StateArray


@dataclass(frozen=True)
class Sums:
    """Per-feature sums of two disjoint parts add up."""

    total: np.ndarray

    def merge(self, other: "Sums") -> "Sums":
        return Sums(self.total + other.total)


class CenteringSteps(Stage):
    """x − the training mean of x, saved as ``mean`` (one entry per feature); says nothing of learning."""

    name = "centering"
    summary = "Subtract each feature's training mean."
    options = (Option("scale", float, 1.0, "Multiply after centering."),)
    state_arrays = {
        "mean": StateArray(),
        "order": StateArray(length="mean", whole=True, high=ATTRIBUTES),
        "added": StateArray(default=0),
    }

    def new_statistics(self) -> Sums:
        return Sums(np.zeros(len(self.features) + 1))

    def accumulate(self, statistics: Sums, chunk: Chunk) -> Sums:
        block = chunk.dense_values()[:, self.features]
        return statistics.merge(Sums(np.r_[block.sum(axis=0), chunk.n_rows]))

    def finalize(self, statistics: Sums) -> None:
        self.mean = statistics.total[:-1] / statistics.total[-1]
        self.order = self.features.copy()
        self.added = np.zeros(len(self.features))

    def transform(self, chunk: Chunk) -> Chunk:
        values = chunk.dense_values().copy()
        values[:, self.features] = (values[:, self.features] - self.mean) * self.params["scale"]
        return Chunk(values, chunk.text, chunk.weights)

    def state(self) -> dict:
        return {"mean": self.mean, "order": self.order, "added": self.added, OPTIONS_KEY: fitted_options(self)}


class Centering(CenteringSteps):
    """The centering stage as it is written now."""

    learns = True


@pytest.fixture(scope="module")
def iris():
    return read_arff(str(REAL / "iris.arff"))


def fitted_stage(stage_class, iris, **options):
    schema, chunk = iris
    chain = Chain([stage_class(**options)]).fit(MemorySource(schema, chunk))
    return chain.stages[0]


def prepared(stage_class, iris, **options):
    schema, _ = iris
    stage = stage_class(**options)
    stage.prepare(schema, Context(class_index=len(schema) - 1))
    return stage


# --- learns, and the old name fitted ------------------------------------------------------------


def test_a_stage_class_defining_fitted_learns_by_it_with_one_deprecation_warning(iris):
    with pytest.warns(DeprecationWarning, match="defines 'fitted', which is now called 'learns'") as caught:

        class OldStyle(CenteringSteps):
            fitted = True

        class Child(OldStyle):
            pass

    assert len(caught) == 1 and "OldStyle" in str(caught[0].message)
    assert OldStyle.learns is True and Child.learns is True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stage = fitted_stage(OldStyle, iris)
    np.testing.assert_allclose(stage.mean, iris[1].dense_values()[:, :4].mean(axis=0), rtol=1e-12)


def test_a_fitted_property_is_taken_as_learns():
    with pytest.warns(DeprecationWarning):

        class Sometimes(Stage):
            name = "sometimes"
            options = (Option("learn", bool, False, "Learn."),)

            @property
            def fitted(self):
                return self.params["learn"]

    assert Sometimes(learn=True).learns is True
    assert Sometimes(learn=False).learns is False


def test_reading_fitted_answers_learns_with_a_deprecation_warning():
    stages = load_plugins().stages
    for name, expected in [("bns", True), ("l2", False)]:
        with pytest.warns(DeprecationWarning, match="Stage.fitted is now called Stage.learns"):
            assert stages[name].value().fitted is expected
    select = stages["select"].value
    with pytest.warns(DeprecationWarning):
        assert select(top=3, metric="ig").fitted is True


def test_no_built_in_stage_uses_the_old_name():
    for registered in load_plugins().stages.values():
        for cls in inspect.getmro(registered.value):
            if cls is not Stage:
                assert "fitted" not in vars(cls), f"{cls.__qualname__} defines 'fitted'"


# --- the default merge --------------------------------------------------------------------------


def test_the_default_merge_merges_statistics_that_merge_themselves(iris):
    stage = prepared(Centering, iris)
    merged = stage.merge(Sums(np.array([1.0, 2.0])), Sums(np.array([3.0, 5.0])))
    assert merged.total.tolist() == [4.0, 7.0]


def test_the_default_merge_names_what_is_missing_for_statistics_without_merge(iris):
    stage = prepared(Centering, iris)
    with pytest.raises(NotImplementedError, match=r"\(tuple\) have no merge method: define Centering.merge"):
        stage.merge((1, 2), (3, 4))


# --- declared state arrays ----------------------------------------------------------------------


def test_load_state_sets_every_declared_array(iris):
    fitted = fitted_stage(Centering, iris, scale=2.0)
    stage = prepared(Centering, iris, scale=2.0)
    stage.load_state(fitted.state())
    for key in ("mean", "order", "added"):
        np.testing.assert_array_equal(getattr(stage, key), getattr(fitted, key))
    assert stage.order.dtype == np.int64 and stage.mean.dtype == np.float64


def test_a_missing_array_with_a_default_is_filled_in(iris):
    state = fitted_stage(Centering, iris).state()
    del state["added"]
    stage = prepared(Centering, iris)
    stage.load_state(state)
    assert stage.added.tolist() == [0.0] * 4


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda state: state.update(mean=state["mean"][:-1]), r"'mean' has shape \(3,\), expected \(4,\)"),
        (lambda state: state.update(mean=state["mean"][:, None]), r"'mean' has shape \(4, 1\), expected \(4,\)"),
        (lambda state: state.update(mean=np.r_[np.inf, state["mean"][1:]]), "'mean' holds .*inf.* at position 0"),
        (lambda state: state.update(order=state["order"][:-1]), r"'order' has shape \(3,\), expected \(4,\)"),
        (
            lambda state: state.update(order=np.array([0, 1, 2, 5])),
            r"'order' holds .*5\.0.* at position 3, not a whole number in \[0, 5\)",
        ),
        (lambda state: state.pop("mean"), "'mean' is missing"),
        (lambda state: state[OPTIONS_KEY].update(scale=3.0), "option --scale is 1.0 but the state was fitted with 3.0"),
    ],
    ids=[
        "short",
        "two-dimensional",
        "infinite",
        "length of another array",
        "index out of range",
        "missing",
        "edited option",
    ],
)
def test_load_state_refuses_a_state_that_does_not_fit_naming_stage_and_entry(iris, change, message):
    state = fitted_stage(Centering, iris).state()
    change(state)
    stage = prepared(Centering, iris)
    with pytest.raises(FilterkitError, match=f"^stage 'centering': the model's saved state is invalid: {message}"):
        stage.load_state(state)


def test_a_stage_without_declared_arrays_loads_as_before(iris):
    stage = prepared(Stage, iris)
    stage.load_state({"anything": 1})
    assert not Stage.state_arrays


def test_a_stage_warns_of_its_fit_and_of_finding_nothing_to_read():
    class Reads(Stage):
        name = "reads"
        nothing_to_read = "finds no numeric attribute: the rows pass through unchanged"

    class Says(Reads):
        name = "says"

        def fit_warnings(self) -> list[str]:
            return ["chose something", "and another"]

    schema, chunk = read_arff(REAL / "iris.arff")
    nominal_only = schema.with_attributes(schema.attributes[4:])
    chain = Chain([Reads(), Says()], class_spec="last").fit(MemorySource(nominal_only, Chunk(chunk.values[:, 4:])))
    assert chain.warnings == [
        "stage 1 'reads' finds no numeric attribute: the rows pass through unchanged",
        "stage 2 'says' chose something",
        "stage 2 'says' and another",
    ]
    assert Chain([Reads()], class_spec="last").fit(MemorySource(schema, chunk)).warnings == []
