"""``filterkit info`` (issue 7): every number checked against numpy on the rows of read_arff.

The row form is checked against the file's own lines, the presence IG ranking of
grain_wc against Weka 3.6's ``ig_binarized`` scores (weka_scores_grain_wc.tsv),
the best-threshold scores against what the scorer stage records in a saved model,
and the one-vs-rest maximum on oh0 against an information gain written out here.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from chain_helpers import REAL, installed_plugins_once
from filterkit.arff import read_arff
from filterkit.arff.reader import ArffReader
from filterkit.documents import as_json
from filterkit.model import model_arrays
from filterkit.schema import NOMINAL
from filterkit.summary import _SparseRowCounter, as_text, summarize

OH0 = REAL / "oh0.wc.arff"
CREDIT = REAL / "credit-g.arff"
GRAIN = REAL / "grain_wc.arff"

WEIGHTED = (
    "% weights, mixed row forms, a string, a missing class\n"
    "@relation 'weighted bag'\n"
    "@attribute a numeric\n"
    "@attribute s string\n"
    "@attribute b numeric\n"
    "@attribute c {x,y}\n"
    "@data\n"
    "{0 1, 3 y}, {2.5}\n"
    "0,hello,0,x\n"
    "  {1 't', 2 4}\n"
    "1,?,0,?,{0.5}\r\n"
    "% {0 1}\n"
    "\n"
    "0,'',2,y\n"
    "{0 3, 2 1, 3 y},{4}\n"
)


def info(run_filterkit, *args, stdin: bytes | None = None) -> dict:
    result = run_filterkit("info", "--json", *args, stdin=stdin)
    assert result.status == 0, result.stderr
    return json.loads(result.stdout)


def row_forms(path) -> tuple[int, int]:
    """(sparse, dense) data rows, from the text of the file after its @data line."""
    sparse = dense = 0
    in_data = False
    for line in path.read_bytes().decode("utf-8").replace("\r", "\n").split("\n"):
        stripped = line.strip()
        if not in_data:
            in_data = stripped.lower().startswith("@data")
        elif stripped and not stripped.startswith("%"):
            sparse += stripped.startswith("{")
            dense += not stripped.startswith("{")
    return sparse, dense


def expected_summary(path, class_index: int) -> dict:
    """The summary computed with numpy from the rows read_arff gives (no strings in these files)."""
    schema, data = read_arff(path)
    matrix = data.dense_values()
    n_rows, n_columns = matrix.shape
    others = [i for i in range(n_columns) if i != class_index]
    block = matrix[:, others]
    codes = matrix[:, class_index]
    known = codes[~np.isnan(codes)].astype(int)
    attribute = schema.attributes[class_index]
    kinds = Counter(a.kind for a in schema.attributes)
    sparse, dense = row_forms(path)
    return {
        "relation": schema.relation,
        "rows": n_rows,
        "sparse_rows": sparse,
        "dense_rows": dense,
        "row_format": "sparse" if dense == 0 else "dense" if sparse == 0 else "mixed",
        "attributes": {
            "total": n_columns,
            **{k: kinds.get(k, 0) for k in ("numeric", "nominal", "string", "date", "relational")},
        },
        "non_class_attributes": len(others),
        "features": len(others),
        "nonzero_values": int((block != 0).sum()),
        "values": n_rows * len(others),
        "density": (block != 0).sum() / (n_rows * len(others)),
        "missing_values": int(np.isnan(block).sum()),
        "class": {
            "name": attribute.name,
            "index": class_index + 1,
            "kind": NOMINAL,
            "labels": [
                {"label": label, "count": int((known == code).sum()), "percent": 100 * (known == code).sum() / n_rows}
                for code, label in enumerate(attribute.labels)
            ],
            "missing": int(np.isnan(codes).sum()),
            "missing_percent": 100 * np.isnan(codes).sum() / n_rows,
        },
        "weights": {"present": False, "sum": float(n_rows)},
    }


def assert_matches(document: dict, expected: dict) -> None:
    for key, value in expected.items():
        if key == "density":
            assert document[key] == pytest.approx(value, rel=1e-12)
        elif key == "class":
            got = document["class"]
            for inner in ("name", "index", "kind", "missing"):
                assert got[inner] == value[inner], inner
            assert got["missing_percent"] == pytest.approx(value["missing_percent"])
            assert [(e["label"], e["count"]) for e in got["labels"]] == [
                (e["label"], e["count"]) for e in value["labels"]
            ]
            assert [e["percent"] for e in got["labels"]] == pytest.approx([e["percent"] for e in value["labels"]])
        else:
            assert document[key] == value, key


@pytest.mark.slow
@pytest.mark.parametrize(
    "path, class_args, class_index, form, kinds",
    [
        (OH0, [], 3182, "sparse", {"numeric": 3182, "nominal": 1}),
        (CREDIT, [], 20, "dense", {"numeric": 7, "nominal": 14}),
        (GRAIN, ["-c", "first"], 0, "sparse", {"numeric": 13027, "nominal": 1}),
    ],
    ids=["oh0", "credit-g", "grain-class-first"],
)
def test_every_number_agrees_with_numpy(run_filterkit, path, class_args, class_index, form, kinds):
    document = info(run_filterkit, *class_args, path)
    expected = expected_summary(path, class_index)
    assert_matches(document, expected)
    assert document["row_format"] == form
    assert {k: v for k, v in document["attributes"].items() if v and k != "total"} == kinds
    assert sum(e["count"] for e in document["class"]["labels"]) + document["class"]["missing"] == document["rows"]


def test_known_facts_of_the_real_files(run_filterkit):
    oh0 = info(run_filterkit, OH0)
    assert (oh0["rows"], oh0["attributes"]["numeric"], oh0["class"]["name"]) == (1003, 3182, "class")
    assert len(oh0["class"]["labels"]) == 10 and oh0["weights"] == {"present": False, "sum": 1003.0}
    credit = info(run_filterkit, CREDIT)
    assert [(e["label"], e["count"]) for e in credit["class"]["labels"]] == [("good", 700), ("bad", 300)]
    grain = info(run_filterkit, "-c", "first", GRAIN)
    assert grain["class"]["name"] == "class-att" and grain["class"]["index"] == 1


def test_the_text_report(run_filterkit):
    result = run_filterkit("info", OH0)
    assert result.status == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    expected = expected_summary(OH0, 3182)
    assert lines[0] == "relation:    oh0.mat"
    assert lines[1] == "rows:        1003 (sparse rows)"
    assert lines[2] == "attributes:  3183 (3182 numeric, 1 nominal)"
    assert lines[3] == (
        f"density:     {expected['density']:.4g} ({expected['nonzero_values']} non-zero of "
        "1003 rows × 3182 non-class attributes)"
    )
    assert "weights:     none (every row weighs 1)" in lines
    assert "class:       'class' (attribute 3183, nominal, 10 labels)" in lines
    assert any(line.split() == ["Ethics", "115", "11.47%"] for line in lines)
    assert any(line.split() == ["(missing)", "0", "0.00%"] for line in lines)


def test_what_info_prints_is_one_library_call(run_filterkit):
    args = ("--metric", "bns", "--presence", "--positive", "Ethics", "--top", "4")
    metric = installed_plugins_once().metric("bns")
    document = summarize(OH0, metric=metric, presence=True, positive="Ethics", top=4)
    assert as_text(document) == run_filterkit("info", *args, OH0).stdout.decode()
    assert json.loads(as_json(document)) == info(run_filterkit, *args, OH0)
    packed = io.BytesIO(gzip.compress(OH0.read_bytes()))
    assert summarize(packed, "oh0", metric=metric, presence=True, positive="Ethics", top=4) == {
        **document,
        "input": "oh0",
    }


@pytest.mark.slow
def test_chunk_size_and_stdin_change_nothing(run_filterkit):
    whole = info(run_filterkit, "--metric", "ig", "--presence", "--top", "20", OH0)
    chunked = info(run_filterkit, "--chunk-rows", "7", "--metric", "ig", "--presence", "--top", "20", OH0)
    piped = info(run_filterkit, "--metric", "ig", "--presence", "--top", "20", "-", stdin=OH0.read_bytes())
    assert chunked == whole
    assert piped == {**whole, "input": "<stdin>"}


def test_gzip_input(run_filterkit, tmp_path):
    packed = tmp_path / "oh0.arff.gz"
    packed.write_bytes(gzip.compress(OH0.read_bytes()))
    assert info(run_filterkit, packed) == {**info(run_filterkit, OH0), "input": str(packed)}


# ---- ranking -------------------------------------------------------------------------------


def weka_ig_ranking() -> list[tuple[str, float]]:
    """(word, Weka's presence IG) best first, ties by position."""
    with open(REAL / "weka_scores_grain_wc.tsv", newline="") as handle:
        rows = [(r["name"], float(r["ig_binarized"]), int(r["index1"])) for r in csv.DictReader(handle, delimiter="\t")]
    return [(name, score) for name, score, _ in sorted(rows, key=lambda row: (-row[1], row[2]))]


def presence_counts(path, class_index: int, target: int, names: list[str]):
    """tp, fp, pos, neg of the named features for class ``target`` vs the rest, from the rows."""
    schema, data = read_arff(path)
    matrix = data.dense_values()
    is_target = matrix[:, class_index] == target
    columns = [schema.index_of(name) for name in names]
    present = matrix[:, columns] != 0
    return [
        (
            int((present[:, k] & is_target).sum()),
            int((present[:, k] & ~is_target).sum()),
            int(is_target.sum()),
            int((~is_target).sum()),
        )
        for k in range(len(names))
    ]


@pytest.mark.slow
def test_presence_ig_on_grain_is_wekas(run_filterkit):
    document = info(run_filterkit, "-c", "first", "--metric", "ig", "--presence", "--top", "5", GRAIN)
    ranking = document["ranking"]
    assert (ranking["metric"], ranking["mode"], ranking["targets"], ranking["combine"]) == (
        "ig",
        "presence",
        ["1"],
        None,
    )
    assert ranking["scored_features"] == 13027
    top = ranking["features"]
    weka = weka_ig_ranking()[:5]
    assert [f["name"] for f in top] == [name for name, _ in weka]
    for feature, (_, score) in zip(top, weka):
        assert feature["score"] == pytest.approx(score, rel=1e-9, abs=0)
    assert [f["rank"] for f in top] == [1, 2, 3, 4, 5]
    assert {f["class"] for f in top} == {"1"}, "the minority class is positive by default"
    counts = presence_counts(GRAIN, 0, 1, [f["name"] for f in top])
    assert [(f["tp"], f["fp"], f["pos"], f["neg"]) for f in top] == counts
    schema, _ = read_arff(GRAIN)
    assert [f["index"] for f in top] == [schema.index_of(f["name"]) + 1 for f in top]


def test_presence_ig_text_table(run_filterkit):
    result = run_filterkit("info", "-c", "first", "--metric", "ig", "--presence", "--top", "5", GRAIN)
    assert result.status == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    heading = lines.index("top 5 of 13027 numeric features by ig (presence), '1' vs rest; tp/fp: presence counts")
    assert lines[heading + 1].split() == ["rank", "feature", "score", "class", "tp", "fp", "pos", "neg"]
    assert lines[heading + 2].split() == ["1", "wheat", "0.153253", "1", "56", "1", "103", "1451"]
    assert len(lines) == heading + 7


def information_gain(tp, fp, pos, neg) -> np.ndarray:
    """Presence information gain in bits, written out from the entropies."""

    def entropy(p):
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = -p * np.log2(p) - (1 - p) * np.log2(1 - p)
        return np.nan_to_num(terms)

    total = pos + neg
    has, lacks = tp + fp, total - tp - fp
    with np.errstate(divide="ignore", invalid="ignore"):
        conditional = (has / total) * entropy(np.where(has > 0, tp / np.maximum(has, 1), 0)) + (
            lacks / total
        ) * entropy(np.where(lacks > 0, (pos - tp) / np.maximum(lacks, 1), 0))
    return entropy(pos / total) - conditional


def test_multiclass_ranks_by_the_max_over_one_vs_rest(run_filterkit):
    document = info(run_filterkit, "--metric", "ig", "--presence", "--combine", "max", "--top", "8", OH0)
    schema, data = read_arff(OH0)
    matrix = data.dense_values()
    present = matrix[:, :-1] != 0
    codes = matrix[:, -1].astype(int)
    labels = schema.attributes[-1].labels
    per_class = []
    for code in range(len(labels)):
        is_code = codes == code
        tp = (present & is_code[:, None]).sum(axis=0).astype(float)
        fp = (present & ~is_code[:, None]).sum(axis=0).astype(float)
        per_class.append(information_gain(tp, fp, float(is_code.sum()), float((~is_code).sum())))
    per_class = np.vstack(per_class)
    best = per_class.max(axis=0)
    order = np.lexsort((np.arange(len(best)), -best))[:8]
    ranking = document["ranking"]
    assert ranking["combine"] == "max" and ranking["targets"] == list(labels)
    assert [f["name"] for f in ranking["features"]] == [schema.attributes[j].name for j in order]
    assert [f["score"] for f in ranking["features"]] == pytest.approx(best[order], rel=1e-9)
    for feature, j in zip(ranking["features"], order):
        code = int(per_class[:, j].argmax())
        assert feature["class"] == labels[code]
        is_code = codes == code
        assert (feature["tp"], feature["fp"]) == (
            int((present[:, j] & is_code).sum()),
            int((present[:, j] & ~is_code).sum()),
        )
        assert (feature["pos"], feature["neg"]) == (int(is_code.sum()), int((~is_code).sum()))


def test_positive_picks_the_class_on_a_multiclass_target(run_filterkit):
    document = info(run_filterkit, "--metric", "bns", "--presence", "--positive", "Ethics", "--top", "3", OH0)
    ranking = document["ranking"]
    assert ranking["targets"] == ["Ethics"] and ranking["combine"] is None
    names = [f["name"] for f in ranking["features"]]
    assert {f["class"] for f in ranking["features"]} == {"Ethics"}
    code = read_arff(OH0)[0].attributes[-1].labels.index("Ethics")
    assert [(f["tp"], f["fp"], f["pos"], f["neg"]) for f in ranking["features"]] == presence_counts(
        OH0, 3182, code, names
    )


@pytest.mark.parametrize("combine", ["joint", "max"])
def test_positive_and_combine_on_a_multiclass_target_are_refused(run_filterkit, combine):
    """--combine joint ranked every class of oh0 and left --positive out, silently; --combine max scored one."""
    result = run_filterkit("info", "--metric", "ig", "--positive", "Ethics", "--combine", combine, OH0)
    assert result.status == 1 and result.stdout == b""
    assert f"--combine {combine} scores every class of 'class' and --positive Ethics one" in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    "path, args, metric", [(CREDIT, [], "bns"), (GRAIN, ["-c", "first"], "ig")], ids=["credit-g", "grain"]
)
def test_best_threshold_scores_are_the_scorer_stages(run_filterkit, tmp_path, path, args, metric):
    """Without --presence the scores are those the scorer stage of that metric records."""
    model = tmp_path / "m.json"
    fitted = run_filterkit("--save-model", model, *args, path, metric, "--no-scale")
    assert fitted.status == 0, fitted.stderr
    arrays = model_arrays(model)
    scores = arrays[next(key for key in arrays if key.endswith(".scores"))]
    schema, _ = read_arff(path)
    class_index = 0 if args else len(schema) - 1
    features = [i for i, a in enumerate(schema.attributes) if a.is_numeric and i != class_index]
    order = np.lexsort((np.arange(len(scores)), -scores))[:5]
    ranking = info(run_filterkit, *args, "--metric", metric, "--numeric-only", "--top", "5", path)["ranking"]
    assert ranking["mode"] == "threshold"
    assert [f["index"] for f in ranking["features"]] == [features[k] + 1 for k in order]
    assert [f["score"] for f in ranking["features"]] == pytest.approx(scores[order], rel=1e-12)


