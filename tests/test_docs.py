"""The documentation keeps up: docs/stages.md is what docs/make_stages.py writes from the stages' own
declarations, and every relative link of README.md, CONTRIBUTING.md and docs/ reaches a file, and a heading
when it names one."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"^```.*?^```$|`[^`\n]*`", re.MULTILINE | re.DOTALL)


def test_stages_md_is_what_make_stages_writes():
    spec = importlib.util.spec_from_file_location("make_stages", ROOT / "docs" / "make_stages.py")
    assert spec is not None and spec.loader is not None
    make_stages = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_stages)
    written = (ROOT / "docs" / "stages.md").read_text(encoding="utf-8")
    assert written == make_stages.stages_markdown(), "docs/stages.md is out of date: run python docs/make_stages.py"


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the headings of ``page``: lower case, punctuation dropped, spaces as
    hyphens, a repeated one numbered."""
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#+ (.+)$", CODE.sub("", page.read_text(encoding="utf-8")), re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-")
        seen[slug] = seen.get(slug, -1) + 1
        if seen[slug]:
            seen[f"{slug}-{seen[slug]}"] = 0
    return set(seen)


def links(page: Path) -> list[str]:
    """The relative link targets of ``page``, outside code."""
    text = CODE.sub("", page.read_text(encoding="utf-8"))
    return [target for target in LINK.findall(text) if not re.match(r"[a-z]+:", target)]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_link_reaches_a_file_and_its_heading(page):
    for target in links(page):
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{page.name}: {target}: no such file"
        if anchor:
            assert anchor in anchors(linked), f"{page.name}: {target}: no such heading"


def test_the_anchors_are_githubs():
    page = ROOT / "docs" / "plugins.md"
    assert {"8-testing-a-plugin", "from-an-empty-folder-to-a-published-plugin", "register_stages"} <= anchors(page)


def test_a_numpy_scalar_in_a_stage_state_is_saved_as_its_number(run_filterkit, monkeypatch, tmp_path):
    """docs/plugins.md, "Fitted state for model files": a numpy scalar needs no conversion."""
    from filterkit_plugins.normalizers import MinMaxNormalizer

    state = MinMaxNormalizer.state
    monkeypatch.setattr(MinMaxNormalizer, "state", lambda self: {**state(self), "rows": np.int64(150)})
    model = tmp_path / "m.json"
    assert run_filterkit("--save-model", model, ROOT / "arff_samples" / "iris.arff", "minmax").status == 0
    assert json.loads(model.read_text())["stages"][0]["state"]["rows"] == 150


def test_architecture_md_names_every_module_of_the_package_and_no_module_that_is_gone():
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"^\| `([\w./]+\.(?:py|c|h))` \|", page, re.MULTILINE))
    modules = {
        path.name
        for folder in ("filterkit", "plugins")
        for path in (ROOT / folder).rglob("*")
        if path.suffix in (".py", ".c", ".h") and "__pycache__" not in path.parts
    }
    assert modules - named == set(), "modules docs/architecture.md does not name"
    assert named - modules == set(), "modules docs/architecture.md names that do not exist"
