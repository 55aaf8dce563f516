"""``--jobs``' worker processes (issue 75): the rows are inherited by forked workers, or pickled once and read once
per worker, never sent with every fit; the fits of the most training rows are sent first; the results, and the error
of a failing fit, are those of one process."""

from __future__ import annotations

import pytest

from chain_helpers import REAL
from filterkit import lent_workers
from filterkit.errors import FilterkitError
from filterkit.evaluation import ChainSpec, Settings, evaluate

IRIS = REAL / "iris.arff"
CHAINS = [ChainSpec("minmax", [("minmax", {})]), ChainSpec("l2", [("l2", {})])]
SETTINGS = Settings(
    folds=3,
    positive="Iris-versicolor",
    train_fractions=(0.2, 1.0),
    classifier_params={"c_values": "0.1,1", "inner_folds": 2},
)


@pytest.fixture
def recorded(monkeypatch):
    """The training rows of each fit sent to the pool, which runs them here in the order they are sent."""
    sent: list[int] = []

    def results(pool, function, calls):
        for call in calls:
            sent.append(len(call[3][-2]))  # score_shipped's arguments: the fit's (..., training rows, test rows)
            yield function(*call)

    monkeypatch.setattr(lent_workers.WorkerPool, "results", results)
    return sent


def test_the_largest_fits_are_sent_first_and_the_results_keep_their_order(recorded):
    alone = evaluate(IRIS, CHAINS, SETTINGS)
    pooled = evaluate(IRIS, CHAINS, SETTINGS, jobs=2)
    assert pooled.json() == alone.json()
    assert len(recorded) == 12 and recorded == sorted(recorded, reverse=True)
    assert recorded[0] == 100 and recorded[-1] == 21  # a training fold of 100 rows; its fifth, 7 + 14 rows


def test_the_rows_are_read_once_by_a_worker_that_is_not_forked(recorded, monkeypatch):
    monkeypatch.setattr(lent_workers, "FORKED", False)
    lent_workers._read.cache_clear()
    evaluate(IRIS, CHAINS, SETTINGS, jobs=2)
    reads = lent_workers._read.cache_info()
    assert (reads.misses, reads.hits) == (1, 11)


def test_the_error_of_the_first_fit_to_fail_in_order_is_raised_as_in_one_process(recorded, tmp_path):
    # class c has one row: the training rows of its test fold hold none, at either fraction, and the error names
    # how many rows the failing fit had; the fifth (the first in order) is sent after the whole fold
    path = tmp_path / "small.arff"
    rows = [f"{k},{label}" for k, label in enumerate("aaaaaaaaabbbbbbbbbc")]
    path.write_text("@relation s\n@attribute x numeric\n@attribute c {a,b,c}\n@data\n" + "\n".join(rows) + "\n")
    settings = Settings(folds=3, positive="c", train_fractions=(0.2, 1.0), classifier_params=SETTINGS.classifier_params)
    errors = []
    for jobs in (1, 2):
        with pytest.raises(FilterkitError) as raised:
            evaluate(path, CHAINS, settings, jobs=jobs)
        errors.append(str(raised.value))
    assert errors[0] == errors[1]
    assert "a training fold holds no row of class 'c' (0 of 4 rows)" in errors[1]  # ⌈0.2 · 6⌉ a and b rows each
