"""``auto`` (issue 22, item 1): the per-feature policy stage.

A constructed data set whose features are informative in known ways (a middle band,
presence only, a monotone shift, a handful of rows, a constant) checks that each gets the
treatment it calls for; the cross-fitted criterion is recomputed independently with
scikit-learn's ``roc_auc_score`` fold by fold; the stage passes ``check_stage`` and its
model file round-trips with the treatment per feature in it.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import roc_auc_score

import filterkit.testing
from chain_helpers import REAL, without_comments
from filterkit.arff import read_arff
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.schema import NOMINAL, NUMERIC, Attribute, Chunk, Schema
from filterkit.sources import FileSource
from filterkit.testing import check_stage, read_output, run_filterkit
from filterkit_plugins.auto import BOTH, DROP, PRESENCE, RAW, TREATMENTS, auc_by_feature, inner_folds

FEATURES = ("band", "present", "shift", "thin", "constant", "noise")


@pytest.fixture(scope="module")
def auto_class():
    return load_plugins().stage("auto")


def policy_rows(n_rows: int = 400, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Rows whose features carry the class in known ways: ``band`` only by a middle band
    (positives in (0.4, 0.6)), ``present`` only by being non-zero (its sign random),
    ``shift`` monotonically (normal, mean 1 for positives), ``thin`` non-zero on 6 positive
    rows only, ``constant`` always 5, ``noise`` independent; returns (values, class)."""
    rng = np.random.default_rng(seed)
    positive = np.arange(n_rows) % 2 == 0
    outside = rng.uniform(0, 0.8, n_rows)
    band = np.where(positive, rng.uniform(0.4, 0.6, n_rows), np.where(outside < 0.4, outside, outside + 0.2))
    magnitude = rng.uniform(1, 2, n_rows) * rng.choice([-1.0, 1.0], n_rows)
    present = np.where(positive | (rng.random(n_rows) < 0.2), magnitude, 0.0)
    shift = rng.normal(positive * 1.0, 1.0).round(3)
    thin = np.zeros(n_rows)
    thin[np.flatnonzero(positive)[:6]] = rng.integers(1, 4, 6)
    values = np.column_stack(
        [band.round(4), present.round(4), shift, thin, np.full(n_rows, 5.0), rng.normal(size=n_rows)]
    )
    return values.round(4), np.where(positive, 0.0, 1.0)


def write_policy_file(path) -> None:
    values, label = policy_rows()
    lines = ["@relation policy"] + [f"@attribute {name} numeric" for name in FEATURES]
    lines += ["@attribute class {yes,no}", "@data"]
    lines += [",".join(f"{v:g}" for v in row) + ("," + ("yes" if c == 0 else "no")) for row, c in zip(values, label)]
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def policy_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("auto") / "policy.arff"
    write_policy_file(path)
    return path


def fitted(path, positive=None, **params):
    stage = load_plugins().make_stage("auto", params)
    chain = Chain([stage], class_spec="last", positive=positive)
    chain.fit(FileSource(str(path)))
    return chain.stages[0]


def treatments_of(stage) -> dict[str, str]:
    names = [stage.input_schema.attributes[i].name for i in stage.features]
    return {name: TREATMENTS[code] for name, code in zip(names, stage.treatment)}


def test_a_feature_of_one_score_has_an_auc_of_exactly_one_half():
    """The running sums over the features before it (here ten shares of 1/10) rounded it to 0.5 + 1e-16,
    above chance, which kept a constant feature from --drop."""
    feature, score = np.r_[np.zeros(10, dtype=np.int64), 1, 1], np.r_[np.arange(10) / 10, 2.0, 2.0]
    positives, negatives = np.ones(12), np.r_[np.ones(10), 1.0, 2.0]
    assert auc_by_feature(feature, score, positives, negatives, 2)[1] == 0.5


def test_auc_by_feature_matches_scikit_learn_with_weights_and_ties():
    rng = np.random.default_rng(0)
    feature = np.repeat([0, 1, 2], 40)
    score = rng.integers(0, 5, 120).astype(float)  # many ties
    positives = rng.integers(0, 3, 120).astype(float)
    negatives = rng.integers(0, 3, 120).astype(float)
    ours = auc_by_feature(feature, score, positives, negatives, 4)
    for f in range(3):
        rows = feature == f
        y = np.r_[np.ones(rows.sum()), np.zeros(rows.sum())]
        s = np.r_[score[rows], score[rows]]
        w = np.r_[positives[rows], negatives[rows]]
        assert ours[f] == pytest.approx(roc_auc_score(y, s, sample_weight=w), abs=1e-12)
    assert ours[3] == 0.5  # a feature without entries


