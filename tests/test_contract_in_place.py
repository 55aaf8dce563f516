"""The stage contract holds when a stage changes its input chunk in place (the class column then
differs from what it was, though the stage's input and output are one object), and refuses CSR
arrays the compiled parts cannot read, naming the stage (a hostile review's findings)."""

from __future__ import annotations

import pytest

from chain_helpers import REAL, TESTS

IN_PLACE = TESTS / "plugins_fixtures" / "in_place"
OH0 = REAL / "oh0.wc.arff"  # sparse, its class (10 labels) first
IRIS = REAL / "iris.arff"  # dense, its class last


@pytest.mark.parametrize("before", [[], ["l2"]], ids=["first-stage", "after-a-stage"])
@pytest.mark.parametrize(
    "data, class_option",
    [(OH0, ["-c", "first"]), (IRIS, [])],  # (standard output streams: the header is written before the error)
    ids=["sparse", "dense"],
)
def test_a_stage_changing_the_class_in_place_is_refused(run_filterkit, data, class_option, before):
    """After a stage, the class column compared with is the one that stage's check read (a copy,
    not a view of the chunk the next stage changes)."""
    result = run_filterkit(*class_option, data, *before, "doubleinplace", plugins_dir=IN_PLACE)
    assert result.status == 1
    assert "stage 'doubleinplace'" in result.stderr and "broke the stage contract" in result.stderr
    # iris's class (a code 0 to 2) doubled stays a label's code for two of its labels: the
    # comparison with the class as it was before the stage ran catches it
    if data == IRIS:
        assert "it changed the class column's values" in result.stderr
    assert result.stderr.count("\n") == 1


#: A step of stored-values maps: a map alone, or two (the fixture's, then l2's)
MAP_STEPS = pytest.mark.parametrize("after", [[], ["l2"]], ids=["one-map", "two-maps"])


@MAP_STEPS
def test_a_stored_values_map_changing_the_class_in_place_is_refused_by_name(run_filterkit, after):
    """The error names the map's stage, not the step's last one."""
    result = run_filterkit("-c", "first", OH0, "doublemapinplace", *after, plugins_dir=IN_PLACE)
    assert result.status == 1
    assert "stage 'doublemapinplace'" in result.stderr
    assert "its stored-values map changed the class column's values" in result.stderr


@MAP_STEPS
def test_a_stored_values_map_cannot_write_to_the_rows_structure(run_filterkit, after):
    """The column indices a map is given are read-only: writing to them would renumber the entries for
    every later map and for the output (the step's result is not checked for them again)."""
    result = run_filterkit("-c", "first", OH0, "renumberinplace", *after, plugins_dir=IN_PLACE)
    assert result.status == 1
    assert "stage 'renumberinplace'" in result.stderr and "read-only" in result.stderr
    assert result.stderr.count("\n") == 1


def test_changing_features_in_place_is_allowed(run_filterkit):
    """Doubling the features in place, the class left as it was, is the stage's own business."""
    plain = run_filterkit(IRIS)
    doubled = run_filterkit(IRIS, "doublefeaturesinplace", plugins_dir=IN_PLACE)
    assert doubled.status == 0
    plain_rows = [line.split(",") for line in plain.stdout.decode().splitlines() if line[:1].isdigit()]
    doubled_rows = [line.split(",") for line in doubled.stdout.decode().splitlines() if line[:1].isdigit()]
    assert len(doubled_rows) == len(plain_rows) == 150
    assert [row[-1] for row in doubled_rows] == [row[-1] for row in plain_rows]
    assert [float(row[0]) for row in doubled_rows] == [2 * float(row[0]) for row in plain_rows]


@pytest.mark.parametrize(
    "stage, message",
    [
        ("unsignedindices", "have indices of uint64 and indptr of uint64, expected int32 or int64"),
        ("listarrays", "the chunk's CSR arrays are a builtins.list, a builtins.list, a builtins.list"),
    ],
)
def test_csr_arrays_the_compiled_parts_cannot_read_are_refused_naming_the_stage(run_filterkit, stage, message):
    result = run_filterkit("-c", "first", OH0, stage, "l2", plugins_dir=IN_PLACE)
    assert result.status == 1
    assert f"stage '{stage}'" in result.stderr and message in result.stderr
    assert "'l2'" not in result.stderr


