"""What a stage accepts (issue 48 item 2): a stage declares it (``Stage.accepts``); the chain refuses input
without it before any work and a negative value wherever it gives the stage one; ``check_stage`` and the
scikit-learn adapters read the declaration, so no test keeps a list of stages."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import filterkit.sklearn
from filterkit.errors import FilterkitError
from filterkit.plugin import NOMINAL, NUMERIC, Accepts, Attribute, Chunk, Schema, Stage
from filterkit.plugins import Registered, Registry, load_plugins
from filterkit.runner import Chain
from filterkit.sources import MemorySource
from filterkit.testing import check_stage


class LogCounts(Stage):
    """log(1 + x) of word counts, as a newcomer's BM25-like stage would: a count is never negative."""

    name = "log-counts"
    summary = "log(1 + x) of each count."
    accepts = Accepts(non_negative=True)

    def preserves_zeros(self) -> bool:
        return True

    def value_map(self):
        return lambda positions, values: np.log1p(values)


class CountSums(LogCounts):
    """LogCounts that learns each count's sum: it is given the training chunks."""

    name = "count-sums"
    learns = True

    def new_statistics(self):
        return 0.0

    def accumulate(self, statistics, chunk):
        return statistics + float(np.nansum(chunk.dense_values()[:, self.features]))

    def merge(self, first, second):
        return first + second

    def finalize(self, statistics) -> None:
        self.total = statistics


class ClassCounter(Stage):
    """Needs a nominal class; records whether any chunk reached it."""

    name = "class-counter"
    summary = "Counts rows per class."
    learns = True
    accepts = Accepts(nominal_class=True)
    chunks_seen = 0

    def new_statistics(self):
        return 0

    def accumulate(self, statistics, chunk):
        ClassCounter.chunks_seen += 1
        return statistics + chunk.n_rows

    def merge(self, first, second):
        return first + second

    def finalize(self, statistics) -> None:
        self.rows = statistics


SCHEMA = Schema(
    "counts",
    (
        Attribute("apple", NUMERIC, declared_type="numeric"),
        Attribute("pear", NUMERIC, declared_type="numeric"),
        Attribute("class", NOMINAL, labels=("a", "b", "c")),
    ),
)


def fitted(stage: Stage, values, positive: str | None = None, class_spec: str | None = "last") -> Chain:
    return Chain([stage], class_spec=class_spec, positive=positive).fit(MemorySource(SCHEMA, Chunk(values)))


def test_a_negative_count_is_refused_naming_the_stage_and_the_attribute_while_fitting():
    with pytest.raises(FilterkitError, match="stage 'count-sums' accepts no negative value: attribute 'pear'"):
        fitted(CountSums(), np.array([[1.0, 0.0, 0], [2.0, -3.0, 1]]))
    assert fitted(CountSums(), np.array([[1.0, 0.0, 0], [2.0, 3.0, 1]])).stages[0].total == 6.0


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_a_negative_count_given_to_a_fitted_stage_is_refused(sparse):
    chain = fitted(LogCounts(), np.array([[1.0, 0.0, 0], [2.0, 3.0, 1]]))
    good, bad = np.array([[1.0, 1.0, 0]]), np.array([[0.0, 0.0, 0], [-1.0, 0.0, 2]])
    form = sp.csr_matrix if sparse else np.asarray
    assert next(chain.transform([Chunk(form(good))])).dense_values()[0, :2] == pytest.approx(np.log1p([1.0, 1.0]))
    with pytest.raises(FilterkitError, match="attribute 'apple' holds one"):
        next(chain.transform([Chunk(form(bad))]))


def test_a_negative_value_reaches_a_stage_after_another_s_stored_values_map_and_is_refused():
    """l2 and log-counts both have stored-values maps, which the chain runs together on sparse chunks; the
    check sees what l2 gives log-counts."""
    chain = Chain([load_plugins().make_stage("l2", {}), LogCounts()], class_spec="last")
    chain.fit(MemorySource(SCHEMA, Chunk(np.array([[1.0, 2.0, 0], [3.0, 4.0, 1]]))))
    with pytest.raises(FilterkitError, match="stage 'log-counts' accepts no negative value: attribute 'apple'"):
        next(chain.transform([Chunk(sp.csr_matrix(np.array([[-3.0, 4.0, 0]])))]))


def test_a_stage_that_needs_a_class_is_refused_before_any_chunk_reaches_it():
    ClassCounter.chunks_seen = 0
    with pytest.raises(FilterkitError, match=r"stage 'class-counter' needs a nominal class attribute \(-c\)"):
        fitted(ClassCounter(), np.array([[1.0, 0.0, 0]]), class_spec=None)
    assert ClassCounter.chunks_seen == 0
    assert fitted(ClassCounter(), np.array([[1.0, 0.0, 0]])).stages[0].rows == 1


class PairCounter(ClassCounter):
    """Needs a two-class task (one positive class)."""

    name = "pair-counter"
    accepts = Accepts(two_classes=True)


def test_a_two_class_stage_on_three_classes_asks_for_positive_before_its_pass():
    ClassCounter.chunks_seen = 0
    values = np.array([[1.0, 0.0, 0], [0.0, 1.0, 1], [1.0, 1.0, 2]] * 4)
    with pytest.raises(FilterkitError, match=r"stage 'pair-counter' needs a two-class task \(it has no k-class form"):
        fitted(PairCounter(), values)
    assert ClassCounter.chunks_seen == 0
    assert fitted(PairCounter(), values, positive="a").stages[0].rows == 12


def test_check_stage_gives_a_stage_that_accepts_no_negative_value_data_it_accepts():
    accepted = check_stage(LogCounts)
    assert "generated rows (dense)" in accepted and "generated rows (sparse)" in accepted


def test_what_a_built_in_stage_accepts_follows_its_options():
    registry = load_plugins()
    assert registry.make_stage("select", {"metric": "ig", "top": 3}).accepts.nominal_class
    assert not registry.make_stage("select", {"top": 3}).accepts.nominal_class
    assert registry.make_stage("discretize", {}).accepts.nominal_class
    assert not registry.make_stage("discretize", {"bins": 3}).accepts.nominal_class
    assert registry.make_stage("words", {}).accepts.text
    assert registry.make_stage("bns", {}).accepts == Accepts(nominal_class=True, labels=True)
    assert registry.make_stage("l2", {}).accepts == Accepts()


def test_the_scikit_learn_tags_are_what_the_stage_accepts(monkeypatch):
    registry = Registry(stages={"log-counts": Registered("log-counts", LogCounts, "tests", "tests")})
    monkeypatch.setattr(filterkit.sklearn, "_registry", lambda: registry)
    tags = filterkit.sklearn.transformer_for("log-counts")().__sklearn_tags__()
    assert tags.input_tags.positive_only and not tags.target_tags.required
    monkeypatch.undo()
    tags = filterkit.sklearn.transformer_for("bns")().__sklearn_tags__()
    assert tags.target_tags.required and not tags.input_tags.positive_only
