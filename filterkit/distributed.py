"""Fitting and applying a chain over partitions on a Dask cluster (``--engine dask``).

The input is a list of partitions (:mod:`filterkit.partitions`): of ARFF, or of one CSV or JSON Lines
file, whose header comes from a scan of the whole file here, as a local run scans it.  As
:class:`filterkit.runner.Chain` does, each fitted stage costs one pass; here a pass is one Dask task per
partition, which reads the partition's rows, pushes them through the stages already fitted and
accumulates the stage's statistics, which the client merges in partition order.  A last task per
partition writes that partition's output into a part file, which the client moves into the output
folder or copies, in partition order, into the one output.  ``apply`` runs that last pass alone (its
chain comes fitted); ``predict`` runs a pass of a model's chain and classifier (:meth:`DaskEngine.write_predictions`).

Only statistics and fitted state travel through Dask: a task receives each stage as its name,
options and state (what a model file holds) and rebuilds it through the plugin registry; workers read
and write the rows in files they share with the client.  Dask is imported only when this engine is used.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import functools
import importlib.metadata
import logging
import os
import pickle
import shutil
import sys
import tempfile
import threading
import uuid
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator
from unittest import mock

from filterkit import kept_on_workers
from filterkit.allocator import DASK_WORKER_ENVIRONMENT, worker_environment
from filterkit.arff.header import format_header
from filterkit.arff.writer import ArffWriter
from filterkit.dask_connection import absolute_provenance, plugin_digest, plugin_files, scheduler_client, unsendable
from filterkit.dask_futures import result_of, results_in_order, shared_value, spread
from filterkit.errors import DASK_INSTALL_HINT, FilterkitError
from filterkit.formats import ARFF, FormatOptions, format_of, registered
from filterkit.labels import meka_layout, taken_columns
from filterkit.option_files import files_of, sent_files
from filterkit.outputs import OutputFile, append_rest, publish_file
from filterkit.ownership import owns_process, stopping_signals_recorded
from filterkit.partitions import (
    Partition,
    Plan,
    RecordPartition,
    file_plan,
    input_files,
    joined,
    output_names,
    output_targets,
    record_plan,
)
from filterkit.plugins import BUILT_IN_DISTRIBUTION, Registered, load_plugins, running_registry
from filterkit.progress import Progress
from filterkit.runner import Chain, guarded
from filterkit.running import OutputForm, OutputTarget, new_rows_relation, output_stream
from filterkit.schema import Chunk, Schema
from filterkit.stage import Provenance
from filterkit.version import __version__


def machine_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it, else the machine's): the
    worker processes of the cluster started when no --scheduler is given, unless --workers says."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def import_distributed():
    """The ``dask.distributed`` module; FilterkitError naming the extra to install if missing."""
    try:
        import dask.distributed
    except ImportError as error:
        raise FilterkitError(f"--engine dask needs Dask ({error}); install it with {DASK_INSTALL_HINT}") from None
    return dask.distributed


@dataclass(frozen=True)
class ChainRecipe:
    """What a task needs to rebuild a chain: each stage as ``(name, options, state)`` (state None:
    the stage being fitted), the input schema, the class and the positive label, where the plugins
    come from, how partitions are read, the Dask event topic a task reports the rows it has read on
    (None: no progress is shown), the files the options of the stage being fitted name, read by
    the client (a fitted stage's state holds what it read), the label attributes' names (as given,
    Mulan's XML; None: MEKA's relation or none) and the relation name of a fitted chain's output."""

    stages: tuple
    schema: Schema
    class_name: str | None
    positive: str | None
    plugins_dir: str | None
    chunk_rows: int
    sparse_rows: bool | None
    rows_topic: str | None = None
    files: dict[str, bytes | OSError] = field(default_factory=dict)
    labels: tuple[str, ...] | None = None
    relation: str | None = None
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    #: the run whose pass this is (the same in every pass of one run), under which workers keep a pass's chunks
    run: str | None = None

    def rebuild(self) -> Chain:
        """The chain with every stage prepared and, where a state is given, fitted; its output named
        :attr:`relation` where given (a fitted chain applied to new rows: their relation name)."""
        registry = _registry(self.plugins_dir)
        chain = Chain.rebuilt(registry, self.stages, self.schema, self.class_name, self.positive, self.labels)
        if self.relation is not None:
            assert chain.output_schema is not None  # every stage fitted
            chain.output_schema = dataclasses.replace(chain.output_schema, relation=self.relation)
        return chain

    def chunks(self, partition: Partition | RecordPartition) -> Iterator[Chunk]:
        """The rows of ``partition``, each chunk's rows reported on :attr:`rows_topic` once read."""
        return self.counted(self.read(partition))

    def read(self, partition: Partition | RecordPartition) -> Iterator[Chunk]:
        """The rows of ``partition``."""
        with running_registry(functools.partial(_registry, self.plugins_dir)):  # its formats, --plugins-dir's too
            yield from partition.chunks(self.schema, self.chunk_rows, self.sparse_rows)

    def counted(self, chunks) -> Iterator[Chunk]:
        """``chunks``, each one's rows reported on :attr:`rows_topic` once read."""
        worker = None if self.rows_topic is None else import_distributed().get_worker()
        for chunk in chunks:
            if worker is not None:
                worker.log_event(self.rows_topic, chunk.n_rows)
            yield chunk


_rebuilt = threading.local()


def _chain_of(recipe: ChainRecipe) -> Chain:
    """``recipe.rebuild()``, done once per recipe (its ``token``) and worker thread: the tasks of a
    pass share it, as the chunks of a local pass share one chain (never two threads at once)."""
    kept_on_workers.start(recipe.run)
    cached = getattr(_rebuilt, "chain", None)
    if cached is None or cached[0] != recipe.token:
        _rebuilt.chain = cached = (recipe.token, recipe.rebuild())
    return cached[1]


@dataclass(frozen=True)
class ModelRecipe:
    """What a task needs to rebuild a model of ``train``: its fitted chain's recipe, its classifier section (what
    the model file holds, its arrays decoded), the reading options of its training data and the function that
    makes the model of those (``make(chain, section, reading, registry)``, passed by reference)."""

    chain: ChainRecipe
    section: dict
    reading: tuple
    make: Callable

    def rebuild(self):
        """The model of the recipe (a :class:`filterkit.trained.TrainedModel`)."""
        return self.make(self.chain.rebuild(), self.section, self.reading, _registry(self.chain.plugins_dir))


def _model_of(recipe: ModelRecipe):
    """``recipe.rebuild()``, done once per recipe (its chain's ``token``) and worker thread, as :func:`_chain_of`."""
    kept_on_workers.start(recipe.chain.run)
    cached = getattr(_rebuilt, "model", None)
    if cached is None or cached[0] != recipe.chain.token:
        _rebuilt.model = cached = (recipe.chain.token, recipe.rebuild())
    return cached[1]


#: The plugin registry, loaded once per worker process and ``--plugins-dir`` files' stamps.
_registry_of = functools.cache(lambda plugins_dir, stamps: load_plugins(plugins_dir))


def _registry(plugins_dir: str | None):
    """The worker's plugin registry, loaded again when a ``--plugins-dir`` file changed since (it ran the old code
    for as long as the worker lived)."""
    return _registry_of(plugins_dir, plugin_files(plugins_dir, _stamp))


def _stamp(path: str) -> tuple[int, int, int]:
    """What changes when a file is written: its size, modification time and inode (a file replaced)."""
    found = os.stat(path)
    return found.st_size, found.st_mtime_ns, found.st_ino


def worker_inventory(plugins_dir: str | None) -> dict:
    """What a worker runs: its filterkit version, the digest of the ``--plugins-dir`` files it reads and, per stage
    and per classifier, the plugin, distribution and version it comes from (what :meth:`DaskEngine.check_workers`
    compares with the client's)."""
    registry = _registry(plugins_dir)

    def provenances(table) -> dict:
        return {name: [r.plugin, r.distribution, r.version] for name, r in table.items()}

    return {
        "filterkit": __version__,
        "plugins_digest": plugin_digest(plugins_dir),
        "stages": provenances(registry.stages),
        "classifiers": provenances(registry.classifiers),
    }


def _partition_statistics(recipe: ChainRecipe, partition: Partition | RecordPartition, number: int):
    """The statistics of the recipe's last stage over the rows of partition ``number``, in the task's own thread
    (the workers' threads are the parallelism), with the worker's address: what the pass before kept of it on
    this worker is read back (else the partition is read), and what this pass is given is kept for the next
    (:mod:`filterkit.kept_on_workers`)."""
    with sent_files(recipe.files):
        chain = _chain_of(recipe)
        position = len(chain.stages) - 1
        stage = chain.stages[position]
        kept_before = kept_on_workers.take(recipe.run, number)
        filling = kept_on_workers.fresh(partition)
        try:
            statistics = chain.fit_pass(
                position,
                guarded(stage, "fit", stage.new_statistics),
                lambda: recipe.read(partition),
                kept_before,
                filling,
                recipe.counted,
                own_form=False,  # a stage's own form numbers what its partition met: not the merged statistics
            )
        except BaseException:
            filling.close()
            raise
        finally:
            if kept_before is not None:
                kept_before.close()
        kept_on_workers.leave(recipe.run, number, filling)
    return statistics, _worker_address()


def _worker_address() -> str | None:
    """The address of the Dask worker running this task (None outside one: a task function called directly)."""
    try:
        return import_distributed().get_worker().address
    except ValueError:
        return None


def _write_partition(
    recipe: ChainRecipe,
    partition: Partition | RecordPartition,
    number: int,
    path: str,
    form: OutputForm,
    comments: list[str],
) -> int:
    """Apply the fitted chain to partition ``number`` (what the last fitting pass kept of it on this worker, else
    its rows) and write it as a whole ARFF file, in the task's own thread; the row count."""
    rows = 0
    kept = kept_on_workers.take(recipe.run, number)
    with _part_file(path) as stream, sent_files(recipe.files), contextlib.ExitStack() as stack:
        if kept is not None:
            stack.callback(kept.close)
        chain = _chain_of(recipe)
        assert chain.output_schema is not None  # the chain is fitted
        schema, order = meka_layout(chain.output_schema, chain.label_names)
        writer = ArffWriter(stream, schema, form.sparse, comments, form.numbers)
        read = chain.transform(recipe.chunks(partition)) if kept is None else chain.transform_kept(kept, recipe.counted)
        for chunk in read:
            writer.write(chunk if order is None else taken_columns(chunk, order))
            rows += chunk.n_rows
    return rows


def _score_partition(recipe: ModelRecipe, partition: Partition | RecordPartition, writer, path: str) -> int:
    """Score one partition's rows with the recipe's model, in the task's own thread: per chunk, its row count and
    ``writer.outputs(model, chunk)`` pickled into the file at ``path``; the row count."""
    rows = 0
    with _part_file(path) as stream:
        model = _model_of(recipe)
        for chunk in recipe.chain.chunks(partition):
            pickle.dump((chunk.n_rows, writer.outputs(model, chunk)), stream, pickle.HIGHEST_PROTOCOL)
            rows += chunk.n_rows
    return rows


def _format_partition(recipe: ModelRecipe, writer, scores: str, path: str, rows: int, rows_before: list[int]) -> int:
    """Write one partition's predictions, scored into the file ``scores`` (:func:`_score_partition`: ``rows``
    rows, after ``rows_before`` in the partitions before it), as text numbered from the input's first row
    (``writer.text(model, outputs, first_row)`` per chunk) into the file at ``path``; the row count."""
    first_row = sum(rows_before) + 1
    with _part_file(path) as stream, open(scores, "rb") as scored:
        model = _model_of(recipe)
        for chunk_rows, outputs in _pickled(scored):
            stream.write(writer.text(model, outputs, first_row).encode("utf-8"))
            first_row += chunk_rows
    os.remove(scores)
    return rows


def _pickled(stream) -> Iterator:
    """Each object pickled in turn into the binary ``stream``, to its end."""
    while True:
        try:
            yield pickle.load(stream)
        except EOFError:
            return


@contextlib.contextmanager
def _part_file(path: str):
    """The binary file at ``path`` that a task writes its part into; a file system without room for it is the
    FilterkitError saying where the parts go."""
    try:
        with open(path, "wb") as stream:
            yield stream
    except OSError as error:
        if error.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        raise FilterkitError(
            f"{error.strerror} writing the partitions' outputs: --engine dask needs room for the whole output "
            "in this folder (the system's temporary folder, TMPDIR, when the output is standard output)",
            os.path.dirname(path),
        ) from None


@dataclass
class DaskEngine:
    """Runs chains over partitions with one Dask client (see the module docstring).

    Each pass (a fitted stage, the writing) is reported to ``progress`` as the rows its tasks have
    read, against ``rows`` once a pass (or the scan of a CSV or JSON Lines input) has counted them.
    ``local`` says the client's cluster is the ``LocalCluster`` this engine started; ``partitions`` is
    ``--partitions`` (see :meth:`opened`); ``input_format`` and ``options`` are ``--from`` and the
    formats' reading options, as :class:`filterkit.running.LocalEngine` takes them.
    """

    client: Any
    plugins_dir: str | None
    chunk_rows: int
    progress: Progress = field(default_factory=Progress)
    local: bool = False
    partitions: int | None = None
    rows: int | None = None
    input_format: str | None = None
    options: FormatOptions = FormatOptions()
    #: this run's name, under which workers keep what a pass was given for the next (:mod:`filterkit.kept_on_workers`)
    run: str = field(default_factory=lambda: uuid.uuid4().hex)
    #: per partition number, the worker that keeps what its last pass was given: its next task is sent there
    placed: dict[int, str] = field(default_factory=dict)
    #: whether a pass has sent tasks, which may keep what they were given or tune the workers' allocator
    #: (:meth:`forget_kept` then has work)
    keeping: bool = False

    @classmethod
    @contextlib.contextmanager
    def connect(
        cls,
        scheduler: str | None,
        plugins_dir: str | None,
        chunk_rows: int,
        progress: Progress | None = None,
        partitions: int | None = None,
        input_format: str | None = None,
        options: FormatOptions = FormatOptions(),
        workers: int | None = None,
    ):
        """An engine on the scheduler at ``scheduler``, or on a ``LocalCluster`` of ``workers`` one-thread
        processes (None: one per core, :func:`machine_cores`) stopped when the block ends.  Dask's warnings and
        log lines stay off the user's stderr (in the console script for good: a cluster stopped by Ctrl-C still
        logs as it ends)."""
        distributed = import_distributed()
        progress = Progress() if progress is None else progress
        plugins_dir = None if plugins_dir is None else os.path.abspath(plugins_dir)
        with contextlib.ExitStack() as stack, warnings.catch_warnings():
            warnings.filterwarnings("ignore", module=r"distributed(\.|$)")
            if owns_process():
                logging.disable(logging.CRITICAL)
            else:
                stack.enter_context(distributed.utils.silence_logging_cmgr(logging.CRITICAL))
                for logger in map(logging.getLogger, ("tornado", "asyncio")):
                    stack.callback(logger.setLevel, logger.level)
                    logger.setLevel(logging.CRITICAL)
            if scheduler is None:
                workers = machine_cores() if workers is None else workers
                with progress.working(
                    f"starting a local Dask cluster of {workers} worker process{'es' * (workers != 1)}"
                ):
                    client = stack.enter_context(_local_client(distributed, workers))
            else:
                client = stack.enter_context(scheduler_client(distributed, scheduler))
                try:
                    client.wait_for_workers(1, timeout=60)
                except (OSError, TimeoutError) as error:
                    raise FilterkitError(f"no Dask scheduler with workers at {scheduler} ({error})") from None
            engine = cls(
                client, plugins_dir, chunk_rows, progress, scheduler is None, partitions, None, input_format, options
            )
            stack.callback(engine.forget_kept)  # before the client closes
            yield engine

    def forget_kept(self) -> None:
        """Once a pass has sent tasks, have every worker delete what it keeps for this run, and what a task of it
        still running would keep later, and give back the memory its allocator kept (a worker gone meanwhile keeps
        nothing)."""
        if self.keeping and self.client.status == "running":  # not a client whose scheduler went away
            with contextlib.suppress(Exception):
                self.client.run(kept_on_workers.forget, self.run, on_error="ignore")
            self.placed.clear()
            self.keeping = False

    def _submit_placed(self, function, number: int, *arguments):
        """A task of ``function`` for partition ``number``, sent to the worker that keeps what its last pass
        was given (another worker may run it when that one is busy or gone: it reads the partition then)."""
        held = self.placed.get(number)
        placement = {} if held is None else {"workers": [held], "allow_other_workers": True}
        return self.client.submit(function, *arguments, pure=False, **placement)

    def check_workers(self, chain: Chain, classifier: Registered | None = None) -> None:
        """Refuse to run unless the scheduler (which unpickles each task) and every worker have this filterkit
        version, and every worker each stage of ``chain`` and the ``classifier`` (a model's, which ``predict``
        rebuilds on the workers) from the same plugin, distribution and version as the client (FilterkitError
        naming the worker and what differs).  A local cluster's workers are this interpreter started again."""
        if self.local:
            return
        try:  # a function of the standard library: one of filterkit's would fail to unpickle there
            scheduler = self.client.run_on_scheduler(importlib.metadata.version, BUILT_IN_DISTRIBUTION)
        except importlib.metadata.PackageNotFoundError:
            scheduler = None
        if scheduler != __version__:
            runs = "has no filterkit" if scheduler is None else f"runs filterkit {scheduler}"
            raise FilterkitError(
                f"the Dask scheduler {runs}, the client {__version__}; it reads every task, so install the "
                "client's version there too"
            )
        wanted = [("stage", stage.name, absolute_provenance(stage.provenance)) for stage in chain.stages]
        if classifier is not None:
            wanted.append(("classifier", classifier.name, absolute_provenance(classifier.provenance)))
        digest = plugin_digest(self.plugins_dir)
        for worker, inventory in sorted(self.client.run(worker_inventory, self.plugins_dir).items()):
            if inventory["filterkit"] != __version__:
                raise FilterkitError(
                    f"Dask worker {worker} runs filterkit {inventory['filterkit']}, the client {__version__}; "
                    "install the same version everywhere"
                )
            if inventory["plugins_digest"] != digest:
                raise FilterkitError(
                    f"Dask worker {worker} reads other plugin files in --plugins-dir {self.plugins_dir} than the "
                    "client (another copy of the folder, or a file being written): the same files everywhere"
                )
            for kind, name, mine in wanted:
                theirs = inventory[f"{kind}s"].get(name)
                if theirs is None:
                    raise FilterkitError(
                        f"Dask worker {worker} has no {kind} '{name}' (the client has it from {mine}); "
                        "install the plugin on every worker"
                    )
                if mine is not None and Provenance(*theirs) != mine:
                    raise FilterkitError(
                        f"Dask worker {worker} has {kind} '{name}' from {Provenance(*theirs)}, "
                        f"the client from {mine}; install the same version everywhere"
                    )

    def default_partitions(self) -> int:
        """One partition per worker thread of the local cluster (its workers are alike), two per worker
        thread of a scheduler's cluster (where workers of unequal speed balance the load)."""
        threads = max(1, sum(self.client.nthreads().values()))
        return threads if self.local else 2 * threads

    @contextlib.contextmanager
    def opened(self, chain: Chain, input_path: str) -> Iterator[Plan]:
        """The partitions of ``input_path``, as :func:`filterkit.running.run` opens a source: the ARFF files
        of a folder or a glob pattern, each one partition (their headers read by tasks), or one file's
        rows cut into :attr:`partitions` byte ranges at most (:meth:`default_partitions`); a CSV or JSON
        Lines file scanned here for its header first (for a fitted chain, with its training header, as
        :class:`filterkit.running.LocalEngine` reads new rows)."""
        files = input_files(input_path)
        fitted = chain.output_schema is not None
        count = self.partitions or self.default_partitions()
        if files is None:
            format_name = format_of(input_path, self.input_format)
            form = registered(format_name)
            if form.ranges is not None and not form.streams:  # its header from a scan here; else read by the tasks
                yield self._scanned_plan(input_path, format_name, count, chain if fitted else None)
            else:
                yield file_plan(os.path.abspath(input_path), input_path, count=count)
            return
        if self.partitions is not None:
            raise FilterkitError(
                f"--partitions splits one file; {input_path} gives {len(files)} file(s), each one partition"
            )
        other = next((f for f in files if format_of(f, self.input_format) != ARFF), None)
        if other is not None:
            raise FilterkitError(
                f"--engine dask reads a folder or pattern of ARFF files only, and {other} is not one: "
                "give a CSV or JSON Lines input as one file (it is cut into partitions)"
            )
        plans = self.client.map(file_plan, [os.path.abspath(f) for f in files], files, output_names(files), pure=False)
        yield joined(list(results_in_order(plans)), files)

    def _scanned_plan(self, input_path: str, format_name: str, count: int, fitted: Chain | None) -> Plan:
        """The plan of a file its format cuts into ranges (CSV, JSON Lines), its header from a scan of the whole
        file here (a pass); for the ``fitted`` chain, its training header, under the relation name a local run
        gives the new rows (:func:`filterkit.running.new_rows_relation`)."""
        from filterkit.sources import ScannedSource

        known_schema = None if fitted is None else fitted.input_schema
        with contextlib.closing(
            ScannedSource.of_file(input_path, format_name, self.chunk_rows, self.options, known_schema)
        ) as source:
            assert source.layout is not None  # scanned when made
            self.rows = source.rows
            path = os.path.abspath(input_path)
            plan = record_plan(path, input_path, format_name, source.layout, source.reading, count)
            if fitted is None:
                return plan
            return dataclasses.replace(
                plan, schema=dataclasses.replace(plan.schema, relation=new_rows_relation(source, fitted))
            )

    def fit(self, chain: Chain, plan: Plan) -> None:
        """Fit ``chain``, one pass over the partitions per fitted stage (see the module docstring)."""

        def statistics_of(position: int, stage):
            with self._pass(f"fitting {stage.name}", chain, plan, fitting=position) as (recipe, meter):
                parts = [
                    self._submit_placed(_partition_statistics, number, recipe, partition, number)
                    for number, partition in enumerate(plan.partitions)
                ]

                def placed_statistics():
                    for number, (statistics, worker) in enumerate(results_in_order(parts, meter)):
                        if worker is not None:
                            self.placed[number] = worker
                        yield statistics

                merge = functools.partial(guarded, stage, "fit", stage.merge)
                return functools.reduce(merge, placed_statistics())

        chain.fit_with(plan.schema, statistics_of, self.progress)

    def recipe(self, chain: Chain, plan: Plan, fitting: int | None = None, rows_topic: str | None = None):
        """The recipe of ``chain`` (fitted up to stage ``fitting``, or wholly when None)."""
        count = len(chain.stages) if fitting is None else fitting + 1
        assert chain.input_schema is not None  # set when fitting starts
        stages = tuple(
            (stage.name, dict(stage.params), None if position == fitting else stage.state())
            for position, stage in enumerate(chain.stages[:count])
        )
        return ChainRecipe(
            stages,
            chain.input_schema,
            chain.class_name,
            chain.positive,
            self.plugins_dir,
            self.chunk_rows,
            plan.sparse_rows,
            rows_topic,
            {} if fitting is None else files_of([chain.stages[fitting]]),  # a fitted stage's state holds what it read
            None if chain.labels is None else tuple(chain.labels.names),
            None if fitting is not None or chain.output_schema is None else chain.output_schema.relation,
            run=self.run,
        )

    def check_target(self, plan: Plan, target: OutputTarget) -> None:
        """An output per partition: refuse, before any pass, an output file in the folder that cannot be
        written or is an input (:func:`filterkit.partitions.output_targets`)."""
        if target.each_into is not None:
            output_targets(plan, target.each_into)

    def write(
        self,
        chain: Chain,
        plan: Plan,
        target: OutputTarget,
        form: OutputForm,
        comments: list[str],
        before_publish: Callable[[], None] | None,
    ) -> None:
        """Write the partitions' outputs to the target: into its one file (:meth:`_write_joined`), or
        each into its folder (:meth:`_write_each`); ``before_publish()`` runs once every row is written."""
        if target.each_into is not None:
            self._write_each(chain, plan, target.each_into, form, comments, before_publish)
            return
        with output_stream(target.file, before_publish) as stream:
            self._write_joined(chain, plan, stream, form, comments, target.file)

    def _write_each(
        self, chain: Chain, plan: Plan, folder: str, form: OutputForm, comments: list[str], before_publish
    ) -> None:
        """Write one output per partition into ``folder`` (see :meth:`check_target`): nothing
        appears there unless every partition was written and ``before_publish()`` (e.g. saving the
        model) returned."""
        targets = output_targets(plan, folder)
        made = not os.path.isdir(folder)
        os.makedirs(folder, exist_ok=True)
        try:
            with self._writing(chain, plan, folder, form, comments) as (meter, parts):
                meter.count = sum(results_in_order([future for _, future in parts], meter))
                if before_publish is not None:
                    before_publish()
                for (part, _), target in zip(parts, targets):
                    publish_file(target, part)
        except BaseException:
            if made:
                with contextlib.suppress(OSError):
                    os.rmdir(folder)  # the folder this run made, empty when nothing was published
            raise

    def _write_joined(
        self, chain: Chain, plan: Plan, stream, form: OutputForm, comments: list[str], output: OutputFile | None
    ) -> None:
        """Write every partition's output to the binary ``stream`` (of ``output``), in partition order,
        the header once, each part copied (:func:`_copy_part`) as soon as it and the parts before it
        are written: the run fails on the first error in the input's order, with the rows before it
        written, as a local run does."""
        assert chain.output_schema is not None  # the chain is fitted
        header = format_header(meka_layout(chain.output_schema, chain.label_names)[0], list(comments))
        beside = None if output is None or output.how == "stream" else output.staging_folder
        with self._writing(chain, plan, beside, form, comments) as (meter, parts):
            for number, (path, future) in enumerate(parts, 1):
                _copy_part(path, future, header, stream, with_header=number == 1)
                meter.detail = f"{number}/{len(parts)} partitions"
            meter.count = sum(future.result() for _, future in parts)

    def write_predictions(self, model, plan: Plan, writer, stream, beside: str | None) -> None:
        """Write the predictions of ``model`` (a :class:`filterkit.trained.TrainedModel`) for every row of the
        plan's partitions to the binary ``stream``, in the input's order: ``writer.header()`` first, then each
        partition's text, the same as one process writes (``writer`` says how: ``predict``'s writer; a task
        makes the model again with ``writer.model(chain, section, reading, registry)``).

        A task per partition scores its rows (``writer.outputs(model, chunk)`` per chunk) into a file in a
        temporary folder in ``beside`` (else the system's); a second task per partition formats them as text
        once the partitions before it have counted their rows, which number its rows; the client copies each
        formatted part, in partition order, as soon as it and the parts before it are written; the header waits
        for the first part.  The run fails on the first error in the input's order, as a local run does: a stream
        (standard output) has then had the header and the parts before the failing one unless that was the first,
        as one process's stream has had the rows its buffer let out."""
        as_model = functools.partial(ModelRecipe, section=model.section, reading=model.reading, make=writer.model)
        predicting = self._pass("predicting", model.chain, plan, shared_as=as_model)
        with _parts_folder(beside) as folder, predicting as (recipe, meter):
            count = len(plan.partitions)
            scores = [os.path.join(folder, f"{number:05d}.scores") for number in range(count)]
            parts = [os.path.join(folder, f"{number:05d}.text") for number in range(count)]
            scored = [
                self.client.submit(_score_partition, recipe, partition, writer, path, pure=False)
                for partition, path in zip(plan.partitions, scores)
            ]
            formatted = [
                self.client.submit(
                    _format_partition, recipe, writer, scores[number], parts[number], rows, scored[:number], pure=False
                )
                for number, rows in enumerate(scored)
            ]
            if formatted:
                result_of(formatted[0])  # the header held until the first partition is written
            stream.write(writer.header().encode("utf-8"))
            for number, (path, future) in enumerate(zip(parts, formatted), 1):
                result_of(future)
                with open(path, "rb") as part:
                    append_rest(part, stream)
                os.remove(path)
                meter.detail = f"{number}/{count} partitions"
            meter.count = sum(future.result() for future in formatted)

    @contextlib.contextmanager
    def _writing(self, chain: Chain, plan: Plan, beside: str | None, form: OutputForm, comments: list[str]):
        """The writing pass: its meter, whose count is set to the rows written (the events may lag),
        and each partition's part file in a temporary folder in ``beside`` (else in the system's
        temporary folder), in partition order, with the task writing it."""
        with _parts_folder(beside) as folder, self._pass("writing", chain, plan) as (recipe, meter):
            paths = [os.path.join(folder, f"{number:05d}-{p.output_name}") for number, p in enumerate(plan.partitions)]
            futures = [
                self._submit_placed(_write_partition, number, recipe, partition, number, path, form, comments)
                for number, (partition, path) in enumerate(zip(plan.partitions, paths))
            ]
            yield meter, list(zip(paths, futures))

    @contextlib.contextmanager
    def _pass(
        self, label: str, chain: Chain, plan: Plan, fitting: int | None = None, shared_as: Callable = lambda r: r
    ):
        """One pass called ``label``: what its tasks share, ``shared_as(recipe)`` of the chain's recipe (the
        recipe itself, or a :class:`ModelRecipe` holding it) as a task's result (``shared_value``: computed again
        where a dying worker held its last copy; the scheduler holds it for the pass, a model's arrays too), copied
        to every worker as the pass starts (``spread``: were it on one worker only, the scheduler would queue the
        tasks there, by data locality; Dask's memory manager may drop copies later), and the progress meter their
        rows advance."""
        self.keeping = True
        topic = f"filterkit-rows-{uuid.uuid4().hex}" if self.progress.enabled else None
        try:
            shared = self.client.submit(shared_value, shared_as(self.recipe(chain, plan, fitting, topic)), pure=False)
        except Exception as error:  # Dask's serialization of the recipe: a plugin's state that pickle cannot take
            raise FilterkitError(unsendable(chain, error)) from None
        spread(self.client, shared)
        with self.progress.step(label, items=self.rows) as meter, contextlib.ExitStack() as stack:
            if topic is not None:
                self.client.subscribe_topic(topic, lambda event: meter.advance(event[1]))
                stack.callback(self.client.unsubscribe_topic, topic)
            yield shared, meter
            self.rows = meter.count


@contextlib.contextmanager
def _local_client(distributed, workers: int):
    """A client of a new ``LocalCluster`` of ``workers`` one-thread worker processes (Dask gives each an
    equal share of the machine's memory as its limit); a
    task running on a worker that dies fails at once (Dask's ``KilledWorker``), as a worker that
    dies once would die again running it.  The workers keep freed memory as this process does
    (:func:`filterkit.allocator.worker_environment`); this process's environment, in which Dask's
    nanny sets its workers' variables, is left as it was."""
    import dask

    environment = worker_environment(dask.config.get(DASK_WORKER_ENVIRONMENT))
    settings = {"distributed.scheduler.allowed-failures": 0, DASK_WORKER_ENVIRONMENT: environment}
    with _held_while_starting() as held:
        try:
            with mock.patch.dict(os.environ), dask.config.set(settings):
                cluster = distributed.LocalCluster(
                    n_workers=workers, threads_per_worker=1, dashboard_address=None, silence_logs=logging.CRITICAL
                )
        except Exception as error:
            if not held:
                raise FilterkitError(f"the local Dask cluster did not start ({error})") from None
            cluster = contextlib.nullcontext()
    with cluster:
        if held:
            held[0]()
        with distributed.Client(cluster) as client:
            yield client


@contextlib.contextmanager
def _held_while_starting():
    """In the console script (:func:`filterkit.ownership.owns_process`), while the local cluster
    starts: its worker processes, started now, get no standard error of their own (they share the
    terminal's process group, so Ctrl-C printed each one's traceback; their errors reach the client
    through Dask), and a stopping signal is held (Dask cannot stop a cluster it is starting): the
    list yielded gets the handler that ends the run, for the caller to call once the cluster can be
    stopped.  Elsewhere the caller's signals and streams are left alone."""
    if not owns_process():
        yield []
        return
    with stopping_signals_recorded() as held:
        sys.stderr.flush()
        saved = os.dup(2)
        try:
            with open(os.devnull, "wb") as null:
                os.dup2(null.fileno(), 2)
            yield held
        finally:
            os.dup2(saved, 2)
            os.close(saved)


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
    """Copy the part file at ``path`` that the task ``future`` writes into the binary ``stream``
    once the task has ended, its header checked (and written, ``with_header``), then remove it; a
    failed task's part holds the rows it wrote before its error, which go out before the error
    is raised."""
    future.exception()  # waits for the task to end
    finished = future.status == "finished"
    if finished or os.path.exists(path):
        with open(path, "rb") as rows:
            found = rows.read(len(header))
            if found == header:
                stream.write(header if with_header else b"")
                append_rest(rows, stream)
            elif finished:
                raise FilterkitError("a partition's output has another header than the first's", path)
        os.remove(path)
    result_of(future)