def test_a_map_s_result_is_checked_against_its_output_schema(run_filterkit):
    """A step of maps is not read again for its structure and class column, which hold by construction,
    but its columns are held to the output schema the stage declares."""
    result = run_filterkit("-c", "first", OH0, "widenedmap", plugins_dir=IN_PLACE)
    assert result.status == 1
    assert "stage 'widenedmap'" in result.stderr
    assert "it returned 3183 columns; its output schema declares 3184" in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_class_changed_in_place_after_a_map_is_compared_with_the_map_s_class(run_filterkit, tmp_path):
    """After a step of maps, the next stage's contract compares with the class column the step
    left (handed on, not read again): ``classonemap`` sets every stored class code to 1, which
    ``doubleinplace`` makes 2, still a label's code of the four."""
    data = tmp_path / "four_labels.arff"
    data.write_text(
        "@relation four\n@attribute class {a,b,c,d}\n@attribute x numeric\n@attribute y numeric\n@data\n"
        "{0 c,1 1.5}\n{1 2,2 3}\n{0 d,2 -1}\n{0 b,1 4,2 0.25}\n"
    )
    result = run_filterkit("-c", "first", data, "classonemap", "doubleinplace", plugins_dir=IN_PLACE)
    assert result.status == 1
    assert "stage 'doubleinplace'" in result.stderr and "it changed the class column's values" in result.stderr
    passed = run_filterkit("-c", "first", data, "classonemap", "l2", "binarize", plugins_dir=IN_PLACE)
    assert passed.status == 0, passed.stderr
    assert passed.stdout.decode().splitlines()[-4:] == ["{0 b,1 1}", "{1 1,2 1}", "{0 b,2 1}", "{0 b,1 1,2 1}"]


def test_a_map_that_declares_it_changes_the_class_passes_in_a_fused_step(run_filterkit):
    """A map declaring changes_class, then l2's map (which leaves the class as it finds it): the later
    map and the step's result are compared with the class as the declaring map left it, not as it came."""
    plain = run_filterkit("-c", "first", OH0, "l2")
    changed = run_filterkit("-c", "first", OH0, "classonemap", "l2", plugins_dir=IN_PLACE)
    assert changed.status == 0, changed.stderr
    plain_rows = [line for line in plain.stdout.decode().splitlines() if line.startswith("{")]
    changed_rows = [line for line in changed.stdout.decode().splitlines() if line.startswith("{")]
    assert len(changed_rows) == len(plain_rows) == 1003
    first_labels = {row.split(",")[0] for row in changed_rows if row.startswith("{0 ")}
    assert len(first_labels) == 1  # every stored class code is now the second label's
    assert len({row.split(",")[0] for row in plain_rows if row.startswith("{0 ")}) > 1
    assert [row.split(",")[1:] for row in changed_rows] == [row.split(",")[1:] for row in plain_rows]


#: Two classes first, then ``x`` and ``y``; and the same with a nominal ``d`` second
TWO_LABELS = "@relation r\n@attribute class {a,b}\n@attribute x numeric\n@attribute y numeric\n@data\n"
WITH_NOMINAL = "@relation r\n@attribute class {a,b}\n@attribute d {a,b}\n@attribute y numeric\n@data\n"
ROWS = "{0 b,2 3}\n{1 1,2 1}\n{0 b,1 1}\n"
NOMINAL_ROWS = "{0 b,1 b,2 3}\n{1 b,2 1}\n{0 b}\n"


@pytest.mark.parametrize(
    "stages, named, message",
    [
        (["renumberthroughbase"], "renumberthroughbase", "it changed the class column's values"),
        # the next map of the step finds the class's entries changed, and is named (as before the map steps)
        (["renumberthroughbase", "l2"], "l2", "its stored-values map changed the class column's values"),
        (["indexpasttheend"], "indexpasttheend", "hold a column index outside 0 to 2"),
        (["swapclass"], "swapclass", "it changed the class column's values"),
        (["swapclass", "l2"], "swapclass", "it changed the class column's values"),
        (["classcode99", "l2"], "classcode99", "is nominal with 2 labels, and a value came back as 99.0"),
    ],
    ids=["renumber", "renumber-then-l2", "index-past-the-end", "swap", "swap-then-l2", "class-99-then-l2"],
)
def test_a_map_getting_around_the_chain_s_guards_is_still_caught(run_filterkit, tmp_path, stages, named, message):
    """The read-only views a map is given can be got around (their base, their flags); a step's result
    is still checked whole, the structure and the class column read again, so the error comes before
    any corrupt row (a hostile review of fb74155, which trusted the views and crashed or wrote bad
    rows). A map stage moving the class in its schema runs by its transform, and one changing the class
    ends its step, so that its own contract checks the class's labels."""
    data = tmp_path / "r.arff"
    data.write_text(WITH_NOMINAL + NOMINAL_ROWS if stages[0] == "swapclass" else TWO_LABELS + ROWS)
    result = run_filterkit("-c", "first", data, *stages, plugins_dir=IN_PLACE)
    assert result.status == 1, result.stdout
    assert f"stage '{named}'" in result.stderr and message in result.stderr
    assert result.stderr.count("\n") == 1


def test_the_class_handed_on_is_read_where_the_schema_puts_it(run_filterkit, tmp_path):
    """After a stage that moves the class (declared), the next stage compares with the class where it
    now is, not where it was."""
    data = tmp_path / "r.arff"
    data.write_text(WITH_NOMINAL + NOMINAL_ROWS)
    result = run_filterkit("-c", "first", data, "swapclassdeclared", "binarize", plugins_dir=IN_PLACE)
    assert result.status == 0, result.stderr
    assert result.stdout.decode().splitlines()[-3:] == ["{0 b,1 b,2 1}", "{1 b,2 1}", "{0 b}"]
