"""Where a ``filterkit --engine dask`` run spends its time (issue 20, item 6; docs/dask.md).

    python benchmarks/dask_profile.py [--spawn] [--inline] -- FILTERKIT ARGUMENTS > /dev/null

for example ``-- -q -c first --engine dask benchmarks/.inputs/grain_x100.arff shape bns l2``.  The run
happens in this process, with the engine's steps timed from outside (nothing in filterkit changes):
on stderr, each step's wall time, the client's CPU and the workers' CPU (their ``getrusage``, asked
through ``Client.run`` before and after), the wait for the local cluster (which starts in the
background once the client has planned), the CPU of the helper process that runs the scheduler and
forked the workers, the workers' page faults, the pickled sizes of the recipes and the merged
statistics, and Dask's task stream (compute and transfer time per kind of task, and each task's start
and end on its worker).

The run is the console script's (its workers forked from the client, through one helper process);
``--spawn`` runs it as a library call does instead (Dask's nannies spawn the workers), to compare.
``--inline`` runs the engine's
code with Dask replaced by tasks run in place, one at a time, in this process: the cost of
partitioning without the cluster.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import pickle
import resource
import sys
import time


def own_cpu() -> float:
    """User + system CPU seconds of this process (the client, and the scheduler of a library call's
    local cluster)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def helper_cpu() -> float:
    """User + system CPU seconds so far of the helper process that runs the local cluster's scheduler
    and forked its workers (0 if there is none): this process's child that is not a worker."""
    children = [int(pid) for pid in open(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read().split()]
    if not children:
        return 0.0
    with open(f"/proc/{children[0]}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def worker_usage() -> tuple[float, int]:
    """CPU seconds and minor page faults of the worker process this runs in."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime, usage.ru_minflt


class Finished:
    """A stand-in for a Dask future whose task already ran."""

    status = "finished"
    made = itertools.count()

    def __init__(self, value):
        self.value = value
        self.key = f"inline-{next(Finished.made)}"

    def result(self):
        return self.value

    def exception(self):
        """No error: the task ran, in place (filterkit.distributed waits on this before a result)."""
        return None


def _value(argument):
    return argument.value if isinstance(argument, Finished) else argument


class InlineClient:
    """Just enough of a Dask client for filterkit.distributed, running each task at once, in place."""

    def map(self, function, *iterables, pure=True):
        return [Finished(function(*map(_value, arguments))) for arguments in zip(*iterables)]

    def submit(self, function, *arguments, pure=True):
        return Finished(function(*map(_value, arguments)))

    def scatter(self, value, hash=True, broadcast=False):
        return value

    def run(self, function, *arguments):
        return {"inline": function(*arguments)}

    def nthreads(self):
        return {"inline-1": 1, "inline-2": 1}

    def gather(self, futures):
        return [future.value for future in futures]

    def cancel(self, futures):
        pass


class InlineDistributed:
    """The part of ``dask.distributed`` filterkit.distributed uses, for InlineClient's futures."""

    @staticmethod
    def as_completed(futures):
        return iter(futures)


class Profile:
    """The steps of one run, timed by wrapping filterkit.distributed.DaskEngine's methods."""

    def __init__(self, engine_class):
        self.engine_class = engine_class
        self.client = None
        self.steps: list[tuple[str, float, float, float]] = []
        self.recipe_bytes: list[int] = []
        self.merged: list = []
        self.marks: dict[str, float] = {}

    def workers_cpu(self) -> float:
        if self.client is None:
            return 0.0
        return sum(cpu for cpu, _ in self.client.run(worker_usage).values())

    def timed(self, label: str, method):
        profile = self

        def step(*arguments, **options):
            wall, cpu, workers = time.perf_counter(), own_cpu(), profile.workers_cpu()
            try:
                return method(*arguments, **options)
            finally:
                elapsed = time.perf_counter() - wall
                profile.steps.append((label, elapsed, own_cpu() - cpu, profile.workers_cpu() - workers))

        return step

    def install(self, inline: bool) -> None:
        engine, profile = self.engine_class, self
        started, client_of = engine.__init__, engine.client.fget

        def made(self, *arguments, **options):
            started(self, *arguments, **options)
            profile.marks["engine"] = time.perf_counter()

        def client(self):
            if profile.client is not None or inline:
                return client_of(self)
            asked = time.perf_counter()
            value = client_of(self)
            profile.client = value
            profile.marks["asked"], profile.marks["ready"] = asked, time.perf_counter()
            profile.marks["workers at ready"] = profile.workers_cpu()
            profile.marks["helper at ready"] = helper_cpu()
            value.get_task_stream()  # installs the scheduler's task-stream plugin
            profile.marks["stream from"] = time.time()
            return value

        engine.__init__, engine.client = made, property(client)
        for name in ("check_workers", "plan", "fit", "write_concatenated"):
            setattr(engine, name, self.timed(name, getattr(engine, name)))
        shared, merge_tree = engine._shared, engine._merge_tree

        def sharing(self, recipe, partitions):
            profile.recipe_bytes.append(len(pickle.dumps(recipe)))
            return profile.timed("share the recipe (a scatter, unless it names an inherited schema)", shared)(
                self, recipe, partitions
            )

        def merged(self, recipe, parts):
            future = merge_tree(self, recipe, parts)
            profile.merged.append(future)
            return future

        engine._shared, engine._merge_tree = sharing, merged

    def report(self, began: float, imported: float, ended: float, inline: bool) -> None:
        out = sys.stderr
        print(f"importing filterkit.cli: {imported - began:.2f} s", file=out)
        print(f"to the engine (options, chain; the cluster starts): {self.marks['engine'] - imported:.2f} s", file=out)
        if not inline:
            print(
                f"the client first needed the cluster {self.marks['asked'] - self.marks['engine']:.2f} s later "
                f"and waited {self.marks['ready'] - self.marks['asked']:.2f} s for it; by then the workers' CPU "
                f"{self.marks['workers at ready']:.2f} s, the helper's {self.marks['helper at ready']:.2f} s",
                file=out,
            )
        for label, wall, cpu, workers in self.steps:
            print(f"{label}: {wall:.2f} s, client CPU {cpu:.2f} s, workers' CPU {workers:.2f} s", file=out)
        print(f"after the last step (model, cluster shutdown, exit): {ended - self.marks['done']:.2f} s", file=out)
        print(f"whole run: {ended - began:.2f} s, client CPU {own_cpu():.2f} s", file=out)
        print(
            f"pickled recipes {self.recipe_bytes} bytes, merged statistics {self.marks['statistics']} bytes", file=out
        )
        if inline:
            return
        print(f"workers' page faults: {self.marks['faults']}; the helper's CPU {helper_cpu():.2f} s", file=out)
        self.report_tasks(out)

    def report_tasks(self, out) -> None:
        from dask.utils import key_split

        totals: dict[tuple[str, str], list] = {}
        spans = []
        for task in self.marks["stream"]:
            kind = key_split(task["key"])
            for part in task["startstops"]:
                entry = totals.setdefault((kind, part["action"]), [0, 0.0])
                entry[0] += 1
                entry[1] += part["stop"] - part["start"]
            starts = [part["start"] for part in task["startstops"]]
            stops = [part["stop"] for part in task["startstops"]]
            spans.append((min(starts), max(stops), kind, task["worker"]))
        for (kind, action), (count, seconds) in sorted(totals.items()):
            print(f"tasks {kind}, {action}: {count}, {seconds:.2f} s in all", file=out)
        first = min((span[0] for span in spans), default=0.0)
        for start, stop, kind, worker in sorted(spans):
            print(f"  {kind:<24} {worker:<24} {start - first:7.2f} → {stop - first:7.2f} s", file=out)


def uses_dask(arguments: list[str]) -> bool:
    """Whether the filterkit command line ``arguments`` runs on the Dask engine (``--engine dask`` or
    ``--engine=dask``; the last one given counts, as click takes it)."""
    engine = "local"
    for option, following in zip(arguments, [*arguments[1:], ""]):
        if option == "--engine":
            engine = following
        elif option.startswith("--engine="):
            engine = option.partition("=")[2]
    return engine == "dask"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--spawn", action="store_true", help="Spawn the local cluster's workers, as a library call does."
    )
    parser.add_argument("--inline", action="store_true", help="Run the tasks in place, without Dask.")
    parser.add_argument("filterkit_arguments", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    arguments = args.filterkit_arguments[1:] if args.filterkit_arguments[:1] == ["--"] else args.filterkit_arguments
    if not uses_dask(arguments):
        sys.exit("dask_profile.py: give the run --engine dask (there is nothing to profile in a local run)")
    began = time.perf_counter()
    from filterkit import cli, ownership
    from filterkit import distributed as engine_module

    imported = time.perf_counter()
    if args.inline:

        @classmethod
        @contextlib.contextmanager
        def connect(cls, scheduler, plugins_dir, chunk_rows, progress=None):
            yield cls(InlineClient(), plugins_dir, chunk_rows, progress)

        engine_module.DaskEngine.connect = connect
        engine_module.import_distributed = lambda: InlineDistributed
    elif not args.spawn:
        ownership.claim_process()  # as the console script does: the workers are forked
    profile = Profile(engine_module.DaskEngine)
    profile.install(args.inline)
    write = engine_module.DaskEngine.write_concatenated

    def written(self, *arguments, **options):
        try:
            return write(self, *arguments, **options)
        finally:
            profile.marks["done"] = time.perf_counter()
            profile.marks["statistics"] = [len(pickle.dumps(future.result())) for future in profile.merged]
            if not args.inline:
                profile.marks["stream"] = self.client.get_task_stream(start=profile.marks["stream from"])
                profile.marks["faults"] = {w: faults for w, (_, faults) in self.client.run(worker_usage).items()}

    engine_module.DaskEngine.write_concatenated = written
    status = cli.run(arguments)
    if status != 0:
        sys.exit(status)
    profile.report(began, imported, time.perf_counter(), args.inline)


if __name__ == "__main__":  # workers spawned by Dask import this file again: they must not run it
    main()
