"""``train`` left out the rows of a missing class (or label set with a missing label) without a word, where
``evaluate`` says so (found by a hostile review of multi-label data); it now says it as ``evaluate`` does, even
under ``-q``, and the model is the same."""

from __future__ import annotations

import pytest

from filterkit.testing import run_filterkit

SINGLE = "@relation r\n@attribute x numeric\n@attribute c {a,b}\n@data\n" + "".join(
    f"{i},{'ab'[i % 2]}\n" for i in range(1, 21)
)
LABEL_SETS = "@relation 'toy: -C 2'\n@attribute L1 {0,1}\n@attribute L2 {0,1}\n@attribute x numeric\n@data\n" + "".join(
    f"{i % 2},{int(i % 3 == 0)},{i}\n" for i in range(1, 21)
)


@pytest.mark.parametrize("text, missing_row, what", [(SINGLE, "5,?\n", "class"), (LABEL_SETS, "?,1,99\n", "label")])
def test_train_says_how_many_rows_it_left_out(tmp_path, text, missing_row, what):
    whole, known = tmp_path / "whole.arff", tmp_path / "known.arff"
    whole.write_text(text + missing_row)
    known.write_text(text)
    models = []
    for path in (whole, known):
        model = tmp_path / f"{path.stem}.json"
        trained = run_filterkit("train", "-q", "--jobs", "1", "--folds", "2", "-o", model, path, "l2")
        assert trained.status == 0, trained.stderr
        models.append((model.read_bytes(), trained.stderr))
    note = f"filterkit: warning: 1 row(s) with a missing {what} are left out of the training"
    assert note in models[0][1] and "left out" not in models[1][1]
    assert models[0][0] == models[1][0]
