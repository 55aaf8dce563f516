"""``ordinal`` on whole numbers of 2**53 and more (docs/algorithms.md §6): every finite non-negative integer is
encoded, and the model written for such a threshold loads back, by ``filterkit apply`` and by pickle, and applies
with the same bytes.
"""

from __future__ import annotations

import pickle

import numpy as np

from chain_helpers import read_bytes, without_comments

LARGE_COUNTS = """@relation o
@attribute a numeric
@attribute c {x,y}
@data
1e20,x
3,y
0,x
5,y
9007199254740992,y
"""


def test_a_count_past_2_53_is_encoded_and_its_model_applies_with_the_same_bytes(run_filterkit, tmp_path):
    path, model = tmp_path / "ord.arff", tmp_path / "ord.json"
    path.write_text(LARGE_COUNTS)
    trained = run_filterkit("--save-model", model, path, "ordinal")
    assert trained.status == 0, trained.stderr
    names = [attribute.name for attribute in read_bytes(trained.stdout)[0].attributes]
    assert names == ["a>=3", "a>=5", "a>=9007199254740992", "a>=100000000000000000000", "c"]
    applied = run_filterkit("apply", model, path)
    assert applied.status == 0, applied.stderr
    assert without_comments(applied.stdout) == without_comments(trained.stdout)


def test_a_fitted_encoder_with_a_threshold_past_2_53_survives_pickling():
    from filterkit.sklearn import ThresholdEncoder

    counts = np.array([[1e20], [3.0], [0.0], [5.0]])
    encoder = ThresholdEncoder().fit(counts)
    restored = pickle.loads(pickle.dumps(encoder))
    assert list(restored.get_feature_names_out()) == ["x0>=3", "x0>=5", "x0>=100000000000000000000"]
    expected = [[1, 1, 1], [1, 0, 0], [0, 0, 0], [1, 1, 0]]
    np.testing.assert_array_equal(np.asarray(restored.transform(counts)), expected)
    np.testing.assert_array_equal(np.asarray(encoder.transform(counts)), expected)


def test_the_presence_threshold_is_the_smallest_value_of_weight_above_0(run_filterkit, tmp_path):
    """§6: with --max-thresholds, a value only rows of weight 0 hold is below every threshold, as an unseen one."""
    path = tmp_path / "q0.arff"
    path.write_text("@relation q\n@attribute a numeric\n@attribute c {x,y}\n@data\n1,x,{0}\n2,y\n3,x\n4,y\n5,x\n")
    result = run_filterkit(path, "ordinal", "--max-thresholds", "2")
    assert result.status == 0, result.stderr
    schema, chunk = read_bytes(result.stdout)
    assert [attribute.name for attribute in schema.attributes] == ["a>=2", "a>=4", "c"]
    assert chunk.dense_values()[:, :2].tolist() == [[0, 0], [1, 0], [1, 0], [1, 1], [1, 1]]
