"""Fitting and applying a chain over partitions on a Dask cluster (``--engine dask``).

The input is a list of partitions: several ARFF files sharing one header, or
one file whose data section is cut at line ends into byte ranges (so no row is
ever cut; a range is read with the schema already known, and an error still
names the file's own line: :mod:`filterkit.arff.partition`).  As :class:`filterkit.runner.Chain` does, each
fitted stage costs one pass; here a pass is one Dask task per partition, which
reads the partition's rows, pushes them through the stages already fitted and
accumulates the stage's statistics.  The statistics are merged pairwise, always
the earlier partition first, and finalized on the client.  A last task per
partition applies the fitted chain and writes that partition's output, which
the client moves into the output folder or concatenates in partition order.

Only statistics and fitted state travel through Dask: a task receives each
stage as its name, options and state (what a model file holds) and rebuilds it
through the plugin registry (:meth:`Chain.rebuilt`, as ``filterkit apply`` does); workers read their
rows from, and write them to, files they share with the client (on a local cluster, the first
partition's output goes through a named pipe, straight into the output).  Dask is
imported only when this engine is used.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import errno
import functools
import gc
import glob
import importlib.util
import io
import logging
import multiprocessing
import os
import re
import select
import shutil
import signal
import stat
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Iterator

from filterkit import __version__
from filterkit.allocator import worker_environment
from filterkit.arff.header import format_header
from filterkit.arff.partition import cut_at_line_ends, locate_rows, range_reader
from filterkit.arff.reader import ArffReader
from filterkit.arff.writer import EXACT, ArffWriter, NumberFormat
from filterkit.background import in_one_thread
from filterkit.errors import DASK_INSTALL_HINT, FilterkitError
from filterkit.outputs import OutputFile, checked_output, publish_file
from filterkit.ownership import STOPPING_SIGNALS, owns_process
from filterkit.plugins import load_plugins
from filterkit.progress import Progress
from filterkit.runner import Chain, guarded
from filterkit.schema import Chunk, Schema
from filterkit.stage import Provenance

#: Worker processes of the cluster started when no --scheduler is given.
LOCAL_WORKERS = 2
#: Dask's setting of the environment its nannies give the worker processes they spawn.
_WORKER_ENVIRONMENT = "distributed.nanny.pre-spawn-environ"
#: Dask's setting of how its nannies start worker processes.
_START_METHOD = "distributed.worker.multiprocessing-method"
#: Dask's setting of how many times a task may be running on a worker that dies before it fails.
_ALLOWED_FAILURES = "distributed.scheduler.allowed-failures"
#: Dask's setting of the folder its scheduler and workers make their scratch folders in.
_SCRATCH_FOLDER = "temporary-directory"
#: Dask's settings of the HTTP routes its scheduler and its workers serve.
_SCHEDULER_ROUTES = "distributed.scheduler.http.routes"
_WORKER_ROUTES = "distributed.worker.http.routes"
#: How long the forked workers may take to join their scheduler, and then to reach it again.
_WORKER_START_TIMEOUT = 60
#: How long the client waits for the forked cluster: Dask imported, and then the workers joined.
_CLUSTER_START_TIMEOUT = 2 * _WORKER_START_TIMEOUT
_GLOB_CHARACTERS = re.compile(r"[*?\[]")
#: The buffer asked for the named pipe the first partition's output comes through, and each copy from it.
_PIPE_SIZE = 1 << 20
#: How often (ms) the client looks whether the first partition's task ended without writing into its pipe.
_PIPE_LOOK_MS = 50
#: What sendfile and splice answer, before moving any byte, for an output they cannot write to (one
#: opened to append, a terminal): the bytes are then copied through this process.
_NOT_BY_THE_KERNEL = (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP)
#: Where the helper's scheduler and the forked workers serve HTTP (no route: ``_SCHEDULER_ROUTES``):
#: this machine only, on a free port (left unset, the scheduler takes 8787 and warns on standard
#: error where another cluster, a notebook's say, holds it).
_HELPER_HTTP_ADDRESS = "127.0.0.1:0"
#: What writing a part answers where its folder's disk or quota is full.
_NO_ROOM = (errno.ENOSPC, errno.EDQUOT)


def import_distributed():
    """The ``dask.distributed`` module; FilterkitError naming the extra to install if missing."""
    try:
        import dask.distributed
    except ImportError as error:
        raise FilterkitError(f"--engine dask needs Dask ({error}); install it with {DASK_INSTALL_HINT}") from None
    return dask.distributed


def check_dask_installed() -> None:
    """FilterkitError naming the extra to install unless Dask can be imported, without importing it
    (a local cluster imports it in the background, while the client plans)."""
    for name in ("dask", "distributed"):
        if importlib.util.find_spec(name) is None:
            raise FilterkitError(
                f"--engine dask needs Dask (No module named '{name}'); install it with {DASK_INSTALL_HINT}"
            )


def check_runnable(stages, input_path: str) -> None:
    """Refuse, before any cluster starts, what this engine cannot run identically to the local one:
    standard input, a FIFO or device, and a stage that needs each row's position in the whole
    input (:meth:`Stage.needs_row_positions`)."""
    if input_path == "-":
        raise FilterkitError("--engine dask reads files its workers can open; it cannot partition standard input")
    if os.path.exists(input_path) and not (os.path.isdir(input_path) or stat.S_ISREG(os.stat(input_path).st_mode)):
        raise FilterkitError(
            f"--engine dask reads files its workers can open again; {input_path} is not a regular file "
            "(a FIFO or device can be read once only: use --engine local)"
        )
    for stage in stages:
        if stage.needs_row_positions():
            raise FilterkitError(
                f"stage '{stage.name}' cannot run with --engine dask with these options: its result depends on "
                "each row's position in the whole input, which a partition does not know (use --engine local)"
            )


@dataclass(frozen=True)
class Partition:
    """The rows one task reads: bytes ``start:end`` of a file, from where its rows begin or
    from a line start within them; or, for a gzip-compressed file (start None), the whole file.

    ``label`` names the file in errors and ``output_name`` is the partition's
    file in ``--output-dir``.
    """

    path: str
    label: str
    output_name: str
    start: int | None = None
    end: int | None = None

    @contextlib.contextmanager
    def reader(self, schema: Schema, chunk_rows: int) -> Iterator[ArffReader]:
        """An :class:`ArffReader` of this partition's rows; its errors name the file's line."""
        if self.start is None:
            with ArffReader(self.path, self.label, chunk_rows) as reader:
                yield reader
            return
        assert self.end is not None  # a partition with a start has an end
        with range_reader(self.path, self.label, self.start, self.end, schema, chunk_rows) as reader:
            yield reader

    def chunks(self, schema: Schema, chunk_rows: int, sparse_rows: bool | None) -> Iterator[Chunk]:
        """The partition's rows, stored as the input's first row is (see :func:`_stored_as`)."""
        with self.reader(schema, chunk_rows) as reader:
            for chunk in reader.chunks():
                yield _stored_as(chunk, sparse_rows)

    def first_row_sparse(self, schema: Schema) -> bool | None:
        """Whether the partition's first row is sparse (None: it has no rows)."""
        with self.reader(schema, 1) as reader:
            first = next(reader.chunks(), None)
        return None if first is None else first.is_sparse


