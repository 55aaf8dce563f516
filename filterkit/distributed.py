"""Fitting and applying a chain over partitions on a Dask cluster (``--engine dask``).

The input is a list of partitions: several ARFF files sharing one header, or
one file whose data section is cut at line ends into byte ranges (so no row is
ever cut; a range is read with the schema already known, and an error still
names the file's own line: :mod:`filterkit.arff.partition`).  As :class:`filterkit.runner.Chain` does, each
fitted stage costs one pass; here a pass is one Dask task per partition, which
reads the partition's rows, pushes them through the stages already fitted and
accumulates the stage's statistics.  The statistics are merged pairwise, always
the earlier partition first, and finalized on the client.  A last task per
partition applies the fitted chain and writes that partition's output into a
part file, which the client moves into the output folder or copies, in partition
order, into the one output.

Only statistics and fitted state travel through Dask: a task receives each
stage as its name, options and state (what a model file holds) and rebuilds it
through the plugin registry (:meth:`Chain.rebuilt`, as ``filterkit apply`` does); workers read their
rows from, and write them to, files they share with the client.  The cluster is Dask's own
``LocalCluster`` or the user's ``--scheduler``; tasks report the rows they have done as Dask events,
so progress moves within a partition.  Dask is imported only when this engine is used.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import logging
import os
import shutil
import signal
import sys
import tempfile
import threading
import uuid
import warnings
from dataclasses import dataclass, field
from typing import Iterator

from filterkit import __version__
from filterkit.allocator import worker_environment
from filterkit.arff.header import format_header
from filterkit.arff.partition import locate_rows
from filterkit.arff.writer import EXACT, ArffWriter, NumberFormat
from filterkit.errors import DASK_INSTALL_HINT, FilterkitError
from filterkit.outputs import OutputFile, checked_output, publish_file
from filterkit.ownership import STOPPING_SIGNALS, owns_process
from filterkit.partitions import Partition, Plan, first_known, header_comments, input_files, output_names, split_file
from filterkit.plugins import load_plugins
from filterkit.progress import Progress
from filterkit.runner import Chain, guarded
from filterkit.schema import Chunk, Schema
from filterkit.stage import Provenance, files_of, sent_files

#: Worker processes of the cluster started when no --scheduler is given.
LOCAL_WORKERS = 2
#: Dask's setting of the environment its nannies give the worker processes they spawn.
_WORKER_ENVIRONMENT = "distributed.nanny.pre-spawn-environ"
#: Dask's setting of how many times a task may be running on a worker that dies before it fails.
_ALLOWED_FAILURES = "distributed.scheduler.allowed-failures"
#: The errors of a full file system (or quota) while a worker writes its part.
_NO_ROOM = (errno.ENOSPC, errno.EDQUOT)
#: The Dask event topic on which the tasks of one run report the rows they have done.
_ROWS_TOPIC = "filterkit-rows-"


def import_distributed():
    """The ``dask.distributed`` module; FilterkitError naming the extra to install if missing."""
    try:
        import dask.distributed
    except ImportError as error:
        raise FilterkitError(f"--engine dask needs Dask ({error}); install it with {DASK_INSTALL_HINT}") from None
    return dask.distributed


@dataclass(frozen=True)
class ChainRecipe:
    """What a task needs to rebuild a chain: each stage as ``(name, options, state)``
    (state None: the stage being fitted), the input schema, the class and the
    positive label, where the plugins come from and how partitions are read.
    ``token`` tells recipes apart, so a worker rebuilds each one once; ``rows_topic``, where
    progress is shown, is the Dask event topic a task reports the rows it has read on; ``files``
    are the files the stages' options name, read by the client (:func:`filterkit.stage.files_of`)."""

    token: str
    stages: tuple
    schema: Schema
    class_name: str | None
    positive: str | None
    plugins_dir: str | None
    chunk_rows: int
    sparse_rows: bool | None
    rows_topic: str | None = None
    files: dict[str, bytes] = field(default_factory=dict)

    def rebuild(self) -> Chain:
        """The chain with every stage prepared and, where a state is given, fitted."""
        return Chain.rebuilt(_registry(self.plugins_dir), self.stages, self.schema, self.class_name, self.positive)

    def chunks(self, partition: Partition) -> Iterator[Chunk]:
        """The rows of ``partition``, each chunk's rows reported on :attr:`rows_topic` once read."""
        chunks = partition.chunks(self.schema, self.chunk_rows, self.sparse_rows)
        if self.rows_topic is None:
            yield from chunks
            return
        from distributed import get_worker

        worker = get_worker()
        for chunk in chunks:
            worker.log_event(self.rows_topic, chunk.n_rows)
            yield chunk