def test_top_beyond_the_features_shows_them_all(run_filterkit):
    ranking = info(run_filterkit, "--metric", "ig", "--numeric-only", "--top", "50", CREDIT)["ranking"]
    assert ranking["scored_features"] == 7 and len(ranking["features"]) == 7
    assert ranking["targets"] == ["bad"], "the minority class"


# ---- weights and row forms -------------------------------------------------------------------


def test_weights_mixed_rows_strings_and_a_missing_class(run_filterkit, tmp_path):
    path = tmp_path / "weighted.arff"
    path.write_bytes(WEIGHTED.encode())
    document = info(run_filterkit, path)
    schema, data = read_arff(path)
    np.testing.assert_array_equal(data.weights, [2.5, 1, 1, 0.5, 1, 4])
    assert document["weights"] == {"present": True, "sum": 10.0}
    assert (document["rows"], document["sparse_rows"], document["dense_rows"], document["row_format"]) == (
        6,
        3,
        3,
        "mixed",
    )
    assert row_forms(path) == (3, 3)
    # a: 1,0,0,1,0,3 → 3 non-zero; b: 0,0,4,0,2,1 → 3; s ('' hello t ? '' '') is no feature, its ? is missing
    assert (document["nonzero_values"], document["values"], document["missing_values"]) == (6, 12, 1)
    assert (document["non_class_attributes"], document["features"], document["density"]) == (3, 2, 6 / 12)
    assert document["attributes"] == {"total": 4, "numeric": 2, "nominal": 1, "string": 1, "date": 0, "relational": 0}
    labels = document["class"]["labels"]
    assert [(e["label"], e["count"], e["weight"]) for e in labels] == [("x", 2, 2.0), ("y", 3, 7.5)]
    assert document["class"]["missing"] == 1
    assert [e["percent"] for e in labels] == pytest.approx([100 * 2 / 6, 100 * 3 / 6])
    text = run_filterkit("info", path).stdout.decode()
    assert "weights:     sum 10 over 6 rows" in text
    assert "rows:        6 (mixed: 3 sparse, 3 dense)" in text
    assert "density:     0.5 (6 non-zero of 6 rows × 2 features; 1 string or relational attribute left out)" in text


