"""A folder per class (filterkit/formats/folders.py): Weka 3.6's TextDirectoryLoader is the oracle of the rows."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from chain_helpers import REAL, needs_weka, weka_java
from filterkit.arff import read_arff
from filterkit.formats import ARFF, FormatOptions, format_of, relation_of
from filterkit.formats.folders import FoldersFormat
from filterkit.limits import Limits
from filterkit.testing import read_output, run_filterkit

#: Documents that ARFF must quote and escape, a CRLF, an empty file, non-ASCII names and text, a label that
#: needs quotes, an empty class folder and a file beside the class folders.
DOCUMENTS = {
    "pos/b.txt": b"good film",
    "pos/a.txt": b'great, "fun" it\'s\r\nnew\tline \\ back',
    "pos/empty.txt": b"",
    "neg/z": b"bad film",
    "neg/\xc3\xbc": "café € \N{GRINNING FACE}".encode(),
    "with space/Z": b"% not a comment\n?\n{x}",
    "\xc3\xbcn\xc3\xaf/1": b"x y",
    "README": b"not a document",
}

#: Weka 3.6's TextDirectoryLoader -F on a folder (args[0]), its data set as read written to args[1], and
#: the same rows and labels in the order of their names' bytes, without the file name, written to args[2]:
#: Weka takes File.list()'s order, the file system's, which filterkit does not follow.
WEKA_FOLDERS_JAVA = """
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import weka.core.Attribute;
import weka.core.FastVector;
import weka.core.Instance;
import weka.core.Instances;
import weka.core.converters.ArffSaver;
import weka.core.converters.TextDirectoryLoader;

public class WekaFolders {
    static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    static void save(Instances data, String path) throws Exception {
        ArffSaver saver = new ArffSaver();
        saver.setInstances(data);
        saver.setFile(new File(path));
        saver.writeBatch();
    }

