"""``explain`` on a multi-class model whose chain shapes one-vs-rest (issue 72 item 9): a class's copy of a word
(``wheat@grain``, which ``shape`` makes) is traced back to the word before the stage that made it, so its
``count`` is the word's count and its value after ``words`` is that count, as for a two-class model."""

from __future__ import annotations

import csv
import json

from chain_helpers import REAL

TOPICS = {
    "grain": "wheat grain harvest corn barley",
    "money": "bank rate loan stock market",
    "ships": "port vessel cargo tanker harbour",
}


def test_a_class_s_copy_of_a_word_shows_the_word_s_count_and_values(run_filterkit, tmp_path):
    path = tmp_path / "topics.csv"
    documents = []
    with path.open("w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["text", "topic"])
        for k in range(30):
            topic, words = list(TOPICS.items())[k % 3]
            chosen = words.split()
            document = " ".join([chosen[k % 5]] * (1 + k % 3) + chosen[: 2 + k % 3] + ["report", "today"])
            documents.append(document)
            writer.writerow([document, topic])
    model = tmp_path / "model.json"
    trained = run_filterkit(
        "train", "-q", "-o", model, "--multiclass", "--text", "text", path, "words", "--counts", "shape", "bns", "l2"
    )
    assert trained.status == 0, trained.stderr
    explained = run_filterkit("explain", "--json", "--top", "0", model, path)
    assert explained.status == 0, explained.stderr
    copies = 0
    for document, line in zip(documents, explained.stdout.decode().splitlines(), strict=True):
        for per_class in json.loads(line)["classes"]:
            for word in per_class["words"]:
                name, _, label = word["word"].rpartition("@")
                assert label in TOPICS
                count = document.split().count(name)
                assert word["count"] == count >= 1, word
                assert word["steps"][0] == count, word  # the value after words: its count
                assert word["steps"][1] != count, word  # after shape: the copy's shaped value
                copies += 1
    assert copies > 100
    text = run_filterkit("explain", "--top", "1", model, path).stdout.decode()
    assert "  why grain:\n" in text
    line = text.split("value after words → shape → bns → l2\n", 1)[1].splitlines()[0]
    word, count, steps = line.split()[1], line.split()[2], line.split(maxsplit=3)[3]
    assert count == str(documents[0].split().count(word.rpartition("@")[0]))
    assert steps.startswith(f"{count} → ")


def test_a_word_named_as_the_document_attribute_shows_its_own_count(run_filterkit, tmp_path):
    """The word ``text`` of a document attribute named ``text``: its count is the word's, not the attribute's
    (a string, whose stored value read as a count gave 0)."""
    path = tmp_path / "docs.arff"
    rows = [f"'text text {'good' if k % 2 else 'bad'} words',{'yes' if k % 2 else 'no'}" for k in range(40)]
    path.write_text("@relation docs\n@attribute text string\n@attribute class {no,yes}\n@data\n" + "\n".join(rows))
    model = tmp_path / "model.json"
    trained = run_filterkit("train", "-q", "-o", model, path, "words", "--counts", "l2")
    assert trained.status == 0, trained.stderr
    explained = run_filterkit("explain", "--json", "--top", "0", model, path)
    assert explained.status == 0, explained.stderr
    counts = [
        word["count"]
        for line in explained.stdout.decode().splitlines()
        for word in json.loads(line)["words"]
        if word["word"] == "text"
    ]
    assert counts == [2.0] * 40


def test_a_copy_of_a_copy_and_a_label_holding_at_show_the_first_feature_s_count(run_filterkit, tmp_path):
    """``auto``'s shaped copy of ``shape``'s per-class copy (``petallength@Iris-setosa@shape``) showed auto's
    output as its count (6.581 for 1.4), as did a copy for a class whose label holds ``@``: each count is the
    row's value of the feature the copies were made from."""
    iris = (REAL / "iris.arff").read_text()
    path = tmp_path / "iris.arff"
    path.write_text(iris.replace("Iris-", "Iris@"))
    rows = [line.split(",") for line in iris.split("@DATA\n", 1)[1].splitlines() if line[:1].isdigit()]
    names = ["sepallength", "sepalwidth", "petallength", "petalwidth"]
    for chain in (["auto", "l2"], ["shape", "l2"]):
        model = tmp_path / "model.json"
        trained = run_filterkit("train", "-q", "-o", model, "--multiclass", path, *chain)
        assert trained.status == 0, trained.stderr
        explained = run_filterkit("explain", "--json", "--top", "0", model, path)
        assert explained.status == 0, explained.stderr
        copies = 0
        for row, line in zip(rows, explained.stdout.decode().splitlines(), strict=True):
            for word in (word for per_class in json.loads(line)["classes"] for word in per_class["words"]):
                feature = word["word"].split("@", 1)[0]
                if "@" in word["word"]:
                    assert word["count"] == float(row[names.index(feature)]), (chain, word)
                    copies += 1
        assert copies >= 150
