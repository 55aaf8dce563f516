"""Chains that learn, with each pass reading what the pass before it kept, beside an earlier checkout that read
its input in every pass.

    python benchmarks/kept_passes.py --baseline CHECKOUT [--inputs benchmarks/.inputs] [--repeats 5]
                                     [--out benchmarks/RESULTS.md]

``CHECKOUT`` is another filterkit source tree with its compiled modules built in place (``git worktree add
/tmp/base COMMIT && cd /tmp/base && python setup.py build_ext --inplace``); it runs as ``python -P -m filterkit``
with that tree first on ``PYTHONPATH``, this tree likewise (``-P``: not the working directory's ``filterkit``).
Inputs (made by benchmarks/run.py when missing): Weka's Reuters grain documents ×50 (long documents, 2 classes),
Debian's package descriptions ×10 (short documents, some 60 classes), Reuters grain word counts ×100 (sparse
numbers) and UCI letter ×10 (dense numbers).
Before timing, both trees' outputs are checked byte-identical.  Wall and CPU seconds and peak RSS (``wait4``) are
the medians of ``--repeats`` interleaved rounds (benchmarks/run.py's :func:`interleaved`).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import _commit, interleaved, make_inputs, replace_section, words_inputs  # noqa: E402

HERE = Path(__file__).resolve().parent
HEADING = "## Each pass reads what the pass before kept (`kept_passes.py`)"

#: (data, the chain's options, its stages): documents to words then a learner, and numeric chains.
JOBS = [
    ("Reuters ×50", "", "words --counts --lowercase --stopwords weka shape bns l2"),
    ("Reuters ×50", "", "words --counts --lowercase ig select --top 1000 l2"),
    ("Debian ×10", "", "words --counts --lowercase ig select --top 1000 l2"),
    ("Debian ×10", "--positive admin", "words --counts --lowercase bns l2"),
    ("grain ×100", "-c first", "shape bns l2"),
    ("grain ×100", "-c first", "ig --presence select --top 100 l2"),
    ("letter ×10", "", "discretize ig select --top 8 minmax"),
]


def command(tree: Path, options: str, stages: str, data: Path) -> list[str]:
    """``filterkit`` from ``tree`` on ``data``."""
    python = [sys.executable, "-P", "-m", "filterkit", "-q", *options.split(), str(data), *stages.split()]
    return ["env", f"PYTHONPATH={tree}", *python]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="An earlier checkout, built in place.")
    parser.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    parser.add_argument("--inputs", type=Path, default=HERE / ".inputs")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    args = parser.parse_args()
    args.inputs.mkdir(parents=True, exist_ok=True)
    numeric = make_inputs(args.data, args.inputs, [10, 100], [])
    documents = words_inputs(args.inputs, [50], [10])
    inputs = {"grain ×100": numeric["grain_x100"], "letter ×10": numeric["letter_x10"], **documents}
    this = HERE.parent
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as scratch:
        for number, (data, options, stages) in enumerate(JOBS):
            outputs = [Path(scratch) / f"{number}-{side}.arff" for side in ("this", "baseline")]
            for tree, output in zip((this, args.baseline), outputs):
                with output.open("wb") as sink:
                    subprocess.run(command(tree, options, stages, inputs[data]), stdout=sink, check=True)
            if not filecmp.cmp(*outputs, shallow=False):
                sys.exit(f"{data} {options} {stages}: the two trees' outputs differ")
    jobs = [
        ((number, side), f"{side} {options} {stages}", data, command(tree, options, stages, inputs[data]), None)
        for number, (data, options, stages) in enumerate(JOBS)
        for side, tree in (("this", this), ("baseline", args.baseline))
    ]
    results = interleaved(jobs, args.repeats)
    lines = [
        HEADING,
        "",
        f"`python benchmarks/kept_passes.py --baseline {args.baseline}` on {started} at commit {_commit()} against "
        f"the baseline at {_commit_of(args.baseline)}, {os.cpu_count()} cores, load average {load:.2f} when it "
        f"began. Medians of {args.repeats} interleaved rounds, output to /dev/null; the outputs checked identical "
        "first.",
        "",
        "| data | chain | CPU (s) | baseline CPU (s) | CPU ratio | wall (s) | baseline wall (s) | peak RSS (MiB) | "
        "baseline (MiB) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for number, (data, options, stages) in enumerate(JOBS):
        wall, peak, _, _, cpu = results[(number, "this")]
        old_wall, old_peak, _, _, old_cpu = results[(number, "baseline")]
        chain = f"{options} {stages}".strip()
        lines.append(
            f"| {data} | `{chain}` | {cpu:.2f} | {old_cpu:.2f} | {cpu / old_cpu:.2f} | {wall:.2f} | {old_wall:.2f} | "
            f"{peak} | {old_peak} |"
        )
    report = "\n".join(lines) + "\n"
    print(report)
    replace_section(args.out, HEADING, report)


def _commit_of(tree: Path) -> str:
    """The commit checked out in ``tree``."""
    found = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return found.stdout.strip() or "unknown"


if __name__ == "__main__":
    main()
