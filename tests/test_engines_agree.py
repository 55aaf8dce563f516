"""One run path for both engines (issue 38): every chain of the determinism sweep gives the same
bytes with ``--engine dask`` as in this process, on inputs that carry the provenance lines of an
earlier run (the Dask engine once dropped them) and are cut into three partitions."""

from __future__ import annotations

import pytest
from test_determinism import DATA, OH0_MIN_ROWS, _fewer_words, _runs, _split, _weighted

from chain_helpers import REAL, needs_two_classes

pytestmark = pytest.mark.slow

#: The data sets of the determinism sweep run here: dense multi-class, nominal with fractional
#: weights, sparse word counts.
SETS = ("iris", "credit-g-weighted", "oh0")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Each data set of :data:`SETS` after an identity rewrite by filterkit: with its provenance line."""
    from filterkit.cli import run

    root = tmp_path_factory.mktemp("engines")
    made = {}
    for name in SETS:
        file, keep, _, _, weights = DATA[name]
        header, rows = _split((REAL / file).read_text(encoding="utf-8"))
        rows = rows[keep]
        if file == "oh0.wc.arff":
            header, rows = _fewer_words(header, rows, OH0_MIN_ROWS)
        plain = root / f"{name}.plain.arff"
        plain.write_text(header + "".join(_weighted(rows, weights)), encoding="utf-8")
        made[name] = root / f"{name}.arff"
        assert run(["-q", "-o", str(made[name]), str(plain)]) == 0
        assert made[name].read_text(encoding="utf-8").startswith("% filterkit chain: (identity)")
    return made


CASES = [(run_name, words, name) for run_name, words in _runs() for name in SETS]


@pytest.mark.parametrize("run_name, words, name", CASES, ids=[f"{r}-{n}" for r, _, n in CASES])
def test_dask_writes_the_local_run_s_bytes(run_filterkit, dask_scheduler, inputs, tmp_path, run_name, words, name):
    positive = DATA[name][3]
    options = ["--positive", positive] if positive and needs_two_classes(words) else []
    local_out, dask_out = tmp_path / "local.arff", tmp_path / "dask.arff"
    local = run_filterkit(*options, "-q", "-o", local_out, inputs[name], *words)
    dask = run_filterkit(
        "--engine", "dask", "--scheduler", dask_scheduler, "--partitions", "3",
        *options, "-q", "-o", dask_out, inputs[name], *words,
    )  # fmt: skip
    if "cannot run with --engine dask" in dask.stderr:
        assert dask.status == 1 and not dask_out.exists()
        pytest.skip(f"{run_name} depends on each row's position in the whole input: refused by Dask, as documented")
    assert (dask.status, dask.stderr) == (local.status, local.stderr)
    if local.status == 0:
        assert dask_out.read_bytes() == local_out.read_bytes()
        provenance = [line for line in local_out.read_text(encoding="utf-8").splitlines() if line.startswith("%")]
        assert len(provenance) == 2 and provenance[0].startswith("% filterkit chain: (identity) (filterkit ")
