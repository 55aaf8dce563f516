"""Time filterkit against Weka 3.6 and liac-arff, in one run, on data made from real files.

    python benchmarks/run.py [--data ../shared/data] [--repeats 3] [--scales 10,100] [--out benchmarks/RESULTS.md]

Inputs (generated once into benchmarks/.inputs/): Reuters grain word counts
(``weka/grain_wc.arff``, 1,554 documents × 13,027 words, sparse) with its data rows
repeated ×10 and ×100, and UCI ``letter`` (20,000 rows × 16 numeric, dense) repeated ×10.
Every command runs as its own process; wall time and that process's own peak RSS
(``wait4``'s ``ru_maxrss``) are taken, and the median of ``--repeats`` runs is reported.
The numpy floor is the time to read the file and ``numpy.fromstring(…, sep=' ')`` its data
section with braces and commas turned into spaces: a parse with no ARFF semantics at all.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
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


CONTRACT_COST = """
import os, sys, time
from filterkit import cli, contract
spent = [0.0]
check = contract.OutputContract.check
def timed(self, *args):
    started = time.perf_counter()
    try:
        return check(self, *args)
    finally:
        spent[0] += time.perf_counter() - started
contract.OutputContract.check = timed
cli.keep_freed_memory()
sys.stdout = open(os.devnull, "w")
started = time.perf_counter()
status = cli.run(sys.argv[1:])
print(spent[0], time.perf_counter() - started, status, file=sys.stderr)
"""


def make_inputs(data: Path, scales: list[int]) -> dict[str, Path]:
    """Repeated copies of the real files (made once)."""
    folder = HERE / ".inputs"
    folder.mkdir(exist_ok=True)
    made = {}
    for source, label, factors in (
        (data / "weka" / "grain_wc.arff", "grain", scales),
        (data / "uci" / "letter.arff", "letter", [10]),
    ):
        text = source.read_bytes()
        start = text.lower().index(b"@data")
        start = text.index(b"\n", start) + 1
        header, rows = text[:start], text[start:]
        if not rows.endswith(b"\n"):
            rows += b"\n"
        for factor in factors:
            path = folder / f"{label}_x{factor}.arff"
            if not path.exists():
                with open(path, "wb") as out:
                    out.write(header)
                    for _ in range(factor):
                        out.write(rows)
            made[f"{label}_x{factor}"] = path
    return made


def measure(command: list[str], output: Path | None = None) -> tuple[float, int]:
    """Wall seconds and the child's own peak RSS in MiB of one run (stdout to ``output`` or /dev/null)."""
    sink = open(output, "wb") if output else open(os.devnull, "wb")
    with sink:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - started
    stderr = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {stderr[-2000:]}")
    return elapsed, usage.ru_maxrss // 1024


