"""The run's worker processes lent to a fit made in the parent (filterkit/lent_workers.py): ``train``'s final fit and
``evaluate --test``'s single fit spread the svm's inner folds over ``--jobs`` processes, with the same bytes."""

from __future__ import annotations

import contextlib
import functools
import threading

import numpy as np
import pytest

from chain_helpers import REAL
from filterkit import lent_workers
from filterkit.errors import FilterkitError
from filterkit.lent_workers import each, lending, lent

OH0 = REAL / "oh0.wc.arff"


def _square_or_refuse(refused: set, shared: int, value: int) -> int:
    """``value`` squared plus ``shared``; ValueError naming it where it is in ``refused``."""
    if value in refused:
        raise ValueError(f"refused {value}")
    return value * value + shared


def test_each_gives_the_values_of_one_process_in_their_order():
    items = list(range(7))
    with lending(2):
        pooled = each(functools.partial(_square_or_refuse, set()), items, 100)
    assert pooled == [value * value + 100 for value in items]


def test_a_blocks_calls_share_its_pool_while_its_workers_hold_what_they_are_sent():
    square = functools.partial(_square_or_refuse, set())
    with lending(2):
        first = each(square, [1, 2], 100)
        pool = lent_workers._LENT.get().pool
        again = each(square, [3, 4], 100)  # the same value sent: the same workers
        assert lent_workers._LENT.get().pool is pool
        other = each(square, [3, 4], 200)  # a value kept after the workers were forked: forked anew
        assert (lent_workers._LENT.get().pool is pool) is not lent_workers.FORKED
    assert (first, again, other) == ([101, 104], [109, 116], [209, 216])


def _lent_and_squares(shared: int, value: int) -> tuple:
    """What a piece of a lent fit sees (how many workers are lent to it) and the pieces it maps itself."""
    return lent(), each(functools.partial(_square_or_refuse, set()), [value, value + 1], shared)


def test_a_piece_that_maps_pieces_of_its_own_makes_them_in_its_worker():
    with lending(2):
        pooled = each(_lent_and_squares, [1, 3], 10)
    assert pooled == [(1, [11, 14]), (1, [19, 26])]


def test_a_stopping_signal_another_thread_takes_while_workers_are_forked_is_met_after_the_forking():
    """Python runs a signal's handler in the main thread whichever thread the signal reached: a reading thread's
    SIGTERM raised the console script's KeyboardInterrupt inside the forking, where it was lost."""
    import signal
    import time

    def interrupted(signum, frame):
        raise KeyboardInterrupt

    reached, finished = threading.Event(), []
    taker = threading.Thread(target=reached.wait)
    previous = signal.signal(signal.SIGTERM, interrupted)
    try:
        taker.start()
        with pytest.raises(KeyboardInterrupt):
            with lent_workers._stopping_signals_held():
                signal.pthread_kill(taker.ident, signal.SIGTERM)
                for _ in range(200):  # bytecodes run, where the handler would have run
                    time.sleep(0.001)
                finished.append(True)
    finally:
        reached.set()
        taker.join()
        signal.signal(signal.SIGTERM, previous)
    assert finished == [True]
    assert signal.getsignal(signal.SIGTERM) is previous


@pytest.mark.skipif(not lent_workers.FORKED, reason="joblib's workers are its own to start")
def test_lent_workers_are_no_more_than_the_calls_of_the_largest_batch_yet():
    """``--jobs 100`` lent to a fit of five inner folds had forked 100 workers (a huge ``--jobs``, until stopped)."""
    square = functools.partial(_square_or_refuse, set())
    with lending(100):
        each(square, [1, 2], 0)
        first = lent_workers._LENT.get().pool
        each(square, [1, 2, 3], 0)  # more calls: forked anew, as many
        again = lent_workers._LENT.get().pool
        each(square, [1, 2], 0)  # fewer: the same
        assert lent_workers._LENT.get().pool is again
    assert (first.jobs, again.jobs) == (2, 3)


def _a_generator(value: int):
    """A value pickle cannot take."""
    return (value for _ in range(1))


