"""``evaluate --report/--plot`` never lose a finished evaluation (issue 37, item 11): a chain's text is
drawn as typed, never read as math text or TeX; an output that cannot be written is refused before the
cross-validation; the table is printed before any figure is drawn."""

from __future__ import annotations

import html
import importlib.util

import pytest

from chain_helpers import REAL
from filterkit import reports
from filterkit.errors import FilterkitError
from filterkit.evaluation import ChainSpec, Settings, evaluate

IRIS = REAL / "iris.arff"
FAST = ("--folds", "2", "--svm-c-values", "1", "--svm-inner-folds", "2")
EACH = (*FAST, "--each-class", "--min-positives", "10", "--train-fraction", "0.5,1")
#: '$|^$' is a broken formula to matplotlib's math text: drawn as math, the chain's name raised ValueError.
MATH = r"remove --regex 'x$|^$' l2"

needs_matplotlib = pytest.mark.skipif(
    importlib.util.find_spec("matplotlib") is None,
    reason="the plots need matplotlib (pip install 'filterkit-arff[plot]')",
)


@pytest.fixture(scope="module")
def document():
    """An evaluation of two chains, the second named like a formula, on two fractions of three tasks."""
    chains = [ChainSpec("l2", [("l2", {})]), ChainSpec(MATH, [("l2", {})])]
    settings = Settings(folds=2, train_fractions=(0.5, 1.0), each_class=True, min_positives=10)
    settings.classifier_params = {"c_values": "1", "inner_folds": 2}
    return evaluate(IRIS, chains, settings).document


@needs_matplotlib
@pytest.mark.slow
def test_a_chain_named_like_math_text_is_drawn_as_typed_even_under_usetex(document):
    import matplotlib

    for rc in ({}, {"text.usetex": True}):  # usetex: TeX (absent here, and wrong for '^' and '$') is not asked
        with matplotlib.rc_context(rc):
            page = reports.html_page(document)
            assert reports.learning_curves_png(document)[:8] == b"\x89PNG\r\n\x1a\n"
        assert page.count("<svg") == 3 and html.escape(f"F1 per task (train 1): '{MATH}' against 'l2'") in page


@needs_matplotlib
@pytest.mark.slow
def test_the_command_reports_and_plots_a_chain_named_like_math_text(run_filterkit, tmp_path):
    page, curves = tmp_path / "r.html", tmp_path / "c.png"
    result = run_filterkit("evaluate", "-q", *EACH, "--report", page, "--plot", curves, "--compare", IRIS, "l2", MATH)
    assert result.status == 0, result.stderr
    assert MATH in result.stdout.decode() and html.escape(MATH) in page.read_text(encoding="utf-8")
    assert curves.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("name", ["curves.arff", "curves", "no/such/folder/curves.png"])
def test_a_plot_that_cannot_be_written_is_refused_before_the_cross_validation(run_filterkit, tmp_path, name):
    result = run_filterkit("evaluate", "-q", *FAST, "--positive", "Iris-setosa", "--plot", tmp_path / name, IRIS, "l2")
    assert result.status == 1 and result.stdout == b"", result.stderr
    assert result.stderr.startswith("filterkit: error:") and result.stderr.count("\n") == 1
    assert "ending in .png" in result.stderr or "cannot write" in result.stderr
    assert list(tmp_path.iterdir()) == []


@needs_matplotlib
@pytest.mark.slow  # matplotlib's import
def test_the_table_is_printed_before_a_figure_is_drawn(run_filterkit, tmp_path, monkeypatch):
    def broken(document):
        raise FilterkitError("the figure could not be drawn")

    monkeypatch.setattr(reports, "learning_curves_png", broken)
    result = run_filterkit(
        "evaluate",
        "-q",
        *FAST,
        "--positive",
        "Iris-setosa",
        "--report",
        tmp_path / "r.html",
        "--plot",
        tmp_path / "c.png",
        IRIS,
        "l2",
    )  # each output written only once every one is rendered: none
    assert result.status == 1 and "the figure could not be drawn" in result.stderr
    table = result.stdout.decode().splitlines()
    assert table[0].startswith("2-fold CV, seed 1") and table[2].split()[:2] == ["l2", "1"]
    assert list(tmp_path.iterdir()) == []


@needs_matplotlib
@pytest.mark.slow
def test_rendering_leaves_a_notebooks_matplotlib_as_it_was(document):
    import matplotlib

    backend = matplotlib.get_backend()
    matplotlib.use("svg")
    try:
        reports.html_page(document)
        reports.learning_curves_png(document)
        assert matplotlib.get_backend() == "svg" and not matplotlib.rcParams["text.usetex"]
    finally:
        matplotlib.use(backend)
