"""Documents read from ARFF, CSV, JSON Lines and Parquet, end to end (issue 52, item 8).

    python benchmarks/documents.py [--inputs benchmarks/.inputs] [--repeats 5] [--scale 20]
                                   [--out benchmarks/RESULTS.md]

Two corpora, each written in the four formats with the same documents and classes: Weka's Reuters grain
training documents (``ReutersGrain-train.arff``, 1,554 long documents, 2 classes) repeated ×``--scale``,
each copy's documents ending in a word of their own (`` copy7``) so that they stay mostly distinct, as the
typing step asks of a text column; and Debian's package short descriptions (``apt-cache dumpavail``, each
distinct one-line description a document, its section the class: some 60,000 short documents in some 60
classes).  Each format's file is read by ``filterkit FILE words --counts --lowercase`` (no option: the
typing step finds the text column), output to /dev/null, and by its peers feeding scikit-learn's
``CountVectorizer(lowercase=True)`` with Weka's delimiters (filterkit's tokens): pandas ``read_csv`` and
``read_json(lines=True)``, pyarrow's CSV, JSON and Parquet readers.  Before timing, the four filterkit
outputs of a corpus are checked byte-identical (the relation name and the provenance line aside).  Every
command is its own process; wall and CPU seconds (``wait4``) are the medians of ``--repeats`` interleaved
rounds (benchmarks/run.py's :func:`interleaved`).  Reported: each format's time over ARFF's (the target:
CSV and JSON Lines at most 1.3×) and filterkit's time over the best peer reading the same file (Parquet:
at most 1.0× pyarrow's reader feeding CountVectorizer).
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import _commit, interleaved, replace_section  # noqa: E402  (benchmarks/run.py: the measuring every benchmark shares)

HERE = Path(__file__).resolve().parent
REUTERS = Path("/usr/share/doc/weka/examples/ReutersGrain-train.arff")
DEBIAN_DESCRIPTIONS = HERE.parent / "docs" / "experiments" / "debian_descriptions.py"
FORMATS = ("arff", "csv", "jsonl", "parquet")
WORDS = ("words", "--counts", "--lowercase")

#: A peer: read the file (all its columns), then CountVectorizer on the text column with Weka's delimiters.
PEER = r"""
import re, sys
reader, path, text = sys.argv[1:4]
if reader == "pandas":
    import pandas
    frame = pandas.read_json(path, lines=True) if path.endswith(".jsonl") else pandas.read_csv(path)
    documents = frame[text].fillna("").tolist()
else:
    import pyarrow.csv, pyarrow.json, pyarrow.parquet
    read = {
        "csv": lambda p: pyarrow.csv.read_csv(p, parse_options=pyarrow.csv.ParseOptions(newlines_in_values=True)),
        "jsonl": pyarrow.json.read_json,
        "parquet": pyarrow.parquet.read_table,
    }
    documents = [d or "" for d in read[path.rsplit(".", 1)[1]](path).column(text).to_pylist()]
from sklearn.feature_extraction.text import CountVectorizer
pattern = "[^" + re.escape(" \r\n\t.,;:'\"()?!") + "]+"
print(CountVectorizer(lowercase=True, token_pattern=pattern).fit_transform(documents).shape)
"""
#: The peers of each format.
PEERS = {"csv": ("pandas", "pyarrow"), "jsonl": ("pandas", "pyarrow"), "parquet": ("pyarrow",)}


def reuters_rows(scale: int) -> tuple[str, list[str], list[tuple[str, str]]]:
    """The Reuters grain training documents ×``scale``, each copy's ending in a word of its own."""
    from filterkit.arff import read_arff

    schema, chunk = read_arff(str(REUTERS))
    labels = schema.attributes[1].labels
    rows = [(chunk.text[0][row] or "", labels[int(chunk.values[row, 1])]) for row in range(chunk.n_rows)]
    copies = [(f"{text} copy{copy}", label) for copy in range(scale) for text, label in rows]
    return "class-att", list(labels), copies