    public static void main(String[] args) throws Exception {
        TextDirectoryLoader loader = new TextDirectoryLoader();
        loader.setOptions(new String[] {"-F", "-charset", "UTF-8", "-dir", args[0]});
        Instances read = loader.getDataSet();
        save(read, args[1]);
        Comparator<String> byBytes = (a, b) -> Arrays.compareUnsigned(bytes(a), bytes(b));
        List<String> labels = new ArrayList<>();
        for (int i = 0; i < read.classAttribute().numValues(); i++) {
            labels.add(read.classAttribute().value(i));
        }
        labels.sort(byBytes);
        FastVector labelVector = new FastVector();
        for (String label : labels) {
            labelVector.addElement(label);
        }
        FastVector attributes = new FastVector();
        attributes.addElement(new Attribute("text", (FastVector) null));
        attributes.addElement(new Attribute("@@class@@", labelVector));
        List<Instance> rows = new ArrayList<>();
        for (int i = 0; i < read.numInstances(); i++) {
            rows.add(read.instance(i));
        }
        rows.sort(Comparator.comparing((Instance row) -> row.stringValue(2), byBytes)
            .thenComparing(row -> row.stringValue(1).substring(row.stringValue(2).length() + 1), byBytes));
        Instances byName = new Instances(read.relationName(), attributes, rows.size());
        byName.setClassIndex(1);
        for (Instance row : rows) {
            double[] values = {
                byName.attribute(0).addStringValue(row.stringValue(0)), labels.indexOf(row.stringValue(2))
            };
            byName.add(new Instance(1.0, values));
        }
        save(byName, args[2]);
    }
}
"""

CHAIN = ("words", "--counts", "shape", "bns", "l2")


def _tree(root: Path, documents: dict[str, bytes], empty: tuple[str, ...] = ("empty",)) -> Path:
    """A folder per class under ``root``: each ``CLASS/FILE`` (a name of bytes, one a character: ``\xc3\xbc``
    is ``ü`` in UTF-8) with its bytes,
    and the class folders ``empty`` with no file."""
    root.mkdir(parents=True, exist_ok=True)
    for name, data in documents.items():
        path = os.path.join(os.fsencode(root), name.encode("latin-1"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as file:
            file.write(data)
    for folder in empty:
        (root / folder).mkdir()
    return root


def _rows(output: bytes) -> tuple[tuple[str, ...], list[tuple[str, str]]]:
    """The class labels and each row's (text, class) of filterkit's ARFF output."""
    schema, chunk = read_output(output)
    labels = schema.attributes[-1].labels
    return labels, [(text, labels[int(code)]) for text, code in zip(chunk.text[0], chunk.values[:, -1])]


def _without_comments(output: bytes) -> list[bytes]:
    """The lines of an output but its comments (the provenance line)."""
    return [line for line in output.split(b"\n") if not line.startswith(b"%")]


def _ok(*args) -> bytes:
    run = run_filterkit(*args)
    assert run.status == 0, run.stderr
    return run.stdout


def _error(work: Path, *args) -> str:
    """The one error line of a run that must fail (exit 1, no traceback, no ``-o`` file in ``work``)."""
    command = ("apply",) if args[0] == "apply" else ()
    output = work / "out.arff"
    run = run_filterkit(*command, "-o", output, *args[len(command) :])
    assert run.status == 1 and run.stdout == b"" and not output.exists(), run.stderr
    assert "Traceback" not in run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("filterkit: error: ")]
    assert len(errors) == 1, run.stderr
    return errors[0]


def test_subfolders_are_classes_and_files_rows_in_name_byte_order(tmp_path):
    folder = _tree(tmp_path / "docs", DOCUMENTS)
    run = run_filterkit(folder)
    assert run.status == 0, run.stderr
    schema, _ = read_output(run.stdout)
    assert schema.relation == "docs"
    assert [(a.name, a.kind) for a in schema.attributes] == [("text", "string"), ("@@class@@", "nominal")]
    labels, rows = _rows(run.stdout)
    assert labels == ("empty", "neg", "pos", "with space", "ünï")
    assert rows == [
        ("bad film", "neg"),  # 'z' before 'ü': bytes, not letters
        ("café € \N{GRINNING FACE}", "neg"),
        ('great, "fun" it\'s\r\nnew\tline \\ back', "pos"),
        ("good film", "pos"),
        ("", "pos"),
        ("% not a comment\n?\n{x}", "with space"),
        ("x y", "ünï"),
    ]
    assert run.stderr == f"filterkit: {folder}: left out 'README' beside the class folders " + (
        "(a document is a file inside a class folder)\n"
    )


@pytest.mark.slow  # importing scikit-learn's datasets: about a second
def test_rows_are_scikit_learns_load_files_unshuffled(tmp_path):
    from sklearn.datasets import load_files

    folder = _tree(tmp_path / "docs", DOCUMENTS)
    theirs = load_files(str(folder), encoding="utf-8", shuffle=False)
    labels, rows = _rows(_ok(folder))
    assert labels == tuple(theirs.target_names)
    assert rows == [(text, theirs.target_names[target]) for text, target in zip(theirs.data, theirs.target)]


def test_folder_of_subfolders_is_read_as_folders_without_from(tmp_path):
    folder = _tree(tmp_path / "docs", {"a/1": b"one two"}, ())
    assert format_of(str(folder), None) == "folders"
    assert _ok(folder) == _ok("--from", "folders", folder)


def test_folder_of_arff_parts_is_not_a_folder_per_class(tmp_path):
    parts = _tree(tmp_path / "parts", {"part-1.arff": b"", "old/part-0.arff": b""}, ())
    assert format_of(str(parts), None) == ARFF
    hidden_only = _tree(tmp_path / "hidden", {".ipynb_checkpoints/a": b"", "x.txt": b""}, ())
    assert format_of(str(hidden_only), None) == ARFF


def test_hidden_files_and_folders_are_left_out(tmp_path):
    folder = _tree(tmp_path / "docs", {"a/1": b"one", "a/.DS_Store": b"\xff\x00", ".git/config": b"x"}, ())
    assert _rows(_ok(folder)) == (("a",), [("one", "a")])


def test_byte_order_mark_is_left_out_and_line_ends_kept(tmp_path):
    folder = _tree(tmp_path / "docs", {"a/1": b"\xef\xbb\xbfone\r\ntwo\rthree\n"}, ())
    assert _rows(_ok(folder))[1] == [("one\r\ntwo\rthree\n", "a")]


def test_empty_class_folder_is_a_label_without_rows(tmp_path):
    folder = _tree(tmp_path / "docs", {"b/1": b"one"}, ("a",))
    assert _rows(_ok(folder)) == (("a", "b"), [("one", "b")])


def test_linked_class_folder_and_document_are_read_and_cannot_loop(tmp_path):
    elsewhere = _tree(tmp_path / "elsewhere", {"c/1": b"linked class", "d": b"linked file"}, ())
    folder = _tree(tmp_path / "docs", {"a/1": b"one"}, ())
    (folder / "c").symlink_to(elsewhere / "c")
    (folder / "a" / "2").symlink_to(elsewhere / "d")
    assert _rows(_ok(folder)) == (("a", "c"), [("one", "a"), ("linked file", "a"), ("linked class", "c")])
    (folder / "a" / "loop").symlink_to(folder)
    assert _error(tmp_path, folder) == (
        f"filterkit: error: {folder}/a/loop: a folder inside the class folder 'a': a class folder holds a file "
        "per document (move it into 'docs' to make it a class)"
    )


def test_document_not_utf8_is_one_error_naming_file_and_line(tmp_path):
    folder = _tree(tmp_path / "docs", {"a/1": b"fine", "b/2": b"first line\nsecond \xff line"}, ())
    assert _error(tmp_path, folder, *CHAIN) == (
        f"filterkit: error: {folder}/b/2:2: not UTF-8 text (invalid start byte at byte 8)"
    )


def test_pipe_and_link_to_nothing_are_errors_naming_them(tmp_path):
    folder = _tree(tmp_path / "docs", {"a/1": b"fine"}, ())
    (folder / "a" / "gone").symlink_to(tmp_path / "nowhere")
    refused = "not a regular file (or a link to nothing): a document is a file"
    assert _error(tmp_path, folder) == f"filterkit: error: {folder}/a/gone: {refused}"
    (folder / "a" / "gone").unlink()
    os.mkfifo(folder / "a" / "pipe")
    assert _error(tmp_path, folder) == f"filterkit: error: {folder}/a/pipe: {refused}"


def test_document_past_the_line_bound_is_refused_before_it_is_read(tmp_path, monkeypatch):
    folder = _tree(tmp_path / "docs", {"a/1": b"x" * 100, "a/2": b"x" * 101}, ())
    monkeypatch.setenv("FILTERKIT_MAX_LINE_BYTES", "100")
    assert _error(tmp_path, folder) == (
        f"filterkit: error: {folder}/a/2: a document larger than 100 bytes: refused "
        "(set FILTERKIT_MAX_LINE_BYTES to allow more)"
    )


def test_folder_without_class_folder_is_an_error(tmp_path):
    folder = _tree(tmp_path / "docs", {"loose.txt": b"one"}, ())
    assert _error(tmp_path, "--from", "folders", folder) == (
        f"filterkit: error: {folder}: no class folder (a subfolder per class, a file per document) in the folder"
    )


def test_class_folder_name_not_utf8_is_an_error(tmp_path):
    folder = _tree(tmp_path / "docs", {"a/1": b"one", "\xff/2": b"two"}, ())
    assert _error(tmp_path, folder) == (
        f"filterkit: error: {folder}/\\xff: the class folder's name is not UTF-8 text, so cannot be a label"
    )


def test_file_name_not_utf8_is_read_and_named_in_errors_as_bytes(tmp_path):
    folder = _tree(tmp_path / "docs", {"a/\xff1": b"one"}, ())
    assert _rows(_ok(folder)) == (("a",), [("one", "a")])
    _tree(folder, {"a/\xff2": b"\xfe"}, ())
    assert (
        _error(tmp_path, folder)
        == f"filterkit: error: {folder}/a/\\xff2:1: not UTF-8 text (invalid start byte at byte 1)"
    )


def test_relation_of_a_name_not_utf8_is_text(tmp_path):
    folder = _tree(Path(os.fsdecode(os.fsencode(tmp_path) + b"/\xffdocs")), {"a/1": b"one"}, ())
    assert read_output(_ok(folder))[0].relation == "\\xffdocs"
    assert relation_of(os.fsdecode(b"/data/\xffx.csv.gz"), keep_extension=False) == "\\xffx"  # CSV's, svmlight's


def test_scan_reads_names_only_and_chunks_hold_at_most_chunk_rows(tmp_path):
    folder = _tree(tmp_path / "docs", {f"{c}/{i}": b"\xff" for c in "ab" for i in range(3)}, ())
    reader = FoldersFormat(Limits())
    layout = reader.scan(None, str(folder), FormatOptions(), None)  # no document read: none is UTF-8
    assert layout.rows == 6
    _tree(folder, {f"{c}/{i}": f"{c}{i}".encode() for c in "ab" for i in range(3)}, ())
    chunks = list(reader.chunks(None, str(folder), layout, 4))
    assert [chunk.n_rows for chunk in chunks] == [4, 2]
    assert [text for chunk in chunks for text in chunk.text[0]] == ["a0", "a1", "a2", "b0", "b1", "b2"]
    by_bytes = FoldersFormat(Limits(chunk_bytes=5))
    assert [chunk.n_rows for chunk in by_bytes.chunks(None, str(folder), layout, 4)] == [3, 3]


def test_same_bytes_whatever_chunk_rows(tmp_path):
    folder = _tree(tmp_path / "docs", DOCUMENTS)
    outputs = {_ok("--chunk-rows", rows, folder, *CHAIN) for rows in (1, 3, 10000)}
    assert len(outputs) == 1


def test_apply_reads_a_folder_with_the_models_labels(tmp_path):
    folder = _tree(tmp_path / "docs", DOCUMENTS)
    model = tmp_path / "model.json"
    trained = _ok("--save-model", model, folder, *CHAIN)
    applied = _ok("apply", model, folder)
    assert _without_comments(applied) == _without_comments(trained)
    fewer = _tree(tmp_path / "fewer", {"pos/1": b"good good", "with space/2": b"film"}, ())
    schema, chunk = read_output(_ok("apply", model, fewer))
    classes = chunk.values[:, 0].toarray().ravel()  # the class first, in sparse rows
    assert [schema.attributes[0].labels[int(code)] for code in classes] == ["pos", "with space"]
    other = _tree(tmp_path / "other", {"pos/1": b"good", "meh/2": b"film"}, ())
    assert _error(tmp_path, "apply", model, other) == (
        f"filterkit: error: {other}: the class folder 'meh' is not one of the training labels "
        "('empty', 'neg', 'pos', 'with space', 'ünï')"
    )


def test_apply_of_a_model_trained_on_other_columns_names_the_difference(tmp_path):
    (tmp_path / "train.csv").write_text("a,b\n1,x\n2,y\n")
    model = tmp_path / "model.json"
    _ok("--save-model", model, tmp_path / "train.csv", "shape")
    folder = _tree(tmp_path / "docs", {"x/1": b"one"}, ())
    assert _error(tmp_path, "apply", model, folder) == (
        f"filterkit: error: {folder}: the model was not trained on a folder per class ('text' and '@@class@@'): "
        "read this folder's documents as its training data was read"
    )


def test_dask_engine_refuses_a_folder_per_class_before_starting(tmp_path):
    folder = _tree(tmp_path / "docs", {"a/1": b"one"}, ())
    run = run_filterkit("--engine", "dask", folder, "shape")
    assert run.status == 2 and run.stdout == b""
    assert f"is read as folders: convert it first (filterkit {folder} -o {folder}.arff)" in run.stderr
    assert "*.arff" not in run.stderr  # not taken for a folder of ARFF parts with none in it


def _reuters_documents() -> dict[str, bytes]:
    """The Reuters grain sample's documents (real text), a file each in the folder of its class."""
    schema, chunk = read_arff(str(REAL / "reuters_grain_sample.arff"))
    labels = schema.attributes[1].labels
    return {
        f"{labels[int(code)]}/{row:03d}.txt": text.encode()
        for row, (text, code) in enumerate(zip(chunk.text[0], chunk.values[:, 1]))
    }