class _Unmade:
    """A value pickle takes and cannot make again (its class needs an argument its pickle does not give)."""

    def __init__(self, needed):
        self.needed = needed

    def __reduce__(self):
        return (_Unmade, ())


def _unmade(value: int) -> _Unmade:
    return _Unmade(value)


@pytest.mark.skipif(not lent_workers.FORKED, reason="joblib's workers send their results their own way")
@pytest.mark.parametrize(
    "function, said",
    [
        (_a_generator, "could not be sent here (TypeError: cannot pickle 'generator' object)"),
        (_unmade, "could not be read here"),
    ],
)
def test_a_result_that_cannot_cross_to_this_process_is_an_error_line_not_a_traceback(function, said):
    """A plugin's value in a result that pickle cannot take gave a traceback; one it cannot make again, the error of
    a worker killed."""
    with lent_workers.WorkerPool(2) as pool, pytest.raises(FilterkitError) as raised:
        list(pool.results(function, [(1,), (2,)]))
    assert said in raised.value.message and raised.value.message.endswith("give --jobs 1")


def test_each_raises_the_first_error_in_the_items_order_not_the_first_to_arrive():
    with lending(2), pytest.raises(ValueError, match="refused 1$"):
        each(functools.partial(_square_or_refuse, {1, 5}), list(range(6)), 0)


def test_each_runs_here_without_lent_workers_or_for_a_plugins_folder_function(monkeypatch):
    calls = []

    def no_pool(*arguments, **options):
        calls.append(arguments)
        raise AssertionError("a pool was started")

    monkeypatch.setattr(lent_workers.WorkerPool, "results", no_pool)
    assert each(functools.partial(_square_or_refuse, set()), [2, 3], 0) == [4, 9]  # none lent
    local = functools.partial(_square_or_refuse, set())
    monkeypatch.setattr(_square_or_refuse, "__module__", lent_workers.PLUGINS_FOLDER_MODULES + "mine")
    with lending(2):
        assert each(local, [2, 3], 0) == [4, 9]
    assert calls == []


def test_lending_sets_the_count_for_the_block_only():
    assert lent() == 1
    with lending(3):
        assert lent() == 3
        with lending(0):
            assert lent() == 1
    assert lent() == 1


def _lent_while_fitting(monkeypatch) -> list[int]:
    """The lent worker count each svm inner-fold map saw (the svm plugin's ``each`` wrapped)."""
    import filterkit_plugins.classifiers as classifiers

    seen: list[int] = []
    original = classifiers.each

    def recorded(function, items, shared=None):
        seen.append(lent())
        return original(function, items, shared)

    monkeypatch.setattr(classifiers, "each", recorded)
    return seen


@pytest.mark.parametrize("floor, jobs, expected", [(0, 2, 2), (0, 1, 1), (5_000, 2, 1)])
def test_train_lends_its_jobs_to_the_final_fit_from_the_pools_rows_and_the_model_is_the_same(
    monkeypatch, tmp_path, floor, jobs, expected
):
    from filterkit import evaluation
    from filterkit.evaluation import Settings
    from filterkit.plugins import load_plugins
    from filterkit.training import train

    monkeypatch.setattr(evaluation, "LEND_FROM_ROWS", floor)  # oh0's 1,003 rows: lent from 0, not from 5,000
    registry = load_plugins()
    settings = Settings(multiclass=True, classifier_params={"c_values": "0.1,1"})
    seen = _lent_while_fitting(monkeypatch)
    chain = [registry.parse_chain("l2")]
    train(str(OH0), chain, settings, registry, jobs=jobs).save(tmp_path / "lent.json")
    assert seen and set(seen) == {expected}
    monkeypatch.setattr(evaluation, "LEND_FROM_ROWS", 5000)
    train(str(OH0), chain, settings, registry, jobs=1).save(tmp_path / "alone.json")
    assert (tmp_path / "lent.json").read_bytes() == (tmp_path / "alone.json").read_bytes()


