"""Control characters separate tokens outside quotes, as in Weka 3.6 (its ArffLoader's StreamTokenizer takes every
character up to the space for white space, the line ends aside); a line of nothing but separators is skipped, as
Weka skips it and as filterkit skips a blank line.  Every parse path reads so (the compiled module, the tokenizer,
one row a chunk), and what the writer writes (a text holding a control character quoted) reads back the same in
filterkit and in Weka.  (filterkit had read ``ab\\x0ccd`` as one value where Weka reads two.)"""

from __future__ import annotations

import io
import subprocess

import numpy as np
import pytest

from arff_helpers import assert_same_data, read_all, write_text
from chain_helpers import needs_weka, weka_java
from filterkit import kernels
from filterkit.arff import ArffReader
from filterkit.errors import ArffError
from filterkit.schema import NOMINAL, NUMERIC, STRING, Attribute, Chunk, Schema

PATHS = ["compiled", "tokenizer", "one row a chunk"]

#: Header and data lines whose words are parted by control characters, with lines of separators alone among them.
DENSE = (
    b"@relation\x0cr\x01\n"
    b"\x00\n"
    b"@attribute\x0bs\x1fstring\n"
    b"@attribute t string\n"
    b"@data\n"
    b"ab\x0ccd\n"
    b"\x01x\x1fy\x00\n"
    b"a\x0b1\n"
    b",\n"
    b"\x00\n"
    b" , \x01\n"
    b"\x01% a comment after a control character\n"
    b"'q\x0cr',\x7fz\n"
)
#: What Weka reads from it (java -cp weka.jar weka.filters.AllFilter -i): 0x7f is a word's character.
DENSE_ROWS = [["ab", "cd"], ["x", "y"], ["a", "1"], ["q\x0cr", "\x7fz"]]
SPARSE = (
    b"@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute c {x,y}\n@data\n"
    b"{0\x0b5,1\x1f6\x00}\n"
    b"\x1f\n"
    b"{1\x0c7\x0c2\x0by}\n"
)
SPARSE_ROWS = [[5.0, 6.0, 0.0], [0.0, 7.0, 1.0]]


def read_on(path: str, data: bytes):
    with (
        kernels.compiled(path != "tokenizer", kernels.READING),
        ArffReader(io.BytesIO(data), "f", 1 if path == "one row a chunk" else 10_000) as source,
    ):
        chunks = list(source.chunks())
        return source.schema, chunks


@pytest.mark.parametrize("path", PATHS)
def test_control_characters_part_words_in_header_and_dense_rows(path):
    schema, chunks = read_on(path, DENSE)
    assert (schema.relation, [a.name for a in schema.attributes]) == ("r", ["s", "t"])
    rows = [list(row) for chunk in chunks for row in zip(chunk.text[0], chunk.text[1])]
    assert rows == DENSE_ROWS


@pytest.mark.parametrize("path", PATHS)
def test_control_characters_part_words_in_sparse_rows(path):
    _, chunks = read_on(path, SPARSE)
    assert [row for chunk in chunks for row in chunk.dense_values().tolist()] == SPARSE_ROWS


def test_the_compiled_module_reads_control_characters_as_separators():
    # (the documents above hold quotes and comments, which the compiled module leaves to the tokenizer: here its own
    # loops are asked, as the reader asks them)
    speedups = kernels.speedups
    text, lines, stop, seen, too_long = speedups.gather_rows(
        b"\x01\n,\n\x0b 1\x0c2\x00,\n \x7f\n", 0, 10, 1 << 20, 1 << 20
    )
    assert (text, np.frombuffer(lines, np.int64).tolist(), seen) == (b"1\x0c2\n\x7f", [2, 3], 4)
    numbers, *_ = speedups.tokenize_plain(b"1\x0c2\n3\x004\x1f", 2, 2)
    assert np.frombuffer(numbers, np.float64).tolist() == [1.0, 2.0, 3.0, 4.0]
    indptr, indices, values, *_ = speedups.parse_sparse_rows(b"{0\x0b5,\x001\x1f6\x00}", 1, 3, b"\x00\x00\x01")
    assert np.frombuffer(indices, np.int64).tolist() == [0, 1] and np.frombuffer(values).tolist() == [5.0, 6.0]


def test_a_name_holding_a_control_character_must_be_quoted():
    # Weka reads the name a and the type b, and refuses it
    document = b"@relation r\n@attribute a\x0cb numeric\n@data\n1\n"
    with pytest.raises(ArffError, match=r"^f:2: attribute 'a': unknown type 'b numeric'"):
        read_on("compiled", document)
    schema, _ = read_on("compiled", document.replace(b"a\x0cb", b"'a\x0cb'"))
    assert schema.attributes[0].name == "a\x0cb"


#: Every control character, the space, DEL, and texts holding them among other characters.
AWKWARD = [chr(code) for code in [*range(0x21), 0x7F]] + ["a\x00b", "\x0c", " x ", "x\x1f", "\x7fz", "?\x01"]


