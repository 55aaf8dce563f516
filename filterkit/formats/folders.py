"""A folder per class (``--from folders``, or a folder that holds a subfolder): each subfolder a class, each
file in it a document, read as Weka 3.6's ``TextDirectoryLoader`` reads such a tree (scikit-learn's
``load_files`` too).

The rows are Weka's: a string attribute ``text`` (the whole file) and a nominal ``@@class@@`` whose labels
are the subfolders' names, the class last.  What filterkit decides, and where it differs from Weka 3.6:

* **Order.** Class folders, and the files of each, are taken in the order of their names' bytes (as
  ``LC_ALL=C ls`` lists them): the labels in that order, then the rows class by class, as scikit-learn's
  ``load_files(shuffle=False)`` orders them.  Weka takes the order ``File.list()`` gives, the file
  system's, so the same tree can give other bytes on another disk.
* **Text.** A file is UTF-8 (Weka reads the platform's charset, or ``-charset``), read whole, its line ends
  kept as written; a byte-order mark at its start is left out, as the line formats leave it out (Weka keeps
  it, glued to the first word).  A file that is not UTF-8 is an error naming it and its line (Weka puts
  U+FFFD in place of the bytes and goes on); so is a file larger than the bound on a line or row
  (``FILTERKIT_MAX_LINE_BYTES``, 64 MiB), checked before it is read.
* **The relation** is the folder's own name (``docs`` for ``/data/docs``), as the other formats are named
  after their file; Weka names it by the folder's absolute path with ``/``, ``\\`` and ``:`` made ``_``,
  which would make the output depend on where the folder lies.
* **Files directly in the folder** (a README beside the class folders) are not documents: left out, as
  Weka leaves them out, and named in one stderr line (Weka says nothing).  Without ``--from``, a folder
  that holds an ARFF file is a folder of ARFF parts (which ``--engine dask`` reads), whatever subfolders
  it holds, and only a subfolder that is not hidden makes a folder per class
  (:func:`filterkit.formats.is_folder_of_classes`).
* **An empty class folder** is a label with no rows, as in Weka.  A folder with no class folder at all
  is an error.
* **Hidden entries** (a name starting with ``.``: ``.DS_Store``, ``.ipynb_checkpoints``, ``.git``) are
  left out, class folders and files alike; Weka and ``load_files`` read them (``.DS_Store`` is binary, a
  checkpoint folder a class).
* **A folder inside a class folder** is an error naming it (Weka prints ``failed to convert file`` and
  goes on without it, and without a word about the files inside); so is an entry that is no regular file
  (a pipe, a link to nothing).
* **Links** are followed, as Weka follows them: a linked class folder is a class, a linked file a
  document.  No reading goes deeper than a class folder's entries, so a link cannot make a loop.
* **Names.** A class folder's name is a label and must be UTF-8 text (an error otherwise).  Weka's
  ``-F`` (each file's name as an attribute) is not offered: ``words`` turns every string attribute into
  words, and the name (``pos/a.txt``) holds the class.

With a model's training header (``filterkit apply``), the class folders must be among its labels; a folder
of another name is an error naming it.  The scan lists the names only (no document is read); a pass reads
the documents in order, a chunk holding at most ``chunk_rows`` documents and about ``chunk_bytes`` of text.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from typing import IO, Iterator

import numpy as np

from filterkit.errors import ArffError, FilterkitError
from filterkit.formats import FormatOptions, Layout, Reopen
from filterkit.limits import VARIABLES, Limits
from filterkit.schema import NOMINAL, STRING, Attribute, Chunk, Schema
from filterkit.text import shown

#: The attributes, as TextDirectoryLoader names them.
TEXT = "text"
CLASS = "@@class@@"


@dataclass(frozen=True)
class Listing:
    """What a scan found: each class folder's name, its code in the schema's class labels, and its files."""

    folders: tuple[str, ...]
    codes: tuple[int, ...]
    files: tuple[tuple[str, ...], ...]


class FoldersFormat:
    """Reads a folder per class (see the module's description)."""

    def __init__(self, limits: Limits | None = None):
        self.limits = Limits.from_environment() if limits is None else limits

    def scan(self, opened: Reopen, name: str, options: FormatOptions, known_schema: Schema | None) -> Layout:
        """The class folders and their files, by name (no document is read); with ``known_schema``
        (a model's header) the folders must be among its class labels."""
        entries: list[os.DirEntry] = []
        loose: list[str] = []
        for entry in _entries(name):
            if _is_folder(entry):
                entries.append(entry)
            else:
                loose.append(entry.name)
        if loose:
            listed = ", ".join(shown(_named(file)) for file in loose[:3])
            more = f" and {len(loose) - 3} more" if len(loose) > 3 else ""
            print(
                f"filterkit: {_named(name)}: left out {listed}{more} beside the class folders "
                "(a document is a file inside a class folder)",
                file=sys.stderr,
            )
        if not entries:
            raise FilterkitError("no class folder (a subfolder per class, a file per document) in the folder", name)
        folders = tuple(_label(entry) for entry in entries)
        files = tuple(_documents(name, entry) for entry in entries)
        if known_schema is None:
            schema = Schema(_relation(name), (Attribute(TEXT, STRING), Attribute(CLASS, NOMINAL, labels=folders)))
            codes = tuple(range(len(folders)))
        else:
            schema, codes = known_schema, _known_codes(known_schema, folders, name)
        return Layout(schema, (), Listing(folders, codes, files), sum(map(len, files)))

    def scan_reads_rows(self, known_schema: Schema | None) -> bool:
        """Never: the scan reads names, not documents."""
        return False

    def chunks(self, stream: IO[bytes], name: str, layout: Layout, chunk_rows: int) -> Iterator[Chunk]:
        """The documents in order, as chunks of at most ``chunk_rows`` rows or about ``chunk_bytes`` of text."""
        listing = layout.details
        assert isinstance(listing, Listing)
        texts: list[str] = []
        classes: list[int] = []
        held = 0
        for folder, code, files in zip(listing.folders, listing.codes, listing.files):
            for file in files:
                text = self._document(os.path.join(name, folder, file))
                texts.append(text)
                classes.append(code)
                held += len(text)
                if len(texts) == chunk_rows or held >= self.limits.chunk_bytes:
                    yield _chunk(texts, classes)
                    texts, classes, held = [], [], 0
        if texts:
            yield _chunk(texts, classes)

    def _document(self, path: str) -> str:
        """A file's text; an error naming it when it is no regular file, too large or not UTF-8.  Read by
        its descriptor, in one read of the size ``fstat`` gives (and one that finds the end): a buffered
        file's ``read(bound)`` maps a buffer of the bound for every document."""
        bound = self.limits.line_bytes
        try:
            descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a pipe put in a file's place: no wait
        except OSError as error:
            raise FilterkitError(f"cannot read the document: {error.strerror}", _named(path)) from None
        try:
            status = os.fstat(descriptor)
            if not stat.S_ISREG(status.st_mode):
                raise FilterkitError("not a regular file: a class folder holds a file per document", _named(path))
            parts: list[bytes] = []
            held = 0
            while held <= bound:
                part = os.read(descriptor, max(status.st_size + 1 - held, 1 << 16))
                if not part:
                    break
                parts.append(part)
                held += len(part)
        except OSError as error:
            raise FilterkitError(f"cannot read the document: {error.strerror}", _named(path)) from None
        finally:
            os.close(descriptor)
        if held > bound:
            raise FilterkitError(
                f"a document larger than {bound:,} bytes: refused (set {VARIABLES['line_bytes']} to allow more)",
                _named(path),
            )
        data = b"".join(parts)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            line = data.count(b"\n", 0, error.start) + 1
            column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
            raise ArffError(f"not UTF-8 text ({error.reason} at byte {column})", _named(path), line) from None
        return text.removeprefix("\ufeff")


def _chunk(texts: list[str], classes: list[int]) -> Chunk:
    """A chunk of documents: the text column (its values 0, the texts beside) and the class codes."""
    values = np.zeros((len(texts), 2))
    values[:, 1] = classes
    return Chunk(values, {0: texts})


def _entries(folder: str) -> list[os.DirEntry]:
    """The entries of ``folder`` that are not hidden, in the order of their names' bytes."""
    try:
        with os.scandir(folder) as scanned:
            entries = [entry for entry in scanned if not entry.name.startswith(".")]
    except OSError as error:
        raise FilterkitError(f"cannot list the folder: {error.strerror}", _named(folder)) from None
    return sorted(entries, key=lambda entry: os.fsencode(entry.name))


def _is_folder(entry: os.DirEntry) -> bool:
    """Whether an entry is a folder, or a link to one."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def _documents(top: str, folder: os.DirEntry) -> tuple[str, ...]:
    """The names of a class folder's documents; an error naming a folder or other entry that is no file."""
    names = []
    for entry in _entries(folder.path):
        if _is_folder(entry):
            raise FilterkitError(
                f"a folder inside the class folder {shown(folder.name)}: a class folder holds a file per document "
                f"(move it into {shown(os.path.basename(os.path.abspath(top)))} to make it a class)",
                _named(entry.path),
            )
        try:
            is_file = entry.is_file()
        except OSError:
            is_file = False
        if not is_file:
            raise FilterkitError("not a regular file (or a link to nothing): a document is a file", _named(entry.path))
        names.append(entry.name)
    return tuple(names)


def _label(folder: os.DirEntry) -> str:
    """A class folder's name, its label; an error naming the folder when it is not UTF-8 text."""
    try:
        folder.name.encode("utf-8")
    except UnicodeEncodeError:
        raise FilterkitError(
            "the class folder's name is not UTF-8 text, so cannot be a label", _named(folder.path)
        ) from None
    return folder.name


def _known_codes(schema: Schema, folders: tuple[str, ...], name: str) -> tuple[int, ...]:
    """Each folder's code among the class labels of a model's training header; an error naming a folder
    that is not one of them, or a header that was not read from a folder per class."""
    attributes = schema.attributes
    if [(a.name, a.kind) for a in attributes] != [(TEXT, STRING), (CLASS, NOMINAL)]:
        raise FilterkitError(
            f"the model was not trained on a folder per class ({shown(TEXT)} and {shown(CLASS)}): "
            "read this folder's documents as its training data was read",
            name,
        )
    labels = {label: code for code, label in enumerate(attributes[1].labels)}
    unknown = [folder for folder in folders if folder not in labels]
    if unknown:
        raise FilterkitError(
            f"the class folder {shown(unknown[0])} is not one of the training labels "
            f"({', '.join(shown(label) for label in attributes[1].labels[:10])})",
            name,
        )
    return tuple(labels[folder] for folder in folders)


def _relation(name: str) -> str:
    """The relation: the folder's own name (``docs`` for ``/data/docs/``), bytes not UTF-8 as ``\\xNN``."""
    return _named(os.path.basename(os.path.abspath(name)) or name)


def _named(path: str) -> str:
    """A path for a message, bytes that are not UTF-8 shown as ``\\xNN``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")