def test_inner_folds_follow_row_content_not_position_chunk_or_form():
    values, label = policy_rows(200)
    matrix = np.column_stack([values, label])
    folds = inner_folds(Chunk(matrix), 5, 1)
    order = np.random.default_rng(1).permutation(len(matrix))
    assert np.array_equal(inner_folds(Chunk(matrix[order]), 5, 1), folds[order])
    assert np.array_equal(inner_folds(Chunk(sp.csr_matrix(matrix)), 5, 1), folds)
    assert np.array_equal(
        np.concatenate([inner_folds(Chunk(matrix[i : i + 7]), 5, 1) for i in range(0, 200, 7)]), folds
    )
    assert np.bincount(folds, minlength=5).min() >= 25  # 40 expected per fold
    assert not np.array_equal(inner_folds(Chunk(matrix), 5, 2), folds)  # the seed moves rows


def test_each_feature_gets_the_treatment_its_information_calls_for(policy_file):
    assert treatments_of(fitted(policy_file)) == {
        "band": "both",  # informative only as a middle band: shaped, its raw column kept (dense)
        "present": "presence",  # informative only by being non-zero
        "shift": "both",  # monotone: shaping is no worse than raw, so a dense feature gets a shaped copy
        "thin": "presence",  # 6 non-zero rows, below --min-support: the sparse default
        "constant": "drop",  # no information, ample support
        "noise": "both",  # its raw criterion is below chance (0.44), its shaped one not (0.51)
    }
    # shaped copies only where shaping gains: the monotone feature and the noise stay raw
    assert treatments_of(fitted(policy_file, shape_copy="gain")) == {
        "band": "both",
        "present": "presence",
        "shift": "raw",
        "thin": "presence",
        "constant": "drop",
        "noise": "raw",
    }
    # without the raw column there is no copy beside it: shaping replaces it only where it clears the gain
    without_raw = treatments_of(fitted(policy_file, keep_raw=False))
    assert (without_raw["band"], without_raw["shift"], without_raw["noise"]) == ("shape", "raw", "raw")
    assert treatments_of(fitted(policy_file, drop=False))["constant"] == "raw"


def test_the_criteria_are_the_held_out_aucs_recomputed_fold_by_fold(policy_file):
    values, label = policy_rows()
    matrix = np.column_stack([values, label])
    folds = inner_folds(Chunk(matrix), 3, 1)
    stage = fitted(policy_file, folds=3)
    y = label == stage.positive  # 200 rows each: the second label, 'no', is positive (KDD'09's tie rule)
    assert stage.positive == 1
    for j in (0, 1, 2):  # band, present, shift
        for name, transform in (("raw", lambda x: x), ("presence", lambda x: (x != 0).astype(float))):
            won = pairs = 0.0
            for k in range(3):
                train, test = folds != k, folds == k
                score = transform(values[:, j])
                direction = 1.0 if roc_auc_score(y[train], score[train]) >= 0.5 else -1.0
                weight = y[test].sum() * (~y[test]).sum()
                won += weight * roc_auc_score(y[test], direction * score[test])
                pairs += weight
            assert getattr(stage, f"criterion_{name}")[j] == pytest.approx(won / pairs, abs=1e-12), (name, j)
    assert stage.criterion_shape[0] > 0.9 > 0.6 > stage.criterion_raw[0]


def test_sparse_text_keeps_zeros_and_defaults_to_presence():
    stage = fitted(REAL / "oh0.wc.arff", positive="Ethics")
    assert stage.sparse.mean() > 0.99
    counted = np.bincount(stage.treatment, minlength=len(TREATMENTS))
    assert counted[PRESENCE] > 0.95 * len(stage.treatment)
    dense_columns = np.flatnonzero(stage.sparse == 0)
    assert np.all((stage.treatment[dense_columns] == DROP) | (stage.treatment[dense_columns] == RAW))
    ethic = [stage.input_schema.attributes[i].name for i in stage.features].index("ethic")
    assert stage.treatment[ethic] == PRESENCE and stage.criterion_presence[ethic] > 0.8


