"""Where filterkit strips blanks around a value it strips what Java's ``trim`` strips (up to the space),
not ``str.strip``'s Unicode white space: U+00A0 and U+3000 belong to names and values (issue 47, item 5;
the CSV reader's cells are tests/test_formats_csv.py's)."""

from __future__ import annotations

from chain_helpers import read_bytes


def test_remove_names_an_attribute_ending_in_a_no_break_space(run_filterkit, tmp_path):
    path = tmp_path / "blanks.arff"
    path.write_text("@relation r\n@attribute 'x\u00a0' numeric\n@attribute x numeric\n@data\n1,2\n", encoding="utf-8")
    result = run_filterkit(path, "remove", "--names", " x\u00a0 ,\t")
    assert result.status == 1 and "no attribute called ''" in result.stderr  # the empty name after the comma
    result = run_filterkit(path, "remove", "--names", " x\u00a0 ")
    assert result.status == 0, result.stderr
    schema, chunk = read_bytes(result.stdout)
    assert [a.name for a in schema.attributes] == ["x"] and chunk.dense_values().tolist() == [[2.0]]
