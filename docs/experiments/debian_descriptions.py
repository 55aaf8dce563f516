"""A short-text task any Debian machine can build: package short descriptions labelled by two sections
(docs/RESULTS.md §8, Wang & Manning's own setting for `nbr`).

Usage: apt-cache dumpavail | python docs/experiments/debian_descriptions.py SECTION SECTION > OUT.arff

Each package's one-line ``Description:`` becomes a document (a string attribute ``text``), its
``Section:`` (an archive area such as ``contrib/`` dropped) the class. Packages of other sections are
left out, and so is a description that repeats an earlier one word for word (``foo`` and ``foo-dbg``
often share one), so that no document sits in both a training and a test fold. Documents keep the order
apt lists them in.
"""

from __future__ import annotations

import sys


def records(lines):
    """Each package stanza of ``apt-cache dumpavail`` as a dict of its single-line fields."""
    record: dict[str, str] = {}
    for line in lines:
        if not line.strip():
            if record:
                yield record
            record = {}
        elif not line[0].isspace() and ":" in line:
            field, value = line.split(":", 1)
            record[field] = value.strip()
    if record:
        yield record


def quoted(text: str) -> str:
    """``text`` as a single-quoted ARFF string."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def main(sections: list[str]) -> None:
    seen = set()
    rows = []
    for record in records(sys.stdin):
        section = record.get("Section", "").rsplit("/", 1)[-1]
        text = record.get("Description", "")
        if section in sections and text and text not in seen:
            seen.add(text)
            rows.append(f"{quoted(text)},{section}")
    print(f"@relation debian-{'-'.join(sections)}\n@attribute text string")
    print(f"@attribute section {{{','.join(sections)}}}\n@data")
    print("\n".join(rows))


if __name__ == "__main__":
    main(sys.argv[1:])
