"""Time filterkit against a C floor and its peers, in one run, on data made from real files.

    python benchmarks/run.py [--data ../shared/data] [--inputs benchmarks/.inputs] [--repeats 5]
                             [--scales 10,100,300] [--only filterkit,dask,...] [--chains shape,l2,...]
                             [--no-weka] [--out benchmarks/RESULTS.md]

With no options it measures everything issue 20's "Done when" asks for.  Inputs (generated
once into ``--inputs``, each when first asked for): Reuters grain word counts
(``weka/grain_wc.arff``, 1,554 documents × 13,027 words, sparse) with its data rows
repeated ×10, ×100 and ×300 (255 MB), the ×10 and ×100 rows as svmlight text and as
(row, column, value) CSV triplets for the peers that read those, and UCI ``letter``
(20,000 rows × 16 numeric, dense) repeated ×10.  Every command runs as its own process;
wall time, CPU time and peak RSS (``wait4``) are taken.  The runs are interleaved (each
round runs every command once), and the median of ``--repeats`` rounds is reported with
the fastest and slowest run.

The C floor (``benchmarks/floor/floor.c``, built with ``gcc -O2`` when gcc exists) does
the identity rewrite, ``l2`` and a two-pass job shaped like ``shape bns l2`` on one core;
filterkit's time is reported as a multiple of the floor's, with the output sent to
/dev/null and to a file (``-o``).  Before timing, the floor's identity and ``l2`` outputs
are checked byte-identical to filterkit's from the ``@data`` line on (the floor copies the
header as it is).  The peers: Weka 3.6, scikit-learn's svmlight reader and writer (load,
``normalize``, dump), pandas ``read_csv``/``to_csv`` and pyarrow's CSV reader on the
triplets, liac-arff, and the numpy floor (``numpy.fromstring`` of the data section with
braces and commas turned into spaces: a parse with no ARFF semantics at all); a peer that
is not installed is left out, and said so.  The peers, the floor and ``-o FILE`` run up
to ×100; ×300 is the memory scale (peak RSS ×300 ÷ ×10 per chain: flat in rows) and, with
×100, the scale of ``filterkit --engine dask`` (a local cluster of two one-thread workers,
started by each run), reported as Dask ÷ local.
Start-up is ``filterkit -q iris.arff l2`` against ``python -c "import numpy, scipy.sparse"``,
medians of 10 interleaved runs, with
filterkit's bytecode compiled first (as ``pip install`` does).  ``--only`` and ``--chains``
run a subset (``--help`` lists the kinds of job).
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import ctypes
import importlib.util
import itertools
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parent
FLOOR_SOURCE = HERE / "floor" / "floor.c"
WEKA_JAR = "/usr/share/java/weka.jar"
JAVA_HEAP = "-Xmx16g"

WEKA_SELECT_L2 = [
    "weka.filters.MultiFilter",
    "-F",
    'weka.filters.supervised.attribute.AttributeSelection -E "weka.attributeSelection.InfoGainAttributeEval -B" '
    '-S "weka.attributeSelection.Ranker -N 100"',
    "-F",
    "weka.filters.unsupervised.instance.Normalize -N 1.0 -L 2.0",
    "-c",
    "first",
]
WEKA_L2 = ["weka.filters.unsupervised.instance.Normalize", "-N", "1.0", "-L", "2.0"]

LIAC_ROUND_TRIP = """
import sys, arff
with open(sys.argv[1]) as f:
    data = arff.load(f, return_type=arff.LOD if sys.argv[3] == 'sparse' else arff.DENSE)
with open(sys.argv[2], 'w') as f:
    arff.dump(data, f)
"""

NUMPY_FLOOR = """
import sys, numpy as np
raw = open(sys.argv[1], 'rb').read()
start = raw.lower().index(b'@data')
start = raw.index(b'\\n', start) + 1
numbers = np.fromstring(raw[start:].translate(bytes.maketrans(b'{},', b'   ')), dtype=np.float64, sep=' ')
print(len(numbers))
"""

SKLEARN_SVMLIGHT = """
import sys
from sklearn.datasets import dump_svmlight_file, load_svmlight_file
from sklearn.preprocessing import normalize
matrix, labels = load_svmlight_file(sys.argv[1], zero_based=True)
dump_svmlight_file(normalize(matrix, norm="l2"), labels, sys.argv[2], zero_based=True)
"""

PANDAS_CSV = """
import sys
import pandas
pandas.read_csv(sys.argv[1]).to_csv(sys.argv[2], index=False)
"""

PYARROW_CSV = """
import sys
from pyarrow import csv
print(csv.read_csv(sys.argv[1]).num_rows)
"""

IMPORT_FLOOR = "import numpy, scipy.sparse"
#: At least this many runs each with and without the contract's checks: the difference is a few %
#: of a run, and a run's time varies by about ±15 % on a shared machine.
CONTRACT_REPEATS = 11

CONTRACT_COST = """
import os, sys, time
from filterkit.ownership import claim_process, limit_blas_threads
claim_process()  # tuned as the console script tunes its process (cli.main)
limit_blas_threads()
from filterkit import cli, contract
from filterkit.allocator import keep_freed_memory
checks = contract.OutputContract
in_checks = [0.0]
def timed(method):
    def run(self, *args):
        started = time.thread_time()
        try:
            return method(self, *args)
        finally:
            in_checks[0] += time.thread_time() - started
    return run
# the checks of a stage's output or a step of stored-values maps' (check calls checked), the class
# column read before a stage runs, and the class column's entries read before a step of maps
if sys.argv[1] == "on":
    for name in ("checked", "class_before", "class_entries"):
        setattr(checks, name, timed(getattr(checks, name)))
else:
    checks.checked = lambda self, given, result, step="transform", class_before=None: (result, None)
    checks.class_before = lambda self, given, known=None: None
    checks.class_entries = lambda self, rows: None
keep_freed_memory()
sys.stdout = open(os.devnull, "w")
started, cpu = time.perf_counter(), time.process_time()
status = cli.run(sys.argv[2:])
print(time.perf_counter() - started, time.process_time() - cpu, in_checks[0], status, file=sys.stderr)
"""


def make_inputs(data: Path, folder: Path, scales: list[int], peer_scales: list[int]) -> dict[str, Path]:
    """Repeated copies of the real files in ``folder``, and the peers' svmlight and CSV forms of
    the ``peer_scales`` ones (each made once, when first asked for)."""
    folder.mkdir(parents=True, exist_ok=True)
    made = {}
    for source, label, factors in (
        (data / "weka" / "grain_wc.arff", "grain", scales),
        (data / "uci" / "letter.arff", "letter", [10]),
    ):
        paths = {factor: folder / f"{label}_x{factor}.arff" for factor in factors}
        made.update({f"{label}_x{factor}": path for factor, path in paths.items()})
        if all(path.exists() for path in paths.values()):
            continue
        text = source.read_bytes()
        start = text.lower().index(b"@data")
        start = text.index(b"\n", start) + 1
        header, rows = text[:start], text[start:]
        if not rows.endswith(b"\n"):
            rows += b"\n"
        for factor, path in paths.items():
            if not path.exists():
                with open(path, "wb") as out:
                    out.write(header)
                    for _ in range(factor):
                        out.write(rows)
    for factor in peer_scales:
        made.update(peer_inputs(made[f"grain_x{factor}"], folder, f"grain_x{factor}"))
    return made


def peer_inputs(arff: Path, folder: Path, label: str) -> dict[str, Path]:
    """The sparse ARFF ``arff`` (class first) as svmlight text and as CSV triplets (made once,
    line by line: this process stays small, as every command it starts inherits its peak RSS)."""
    svmlight, triplets = folder / f"{label}.svmlight", folder / f"{label}.csv"
    if not (svmlight.exists() and triplets.exists()):
        with open(arff) as source, open(svmlight, "w") as svm, open(triplets, "w") as csv:
            csv.write("row,column,value\n")
            row = 0
            for line in source:
                if not line.startswith("{"):
                    continue
                entries = [entry.split(" ") for entry in line.strip().strip("{}").split(",") if entry]
                label_value = next((value for index, value in entries if index == "0"), "0")
                features = [(int(index) - 1, value) for index, value in entries if index != "0"]
                svm.write(label_value + "".join(f" {index}:{value}" for index, value in features) + "\n")
                csv.writelines(f"{row},{index},{value}\n" for index, value in features)
                row += 1
    return {f"{label}_svmlight": svmlight, f"{label}_csv": triplets}


def build_floor(folder: Path) -> Path | None:
    """The C floor, compiled with ``gcc -O2`` into ``folder`` (None without gcc)."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    binary = folder / "floor"
    subprocess.run([gcc, "-O2", "-o", str(binary), str(FLOOR_SOURCE), "-lm"], check=True)
    return binary


