"""A stage whose output is many times wider than its input says so, once, with the option that avoids it."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from filterkit.plugins import load_plugins
from filterkit.runner import WIDENING_ATTRIBUTES, WIDENING_FACTOR, widening
from filterkit.schema import Attribute, Schema

OH0 = Path(__file__).parent.parent / "arff_samples" / "oh0.wc.arff"  # 10 classes, 3,182 words
SHAPE_WARNING = (
    "filterkit: warning: stage 1 'shape' writes 31,821 attributes from 3,183 (10.0×): one copy of each "
    "feature per class label (per label of multi-label data); --positive LABEL (--label NAME on multi-label "
    "data) or --multiclass max shapes it once\n"
)


@pytest.mark.slow
@pytest.mark.parametrize("quiet", [[], ["-q"]])
def test_one_vs_rest_shaping_of_ten_classes_warns_once_with_the_fix(run_filterkit, tmp_path, quiet):
    """-q keeps the warning: it is about the output, not progress, and a script needs it most."""
    result = run_filterkit(*quiet, "-o", tmp_path / "out.arff", OH0, "shape")
    assert result.status == 0
    assert result.stderr == SHAPE_WARNING


@pytest.mark.parametrize(
    "chain",
    [
        ["--positive", "Ethics", OH0, "shape"],
        [OH0, "shape", "--multiclass", "max"],
        [OH0, "ordinal"],  # ×2.8: the normal widening of word counts
    ],
)
def test_shaping_once_or_a_normal_widening_gives_no_warning(run_filterkit, tmp_path, chain):
    result = run_filterkit("-o", tmp_path / "out.arff", *chain)
    assert (result.status, result.stderr) == (0, "")


@pytest.mark.slow
def test_applying_a_saved_wide_chain_does_not_warn_again(run_filterkit, tmp_path):
    model = tmp_path / "m.json"
    assert run_filterkit("--save-model", model, "-o", tmp_path / "a.arff", OH0, "shape").stderr == SHAPE_WARNING
    result = run_filterkit("apply", model, OH0, "-o", tmp_path / "b.arff")
    assert (result.status, result.stderr) == (0, "")


@pytest.fixture(scope="module")
def registry():
    return load_plugins()


@functools.cache  # schemas are frozen: the widths the parameters share are built once
def _schema(width: int) -> Schema:
    return Schema("r", tuple(Attribute(f"a{i}", "numeric") for i in range(width)))


@pytest.mark.parametrize(
    ("stage", "fix"),
    [
        ("shape", "--positive"),
        ("ordinal", "--max-thresholds"),
        ("discretize", "--binary"),
    ],
)
def test_each_widening_stage_names_the_option_that_avoids_it(registry, stage, fix):
    made = registry.make_stage(stage, {})
    width = 4_000
    wide = int(width * WIDENING_FACTOR)
    warning = widening(2, made, _schema(width), _schema(wide))
    assert warning is not None and warning.startswith(f"stage 3 '{stage}' writes 22,000 attributes from 4,000 (5.5×)")
    assert fix in warning
    assert widening(2, made, _schema(width), _schema(wide - 1)) is None  # just under the factor
    small = WIDENING_ATTRIBUTES // 10
    assert widening(0, made, _schema(small), _schema(small * 10)) is None  # ×10 but few attributes: cheap


def test_words_does_not_warn_that_its_output_is_wide(registry, run_filterkit, tmp_path):
    """One attribute per word is what ``words`` is for: a warning on every corpus (17,664 attributes
    from 2) was noise, and the attribute limit bounds its output."""
    assert widening(0, registry.make_stage("words", {}), _schema(2), _schema(17_666)) is None
    document = " ".join(f"w{k}" for k in range(12_000))
    data = tmp_path / "docs.arff"
    data.write_text(f"@relation docs\n@attribute text string\n@attribute class {{n,y}}\n@data\n'{document}',n\n")
    result = run_filterkit("-o", tmp_path / "out.arff", data, "words")
    assert (result.status, result.stderr) == (0, "")
    assert (tmp_path / "out.arff").read_text().count("@attribute") == 12_001