@pytest.fixture(scope="module", params=["crafted", "reuters"])
def weka_tree(request, tmp_path_factory) -> Path:
    """:data:`DOCUMENTS` (or the Reuters sample's) in a folder, with Weka's readings of it beside:
    ``read.arff`` (TextDirectoryLoader -F, as read) and ``by_name.arff`` (its rows and labels in name
    order, no file name)."""
    root = tmp_path_factory.mktemp("weka_folders")
    if request.param == "crafted":
        folder = _tree(root / "docs", DOCUMENTS)
    else:
        folder = _tree(root / "docs", _reuters_documents(), ())
    subprocess.run(
        [*weka_java(WEKA_FOLDERS_JAVA, "-Dfile.encoding=UTF-8"), folder, root / "read.arff", root / "by_name.arff"],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return root


@needs_weka
def test_rows_are_text_directory_loaders(weka_tree):
    schema, chunk = read_arff(str(weka_tree / "read.arff"))
    assert [(a.name, a.kind) for a in schema.attributes] == [
        ("text", "string"),
        ("filename", "string"),
        ("@@class@@", "nominal"),
    ]
    labels = schema.attributes[2].labels
    weka_rows = sorted(
        zip(chunk.text[1], chunk.text[0], (labels[int(code)] for code in chunk.values[:, 2])),
        key=lambda row: tuple(part.encode() for part in row[0].split("/", 1)),
    )
    ours_labels, ours = _rows(_ok(weka_tree / "docs"))
    assert sorted(ours_labels) == sorted(labels)  # Weka's in the file system's order
    assert ours == [(text, label) for _, text, label in weka_rows]


@needs_weka
def test_words_chain_same_bytes_as_on_wekas_arff(weka_tree):
    def without_relation_and_provenance(output: bytes) -> list[bytes]:
        return [line for line in output.split(b"\n") if not line.startswith((b"%", b"@relation"))]

    ours = _ok(weka_tree / "docs", *CHAIN)
    weka = _ok(weka_tree / "by_name.arff", *CHAIN)
    assert without_relation_and_provenance(ours) == without_relation_and_provenance(weka)
    assert ours.count(b"\n@attribute ") > 20  # the documents' words


@pytest.mark.parametrize("command", [[], ["info"], ["evaluate"]])
def test_a_folder_that_is_no_folder_per_class_says_how_a_folder_is_read(run_filterkit, tmp_path, command):
    """Class folders with an ARFF file beside them (taken for a folder of parts), or an empty folder, were read as
    an ARFF file: "Is a directory"."""
    beside = tmp_path / "beside"
    for label in ("pos", "neg"):
        (beside / label).mkdir(parents=True)
        (beside / label / "a.txt").write_text(f"a {label} text")
    (beside / "README.arff").write_text("@relation r\n@attribute a numeric\n@data\n1\n")
    (tmp_path / "empty").mkdir()
    for folder in (beside, tmp_path / "empty"):
        result = run_filterkit(*command, folder, *(["l2"] if command == ["evaluate"] else []))
        assert result.status == 1 and result.stdout == b""
        assert result.stderr == (
            f"filterkit: error: {folder}: a folder is read as arff here: a folder of ARFF parts is one input with "
            "--engine dask, a folder per class (a subfolder of text files each, no .arff beside them) with --from "
            "folders\n"
        )
    assert run_filterkit("--from", "folders", beside).status == 0