def data_lines(path: Path):
    """The lines of the file ``path`` from its ``@data`` line on."""
    with open(path, "rb") as lines:
        for line in lines:
            if line.lower().startswith(b"@data"):
                yield line
                break
        yield from lines


def check_floor(floor: Path, filterkit: str, path: Path, folder: Path) -> list[str]:
    """The floor's jobs whose output, from ``@data`` on, is filterkit's byte for byte (compared
    line by line from files, so this process stays small)."""
    same = []
    ours, floors = folder / "check_filterkit.arff", folder / "check_floor.arff"
    for job, chain in (("identity", []), ("l2", ["l2"])):
        subprocess.run([filterkit, "-q", "-c", "first", "-o", str(ours), str(path), *chain], check=True)
        with open(floors, "wb") as sink:
            subprocess.run([str(floor), job, "-c", "first", str(path)], stdout=sink, check=True)
        if any(a != b for a, b in itertools.zip_longest(data_lines(ours), data_lines(floors))):
            raise RuntimeError(f"the floor's {job} output differs from filterkit's on {path}")
        same.append(job)
    ours.unlink()
    floors.unlink()
    return same


def startup_times(filterkit: str, repeats: int = 10) -> tuple[float, float]:
    """Median seconds of ``filterkit -q iris.arff l2`` and of importing numpy and
    scipy.sparse, over ``repeats`` interleaved runs, with filterkit's bytecode compiled."""
    for package in ("filterkit", "filterkit_plugins"):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            for location in spec.submodule_search_locations:
                compileall.compile_dir(location, quiet=1)
    iris = REPOSITORY / "arff_samples" / "iris.arff"
    ours, floor = [], []
    for _ in range(repeats):
        ours.append(measure([filterkit, "-q", str(iris), "l2"])[0])
        floor.append(measure([sys.executable, "-c", IMPORT_FLOOR])[0])
    return statistics.median(ours), statistics.median(floor)


def measure(command: list[str], output: Path | None = None) -> tuple[float, int, float]:
    """Wall seconds, peak RSS in MiB and CPU seconds (user + system) of one run, stdout to ``output``
    or /dev/null.  ``wait4`` counts the child and the descendants it waited for; descendants left
    behind (a Dask run's worker helper and workers, should any outlive the client) are adopted by this process
    (:func:`adopt_orphans`) and reaped here: their CPU is added too.  The peak RSS is the largest
    one process reached (a Dask run's client or one of its workers)."""
    sink = open(output, "wb") if output else open(os.devnull, "wb")
    with sink, tempfile.TemporaryFile() as stderr:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=sink, stderr=stderr)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4, not by Popen
        if process.returncode != 0:
            stderr.seek(0)
            message = stderr.read().decode(errors="replace")
            raise RuntimeError(f"{' '.join(command)} failed: {message[-2000:]}")
    peak, cpu = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
    for orphan in reaped_orphans():
        peak, cpu = max(peak, orphan.ru_maxrss), cpu + orphan.ru_utime + orphan.ru_stime
    return elapsed, peak // 1024, cpu


