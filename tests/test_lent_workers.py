"""The run's worker processes lent to a fit made in the parent (filterkit/lent_workers.py): ``train``'s final fit and
``evaluate --test``'s single fit spread the svm's inner folds over ``--jobs`` processes, with the same bytes."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest

from chain_helpers import REAL
from filterkit import lent_workers
from filterkit.lent_workers import LENT, each, lending

OH0 = REAL / "oh0.wc.arff"


def _square_or_refuse(refused: set, value: int) -> int:
    """``value`` squared; ValueError naming it where it is in ``refused``."""
    if value in refused:
        raise ValueError(f"refused {value}")
    return value * value


def test_each_gives_the_values_of_one_process_in_their_order():
    items = list(range(7))
    with lending(2):
        pooled = each(functools.partial(_square_or_refuse, set()), items)
    assert pooled == [value * value for value in items]


def test_each_raises_the_first_error_in_the_items_order_not_the_first_to_arrive():
    with lending(2), pytest.raises(ValueError, match="refused 1$"):
        each(functools.partial(_square_or_refuse, {1, 5}), list(range(6)))


def test_each_runs_here_without_lent_workers_or_for_a_plugins_folder_function(monkeypatch):
    calls = []

    def no_pool(*arguments, **options):
        calls.append(arguments)
        raise AssertionError("a pool was started")

    monkeypatch.setattr("joblib.Parallel", no_pool)
    assert each(functools.partial(_square_or_refuse, set()), [2, 3]) == [4, 9]  # none lent
    local = functools.partial(_square_or_refuse, set())
    monkeypatch.setattr(_square_or_refuse, "__module__", lent_workers.PLUGINS_FOLDER_MODULES + "mine")
    with lending(2):
        assert each(local, [2, 3]) == [4, 9]
    assert calls == []


def test_lending_sets_the_count_for_the_block_only():
    assert LENT.get() == 1
    with lending(3):
        assert LENT.get() == 3
        with lending(0):
            assert LENT.get() == 1
    assert LENT.get() == 1


def _lent_while_fitting(monkeypatch) -> list[int]:
    """The lent worker count each svm inner-fold map saw (the svm plugin's ``each`` wrapped)."""
    import filterkit_plugins.classifiers as classifiers

    seen: list[int] = []
    original = classifiers.each

    def recorded(function, items):
        seen.append(LENT.get())
        return original(function, items)

    monkeypatch.setattr(classifiers, "each", recorded)
    return seen


@pytest.mark.parametrize("jobs", [1, 2])
def test_train_lends_its_jobs_to_the_final_fit_and_the_model_is_the_same(monkeypatch, tmp_path, jobs):
    from filterkit.evaluation import Settings
    from filterkit.plugins import load_plugins
    from filterkit.training import train

    registry = load_plugins()
    settings = Settings(multiclass=True, classifier_params={"c_values": "0.1,1"})
    seen = _lent_while_fitting(monkeypatch)
    chain = [registry.parse_chain("l2")]
    train(str(OH0), chain, settings, registry, jobs=jobs).save(tmp_path / "lent.json")
    assert seen and set(seen) == {jobs}
    train(str(OH0), chain, settings, registry, jobs=1).save(tmp_path / "alone.json")
    assert (tmp_path / "lent.json").read_bytes() == (tmp_path / "alone.json").read_bytes()


def test_evaluate_with_a_test_file_lends_its_jobs_to_its_single_fit(run_filterkit, tmp_path):
    held_out = tmp_path / "held-out.arff"
    held_out.write_bytes(OH0.read_bytes())
    reports = []
    for jobs in ("1", "2"):
        result = run_filterkit(
            "evaluate", "--json", "-q", "--multiclass", "--jobs", jobs, "--svm-c-values", "0.1,1",
            "--test", held_out, OH0, "l2",
        )  # fmt: skip
        assert result.status == 0, result.stderr
        reports.append(json.loads(result.stdout))
    for report in reports:
        report.pop("elapsed_seconds", None)
        report.pop("settings", None)
    assert reports[0]["results"] == reports[1]["results"]
    assert np.isfinite(reports[0]["results"][0]["macro_f1"])


def _children() -> set[int]:
    """The process ids of this process's children (Linux's /proc)."""
    import os
    from pathlib import Path

    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():
            found.add(int(stat.parent.name))
    return found


@pytest.mark.skipif(not __import__("pathlib").Path("/proc/self/stat").exists(), reason="needs Linux's /proc")
def test_workers_started_early_are_the_ones_the_fits_run_in():
    import os
    import threading

    from joblib import Parallel, delayed

    lent_workers.start_workers(2)
    (starting,) = [thread for thread in threading.enumerate() if thread.name == "filterkit-start-workers"]
    starting.join(timeout=120)
    assert not starting.is_alive()
    started = _children()
    ran_in = set(Parallel(n_jobs=2)(delayed(os.getpid)() for _ in range(8)))
    assert ran_in and ran_in <= started


def test_no_workers_are_started_for_one_job():
    import threading

    lent_workers.start_workers(1)
    assert not [thread for thread in threading.enumerate() if thread.name == "filterkit-start-workers"]