_rebuilt = threading.local()


def _chain_of(recipe: ChainRecipe) -> Chain:
    """``recipe.rebuild()``, done once per recipe and worker thread: the tasks of a pass share it,
    as the chunks of a local pass share one chain (never two threads at once)."""
    cached = getattr(_rebuilt, "chain", None)
    if cached is None or cached[0] != recipe.token:
        _rebuilt.chain = cached = (recipe.token, recipe.rebuild())
    return cached[1]


@functools.lru_cache(maxsize=None)
def _registry(plugins_dir: str | None):
    """The plugin registry, loaded once per worker process."""
    return load_plugins(plugins_dir)


def worker_inventory(plugins_dir: str | None) -> dict:
    """What a worker runs: its filterkit version and, per stage, the plugin, distribution and
    version it comes from (what :meth:`DaskEngine.check_workers` compares with the client's)."""
    stages = {name: [r.plugin, r.distribution, r.version] for name, r in _registry(plugins_dir).stages.items()}
    return {"filterkit": __version__, "stages": stages}


def _file_partition(path: str, label: str, output_name: str) -> tuple[Schema, Partition, bool | None]:
    """A whole file as a partition, with its schema and whether its first row is sparse."""
    schema, rows_start, size = locate_rows(path, label)
    partition = Partition(path, label, output_name, rows_start, None if rows_start is None else size)
    return schema, partition, partition.first_row_sparse(schema)


def _partition_statistics(recipe: ChainRecipe, partition: Partition):
    """The statistics of the recipe's last stage over one partition's rows, read in the task's
    own thread (the workers' threads are the parallelism)."""
    with sent_files(recipe.files):
        chain = _chain_of(recipe)
        stage = chain.stages[-1]
        statistics = stage.new_statistics()
        for chunk in Chain(chain.stages[:-1]).transform(recipe.chunks(partition)):
            statistics = guarded(stage, "fit", stage.accumulate, statistics, chunk)
    return statistics


def _merged_statistics(recipe: ChainRecipe, first, second):
    """The statistics of two adjacent parts, the earlier first."""
    stage = _chain_of(recipe).stages[-1]
    return guarded(stage, "fit", stage.merge, first, second)


def _write_partition(
    recipe: ChainRecipe,
    partition: Partition,
    path: str,
    sparse: bool | None,
    comments: list[str],
    numbers: NumberFormat = EXACT,
) -> int:
    """Apply the fitted chain to one partition and write it as a whole ARFF file, in the task's own
    thread; the row count."""
    rows = 0
    try:
        with sent_files(recipe.files), open(path, "wb") as stream:
            chain = _chain_of(recipe)
            assert chain.output_schema is not None  # the chain is fitted
            writer = ArffWriter(stream, chain.output_schema, sparse, comments, numbers)
            for chunk in chain.transform(recipe.chunks(partition)):
                writer.write(chunk)
                rows += chunk.n_rows
    except OSError as error:
        if error.errno not in _NO_ROOM:
            raise
        raise FilterkitError(
            f"{error.strerror} writing the partitions' outputs: --engine dask needs room for the whole output "
            "in this folder (the system's temporary folder, TMPDIR, when the output is standard output)",
            os.path.dirname(path),
        ) from None
    return rows


