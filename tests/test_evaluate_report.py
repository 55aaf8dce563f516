"""``filterkit evaluate --report out.html`` (issue 21, item 4; issue 39, item 6): one self-contained HTML
file with the settings in words, the results and paired tests as tables and the figures as inline SVG,
each dot naming its task and values on hover; parsed here, and opened in a headless Chromium when one is
installed."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from chain_helpers import REAL
from filterkit import testing

IRIS = REAL / "iris.arff"
FAST = ("--folds", "3", "--svm-c-values", "1", "--svm-inner-folds", "2")
ARGUMENTS = (*FAST, "--each-class", "--min-positives", "10", "--stats", "--train-fraction", "0.5,1", "--compare")
ONE_TASK = ("--folds", "3", "--svm-c-values", "0.1,1", "--svm-inner-folds", "2", "--positive", "Iris-virginica")

pytestmark = pytest.mark.slow
needs_matplotlib = pytest.mark.skipif(
    importlib.util.find_spec("matplotlib") is None,
    reason="--report needs matplotlib (pip install 'filterkit-arff[plot]')",
)


class Page(HTMLParser):
    """The tags and their attributes, the text, each table's rows of cell texts, each ``<svg>``'s tags
    and each ``<title>``'s text of an HTML page."""

    def __init__(self, text: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.tables: list[list[list[str]]] = []
        self.svgs: list[list[tuple[str, dict]]] = []
        self.titles: list[str] = []
        self.open: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self.open.append(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.tables[-1][-1].append("")
        elif tag == "svg":
            self.svgs.append([])
        if "svg" in self.open:
            self.svgs[-1].append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        while self.open and self.open.pop() != tag:
            pass

    def handle_data(self, data):
        self.text.append(data)
        if self.open and self.open[-1] in ("td", "th"):
            self.tables[-1][-1][-1] += data
        elif self.open and self.open[-1] == "title" and "svg" in self.open:
            self.titles.append(data)


def write_report(path, arguments, *chains):
    result = testing.run_filterkit("evaluate", "-q", *arguments, "--report", path, IRIS, *chains)
    assert result.status == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """The report of one evaluation ('minmax' against 'l2', each class a task, two fractions) written
    twice, by two runs: the first run's result and the paths of both pages."""
    folder = tmp_path_factory.mktemp("reports")
    first = write_report(folder / "a.html", ARGUMENTS, "minmax ", "l2")
    write_report(folder / "b.html", ARGUMENTS, "minmax ", "l2")
    return first, folder / "a.html", folder / "b.html"


@pytest.fixture(scope="module")
def one_task(tmp_path_factory):
    """The commonest case, one task and two chains, with ``--json``: the document and the page's path."""
    path = tmp_path_factory.mktemp("one") / "one.html"
    result = write_report(path, ("--json", *ONE_TASK, "--stats", "--compare"), "minmax ", "l2")
    return json.loads(result.stdout), path


def axes_and_legends(svg: list[tuple[str, dict]]) -> tuple[int, int]:
    """How many panels an SVG figure of matplotlib's has, and how many legends."""
    ids = [attrs.get("id", "") for tag, attrs in svg if tag == "g"]
    return sum(bool(re.fullmatch(r"axes_\d+", i)) for i in ids), sum(bool(re.fullmatch(r"legend_\d+", i)) for i in ids)


@needs_matplotlib
def test_the_report_gives_settings_in_words_and_the_tables_numbers_as_tables(reports):
    result, path, _ = reports
    page = Page(path.read_text(encoding="utf-8"))
    text = "".join(page.text)
    assert "Protocol: 3-fold cross-validation, trained on fractions 0.5, 1 of the training rows, seed 1" in text
    # 3 tasks × 2 chains × 2 fractions × 3 folds: C from the one-value grid in every fit.
    assert "Classifier: svm; C chosen by 2-fold inner cross-validation (AUC) from 1: C 1 in 36 of 36 fits" in text
    assert "Tasks: Iris-setosa, Iris-versicolor, Iris-virginica, each against the rest, macro-averaged" in text
    assert '"svm"' not in text and "[1.0]" not in text and not [t for t, _ in page.tags if t in ("pre", "img")]
    # The numbers of the text table printed on stdout, row by row: the measures, then BEP and micro-averages.
    lines = result.stdout.decode().splitlines()
    results, paired, mcnemar = page.tables[0], page.tables[1], page.tables[2:]
    assert results[0] == ["chain", "train", "acc", "AUC", "F1", "prec", "recall", "spec", "P@20", "BEP"] + [
        "microF1",
        "microP",
        "microR",
    ]
    assert [row[:9] for row in results[1:]] == [line.split() for line in lines[2:6]]
    assert [row[9:] for row in results[1:]] == [line.split()[2:] for line in lines[7:11]]
    assert mcnemar == []
    # The paired tests: per fraction one row per measure, with the Wilcoxon and t-test columns the text gives.
    assert paired[0][-4:] == ["tasks W/T/L", "Wilcoxon p", "folds W/T/L", "corrected t-test p"]
    f1 = [row for row in paired if row[3] == "F1"]
    text_f1 = [line.split() for line in lines if line.strip().startswith("F1 ")]
    assert [[row[4], row[5], row[6], row[7], row[8]] for row in f1] == [
        [cells[1], cells[2], cells[4], cells[5], cells[7]] for cells in text_f1
    ]


@needs_matplotlib
def test_every_figure_is_inline_svg_with_labelled_axes_a_legend_per_panel_and_named_dots(reports):
    _, path, _ = reports
    page = Page(path.read_text(encoding="utf-8"))
    # Nothing is fetched when the page is viewed: no script, no stylesheet link, no image file.
    assert not [t for t, _ in page.tags if t in ("script", "link", "iframe", "img")]
    assert not [a for t, a in page.tags for key in ("href", "src") if key in a and "://" in a[key]]
    captions = [c for c in page.text if c.startswith(("Learning curves", "F1 per task"))]
    assert captions == [
        "Learning curves: macro-averaged AUC and F1",
        "F1 per task (train 0.5): 'l2' against 'minmax'; above the line it wins",
        "F1 per task (train 1): 'l2' against 'minmax'; above the line it wins",
    ]
    assert [axes_and_legends(svg) for svg in page.svgs] == [(2, 2), (1, 1), (1, 1)]
    assert all(svg[0][0] == "svg" and "viewbox" in svg[0][1] for svg in page.svgs)  # the parser lowers names
    text = "".join(page.text)
    for label in ("fraction of the training fold", "F1 of 'minmax'", "F1 of 'l2'", "equal F1", "a task (hover"):
        assert label in text
    # Per fraction, one dot per task, each naming it and its F1 under both chains, as the table per task has them.
    assert len(page.titles) == 2 * 3
    assert all(
        re.fullmatch(r"task Iris-\w+: F1 \d\.\d{3} under 'minmax', \d\.\d{3} under 'l2'", t) for t in page.titles
    )
    assert {t.split(":")[0] for t in page.titles} == {"task Iris-setosa", "task Iris-versicolor", "task Iris-virginica"}


@needs_matplotlib
def test_one_task_gets_a_figure_of_each_chains_folds_named_on_hover(one_task):
    document, path = one_task
    page = Page(path.read_text(encoding="utf-8"))
    captions = [c for c in page.text if c.startswith("AUC and F1 on each fold")]
    assert captions == ["AUC and F1 on each fold (train 1): task Iris-virginica, per chain"]
    assert [axes_and_legends(svg) for svg in page.svgs] == [(2, 2)]
    expected = [
        f"'{r['chain']}', task Iris-virginica, fold {fold + 1}: {label} {value:.3f}"
        for measure, label in (("auc", "AUC"), ("f1", "F1"))
        for r in document["results"]
        for fold, value in enumerate(r["per_fold"][measure])
    ]
    assert page.titles == expected and len(expected) == 2 * 2 * 3
    # One task: no test over tasks in the paired table, only the one over folds.
    paired = page.tables[1]
    assert paired[0] == ["chain", "baseline", "train", "measure", "difference", "folds W/T/L", "corrected t-test p"]
    auc = document["paired"][0]["measures"]["auc"]
    assert ["l2", "minmax", "1", "AUC", f"{auc['difference']:+.4f}"] in [row[:5] for row in paired]
    chosen = [fit["C"] for r in document["results"] for fit in r["classifier"]]
    assert f"from 0.1, 1: C 0.1 in {chosen.count(0.1)} of 6 fits, C 1 in {chosen.count(1.0)} of 6 fits" in "".join(
        page.text
    )


@needs_matplotlib
def test_a_mean_over_fewer_folds_is_marked_and_explained_in_the_report(one_task):
    from filterkit import reports

    document, _ = one_task
    document = json.loads(json.dumps(document))
    document["results"][0]["per_fold"]["auc"][1] = None  # the second fold had no AUC
    page = Page(reports.html_page(document))
    minmax = next(row for row in page.tables[0] if row[0] == "minmax")
    assert minmax[3] == f"{document['macro'][0]['auc']:.3f}*" and not minmax[4].endswith("*")
    text = "".join(page.text)
    assert "* a mean over fewer folds than were run: a fold without the measure is left out" in text
    assert "AUC of 'minmax' (train 1): task Iris-virginica over 2 of 3 folds" in text
    assert len(page.titles) == 2 * 2 * 3 - 1  # the fold without an AUC has no dot


@needs_matplotlib
def test_the_same_run_writes_the_same_bytes(reports):
    _, first, second = reports
    assert first.read_bytes() == second.read_bytes()


def test_a_report_that_cannot_be_written_is_refused_before_any_work(run_filterkit, tmp_path):
    missing = tmp_path / "no" / "report.html"
    result = run_filterkit("evaluate", "-q", "--report", missing, IRIS, "l2")
    assert result.status == 1 and f"cannot write {missing}: no folder" in result.stderr
    assert result.stderr.count("\n") == 1 and result.stdout == b""
    folder = run_filterkit("evaluate", "-q", "--report", tmp_path, IRIS, "l2")
    assert folder.status == 2 and "is a directory" in folder.stderr
    same = run_filterkit("evaluate", "-q", "--report", IRIS, IRIS, "l2")
    assert same.status == 2 and "the same file" in same.stderr


@needs_matplotlib
@pytest.mark.parametrize("which", ["reports", "one_task"])
def test_a_headless_browser_renders_the_report_its_tables_and_figures(request, which, tmp_path):
    """Each page as a person sees it: the browser's DOM holds the tables and the SVG dots' titles, and its
    screenshot shows the dots' blue (matplotlib's C0)."""
    from PIL import Image

    browser = next(
        (shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None
    )
    if browser is None:
        pytest.skip("no headless Chromium installed (apt-get install chromium)")
    path = request.getfixturevalue(which)[1]
    page = Page(path.read_text(encoding="utf-8"))
    flags = ["--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(
        [browser, *flags, "--dump-dom", path.as_uri()], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert dom.count("<svg") == len(page.svgs) and dom.count("<table") == len(page.tables)
    assert dom.count("<title>") == 1 + len(page.titles)
    shot = tmp_path / f"{which}.png"
    subprocess.run(
        [browser, *flags, f"--screenshot={shot}", "--window-size=1200,2400", path.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    picture = Image.open(shot).convert("RGB")
    colours = picture.getcolors(maxcolors=1 << 20)
    assert colours is not None
    blue = sum(count for count, (r, g, b) in colours if b > r + 60 and b > g + 30)
    assert blue > 300  # the dots (and the learning curves) drawn in matplotlib's blue


@needs_matplotlib
def test_one_chain_over_several_tasks_gets_each_tasks_folds(one_task):
    from filterkit import reports

    document, _ = one_task
    first, second = (json.loads(json.dumps(r)) for r in document["results"])
    second.update(chain=first["chain"], task="other")
    document = {**document, "results": [first, second], "macro": document["macro"][:1], "paired": []}
    page = Page(reports.html_page(document))
    assert [c for c in page.text if c.startswith("AUC and F1 on each fold")] == [
        "AUC and F1 on each fold (train 1): chain 'minmax', per task"
    ]
    assert page.titles[3] == f"'minmax', task other, fold 1: AUC {second['per_fold']['auc'][0]:.3f}"
    assert "task" in page.text  # the x axis's label, as SVG text


@needs_matplotlib
def test_a_classifier_whose_fits_do_not_record_a_grid_is_shown_with_the_options_given(one_task):
    from filterkit import reports

    document, _ = one_task
    document = json.loads(json.dumps(document))
    for result in document["results"]:
        for fit in result["classifier"]:
            del fit["inner_auc"]
    text = "".join(Page(reports.html_page(document)).text)
    assert "Classifier: svm, c values 0.1,1, inner folds 2" in text


@needs_matplotlib
def test_the_report_says_c_was_chosen_by_the_measure_given(tmp_path):
    """With --svm-c-by f1 the report said C was chosen by the inner AUC (found by a hostile review)."""
    path = tmp_path / "f1.html"
    options = ("--jobs", "1", "--folds", "3", "--svm-c-values", "0.1,1", "--positive", "Iris-versicolor")
    result = testing.run_filterkit("evaluate", *options, "--svm-c-by", "f1", "--report", path, IRIS, "minmax")
    assert result.status == 0, result.stderr
    text = "".join(Page(path.read_text(encoding="utf-8")).text)
    assert "C chosen by 5-fold inner cross-validation (F1) from 0.1, 1: " in text