def adopt_orphans() -> None:
    """Make this process the one the orphaned descendants of its runs are handed to (Linux's child
    subreaper), so their CPU can be counted; elsewhere they are not counted."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def reaped_orphans(seconds: float = 30) -> list:
    """The resource usage of every adopted descendant, each waited for (for up to ``seconds``)."""
    usages, deadline = [], time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            pid, _, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            time.sleep(0.01)
            continue
        usages.append(usage)
    return usages


def contract_share(arguments: list[str], repeats: int) -> dict[str, float]:
    """What checking the stage contract (filterkit.contract) on every chunk costs ``filterkit
    ARGUMENTS``, in-process: median wall and CPU seconds of runs with the checks and without them
    (interleaved, ``repeats`` each), and the median CPU seconds of the thread running the checks
    spent in them (which, unlike their wall time, leaves out waiting for the GIL while the reading
    and writing threads hold it)."""
    runs: dict[str, list[tuple[float, ...]]] = {"on": [], "off": []}
    for _ in range(repeats):
        for mode, measured in runs.items():
            finished = subprocess.run(
                [sys.executable, "-c", CONTRACT_COST, mode, *arguments], capture_output=True, text=True, check=True
            )
            *numbers, status = finished.stderr.split()[-4:]
            if status != "0":
                raise RuntimeError(f"filterkit {' '.join(arguments)} failed: {finished.stderr[-2000:]}")
            measured.append(tuple(float(number) for number in numbers))

    def median(mode: str, position: int) -> float:
        return statistics.median(run[position] for run in runs[mode])

    return {
        "wall": median("on", 0),
        "wall without": median("off", 0),
        "cpu": median("on", 1),
        "cpu without": median("off", 1),
        "in checks": median("on", 2),
    }


def interleaved(jobs: list[tuple], repeats: int) -> dict[tuple, tuple[float, int, float, float, float]]:
    """Median wall time, median peak RSS, the fastest and slowest time and the median CPU time of
    each job (``(key, label, data name, command, output file or None)``), over ``repeats`` rounds
    that each run every job once, in order."""
    runs: dict[tuple, list[tuple[float, int, float]]] = {job[0]: [] for job in jobs}
    for round_number in range(repeats):
        for key, label, data_name, command, output in jobs:
            runs[key].append(measure(command, output))
            if round_number == repeats - 1:
                times = [r[0] for r in runs[key]]
                print(f"{label:<60} {data_name:<10} {statistics.median(times):8.2f} s", file=sys.stderr, flush=True)
    return {
        key: (
            statistics.median(r[0] for r in results),
            int(statistics.median(r[1] for r in results)),
            min(r[0] for r in results),
            max(r[0] for r in results),
            statistics.median(r[2] for r in results),
        )
        for key, results in runs.items()
    }


def installed(module: str) -> bool:
    """Whether ``module`` can be imported by this Python."""
    return importlib.util.find_spec(module) is not None


#: What ``--only`` selects from: the kinds of job, each a row (or rows) of the report.
TOOLS = {
    "filterkit": "filterkit's chains to /dev/null (and on letter ×10)",
    "file": "filterkit's chains with -o FILE",
    "floor": "the C floor, to /dev/null and to a file",
    "dask": "filterkit --engine dask (a local cluster of two workers) to /dev/null",
    "weka": "Weka 3.6",
    "sklearn": "scikit-learn's svmlight reader and writer",
    "pandas": "pandas read_csv + to_csv",
    "pyarrow": "pyarrow's CSV reader",
    "liac": "liac-arff",
    "numpy": "the numpy floor",
    "startup": "filterkit's start-up against importing numpy and scipy.sparse",
    "contract": "the share of a run spent checking the stage contract",
    "svmlight": "filterkit IN.svm l2 -o OUT.svm against scikit-learn and against the same job in ARFF",
}
CHAINS = {
    "select": ["ig", "--presence", "select", "--top", "100", "l2"],
    "shape": ["shape", "bns", "l2"],
    "l2": ["l2"],
    "identity": [],
}
#: The peers, the C floor and the -o FILE runs stop at ×100 (at ×300 liac-arff alone would need
#: about 3.5 GB); larger scales are for memory flatness and Dask, which start at ×100.
LARGEST_PEER_SCALE = 100
SMALLEST_DASK_SCALE = 100


def comma_list(text: str, allowed) -> list[str]:
    """The words of the comma-separated ``text``, each one of ``allowed`` (argparse's type check)."""
    words = [word for word in text.split(",") if word]
    unknown = [word for word in words if word not in allowed]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown {', '.join(unknown)}; choose from {', '.join(allowed)}")
    return words


def main() -> None:
    adopt_orphans()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    parser.add_argument("--inputs", type=Path, default=HERE / ".inputs", help="Where generated inputs are kept.")
    parser.add_argument(
        "--repeats", type=int, default=5, help="Rounds; 5, as a shared machine's noise moved a median of 3 by 15 %%."
    )
    parser.add_argument(
        "--scales",
        default="10,100,300",
        help=f"Repetitions of grain; the peers, the floor and -o FILE run up to ×{LARGEST_PEER_SCALE}, "
        f"Dask from ×{SMALLEST_DASK_SCALE} (default: 10,100,300).",
    )
    parser.add_argument(
        "--only",
        type=lambda text: comma_list(text, TOOLS),
        default=list(TOOLS),
        help="Run only these kinds of job (comma-separated): "
        + "; ".join(f"{tool}: {shown}" for tool, shown in TOOLS.items()),
    )
    parser.add_argument(
        "--chains",
        type=lambda text: comma_list(text, CHAINS),
        default=list(CHAINS),
        help=f"Run only these of filterkit's grain chains (and their floor and Dask rows): {', '.join(CHAINS)}.",
    )
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    parser.add_argument("--no-weka", action="store_true", help="Skip the Weka runs.")
    args = parser.parse_args()
    scales = sorted(int(s) for s in args.scales.split(","))
    only, chains = set(args.only), {chain: CHAINS[chain] for chain in args.chains}
    peers = {"sklearn", "pandas", "pyarrow", "svmlight"} & only
    peer_scales = [scale for scale in scales if scale <= LARGEST_PEER_SCALE]
    command_line = " ".join(["python benchmarks/run.py", *sys.argv[1:]])
    started = (
        f"`{command_line}` on {time.strftime('%Y-%m-%d')} at commit {_commit()}, "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} when it began."
    )
    scratch_folder = args.inputs
    dask_missing = "dask" in only and not installed("distributed")
    inputs = make_inputs(args.data, scratch_folder, scales, peer_scales if peers else [])
    writes_before = page_cache_writes(scratch_folder)
    filterkit = shutil.which("filterkit") or str(Path(sys.executable).with_name("filterkit"))
    floor = build_floor(scratch_folder) if "floor" in only else None
    identical = check_floor(floor, filterkit, inputs[f"grain_x{min(scales)}"], scratch_folder) if floor else []
    weka = "weka" in only and not args.no_weka and shutil.which("java") and os.path.exists(WEKA_JAR)
    java = ["java", JAVA_HEAP, "-cp", WEKA_JAR]
    scratch = scratch_folder / "peer_out"
    written = scratch_folder / "written.arff"
    missing = [name for name in ("sklearn", "pandas", "pyarrow", "arff") if not installed(name)]
    if dask_missing:
        missing.append("distributed")
    jobs: list[tuple] = []

    def job(tool, key, label, data_name, command, output=None):
        if tool in only:
            jobs.append((key, label, data_name, command, output))

    for scale in scales:
        name = f"grain_x{scale}"
        path = str(inputs[name])
        small = scale <= LARGEST_PEER_SCALE
        for chain, stages in chains.items():
            shown = " ".join(stages) or "identity rewrite"
            options = [filterkit, "-q", "-c", "first"]
            job("filterkit", (name, chain), f"filterkit {shown}", name, [*options, path, *stages])
            if scale >= SMALLEST_DASK_SCALE and "distributed" not in missing:
                dask = [*options, "--engine", "dask", path, *stages]
                job("dask", (name, chain, "dask"), f"filterkit --engine dask {shown}", name, dask)
            if small and chain != "select":
                to_file = [*options, "-o", str(written), path, *stages]
                job("file", (name, chain, "file"), f"filterkit -o FILE {shown}", name, to_file)
                if floor:
                    floor_command = [str(floor), chain, "-c", "first", path]
                    job("floor", (name, chain, "floor"), f"C floor {chain}", name, floor_command)
                    job("floor", (name, chain, "floor file"), f"C floor {chain} > FILE", name, floor_command, written)
        if not small:
            continue
        if "svmlight" in only:
            svmlight_jobs(job, inputs, filterkit, name, scratch_folder)
        if weka:
            job(
                "weka",
                (name, "weka select"),
                "Weka AttributeSelection(IG -B, Ranker -N 100) + Normalize L2",
                name,
                java + WEKA_SELECT_L2 + ["-i", path, "-o", str(scratch)],
            )
            job(
                "weka",
                (name, "weka l2"),
                "Weka Normalize -N 1.0 -L 2.0",
                name,
                java + WEKA_L2 + ["-c", "first", "-i", path, "-o", str(scratch)],
            )
        if "sklearn" not in missing and "sklearn" in only:
            svmlight = str(inputs[f"{name}_svmlight"])
            job(
                "sklearn",
                (name, "sklearn"),
                "scikit-learn svmlight load + normalize + dump",
                name,
                [sys.executable, "-c", SKLEARN_SVMLIGHT, svmlight, str(scratch)],
            )
        if "pandas" not in missing and "pandas" in only:
            triplets = str(inputs[f"{name}_csv"])
            job(
                "pandas",
                (name, "pandas"),
                "pandas read_csv + to_csv (triplets)",
                name,
                [sys.executable, "-c", PANDAS_CSV, triplets, str(scratch)],
            )
        if "pyarrow" not in missing and "pyarrow" in only:
            triplets = str(inputs[f"{name}_csv"])
            command = [sys.executable, "-c", PYARROW_CSV, triplets]
            job("pyarrow", (name, "pyarrow"), "pyarrow read_csv (triplets)", name, command)
        if "arff" not in missing:
            job(
                "liac",
                (name, "liac"),
                "liac-arff load + dump",
                name,
                [sys.executable, "-c", LIAC_ROUND_TRIP, path, str(scratch), "sparse"],
            )
        command = [sys.executable, "-c", NUMPY_FLOOR, path]
        job("numpy", (name, "numpy"), "numpy floor (read + fromstring)", name, command)
    dense = str(inputs["letter_x10"])
    job("filterkit", ("letter_x10", "l2"), "filterkit l2", "letter_x10", [filterkit, "-q", dense, "l2"])
    job("filterkit", ("letter_x10", "identity"), "filterkit identity rewrite", "letter_x10", [filterkit, "-q", dense])
    if "arff" not in missing:
        job(
            "liac",
            ("letter_x10", "liac"),
            "liac-arff load + dump",
            "letter_x10",
            [sys.executable, "-c", LIAC_ROUND_TRIP, dense, str(scratch), "dense"],
        )
    # (no numpy floor for letter: its class is a letter, which numpy.fromstring cannot read)
    results = interleaved(jobs, args.repeats)
    started += (
        f" Writing 256 MB into new page-cache pages (a file, removed, then another): {writes_before} before the"
        f" rounds, {page_cache_writes(scratch_folder)} after them; a Dask run writes every output byte there"
        " (its parts), as `-o FILE` does, and their times follow this."
    )
    startup = startup_times(filterkit) if "startup" in only else None
    for leftover in (scratch, written):
        if leftover.exists():
            leftover.unlink()
    memory_scale = f"grain_x{LARGEST_PEER_SCALE if LARGEST_PEER_SCALE in scales else max(scales)}"
    contract = {}
    contract_repeats = max(args.repeats, CONTRACT_REPEATS)
    if "contract" in only:
        contract = {
            chain: contract_share(["-c", "first", str(inputs[memory_scale]), *chain.split()], contract_repeats)
            for chain in ("ig --presence select --top 100 l2", "shape bns l2")
        }
    report = format_report(jobs, results, scales, list(chains), args.repeats, started, identical, missing, startup)
    report += format_contract(contract, memory_scale, contract_repeats)
    report += format_svmlight(results, scales)
    args.out.write_text(report)
    print(report)