def contract_share(arguments: list[str], repeats: int) -> tuple[float, float]:
    """Median seconds spent checking the stage contract (filterkit.contract) on every chunk, and
    median seconds of the whole in-process run, over ``repeats`` runs of ``filterkit ARGUMENTS``."""
    runs = []
    for _ in range(repeats):
        finished = subprocess.run(
            [sys.executable, "-c", CONTRACT_COST, *arguments], capture_output=True, text=True, check=True
        )
        checked, total, status = finished.stderr.split()[-3:]
        if status != "0":
            raise RuntimeError(f"filterkit {' '.join(arguments)} failed: {finished.stderr[-2000:]}")
        runs.append((float(checked), float(total)))
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def median_of(command: list[str], repeats: int) -> tuple[float, int, float, float]:
    """Median wall time, median peak RSS, and the fastest and slowest time over ``repeats`` runs."""
    runs = [measure(command) for _ in range(repeats)]
    times = [r[0] for r in runs]
    return statistics.median(times), int(statistics.median(r[1] for r in runs)), min(times), max(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scales", default="10,100")
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    parser.add_argument("--no-weka", action="store_true", help="Skip the Weka runs.")
    args = parser.parse_args()
    scales = [int(s) for s in args.scales.split(",")]
    started = (
        f"`python benchmarks/run.py` on {time.strftime('%Y-%m-%d')} at commit {_commit()}, "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} when it began."
    )
    inputs = make_inputs(args.data, scales)
    filterkit = shutil.which("filterkit") or str(Path(sys.executable).with_name("filterkit"))
    weka = not args.no_weka and shutil.which("java") and os.path.exists(WEKA_JAR)
    java = ["java", JAVA_HEAP, "-cp", WEKA_JAR]
    scratch = HERE / ".inputs" / "weka_out.arff"
    rows = []

    def record(label, data_name, command):
        seconds, rss, fastest, slowest = median_of(command, args.repeats)
        rows.append((label, data_name, seconds, rss, fastest, slowest))
        print(f"{label:<55} {data_name:<10} {seconds:8.2f} s {rss:7d} MiB", file=sys.stderr, flush=True)
        return seconds, rss

    results = {}
    for scale in scales:
        name = f"grain_x{scale}"
        path = str(inputs[name])
        results[(name, "select")] = record(
            "filterkit ig --presence select --top 100 l2",
            name,
            [filterkit, "-c", "first", path, "ig", "--presence", "select", "--top", "100", "l2"],
        )
        if weka:
            results[(name, "weka select")] = record(
                "Weka AttributeSelection(IG -B, Ranker -N 100) + Normalize L2",
                name,
                java + WEKA_SELECT_L2 + ["-i", path, "-o", str(scratch)],
            )
        results[(name, "shape")] = record(
            "filterkit shape bns l2", name, [filterkit, "-c", "first", path, "shape", "bns", "l2"]
        )
        results[(name, "l2")] = record("filterkit l2", name, [filterkit, "-c", "first", path, "l2"])
        if weka:
            results[(name, "weka l2")] = record(
                "Weka Normalize -N 1.0 -L 2.0", name, java + WEKA_L2 + ["-c", "first", "-i", path, "-o", str(scratch)]
            )
        results[(name, "identity")] = record("filterkit identity rewrite", name, [filterkit, path])
        results[(name, "liac")] = record(
            "liac-arff load + dump", name, [sys.executable, "-c", LIAC_ROUND_TRIP, path, str(scratch), "sparse"]
        )
        results[(name, "floor")] = record(
            "numpy floor (read + fromstring)", name, [sys.executable, "-c", NUMPY_FLOOR, path]
        )
    dense = str(inputs["letter_x10"])
    results[("letter_x10", "l2")] = record("filterkit l2", "letter_x10", [filterkit, dense, "l2"])
    results[("letter_x10", "identity")] = record("filterkit identity rewrite", "letter_x10", [filterkit, dense])
    results[("letter_x10", "liac")] = record(
        "liac-arff load + dump", "letter_x10", [sys.executable, "-c", LIAC_ROUND_TRIP, dense, str(scratch), "dense"]
    )
    # (no numpy floor for letter: its class is a letter, which numpy.fromstring cannot read)
    if scratch.exists():
        scratch.unlink()
    top = f"grain_x{max(scales)}"
    contract = {
        chain: contract_share(["-c", "first", str(inputs[top]), *chain.split()], args.repeats)
        for chain in ("ig --presence select --top 100 l2", "shape bns l2")
    }
    report = format_report(rows, results, scales, args.repeats, weka, started) + format_contract(contract, top)
    args.out.write_text(report)
    print(report)


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


def format_report(rows, results, scales, repeats, weka, started: str) -> str:
    """The markdown table and the targets of issue 8."""
    lines = [
        "# Benchmark: filterkit vs Weka 3.6.14 and liac-arff",
        "",
        started,
        "",
        f"Median of {repeats} runs (and the fastest and slowest); peak RSS is each process's own (`wait4`). "
        f"Python {sys.version.split()[0]}.",
        "",
        "| command | data | time (s) | fastest–slowest (s) | peak RSS (MiB) |",
        "|---|---|---|---|---|",
    ]
    for label, data_name, seconds, rss, fastest, slowest in rows:
        lines.append(f"| {label} | {data_name} | {seconds:.2f} | {fastest:.2f}–{slowest:.2f} | {rss} |")
    lines += ["", "Targets (issue 8):", ""]
    top = f"grain_x{max(scales)}"
    low = f"grain_x{min(scales)}"
    select, shape = results[(top, "select")], results[(top, "shape")]
    if weka:
        weka_select = results[(top, "weka select")]
        lines.append(
            f"1. `ig --presence select --top 100 l2` at {top}: {weka_select[0] / select[0]:.2f}× faster than Weka "
            f"(target ≥ 2), peak RSS {select[1] / weka_select[1]:.2f} of Weka's (target ≤ 0.25)"
        )
    lines.append(f"2. `shape bns l2` takes {shape[0] / select[0]:.2f}× the time of target 1 (target ≤ 1.5)")
    identity, floor = results[(top, "identity")], results[(top, "floor")]
    lines.append(
        f"3. identity rewrite throughput is {floor[0] / identity[0]:.2f}× the numpy floor's (target ≥ 1.5); "
        f"liac-arff takes {results[(top, 'liac')][0] / identity[0]:.1f}× filterkit's time"
    )
    if low != top:
        lines.append(
            f"4. peak RSS at {top} / at {low}: `l2` {results[(top, 'l2')][1] / results[(low, 'l2')][1]:.2f}, "
            f"target-1 chain {select[1] / results[(low, 'select')][1]:.2f} (target ≤ 1.5)"
        )
    return "\n".join(lines) + "\n"


def format_contract(contract: dict, data_name: str) -> str:
    """The share of each chain's run spent checking every stage's output against the stage contract."""
    lines = [
        "",
        f"The stage contract (issue 15), checked on every chunk of every stage, at {data_name} "
        "(in-process runs, medians; target < 3 %):",
        "",
    ]
    for chain, (checked, total) in contract.items():
        lines.append(f"- `{chain}`: {checked:.3f} s of {total:.2f} s ({100 * checked / total:.1f} %)")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