def debian_rows() -> tuple[str, list[str], list[tuple[str, str]]]:
    """Every distinct package short description of ``apt-cache dumpavail``, its section the class."""
    spec = importlib.util.spec_from_file_location("debian_descriptions", DEBIAN_DESCRIPTIONS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    listing = subprocess.run(["apt-cache", "dumpavail"], capture_output=True, text=True, check=True).stdout
    seen: dict[str, str] = {}
    for record in module.records(listing.splitlines()):
        section = record.get("Section", "").rsplit("/", 1)[-1]
        text = record.get("Description", "")
        if section and text and text not in seen:
            seen[text] = section
    # the class is not named "section": a description holding that word would name a word attribute alike
    return "debian-section", list(dict.fromkeys(seen.values())), list(seen.items())


def write_arff(path: Path, class_name: str, labels: list[str], rows: list[tuple[str, str]]) -> None:
    """The corpus as ARFF: a string attribute ``text`` and the class."""
    quoted = [(text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n"), label) for text, label in rows]
    with open(path, "w", encoding="utf-8") as arff:
        arff.write(
            f"@relation {path.stem}\n\n@attribute text string\n@attribute {class_name} {{{','.join(labels)}}}\n\n"
        )
        arff.write("@data\n" + "".join(f"'{text}',{label}\n" for text, label in quoted))


def write_corpus(paths: dict[str, Path], class_name: str, labels: list[str], rows: list[tuple[str, str]]) -> None:
    """The corpus in each format of ``paths`` (a column ``text`` and the class)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    write_arff(paths["arff"], class_name, labels, rows)
    number = all(label.isdigit() for label in labels)  # a Hugging Face export's class of whole numbers
    with open(paths["csv"], "w", encoding="utf-8", newline="") as table:
        # every text in double quotes: filterkit's CSV reader takes a value opening with ' as quoted, as Weka's
        writer = csv.writer(table, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC)
        writer.writerow(["text", class_name])
        writer.writerows((text, int(label) if number else label) for text, label in rows)
    with open(paths["jsonl"], "w", encoding="utf-8") as lines:
        for text, label in rows:
            lines.write(json.dumps({"text": text, class_name: int(label) if number else label}) + "\n")
    classes = [int(label) for _, label in rows] if number else [label for _, label in rows]
    pq.write_table(pa.table({"text": [text for text, _ in rows], class_name: classes}), paths["parquet"])


def corpus_paths(folder: Path, scale: int) -> dict[str, dict[str, Path]]:
    """Each corpus's file of each format."""
    stems = {f"Reuters grain ×{scale}": f"grain_x{scale}", "Debian short descriptions": "debian_descriptions"}
    return {corpus: {form: folder / f"{stem}.{form}" for form in FORMATS} for corpus, stem in stems.items()}


def make_inputs(folder: Path, scale: int) -> None:
    """Both corpora in the four formats."""
    paths = corpus_paths(folder, scale)
    write_corpus(paths[f"Reuters grain ×{scale}"], *reuters_rows(scale))
    write_corpus(paths["Debian short descriptions"], *debian_rows())


def check_identical(filterkit: str, paths: dict) -> None:
    """The four formats' outputs, byte for byte (the relation name and provenance lines aside)."""
    outputs = {}
    for form, path in paths.items():
        output = subprocess.run([filterkit, str(path), *WORDS], capture_output=True, check=True).stdout
        outputs[form] = [line for line in output.split(b"\n") if not line.startswith((b"@relation", b"%"))]
    for form, lines in outputs.items():
        if lines != outputs["arff"]:
            raise SystemExit(f"filterkit's output from {paths[form]} differs from the ARFF's")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=Path, default=HERE / ".inputs")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--scale", type=int, default=20)
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    parser.add_argument("--write-inputs", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.inputs.mkdir(parents=True, exist_ok=True)
    filterkit = shutil.which("filterkit") or str(Path(sys.executable).with_name("filterkit"))
    if args.write_inputs:
        make_inputs(args.inputs, args.scale)
        return
    # written by a process of its own, gone before the runs: a run forked from a process holding the corpora
    # would count their memory in its peak RSS, and a child left alive would hold up run.py's reaping
    subprocess.run([sys.executable, __file__, "--write-inputs", *sys.argv[1:]], check=True)
    corpora = corpus_paths(args.inputs, args.scale)
    jobs = []
    for corpus, paths in corpora.items():
        check_identical(filterkit, paths)
        for form, path in paths.items():
            command = [filterkit, str(path), *WORDS]
            jobs.append(((corpus, form, "filterkit"), f"filterkit {form} words", corpus, command, None))
            for peer in PEERS.get(form, ()):
                command = [sys.executable, "-c", PEER, peer, str(path), "text"]
                jobs.append(((corpus, form, peer), f"{peer} {form} + CountVectorizer", corpus, command, None))
    results = interleaved(jobs, args.repeats)
    report = format_report(corpora, results, args.repeats)
    replace_section(args.out, HEADING, report)
    print(report)


HEADING = "## Documents in ARFF, CSV, JSON Lines and Parquet (`documents.py`)"


def format_report(corpora: dict, results: dict, repeats: int) -> str:
    """The section of RESULTS.md: per corpus and format, filterkit's and the peers' seconds and the ratios."""
    lines = [
        HEADING,
        "",
        f"`python benchmarks/documents.py` on {time.strftime('%Y-%m-%d')} at commit {_commit()}, "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; medians of {repeats} interleaved rounds.  "
        "filterkit: `filterkit FILE words --counts --lowercase` to /dev/null, the four outputs of a corpus "
        "byte-identical; peers: the reader, then `CountVectorizer(lowercase=True)` with Weka's delimiters, "
        "writing nothing.  ÷ ARFF: filterkit's seconds over its seconds on the ARFF file; ÷ best peer: "
        "filterkit's seconds over the fastest peer's on the same file (below 1: filterkit is faster).",
        "",
        "| corpus | format | MB | tool | wall s | CPU s | peak RSS MiB | ÷ ARFF, wall / CPU "
        "| ÷ best peer, wall / CPU |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for corpus, paths in corpora.items():
        arff = results[(corpus, "arff", "filterkit")]
        for form, path in paths.items():
            ours = results[(corpus, form, "filterkit")]
            peers = [results[(corpus, form, peer)] for peer in PEERS.get(form, ())]
            best_wall = min((peer[0] for peer in peers), default=None)
            best_cpu = min((peer[4] for peer in peers), default=None)
            megabytes = f"{path.stat().st_size / 1e6:.1f}"
            versus_arff = f"{ours[0] / arff[0]:.2f} / {ours[4] / arff[4]:.2f}"
            versus_peer = "" if best_wall is None else f"{ours[0] / best_wall:.2f} / {ours[4] / best_cpu:.2f}"
            lines.append(
                f"| {corpus} | {form} | {megabytes} | filterkit | {ours[0]:.2f} | {ours[4]:.2f} | {ours[1]} "
                f"| {versus_arff} | {versus_peer} |"
            )
            for peer in PEERS.get(form, ()):
                found = results[(corpus, form, peer)]
                lines.append(
                    f"| {corpus} | {form} | {megabytes} | {peer} + CountVectorizer | {found[0]:.2f} | {found[4]:.2f} "
                    f"| {found[1]} | | |"
                )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
