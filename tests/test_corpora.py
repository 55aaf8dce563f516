"""benchmarks/corpora.py's builder: the split is fixed by the documents, and the files read back as written."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from filterkit.arff import read_arff

CORPORA = Path(__file__).resolve().parent.parent / "benchmarks" / "corpora.py"
spec = importlib.util.spec_from_file_location("corpora", CORPORA)
assert spec is not None and spec.loader is not None
corpora = importlib.util.module_from_spec(spec)
spec.loader.exec_module(corpora)

DOCUMENTS = [
    (f"package{number}", f"text {number} it's a\n\t'quoted' \\ line {number % 7}", "abcd"[number % 4])
    for number in range(200)
]


def written(folder: Path, documents) -> dict[str, bytes]:
    """The bytes of every file ``write_corpus`` makes of ``documents``."""
    folder.mkdir()
    corpora.write_corpus(folder, "corpus", "corpus_class", documents, top=2)
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_the_same_documents_make_the_same_bytes(tmp_path):
    assert written(tmp_path / "a", DOCUMENTS) == written(tmp_path / "b", list(DOCUMENTS))


def test_documents_read_back_as_written_and_none_is_in_both_files(tmp_path):
    documents = DOCUMENTS + [("package0-dbg", DOCUMENTS[0][1], "a")]  # a repeated text is left out
    written(tmp_path / "corpus", documents)
    texts = {}
    for part in ("train", "test"):
        schema, chunk = read_arff(str(tmp_path / "corpus" / f"corpus-{part}.arff"))
        labels = schema.attributes[1].labels
        texts[part] = {(chunk.text[0][row], labels[int(chunk.values[row, 1])]) for row in range(chunk.n_rows)}
    expected_test = {(text, label) for key, text, label in DOCUMENTS if corpora.residue(key, 10) < 3}
    assert texts["test"] == expected_test
    assert texts["train"] | texts["test"] == {(text, label) for _, text, label in DOCUMENTS}
    assert 40 <= len(expected_test) <= 80  # about 30 %


def test_the_largest_classes_file_keeps_the_most_frequent_training_classes(tmp_path):
    sizes = {"a": 40, "b": 30, "c": 6, "d": 3}
    documents = [(f"{label}{number}", f"{label} {number}", label) for label in sizes for number in range(sizes[label])]
    written(tmp_path / "corpus", documents)
    in_test = {key: corpora.residue(key, 10) < 3 for key, _, _ in documents}
    for part, is_test in (("train", False), ("test", True)):
        schema, chunk = read_arff(str(tmp_path / "corpus" / f"corpus2-{part}.arff"))
        assert list(schema.attributes[1].labels) == ["a", "b"]
        assert chunk.n_rows == sum(in_test[key] == is_test for key, _, label in documents if label in "ab")


def test_a_long_description_keeps_its_paragraphs():
    listing = "Package: p\nDescription-md5: 1\nDescription-en: First line\n some text\n .\n more\n\nPackage: q\n"
    first, second = corpora.stanzas(listing)
    assert corpora.description_text(first["Description-en"]) == "First line\nsome text\n\nmore"
    assert second == {"Package": "q"}