class DaskEngine:
    """Runs chains over partitions with one Dask client (see the module docstring).

    Each pass (a fitted stage, the writing) is reported to ``progress`` as the rows its tasks
    have read.  ``local`` says the client's cluster is the ``LocalCluster`` this engine started.
    """

    def __init__(
        self,
        client,
        plugins_dir: str | None,
        chunk_rows: int,
        progress: Progress | None = None,
        local: bool = False,
        partitions: int | None = None,
    ):
        self.client = client
        self.local = local
        self.partitions = partitions
        self.plugins_dir = None if plugins_dir is None else os.path.abspath(plugins_dir)
        self.chunk_rows = chunk_rows
        self.progress = Progress() if progress is None else progress
        #: The input's rows, once a pass has counted them (shown against the next passes' progress).
        self.rows: int | None = None

    @classmethod
    @contextlib.contextmanager
    def connect(
        cls,
        scheduler: str | None,
        plugins_dir: str | None,
        chunk_rows: int,
        progress: Progress | None = None,
        partitions: int | None = None,
    ):
        """An engine on the scheduler at ``scheduler``, or on a ``LocalCluster`` of
        :data:`LOCAL_WORKERS` one-thread worker processes stopped when the block ends; it cuts
        one input file into ``partitions`` byte ranges at most (:meth:`plan`).

        Dask's warnings and log lines stay off the user's stderr: a failed task, or a cluster
        that went away, is the run's one error line.
        """
        distributed = import_distributed()
        progress = Progress() if progress is None else progress
        with contextlib.ExitStack() as stack, warnings.catch_warnings():
            warnings.filterwarnings("ignore", module=r"distributed(\.|$)")
            # In the console script for good: a cluster stopped by Ctrl-C still logs as it ends.
            if owns_process():
                for handler in logging.getLogger("distributed").handlers:
                    handler.setLevel(logging.CRITICAL)
            else:
                stack.enter_context(distributed.utils.silence_logging_cmgr(logging.CRITICAL))
            for logger in map(logging.getLogger, ("tornado", "asyncio")):
                if not owns_process():
                    stack.callback(logger.setLevel, logger.level)
                logger.setLevel(logging.CRITICAL)
            if scheduler is None:
                with progress.working(f"starting a local Dask cluster of {LOCAL_WORKERS} worker processes"):
                    client = stack.enter_context(_local_client(distributed))
            else:
                try:
                    client = stack.enter_context(distributed.Client(scheduler))
                    client.wait_for_workers(1, timeout=60)
                except (OSError, TimeoutError) as error:
                    raise FilterkitError(f"no Dask scheduler with workers at {scheduler} ({error})") from None
            yield cls(client, plugins_dir, chunk_rows, progress, scheduler is None, partitions)

    def check_workers(self, chain: Chain) -> None:
        """Refuse to run unless every worker has this filterkit version and each stage of ``chain``
        from the same plugin, distribution and version as the client (FilterkitError naming the
        worker and what differs).

        A local cluster is not asked: its workers are this interpreter started again, with its
        ``sys.path`` and plugin folder, so they load the same filterkit and plugins.
        """
        if self.local:
            return
        inventories = self.client.run(worker_inventory, self.plugins_dir)
        for worker, inventory in sorted(inventories.items()):
            if inventory["filterkit"] != __version__:
                raise FilterkitError(
                    f"Dask worker {worker} runs filterkit {inventory['filterkit']}, the client {__version__}; "
                    "install the same version everywhere"
                )
            for stage in chain.stages:
                mine = stage.provenance
                theirs = inventory["stages"].get(stage.name)
                if theirs is None:
                    raise FilterkitError(
                        f"Dask worker {worker} has no stage '{stage.name}' (the client has it from {mine}); "
                        "install the plugin on every worker"
                    )
                if mine is not None and list(theirs) != [mine.plugin, mine.distribution, mine.version]:
                    plugin, distribution, version = theirs
                    raise FilterkitError(
                        f"Dask worker {worker} has stage '{stage.name}' "
                        f"from {Provenance(plugin, distribution, version)}, "
                        f"the client from {mine}; install the same version everywhere"
                    )

    def default_partitions(self) -> int:
        """One partition per worker thread of the local cluster (its workers are alike, and each
        partition costs a task, a header written and read back, a reader and a writer), two per
        worker thread of a scheduler's cluster (where workers of unequal speed balance the load)."""
        threads = max(1, sum(self.client.nthreads().values()))
        return threads if self.local else 2 * threads

    def plan(self, input_path: str, partitions: int | None = None) -> Plan:
        """The partitions of ``input_path``: the files of a folder or a glob pattern, each one
        partition, or one file's data section cut into ``partitions`` byte ranges at most.

        Every file must declare the same attributes as the first (FilterkitError naming the
        first file and attribute that differ).
        """
        files = input_files(input_path)
        if files is None:
            schema, parts = split_file(input_path, partitions or self.default_partitions())
            sparse_rows = first_known(part.first_row_sparse(schema) for part in parts)
            return Plan(tuple(parts), schema, sparse_rows, header_comments(input_path))
        if partitions is not None:
            raise FilterkitError(
                f"--partitions splits one file; {input_path} gives {len(files)} file(s), each one partition"
            )
        names = output_names(files)
        futures = self.client.map(_file_partition, [os.path.abspath(f) for f in files], files, names, pure=False)
        described = list(results_in_order(futures))
        schema = described[0][0]
        for path, (other, _, _) in zip(files[1:], described[1:]):
            difference = schema.first_difference(other)
            if difference is not None:
                raise FilterkitError(f"header differs from {files[0]}'s: {difference}", path)
        parts = [part for _, part, _ in described]
        return Plan(tuple(parts), schema, first_known(form for _, _, form in described), header_comments(files[0]))

    @contextlib.contextmanager
    def opened(self, chain: Chain, input_path: str) -> Iterator[Plan]:
        """The input's plan, as :func:`filterkit.running.run` opens a source (:meth:`plan`)."""
        yield self.plan(input_path, self.partitions)

    def write(self, chain: Chain, plan: Plan, stream, form, comments: list[str], output: OutputFile | None) -> None:
        """The one output (:meth:`write_concatenated`), its parts written beside ``output``."""
        staging = None if output is None or output.how == "stream" else output.staging_folder
        self.write_concatenated(chain, plan, stream, form.sparse, comments, staging, form.numbers)

    def fit(self, chain: Chain, plan: Plan) -> Chain:
        """Fit every stage of ``chain`` in turn, one pass over the partitions per fitted stage."""

        def statistics_of(position: int, stage):
            with self._pass(f"fitting {stage.name}", chain, plan, position) as (recipe, meter):
                parts = self.client.map(
                    _partition_statistics, [recipe] * len(plan.partitions), plan.partitions, pure=False
                )
                merged = self._merge_tree(recipe, parts)
                _wait_in_order(parts, meter)
                return next(results_in_order([merged]))

        return chain.fit_with(plan.schema, statistics_of, self.progress)

    def recipe(self, chain: Chain, plan: Plan, fitting: int | None = None, rows_topic: str | None = None):
        """The recipe of ``chain`` (fitted up to stage ``fitting``, or wholly when None)."""
        count = len(chain.stages) if fitting is None else fitting + 1
        assert chain.input_schema is not None  # set when fitting starts
        stages = tuple(
            (stage.name, dict(stage.params), None if position == fitting else stage.state())
            for position, stage in enumerate(chain.stages[:count])
        )
        return ChainRecipe(
            uuid.uuid4().hex,
            stages,
            chain.input_schema,
            chain.class_name,
            chain.positive,
            self.plugins_dir,
            self.chunk_rows,
            plan.sparse_rows,
            rows_topic,
            files_of(chain.stages[:count]),
        )

    def checked_targets(self, plan: Plan, folder: str) -> list[OutputFile]:
        """The output file of each partition in ``folder`` (named as the inputs, or
        ``part-NNNNN.arff``), checked as ``-o`` is (:func:`filterkit.outputs.checked_output`);
        FilterkitError when one cannot be written or is an input."""
        if not os.path.isdir(folder):
            return [
                OutputFile(path, path, "replace", None)
                for path in (os.path.join(folder, p.output_name) for p in plan.partitions)
            ]
        targets = [checked_output(os.path.join(folder, p.output_name)) for p in plan.partitions]
        inputs = [partition.path for partition in plan.partitions]
        for target in targets:
            for path in inputs:
                if os.path.realpath(path) == target.target or (
                    target.existing is not None and os.path.samefile(path, target.target)
                ):
                    raise FilterkitError(f"--output-dir {folder} would overwrite the input {path}")
        return targets

    def write_each(
        self,
        chain: Chain,
        plan: Plan,
        folder: str,
        sparse: bool | None,
        comments: list[str],
        before_publish=None,
        numbers: NumberFormat = EXACT,
    ) -> list[str]:
        """Write one output per partition into ``folder`` (see :meth:`checked_targets`).

        Nothing appears in ``folder`` unless every partition was written and
        ``before_publish()`` (e.g. saving the model) returned.
        """
        targets = self.checked_targets(plan, folder)
        os.makedirs(folder, exist_ok=True)
        with _parts_folder(folder) as parts_folder:
            paths = _part_paths(plan, parts_folder)
            with self._pass("writing", chain, plan) as (recipe, meter):
                futures = self._submit_parts(recipe, plan, paths, sparse, comments, numbers)
                meter.count = sum(_wait_in_order(futures, meter))  # the rows written: the events may lag
            if before_publish is not None:
                before_publish()
            for part, target in zip(paths, targets):
                publish_file(target, part)
        return [target.target for target in targets]

    def write_concatenated(
        self,
        chain: Chain,
        plan: Plan,
        stream,
        sparse: bool | None,
        comments: list[str],
        parts_folder: str | None = None,
        numbers: NumberFormat = EXACT,
    ) -> None:
        """Write every partition's output to the binary ``stream``, in partition order, the header once.

        The parts are written by the workers into a temporary folder inside ``parts_folder``
        (else in the system's temporary folder); each is copied here, and removed, as soon as it
        and the parts before it are written, while the workers write the next ones.  A failed
        task's part holds the rows it wrote before its error, which go out before the error is
        raised: the run fails on the first error in the input's order, with the rows before it
        written, as a local run does, whichever task failed first.
        """
        assert chain.output_schema is not None  # the chain is fitted
        header = format_header(chain.output_schema, list(comments)).encode("utf-8")
        with _parts_folder(parts_folder) as folder, self._pass("writing", chain, plan) as (recipe, meter):
            paths = _part_paths(plan, folder)
            futures = self._submit_parts(recipe, plan, paths, sparse, comments, numbers)
            for number, future in enumerate(_ended_in_order(futures)):
                _copy_part(paths[number], future, header, stream, with_header=number == 0)
                meter.detail = f"{number + 1}/{len(futures)} partitions"
            meter.count = sum(results_in_order(futures))  # the rows written: the events may lag

    def _submit_parts(self, recipe, plan: Plan, paths: list[str], sparse, comments, numbers) -> list:
        """The tasks writing each partition's output to its path of ``paths``."""
        return [
            self.client.submit(_write_partition, recipe, partition, path, sparse, comments, numbers, pure=False)
            for partition, path in zip(plan.partitions, paths)
        ]

    @contextlib.contextmanager
    def _pass(self, label: str, chain: Chain, plan: Plan, fitting: int | None = None):
        """One pass called ``label``: the recipe its tasks share (sent once to every worker: were it
        on one worker only, the scheduler would queue the tasks there, by data locality) and the
        progress meter their rows advance.  No task of the pass starts after the block fails (a
        local cluster is not asked: it stops with the run, its workers with it)."""
        topic = f"{_ROWS_TOPIC}{uuid.uuid4().hex}" if self.progress.enabled else None
        recipe = self.recipe(chain, plan, fitting, topic)
        shared = self.client.scatter(recipe, hash=False, broadcast=True)
        with self.progress.step(label, items=self.rows) as meter:
            if topic is not None:
                self.client.subscribe_topic(topic, lambda event: meter.advance(event[1]))
            try:
                yield shared, meter
            except BaseException:
                if not self.local:
                    self.client.cancel([shared])
                raise
            finally:
                if topic is not None:
                    self.client.unsubscribe_topic(topic)
            self.rows = meter.count if topic is not None else None

    def _merge_tree(self, recipe, parts: list):
        """The future of all statistics merged: adjacent pairs on the workers, the earlier partition first."""
        while len(parts) > 1:
            pairs = [
                self.client.submit(_merged_statistics, recipe, parts[i], parts[i + 1], pure=False)
                for i in range(0, len(parts) - 1, 2)
            ]
            parts = pairs + parts[len(pairs) * 2 :]
        return parts[0]