def _stored_as(chunk: Chunk, sparse_rows: bool | None) -> Chunk:
    """The chunk as CSR or dense, as the whole input's reader would store it.

    A reader stores rows by the form of the first row it reads; a partition's
    first row may differ from the input's in a file mixing sparse and dense rows.
    """
    if sparse_rows is None or chunk.is_sparse == sparse_rows:
        return chunk
    if not sparse_rows:
        return Chunk(chunk.dense_values(), chunk.text, chunk.weights)
    import scipy.sparse as sp  # only for a file mixing sparse and dense rows

    return Chunk(sp.csr_matrix(chunk.values), chunk.text, chunk.weights)


@dataclass(frozen=True)
class Plan:
    """The partitions of one input, their shared schema and how its first data row is stored;
    ``schema_key`` names the schema where the local cluster's workers were forked knowing it
    (:class:`InheritedSchema`)."""

    partitions: tuple[Partition, ...]
    schema: Schema
    sparse_rows: bool | None
    schema_key: str | None = None


#: The input schemas the local cluster's workers were forked knowing, by key (:class:`InheritedSchema`).
_INHERITED_SCHEMAS: dict[str, Schema] = {}


@dataclass(frozen=True)
class InheritedSchema:
    """An input schema the local cluster's workers hold since they were forked (:meth:`DaskEngine.plan`),
    named by ``key`` in a recipe instead of carried in it: a text header's 13,000 attributes sent to
    every worker for every pass cost a scatter (0.06–0.1 s of Dask round trips, pickling and
    unpickling) each time."""

    key: str

    def resolve(self) -> Schema:
        """The schema; FilterkitError in a process not forked knowing it."""
        try:
            return _INHERITED_SCHEMAS[self.key]
        except KeyError:
            raise FilterkitError("a Dask worker was sent a schema it was not forked knowing") from None


@dataclass(frozen=True)
class ChainRecipe:
    """What a task needs to rebuild a chain: each stage as ``(name, options, state)``
    (state None: the stage being fitted), the input schema, the class and the
    positive label, where the plugins come from and how partitions are read.
    ``token`` tells recipes apart, so a worker rebuilds each one once."""

    token: str
    stages: tuple
    schema: Schema | InheritedSchema
    class_name: str | None
    positive: str | None
    plugins_dir: str | None
    chunk_rows: int
    sparse_rows: bool | None

    def rebuild(self) -> Chain:
        """The chain with every stage prepared and, where a state is given, fitted."""
        schema = self.input_schema()
        return Chain.rebuilt(_registry(self.plugins_dir), self.stages, schema, self.class_name, self.positive)

    def input_schema(self) -> Schema:
        """The input's schema, carried or inherited."""
        return self.schema.resolve() if isinstance(self.schema, InheritedSchema) else self.schema

    def chunks(self, partition: Partition) -> Iterator[Chunk]:
        """The rows of ``partition``."""
        return partition.chunks(self.input_schema(), self.chunk_rows, self.sparse_rows)


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
    """A whole file as a partition, with its schema and whether its first row is sparse (read in the
    task's own thread, :func:`in_one_thread`)."""
    schema, rows_start, size = locate_rows(path, label)
    partition = Partition(path, label, output_name, rows_start, None if rows_start is None else size)
    with in_one_thread():
        return schema, partition, partition.first_row_sparse(schema)


def _partition_statistics(recipe: ChainRecipe, partition: Partition):
    """The statistics of the recipe's last stage over one partition's rows, read in the task's
    own thread (:func:`in_one_thread`: the workers' threads are the parallelism)."""
    chain = _chain_of(recipe)
    stage = chain.stages[-1]
    statistics = stage.new_statistics()
    with in_one_thread():
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
    thread (:func:`in_one_thread`); the row count."""
    chain = _chain_of(recipe)
    rows = 0
    assert chain.output_schema is not None  # the chain is fitted
    try:
        with in_one_thread(), _opened_part(path) as stream:
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


def _opened_part(path: str):
    """``path`` opened to write a partition's output: a new file, or the named pipe the client reads
    the first partition from (:func:`_first_part_pipe`), which fails at once (ENXIO) where the client
    has stopped reading it, instead of waiting for a reader forever."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK, 0o666)
    os.set_blocking(descriptor, True)
    return open(descriptor, "wb")