@pytest.mark.slow
@pytest.mark.parametrize(
    "options, positive",
    [
        ({}, "Ethics"),
        ({"min_support": 0, "min_gain": 0.0}, None),
        ({"keep_raw": False, "folds": 3}, None),
        ({"shape_copy": "unless-worse", "min_support": 0}, "Ethics"),  # shaped copies of sparse words
    ],
)
def test_auto_passes_check_stage(auto_class, policy_file, options, positive):
    accepted = check_stage(auto_class, data=(policy_file,), positive=positive, **options)
    assert accepted


@pytest.mark.slow
def test_auto_s_defaults_pass_check_stage_on_the_policy_rows(auto_class, policy_file, monkeypatch):
    """The contract sweep (``tests/test_contract.py``) checks auto's defaults, one of its declared option
    sets, on the shipped files; here the same check on the policy rows, without those files again (two
    thirds of this check's time)."""
    assert {} in auto_class.examples
    monkeypatch.setattr(filterkit.testing, "SHIPPED_DATA", ())
    accepted = check_stage(auto_class, data=(policy_file,))
    assert accepted == [f"{data} ({form})" for data in ("generated rows", policy_file) for form in ("dense", "sparse")]


def test_model_file_holds_each_treatment_and_round_trips(policy_file, tmp_path):
    model = tmp_path / "auto.json"
    fitted_run = run_filterkit("--save-model", str(model), str(policy_file), "auto", "l2")
    assert fitted_run.status == 0, fitted_run.stderr
    saved = json.loads(model.read_text())
    text = json.dumps(saved)
    assert '"treatment"' in text and '"criterion_shape"' in text
    applied = run_filterkit("apply", str(model), str(policy_file))
    assert applied.status == 0, applied.stderr
    assert without_comments(applied.stdout) == without_comments(fitted_run.stdout)
    schema, _ = read_output(fitted_run.stdout)
    names = [a.name for a in schema.attributes]
    assert names == ["band", "band@shape", "present", "shift", "shift@shape", "thin", "noise", "noise@shape", "class"]


def test_a_model_saved_with_copy_scores_still_loads_and_new_ones_leave_them_out(policy_file):
    stage = fitted(policy_file)
    state = stage.state()
    assert "copy_scores" not in state and (stage.treatment == BOTH).any()
    old = {**state, "copy_scores": np.full(len(stage.features), 0.25)}
    chain = Chain.rebuilt(load_plugins(), [("auto", stage.params, old)], stage.input_schema, "class", None)
    _, chunk = read_arff(policy_file)
    np.testing.assert_array_equal(chain.stages[0].transform(chunk).values, stage.transform(chunk).values)


def test_report_prints_the_treatments_on_stderr(policy_file):
    result = run_filterkit(str(policy_file), "auto", "--report")
    assert result.status == 0
    report = result.stderr
    assert "auto: 6 features: drop 1, presence 2, both 3" in report
    assert "band: both (cross-fitted AUC presence 0.500" in report


def test_verbose_chain_prints_what_each_stage_chose_and_the_same_rows(policy_file):
    quiet = run_filterkit(str(policy_file), "auto", "l2")
    verbose = run_filterkit("-v", str(policy_file), "auto", "l2")
    assert verbose.status == 0 and verbose.stdout == quiet.stdout and quiet.stderr == ""
    lines = verbose.stderr.splitlines()
    assert lines[0] == "filterkit: auto: 6 features: drop 1, presence 2, both 3"
    assert lines[1].startswith("filterkit: auto:   ") and len(lines) == 1 + 6  # every feature, up to ten
    assert any(line.startswith("filterkit: auto:   band: both (cross-fitted AUC presence 0.500") for line in lines)


def test_errors_are_clear_and_leave_no_output(tmp_path):
    out = tmp_path / "out.arff"
    result = run_filterkit("-o", str(out), "-c", "first", str(REAL / "iris.arff"), "auto")
    assert result.status == 1 and not out.exists()
    assert "filterkit: error: stage 'auto' needs a nominal class attribute (-c)" in result.stderr
    assert "Traceback" not in result.stderr
    result = run_filterkit(str(REAL / "iris.arff"), "auto", "--metric", "nosuch")
    # an option the stage refuses is a usage error, as click's own checks are
    assert result.status == 2 and "auto --metric 'nosuch': no such metric" in result.stderr