def test_strings_alone_are_no_features_and_give_no_density(run_filterkit):
    text = b"@relation r\n@attribute s string\n@attribute t string\n@attribute c {p,q}\n@data\nhello,?,p\n{0 a, 2 q}\n"
    document = info(run_filterkit, "-", stdin=text)
    figures = ("nonzero_values", "values", "density", "missing_values", "non_class_attributes", "features")
    assert [document.get(key) for key in figures] == [0, 0, None, 1, 2, 0]
    lines = run_filterkit("info", "-", stdin=text).stdout.decode().splitlines()
    assert lines[3] == "density:     n/a (no rows or no features; 2 string or relational attributes left out)"


def test_weighted_counts_of_the_ranking(run_filterkit, tmp_path):
    path = tmp_path / "weighted.arff"
    path.write_bytes(WEIGHTED.encode())
    ranking = info(run_filterkit, "--metric", "ig", "--presence", "--positive", "y", path)["ranking"]
    by_name = {f["name"]: f for f in ranking["features"]}
    # Rows with a known class: x (weights 1, 1), y (2.5, 1, 4); a ≠ 0 in the y rows of weight 2.5 and 4.
    assert (by_name["a"]["tp"], by_name["a"]["fp"], by_name["a"]["pos"], by_name["a"]["neg"]) == (6.5, 0, 7.5, 2)
    # b ≠ 0 in the x row of weight 1 and in the y rows of weights 1 and 4.
    assert (by_name["b"]["tp"], by_name["b"]["fp"]) == (5, 1)
    assert set(by_name) == {"a", "b"}, "only numeric attributes are scored"