@pytest.mark.parametrize("floor, expected", [(0, 2), (5_000, 1)])
def test_evaluate_with_a_test_file_lends_its_jobs_to_its_single_fit(monkeypatch, tmp_path, floor, expected):
    from filterkit import evaluation
    from filterkit.evaluation import Settings, evaluate
    from filterkit.plugins import load_plugins

    held_out = tmp_path / "held-out.arff"
    held_out.write_bytes(OH0.read_bytes())
    registry = load_plugins()
    settings = Settings(multiclass=True, classifier_params={"c_values": "0.1,1"})
    chain = [registry.parse_chain("l2")]
    reports = [evaluate(str(OH0), chain, settings, registry, jobs=1, test=str(held_out)).document]
    monkeypatch.setattr(evaluation, "LEND_FROM_ROWS", floor)
    seen = _lent_while_fitting(monkeypatch)
    reports.append(evaluate(str(OH0), chain, settings, registry, jobs=2, test=str(held_out)).document)
    assert seen and set(seen) == {expected}
    assert reports[0]["results"] == reports[1]["results"]
    assert np.isfinite(reports[0]["results"][0]["macro_f1"])


def test_an_error_that_does_not_survive_pickling_comes_back_as_its_name_and_message():
    assert lent_workers.portable(ValueError("kept")).args == ("kept",)
    came_back = lent_workers.portable(_TwoArguments("a", "b"))
    assert isinstance(came_back, RuntimeError) and str(came_back) == "_TwoArguments: a and b"
    with lending(2), pytest.raises(RuntimeError, match="^_TwoArguments: 1 and 2$"):
        each(_raise_two_arguments, [1, 2], 0)


class _TwoArguments(Exception):
    """An exception that does not pickle (it holds a lock), whichever reducers a library installed for exceptions
    (tblib's, which Dask installs, rebuilds exceptions whose constructors take other arguments)."""

    def __init__(self, first, second):
        super().__init__(f"{first} and {second}")
        self.lock = threading.Lock()


def _raise_two_arguments(shared, value):
    """Raise :class:`_TwoArguments`."""
    raise _TwoArguments(value, value + 1)


class _PluginError(FilterkitError):
    """A plugin's own FilterkitError that does not pickle (it holds a lock)."""

    def __init__(self, what: str, line: int):
        super().__init__(f"cannot {what}", "data.arff", line)
        self.lock = threading.Lock()


def test_a_plugins_own_filterkit_error_comes_back_as_a_filterkit_error_with_its_file_and_line():
    came_back = lent_workers.portable(_PluginError("fit", 7))
    assert type(came_back) is FilterkitError
    assert (came_back.message, came_back.path, came_back.line) == ("cannot fit", "data.arff", 7)
    assert str(came_back) == "data.arff:7: cannot fit"


@pytest.mark.parametrize(
    "chains, search, folds, jobs, expected",
    [
        (2, "nested", 2, 5, 4),
        (4, "nested", 5, 16, 16),
        (1, "nested", 5, 16, 16),
        (3, "flat", 2, 5, 5),  # every candidate's folds at once
        (3, "flat", 2, 8, 6),
        (1, "flat", 5, 2, 2),
    ],
)
def test_the_workers_lent_are_as_many_as_the_candidates_first_pool_takes(chains, search, folds, jobs, expected):
    from filterkit.training import _first_pool_fits, _lent_workers

    fits = _first_pool_fits([object()] * chains, search, folds)
    assert _lent_workers(jobs, "local", 10_000, fits) == expected
    assert _lent_workers(jobs, "local", 4_999, fits) == 1  # under the pool's rows none is lent
    assert _lent_workers(None, "local", 4_999, fits) == 1  # --jobs left out: one process
    assert _lent_workers(jobs, "dask", 10_000, fits) == 1


def test_train_with_more_jobs_than_candidate_fits_keeps_one_pool(monkeypatch, tmp_path, recwarn):
    from filterkit import evaluation
    from filterkit.evaluation import Settings
    from filterkit.plugins import load_plugins
    from filterkit.training import train

    monkeypatch.setattr(evaluation, "LEND_FROM_ROWS", 0)
    registry = load_plugins()
    settings = Settings(multiclass=True, classifier_params={"c_values": "0.1,1"})
    chains = [registry.parse_chain("l2"), registry.parse_chain("binarize l2")]
    train(str(OH0), chains, settings, registry, jobs=5, candidate_folds=2).save(tmp_path / "model.json")
    assert not [warning for warning in recwarn if "resize" in str(warning.message)]