def awkward_data() -> tuple[Schema, Chunk]:
    """A string column of :data:`AWKWARD`, a nominal column of such labels, names and a relation name holding them."""
    labels = ("l\x0bm", "\x00", "n")
    schema = Schema(
        "r\x0cs",
        (
            Attribute("a\x00b", STRING),
            Attribute("c\x1f", NOMINAL, labels=labels),
            Attribute("\x7fe f", NUMERIC, declared_type="numeric"),
        ),
    )
    values = np.zeros((len(AWKWARD), 3))
    values[:, 1] = np.arange(len(AWKWARD)) % len(labels)
    values[:, 2] = np.arange(len(AWKWARD))
    return schema, Chunk(values, {0: list(AWKWARD)})


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("path", PATHS)
def test_what_the_writer_writes_reads_back_the_same(path, sparse):
    schema, chunk = awkward_data()
    text = write_text(schema, chunk, sparse=sparse)
    assert "'\x0c'" in text and "'a\\x00b'" not in text  # quoted as it is, not escaped
    back_schema, chunks = read_on(path, text.encode("utf-8"))
    back = read_all(io.BytesIO(text.encode("utf-8")), chunk_rows=1 if path == "one row a chunk" else 10_000)
    assert_same_data(schema, chunk, *back)
    assert back_schema == schema and sum(c.n_rows for c in chunks) == len(AWKWARD)


# --------------------------------------------------------------------------
# Weka itself

#: Prints Weka's reading of each file on one line: the relation, the attribute names and every value, each text as its
#: characters' codes (so that control characters come through): "t" then the codes in hexadecimal, parted by ".".
CODES_PROBE = """
import java.io.*;
import weka.core.*;

public class WekaCodes {
    static String codes(String text) {
        StringBuilder out = new StringBuilder("t");
        for (int k = 0; k < text.length(); k++)
            out.append(k == 0 ? "" : ".").append(Integer.toHexString(text.charAt(k)));
        return out.toString();
    }

    public static void main(String[] files) throws Exception {
        for (String file : files) {
            StringBuilder line = new StringBuilder(file).append('\\t');
            try (Reader reader = new BufferedReader(new InputStreamReader(new FileInputStream(file), "UTF-8"))) {
                Instances data = new Instances(reader);
                line.append("OK ").append(codes(data.relationName()));
                for (int column = 0; column < data.numAttributes(); column++)
                    line.append(' ').append(codes(data.attribute(column).name()));
                for (int row = 0; row < data.numInstances(); row++) {
                    line.append(" |");
                    for (int column = 0; column < data.numAttributes(); column++) {
                        Instance instance = data.instance(row);
                        line.append(' ').append(instance.isMissing(column) ? "?"
                            : data.attribute(column).isNumeric() ? codes(Double.toString(instance.value(column)))
                            : codes(instance.stringValue(column)));
                    }
                }
            } catch (Exception error) {
                line.append("ERR ").append(error.toString().replace('\\n', ' '));
            }
            System.out.println(line);
        }
    }
}
"""


def _text(codes: str):
    return None if codes == "?" else "".join(chr(int(code, 16)) for code in codes[1:].split(".") if code)


def weka_reads(tmp_path, documents: dict[str, bytes]) -> dict[str, tuple]:
    """Weka's reading of each document: (relation, names, rows of texts), numbers as Java's Double.toString."""
    files = {}
    for name, document in documents.items():
        (tmp_path / f"{name}.arff").write_bytes(document)
        files[str(tmp_path / f"{name}.arff")] = name
    completed = subprocess.run(
        [*weka_java(CODES_PROBE), *files], capture_output=True, text=True, timeout=300, encoding="utf-8"
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    readings = {}
    for line in completed.stdout.splitlines():
        path, result = line.split("\t", 1)
        assert result.startswith("OK "), result
        header, *rows = result[3:].split(" | ")
        relation, *names = map(_text, header.split(" "))
        readings[files[path]] = (relation, names, [list(map(_text, row.split(" "))) for row in rows])
    return readings


@needs_weka
def test_weka_reads_the_control_characters_as_we_do(tmp_path):
    schema, chunk = awkward_data()
    documents = {
        "dense": DENSE,
        "sparse": SPARSE,
        **{
            f"written-{form}": write_text(schema, chunk, sparse=form == "sparse").encode()
            for form in ("dense", "sparse")
        },
    }
    weka = weka_reads(tmp_path, documents)
    assert weka["dense"] == ("r", ["s", "t"], DENSE_ROWS)
    assert weka["sparse"][2] == [["5.0", "6.0", "x"], ["0.0", "7.0", "y"]]
    labels = schema.attributes[1].labels
    expected = [
        [text, labels[int(code)], f"{float(number)}"] for text, (code, number) in zip(AWKWARD, chunk.values[:, 1:])
    ]
    for form in ("dense", "sparse"):
        relation, names, rows = weka[f"written-{form}"]
        assert (relation, names) == (schema.relation, [a.name for a in schema.attributes])
        assert rows == expected, form