def test_a_sparse_row_on_the_data_line(run_filterkit):
    text = b"@relation r\n@attribute a numeric\n@attribute c {p,q}\n@data {0 1, 1 q}\n1,p\n{1 q}\n"
    document = info(run_filterkit, "-", stdin=text)
    assert (document["rows"], document["sparse_rows"], document["dense_rows"]) == (3, 2, 1)


class _Dribble(io.BufferedIOBase):
    """A stream that gives at most ``size`` bytes a read, to split lines between reads."""

    def __init__(self, data: bytes, size: int):
        self._data, self._size = io.BytesIO(data), size

    def readable(self):
        return True

    def read(self, n=-1):
        return self._data.read(self._size)

    def peek(self, n=0):
        position = self._data.tell()
        head = self._data.read(2)
        self._data.seek(position)
        return head


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1 << 20])
def test_sparse_rows_are_counted_across_reads_and_line_ends(size):
    text = (
        b"@relation r\r\n@attribute a numeric\r@attribute c {p,q}\n@DATA\t{0 1}\r\n"
        b"1,p\r\n\x0c {1 q}\r  \r% {0 1}\n2,q\n\t{0 2}"
    )
    counter = _SparseRowCounter(_Dribble(text, size))
    with ArffReader(counter, "dribble") as reader:
        rows = sum(chunk.n_rows for chunk in reader.chunks())
    assert (rows, counter.sparse_rows) == (5, 3)


