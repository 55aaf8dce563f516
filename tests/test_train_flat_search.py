"""``train --search flat`` (issue 75): the candidates and the SVM's C scored by one cross-validation over the
outer folds ``train`` cuts today, with no inner one; the kept chain fitted at its one C."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import f1_score, roc_auc_score
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import LinearSVC
from test_train_progress import CHAINS, DOCUMENTS, RENAMING

from chain_helpers import REAL
from filterkit import evaluation
from filterkit.formats import FormatOptions
from filterkit.plugins import load_plugins
from filterkit.progress import Progress

OH0 = REAL / "oh0.wc.arff"
GRAIN_SAMPLE = REAL / "reuters_grain_sample.arff"
LABEL_SET = Path(__file__).parent / "data" / "multilabel" / "reuters-grain-corn.arff"
GRID = (0.1, 1.0, 10.0)
FAST = ("--svm-c-values", "0.1,1,10")  # the flat search has no inner folds (--svm-inner-folds is refused)
NESTED_FAST = (*FAST, "--svm-inner-folds", "3")


def flat_model(run_filterkit, tmp_path: Path, data: Path, task: tuple, chains: tuple, *options) -> dict:
    model = tmp_path / "flat.json"
    result = run_filterkit(
        "train", "-q", "-o", model, *FAST, *options, "--search", "flat", *task, *chains_of(data, chains)
    )
    assert result.status == 0, result.stderr
    return json.loads(model.read_text())


def chains_of(data: Path, chains: tuple) -> list:
    """train's arguments after the options: the data, then one chain's stages or several chains to compare."""
    return [data, *chains[0].split()] if len(chains) == 1 else ["--compare", data, *chains]


def platt_probabilities(decisions: np.ndarray, positives: np.ndarray) -> np.ndarray:
    """Platt's probability of each of ``decisions``, the sigmoid fitted on them (the svm's own fit of it)."""
    from plugins.classifiers import platt_sigmoid

    a, b = platt_sigmoid(decisions, positives)
    return 1.0 / (1.0 + np.exp(a * decisions + b))


def recomputed(data: Path, chain_text: str, positive: str | None, by_f1: bool = True) -> dict:
    """A candidate's record recomputed apart from train: scikit-learn's stratified folds (seed 1) and a
    LinearSVC per class at each C of :data:`GRID` from the smallest, stopping at the first whose out-of-fold F1
    (Platt's probability ≥ 0.5; k classes: the largest probability, macro-F1), or without ``by_f1`` whose mean
    AUC over the folds, is not above the best so far; the score the mean over folds of the (macro one-vs-rest)
    AUC at the C of the best."""
    registry = load_plugins()
    with evaluation.opened_input(str(data), None, "<data>", None, FormatOptions("last")) as (opened, name):
        dataset, _ = evaluation.read_dataset(opened, name, None, "", evaluation.Settings(), Progress())
    codes = dataset.data.column(dataset.class_index).astype(np.int64)
    chain = registry.parse_chain(chain_text)
    classes = list(np.unique(codes)) if positive is None else [dataset.labels.index(positive)]
    folds = list(StratifiedKFold(5, shuffle=True, random_state=1).split(np.zeros(len(codes)), codes))
    matrices = []
    for train, test in folds:
        _, prepared, _ = evaluation.fitted_chain(registry, dataset, chain, np.sort(train), positive)
        matrices.append((prepared(np.sort(train))[0], prepared(test)[0]))
    by_c: dict[float, tuple[float, float]] = {}
    held_out: dict[float, np.ndarray] = {}
    for C in GRID:
        decisions = np.zeros((len(codes), len(classes)))
        for (train, test), (train_features, test_features) in zip(folds, matrices):
            for column, k in enumerate(classes):
                svm = LinearSVC(C=C, dual="auto", max_iter=20000, random_state=1)
                svm.fit(train_features, (codes[np.sort(train)] == k).astype(int))
                decisions[test, column] = svm.decision_function(test_features)
        probabilities = np.column_stack(
            [platt_probabilities(decisions[:, j], codes == k) for j, k in enumerate(classes)]
        )
        if positive is None:
            decided = np.asarray(classes)[np.argmax(probabilities, axis=1)]
            f1 = f1_score(codes, decided, average="macro")
        else:
            f1 = f1_score(codes == classes[0], probabilities[:, 0] >= 0.5)
        aucs = [
            np.mean([roc_auc_score(codes[test] == k, decisions[test, j]) for j, k in enumerate(classes)])
            for _, test in folds
        ]
        by_c[C] = (float(f1), float(np.mean(aucs)))
        picked_by = 0 if by_f1 else 1
        if len(by_c) > 1 and not by_c[C][picked_by] > max(v[picked_by] for c, v in by_c.items() if c != C):
            break
        held_out[C] = decisions
    chosen = max(by_c, key=lambda C: (by_c[C][picked_by], -C))
    return {
        "f1": by_c[chosen][0],
        "score": by_c[chosen][1],
        "C": chosen,
        "decisions": held_out[chosen],
        "codes": codes,
        "classes": classes,
    }


@pytest.mark.parametrize(
    "task, chains, positive, by",
    [
        (("--positive", "Ethics"), ("binarize l2", "bns l2"), "Ethics", "f1"),
        (("--multiclass",), ("binarize l2", "l2"), None, "f1"),
        (("--positive", "Ethics"), ("l2", "shape bns l2"), "Ethics", "auc"),
    ],
    ids=["binary", "multiclass", "binary-c-by-auc"],
)
def test_flat_candidate_records_are_a_recomputation_with_scikit_learn(
    run_filterkit, tmp_path, task, chains, positive, by
):
    section = flat_model(run_filterkit, tmp_path, OH0, task, chains, "--svm-c-by", by)["classifier"]
    assert section["search"] == "flat" and section["search_c_values"] == "0.1,1,10"
    measure = "auc" if positive else "macro_auc"
    for candidate, chain in zip(section["candidates"], chains):
        expected = recomputed(OH0, chain, positive, by == "f1")
        assert (candidate["chain"], candidate["measure"], candidate["C"]) == (chain, measure, expected["C"])
        assert candidate["score"] == pytest.approx(expected["score"], abs=1e-9)
        assert candidate["f1"] == pytest.approx(expected["f1"], abs=1e-9)
    best = max(range(len(chains)), key=lambda k: (section["candidates"][k]["score"], -k))
    assert section["chain"] == chains[best]


def saved_array(state: dict, key: str) -> np.ndarray:
    """One array of a model's saved state."""
    array = state[key]["array"]
    return np.frombuffer(base64.b64decode(array["base64"]), dtype=array["dtype"]).reshape(array["shape"])


@pytest.mark.parametrize(
    "data, task, chains",
    [
        (OH0, ("--positive", "Ethics"), ("binarize l2", "bns l2")),
        (OH0, ("--multiclass",), ("binarize l2", "l2")),
        (GRAIN_SAMPLE, ("--positive", "1"), ()),
    ],
    ids=["binary", "multiclass", "default-candidates"],
)
def test_the_kept_chain_is_fitted_at_its_one_c_and_calibrated_on_the_search_s_own_out_of_fold_values(
    run_filterkit, tmp_path, data, task, chains
):
    """The kept chain's SVM is the one ``train`` fits at that C alone (the same weights), but its sigmoids are
    Platt's fitted on the flat search's out-of-fold values at that C (each fold's chain and SVM fitted on the
    fold's training rows, recomputed here with scikit-learn), not on a second, inner cross-validation."""
    flat = flat_model(run_filterkit, tmp_path, data, task, chains) if chains else None
    if flat is None:
        model = tmp_path / "flat.json"
        result = run_filterkit("train", "-q", "-o", model, *FAST, "--search", "flat", *task, data)
        assert result.status == 0, result.stderr
        flat = json.loads(model.read_text())
        every_word = "words --counts --lowercase --words-to-keep 1000000"
        assert [c["chain"] for c in flat["classifier"]["candidates"]] == [
            "words --counts --lowercase --stopwords weka shape bns l2",
            f"{every_word} --tokenizer alphabetic bns --multiply l2",
            f"{every_word} --log-tf --tokenizer alphabetic idf --presence --multiply --smooth l2",
            f"{every_word} --log-tf --tokenizer alphabetic --ngrams 1-2 idf --presence --multiply --smooth l2",
        ]
    section = flat["classifier"]
    kept = next(c for c in section["candidates"] if c["chain"] == section["chain"])
    one_c = tmp_path / "one-c.json"
    typed = f"{kept['C']:g}"
    result = run_filterkit(
        "train",
        "-q",
        "-o",
        one_c,
        "--svm-inner-folds",
        "3",
        "--svm-c-values",
        typed,
        *task,
        data,
        *section["chain"].split(),
    )
    assert result.status == 0, result.stderr
    nested = json.loads(one_c.read_text())["classifier"]
    fitted = section["fitted"]
    assert section["params"]["c_values"] == typed and fitted["C"] == kept["C"]
    binary = "--positive" in task
    assert fitted["inner_folds"] == 5 and nested["fitted"]["inner_folds"] == 3
    assert fitted["inner_f1" if binary else "inner_macro_f1"] == {str(kept["C"]): kept["f1"]}
    assert fitted["inner_auc" if binary else "inner_macro_auc"] == {str(kept["C"]): kept["score"]}
    for key in ("weights", "intercepts"):
        assert np.array_equal(saved_array(section["state"], key), saved_array(nested["state"], key))
    from plugins.classifiers import platt_sigmoid

    expected = recomputed(data, section["chain"], task[1] if binary else None)
    assert expected["C"] == kept["C"]
    sigmoids = np.array(
        [platt_sigmoid(expected["decisions"][:, j], expected["codes"] == k) for j, k in enumerate(expected["classes"])]
    )
    assert saved_array(section["state"], "sigmoids") == pytest.approx(sigmoids, rel=1e-6)
    assert not np.allclose(saved_array(nested["state"], "sigmoids"), sigmoids, rtol=1e-6)


def test_a_single_chain_is_searched_for_its_c_and_any_jobs_give_the_same_model(run_filterkit, tmp_path):
    written = []
    for jobs in ("1", "2"):
        model = tmp_path / f"model-{jobs}.json"
        options = ("-q", "-o", model, *FAST, "--jobs", jobs, "--search", "flat", "--multiclass", OH0, "l2")
        result = run_filterkit("train", *options)
        assert result.status == 0, result.stderr
        written.append(model.read_bytes())
    assert written[0] == written[1]
    (candidate,) = json.loads(written[0])["classifier"]["candidates"]
    assert candidate["C"] == recomputed(OH0, "l2", None)["C"]


def test_several_candidates_give_one_model_for_any_jobs(run_filterkit, tmp_path):
    """In the pool the candidates after the first have their folds fitted at once, each fold kept in a file, and the
    svm's classes are cut into one call each after a candidate's first C: the model one process writes."""
    written = []
    for jobs in ("1", "2", "3"):
        model = tmp_path / f"model-{jobs}.json"
        chains = ("--compare", OH0, "binarize l2", "l2")
        result = run_filterkit(
            "train", "-q", "-o", model, *FAST, "--jobs", jobs, "--search", "flat", "--multiclass", *chains
        )
        assert result.status == 0, result.stderr
        written.append(model.read_bytes())
    assert written[0] == written[1] == written[2]
    assert [candidate["C"] for candidate in json.loads(written[0])["classifier"]["candidates"]] == [
        recomputed(OH0, chain, None)["C"] for chain in ("binarize l2", "l2")
    ]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_later_candidate_s_failing_folds_wait_for_an_earlier_candidate_s_error(
    run_filterkit, tmp_path, jobs, recwarn
):
    """The first candidate's C is refused (fbr on k classes) and the second's folds fail (word counts hold no text):
    the run says the first error in one process's order, and only it (not joblib's warning of unused results)."""
    model = tmp_path / "m.json"
    options = ("--search", "flat", "--multiclass", "--svm-threshold", "fbr", "--jobs", jobs)
    result = run_filterkit("train", "-q", "-o", model, *options, "--compare", OH0, "l2", "words l2")
    assert result.status == 1
    (line,) = result.stderr.splitlines()
    assert "--svm-threshold fbr falls back to predicting a class for no row" in line
    assert not model.exists()
    assert [str(warning.message) for warning in recwarn] == []


@pytest.mark.parametrize(
    "task, chains, meant",
    [
        (("--positive", "Ethics"), ("binarize l2", "bns l2"), "nested"),
        (("--multiclass",), ("binarize l2", "l2"), "flat"),
        (("--multiclass",), ("l2",), "nested"),
    ],
    ids=["two-classes", "k-classes", "one-chain"],
)
def test_the_default_search_is_flat_for_several_candidates_on_k_classes_and_nested_otherwise(
    run_filterkit, tmp_path, task, chains, meant
):
    written = {}
    for search in ("auto", "nested", "flat"):
        model = tmp_path / f"{search}.json"
        named = () if search == "auto" else ("--search", search)
        fast = NESTED_FAST if (meant if search == "auto" else search) == "nested" else FAST
        result = run_filterkit("train", "-q", "-o", model, *fast, *named, *task, *chains_of(OH0, chains))
        assert result.status == 0, result.stderr
        written[search] = model.read_bytes()
    assert written["auto"] == written[meant]
    assert written["nested"] != written["flat"]
    section = json.loads(written["auto"])["classifier"]
    assert section.get("search") == ("flat" if meant == "flat" else None)
    assert section["params"]["c_values"] in (("0.1,1,10",) if meant == "nested" else ("0.1", "1", "10"))


@pytest.mark.parametrize(
    "arguments, message",
    [
        (
            (LABEL_SET, "words", "l2"),
            "--search flat is made for a class's task (binary or --multiclass), not for labels",
        ),
        (("--classifier", "aisvm", "--positive", "1", GRAIN_SAMPLE), "--search flat picks the svm's C"),
    ],
    ids=["labels", "aisvm"],
)
def test_flat_search_refuses_what_it_cannot_search_in_one_line(run_filterkit, tmp_path, arguments, message):
    model = tmp_path / "model.json"
    result = run_filterkit("train", "-q", "-o", model, "--search", "flat", *arguments)
    assert result.status != 0
    (line,) = result.stderr.splitlines()
    assert message in line
    assert not model.exists()


@pytest.mark.parametrize("search", [("--search", "flat"), ()], ids=["flat", "auto-on-k-classes"])
def test_inner_folds_given_to_the_flat_search_are_refused(run_filterkit, tmp_path, search):
    """The flat search has no inner folds: --svm-inner-folds changed nothing, and the model recorded it as given."""
    model = tmp_path / "model.json"
    chains = ("--multiclass", "--compare", OH0, "binarize l2", "l2")
    result = run_filterkit("train", "-q", "-o", model, *NESTED_FAST, *search, *chains)
    assert result.status == 1 and not model.exists()
    assert "--svm-inner-folds 3: the flat search" in result.stderr and "give --search nested" in result.stderr


def test_flat_search_counts_a_step_per_candidate_and_fold_and_warns_each_candidate_once(run_filterkit, tmp_path):
    documents = tmp_path / "docs.arff"
    rows = "".join(f"'{text}',{k},{label}\n" for k, (text, label) in enumerate(DOCUMENTS))
    documents.write_text(
        f"@relation docs\n@attribute text string\n@attribute n numeric\n@attribute class {{yes,no}}\n@data\n{rows}"
    )
    options = ("--progress", "--search", "flat", "--folds", "2", "--compare", documents, *CHAINS)
    result = run_filterkit("train", "-o", tmp_path / "m.json", *options)
    assert result.status == 0, result.stderr
    lines = result.stderr.splitlines()
    scoring = "filterkit: step 2/2: scoring 2 candidate chains and the svm's C by one 2-fold cross-validation"
    assert f"{scoring}: 0/4 fits (0%)" in lines
    assert any(line.startswith(f"{scoring}: 4 fits in ") for line in lines)
    assert [line for line in lines if "warning" in line] == [
        f"filterkit: warning: candidate 1 of 2 'words l2', fold 1: {RENAMING}",
        f"filterkit: warning: candidate 2 of 2 'words bns l2', fold 1: {RENAMING}",
        f"filterkit: warning: {RENAMING}",
    ]


@pytest.mark.parametrize("jobs", ["1", "3"])  # three processes, three classes: the columns are cut into parts
@pytest.mark.parametrize("rule", ["fbr", "precision@recall=0.9"])
def test_a_cut_of_one_column_alone_on_several_classes_is_refused_at_the_first_c(run_filterkit, tmp_path, rule, jobs):
    """The first C's calls hold two classes or more whatever --jobs, so the svm refuses there (the first candidate's
    folds are fitted before it), before any other C and the final fit."""
    model = tmp_path / "m.json"
    argv = ("train", "--progress", "--search", "flat", "--multiclass", "--svm-threshold", rule, "-o", model)
    argv += ("--jobs", jobs)
    result = run_filterkit(*argv, REAL / "iris.arff")
    assert result.status == 1 and "--multiclass" in result.stderr.splitlines()[-1]
    assert "on all 150 rows" not in result.stderr
    assert not model.exists()


def test_the_search_s_out_of_fold_values_serve_one_fit_and_must_fit_its_rows():
    """``take_out_of_fold`` is for the next fit alone: a second fit of the same classifier runs its own inner
    cross-validation; values of another shape than the fit's rows and columns are refused."""
    from filterkit.errors import FilterkitError

    generator = np.random.default_rng(5)
    features = generator.normal(size=(40, 3))
    targets = (features[:, 0] + 0.5 * generator.normal(size=40) > 0).astype(np.int64)
    svm = load_plugins().classifier("svm")(c_values="1", inner_folds=3, c_by="f1")
    held_out = generator.normal(size=(40, 1))
    svm.take_out_of_fold(held_out, 5, 0.9, 0.8)
    svm.fit(features, targets, 1)
    assert (svm.inner_folds, svm.inner_auc, svm.inner_f1) == (5, {1.0: 0.9}, {1.0: 0.8})
    svm.fit(features[:30], targets[:30], 1)
    assert svm.inner_folds == 3 and svm.inner_auc[1.0] != 0.9
    svm.take_out_of_fold(held_out, 5, 0.9, 0.8)
    with pytest.raises(FilterkitError, match=r"shape \(40, 1\) at 1 C values, for a fit of 30 rows"):
        svm.fit(features[:30], targets[:30], 1)


def test_the_flat_search_scores_a_c_by_stopped_fits_and_keeps_converged_values_at_the_chosen_one():
    """As the nested search's inner fits (tests/test_classifiers_search.py), an early flat search of several C
    stops liblinear at 1,000 iterations; the chosen C's folds are fitted again to convergence, and those values
    score the candidate and calibrate the model."""
    from test_classifiers_search import conflicting_rows, out_of_fold_values

    from filterkit import flat_search
    from filterkit.evaluation import CheckedClassifier

    features, targets = conflicting_rows()
    cuts = list(StratifiedKFold(2, shuffle=True, random_state=1).split(np.zeros(len(targets)), targets))
    held = [(features[train], targets[train], features[test]) for train, test in cuts]
    registry = load_plugins()
    params = {"c_values": "10,100", "c_search": "early", "c_by": "auc"}
    svm = CheckedClassifier(registry, "svm", params)
    with flat_search.FoldRunner(registry, None, (1, "local", None, None), (None, None, None)) as runner:
        searched = ("svm", params, 1)
        chosen, decisions, f1, stopped = flat_search._flat_c_search(runner, svm, searched, held, cuts, targets, [1])
    converged, _ = out_of_fold_values(features, targets, 100, 20_000)
    at_most_1000, _ = out_of_fold_values(features, targets, 100, 1_000)
    assert (chosen, stopped) == (100.0, [100.0])
    assert np.array_equal(decisions[:, 0], converged) and not np.allclose(converged, at_most_1000)
    assert f1 == svm("out_of_fold_f1", converged[:, None], targets, [1])


def test_only_the_fits_liblinear_stopped_are_made_again_and_every_value_is_the_converged_one(monkeypatch):
    """k classes, one of them separable: at the chosen C its fits converge within 1,000 iterations and are kept,
    the conflicting classes' fits are made again to convergence; every column equals a converged fit's."""
    import warnings

    from sklearn.svm import LinearSVC

    from filterkit import flat_search
    from filterkit.evaluation import CheckedClassifier

    features, classes, cuts, held = _three_classes_one_separable()
    registry = load_plugins()
    params = {"c_values": "50,100", "c_search": "early", "c_by": "auc"}
    made = []
    fit = LinearSVC.fit
    monkeypatch.setattr(LinearSVC, "fit", lambda model, *data: made.append(model.max_iter) or fit(model, *data))
    with flat_search.FoldRunner(registry, None, (1, "local", None, None), (None, None, None)) as runner:
        searched, svm = ("svm", params, 1), CheckedClassifier(registry, "svm", params)
        chosen, decisions, _, stopped = flat_search._flat_c_search(
            runner, svm, searched, held, cuts, classes, [0, 1, 2]
        )
    converged, stopped_there = np.zeros_like(decisions), 0
    for train, test in cuts:
        for k in range(3):
            positives = (classes[train] == k).astype(np.int64)
            model = fit(LinearSVC(C=chosen, dual="auto", random_state=1, max_iter=20_000), features[train], positives)
            converged[test, k] = model.decision_function(features[test])
            with warnings.catch_warnings():  # liblinear's, of a fit stopped at 1,000 on purpose
                warnings.simplefilter("ignore")
                at_most_1000 = LinearSVC(C=chosen, dual="auto", random_state=1, max_iter=1_000)
                stopped_there += int(fit(at_most_1000, features[train], positives).n_iter_ >= 1_000)
    assert chosen in stopped and 0 < stopped_there < 2 * 3  # some fits at the chosen C stopped, not all
    assert made.count(20_000) == stopped_there
    assert np.array_equal(decisions, converged)


def test_the_pool_cuts_a_fold_s_classes_into_calls_and_finds_what_one_process_finds():
    """Two processes: the first C's calls hold every class of a fold (the k-class refusal's turn), the next C's and
    the chosen C's refits one class each; C, values, F1 and the C scored by stopped fits are one process's."""
    from filterkit import flat_search
    from filterkit.evaluation import CheckedClassifier

    features, classes, cuts, held = _three_classes_one_separable()
    registry = load_plugins()
    params = {"c_values": "50,100", "c_search": "early", "c_by": "auc"}
    found, sent = {}, {}
    for jobs in (1, 2):
        with flat_search.FoldRunner(registry, None, (jobs, "local", None, None), (None, None, None)) as runner:
            results, sent[jobs] = runner.results, []
            runner.results = lambda function, calls: (
                sent[jobs].append([len(c[3]) for c in calls]) or results(function, calls)
            )
            searched, svm = ("svm", params, 1), CheckedClassifier(registry, "svm", params)
            found[jobs] = flat_search._flat_c_search(runner, svm, searched, held, cuts, classes, [0, 1, 2])
    (chosen, decisions, f1, stopped), (chosen_2, decisions_2, f1_2, stopped_2) = found[1], found[2]
    assert (chosen, f1, stopped) == (chosen_2, f1_2, stopped_2) and np.array_equal(decisions, decisions_2)
    assert sent[1][:2] == [[3, 3], [3, 3]] and all(len(step) == 2 for step in sent[1])  # a call a fold
    assert sent[2][0] == [3, 3] and len(sent[2]) == len(sent[1]) > 2  # the refits of the C chosen: a third step
    assert all(columns == 1 for step in sent[2][1:] for columns in step)
    assert len(sent[2][1]) == 6 and len(sent[2][2]) == sum(sent[1][2])


def _three_classes_one_separable() -> tuple:
    """Two conflicting classes (liblinear stops some of their fits at 1,000 iterations at C = 100) and a third of its
    own word: (features, classes, two stratified folds of seed 1, each fold's training features and classes and
    test features)."""
    import scipy.sparse as sp
    from test_classifiers_search import conflicting_rows

    conflicting, targets = conflicting_rows()
    width = conflicting.shape[1]
    own = sp.csr_matrix((np.ones(60), (np.arange(60), np.full(60, width - 1))), shape=(60, width))
    features = sp.vstack([conflicting, own]).tocsr()
    classes = np.concatenate([targets, np.full(60, 2)])
    cuts = list(StratifiedKFold(2, shuffle=True, random_state=1).split(np.zeros(len(classes)), classes))
    return features, classes, cuts, [(features[train], classes[train], features[test]) for train, test in cuts]


def test_the_pool_is_sent_every_candidate_s_folds_at_once_and_gives_one_process_s_model(monkeypatch, tmp_path):
    """Two processes: one call of the pool holds every candidate's folds in the candidates' order (a candidate's C
    search queued behind the folds still to fit, so no worker waits for a group's slowest fold), and the model is
    the one one process writes."""
    from filterkit.evaluation import Settings
    from filterkit.flat_search import FoldRunner, kept_fold
    from filterkit.training import train

    monkeypatch.setattr(evaluation, "LEND_FROM_ROWS", 0)
    registry = load_plugins()
    settings = Settings(multiclass=True, classifier_params={"c_values": "0.1,1"})
    texts = ("binarize l2", "l2", "idf l2")
    sent: list[list] = []
    outcomes = FoldRunner.outcomes

    def recorded(runner, function, calls):
        if function is kept_fold:
            sent.append([(call[0].text, call[-1].rsplit("/", 1)[-1]) for call in calls])
        return outcomes(runner, function, calls)

    monkeypatch.setattr(FoldRunner, "outcomes", recorded)
    written = []
    for jobs in (2, 1):
        chains = [registry.parse_chain(text) for text in texts]
        model = train(str(OH0), chains, settings, registry, jobs=jobs, candidate_folds=2, search="flat")
        model.save(tmp_path / f"model-{jobs}.json")
        written.append((tmp_path / f"model-{jobs}.json").read_bytes())
    assert sent == [[(text, f"{n}-{fold}.joblib") for n, text in enumerate(texts) for fold in range(2)]]
    assert written[0] == written[1]
