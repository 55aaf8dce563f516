"""What a Dask cluster buys over one local process, by the number of workers (issue 76, item 4).

    python benchmarks/scaling.py [--workers 1,2,4,…] [--grain-scale 1000] [--debian-scale 20]
                                 [--predict-scale 100] [--repeats 3] [--out benchmarks/RESULTS.md]

Three jobs, each run by ``--engine local`` and by ``--engine dask`` on a cluster of W one-thread workers for each W of
``--workers`` (default: 1, 2, 4, … up to the machine's cores): the chain ``shape bns l2`` on Weka's grain word counts
repeated (``--grain-scale``; ×1000 is 845 MB), ``words --counts --lowercase`` on Debian's package descriptions
repeated (``--debian-scale``; built from apt's lists as ``run.py words`` builds them), and ``predict`` of a grain model
(``filterkit train`` on Weka's ReutersGrain-train, not timed) over its documents repeated (``--predict-scale``).

Each cluster is started by hand (``dask scheduler`` and ``dask worker --nworkers W --nthreads 1``) before the rounds
and kept for all of them, so that the client's CPU (``wait4`` of the filterkit process) is told from the workers' and
the scheduler's (their processes' CPU in /proc, before and after each run: Linux only).  Every output goes to a file
in ``--inputs`` and is compared with the local run's bytes.  The rounds are interleaved (each runs every
configuration once); medians are reported.  Speed-up: the local wall ÷ the cluster's.  COST (McSherry et al., 2015):
the fewest workers whose wall is below the local run's.  Where fewer than 16 workers were run, the 16-worker wall is
projected from the largest cluster's CPU (the client's serial, the workers' spread over 16 free cores: Amdahl's law
with the measured serial share) and marked as a projection.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import filecmp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import HERE, WORDS_SOURCE, _commit, make_inputs, replace_section, reuters_file, words_inputs  # noqa: E402

HEADING = "## Scaling out: the local engine against Dask by workers (`scaling.py`)"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PROJECTED_WORKERS = 16


def process_tree_cpu(root: int) -> float:
    """The CPU seconds (user + system) of process ``root`` and its living descendants so far (Linux's /proc)."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            parents[int(entry.name)] = int(fields[1])
            times[int(entry.name)] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent and pid not in tree]
        tree.update(children)
        frontier.extend(children)
    return sum(times.get(pid, 0.0) for pid in tree)


class Cluster:
    """A scheduler and ``n_workers`` one-thread worker processes, started by hand in ``folder``."""

    def __init__(self, n_workers: int, folder: Path):
        self.n_workers = n_workers
        self.file = folder / f"scheduler-{n_workers}.json"
        self.file.unlink(missing_ok=True)
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        self.scheduler = subprocess.Popen(
            ["dask", "scheduler", "--scheduler-file", str(self.file), "--port", "0", "--no-dashboard"], **quiet
        )
        while not self.file.exists():
            time.sleep(0.1)
        time.sleep(0.5)  # the file is written before the scheduler listens
        self.workers = subprocess.Popen(
            ["dask", "worker", "--scheduler-file", str(self.file), "--nworkers", str(n_workers), "--nthreads", "1"]
            + ["--no-dashboard"],
            **quiet,
        )
        self.address = self._wait_for_workers()

    def _wait_for_workers(self) -> str:
        from distributed import Client

        with Client(scheduler_file=str(self.file)) as client:
            client.wait_for_workers(self.n_workers, timeout=120)
            return client.scheduler.address

    def cpu(self) -> float:
        """The CPU seconds the scheduler and the workers have used so far."""
        return process_tree_cpu(self.scheduler.pid) + process_tree_cpu(self.workers.pid)

    def stop(self) -> None:
        for process in (self.workers, self.scheduler):
            process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=30)
            process.kill()


def timed_run(command: list[str], cluster: Cluster | None) -> tuple[float, float, float]:
    """Wall seconds, the client's CPU seconds and the cluster's (0 for a local run) of one run of ``command``."""
    before = cluster.cpu() if cluster else 0.0
    started = time.perf_counter()
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            stderr.seek(0)
            raise RuntimeError(f"{' '.join(command)} failed: {stderr.read().decode(errors='replace')[-2000:]}")
    time.sleep(0.2)  # the workers' last heartbeats after the result
    after = cluster.cpu() if cluster else 0.0
    return wall, usage.ru_utime + usage.ru_stime, after - before


def job_commands(args, folder: Path) -> dict[str, tuple[str, list[str]]]:
    """Per job, the data it reads (as shown) and its filterkit arguments before the output option."""
    grain = make_inputs(args.data, folder, [args.grain_scale], [])[f"grain_x{args.grain_scale}"]
    debian = words_inputs(folder, (), (args.debian_scale,))[f"Debian ×{args.debian_scale}"]
    documents = reuters_file(folder / f"grain_docs_x{args.predict_scale}.arff", args.predict_scale)
    model = folder / "scaling-grain-model.json"
    if not model.exists():
        subprocess.run(["filterkit", "train", "-q", "-o", str(model), str(WORDS_SOURCE)], check=True)
    return {
        "`shape bns l2`": (f"grain ×{args.grain_scale}", ["-c", "first", str(grain), "shape", "bns", "l2"]),
        "`words --counts --lowercase`": (
            f"Debian ×{args.debian_scale}",
            [str(debian), "words", "--counts", "--lowercase"],
        ),
        "`predict` (grain model)": (f"Reuters ×{args.predict_scale}", ["predict", str(model), str(documents)]),
    }