def test_a_full_temporary_folder_is_one_line_naming_it(monkeypatch, tmp_path):
    """The rows kept for the workers (and a fold's features, a fit's rows: the same guard) on a full disk: a
    FilterkitError naming the temporary folder and TMPDIR, no traceback, no file left."""
    import errno
    import pickle
    import tempfile

    def full(*_, **__):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(pickle, "dump", full)
    monkeypatch.setattr(lent_workers, "FORKED", False)  # a forked worker is sent nothing: no file to write
    with pytest.raises(FilterkitError) as raised:
        with lent_workers.shipped(None, "the rows"):
            pass
    assert str(raised.value) == (
        f"cannot keep the rows for the worker processes in the temporary folder {tmp_path} (No space left on "
        "device): free space there, set TMPDIR to a folder with room, or give --jobs 1"
    )
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="not a write"):  # another error than the disk's passes as it is
        with lent_workers.kept_for_workers("the rows", str(tmp_path / "run" / "rows")):
            raise ValueError("not a write")


def _sum_of_received(path: str, _) -> float:
    """The sum of the array a worker receives under ``path``."""
    return float(lent_workers.received(path).sum())


def _pid_then_wait(path: str, seconds: float) -> int:
    """This process's id; after ``seconds``, a file at ``path`` saying the call finished."""
    import os
    import time

    time.sleep(seconds)
    if seconds:
        with open(path, "w") as stream:
            stream.write("finished")
    return os.getpid()


def _killed(_) -> None:
    """The worker process ends as the kernel's out-of-memory killer ends it."""
    import os
    import signal

    os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.skipif(not lent_workers.FORKED, reason="forked workers are Linux's")
def test_forked_workers_hold_what_was_kept_for_them_with_no_file_written(monkeypatch):
    rows = np.arange(100_000, dtype=np.float64)
    with lent_workers.shipped(rows, "the rows") as path, lent_workers.WorkerPool(2) as pool:
        sums = list(pool.results(_sum_of_received, [(path, call) for call in range(4)]))
        import os

        assert not os.path.exists(path)
    assert sums == [float(rows.sum())] * 4
    assert path not in lent_workers._INHERITED  # forgotten with the block


def test_workers_that_are_not_forked_read_the_file_kept_for_them_once(monkeypatch):
    monkeypatch.setattr(lent_workers, "FORKED", False)
    lent_workers._read.cache_clear()
    rows = np.arange(1_000, dtype=np.float64)
    with lent_workers.shipped(rows, "the rows") as path:
        assert [lent_workers.received(path).sum() for _ in range(3)] == [rows.sum()] * 3
        assert lent_workers._read.cache_info().misses == 1


@pytest.mark.skipif(not lent_workers.FORKED, reason="forked workers are Linux's")
def test_a_killed_worker_is_one_error_saying_so():
    with pytest.raises(FilterkitError, match="^a worker process ended before its work did"):
        with lent_workers.WorkerPool(2) as pool:
            list(pool.results(_killed, [(0,), (1,)]))


@pytest.mark.skipif(not lent_workers.FORKED, reason="forked workers are Linux's")
def test_a_block_left_by_an_interrupt_ends_its_workers_without_waiting_for_their_calls(tmp_path):
    import os

    finished = tmp_path / "finished"
    with pytest.raises(KeyboardInterrupt):
        with lent_workers.WorkerPool(2) as pool:
            results = pool.results(_pid_then_wait, [(str(finished), 0), (str(finished), 60), (str(finished), 60)])
            first = next(results)
            workers = {process.pid for process in pool.executor._processes.values()}
            raise KeyboardInterrupt
    assert first in workers
    for pid in workers:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert not finished.exists()


def _disposition(signum: int) -> int:
    """How this process handles ``signum`` (SIG_IGN, SIG_DFL: their numbers)."""
    import signal

    return int(signal.getsignal(signum))