def svmlight_jobs(job, inputs: dict[str, Path], filterkit: str, name: str, folder: Path) -> None:
    """The svmlight jobs (issue 41): ``filterkit IN.svm l2 -o OUT.svm``, scikit-learn's load + normalize +
    dump of the same file, and filterkit's same job on the ARFF form of the file, each writing a file."""
    svmlight = str(inputs[f"{name}_svmlight"])
    ours = [filterkit, "-q", svmlight, "l2", "-o", str(folder / "written.svm")]
    job("svmlight", (name, "svm"), "filterkit IN.svm l2 -o OUT.svm", name, ours)
    peer = [sys.executable, "-c", SKLEARN_SVMLIGHT, svmlight, str(folder / "peer_out.svm")]
    job("svmlight", (name, "svm sklearn"), "scikit-learn svmlight load + normalize + dump", name, peer)
    arff = [filterkit, "-q", "-c", "first", str(inputs[name]), "l2", "-o", str(folder / "written.arff")]
    job("svmlight", (name, "svm arff"), "filterkit IN.arff l2 -o OUT.arff", name, arff)


def format_svmlight(results: dict, scales: list[int]) -> str:
    """The svmlight targets of issue 41, by wall and by CPU time (nothing when not measured)."""
    lines = []
    for name in (f"grain_x{scale}" for scale in scales):
        keys = [(name, "svm"), (name, "svm sklearn"), (name, "svm arff")]
        if all(key in results for key in keys):
            ours, peer, arff = (results[key] for key in keys)
            lines.append(
                f"- svmlight at {name}: `filterkit IN.svm l2 -o OUT.svm` {ours[0]:.2f} s, "
                f"{peer[0] / ours[0]:.2f}× as fast as scikit-learn's load + normalize + dump (target ≥ 2×), "
                f"{ours[0] / arff[0]:.2f}× the same job in ARFF (target ≤ 2×); by CPU "
                f"{peer[4] / ours[4]:.2f}× and {ours[4] / arff[4]:.2f}×"
            )
    return "".join(f"{line}\n" for line in ["", "svmlight (issue 41):", "", *lines]) if lines else ""


def page_cache_writes(folder: Path) -> str:
    """How fast 256 MB go into the page cache, twice: a new file written and removed, then another.

    On a virtual machine whose host takes idle memory back, the first write backs each new page
    again: 0.43 GB/s against 4.3 GB/s the second time, measured on this project's machine (600 MB
    with dd).  Dask's parts and ``-o FILE`` pay it; a run to /dev/null does not."""
    block = b"\0" * (1 << 20)
    rates = []
    for _ in range(2):
        probe = folder / "page-cache-probe"
        began = time.perf_counter()
        with open(probe, "wb") as stream:
            for _ in range(256):
                stream.write(block)
        rates.append(256 / 1024 / (time.perf_counter() - began))
        probe.unlink()
    return f"{rates[0]:.1f} then {rates[1]:.1f} GB/s"


def replace_section(path: Path, heading: str, report: str) -> None:
    """``path`` (a results file) with its section under ``heading`` (to the next ``## ``) replaced by ``report``,
    which is appended where the file has no such section."""
    text = path.read_text() if path.exists() else ""
    start = text.find(heading)
    end = text.find("\n## ", start + 1) if start >= 0 else -1
    kept = text if start < 0 else text[:start] + (text[end + 1 :] if end >= 0 else "")
    path.write_text(kept.rstrip("\n") + "\n\n" + report)