def test_no_rows(run_filterkit):
    document = info(run_filterkit, "-", stdin=b"@relation r\n@attribute a numeric\n@attribute c {p,q}\n@data\n")
    assert (document["rows"], document["row_format"], document["density"]) == (0, None, None)
    assert [e["count"] for e in document["class"]["labels"]] == [0, 0]


def test_a_numeric_class_has_no_distribution(run_filterkit):
    document = info(run_filterkit, "-c", "duration", CREDIT)
    assert document["class"]["kind"] == "numeric" and document["class"]["labels"] is None
    assert document["class"]["index"] == 2 and document["non_class_attributes"] == 20


def test_a_file_named_info_is_read_as_dot_slash_info(run_filterkit, tmp_path, monkeypatch):
    (tmp_path / "info").write_bytes((REAL / "iris.arff").read_bytes())
    monkeypatch.chdir(tmp_path)
    assert run_filterkit("./info", "l2").status == 0
    assert info(run_filterkit, "info")["rows"] == 150


# ---- errors ----------------------------------------------------------------------------------


def test_bad_value_names_file_and_line(run_filterkit, tmp_path):
    path = tmp_path / "bad.arff"
    path.write_text("@relation x\n@attribute a numeric\n@attribute c {p,q}\n@data\n1,p\n\n2,r\n")
    result = run_filterkit("info", path)
    assert result.status == 1
    assert result.stderr == f"filterkit: error: {path}:7: value 'r' is not a label of attribute 'c' {{p,q}}\n"
    assert result.stdout == b""