@pytest.mark.skipif(not lent_workers.FORKED, reason="forked workers are Linux's")
def test_forked_workers_keep_a_hangup_the_command_ignores_and_ignore_ctrl_c():
    import signal

    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as under nohup
    handled = signal.signal(signal.SIGTERM, lambda *_: None)  # as the command's handler, which raises
    try:
        with lent_workers.WorkerPool(2) as pool:
            seen = list(pool.results(_disposition, [(signal.SIGHUP,), (signal.SIGTERM,), (signal.SIGINT,)]))
    finally:
        signal.signal(signal.SIGHUP, before)
        signal.signal(signal.SIGTERM, handled)
    assert seen == [int(signal.SIG_IGN), int(signal.SIG_DFL), int(signal.SIG_IGN)]


@pytest.mark.skipif(not lent_workers.FORKED, reason="forked workers are Linux's")
def test_a_pool_broken_between_its_calls_is_one_error_saying_so():
    import os
    import signal

    with pytest.raises(FilterkitError, match="^a worker process ended before its work did"):
        with lent_workers.WorkerPool(2) as pool:
            assert list(pool.results(abs, [(-1,), (-2,)])) == [1, 2]
            for process in list(pool.executor._processes.values()):
                os.kill(process.pid, signal.SIGKILL)
                process.join()
            list(pool.results(abs, [(-3,)]))


@pytest.mark.skipif(not lent_workers.FORKED, reason="forked workers are Linux's")
def test_forked_workers_end_with_a_command_that_is_killed():
    import os
    import signal
    import subprocess
    import sys
    import time

    script = (
        "import time\n"
        "from filterkit.lent_workers import WorkerPool\n"
        "with WorkerPool(2) as pool:\n"
        "    pids = sorted(set(pool.results(__import__('os').getpid, [()] * 8)))\n"
        "    print(*pids, flush=True)\n"
        "    list(pool.results(time.sleep, [(600,), (600,)]))\n"
    )
    command = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    workers = [int(pid) for pid in command.stdout.readline().split()]
    assert workers and command.pid not in workers
    command.send_signal(signal.SIGKILL)
    command.wait()
    left = set(workers)
    try:
        for _ in range(200):  # the kernel signals them as the command ends; a moment to be reaped by init
            left = {pid for pid in left if os.path.exists(f"/proc/{pid}") and _state(pid) != "Z"}
            if not left:
                break
            time.sleep(0.05)
        assert not left
    finally:
        for pid in left:  # not left sleeping where the test fails
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _state(pid: int) -> str:
    """The state letter of process ``pid`` in /proc (Z: ended, not yet reaped); "" where it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stream:
            return stream.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return ""


@pytest.mark.skipif(not lent_workers.FORKED, reason="forked workers are Linux's")
def test_the_flat_search_left_by_an_interrupt_ends_its_workers_without_waiting_for_their_calls(tmp_path):
    import os

    from filterkit.flat_search import FoldRunner

    finished = tmp_path / "finished"
    with pytest.raises(KeyboardInterrupt):
        with FoldRunner(None, None, (2, "local", None, None), (None, None, None)) as runner:
            results = runner.pool.results(
                _pid_then_wait, [(str(finished), 0), (str(finished), 60), (str(finished), 60)]
            )
            next(results)
            workers = {process.pid for process in runner.pool.executor._processes.values()}
            raise KeyboardInterrupt
    for pid in workers:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert not finished.exists()


def test_joblibs_workers_left_at_an_error_make_their_other_calls_and_warn_of_nothing(monkeypatch, recwarn):
    monkeypatch.setattr(lent_workers, "FORKED", False)  # the workers off Linux
    with lent_workers.WorkerPool(2) as pool:
        results = pool.results(abs, [(-value,) for value in range(8)])
        assert next(results) == 0
        results.close()  # as a caller raising at the first result leaves it
        assert list(pool.results(abs, [(-5,), (-6,)])) == [5, 6]
    assert not [warning for warning in recwarn if "cancelled" in str(warning.message)]