@contextlib.contextmanager
def _local_client(distributed):
    """A client of a new ``LocalCluster`` of :data:`LOCAL_WORKERS` one-thread worker processes; a
    task running on a worker that dies fails at once (Dask's ``KilledWorker``), as a worker that
    dies once would die again running it.  The workers keep freed memory as this process does
    (:func:`filterkit.allocator.worker_environment`); this process's environment is left as it was."""
    import dask

    environment = worker_environment(dask.config.get(_WORKER_ENVIRONMENT))
    with _held_while_starting() as held:
        try:
            with _environment_restored(), dask.config.set({_ALLOWED_FAILURES: 0, _WORKER_ENVIRONMENT: environment}):
                cluster = distributed.LocalCluster(
                    n_workers=LOCAL_WORKERS,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    silence_logs=logging.CRITICAL,
                )
        except Exception as error:
            if not held:
                raise FilterkitError(f"the local Dask cluster did not start ({error})") from None
            cluster = None
    if held:
        with cluster or contextlib.nullcontext():
            held[0]()
    assert cluster is not None  # started, or an error raised above
    with cluster, distributed.Client(cluster) as client:
        yield client


@contextlib.contextmanager
def _held_while_starting():
    """In the console script (:func:`filterkit.ownership.owns_process`), while the local cluster
    starts: its worker processes, started now, get no standard error of their own (they share the
    terminal's process group, so Ctrl-C printed each one's traceback; their errors reach the client
    through Dask), and a stopping signal is held (Dask cannot stop a cluster it is starting): the
    list yielded gets the handler that ends the run, for the caller to call once the cluster can be
    stopped.  Elsewhere the caller's signals and streams are left alone."""
    held: list = []
    if not owns_process():
        yield held
        return
    handlers = {signum: signal.getsignal(signum) for signum in STOPPING_SIGNALS}
    for signum, handler in handlers.items():
        if callable(handler):
            signal.signal(signum, lambda number, frame: held.append(functools.partial(handlers[number], number, None)))
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield held
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        for signum, handler in handlers.items():
            signal.signal(signum, handler)