def _commit() -> str:
    """The checked-out commit (with "+changes" when tracked files other than this report
    differ from it), or "unknown"."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "..", ":(exclude)RESULTS.md"],
            cwd=HERE,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + ("+changes" if dirty else "")


SHOWN = {"select": "`ig --presence select --top 100 l2`", "shape": "`shape bns l2`", "l2": "`l2`"}
SHOWN["identity"] = "identity rewrite"


def format_report(jobs, results, scales, chains, repeats, started: str, identical, missing, startup) -> str:
    """The markdown tables: every command; filterkit ÷ the C floor; --engine dask ÷ local; peak RSS
    per chain and scale; and the targets of issue 20.  A job not run leaves its rows out."""
    lines = [
        "# Benchmark: filterkit vs a C floor, Weka 3.6.14 and the other peers",
        "",
        started,
        "",
        f"Medians of {repeats} interleaved rounds (and the fastest and slowest run); CPU is user + system "
        "of the process and of all its descendants (a Dask run's worker helper and workers, adopted as a "
        "child subreaper and reaped after the run); peak RSS is the largest "
        f"one process reached (`wait4`). Python {sys.version.split()[0]}. Output to /dev/null unless the "
        "command says FILE (a file on the same disk).",
        "",
        "| command | data | time (s) | fastest–slowest (s) | CPU (s) | peak RSS (MiB) |",
        "|---|---|---|---|---|---|",
    ]
    for key, label, data_name, _, _ in jobs:
        seconds, rss, fastest, slowest, cpu = results[key]
        lines.append(f"| {label} | {data_name} | {seconds:.2f} | {fastest:.2f}–{slowest:.2f} | {cpu:.2f} | {rss} |")
    if missing:
        lines += ["", f"Not installed, so not run: {', '.join(missing)}."]
    if identical:
        lines += [
            "",
            f"The C floor's {' and '.join(identical)} outputs are filterkit's bytes from `@data` on "
            f"(checked at grain_x{min(scales)} before timing); its `shape` is a two-pass job of the same size.",
        ]
    names = [f"grain_x{scale}" for scale in scales]
    floor_rows = [
        f"| {SHOWN[chain]} | {name} | {results[(name, chain)][0] / results[(name, chain, 'floor')][0]:.2f}× | "
        f"{results[(name, chain, 'file')][0] / results[(name, chain, 'floor file')][0]:.2f}× | "
        f"{results[(name, chain)][4] / results[(name, chain, 'floor')][4]:.2f}× |"
        for name in names
        for chain in ("identity", "l2", "shape")
        if all(key in results for key in ((name, chain), (name, chain, "floor"), (name, chain, "file")))
    ]
    if floor_rows:
        lines += [
            "",
            "filterkit ÷ the C floor (wall time; and CPU time, which a loaded machine disturbs less):",
            "",
            "| job | data | to /dev/null | to a file | CPU, to /dev/null |",
            "|---|---|---|---|---|",
            *floor_rows,
        ]
    dask_rows = []
    for name in names:
        for chain in chains:
            if (name, chain) in results and (name, chain, "dask") in results:
                local, dask = results[(name, chain)], results[(name, chain, "dask")]
                dask_rows.append(
                    f"| {SHOWN[chain]} | {name} | {local[0]:.2f} | {dask[0]:.2f} | {dask[0] / local[0]:.2f}× | "
                    f"{local[4]:.2f} | {dask[4]:.2f} |"
                )
    if dask_rows:
        lines += [
            "",
            "`--engine dask` (a local cluster of two one-thread workers, started and stopped by the run) ÷ "
            "`--engine local`, to /dev/null:",
            "",
            "| chain | data | local (s) | dask (s) | dask ÷ local | local CPU (s) | dask CPU (s) |",
            "|---|---|---|---|---|---|---|",
            *dask_rows,
        ]
    memory = {
        chain: {name: results[(name, chain)][1] for name in names if (name, chain) in results} for chain in chains
    }
    memory = {chain: sizes for chain, sizes in memory.items() if sizes}
    shown_names = [name for name in names if any(name in sizes for sizes in memory.values())]
    if len(shown_names) > 1:
        first, last = shown_names[0], shown_names[-1]
        lines += [
            "",
            f"Peak RSS of filterkit's chains (MiB), and {last}'s ÷ {first}'s (flat in rows: ≤ 1.3):",
            "",
            "| chain | " + " | ".join(shown_names) + f" | {last} ÷ {first} |",
            "|---|" + "---|" * (len(shown_names) + 1),
        ]
        for chain, sizes in memory.items():
            cells = [str(sizes.get(name, "–")) for name in shown_names]
            growth = f"{sizes[last] / sizes[first]:.2f}" if first in sizes and last in sizes else "–"
            lines.append(f"| {SHOWN[chain]} | " + " | ".join(cells) + f" | {growth} |")
    lines += ["", "Targets (issue 20):", ""]
    if startup:
        ours, imports = startup
        lines.append(
            f"- start-up: `filterkit -q iris.arff l2` {ours:.3f} s, {ours / imports:.2f}× "
            f'`python -c "{IMPORT_FLOOR}"` ({imports:.3f} s; medians of 10; target ≤ 1.5×)'
        )
    at_100 = [results[("grain_x100", chain)][1] for chain in chains if ("grain_x100", chain) in results]
    if at_100:
        lines.append(f"- peak RSS at grain_x100: at most {max(at_100)} MiB over filterkit's chains (target ≤ 150 MiB)")
    growths = [
        results[(names[-1], chain)][1] / results[(names[0], chain)][1]
        for chain in chains
        if (names[-1], chain) in results and (names[0], chain) in results and names[-1] != names[0]
    ]
    if growths:
        lines.append(
            f"- peak RSS at {names[-1]} ÷ at {names[0]}: at most {max(growths):.2f} over filterkit's chains "
            "(target ≤ 1.3 for grain_x300 ÷ grain_x10)"
        )
    dask_ratios = [
        results[(names[-1], chain, "dask")][0] / results[(names[-1], chain)][0]
        for chain in chains
        if (names[-1], chain, "dask") in results and (names[-1], chain) in results
    ]
    if dask_ratios:
        lines.append(
            f"- `--engine dask` ÷ local at {names[-1]}: {min(dask_ratios):.2f}–{max(dask_ratios):.2f}× over "
            "filterkit's chains (no target: the 1.3× one was withdrawn with the stock cluster, 185bdfe)"
        )
    top = f"grain_x{max((scale for scale in scales if scale <= LARGEST_PEER_SCALE), default=0)}"
    if (top, "weka select") in results and (top, "select") in results:
        weka_select, select = results[(top, "weka select")], results[(top, "select")]
        lines.append(
            f"- `ig --presence select --top 100 l2` at {top}: {weka_select[0] / select[0]:.2f}× faster than Weka, "
            f"peak RSS {select[1] / weka_select[1]:.2f} of Weka's"
        )
    return "\n".join(lines) + "\n"


def format_contract(contract: dict, data_name: str, repeats: int) -> str:
    """What checking every stage's output against the stage contract costs each chain: its runs with
    and without the checks, and the checks' own CPU (nothing when it was not measured)."""
    if not contract:
        return ""
    lines = [
        "",
        f"The stage contract (issue 15), checked on every chunk of every stage, at {data_name} "
        f"(in-process runs with and without the checks, interleaved, medians of {repeats}; target < 3 %):",
        "",
    ]
    for chain, cost in contract.items():
        lines.append(
            f"- `{chain}`: {cost['wall']:.3f} s with the checks, {cost['wall without']:.3f} s without "
            f"({100 * (cost['wall'] / cost['wall without'] - 1):+.1f} %); CPU {cost['cpu']:.3f} s against "
            f"{cost['cpu without']:.3f} s ({100 * (cost['cpu'] / cost['cpu without'] - 1):+.1f} %), of which "
            f"{cost['in checks']:.3f} s in the checks ({100 * cost['in checks'] / cost['cpu']:.1f} % of the run's CPU)"
        )
    return "\n".join(lines) + "\n"


