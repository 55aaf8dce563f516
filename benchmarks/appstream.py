"""A second label-set corpus for benchmarks/multilabel.py (``--source appstream``): Debian's AppStream metadata.

Debian publishes each release's AppStream (DEP-11) catalogue, ``Components-amd64.yml.gz``: a stream of YAML
documents, a header first (``File: DEP-11``, ``Origin``, ``Time``), then one document per component (a desktop
application mostly; also add-ons, console applications, fonts, codecs …).  ``documents`` fetches bookworm main's
once into ``--inputs`` (kept and reused; ~7 MB) and makes each component with a ``Package`` a document: its
summary, a line break, then its description with the markup stripped (DEP-11 keeps it as HTML-ish ``<p>``,
``<ul><li>``, ``<em>`` …; tags become spaces, entities are decoded, white space is collapsed), the ``C`` locale
of both.  Its labels are its ``Categories``: freedesktop.org's main categories (``Game``, ``AudioVideo``,
``Science`` …) and their additional ones (``LogicGame``, ``Player``, ``Math`` …) together, several an application,
a hierarchy whose labels come in correlated groups; debtags' ``use`` and ``works-with`` facets (§11) are two flat
facets instead.  A stray ``;`` (one component lists ``AudioVideo;``) is dropped.

multilabel.py then splits and writes the corpus as it does debtags' (its ``split``: a description repeated word
for word kept once, a component with no kept label left out, the test documents those whose package's name has a
SHA-256 ≡ 0, 1 or 2 mod 10, so an application's components stay on one side).  ``MIN_TRAINING_POSITIVES``, the
floor a category needs to be a label, was chosen from the training label counts alone, before any run: 1,370
training and 604 test components have a category; 18 categories have at least 30 training documents, 29 have at
least 20, 60 at least 10.  At 30 a label has ~13 test positives on average at its rarest (the split is 30 %), so
one document moves its recall by under 0.08, and each of the SVM's five inner folds holds ~6 positives to cut on;
below that a label's test F1 is too coarse for the Wilcoxon test over the labels to mean much.  The 18 labels keep
the shape: 12 main categories (``Audio`` and ``Video`` among them, each listed with ``AudioVideo``) and 6
additional ones (``LogicGame``, ``ArcadeGame``, ``BoardGame`` with ``Game``; ``Player``; ``Viewer``; ``Math``).
"""

from __future__ import annotations

import gzip
import html
import re
import urllib.request
from pathlib import Path

COMPONENTS_URL = "http://deb.debian.org/debian/dists/bookworm/main/dep11/Components-amd64.yml.gz"
MIN_TRAINING_POSITIVES = 30
TAG = re.compile(r"<[^>]*>")


def components_file(inputs: Path) -> Path:
    """The catalogue under ``inputs``, fetched first when it is not there (whole or not at all)."""
    path = inputs / COMPONENTS_URL.rsplit("/", 1)[1]
    if not path.exists():
        partial = path.with_name(path.name + ".part")
        urllib.request.urlretrieve(COMPONENTS_URL, partial)
        partial.rename(path)
    return path


def read_components(text: str) -> tuple[dict, list[dict]]:
    """The header and the components of a DEP-11 YAML stream (PyYAML's safe loader, libyaml's when built)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    header, *components = yaml.load_all(text, Loader=loader)
    return header, components


def plain_text(markup: str) -> str:
    """AppStream's description markup as plain words: tags as spaces, entities decoded, white space collapsed."""
    return " ".join(html.unescape(TAG.sub(" ", markup)).split())


def categories(component: dict) -> list[str]:
    """A component's categories, sorted, each once (a stray ``;`` dropped)."""
    names = {part.strip() for entry in component.get("Categories") or [] for part in str(entry).split(";")}
    return sorted(name for name in names if name)


def document(component: dict) -> tuple[str, str, list[str]] | None:
    """A component as multilabel.py's (package, text, labels): the ``C`` summary, a line break, the ``C``
    description as plain text; None for a component of no package (the operating system's own entry)."""
    if "Package" not in component:
        return None
    summary = (component.get("Summary") or {}).get("C", "")
    description = plain_text((component.get("Description") or {}).get("C", ""))
    return component["Package"], f"{summary}\n{description}", categories(component)


def documents(inputs: Path) -> tuple[list[tuple[str, str, list[str]]], str]:
    """Every component of a package as (package, text, categories), and the catalogue's origin and time."""
    with gzip.open(components_file(inputs), "rt", encoding="utf-8") as stream:
        header, components = read_components(stream.read())
    found = [row for row in map(document, components) if row is not None]
    return found, f"{COMPONENTS_URL.rsplit('/', 1)[1]}: {header['Origin']}, Time: {header['Time']}"
