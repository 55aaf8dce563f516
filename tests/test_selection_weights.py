"""``select`` on instance weights with ``--metric svm``, and ``--fraction``'s exact ⌈F·n⌉ (docs/algorithms.md §5).

The SVM is trained with each sampled row weighing its instance weight (a row of weight 0 is not sampled), as
``--metric ig`` counts rows by their weights; ``--fraction F`` keeps ⌈F·n⌉ for the decimal F as written, where
the float product 0.28·25 = 7.000000000000001 had kept 8 of 25.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_saved_state import tamper_arrays

from chain_helpers import read_bytes, without_comments
from filterkit.model import model_arrays

# b is tied to p only in the rows of weight 0; a in the rows that count
WEIGHTED = """@relation s
@attribute a numeric
@attribute b numeric
@attribute cls {n,p}
@data
1,0,p
1,0,p
0,0,n
0,0,n
0,1,p,{0}
0,1,p,{0}
0,1,p,{0}
0,1,p,{0}
0,1,p,{0}
0,1,p,{0}
"""
WITHOUT_THE_ZERO_WEIGHT_ROWS = "".join(line for line in WEIGHTED.splitlines(keepends=True) if "{0}" not in line)


def kept_names(arff: bytes) -> list[str]:
    """The attribute names of an ARFF output, in order."""
    return [attribute.name for attribute in read_bytes(arff)[0].attributes]


def svm_scores(run_filterkit, tmp_path, text: str, *options) -> tuple[np.ndarray, bytes]:
    """The scores ``select --metric svm --top 1`` recorded on ``text``, and its output."""
    path, model = tmp_path / "data.arff", tmp_path / "m.json"
    path.write_text(text)
    result = run_filterkit(
        "--positive", "p", "--save-model", model, *options, path, "select", "--metric", "svm", "--top", 1
    )
    assert result.status == 0, result.stderr
    return model_arrays(model)["0.scores"], result.stdout


def test_svm_keeps_the_feature_of_the_rows_that_weigh(run_filterkit, tmp_path):
    _, output = svm_scores(run_filterkit, tmp_path, WEIGHTED)
    assert kept_names(output) == ["a", "cls"]


@pytest.mark.parametrize("chunk_rows", ["1", "3", "7"])
def test_svm_rows_of_weight_zero_count_as_if_absent_whatever_the_chunk_size(run_filterkit, tmp_path, chunk_rows):
    expected, _ = svm_scores(run_filterkit, tmp_path, WITHOUT_THE_ZERO_WEIGHT_ROWS)
    _, whole_output = svm_scores(run_filterkit, tmp_path, WEIGHTED)
    scores, output = svm_scores(run_filterkit, tmp_path, WEIGHTED, "--chunk-rows", chunk_rows)
    np.testing.assert_array_equal(scores, expected)
    assert without_comments(output) == without_comments(whole_output)


def test_svm_weights_each_sampled_row_by_its_instance_weight(run_filterkit, tmp_path):
    from sklearn.svm import LinearSVC

    generator = np.random.default_rng(7)
    values = generator.integers(0, 3, (120, 6)).astype(float)
    positive = (values[:, 1] + generator.random(120) > 2).astype(int)
    weights = np.where(values[:, 4] > 0, 4.0, 0.25)
    lines = ["@relation w"] + [f"@attribute f{j} numeric" for j in range(6)] + ["@attribute cls {n,p}", "@data"]
    lines += [
        ",".join(str(int(v)) for v in row) + f",{'np'[label]},{{{weight}}}"
        for row, label, weight in zip(values, positive, weights)
    ]
    scores, _ = svm_scores(run_filterkit, tmp_path, "\n".join(lines) + "\n", "--chunk-rows", "17")
    expected = LinearSVC(C=1.0, dual=True, random_state=0, max_iter=10000).fit(values, positive, sample_weight=weights)
    unweighted = LinearSVC(C=1.0, dual=True, random_state=0, max_iter=10000).fit(values, positive)
    np.testing.assert_allclose(scores, np.abs(expected.coef_.ravel()), rtol=1e-6, atol=1e-9)
    assert not np.allclose(scores, np.abs(unweighted.coef_.ravel()), rtol=1e-3)


def twenty_five_features(tmp_path):
    """25 numeric features, feature j present in the positive rows less often as j grows."""
    lines = ["@relation f25"] + [f"@attribute f{j:02d} numeric" for j in range(25)] + ["@attribute cls {n,p}", "@data"]
    for i in range(50):
        positive = i % 2 == 0
        present = [(positive and i % (j + 2) != 1) or (not positive and i % (27 - j) == 0) for j in range(25)]
        lines.append(",".join(str(int(p)) for p in present) + (",p" if positive else ",n"))
    path = tmp_path / "f25.arff"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("fraction, kept", [("0.28", 7), ("0.56", 14), ("0.281", 8)])
def test_fraction_keeps_the_exact_ceiling_of_the_decimal_times_n(run_filterkit, tmp_path, fraction, kept):
    result = run_filterkit(twenty_five_features(tmp_path), "select", "--metric", "ig", "--fraction", fraction)
    assert result.status == 0, result.stderr
    assert len(kept_names(result.stdout)) == kept + 1  # and the class


def test_a_model_that_kept_the_float_ceiling_still_applies_and_another_count_is_refused(run_filterkit, tmp_path):
    """A model saved before the exact ceiling kept ⌈0.28·25⌉ = 8 in floats: it still applies as saved."""
    path = twenty_five_features(tmp_path)

    def saved(model, *rule):
        result = run_filterkit("--save-model", model, path, "select", "--metric", "ig", *rule)
        assert result.status == 0, result.stderr
        return model_arrays(model)["0.kept"], result.stdout

    top_eight, top_eight_output = saved(tmp_path / "top8.json", "--top", 8)
    top_six, _ = saved(tmp_path / "top6.json", "--top", 6)
    model = tmp_path / "fraction.json"
    saved(model, "--fraction", 0.28)
    tamper_arrays(model, lambda arrays: arrays.update({"0.kept": top_eight}))
    applied = run_filterkit("apply", model, path)
    assert applied.status == 0, applied.stderr
    assert without_comments(applied.stdout) == without_comments(top_eight_output)
    tamper_arrays(model, lambda arrays: arrays.update({"0.kept": top_six}))
    refused = run_filterkit("apply", model, path)
    assert refused.status == 1 and "the kept features are not the ones --fraction keeps by the scores" in refused.stderr
