"""A dense CSV file through ``l2`` beside the same rows as ARFF, and polars and pandas doing the same job
(issue 51, item 5).

    python benchmarks/csv_reading.py [--data ../shared/data] [--inputs benchmarks/.inputs] [--repeats 7]
                                     [--out benchmarks/RESULTS.md]

UCI ``letter`` ×10 (200,000 rows × 16 numbers and a class of 26 letters; benchmarks/run.py makes the ARFF
file) and the same rows as CSV (written by filterkit).  Timed, each as its own process: ``filterkit IN.csv l2 -o
OUT.csv`` and ``filterkit IN.arff l2 -o OUT.arff``, and the peers' read + normalize + write of the CSV file
(each row's numbers divided by their Euclidean norm, the class kept): polars (``read_csv``, ``write_csv``) and
pandas (``read_csv``, ``to_csv``); a peer that is not installed is left out, and said so.  Before timing, the
CSV route's output is checked byte-identical to the ARFF route's written as CSV.  Wall and CPU seconds
(``wait4``) are the medians of ``--repeats`` interleaved rounds (benchmarks/run.py's :func:`interleaved`).
Reported: the CSV route over the ARFF route (the target: at most 1.2× by CPU) and over each peer (below 1).
"""

from __future__ import annotations

import argparse
import filecmp
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import _commit, interleaved, make_inputs, replace_section  # noqa: E402  (benchmarks/run.py: the inputs and the measuring)

HERE = Path(__file__).resolve().parent

#: A peer's job: read the CSV file, divide each row's numbers by their Euclidean norm, write CSV.
PEER = r"""
import sys
reader, source, target = sys.argv[1:4]
if reader == "polars":
    import polars
    frame = polars.read_csv(source)
    numbers = [name for name, kind in frame.schema.items() if kind.is_numeric()]
    norm = polars.sum_horizontal([polars.col(name).cast(polars.Float64) ** 2 for name in numbers]).sqrt()
    frame.with_columns([polars.col(name) / norm for name in numbers]).write_csv(target)
else:
    import numpy, pandas
    frame = pandas.read_csv(source)
    numbers = frame.select_dtypes("number").columns
    values = frame[numbers].to_numpy(dtype=float)
    frame[numbers] = values / numpy.linalg.norm(values, axis=1, keepdims=True)
    frame.to_csv(target, index=False)
"""
PEERS = ("polars", "pandas")
HEADING = "## CSV through `l2` beside ARFF, polars and pandas (`csv_reading.py`)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    parser.add_argument("--inputs", type=Path, default=HERE / ".inputs")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    args = parser.parse_args()
    filterkit = shutil.which("filterkit") or str(Path(sys.executable).with_name("filterkit"))
    arff = make_inputs(args.data, args.inputs, [], [])["letter_x10"]
    csv = arff.with_suffix(".csv")
    if not csv.exists():
        subprocess.run([filterkit, "-q", str(arff), "-o", str(csv)], check=True)
    peers = [peer for peer in PEERS if importlib.util.find_spec(peer) is not None]
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        subprocess.run([filterkit, "-q", str(csv), "l2", "-o", str(out / "csv.csv")], check=True)
        subprocess.run([filterkit, "-q", str(arff), "l2", "-o", str(out / "arff.csv")], check=True)
        # compared a block at a time: a run forked from this process would count what it holds in its peak RSS
        if not filecmp.cmp(out / "csv.csv", out / "arff.csv", shallow=False):
            raise SystemExit("filterkit's l2 of the CSV file differs from its l2 of the ARFF file")
        jobs = [
            (
                "csv",
                "filterkit IN.csv l2 -o OUT.csv",
                "letter_x10",
                [filterkit, str(csv), "l2", "-o", str(out / "o.csv")],
            ),
            (
                "arff",
                "filterkit IN.arff l2 -o OUT.arff",
                "letter_x10",
                [filterkit, str(arff), "l2", "-o", str(out / "o.arff")],
            ),
        ]
        for peer in peers:
            command = [sys.executable, "-c", PEER, peer, str(csv), str(out / f"{peer}.csv")]
            jobs.append((peer, f"{peer} read_csv + normalize + write", "letter_x10", command))
        results = interleaved([(*job, None) for job in jobs], args.repeats)
    report = format_report(jobs, results, args.repeats, [peer for peer in PEERS if peer not in peers], csv)
    replace_section(args.out, HEADING, report)
    print(report)


def format_report(jobs: list[tuple], results: dict, repeats: int, missing: list[str], csv: Path) -> str:
    """The section of RESULTS.md: each job's seconds and the CSV route's ratios."""
    versions = ", ".join(
        f"{peer} {__import__(peer).__version__}" for peer in PEERS if importlib.util.find_spec(peer) is not None
    )
    lines = [
        HEADING,
        "",
        f"`python benchmarks/csv_reading.py` on {time.strftime('%Y-%m-%d')} at commit {_commit()}, "
        f"{os.uname().nodename}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; medians of "
        f"{repeats} interleaved rounds; {versions or 'no peer installed'}"
        + (f" ({', '.join(missing)} not installed)" if missing else "")
        + f".  Input: letter ×10 as CSV ({csv.stat().st_size / 1e6:.1f} MB) and as ARFF, the same rows; the CSV "
        "route's output is byte-identical to the ARFF route's written as CSV.",
        "",
        "| command | wall s | CPU s | peak RSS MiB | CSV route ÷ this, wall / CPU |",
        "|---|---|---|---|---|",
    ]
    ours = results["csv"]
    for key, label, _, _ in jobs:
        found = results[key]
        ratio = "" if key == "csv" else f"{ours[0] / found[0]:.2f} / {ours[4] / found[4]:.2f}"
        lines.append(f"| {label} | {found[0]:.2f} | {found[4]:.2f} | {found[1]} | {ratio} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