class DaskEngine:
    """Runs chains over partitions with one Dask client (see the module docstring).

    Each pass (a fitted stage, the writing) is reported to ``progress`` as partitions done.
    """

    def __init__(
        self,
        client,
        plugins_dir: str | None,
        chunk_rows: int,
        progress: Progress | None = None,
        local_threads: int | None = None,
    ):
        """``client`` is a Dask client, or the future of a local cluster and its client
        (:func:`_started_local_cluster`) with ``local_threads`` worker threads, or None for a local
        cluster not started yet (:meth:`connect`)."""
        self._client = client
        self._local_cluster: contextlib.ExitStack | None = None
        self.local_threads = local_threads
        self.plugins_dir = None if plugins_dir is None else os.path.abspath(plugins_dir)
        self.chunk_rows = chunk_rows
        self.progress = Progress() if progress is None else progress

    @classmethod
    @contextlib.contextmanager
    def connect(cls, scheduler: str | None, plugins_dir: str | None, chunk_rows: int, progress: Progress | None = None):
        """An engine on the scheduler at ``scheduler``, or on a local cluster of worker processes.

        A local cluster starts in the background (:meth:`_start_local_cluster`) and the client waits
        for it when it first needs it.  In the console script, where its scheduler and workers are
        forked from this process (:func:`_forked_cluster`), it starts once :meth:`plan` has read the
        input's header, so the workers know the schema; called as a library, at once.
        """
        progress = Progress() if progress is None else progress
        with contextlib.ExitStack() as stack:
            if scheduler is None:
                check_dask_installed()
                engine = cls(None, plugins_dir, chunk_rows, progress, local_threads=LOCAL_WORKERS)
                engine._local_cluster = stack
                if not _may_fork_workers():
                    engine._start_local_cluster({})
                yield engine
                return
            distributed = import_distributed()
            try:
                client = stack.enter_context(distributed.Client(scheduler))
                client.wait_for_workers(1, timeout=60)
            except (OSError, TimeoutError) as error:
                raise FilterkitError(f"no Dask scheduler with workers at {scheduler} ({error})") from None
            yield cls(client, plugins_dir, chunk_rows, progress)

    def _start_local_cluster(self, schemas: dict[str, Schema]) -> bool:
        """Start the local cluster in the background (:func:`_started_local_cluster`); whether its
        scheduler and workers were forked from this process, knowing ``schemas`` (by key).

        They are forked where this process may fork them (:func:`_may_fork_workers`); otherwise
        Dask's nannies spawn the workers.  The cluster stops when :meth:`connect`'s block ends.
        """
        assert self._local_cluster is not None and self._client is None  # a local cluster not started
        cluster = None
        if _may_fork_workers():
            distributed = import_distributed()
            # The versions a client and each worker send the scheduler on joining: read from the
            # packages' metadata once here (0.02 s), where the forked workers inherit Dask's cache.
            distributed.versions.get_versions()
            _silence_distributed_logs()  # the console script's client: its errors are one line
            gc.freeze()  # Dask's objects too: no collection in the client or a worker walks them
            _INHERITED_SCHEMAS.update(schemas)
            cluster = self._local_cluster.enter_context(_forked_cluster(LOCAL_WORKERS))
        self._client = started = _in_background(_started_local_cluster, cluster)
        self._local_cluster.callback(_stop_local_cluster, started, cluster)
        return cluster is not None

    @property
    def client(self):
        """The Dask client; for a local cluster still starting, once its workers are up."""
        if self._client is None:
            self._start_local_cluster({})
        if isinstance(self._client, concurrent.futures.Future):
            with self.progress.working(f"starting a local Dask cluster of {LOCAL_WORKERS} worker processes"):
                try:
                    self._client = self._client.result()[1]
                except Exception as error:
                    raise FilterkitError(f"the local Dask cluster did not start ({error})") from None
        return self._client

    def check_workers(self, chain: Chain) -> None:
        """Refuse to run unless every worker has this filterkit version and each stage of ``chain``
        from the same plugin, distribution and version as the client (FilterkitError naming the
        worker and what differs).

        A local cluster is not asked: its workers are this interpreter started again, with its
        ``sys.path`` and plugin folder, so they load the same filterkit and plugins.
        """
        if self.local_threads is not None:
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
        """One partition per worker thread of a local cluster (known without asking it: its workers
        are alike, and each partition costs a task, a header written and read back, a reader and a
        writer), two per worker thread of a scheduler's cluster (where workers of unequal speed
        balance the load)."""
        if self.local_threads:
            return self.local_threads
        return 2 * max(1, sum(self.client.nthreads().values()))

    def plan(self, input_path: str, partitions: int | None = None) -> Plan:
        """The partitions of ``input_path``: the files of a folder or a glob pattern, each one
        partition, or one file's data section cut into ``partitions`` byte ranges at most.

        Every file must declare the same attributes as the first (FilterkitError naming the
        first file and attribute that differ).
        """
        files = _input_files(input_path)
        if files is None:
            return self._file_plan(input_path, partitions)
        if partitions is not None:
            raise FilterkitError(
                f"--partitions splits one file; {input_path} gives {len(files)} file(s), each one partition"
            )
        names = _output_names(files)
        futures = self.client.map(_file_partition, [os.path.abspath(f) for f in files], files, names, pure=False)
        described = _results(futures)
        schema = described[0][0]
        for path, (other, _, _) in zip(files[1:], described[1:]):
            difference = schema.first_difference(other)
            if difference is not None:
                raise FilterkitError(f"header differs from {files[0]}'s: {difference}", path)
        parts = [part for _, part, _ in described]
        return Plan(tuple(parts), schema, _first_known(form for _, _, form in described))

    def _file_plan(self, path: str, partitions: int | None) -> Plan:
        """One file's data section cut into byte ranges (:meth:`plan`).  A local cluster not
        started yet starts now, its workers forked (where they are) knowing the schema."""
        schema, parts = _split_file(path, partitions or self.default_partitions())
        sparse_rows = _first_known(part.first_row_sparse(schema) for part in parts)
        key = uuid.uuid4().hex
        inherited = self._client is None and self._start_local_cluster({key: schema})
        return Plan(tuple(parts), schema, sparse_rows, key if inherited else None)

    def fit(self, chain: Chain, plan: Plan) -> Chain:
        """Fit every stage of ``chain`` in turn, one pass over the partitions per fitted stage."""

        def statistics_of(position: int, stage):
            recipe = self._shared(self.recipe(chain, plan, fitting=position), len(plan.partitions))
            parts = self.client.map(_partition_statistics, [recipe] * len(plan.partitions), plan.partitions, pure=False)
            merged = self._merge_tree(recipe, parts)
            self._report(f"fitting {stage.name}", parts)
            return _results([merged])[0]

        return chain.fit_with(plan.schema, statistics_of, self.progress)

    def recipe(self, chain: Chain, plan: Plan, fitting: int | None = None) -> ChainRecipe:
        """The recipe of ``chain`` (fitted up to stage ``fitting``, or wholly when None)."""
        count = len(chain.stages) if fitting is None else fitting + 1
        assert chain.input_schema is not None  # set when fitting starts
        schema = chain.input_schema if plan.schema_key is None else InheritedSchema(plan.schema_key)
        stages = tuple(
            (stage.name, dict(stage.params), None if position == fitting else stage.state())
            for position, stage in enumerate(chain.stages[:count])
        )
        return ChainRecipe(
            uuid.uuid4().hex,
            stages,
            schema,
            chain.class_name,
            chain.positive,
            self.plugins_dir,
            self.chunk_rows,
            plan.sparse_rows,
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
        os.makedirs(folder, exist_ok=True)
        targets = self.checked_targets(plan, folder)
        with _parts_folder(folder) as parts_folder:
            written = self._write_parts(chain, plan, parts_folder, sparse, comments, numbers)
            if before_publish is not None:
                before_publish()
            for part, target in zip(written, targets):
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

        The parts are written by the workers into a temporary folder inside
        ``parts_folder`` (else in the system's temporary folder); each is copied here, and
        removed, as soon as it and the parts before it are written, while the workers
        write the next ones.  A task's error is raised once the parts before it and the rows it
        wrote are out, so the run fails on the first error in the input's order, as a local run
        does, whichever task failed first.  On a local cluster the first partition is not stored at all:
        its worker writes into a named pipe this process copies from as the rows come
        (:func:`_stream_part`), so the first rows are out at once and the parts take the
        space of the others only.  Standard output is a stream: as a local run writes its
        rows, a run that fails part-way has written the rows before the failure (``-o``
        publishes its file only whole).
        """
        assert chain.output_schema is not None  # the chain is fitted
        header = format_header(chain.output_schema, list(comments)).encode("utf-8")
        with _parts_folder(parts_folder) as folder, contextlib.ExitStack() as pipes:
            paths = self._part_paths(plan, folder)
            first = _first_part_pipe(paths[0]) if self.local_threads else None
            if first is not None:
                pipes.callback(os.close, first)
            futures = self._submit_parts(chain, plan, paths, sparse, comments, numbers)
            with self._cancelled_on_failure(futures), self._pass("writing", futures) as meter:
                if first is not None:
                    _stream_part(first, paths[0], futures[0], header, stream)
                for number, future in enumerate(self._ended_in_order(futures, meter)):
                    if number > 0 or first is None:
                        _copy_part(paths[number], future, header, stream, with_header=number == 0)

    def _write_parts(self, chain, plan, folder, sparse, comments, numbers) -> list[str]:
        """Write each partition's output into ``folder``; their paths, in partition order."""
        paths = self._part_paths(plan, folder)
        futures = self._submit_parts(chain, plan, paths, sparse, comments, numbers)
        with self._cancelled_on_failure(futures):
            self._report("writing", futures)
        return paths

    @staticmethod
    def _part_paths(plan: Plan, folder: str) -> list[str]:
        """Where each partition's output is written in ``folder``, in partition order."""
        return [os.path.join(folder, f"{number:05d}-{p.output_name}") for number, p in enumerate(plan.partitions)]

    def _submit_parts(self, chain, plan, paths, sparse, comments, numbers) -> list:
        """The tasks writing each partition's output to its path of ``paths``."""
        recipe = self._shared(self.recipe(chain, plan), len(plan.partitions))
        return [
            self.client.submit(_write_partition, recipe, partition, path, sparse, comments, numbers, pure=False)
            for partition, path in zip(plan.partitions, paths)
        ]

    @contextlib.contextmanager
    def _cancelled_on_failure(self, futures: list):
        """No task of ``futures`` starts after the block fails; running ones may still end.  A local
        cluster is not asked: it is stopped with the run, its workers with it (and a scheduler
        already gone would keep the cancelling waiting, then raise)."""
        try:
            yield
        except BaseException:
            if self.local_threads is None:
                self.client.cancel(futures)
            raise

    def _pass(self, label: str, futures: list):
        """The progress step of a pass called ``label`` over the partitions of ``futures``."""
        return self.progress.step(label, items=len(futures), unit="partitions")

    @staticmethod
    def _ended_in_order(futures: list, meter) -> Iterator:
        """Each of ``futures`` as soon as it and every earlier one have ended, in order (so the
        client copies a part while the workers write the next ones), failed ones too: the caller
        raises the first failure in partition order, not the first in time, so that a run reports
        the error a local run reports. Each one ended advances ``meter`` (:meth:`_pass`)."""
        distributed = import_distributed()
        position = {future.key: number for number, future in enumerate(futures)}
        ended = [False] * len(futures)
        ready = 0
        for future in distributed.as_completed(futures):
            meter.advance()
            ended[position[future.key]] = True
            while ready < len(futures) and ended[ready]:
                yield futures[ready]
                ready += 1

    def _shared(self, recipe: ChainRecipe, partitions: int):
        """The recipe as the tasks of a pass over ``partitions`` partitions are given it: itself where
        its schema is inherited and each worker thread of the local cluster runs one partition's task
        (each task carries it: no scatter's round trips), else sent once to every worker, for the
        tasks to share (were it on one worker only, the scheduler would queue the tasks there, by
        data locality)."""
        if isinstance(recipe.schema, InheritedSchema) and partitions <= (self.local_threads or 0):
            return recipe
        return self.client.scatter(recipe, hash=False, broadcast=True)

    def _merge_tree(self, recipe, parts: list):
        """The future of all statistics merged: adjacent pairs on the workers, the earlier partition first."""
        while len(parts) > 1:
            pairs = [
                self.client.submit(_merged_statistics, recipe, parts[i], parts[i + 1], pure=False)
                for i in range(0, len(parts) - 1, 2)
            ]
            parts = pairs + parts[len(pairs) * 2 :]
        return parts[0]

    def _report(self, label: str, futures: list) -> None:
        """Wait for ``futures`` (one pass called ``label``), counting the partitions done for the
        progress; raise the first error in partition order (:meth:`_ended_in_order`)."""
        with self._pass(label, futures) as meter:
            for future in self._ended_in_order(futures, meter):
                _raise_if_failed(future)


def _first_known(forms: Iterator[bool | None]) -> bool | None:
    """The first of the partitions' first-row forms that is known (a partition with rows)."""
    return next((form for form in forms if form is not None), None)


def _failed(future) -> bool:
    """Whether the ended task ``future`` failed or was cancelled."""
    return future.status != "finished"


def _results(futures: list) -> list:
    """The results of ``futures``, waited for in order: the first failure in that order is raised
    (:func:`_raise_task_error`)."""
    results = []
    for future in futures:
        _raise_if_failed(future)
        results.append(future.result())
    return results


def _raise_task_error(distributed, future) -> None:
    """Raise the error of the failed task ``future``: its own, or, where its worker process died
    running it, a FilterkitError saying so (Dask's ``KilledWorker``), or where the scheduler went
    away and Dask cancelled the task, a FilterkitError saying that."""
    if future.status == "cancelled":
        raise FilterkitError("the Dask scheduler went away during the run; its tasks were cancelled")
    error = future.exception()
    if isinstance(error, distributed.KilledWorker):
        raise FilterkitError(f"a Dask worker process died running a task ({error})") from None
    future.result()


def _started_local_cluster(cluster: ForkedCluster | None) -> tuple:
    """A local cluster of :data:`LOCAL_WORKERS` one-thread worker processes (None where it was forked),
    and its client.

    In the console script the cluster is ``cluster``, a scheduler and its workers forked from this
    process once it had imported Dask and read the input's header (:func:`_forked_cluster`): the
    client connects once every worker has joined.  Called as a library, the scheduler runs in a
    thread of this process and Dask's nannies spawn the workers (each imports Dask, numpy, scipy and
    filterkit afresh).  Either way a task running on a worker that dies fails at once (with Dask's
    ``KilledWorker``, reported by :func:`_raise_task_error`), as a worker that dies once would die
    again running it.
    """
    import dask
    import distributed

    if cluster is not None:
        return None, distributed.Client(cluster.address(_CLUSTER_START_TIMEOUT))
    environment = worker_environment(dask.config.get(_WORKER_ENVIRONMENT))
    with (
        dask.config.set({_ALLOWED_FAILURES: 0}),
        _environment_restored(),
        dask.config.set({_START_METHOD: "spawn", _WORKER_ENVIRONMENT: environment}),
    ):
        local = distributed.LocalCluster(
            n_workers=LOCAL_WORKERS,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=logging.CRITICAL,  # a failed task is the client's one error line, not a log
        )
    try:
        return local, distributed.Client(local)
    except BaseException:
        local.close()
        raise


def _in_background(function, *args) -> concurrent.futures.Future:
    """The future of ``function(*args)``, run in a daemon thread: a run stopped while it still runs
    (the client connecting to a cluster just stopped, which Dask retries for 30 s) ends at once."""
    future: concurrent.futures.Future = concurrent.futures.Future()

    def run() -> None:
        future.set_running_or_notify_cancel()
        try:
            future.set_result(function(*args))
        except BaseException as error:
            future.set_exception(error)

    threading.Thread(target=run, name="filterkit-cluster", daemon=True).start()
    return future


def _may_fork_workers() -> bool:
    """Whether the local cluster may be forked from this process: in the console script
    (:func:`filterkit.ownership.owns_process`), where filterkit knows every thread and open file,
    while no other Python thread runs (a plugin may have started one: a lock it held would stay
    locked in the workers), and where there is ``fork``; otherwise Dask's nannies spawn the workers."""
    return owns_process() and threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods()


class ForkedCluster:
    """The local cluster's helper process (:func:`_forked_cluster`), seen from the client: it
    reports the scheduler's address on one pipe, and ends the cluster when the other is closed."""

    def __init__(self, helper: int, control: int, report: int, scratch: str | None = None):
        """``helper`` is the helper's process id, ``control`` the pipe whose closing ends the
        cluster, ``report`` the pipe the helper writes its one line on, and ``scratch`` the folder
        of the scheduler's and workers' scratch folders, removed once the helper has ended."""
        self.helper = helper
        self.control = control
        self.report = report
        self.scratch = scratch
        self.stopped = False
        self._lock = threading.Lock()

    def address(self, timeout: float) -> str:
        """The scheduler's address, once every worker runs on it: the helper's line ``address
        ADDRESS``; FilterkitError with its ``error MESSAGE``, or where it ended without a word
        (the cluster was stopped, or the helper died); TimeoutError after ``timeout`` seconds."""
        line = b""
        try:
            deadline = time.monotonic() + timeout
            while not line.endswith(b"\n"):
                waiting = deadline - time.monotonic()
                if waiting <= 0 or not select.select([self.report], [], [], waiting)[0]:
                    raise TimeoutError(f"no word from the cluster's helper process in {timeout:g} s")
                read = os.read(self.report, 4096)
                if not read:
                    break
                line += read
        finally:
            os.close(self.report)
        word, _, rest = line.decode(errors="replace").strip().partition(" ")
        if word == "address":
            return rest
        if word == "error":
            raise FilterkitError(rest)
        raise FilterkitError("the local Dask cluster was stopped while it started")

    def stop(self) -> None:
        """End the scheduler and the workers at once (the run's output is complete, or it failed),
        wait for the helper to have reaped them and remove the scratch folder (the helper removes
        it, unless it was killed). Called again (a signal interrupted the wait), it waits and
        removes again."""
        with self._lock:
            if not self.stopped:
                self.stopped = True
                os.close(self.control)
        with contextlib.suppress(ChildProcessError):  # reaped already
            os.waitpid(self.helper, 0)
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)


@contextlib.contextmanager
def _forked_cluster(count: int) -> Iterator[ForkedCluster]:
    """A helper process forked from this one, once it has imported Dask and the tasks' modules (and
    read the input's header), which forks ``count`` worker processes and runs their scheduler
    (:func:`_serve_cluster`); once the block ends (or this process exits), it kills the workers,
    reaps them, and exits.

    Forked with everything imported, a worker starts in 0.05 s instead of importing it all again
    (0.8–1.1 s of CPU), and the scheduler's work is not this process's.  Call before this process
    starts any thread (a fork copies only the calling thread, and a lock another thread held would
    stay locked in the helper).
    """
    sys.stdout.flush()
    sys.stderr.flush()
    scratch = tempfile.mkdtemp(prefix="filterkit-dask-")
    control_read, control_write = os.pipe()
    report_read, report_write = os.pipe()
    # A stopping signal during the fork would be raised inside its at-fork callbacks (logging's),
    # which swallow it: it waits, and comes once the fork has returned (the helper sets its own).
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOPPING_SIGNALS)
    try:
        helper = os.fork()
    except OSError:  # no process to be had (EAGAIN, ENOMEM): nothing of the cluster is left
        for pipe in (control_read, control_write, report_read, report_write):
            os.close(pipe)
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    if helper == 0:  # pragma: no cover - the helper process
        os.close(control_write)
        os.close(report_read)
        _serve_cluster(count, control_read, report_write, scratch, mask)
    os.close(control_read)
    os.close(report_write)
    cluster = ForkedCluster(helper, control_write, report_read, scratch)
    try:
        yield cluster
    finally:
        cluster.stop()