def engine_command(arguments: list[str], cluster: Cluster | None, output: Path) -> list[str]:
    """The filterkit command of a job on the local engine or on ``cluster`` (two partitions a worker)."""
    engine = []
    if cluster:
        engine = ["--engine", "dask", "--scheduler", cluster.address, "--partitions", str(2 * cluster.n_workers)]
    if arguments[0] == "predict":
        return ["filterkit", "predict", *engine, *arguments[1:], "-o", str(output)]
    return ["filterkit", *engine, "-o", str(output), *arguments]


def measured(args, folder: Path, clusters: list[Cluster]) -> dict[tuple[str, int], tuple[float, float, float]]:
    """Per (job, workers; 0 for the local engine), the median wall, client CPU and cluster CPU of the rounds."""
    jobs = job_commands(args, folder)
    runs: dict[tuple[str, int], list[tuple[float, float, float]]] = {}
    for round_number in range(args.repeats):
        for job, (_, arguments) in jobs.items():
            local_output = folder / "scaling-local.out"
            for cluster in [None, *clusters]:
                output = local_output if cluster is None else folder / "scaling-dask.out"
                key = (job, cluster.n_workers if cluster else 0)
                runs.setdefault(key, []).append(timed_run(engine_command(arguments, cluster, output), cluster))
                if cluster and not filecmp.cmp(local_output, output, shallow=False):
                    raise RuntimeError(f"{job} on {cluster.n_workers} workers: other bytes than the local engine's")
                print(f"round {round_number + 1} {job} {key[1]} workers: {runs[key][-1][0]:.2f} s", file=sys.stderr)
    return {key: tuple(statistics.median(run[k] for run in values) for k in range(3)) for key, values in runs.items()}


def projected_wall(client_cpu: float, cluster_cpu: float, n_workers: int) -> float:
    """The wall ``n_workers`` would take on as many free cores, were the client's CPU all serial and the workers'
    CPU (as measured) spread evenly over them: Amdahl's law with the measured serial share, not a measurement."""
    return client_cpu + cluster_cpu / n_workers


def report(args, results: dict, jobs: dict, worker_counts: list[int], started: str) -> str:
    """The markdown section: per job and workers, wall, CPU, the client's share, speed-up and COST."""
    cores = len(os.sched_getaffinity(0))
    lines = [
        HEADING,
        "",
        f"`python benchmarks/scaling.py {' '.join(sys.argv[1:])}` on {started} at commit {_commit()}, {cores} cores, "
        f"load average {os.getloadavg()[0]:.2f} at the end; medians of {args.repeats} interleaved rounds.  Dask: a "
        "scheduler and W one-thread workers started by hand and kept across the rounds, two partitions a worker; "
        "every output written to a file and equal to the local engine's bytes.  CPU: the client's (the filterkit "
        "process) + the scheduler's and workers' (their processes in /proc).",
        "",
        "| job | data | engine | wall s | CPU s, total | client CPU s | client share | speed-up (local ÷ this) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    notes = []
    for job, (data, _) in jobs.items():
        local_wall, local_cpu, _ = results[(job, 0)]
        local = f"| {job} | {data} | local | {local_wall:.2f} | {local_cpu:.2f} | {local_cpu:.2f} | 100% | 1.00× |"
        lines.append(local)
        walls = {}
        for workers in worker_counts:
            wall, client, cluster = results[(job, workers)]
            walls[workers] = wall
            share = client / (client + cluster) if client + cluster else 0.0
            lines.append(
                f"| {job} | {data} | Dask, {workers} worker{'s' if workers > 1 else ''} | {wall:.2f} | "
                f"{client + cluster:.2f} | {client:.2f} | {share:.0%} | {local_wall / wall:.2f}× |"
            )
        beating = [workers for workers in worker_counts if walls[workers] < local_wall]
        cost = f"COST {beating[0]} worker{'s' if beating[0] > 1 else ''}" if beating else "COST above the workers run"
        if max(worker_counts) < PROJECTED_WORKERS:
            _, client, cluster = results[(job, max(worker_counts))]
            projection = projected_wall(client, cluster, PROJECTED_WORKERS)
            cost += (
                f"; {PROJECTED_WORKERS} workers projected (the client's {client:.2f} CPU s serial, the workers' "
                f"{cluster:.2f} spread over {PROJECTED_WORKERS} free cores; not measured): {projection:.2f} s, "
                f"{local_wall / projection:.1f}× the local engine's wall"
            )
        notes.append(f"- {job} on {data}: {cost}.")
    return "\n".join([*lines, "", *notes, ""])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cores = len(os.sched_getaffinity(0))
    default_workers = [1 << k for k in range(cores.bit_length()) if 1 << k <= cores]
    parser.add_argument("--workers", default=",".join(map(str, default_workers)), help="Cluster sizes to run.")
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    parser.add_argument("--inputs", type=Path, default=HERE / ".inputs")
    parser.add_argument("--grain-scale", type=int, default=1000)
    parser.add_argument("--debian-scale", type=int, default=20)
    parser.add_argument("--predict-scale", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, help="Put the report's section in this results file.")
    args = parser.parse_args()
    if shutil.which("dask") is None:
        sys.exit("scaling.py: the dask command is not installed (pip install 'filterkit-arff[dask]')")
    worker_counts = [int(count) for count in args.workers.split(",")]
    args.inputs.mkdir(parents=True, exist_ok=True)
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    clusters = []
    try:
        clusters = [Cluster(count, args.inputs) for count in worker_counts]
        results = measured(args, args.inputs, clusters)
    finally:
        for cluster in clusters:
            cluster.stop()
    section = report(args, results, job_commands(args, args.inputs), worker_counts, started)
    print(section)
    if args.out:
        replace_section(args.out, HEADING, section)


if __name__ == "__main__":
    main()