@contextlib.contextmanager
def _environment_restored():
    """This process's environment as it was before the block, after it.

    Dask's nanny sets its workers' variables (``OMP_NUM_THREADS=1``, ``PYTHONHASHSEED``, the
    allocator's, …) in the process that starts them, and leaves them there: a program that
    runs a chain on a local cluster would pass them on to every process it starts later.
    """
    before = dict(os.environ)
    try:
        yield
    finally:
        for name in [name for name in os.environ if name not in before]:
            del os.environ[name]
        os.environ.update({name: value for name, value in before.items() if os.environ.get(name) != value})


def _part_paths(plan: Plan, folder: str) -> list[str]:
    """Where each partition's output is written in ``folder``, in partition order."""
    return [os.path.join(folder, f"{number:05d}-{p.output_name}") for number, p in enumerate(plan.partitions)]


def _ended_in_order(futures: list) -> Iterator:
    """Each of ``futures`` as soon as it and every earlier one have ended, in order (so the client
    copies a part while the workers write the next ones), failed ones too: the caller raises the
    first failure in partition order, not the first in time, as a local run would report it."""
    distributed = import_distributed()
    position = {future.key: number for number, future in enumerate(futures)}
    ended = [False] * len(futures)
    ready = 0
    for future in distributed.as_completed(futures):
        ended[position[future.key]] = True
        while ready < len(futures) and ended[ready]:
            yield futures[ready]
            ready += 1