WORDS_SOURCE = Path("/usr/share/doc/weka/examples/ReutersGrain-train.arff")
#: ``--words-to-keep`` for the jobs keeping every word, as the vectorizers do.
ALL_WORDS = ["--words-to-keep", "1000000000"]
#: filterkit's, Weka's and scikit-learn's settings of each words job (the same tokens: Weka's delimiters, lowercased;
#: or scikit-learn's char_wb n-grams, lowercased), the vectorizer's given as keyword arguments.
WORDS_JOBS = {
    "counts": (["--counts", "--lowercase"], ["-C", "-L"], "CountVectorizer", "ngram_range=(1, 1)"),
    "counts, all words": (["--counts", "--lowercase", *ALL_WORDS], None, "CountVectorizer", "ngram_range=(1, 1)"),
    "log-tf idf": (
        ["--counts", "--lowercase", "--log-tf", "--idf"],
        ["-C", "-L", "-T", "-I"],
        "TfidfVectorizer",
        "ngram_range=(1, 1)",
    ),
    "ngrams 1-2": (
        ["--counts", "--lowercase", "--ngrams", "1-2"],
        ["-C", "-L", "-tokenizer", "weka.core.tokenizers.NGramTokenizer -min 1 -max 2"],
        "CountVectorizer",
        "ngram_range=(1, 2)",
    ),
    "char_wb 2-5": (
        ["--counts", "--lowercase", "--char-ngrams", "2-5"],
        None,  # Weka 3.6 has no character n-grams
        "CountVectorizer",
        "analyzer='char_wb', ngram_range=(2, 5), token_pattern=None",
    ),
    "hashing": (
        ["--counts", "--lowercase", "--hash", "16"],
        None,
        "HashingVectorizer",
        "n_features=2**16, alternate_sign=False, norm=None",
    ),
    # as HashingVectorizer, no column named by a token: no vocabulary, no fit pass (the vectorizer's runs shared)
    "hashing, number names": (
        ["--counts", "--lowercase", "--hash", "16", "--hash-names", "number"],
        None,
        "HashingVectorizer",
        "n_features=2**16, alternate_sign=False, norm=None",
    ),
    "min-df 2, max-df 0.5": (
        ["--counts", "--lowercase", "--min-df", "2", "--max-df", "0.5", *ALL_WORDS],
        None,
        "CountVectorizer",
        "ngram_range=(1, 1), min_df=2, max_df=0.5",
    ),
    "ngrams 1-2, all words": (
        ["--counts", "--lowercase", "--ngrams", "1-2", *ALL_WORDS],
        None,
        "CountVectorizer",
        "ngram_range=(1, 2)",
    ),
}
SKLEARN_WORDS = r"""
import re, sys, time
from sklearn.feature_extraction import text
from filterkit.arff import read_arff
_, chunk = read_arff(sys.argv[1])
documents = [d or "" for d in chunk.text[0]]
pattern = "[^" + re.escape(" \r\n\t.,;:'\"()?!") + "]+"  # Weka's delimiters
vectorizer = getattr(text, sys.argv[2])(**{"lowercase": True, "token_pattern": pattern, **eval(f"dict({sys.argv[3]})")})
wall, cpu = time.perf_counter(), time.process_time()
vectorizer.fit_transform(documents)
with open(sys.argv[4], "a") as timings:  # the in-memory seconds of this run, beside those of the rounds before
    print(time.perf_counter() - wall, time.process_time() - cpu, file=timings)
"""
#: Writes Debian's package short descriptions (benchmarks/documents.py's corpus) as ARFF, rows repeated ×scale; each
#: argument PATH:SCALE:LABELS, LABELS "quoted" for a file whose every label is quoted ('admin'), else "bare".
DEBIAN_WORDS = r"""
import sys
from pathlib import Path
from documents import debian_rows, write_arff
class_name, labels, rows = debian_rows()
quoted = {label: f"'{label}'" for label in labels}
for argument in sys.argv[1:]:
    path, scale, form = argument.rsplit(":", 2)
    if form == "quoted":
        written = [(text, quoted[label]) for text, label in rows]
        write_arff(Path(path), class_name, list(quoted.values()), written * int(scale))
    else:
        write_arff(Path(path), class_name, labels, rows * int(scale))
"""
#: Writes Debian's package descriptions in one language (benchmarks/corpora.py's apt lists under APT_INPUTS) as
#: ARFF, rows repeated ×scale: ``APT_INPUTS LANGUAGE PATH:SCALE …``.
TRANSLATED_WORDS = r"""
import sys
from pathlib import Path
from corpora import debian_documents, write_arff
apt_inputs, language, *targets = sys.argv[1:]
sections = {}
for _, text, section in debian_documents(Path(apt_inputs), language):
    sections.setdefault(text, section)  # a description repeated word for word (packages in name order) is one document
for argument in targets:
    path, scale = argument.rsplit(":", 1)
    rows = list(sections.items()) * int(scale)
    write_arff(Path(path), Path(path).stem, "debian-section", sorted(set(sections.values())), rows)
"""
#: The translated descriptions' languages, by apt's name of each.
LANGUAGES = {"de": "German", "fr": "French", "es": "Spanish"}
#: The accented control: the word appended to every Reuters document of the plain file and of the accented one.
CONTROL_WORDS = {"plain": "cafe", "accented": "café"}
#: The name of a Debian file whose every label is quoted, after the name of the same documents' file.
QUOTED_LABELS = ", labels quoted"
#: The jobs run on the files with quoted labels: the label column's cost shows most in the lightest jobs.
QUOTED_LABEL_JOBS = ("counts", "hashing", "hashing, number names")


def with_word(row: str, word: str) -> str:
    """A Reuters data row (``'text',class``) with `` word`` appended to its text."""
    text, label = row.rsplit(",", 1)
    return f"{text[:-1]} {word}',{label}"


def reuters_file(path: Path, scale: int, word: str = "") -> Path:
    """Reuters grain's training documents repeated ×``scale`` at ``path`` (written once), each with ``word``
    appended when one is given."""
    if not path.exists():  # written a copy at a time: this process's peak RSS is every child's floor (below)
        header, rows = WORDS_SOURCE.read_text().split("@data", 1)
        lines = rows.strip().splitlines()
        body = "\n".join(with_word(row, word) for row in lines) if word else rows.strip()
        with path.open("w", encoding="utf-8") as written:
            written.write(header + "@data\n")
            for _ in range(scale):
                written.write(body + "\n")
    return path


def words_inputs(
    folder: Path,
    scales: Sequence[int],
    debian_scales: Sequence[int],
    quoted_labels: bool = False,
    translated_scales: tuple[str, Sequence[int]] = ("de", ()),
    accented_scales: Sequence[int] = (),
) -> dict[str, Path]:
    """The corpora of ``run.py words``, by the name of each: Weka's Reuters grain training documents (1,554 long
    documents, 2 classes) with their data rows repeated ×scale; Debian's package short descriptions (some 60,000
    one-line documents, some 60 classes: benchmarks/documents.py's corpus) repeated ×scale, and with
    ``quoted_labels`` the same file with every label quoted beside each; Debian's long descriptions in a language
    (``translated_scales``: apt's name of the language, the scales), each distinct description a document, its
    package's section the class (in German: 13,104 documents, 59 words and 486 bytes each on average, 57 classes;
    98 % of the documents and 2.8 % of their bytes are not ASCII); and the accented control, Reuters ×scale with
    ``cafe`` appended to every document, then with ``café``.  Debian's corpora are built from apt's lists (the
    translated ones from lists of their own, fetched once into ``folder/corpora/apt`` as benchmarks/corpora.py
    does)."""
    made = {f"Reuters ×{scale}": reuters_file(folder / f"grain_docs_x{scale}.arff", scale) for scale in scales}
    for scale in accented_scales:
        for form, word in CONTROL_WORDS.items():
            made[f"Reuters ×{scale} + {word}"] = reuters_file(folder / f"grain_docs_x{scale}_{form}.arff", scale, word)
    debian = {}
    for scale in debian_scales:
        debian[f"Debian ×{scale}"] = (folder / f"debian_words_x{scale}.arff", scale, "bare")
        if quoted_labels:
            debian[f"Debian ×{scale}{QUOTED_LABELS}"] = (folder / f"debian_words_x{scale}_quoted.arff", scale, "quoted")
    missing = [f"{path.resolve()}:{scale}:{form}" for path, scale, form in debian.values() if not path.exists()]
    # (Linux starts a child's peak RSS at what this process had reached when it was spawned: whatever this
    # process holds at its largest counts in every run's peak RSS, so the inputs are written small or elsewhere)
    if missing:  # by a process of its own (apt's listing held in this one would count in every run's peak RSS),
        # which runs beside documents.py: the paths are absolute for that
        subprocess.run([sys.executable, "-c", DEBIAN_WORDS, *missing], cwd=HERE, check=True)
    made |= {name: path for name, (path, _, _) in debian.items()}
    language, scales_of_language = translated_scales
    translated = {
        f"Debian {LANGUAGES.get(language, language)} ×{scale}": (folder / f"debian_{language}_x{scale}.arff", scale)
        for scale in scales_of_language
    }
    missing = [f"{path.resolve()}:{scale}" for path, scale in translated.values() if not path.exists()]
    if missing:
        apt_inputs = (folder / "corpora").resolve()
        subprocess.run(
            [sys.executable, "-c", TRANSLATED_WORDS, str(apt_inputs), language, *missing], cwd=HERE, check=True
        )
    return made | {name: path for name, (path, _) in translated.items()}