def test_nominal_attributes_pass_through(auto_class):
    schema = Schema(
        "mixed",
        (
            Attribute("x", NUMERIC, declared_type="numeric"),
            Attribute("colour", NOMINAL, labels=("red", "blue")),
            Attribute("class", NOMINAL, labels=("yes", "no")),
        ),
    )
    stage = auto_class()
    values = np.column_stack([np.arange(40.0), np.arange(40) % 2, np.arange(40) >= 20]).astype(float)
    chain = Chain([stage], class_spec="last")
    chain.fit_with(schema, lambda position, stage: stage.accumulate(stage.new_statistics(), Chunk(values)))
    fitted_stage = chain.stages[0]
    out = fitted_stage.transform(Chunk(values))
    names = [a.name for a in fitted_stage.output_schema().attributes]
    assert names == ["x", "x@shape", "colour", "class"]  # x separates perfectly, raw and shaped alike
    assert fitted_stage.output_schema().attributes[2] == schema.attributes[1]
    assert np.array_equal(out.values[:, 2], values[:, 1]) and np.array_equal(out.values[:, 3], values[:, 2])
    assert fitted_stage.treatment[0] == BOTH


@pytest.mark.slow
def test_a_sparse_file_stays_as_sparse():
    given = read_output((REAL / "oh0.wc.arff").read_bytes())[1].values
    result = run_filterkit("--positive", "Ethics", str(REAL / "oh0.wc.arff"), "auto", "--no-drop", "--report")
    assert result.status == 0, result.stderr
    # 'patient', in more than half of the abstracts, is dense: raw, offset by its minimum, which is 0
    assert "auto: 3182 features: presence 3180, raw 1, shape 1" in result.stderr
    schema, chunk = read_output(result.stdout)
    output = sp.csr_matrix(chunk.values)
    patient = schema.index_of("patient")
    assert output.nnz == given.nnz
    assert np.count_nonzero(output[:, patient].toarray()) == np.count_nonzero(given[:, patient].toarray()) == 527


@pytest.mark.slow
@pytest.mark.parametrize(
    "path, options",
    [(REAL / "oh0.wc.arff", ("--positive", "Ethics")), (REAL / "vehicle.arff", ("--positive", "van"))],
)
def test_dask_gives_the_bytes_of_one_process(path, options):
    pytest.importorskip("dask.distributed")
    local = run_filterkit(*options, str(path), "auto", "l2")
    assert local.status == 0, local.stderr
    on_dask = run_filterkit("--engine", "dask", "--partitions", "3", *options, str(path), "auto", "l2")
    assert on_dask.status == 0, on_dask.stderr
    assert on_dask.stdout == local.stdout


@pytest.mark.parametrize("weighted", [False, True])
def test_shuffled_rows_and_chunk_sizes_give_the_same_rows(tmp_path, weighted):
    lines = (REAL / "iris.arff").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().lower() == "@data")
    rows = [line for line in lines[at + 1 :] if line.strip() and not line.startswith("%")]
    if weighted:  # fractional instance weights: only exact sums make them order-free
        rows = [f"{row},{{{w}}}" for row, w in zip(rows, ["0.1", "0.3", "0.7", "1", "2.2", "0.05"] * 25)]
    order = np.random.default_rng(5).permutation(len(rows))
    given, shuffled = tmp_path / "given.arff", tmp_path / "shuffled.arff"
    given.write_text("\n".join(lines[: at + 1] + rows) + "\n")
    shuffled.write_text("\n".join(lines[: at + 1] + [rows[i] for i in order]) + "\n")
    outputs = []
    for path, chunking in ((given, []), (shuffled, []), (shuffled, ["--chunk-rows", "7"])):
        result = run_filterkit(*chunking, "--positive", "Iris-versicolor", str(path), "auto", "l2")
        assert result.status == 0, result.stderr
        outputs.append(sorted(line for line in without_comments(result.stdout).splitlines() if line[:1] != b"@"))
    assert outputs[0] == outputs[1] == outputs[2]
    # versicolor is the middle class: every feature gets a shaped copy beside its raw column
    assert result.stdout.count(b"@shape numeric") == 4