@pytest.mark.parametrize(
    "args, status, message",
    [
        (["nope.arff"], 1, "filterkit: error: nope.arff: No such file or directory"),
        (["--metric", "ig", "--positive", "Nobody", OH0], 1, "--positive 'Nobody' is not a label of the class 'class'"),
        (
            ["-c", "2", "--metric", "ig", CREDIT],
            1,
            "--metric needs a nominal class attribute (-c); the class (-c 2) is 'duration', numeric: give -c first",
        ),
        (["-c", "3184", OH0], 1, "class index 3184 is outside 1..3183"),
        (["--metric", "nope", OH0], 2, "Invalid value for '--metric'"),
        (["--top", "3", OH0], 2, "--top needs --metric"),
        (["--presence", "--positive", "Ethics", OH0], 2, "--positive and --presence need --metric"),
        (["--metric", "ig", "--top", "0", OH0], 2, "Invalid value for '--top'"),
    ],
)
def test_errors(run_filterkit, args, status, message):
    result = run_filterkit("info", *args)
    assert result.status == status
    assert message in result.stderr
    assert result.stdout == b""


def test_a_class_the_file_lacks_names_the_file(run_filterkit):
    result = run_filterkit("info", "-c", "nope", CREDIT)
    assert (result.status, result.stdout) == (1, b"")
    assert result.stderr == f"filterkit: error: {CREDIT}: no attribute called 'nope' to use as the class\n"


def test_truncated_input_names_the_line(run_filterkit):
    result = run_filterkit(
        "info", "-", stdin=b"@relation x\n@attribute a numeric\n@attribute c {p,q}\n@data\n1,p\n{0 1, 1\n"
    )
    assert result.status == 1
    assert result.stderr.startswith("filterkit: error: <stdin>:6: ")