def non_ascii_share(path: Path) -> tuple[float, float]:
    """The shares of an ARFF file's data bytes and of its data rows that are not ASCII."""
    data = path.read_bytes()
    body = data[data.index(b"@data") + len(b"@data") :].strip()
    rows = body.split(b"\n")
    outside = len(body) - len(body.translate(None, bytes(range(128, 256))))
    return outside / len(body), sum(not row.isascii() for row in rows) / len(rows)


def words_jobs_of(data: str, chosen: list[str], debian_chosen: list[str]) -> list[str]:
    """The jobs run on the corpus named ``data``: ``debian_chosen`` on Debian's short descriptions (of them, only
    ``QUOTED_LABEL_JOBS`` on a file with quoted labels), ``chosen`` on the others."""
    if data.endswith(QUOTED_LABELS):
        return [name for name in debian_chosen if name in QUOTED_LABEL_JOBS]
    return debian_chosen if data.startswith("Debian ×") else chosen


def peer_data(data: str) -> str:
    """The corpus whose vectorizer runs are ``data``'s peer: a file with quoted labels shares its documents' file."""
    return data.removesuffix(QUOTED_LABELS)


def scale_list(text: str) -> list[int]:
    """The scales of a comma-separated option, in order."""
    return sorted(int(scale) for scale in text.split(",") if scale)


def words_main(argv: list[str]) -> None:
    """``run.py words``: the words jobs against Weka's StringToWordVector and scikit-learn's vectorizers."""
    parser = argparse.ArgumentParser(prog="run.py words", description=words_main.__doc__)
    parser.add_argument("--inputs", type=Path, default=HERE / ".inputs")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scales", default="10,50", help="Repetitions of Reuters grain's documents.")
    parser.add_argument("--debian-scales", default="1,10", help="Repetitions of Debian's short descriptions.")
    parser.add_argument(
        "--quoted-labels",
        action=argparse.BooleanOptionalAction,
        default=True,
        help=f"Beside each Debian file, the same with every label quoted (jobs: {', '.join(QUOTED_LABEL_JOBS)}).",
    )
    parser.add_argument(
        "--language", default="de", help="The language of --translated-scales' descriptions (apt's name: de, fr, es)."
    )
    parser.add_argument(
        "--translated-scales", default="2", help="Repetitions of Debian's long descriptions in --language."
    )
    parser.add_argument(
        "--accented",
        default="10",
        help="Repetitions of Reuters grain's documents with cafe appended to each, and with café: the accented "
        "control, with `filterkit predict` of the grain model over both.",
    )
    parser.add_argument("--no-weka", action="store_true")
    parser.add_argument(
        "--job", action="append", choices=list(WORDS_JOBS), help="A job to run (repeat it for more; default: all)."
    )
    parser.add_argument(
        "--debian-job",
        action="append",
        choices=list(WORDS_JOBS),
        help="A job to run on Debian's short descriptions (repeat it for more; default: those of --job).",
    )
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        metavar="JOB@DATA",
        help="Leave out one job on one corpus, e.g. 'char_wb 2-5@Debian German ×10' (repeat it for more).",
    )
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    args = parser.parse_args(argv)
    chosen = [name for name in WORDS_JOBS if name in (args.job or WORDS_JOBS)]
    debian_chosen = [name for name in WORDS_JOBS if name in (args.debian_job or chosen)]
    args.inputs.mkdir(parents=True, exist_ok=True)
    accented = scale_list(args.accented)
    inputs = words_inputs(
        args.inputs,
        scale_list(args.scales),
        scale_list(args.debian_scales),
        args.quoted_labels,
        (args.language, scale_list(args.translated_scales)),
        accented,
    )
    jobs_by_data = {data: words_jobs_of(data, chosen, debian_chosen) for data in inputs}
    unknown = [skip for skip in args.skip if skip.partition("@")[0] not in jobs_by_data.get(skip.partition("@")[2], [])]
    if unknown:
        parser.error(f"--skip names no job run on a corpus: {', '.join(unknown)}")
    jobs_by_data = {
        data: [job for job in jobs if f"{job}@{data}" not in args.skip] for data, jobs in jobs_by_data.items()
    }
    filterkit = shutil.which("filterkit") or str(Path(sys.executable).with_name("filterkit"))
    java = ["java", JAVA_HEAP, "-cp", WEKA_JAR, "weka.filters.unsupervised.attribute.StringToWordVector"]
    jobs, in_memory = [], {}
    timings = Path(tempfile.mkdtemp(prefix="filterkit-words-"))
    for data, path in inputs.items():
        for name in jobs_by_data[data]:
            ours, weka, vectorizer, settings = WORDS_JOBS[name]
            if ours is not None:
                command = [filterkit, str(path), "words", *ours]
                jobs.append(((data, name, "filterkit"), f"filterkit words {' '.join(ours)}", data, command, None))
            if weka is not None and not args.no_weka:
                weka_job = [*java, *weka, "-c", "last", "-i", str(path), "-o", os.devnull]
                jobs.append(((data, name, "weka"), f"Weka StringToWordVector {' '.join(weka)}", data, weka_job, None))
            peer = (peer_data(data), vectorizer, settings)
            if peer not in in_memory:  # the all-words jobs and the quoted labels' file share the vectorizer's runs
                # each run appends the vectorizer's own seconds, documents in memory, timed inside the process
                in_memory[peer] = timed = timings / f"{len(in_memory)}.txt"
                sklearn = [sys.executable, "-c", SKLEARN_WORDS, str(inputs[peer[0]]), vectorizer, settings, str(timed)]
                jobs.append(((*peer, "sklearn"), f"read + {vectorizer}({settings})", peer[0], sklearn, None))
    try:
        model = timings / "grain.json"
        if accented:  # the grain model of `filterkit train`'s default candidates, fitted once (not timed)
            subprocess.run([filterkit, "train", "-q", "-o", str(model), str(WORDS_SOURCE)], check=True)
        for scale in accented:
            for word in CONTROL_WORDS.values():
                data = f"Reuters ×{scale} + {word}"
                command = [filterkit, "predict", str(model), str(inputs[data])]
                jobs.append(((data, "predict", "filterkit"), "filterkit predict (grain model)", data, command, None))
        results = interleaved(jobs, args.repeats)
        for key, timed in in_memory.items():  # the in-memory seconds of the same interleaved runs
            runs = [line.split() for line in timed.read_text().splitlines()]
            results[(*key, "in memory")] = tuple(statistics.median(float(run[k]) for run in runs) for k in (0, 1))
    finally:
        shutil.rmtree(timings)
    command_line = " ".join(["python benchmarks/run.py words", *(shlex.quote(argument) for argument in argv)])
    report = format_words(results, inputs, args.repeats, jobs_by_data, accented, command_line)
    replace_section(args.out, WORDS_HEADING, report)
    print(report)


