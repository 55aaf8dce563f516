"""Every output file named ``*.gz`` is gzip-compressed, as docs/command-line.md says: with no file name and a zero
time in its header, so a run's bytes are the same each time, and holding exactly the bytes the plain name gets.
``-o`` of the chain, ``predict`` and ``explain`` did so; ``--save-model``, ``train -o``, ``update -o``, ``evaluate``'s
``--predictions``, ``--label-issues`` and ``--report`` and ``export``'s files were written plain under a ``.gz``
name.  A model file so written is read back by every command that reads a model (by gzip's magic, as inputs are)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

REAL = Path(__file__).parent / "data" / "real"
IRIS = REAL / "sonar.arff"  # two classes
LABEL_SETS = Path(__file__).parent / "data" / "multilabel" / "three-labels-synthetic.arff"

#: Each output, its argv with NAME where its file goes (IN: a copy of sonar; TEST: another; MODEL: a model of train).
OUTPUTS = {
    "--save-model": ["--save-model", "NAME", "-o", "OUT", "IN", "l2"],
    "--save-model --updatable": ["--save-model", "NAME", "--updatable", "-o", "OUT", "IN", "l2"],
    "train -o": ["train", "-q", "-o", "NAME", "IN", "l2"],
    "update -o": ["update", "-o", "NAME", "UPDATABLE", "TEST"],
    "evaluate --predictions": ["evaluate", "-q", "--test", "TEST", "--predictions", "NAME", "IN", "l2"],
    "evaluate --label-issues": ["evaluate", "-q", "--folds", "2", "--label-issues", "NAME", "IN", "l2"],
    "evaluate --report": ["evaluate", "-q", "--folds", "2", "--report", "NAME", "IN", "l2"],
    "export --c": ["export", "--c", "NAME", "MODEL"],
    "predict -o": ["predict", "-o", "NAME", "MODEL", "TEST"],
}


@pytest.fixture
def files(tmp_path, run_filterkit) -> dict[str, Path]:
    """The inputs the argv of :data:`OUTPUTS` name: sonar, a copy of it, a model of train, an updatable chain."""
    given = {"IN": tmp_path / "in.arff", "TEST": tmp_path / "test.arff", "OUT": tmp_path / "out.arff"}
    given["IN"].write_bytes(IRIS.read_bytes())
    given["TEST"].write_bytes(IRIS.read_bytes())
    given["MODEL"], given["UPDATABLE"] = tmp_path / "model.json", tmp_path / "updatable.json"
    assert run_filterkit("train", "-q", "-o", given["MODEL"], given["IN"], "l2").status == 0
    made = run_filterkit("--save-model", given["UPDATABLE"], "--updatable", "-o", given["OUT"], given["IN"], "l2")
    assert made.status == 0, made.stderr
    return given


def written(run_filterkit, files: dict[str, Path], output: str, name: Path) -> bytes:
    """The bytes ``output``'s argv writes to ``name``."""
    argv = [name if word == "NAME" else files.get(word, word) for word in OUTPUTS[output]]
    result = run_filterkit(*argv)
    assert result.status == 0, result.stderr
    return name.read_bytes()


@pytest.mark.parametrize("output", OUTPUTS)
def test_every_output_named_gz_is_gzip_of_the_plain_bytes_the_same_each_run(run_filterkit, tmp_path, files, output):
    plain = written(run_filterkit, files, output, tmp_path / "plain.out")
    compressed = written(run_filterkit, files, output, tmp_path / "out.gz")
    assert compressed[:2] == b"\x1f\x8b", compressed[:20]
    assert compressed[3] == 0 and compressed[4:8] == b"\0\0\0\0"  # no file name, a zero time
    assert gzip.decompress(compressed) == plain
    assert written(run_filterkit, files, output, tmp_path / "OUT.GZ") == compressed  # any case, any run


def test_a_gz_model_is_read_by_every_command_that_reads_a_model(run_filterkit, tmp_path, files):
    model, updatable = files["MODEL"], files["UPDATABLE"]
    for plain in (model, updatable):
        Path(f"{plain}.gz").write_bytes(gzip.compress(plain.read_bytes(), mtime=0))
    for argv in (
        ["predict", "MODEL", "TEST"],
        ["explain", "MODEL", "TEST"],
        ["apply", "UPDATABLE", "TEST"],
        ["export", "--c", "OUTFILE", "MODEL"],
        ["update", "-o", "OUTFILE", "UPDATABLE", "TEST"],
    ):
        runs = []
        for suffix in ("", ".gz"):
            out = tmp_path / f"out{suffix}.txt"
            words = [
                f"{files[word]}{suffix}" if word in ("MODEL", "UPDATABLE") else files.get(word, word) for word in argv
            ]
            words = [out if word == "OUTFILE" else word for word in words]
            result = run_filterkit(*words)
            assert result.status == 0, (argv, result.stderr)
            kept = [result.stdout, out.read_bytes() if out.exists() else b""]
            runs.append([text.replace(b".json.gz", b".json") for text in kept])  # the model named in provenance
        assert runs[0] == runs[1], argv


def test_a_damaged_gz_model_is_one_error_naming_it(run_filterkit, tmp_path, files):
    damaged = tmp_path / "damaged.json.gz"
    damaged.write_bytes(gzip.compress(files["MODEL"].read_bytes(), mtime=0)[:200])
    result = run_filterkit("predict", damaged, files["TEST"])
    assert (result.status, result.stdout) == (1, b"")
    assert result.stderr == (
        f"filterkit: error: {damaged}: not a filterkit model (damaged gzip data: Compressed file ended before the "
        "end-of-stream marker was reached)\n"
    )