@pytest.mark.slow
def test_a_class_declaring_ten_thousand_labels_costs_what_the_data_holds(run_filterkit, tmp_path):
    import tracemalloc

    text = (REAL / "oh0.wc.arff").read_text()
    start = text.upper().index("@DATA")
    header, rows = text[:start], text[start:]
    declaration = header[header.upper().rindex("@ATTRIBUTE") :]
    labels = declaration[declaration.index("{") + 1 : declaration.index("}")]
    extra = ",".join(f"unused{i}" for i in range(10_000))
    wide = tmp_path / "wide.arff"
    wide.write_text(header.replace("{" + labels + "}", "{" + labels + "," + extra + "}") + rows)
    tracemalloc.start()
    try:
        document = info(run_filterkit, "--metric", "ig", "--presence", "--top", "3", wide)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 60e6, f"{peak / 1e6:.0f} MB for 10,003 labels of which 10 occur"
    narrow = info(run_filterkit, "--metric", "ig", "--presence", "--top", "3", OH0)
    assert document["ranking"]["features"] == narrow["ranking"]["features"]


def test_weight_sums_do_not_depend_on_the_chunk_size(run_filterkit, tmp_path):
    lines = ["@relation w", "@attribute x numeric", "@attribute c {a,b}", "@data"]
    weights = [0.1, 0.3, 0.7, 0.2, 0.1, 0.05, 2.2, 0.1, 0.3] * 40
    lines += [f"{i % 5},{'ab'[i % 2]},{{{w}}}" for i, w in enumerate(weights)]
    path = tmp_path / "w.arff"
    path.write_text("\n".join(lines) + "\n")
    documents = [info(run_filterkit, "--chunk-rows", str(rows), path) for rows in (1, 7, 1000)]
    assert documents[0] == documents[1] == documents[2]
    assert documents[0]["weights"]["sum"] == math.fsum(weights)


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["-c", "1"], "-c 1: the data holds label sets (MEKA's -C in its relation name, or --labels)"),
        (["--metric", "ig"], "--metric ranks features against one class, and the data holds label sets"),
    ],
)
def test_class_options_on_label_sets_are_refused_not_ignored(run_filterkit, options, words):
    """-c was ignored on MEKA data ("class: none"), and --metric's error told the user to give -c."""
    labelled = Path(__file__).parent / "data" / "multilabel" / "three-labels-synthetic.arff"
    result = run_filterkit("info", *options, labelled)
    assert result.status == 1 and result.stdout == b""
    assert words in result.stderr and len(result.stderr.splitlines()) == 1


def test_a_sparse_row_after_control_characters_is_counted_sparse(tmp_path, run_filterkit):
    # the reader takes each control character (and a comma) before a row's '{' for a separator, as Weka does, and
    # writes such rows sparse; info counted them dense ("mixed: 1 sparse, 3 dense")
    path = tmp_path / "control.arff"
    path.write_bytes(
        b"@relation r\n@attribute a numeric\n@attribute b numeric\n@data\n{0 1}\n\x01{1 3}\n\x1f{0 2}\n,{0 4}\n"
    )
    assert run_filterkit("info", path).stdout.decode().splitlines()[1] == "rows:        4 (sparse rows)"
    assert run_filterkit(path).stdout.endswith(b"@data\n{0 1}\n{1 3}\n{0 2}\n{0 4}\n")


def test_a_joint_igm_ranking_is_not_said_to_be_weka_s(run_filterkit):
    # the heading said "Weka's scores and Ranker order" of igm's joint scores, which no Weka evaluator gives
    oh0 = Path(__file__).resolve().parents[1] / "arff_samples" / "oh0.wc.arff"
    igm = run_filterkit("info", "--metric", "igm", "--top", "2", oh0).stdout.decode()
    ig = run_filterkit("info", "--metric", "ig", "--top", "2", oh0).stdout.decode()
    assert "by igm (best threshold), joint over 10 classes\n" in igm and "Weka" not in igm
    assert "by ig (best threshold), joint over 10 classes (Weka's scores and Ranker order)\n" in ig
