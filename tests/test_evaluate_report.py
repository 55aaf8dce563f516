"""``filterkit evaluate --report out.html`` (issue 21, item 4): one self-contained HTML file with the
settings, the table, the paired tests and the plots; parsed here, and opened in a headless Chromium
when one is installed."""

from __future__ import annotations

import base64
import importlib.util
import io
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from chain_helpers import REAL
from filterkit import testing

IRIS = REAL / "iris.arff"
FAST = ("--folds", "3", "--svm-c-values", "1", "--svm-inner-folds", "2")
ARGUMENTS = (*FAST, "--each-class", "--min-positives", "10", "--stats", "--train-fraction", "0.5,1", "--compare")

pytestmark = pytest.mark.slow
needs_matplotlib = pytest.mark.skipif(
    importlib.util.find_spec("matplotlib") is None,
    reason="--report needs matplotlib (pip install 'filterkit-arff[plot]')",
)


class Page(HTMLParser):
    """The tags, their attributes and the text of an HTML page."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def write_report(path, *chains):
    result = testing.run_filterkit("evaluate", "-q", *ARGUMENTS, "--report", path, IRIS, *chains)
    assert result.status == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """The report of one evaluation ('minmax' against 'l2') written twice, by two runs: the
    first run's result and the paths of both pages."""
    folder = tmp_path_factory.mktemp("reports")
    first = write_report(folder / "a.html", "minmax ", "l2")
    write_report(folder / "b.html", "minmax ", "l2")
    return first, folder / "a.html", folder / "b.html"


@needs_matplotlib
def test_the_report_is_one_self_contained_page_with_settings_table_tests_and_plots(reports):
    from PIL import Image

    result, path, _ = reports
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    text = "".join(page.text)
    # The table printed on stdout is the one in the page.
    assert result.stdout.decode().strip().splitlines()[1] in text
    assert "Paired tests against the first chain" in text and "Wilcoxon p" in text
    paired_rows = [t for t, _ in page.tags if t == "tr"]
    assert len(paired_rows) > 2 * 8  # per fraction, one row per measure, beside the settings' rows
    # Nothing is fetched when the page is viewed: no script, no stylesheet link, every image a data URI.
    assert not [t for t, _ in page.tags if t in ("script", "link", "iframe")]
    images = [a["src"] for t, a in page.tags if t == "img"]
    assert all(src.startswith("data:image/png;base64,") for src in images)
    assert not [a for t, a in page.tags for key in ("href", "src") if key in a and "://" in a[key]]
    # Learning curves, then per fraction the per-task scatter of 'l2' against 'minmax'.
    captions = [c for c in page.text if c.startswith(("Learning curves", "F1 per task"))]
    assert captions == [
        "Learning curves: macro-averaged AUC and F1",
        "F1 per task (train 0.5): 'l2' against 'minmax'; above the line it wins",
        "F1 per task (train 1): 'l2' against 'minmax'; above the line it wins",
    ]
    for src in images:
        picture = Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1])))
        assert picture.format == "PNG" and min(picture.size) >= 300


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
def test_a_headless_browser_renders_the_report(reports, tmp_path):
    browser = next(
        (shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None
    )
    if browser is None:
        pytest.skip("no headless Chromium installed (apt-get install chromium)")
    _, path, _ = reports
    flags = ["--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(
        [browser, *flags, "--dump-dom", path.as_uri()], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert dom.count("<img") == 3 and "Paired tests against the first chain" in dom
    shot = tmp_path / "shot.png"
    subprocess.run(
        [browser, *flags, f"--screenshot={shot}", "--window-size=1200,2400", path.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