def _wait_in_order(futures: list, meter) -> list:
    """The results of ``futures``, raising the first error in partition order (:func:`_ended_in_order`)."""
    results = []
    for number, future in enumerate(_ended_in_order(futures)):
        _raise_if_failed(future)
        results.append(future.result())
        meter.detail = f"{number + 1}/{len(futures)} partitions"
    return results


def results_in_order(futures: list) -> Iterator:
    """The results of ``futures``, each waited for in turn: the first failure in that order is raised."""
    for future in futures:
        _raise_if_failed(future)
        yield future.result()


def _raise_if_failed(future) -> None:
    """Wait for the task ``future`` to end; raise its error if it failed: its own, or, where its
    worker process died running it, a FilterkitError saying so (Dask's ``KilledWorker``), or where
    the scheduler went away and Dask cancelled the task, a FilterkitError saying that."""
    error = future.exception()
    if future.status == "finished":
        return
    if future.status == "cancelled":
        raise FilterkitError("the Dask scheduler went away during the run; its tasks were cancelled")
    if isinstance(error, import_distributed().KilledWorker):
        raise FilterkitError(f"a Dask worker process died running a task ({error})") from None
    future.result()


@contextlib.contextmanager
def _parts_folder(beside: str | None):
    """A temporary folder for the workers' outputs (in ``beside``, else the system's), removed afterwards."""
    folder = tempfile.mkdtemp(prefix=".filterkit-parts-", dir=beside)
    try:
        yield folder
    finally:
        # After a failure a task still running may create its part while the folder is emptied;
        # once the folder is gone, no task can create one.
        for _ in range(100):
            shutil.rmtree(folder, ignore_errors=True)
            if not os.path.exists(folder):
                break


def _copy_part(path: str, future, header: bytes, stream, with_header: bool) -> None:
    """Copy the part file at ``path`` that the ended task ``future`` wrote into the binary
    ``stream``, its header checked (and written, ``with_header``), then remove it; a failed task's
    part holds the rows it wrote before its error, which go out before the error is raised."""
    if future.status != "finished" and not os.path.exists(path):
        _raise_if_failed(future)
    with open(path, "rb") as rows:
        found = rows.read(len(header))
        if future.status != "finished" and len(found) < len(header):
            _raise_if_failed(future)
        if found != header:
            raise FilterkitError("a partition's output has another header than the first's", path)
        if with_header:
            stream.write(header)
        shutil.copyfileobj(rows, stream, 1 << 20)
    os.remove(path)
    _raise_if_failed(future)
