"""benchmarks/appstream.py, multilabel.py's second corpus: DEP-11 components as documents labelled by their
categories, built without the network from a catalogue already under ``--inputs``."""

from __future__ import annotations

import gzip
import importlib.util
import json
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))  # multilabel.py imports corpora.py and appstream.py beside it
spec = importlib.util.spec_from_file_location("multilabel", BENCHMARKS / "multilabel.py")
assert spec is not None and spec.loader is not None
multilabel = importlib.util.module_from_spec(spec)
spec.loader.exec_module(multilabel)
appstream = sys.modules["appstream"]
corpora = sys.modules["corpora"]

HEADER = """---
File: DEP-11
Version: '0.16'
Origin: debian-bookworm-main
Time: 20230609T082314
"""
SAMPLE = (
    HEADER
    + """---
Type: desktop-application
ID: org.example.tiles
Package: tiles
Name:
  C: Tiles
  de: Kacheln
Summary:
  C: Slide tiles & merge them
  de: Kacheln schieben
Description:
  C: >-
    <p>A puzzle &amp; a <em>board</em> game.</p>

    <ul>

    <li>4x4 board</li>

    <li>undo</li>

    </ul>
Categories:
- Game
- LogicGame
- AudioVideo;
- Game
---
Type: operating-system
ID: org.debian.debian
Summary:
  C: The universal operating system
Categories:
- System
---
Type: font
ID: org.example.font
Package: fonts-example
Summary:
  C: A font
"""
)


def test_a_component_becomes_its_summary_and_plain_description_labelled_by_its_categories():
    header, components = appstream.read_components(SAMPLE)
    assert header["Origin"] == "debian-bookworm-main" and len(components) == 3
    found = [appstream.document(component) for component in components]
    assert found[0] == (
        "tiles",
        "Slide tiles & merge them\nA puzzle & a board game. 4x4 board undo",
        ["AudioVideo", "Game", "LogicGame"],
    )
    assert found[1] is None  # the operating system's own entry names no package
    assert found[2] == ("fonts-example", "A font\n", [])


def component(n: int, labels: list[str], words: str) -> str:
    """A DEP-11 component of package ``app{n}``."""
    categories = "".join(f"- {label}\n" for label in labels)
    return f"---\nType: desktop-application\nPackage: app{n}\nSummary:\n  C: {words} {n}\nCategories:\n{categories}"


def write_catalogue(path: Path, games: int = 30) -> None:
    """``games`` games (the odd ones logic games too), 6 science applications, and app0's description repeated."""
    stream = HEADER
    stream += "".join(component(n, ["Game", "LogicGame"] if n % 2 else ["Game"], "puzzle game") for n in range(games))
    stream += "".join(component(n, ["Science", "Math"], "algebra") for n in range(games, games + 6))
    stream += component(0, ["Game", "Science"], "puzzle game")
    with gzip.open(path, "wt", encoding="utf-8") as written:
        written.write(stream)


def test_build_writes_the_appstream_corpus_from_the_catalogue_under_inputs(tmp_path, monkeypatch):
    monkeypatch.setattr(multilabel, "MIN_TRAINING_POSITIVES", 8)
    monkeypatch.setattr(multilabel, "STEM", "appstream")
    write_catalogue(tmp_path / "Components-amd64.yml.gz")
    sizes = multilabel.build(tmp_path, "appstream")
    in_test = {n for n in range(36) if corpora.residue(f"app{n}", 10) in corpora.TEST_RESIDUES}
    assert sizes["labels"] == 2  # Game and LogicGame; Science and Math have too few training documents
    assert sizes["train"]["documents"] == len(set(range(30)) - in_test) and 8 <= len(in_test) <= 16
    assert sizes["test"]["documents"] == len(in_test & set(range(30)))
    assert sizes["positives"]["LogicGame"] == [len(set(range(1, 30, 2)) - in_test), len(set(range(1, 30, 2)) & in_test)]
    assert sizes["lists"] == "Components-amd64.yml.gz: debian-bookworm-main, Time: 20230609T082314"
    meka = (tmp_path / "data" / "appstream-train.arff").read_text(encoding="utf-8")
    assert meka.startswith("@relation 'appstream-train: -C 2'\n\n@attribute 'Game' {0,1}\n@attribute 'LogicGame'")
    assert "\n1,1,'puzzle game 3\\n'\n" in meka and 3 not in in_test
    assert meka.count("'puzzle game 0\\n'") == 1 and "\n1,0,'puzzle game 0\\n'\n" in meka  # the first of the two
    assert json.loads((tmp_path / "data" / "sizes.json").read_text()) == sizes


def test_the_source_option_names_the_files_folder_and_floor(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(multilabel, "MIN_TRAINING_POSITIVES", multilabel.MIN_TRAINING_POSITIVES)
    monkeypatch.setattr(multilabel, "STEM", multilabel.STEM)
    write_catalogue(tmp_path / "Components-amd64.yml.gz", games=60)  # ~42 training games, ~21 logic games
    monkeypatch.setattr(sys, "argv", ["multilabel.py", "build", "--source", "appstream", "--inputs", str(tmp_path)])
    multilabel.main()
    sizes = json.loads(capsys.readouterr().out)
    in_train = {n for n in range(60) if corpora.residue(f"app{n}", 10) not in corpora.TEST_RESIDUES}
    assert len(in_train) >= 30 > len(in_train & set(range(1, 60, 2)))
    assert sizes["min_training_positives"] == 30 and list(sizes["positives"]) == ["Game"]  # appstream's floor
    assert sorted(path.name for path in (tmp_path / "data").iterdir()) == [
        "appstream-test.arff",
        "appstream-test.jsonl",
        "appstream-train.arff",
        "appstream-train.jsonl",
        "sizes.json",
    ]
    assert multilabel.SOURCES["debtags"] == ("debtags", multilabel.DEFAULT_INPUTS, 70)


def test_the_catalogue_is_fetched_once_and_whole(tmp_path, monkeypatch):
    fetched = []

    def fake_fetch(url: str, path: Path) -> None:
        fetched.append(url)
        Path(path).write_bytes(b"catalogue")

    monkeypatch.setattr(appstream.urllib.request, "urlretrieve", fake_fetch)
    path = appstream.components_file(tmp_path)
    assert appstream.components_file(tmp_path) == path == tmp_path / "Components-amd64.yml.gz"
    assert fetched == [appstream.COMPONENTS_URL] and path.read_bytes() == b"catalogue"
    assert [entry.name for entry in tmp_path.iterdir()] == [path.name]