WORDS_HEADING = "## Documents to word vectors (`run.py words`)"


def format_words(
    results: dict,
    inputs: dict[str, Path],
    repeats: int,
    jobs_by_data: dict[str, list[str]],
    accented: list[int],
    command_line: str,
) -> str:
    """The words section of RESULTS.md: the corpora; per corpus and job, each tool's wall and CPU seconds, MB/s and
    peak RSS, and the in-memory vectorizer's seconds over filterkit's; then the controls (:func:`format_controls`)."""
    lines = [
        WORDS_HEADING,
        "",
        f"`{command_line}` on {time.strftime('%Y-%m-%d')} at commit {_commit()}, "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; medians of {repeats} interleaved rounds.  "
        "Reuters: Weka's ReutersGrain-train documents (1,554 long documents, 2 classes) repeated; Debian: "
        "Debian's package short descriptions by section (benchmarks/documents.py's corpus, built from "
        "`apt-cache dumpavail`: some 60,000 one-line documents in some 60 classes) repeated, and the same file with "
        "every label quoted (`'admin'`; jobs counts and hashing, the vectorizer's runs those of the bare file); "
        "Debian German: the package descriptions of apt's Translation-de file (bookworm main; French, Spanish: "
        "Translation-fr, -es), short and long, each distinct one a document, its package's section the class, "
        "repeated; "
        "Reuters + cafe / + café: the accented control, each Reuters document with one word appended.  Every "
        "command reads the file (MB/s: the file's size, almost all of it document text); "
        "filterkit and Weka write to /dev/null, scikit-learn reads with filterkit's reader and writes nothing; "
        '"in memory" is the vectorizer\'s `fit_transform` alone, timed inside the same runs.  The same tokens '
        "everywhere: Weka's delimiters, lowercased (char_wb: scikit-learn's character n-grams 2-5 within words, "
        "lowercased; hashing: 2**16 columns, HashingVectorizer(alternate_sign=False, norm=None), filterkit's named "
        "by their most frequent tokens, or with number names `#COLUMN` (`--hash-names number`: no fit pass); min-df "
        "2, max-df 0.5: every word in 2 documents or more and in half of them or fewer); the vectorizers keep every "
        'word, filterkit the 1,000 most frequent per class (Weka\'s default) or, in the jobs "all words" and min-df, '
        "every word.  Ratio, in filterkit's row: the in-memory vectorizer's wall and CPU seconds ÷ filterkit's end "
        "to end (3 or more: filterkit reads, fits, transforms and writes three times as fast as the vectorizer "
        "alone).  The scikit-learn rows follow the first job that uses them.",
        "",
        "| data | MB | documents | not ASCII: bytes / documents |",
        "|---|---|---|---|",
    ]
    for data, path in inputs.items():
        outside_bytes, outside_rows = non_ascii_share(path)
        rows = data_rows(path)
        lines.append(
            f"| {data} | {path.stat().st_size / 1e6:.1f} | {rows:,} | {100 * outside_bytes:.2f} % / "
            f"{100 * outside_rows:.1f} % |"
        )
    lines += [
        "",
        "| data | job | tool | wall s | CPU s | file MB/s | peak RSS MiB | vectorizer ÷ filterkit, wall / CPU |",
        "|---|---|---|---|---|---|---|---|",
    ]
    shown = {"sklearn": "scikit-learn, reading the file", "in memory": "scikit-learn, in memory"}
    listed = set()
    for data, path in inputs.items():
        megabytes = path.stat().st_size / 1e6
        for name in jobs_by_data[data]:
            _, _, vectorizer, settings = WORDS_JOBS[name]
            peer = (peer_data(data), vectorizer, settings)
            ours, alone = results.get((data, name, "filterkit")), results[(*peer, "in memory")]
            rows = [("filterkit", ours), ("weka", results.get((data, name, "weka")))]
            if peer not in listed:
                listed.add(peer)
                rows += [("sklearn", results[(*peer, "sklearn")]), ("in memory", alone)]
            for tool, found in rows:
                if found is None:
                    continue
                wall, cpu = found[0], found[4] if len(found) > 2 else found[1]
                rss = f"{found[1]}" if len(found) > 2 else "—"
                ratio = f"{alone[0] / ours[0]:.2f} / {alone[1] / ours[4]:.2f}" if tool == "filterkit" else ""
                lines.append(
                    f"| {data} | {name} | {shown.get(tool, tool)} | {wall:.2f} | {cpu:.2f} | {megabytes / wall:.1f} "
                    f"| {rss} | {ratio} |"
                )
    return "\n".join(lines + format_controls(results, jobs_by_data, accented)) + "\n"


def data_rows(path: Path) -> int:
    """The number of data rows of an ARFF file written one row a line."""
    data = path.read_bytes()
    return data[data.index(b"@data") :].strip().count(b"\n")


def format_controls(results: dict, jobs_by_data: dict[str, list[str]], accented: list[int]) -> list[str]:
    """The controls' table: each job's CPU and wall seconds on Reuters with ``café`` appended over the same with
    ``cafe`` (filterkit's words and predict, the vectorizers in memory, Weka), and filterkit's on each Debian file
    with quoted labels over the same with bare ones."""
    pairs = [
        (f"Reuters ×{scale} + {CONTROL_WORDS['plain']}", f"Reuters ×{scale} + {CONTROL_WORDS['accented']}")
        for scale in accented
    ]
    pairs += [(peer_data(data), data) for data in jobs_by_data if data.endswith(QUOTED_LABELS)]
    if not pairs:
        return []
    listed = set()
    lines = [
        "",
        "Controls: the same documents with one accented word each (`café` appended to every Reuters document, "
        "against `cafe`; predict: `filterkit predict` of the grain model `filterkit train` fits with its default "
        "candidates on ReutersGrain-train, CSV to /dev/null), and with every label quoted.  Ratio: the seconds on "
        "the second file ÷ those on the first (the goal: 1.1 or less).",
        "",
        "| first file | second file | job | tool | CPU s, first / second | wall s, first / second "
        "| second ÷ first, CPU / wall |",
        "|---|---|---|---|---|---|---|",
    ]
    for first, second in pairs:
        for name in [*jobs_by_data[second], "predict"]:
            tools = [("filterkit", (first, name, "filterkit"), (second, name, "filterkit"))]
            if name in WORDS_JOBS and not second.endswith(QUOTED_LABELS):
                _, _, vectorizer, settings = WORDS_JOBS[name]
                tools.append(("weka", (first, name, "weka"), (second, name, "weka")))
                tools.append(
                    (
                        "scikit-learn, in memory",
                        (first, vectorizer, settings, "in memory"),
                        (second, vectorizer, settings, "in memory"),
                    )
                )
            for tool, key, other in tools:
                if key not in results or other not in results or (key, other) in listed:
                    continue  # not run, or the runs a job before shared (the all-words jobs' vectorizer)
                listed.add((key, other))
                (wall, cpu), (other_wall, other_cpu) = (
                    (found[0], found[4] if len(found) > 2 else found[1]) for found in (results[key], results[other])
                )
                lines.append(
                    f"| {first} | {second} | {name} | {tool} | {cpu:.2f} / {other_cpu:.2f} "
                    f"| {wall:.2f} / {other_wall:.2f} | {other_cpu / cpu:.2f} / {other_wall / wall:.2f} |"
                )
    return lines


if __name__ == "__main__":
    if sys.argv[1:2] == ["words"]:
        words_main(sys.argv[2:])
    else:
        main()