def _serve_cluster(count: int, control: int, report: int, scratch: str, mask) -> None:  # pragma: no cover
    """The helper process: fork ``count`` workers (each waiting on its own pipe for the
    scheduler's address), then run the scheduler (:func:`_schedule`) until the client closes
    ``control`` (or exits); then kill the workers, reap them and exit, leaving the scheduler as it
    is (closing it and its event loop added 0.01 s to the end of every run). Never returns.

    ``mask`` is the client's signal mask, restored once this process's own handlers are set (the
    stopping signals were held back around the fork). Whatever fails here is reported on
    ``report`` as ``error MESSAGE``, for the client to say."""
    workers: list[int] = []
    status = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the client's to handle
        # Sent to it, or to the whole process group, these end it at once: its workers exit with it
        # (their lifeline) and the client removes the scratch folder. A handler raising here could
        # fire in the cleanup below and carry this forked process past os._exit into the client's code.
        for stopping in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(stopping, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # the client's, blocked around the fork
        distributed = import_distributed()  # imported before the fork
        import dask

        # The scheduler's and the workers' scratch folders go in ``scratch``, removed at the end (killed,
        # a worker leaves its own behind; killed, the helper too: the client removes it). Nothing reads a
        # run's cluster's /metrics or /health: they serve no HTTP routes, so neither imports their
        # handlers (0.01 s of each start).
        dask.config.set({_SCRATCH_FOLDER: scratch, _SCHEDULER_ROUTES: [], _WORKER_ROUTES: []})
        # Held open by this process only: a worker sees it end (this process died) and exits at once.
        lifeline, lifeline_end = os.pipe()
        addresses: list[int] = []
        for _ in range(count):
            read_end, write_end = os.pipe()
            worker = os.fork()
            if worker == 0:
                for pipe in [control, report, write_end, lifeline_end, *addresses]:
                    os.close(pipe)
                _run_worker(read_end, lifeline)
            os.close(read_end)
            addresses.append(write_end)
            workers.append(worker)
        os.close(lifeline)
        asyncio.new_event_loop().run_until_complete(_schedule(distributed, addresses, control, report))
    except BaseException as error:
        status = 1
        with contextlib.suppress(OSError):
            message = str(error) if isinstance(error, (FilterkitError, TimeoutError)) else repr(error)
            os.write(report, f"error {' '.join(message.split())}\n".encode())
    finally:
        _end_workers(workers)
        shutil.rmtree(scratch, ignore_errors=True)
        os._exit(status)


async def _schedule(distributed, addresses: list[int], control: int, report: int) -> None:  # pragma: no cover
    """In the helper: start a scheduler, tell each worker its address on the pipes ``addresses``,
    report ``address ADDRESS`` on ``report`` once all of them run on it (:func:`_workers_joined`),
    and return once ``control`` is closed."""
    import dask

    _silence_distributed_logs()
    environment = worker_environment(dask.config.get(_WORKER_ENVIRONMENT))
    loop = asyncio.get_running_loop()
    ended = asyncio.Event()

    def end() -> None:
        loop.remove_reader(control)  # closed: readable from now on
        ended.set()

    loop.add_reader(control, end)
    scheduler = await distributed.Scheduler(
        host="127.0.0.1",
        port=0,
        protocol="tcp",
        dashboard=False,
        dashboard_address=_HELPER_HTTP_ADDRESS,
        allowed_failures=0,
    )
    message = repr((scheduler.address, {name: str(value) for name, value in environment.items()}))
    for pipe in addresses:
        os.write(pipe, message.encode() + b"\n")
        os.close(pipe)
    await _workers_joined(scheduler, len(addresses), _WORKER_START_TIMEOUT, ended)
    os.write(report, f"address {scheduler.address}\n".encode())
    await ended.wait()


async def _workers_joined(scheduler, count: int, timeout: float, ended: asyncio.Event) -> None:
    """Wait for ``count`` workers to be running on ``scheduler``, up to ``timeout`` seconds
    (TimeoutError), and no longer once ``ended`` is set (FilterkitError then).

    The scheduler's table is looked at every 5 ms: ``Client.wait_for_workers`` asks every
    0.1 s, which kept a run waiting 0.05 s on average after its workers had joined.
    """
    deadline = time.monotonic() + timeout
    while not ended.is_set():
        running = sum(worker.status.name == "running" for worker in scheduler.workers.values())
        if running >= count:
            return
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{running} of {count} workers started in {timeout:g} s")
        await asyncio.sleep(0.005)
    raise FilterkitError("the local Dask cluster was stopped while it started")


def _end_workers(workers: list[int]) -> None:  # pragma: no cover - in the helper process
    """Kill the helper's ``workers`` and reap them."""
    for worker in workers:
        with contextlib.suppress(ProcessLookupError):
            os.kill(worker, signal.SIGKILL)
    for worker in workers:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(worker, 0)


def _silence_distributed_logs() -> None:
    """Dask's log lines (and those of tornado, under it) left out: a failed task, or a cluster that
    went away, is the client's one error line, not a log."""
    for name in ("distributed", "tornado"):
        for handler in logging.getLogger(name).handlers:
            handler.setLevel(logging.CRITICAL)


def _run_worker(address_pipe: int, lifeline: int) -> None:  # pragma: no cover - a forked process
    """A forked worker: read the scheduler's address and environment from ``address_pipe``, then
    serve as a one-thread Dask worker until killed, or until ``lifeline`` ends (the helper that
    forked it died: nobody else would end it). Never returns."""
    status = 0
    try:
        with os.fdopen(address_pipe, "rb") as pipe:
            message = pipe.readline()
        if message:
            import ast

            import distributed

            scheduler_address, environment = ast.literal_eval(message.decode())
            os.environ.update(environment)
            _silence_distributed_logs()
            asyncio.run(_serve_tasks(distributed, scheduler_address, lifeline))
    except BaseException:
        status = 1
    finally:
        os._exit(status)


async def _serve_tasks(distributed, scheduler_address: str, lifeline: int) -> None:  # pragma: no cover
    """Run a one-thread Dask worker of the scheduler at ``scheduler_address`` until it closes, or
    end this process at once when ``lifeline`` ends (read: the helper died)."""
    asyncio.get_running_loop().add_reader(lifeline, os._exit, 1)
    async with distributed.Worker(
        scheduler_address,
        nthreads=1,
        death_timeout=_WORKER_START_TIMEOUT,
        memory_limit=0,
        dashboard_address=_HELPER_HTTP_ADDRESS,
    ) as worker:
        await worker.finished()


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


def _stop_local_cluster(started: concurrent.futures.Future, cluster: ForkedCluster | None) -> None:
    """Stop the cluster of :func:`_started_local_cluster` and its client, once started (nothing to
    stop if starting failed: the error reaches the user when the engine asks for the client).

    A forked ``cluster`` still starting is ended first, and a client still connecting to it is not
    waited for (Dask would retry for 30 s; it runs in a daemon thread); once started, the client
    leaves the scheduler before the helper ends it (and the workers, at once: the output is
    complete, or the run failed)."""
    if cluster is not None and not started.done():
        cluster.stop()
        if not started.done():
            return
    try:
        local, client = started.result()
    except Exception:
        return
    client.close()
    if local is not None:
        local.close()
    if cluster is not None:
        cluster.stop()


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


def _check_header(found: bytes, header: bytes, path: str) -> None:
    """Refuse a partition's output whose first bytes are not ``header``, the output's."""
    if found != header:
        raise FilterkitError("a partition's output has another header than the first's", path)


def _first_part_pipe(path: str) -> int | None:
    """A named pipe at ``path`` for the first partition's worker to write its output into, opened
    here for reading without waiting for it (so its worker's open never waits for this process),
    its buffer enlarged (the kernel's default is 64 KiB); None where this system cannot move
    bytes from a pipe with ``splice`` or the folder's file system has no named pipes."""
    if not hasattr(os, "splice"):
        return None
    try:
        os.mkfifo(path, 0o600)
        reading = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        with contextlib.suppress(OSError):
            os.remove(path)
        return None
    import fcntl  # this system has splice: Linux

    with contextlib.suppress(OSError):
        fcntl.fcntl(reading, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
    return reading


def _stream_part(reading: int, path: str, future, header: bytes, stream) -> None:
    """Copy the first partition's output from the named pipe ``reading`` (at ``path``) to the binary
    ``stream`` as the task ``future`` writes it: its header checked and written once, then the
    rows as they come.  Raises the task's error once it has ended: the rows it wrote before
    failing stay written, as a local run's do (a worker killed in the middle of a write, as a local
    run killed there, may leave its last row cut short; the run then fails saying the worker died).
    The other partitions' errors come after this one's rows, as they would in a local run."""
    poller = select.poll()
    poller.register(reading, select.POLLIN)
    # A task that fails before opening the pipe never writes, nor closes it: stop waiting once it ended.
    while not poller.poll(_PIPE_LOOK_MS) and not future.done():
        pass
    os.set_blocking(reading, True)
    found = _read_at_most(reading, len(header))
    # A header cut short: the task ended (or died) before writing it whole, and its error says why.
    # Another header: refused at once (the task, blocked on a full pipe, ends once it is closed).
    if len(found) < len(header):
        _raise_if_failed(future)
    _check_header(found, header, path)
    stream.write(header)
    _splice_rest(reading, stream)
    _raise_if_failed(future)


def _raise_if_failed(future) -> None:
    """Wait for the task ``future`` to end; raise its error if it failed (:func:`_raise_task_error`)."""
    future.exception()
    if _failed(future):
        _raise_task_error(import_distributed(), future)


def _copy_part(path: str, future, header: bytes, stream, with_header: bool) -> None:
    """Copy the part file at ``path`` that the ended task ``future`` wrote into the binary
    ``stream``, its header checked (and written, ``with_header``), then remove it; a failed task's
    part holds the rows it wrote before its error, which go out before the error is raised, as the
    first partition's do (:func:`_stream_part`) and a local run's would."""
    failed = _failed(future)
    if failed and not os.path.exists(path):
        _raise_task_error(import_distributed(), future)
    with open(path, "rb") as rows:
        found = rows.read(len(header))
        if failed and len(found) < len(header):
            _raise_task_error(import_distributed(), future)
        _check_header(found, header, path)
        if with_header:
            stream.write(header)
        _copy_rest(rows, stream)
    os.remove(path)
    if failed:
        _raise_task_error(import_distributed(), future)


def _read_at_most(reading: int, size: int) -> bytes:
    """The next ``size`` bytes of the pipe ``reading``, fewer where its writer closes it first."""
    blocks = []
    while size > 0 and (block := os.read(reading, size)):
        blocks.append(block)
        size -= len(block)
    return b"".join(blocks)


def _splice_rest(reading: int, stream) -> None:
    """Copy what comes from the pipe ``reading``, until its writer closes it, to ``stream``: by the
    kernel (``splice``) when ``stream`` is a plain file or pipe, without passing the bytes
    through this process."""
    if _has_descriptor(stream):
        stream.flush()
        try:
            while os.splice(reading, stream.fileno(), _PIPE_SIZE):
                pass
            return
        except OSError as error:
            if error.errno not in _NOT_BY_THE_KERNEL:
                raise
    while block := os.read(reading, _PIPE_SIZE):
        stream.write(block)


def _has_descriptor(stream) -> bool:
    """Whether the binary ``stream`` writes straight to its file descriptor (a plain file or pipe,
    not a compressor or a buffer in memory), which the kernel can copy into."""
    return isinstance(stream, (io.BufferedWriter, io.FileIO))


def _copy_rest(source, stream) -> None:
    """Copy the rest of the binary file ``source`` to ``stream``: by the kernel (``sendfile``)
    when ``stream`` is a plain file or pipe, without passing the bytes through this process."""
    if not _has_descriptor(stream):
        shutil.copyfileobj(source, stream)
        return
    stream.flush()
    offset = source.tell()
    while True:
        try:
            sent = os.sendfile(stream.fileno(), source.fileno(), offset, 1 << 30)
        except OSError as error:
            if error.errno not in _NOT_BY_THE_KERNEL:
                raise
            source.seek(offset)
            shutil.copyfileobj(source, stream)
            return
        if sent == 0:
            return
        offset += sent


def partition_files(input_path: str) -> list[str]:
    """The files ``input_path`` stands for: a folder's or a glob pattern's files, else itself."""
    return _input_files(input_path) or [input_path]


def checked_output_folder(folder: str) -> str:
    """``--output-dir`` as an absolute path (workers may run elsewhere), checked before any
    work: a folder, or one that can be created, where files may be written."""
    if not folder:
        raise FilterkitError("cannot write into --output-dir '': the folder name is empty")
    absolute = os.path.abspath(folder)
    existing = absolute
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise FilterkitError(f"cannot write into --output-dir {folder}: {existing} is not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise FilterkitError(f"cannot write into --output-dir {folder}: the folder {existing} is not writable")
    return absolute


def _input_files(input_path: str) -> list[str] | None:
    """The files of a folder (``*.arff``, ``*.arff.gz``) or of a glob pattern, by name; None for one file."""
    if os.path.isdir(input_path):
        files = sorted(
            os.path.join(input_path, name)
            for name in os.listdir(input_path)
            if name.endswith((".arff", ".arff.gz")) and os.path.isfile(os.path.join(input_path, name))
        )
        if not files:
            raise FilterkitError(f"no *.arff or *.arff.gz file in the folder {input_path}")
        return files
    if not os.path.exists(input_path) and _GLOB_CHARACTERS.search(input_path):
        files = sorted(path for path in glob.glob(input_path) if os.path.isfile(path))
        if not files:
            raise FilterkitError(f"no file matches {input_path}")
        return files
    return None


def _output_names(files: list[str]) -> list[str]:
    """Each input file's name without ``.gz``: what its output is called in ``--output-dir``."""
    names: list[str] = []
    seen: dict[str, str] = {}
    for path in files:
        name = os.path.basename(path)
        name = name[: -len(".gz")] if name.endswith(".gz") else name
        if name in seen:
            raise FilterkitError(f"two inputs would give the output {name}: {seen[name]} and {path}")
        seen[name] = path
        names.append(name)
    return names


def _split_file(path: str, count: int) -> tuple[Schema, list[Partition]]:
    """One file's schema and its rows cut at line ends into at most ``count`` non-empty byte ranges.

    A gzip-compressed file cannot be cut and is one partition.
    """
    absolute = os.path.abspath(path)
    schema, rows_start, size = locate_rows(absolute, path)
    if rows_start is None:
        return schema, [Partition(absolute, path, "part-00000.arff")]
    ranges = cut_at_line_ends(absolute, rows_start, size, count)
    return schema, [
        Partition(absolute, path, f"part-{number:05d}.arff", start, end) for number, (start, end) in enumerate(ranges)
    ]
