"""Saved models: a fitted chain as one JSON file, its arrays inside it.

A model is one file, so that it can be renamed, moved and mailed as one:
``format_version`` 2 holds each array of a stage's state as its dtype, shape and
little-endian bytes in base64 (``{"array": {"dtype": "<f8", "shape": [4],
"base64": "..."}}``); the same fitted chain always gives the same bytes.  Models
of ``format_version`` 1 (0.2 and earlier: ``M.json`` with its arrays in ``M.npz``
beside it) are still read.

Nothing in a model file is executed: the JSON is data, the arrays are plain
numbers (never pickled objects), and stages are looked up by name in the plugin
registry.  The top-level ``format_version`` is checked on load.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import math
import os
import zipfile
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Collection, Iterator, cast

import numpy as np

from filterkit.contract import PluginCrash
from filterkit.errors import FilterkitError
from filterkit.formats import format_options, registered_formats
from filterkit.outputs import checked_output, staged_output
from filterkit.plugins import Registry
from filterkit.provenance import installed_as_saved
from filterkit.runner import Chain, guarded
from filterkit.schema import DATE, NOMINAL, NUMERIC, RELATIONAL, STRING, Attribute, Schema
from filterkit.text import SURROGATE_ESCAPE, shown, unwritable_text_at
from filterkit.version import __version__

#: The format this filterkit writes: one JSON file, its arrays inside it.
FORMAT_VERSION = 2
#: Each format this filterkit reads: 1 is the JSON and its side ``.npz`` of 0.2.
READABLE_VERSIONS = (1, 2)

#: The dtypes an embedded array may have: bool, integers and floats, little-endian.
_EMBEDDED_DTYPES = frozenset(("|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f4", "<f8"))


def schema_to_json(schema: Schema) -> dict:
    """A schema as plain JSON data."""
    return {"relation": schema.relation, "attributes": [_attribute_to_json(a) for a in schema.attributes]}


def _attribute_to_json(attribute: Attribute) -> dict:
    data: dict[str, Any] = {"name": attribute.name, "kind": attribute.kind}
    if attribute.labels:
        data["labels"] = list(attribute.labels)
    if attribute.date_format is not None:
        data["date_format"] = attribute.date_format
    if attribute.declared_type:
        data["declared_type"] = attribute.declared_type
    if attribute.members:
        data["members"] = [_attribute_to_json(m) for m in attribute.members]
    return data


def schema_from_json(data: dict) -> Schema:
    """The schema written by :func:`schema_to_json`."""
    return Schema(data["relation"], tuple(_attribute_from_json(a) for a in data["attributes"]))


def _attribute_from_json(data: dict) -> Attribute:
    return Attribute(
        data["name"],
        data["kind"],
        labels=tuple(data.get("labels", ())),
        date_format=data.get("date_format"),
        declared_type=data.get("declared_type", ""),
        members=tuple(_attribute_from_json(m) for m in data.get("members", ())),
    )


def arrays_path(model_path: str | os.PathLike) -> Path:
    """Where a ``format_version`` 1 model at ``model_path`` keeps its arrays (``M.json`` → ``M.npz``)."""
    return Path(model_path).with_suffix(".npz")


def save_model(
    path: str | os.PathLike,
    chain: Chain,
    registry: Registry,
    reading: tuple[str, dict] | None = None,
    classifier: dict | None = None,
    statistics: list | None = None,
) -> None:
    """Write the fitted ``chain`` to ``path`` (``.gz``: gzip), one file holding its arrays too, all or nothing;
    ``reading``: the format and options its training data was read with, for ``apply``; ``classifier``:
    the section ``train`` adds (its ``state`` holding numpy arrays, embedded as the stages' are);
    ``statistics``: the section of ``--updatable`` (:func:`filterkit.updating.statistics_section`)."""
    stages = []
    for stage in chain.stages:
        registered = registry.stages[stage.name]
        fitted, finite = guarded(stage, "saving the model", lambda: _state_of(stage))
        state = saved_state(fitted, finite, f"stage '{stage.name}'")
        stages.append(
            {
                "name": stage.name,
                "plugin": registered.plugin,
                # What installs the stage, as `filterkit plugins` says: for the built-ins "filterkit-arff",
                # not the "filterkit" (another project on PyPI) of older models, which load alike (by name).
                "distribution": registered.distribution,
                "params": stage.params,
                "state": state,
            }
        )
    assert chain.input_schema is not None  # the chain is fitted
    document = {
        "format_version": FORMAT_VERSION,
        "filterkit_version": __version__,
        "input_schema": schema_to_json(chain.input_schema),
        "class": chain.class_name,
        "positive": chain.positive,
        **({"labels": list(chain.labels.names)} if chain.labels else {}),
        **({} if reading is None else {"input": {"format": reading[0], "options": reading[1]}}),
        "stages": stages,
        **(
            {}
            if classifier is None
            else {
                "classifier": {
                    **{
                        key: _plain(value, "the classifier", key)
                        for key, value in classifier.items()
                        if key not in ("state", "per_label")
                    },
                    **(
                        {"per_label": [_saved_label(entry) for entry in classifier["per_label"]]}
                        if "per_label" in classifier
                        else {"state": saved_state(classifier["state"], True, "the classifier")}
                    ),
                }
            }
        ),
        **({} if statistics is None else {"statistics": statistics}),
    }
    text = json.dumps(document, indent=1).encode("utf-8") + b"\n"
    output = checked_output(path)
    try:
        with staged_output(output) as staged:
            staged.stream.write(text)
            staged.publish()
    except OSError as error:
        raise FilterkitError(f"cannot save the model: {error.strerror or error}", str(path)) from None


def _state_of(stage) -> tuple[dict, list[str]]:
    """``stage``'s state and the keys of the arrays in it its ``state_arrays`` declare finite."""
    state = stage.state()
    return state, [key for key, declared in stage.state_arrays.items() if declared.finite or declared.whole]


def _saved_label(entry: dict) -> dict:
    """One label's entry of a multi-label classifier section: its state's arrays embedded, as a classifier's."""
    saved = {key: _plain(value, "the classifier", key) for key, value in entry.items() if key != "state"}
    return saved if "state" not in entry else {**saved, "state": saved_state(entry["state"], True, "the classifier")}


def saved_state(state: dict, finite: Collection[str] | bool, owner: str) -> dict:
    """A stage's or classifier's state as JSON data, each numpy array embedded (``{"array": …}``);
    FilterkitError naming ``owner`` for a value that is not data: a state that is no dict of string keys, a NaN or
    infinity (no JSON number; in an array, NaN, and an infinity in the arrays ``finite`` names or in any where it is
    True, which loading refuses), a value nested past :data:`_DEEPEST` (a dict holding itself)."""
    if not isinstance(state, dict):
        raise FilterkitError(f"{owner} cannot be saved: its state is a {type(state).__name__}, not a dict")
    if not all(isinstance(key, str) for key in state):
        raise FilterkitError(f"{owner} cannot be saved: its state has a key that is not a string")
    return {
        key: {"array": embedded_array(value, owner, key, finite is True or (finite is not False and key in finite))}
        if isinstance(value, np.ndarray)
        else _plain(value, owner, key)
        for key, value in state.items()
    }


def embedded_array(array: np.ndarray, owner: str, key, finite: bool = False) -> dict:
    """An array as JSON data: dtype, shape and its little-endian C-order bytes in base64; FilterkitError naming
    ``owner`` for a NaN (or, when ``finite``, an infinity), which a model is not loaded with."""
    if array.dtype.kind not in _ARRAY_KINDS:
        raise FilterkitError(f"{owner} cannot be saved: its state '{key}' is an array of {array.dtype}, not numbers")
    unloadable = (~np.isfinite(array) if finite else np.isnan(array)) if array.dtype.kind == "f" else None
    if unloadable is not None and unloadable.any():
        where = np.unravel_index(int(np.flatnonzero(unloadable)[0]), array.shape)
        raise FilterkitError(
            f"{owner} cannot be saved: its state '{key}' holds {float(array[where])!r} at {tuple(map(int, where))}, "
            "which a model is not loaded with"
        )
    little_endian = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    return {
        "dtype": little_endian.dtype.str,
        "shape": list(little_endian.shape),
        "base64": base64.b64encode(little_endian.tobytes()).decode("ascii"),
    }


#: The deepest a state's plain value may nest (lists and dicts in one another).
_DEEPEST = 100


def _plain(value, owner: str, key, depth: int = 0):
    """A JSON value for ``value`` (numpy scalars become numbers); else an error naming ``owner``."""
    if depth > _DEEPEST:
        raise FilterkitError(f"{owner} cannot be saved: its state '{key}' nests deeper than {_DEEPEST}")
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(item, owner, key, depth + 1) for item in value]
    if isinstance(value, dict):
        return {str(k): _plain(v, owner, key, depth + 1) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        raise FilterkitError(f"{owner} cannot be saved: its state '{key}' holds {value}, which JSON has no number for")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise FilterkitError(
        f"{owner} cannot be saved: its state '{key}' holds a {type(value).__name__} "
        "(state is numbers, strings, lists, dicts and numpy arrays)"
    )


class NotAModel(Exception):
    """Why a file is not a usable model (becomes ``FILE: not a filterkit model (why)``)."""

    def __init__(self, reason: str, path=None):
        super().__init__(reason)
        self.reason = reason
        self.path = path


#: Bytes a deflated array may expand to, per attribute of the model's input schema:
#: 1024 float64 values each, far above any built-in stage's state.  An array stored
#: uncompressed (as np.savez writes it) may be as large as its bytes in the file.
_INFLATED_BYTES_PER_ATTRIBUTE = 8 * 1024
_ARRAY_KINDS = "biuf"  # bool, signed and unsigned integers, floats


class ModelFile:
    """A model file, read once: its JSON checked everywhere (structure and types, each stage's and the
    classifier's state references), then each section on demand: the :meth:`fitted` chain and the classifier
    of a model of ``train``, the :attr:`reading` of its training data, the :attr:`statistics` of
    ``--updatable`` and the stages' :meth:`arrays`.

    Everything read is checked before it is used: each stage's options (by the option's own
    :meth:`Option.convert`), and each array the stages reference (only those are read; their declared
    size is checked before anything is decompressed, their values must be finite).  A malformed file
    gives ``FILE: not a filterkit model (why)``.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = path
        with self._refused():
            self.document = _read_document(path)

    @contextmanager
    def _refused(self) -> Iterator[None]:
        """Turn a :class:`NotAModel` into the FilterkitError naming the file."""
        try:
            yield
        except NotAModel as error:
            raise FilterkitError(f"not a filterkit model ({error.reason})", str(error.path or self.path)) from None

    def fitted(self, registry: Registry) -> tuple[Chain, dict | None]:
        """The fitted chain, its stages looked up in ``registry``, and the classifier section of a model of
        ``train`` checked against it (its state's arrays decoded; None for a model of the chain alone)."""
        with self._refused():
            chain = _chain_from_document(self.document, self.path, registry)
            return chain, _classifier_section(self.document, chain)

    @property
    def reading(self) -> tuple[str | None, dict]:
        """The format and reading options of the training data (None and ``{}``: a model that does not say)."""
        return _reading(self.document)

    @property
    def statistics(self) -> Any:
        """The ``statistics`` section of ``--updatable`` as written (None without one), which
        :func:`filterkit.updating.section_statistics` decodes and checks."""
        return self.document.get("statistics")

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays of the stages, named ``POSITION.KEY`` (``0.scores``: the first stage's state ``scores``),
        checked as ``apply`` checks them."""
        with self._refused():
            return _document_arrays(self.document, self.path, len(self.document["input_schema"]["attributes"]))


def load_chain(path: str | os.PathLike, registry: Registry) -> Chain:
    """The fitted chain of a model file (:meth:`ModelFile.fitted`)."""
    return ModelFile(path).fitted(registry)[0]


def model_arrays(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """The arrays of the model at ``path`` (:meth:`ModelFile.arrays`); for looking inside a model."""
    return ModelFile(path).arrays()


def _reading(document: dict) -> tuple[str | None, dict]:
    """The format and options a model's training data was read with (checked by :func:`_check_document`);
    a model of 0.4 to 0.5 records svmlight's index base alone."""
    base = document.get("svmlight_first_index")
    if base is not None:
        return "svmlight", {"zero_based": base == 0}
    recorded = document.get("input") or {}
    options = recorded.get("options", {})
    declared = format_options()
    return recorded.get("format"), {name: declared[name].convert(value) for name, value in options.items()}


def _read_document(path) -> dict:
    """The model document at ``path`` (gunzipped, as ``m.json.gz`` is written), its format_version and structure
    checked."""
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        data = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
    except (gzip.BadGzipFile, EOFError, zlib.error) as error:
        raise NotAModel(f"damaged gzip data: {error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise NotAModel(f"not UTF-8 text: {error.reason} at byte {error.start + 1}") from None
    try:
        document = json.loads(text, object_pairs_hook=_object_of_unique_keys)
    except json.JSONDecodeError as error:
        raise FilterkitError(f"not a filterkit model (bad JSON: {error.msg})", str(path), error.lineno) from None
    except RecursionError:
        raise NotAModel("its JSON is nested too deeply") from None
    except ValueError:  # a whole number beyond Python's int-string conversion limit (4,300 digits)
        raise NotAModel("its JSON holds a whole number of too many digits") from None
    unwritable = unwritable_text_at(document) if SURROGATE_ESCAPE.search(text) is not None else None
    if unwritable is not None:
        raise NotAModel(f"its text at {unwritable} holds a lone surrogate, which is no UTF-8 text")
    if not isinstance(document, dict) or "format_version" not in document:
        raise NotAModel("no format_version")
    version = document["format_version"]
    if type(version) is not int:
        raise NotAModel(f"format_version is {json.dumps(version)}, not an integer")
    if version not in READABLE_VERSIONS:
        readable = " and ".join(str(known) for known in READABLE_VERSIONS)
        raise FilterkitError(f"unknown model format_version {version!r} (this filterkit reads {readable})", str(path))
    _check_writer(document.get("filterkit_version"), path)
    _check_document(document)
    return document


def _object_of_unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    """A JSON object of ``pairs``; NotAModel naming a key given twice (of which ``json`` keeps the last, silently)."""
    keys: set[str] = set()
    for key, _ in pairs:
        if key in keys:
            raise NotAModel(f"its JSON holds the key {json.dumps(key)[:40]} twice in one object")
        keys.add(key)
    return dict(pairs)


def _major(version: str) -> int | None:
    """The major number of a version such as ``0.4.0`` (None when it does not start with one)."""
    head = version.split(".", 1)[0]
    return int(head) if head.isascii() and head.isdigit() and len(head) < 6 else None


def _check_writer(written_by, path) -> None:
    """Refuse a model written by a newer major version of filterkit: its meaning may have changed; and one
    whose ``filterkit_version`` (left out by the first models) is not a version."""
    if written_by is None:
        return
    if not isinstance(written_by, str) or _major(written_by) is None:
        raise NotAModel(f"'filterkit_version' is {json.dumps(written_by)[:40]}, not a version such as {__version__}")
    theirs, ours = _major(written_by), _major(__version__)
    if theirs is not None and ours is not None and theirs > ours:
        raise FilterkitError(
            f"the model was written by filterkit {shown(written_by)}, a newer major version than this "
            f"filterkit {__version__}: upgrade filterkit to use it",
            str(path),
        )


def _check_reading(recorded) -> None:
    """The recorded reading of the training data: a known format and its declared options."""
    if recorded is None:
        return
    if not isinstance(recorded, dict):
        raise NotAModel(f"'input' is {_json_type(recorded)}, not an object")
    _expect(recorded, {"format": str, "options": dict}, "input")
    if registered_formats().format(recorded["format"]) is None:
        raise NotAModel(f"'input' names the format {json.dumps(recorded['format'])[:40]}, which this filterkit lacks")
    declared = format_options()
    for name, value in recorded["options"].items():
        if name not in declared:
            raise NotAModel(f"'input' has the option {json.dumps(name)[:40]}, which no format declares")
        try:
            declared[name].convert(value)
        except FilterkitError as error:
            raise NotAModel(f"'input' option: {error}") from None


#: What a model file holds at its top level (``svmlight_first_index``: in models of 0.3's svmlight reading).
MODEL_KEYS = frozenset(
    (
        "format_version",
        "filterkit_version",
        "input_schema",
        "class",
        "positive",
        "labels",
        "svmlight_first_index",
        "input",
        "stages",
        "classifier",
        "statistics",
    )
)
#: What each stage of a model holds.
STAGE_KEYS = frozenset(("name", "plugin", "distribution", "params", "state"))
#: What ``train`` writes in a model's classifier section (:func:`filterkit.training.section_head` and after).
CLASSIFIER_KEYS = frozenset(
    (
        *("name", "plugin", "distribution", "params", "task", "classes", "seed", "chain", "features"),
        *("fitted", "search", "search_c_values", "candidates", "state", "per_label"),
    )
)


def _refuse_unknown(mapping: dict, known: frozenset, where: str) -> None:
    """NotAModel naming a key of ``mapping`` that is not ``known``: an edited model's, which nothing would read."""
    unknown = sorted(key for key in mapping if key not in known)
    if unknown:
        raise NotAModel(f"{where} has an unknown key {json.dumps(unknown[0])[:40]}")


def _check_document(document: dict) -> None:
    """The document's structure and types, everywhere (NotAModel naming the first problem)."""
    _refuse_unknown(document, MODEL_KEYS, "the model")
    _expect(document, {"input_schema": dict, "stages": list}, "the model")
    _expect_text_or_null(document, ("class", "positive"), "the model")
    labels = document.get("labels", [])
    if not isinstance(labels, list) or not all(isinstance(name, str) for name in labels):
        raise NotAModel("'labels' is not a list of attribute names")
    base = document.get("svmlight_first_index")
    if base is not None and (type(base) is not int or base not in (0, 1)):
        raise NotAModel(f"'svmlight_first_index' is {json.dumps(base)[:40]}, not 0, 1 or null")
    _check_reading(document.get("input"))
    if "classifier" in document:
        _check_classifier(document["classifier"])
    schema = document["input_schema"]
    _expect(schema, {"relation": str, "attributes": list}, "input_schema")
    for position, attribute in enumerate(schema["attributes"], 1):
        _check_attribute(attribute, f"input attribute {position}")
    _refuse_declared_twice([attribute["name"] for attribute in schema["attributes"]], "input_schema: the attribute")
    for position, entry in enumerate(document["stages"], 1):
        where = f"stage {position}"
        if not isinstance(entry, dict):
            raise NotAModel(f"{where} is {_json_type(entry)}, not an object")
        _refuse_unknown(entry, STAGE_KEYS, where)
        _expect(entry, {"name": str, "params": dict, "state": dict}, where)
        _expect_text_or_null(entry, ("plugin", "distribution"), where)
        for key, value in entry["state"].items():
            if isinstance(value, dict) and "array" in value and not _is_array_reference(value, document):
                raise NotAModel(f"{where}: state '{key}' refers to an array badly: {json.dumps(value)[:80]}")


#: The kinds of classifier a model of ``train`` holds: one task (a class against the rest), every class, or
#: each label of multi-label data (binary relevance: a classifier per label, under ``per_label``).
CLASSIFIER_TASKS = ("binary", "multiclass", "labels")


def _check_classifier(section) -> None:
    """The classifier section's structure and types (NotAModel naming the first problem)."""
    if not isinstance(section, dict):
        raise NotAModel(f"'classifier' is {_json_type(section)}, not an object")
    _refuse_unknown(section, CLASSIFIER_KEYS, "classifier")
    _expect(section, {"name": str, "params": dict, "task": str, "classes": list}, "classifier")
    if "seed" in section and (type(section["seed"]) is not int or section["seed"] < 0):
        raise NotAModel(f"classifier: 'seed' is {json.dumps(section['seed'])[:40]}, not a whole number ≥ 0")
    if not isinstance(section.get("fitted", {}), dict):
        raise NotAModel(f"classifier: 'fitted' is {_json_type(section['fitted'])}, not an object")
    if type(section.get("features")) is not int or section["features"] < 0:
        raise NotAModel(f"classifier: 'features' is {json.dumps(section.get('features'))[:40]}, not a count")
    if section["task"] not in CLASSIFIER_TASKS:
        raise NotAModel(f"classifier: task {json.dumps(section['task'])[:40]} is not one of {CLASSIFIER_TASKS}")
    if not section["classes"] or not all(isinstance(label, str) for label in section["classes"]):
        raise NotAModel("classifier: 'classes' is not a list of labels")
    if section["task"] != "labels":
        _expect(section, {"state": dict}, "classifier")
        states = [("classifier", section["state"])]
    else:
        states = _label_states(section)
    for where, state in states:
        for key, value in state.items():
            if isinstance(value, dict) and "array" in value and not _is_array_reference(value, {"format_version": 2}):
                raise NotAModel(f"{where}: state '{key}' refers to an array badly: {json.dumps(value)[:80]}")


def _label_states(section: dict) -> list[tuple[str, dict]]:
    """Each label's state of a multi-label classifier section, where it is (a label predicted constant has
    none); NotAModel for an entry that is neither."""
    per_label = section.get("per_label")
    if not isinstance(per_label, list) or len(per_label) != len(section["classes"]):
        raise NotAModel("classifier: 'per_label' is not a list of one entry a label")
    states = []
    for label, entry in zip(section["classes"], per_label):
        where = f"classifier: label {shown(label)}"
        if not isinstance(entry, dict) or ("state" in entry) == ("constant" in entry):
            raise NotAModel(f"{where}: not an object holding either a 'state' or a 'constant'")
        _refuse_unknown(entry, frozenset(("state", "fitted", "constant")), where)
        if not isinstance(entry.get("fitted", {}), dict):
            raise NotAModel(f"{where}: 'fitted' is {_json_type(entry['fitted'])}, not an object")
        if "constant" in entry and type(entry["constant"]) is not bool:
            raise NotAModel(f"{where}: 'constant' is {json.dumps(entry['constant'])[:40]}, not true or false")
        if "state" in entry:
            _expect(entry, {"state": dict}, where)
            states.append((where, entry["state"]))
    return states


def _classifier_section(document: dict, chain: Chain) -> dict | None:
    """The checked classifier section of a ``train`` model, its state's arrays decoded; None when it has none."""
    section = document.get("classifier")
    if section is None:
        return None
    if document["format_version"] == 1:
        raise NotAModel("a format_version 1 model holds no classifier")
    schema = chain.output_schema
    assert schema is not None  # a rebuilt chain
    bound = len(schema.attributes) * (len(section["classes"]) + 2)
    if section["task"] == "labels":
        if list(chain.label_names) != section["classes"]:
            raise NotAModel("the classifier's labels are not the label attributes of its chain's input")
        per_label = [
            {**entry, "state": _decoded_state(entry["state"], bound)} if "state" in entry else entry
            for entry in section["per_label"]
        ]
        return {**section, "per_label": per_label}
    if chain.class_name is None or all(a.name != chain.class_name for a in schema.attributes):
        raise NotAModel("it holds a classifier but its chain's output has no class attribute")
    _check_classes(section, schema.attributes[schema.index_of(chain.class_name)].labels, chain.positive)
    return {**section, "state": _decoded_state(section["state"], bound)}


def _check_classes(section: dict, labels: tuple[str, ...], positive: str | None) -> None:
    """NotAModel unless the classes of a binary or multi-class ``section`` are what ``train`` writes: the
    ``positive`` label alone, or the class's ``labels`` that have rows, each once, in their declared order."""
    classes = section["classes"]
    unknown = [label for label in classes if label not in labels]
    if unknown:
        raise NotAModel(f"the classifier's class {shown(unknown[0])} is not a label of the class")
    positions = [labels.index(label) for label in classes]
    if len(set(positions)) != len(positions):
        raise NotAModel("the classifier's classes: a class is named twice")
    if section["task"] == "binary" and len(classes) == 1 and classes[0] != positive:
        raise NotAModel(
            f"the binary classifier's class {shown(classes[0])} is not the model's positive label "
            + (shown(positive) if positive is not None else "(it has none)")
        )
    if section["task"] == "multiclass" and positions != sorted(positions):
        raise NotAModel("the classifier's classes are not in the order of the class's labels")


def _decoded_state(saved: dict, bound: int) -> dict:
    """A classifier's saved state with its arrays decoded (each at most ``bound`` values) and checked finite."""
    state = {
        key: decoded_array(f"classifier.{key}", value["array"], bound)
        if isinstance(value, dict) and "array" in value
        else value
        for key, value in saved.items()
    }
    for key, value in state.items():  # a classifier's numbers are all finite (a stage's may be infinite: StateArray)
        if isinstance(value, np.ndarray) and value.dtype.kind == "f" and not np.isfinite(value).all():
            raise NotAModel(f"array 'classifier.{key}' holds a value that is not a finite number")
    return state


def _is_array_reference(value: dict, document: dict) -> bool:
    """Whether a state value says where an array is as the document's format does: by the
    name of its ``.npz`` entry (format 1), or as an embedded dtype, shape and base64 (format 2)."""
    if set(value) != {"array"}:
        return False
    array = value["array"]
    if document["format_version"] == 1:
        return isinstance(array, str)
    return (
        isinstance(array, dict)
        and set(array) == {"dtype", "shape", "base64"}
        and isinstance(array["dtype"], str)
        and array["dtype"] in _EMBEDDED_DTYPES
        and isinstance(array["shape"], list)
        and all(type(length) is int and length >= 0 for length in array["shape"])
        and isinstance(array["base64"], str)
    )


def _check_attribute(attribute, where: str) -> None:
    if not isinstance(attribute, dict):
        raise NotAModel(f"{where} is {_json_type(attribute)}, not an object")
    _expect(attribute, {"name": str, "kind": str}, where)
    if attribute["kind"] not in (NUMERIC, NOMINAL, STRING, DATE, RELATIONAL):
        raise NotAModel(f"{where}: unknown kind {attribute['kind'][:40]!r}")
    labels = attribute.get("labels", [])
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        raise NotAModel(f"{where}: 'labels' is not a list of strings")
    _refuse_declared_twice(labels, f"{where}: the label")
    _expect_text_or_null(attribute, ("date_format", "declared_type"), where)
    members = attribute.get("members", [])
    if not isinstance(members, list):
        raise NotAModel(f"{where}: 'members' is {_json_type(members)}, not a list")
    for position, member in enumerate(members, 1):
        _check_attribute(member, f"{where}, member {position}")
    _refuse_declared_twice([member["name"] for member in members], f"{where}: the member")


def _refuse_declared_twice(names: list[str], what: str) -> None:
    """NotAModel ``WHAT 'NAME' is declared twice`` for the first of ``names`` that comes again (the ARFF reader
    refuses the same in a header)."""
    declared: set[str] = set()
    for name in names:
        if name in declared:
            raise NotAModel(f"{what} {shown(name)} is declared twice")
        declared.add(name)


def _expect(mapping: dict, kinds: dict[str, type], where: str) -> None:
    """NotAModel unless ``mapping`` has each key of ``kinds``, holding a value of its type (in that order)."""
    for key, kind in kinds.items():
        if key not in mapping:
            raise NotAModel(f"{where} has no '{key}'")
        if not isinstance(mapping[key], kind):
            raise NotAModel(f"{where}: '{key}' is {_json_type(mapping[key])}, not {_json_type(kind())}")


def _expect_text_or_null(mapping: dict, keys: tuple[str, ...], where: str) -> None:
    """NotAModel unless each of ``keys`` is absent, null or a string."""
    for key in keys:
        if mapping.get(key) is not None and not isinstance(mapping[key], str):
            raise NotAModel(f"{where}: '{key}' is {_json_type(mapping[key])}, not a string or null")


def _json_type(value) -> str:
    """What a JSON value is, in JSON's words."""
    words = {type(None): "null", bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list"}
    return words.get(type(value), "an object")


def _chain_from_document(document: dict, path, registry: Registry) -> Chain:
    """The fitted chain a checked model document describes (its arrays read from beside ``path``)."""
    for entry in document["stages"]:
        installed_as_saved("stage", entry, registry.stages, path)
    try:
        schema = schema_from_json(document["input_schema"])
    except (FilterkitError, ValueError, TypeError) as error:
        raise NotAModel(f"input_schema: {error}") from None
    _check_class(schema, document.get("class"), document.get("positive"))
    arrays = _document_arrays(document, path, len(schema.attributes))
    stages = [
        (
            entry["name"],
            entry["params"],
            {key: arrays.get(f"{position}.{key}", value) for key, value in entry["state"].items()},
        )
        for position, entry in enumerate(document["stages"])
    ]
    try:
        labels = tuple(document["labels"]) if document.get("labels") else None
        chain = Chain.rebuilt(registry, stages, schema, document.get("class"), document.get("positive"), labels)
    except PluginCrash:
        raise
    except FilterkitError as error:
        raise NotAModel(str(error)) from None
    for position, (stage, (_, _, state)) in enumerate(zip(chain.stages, stages), 1):
        _refuse_unknown_entries(position, stage, state)
    return chain


def _refuse_unknown_entries(position: int, stage, saved: dict) -> None:
    """NotAModel for an entry of a stage's ``saved`` state that the loaded stage neither gives back (its
    ``state()``) nor names retired (``retired_state``): an edited model's, which no stage would notice.  A stage
    whose ``state()`` fails here is not checked: saving it again is what would fail, naming its plugin."""
    try:
        known = set(stage.state()) | set(stage.retired_state)
    except Exception:  # noqa: BLE001 - a plugin's fault, for the save that calls it to report
        return
    unknown = sorted(set(saved) - known)
    if unknown:
        raise NotAModel(f"stage {position} '{stage.name}': its saved state has an unknown entry {shown(unknown[0])}")


def _check_class(schema: Schema, class_name: str | None, positive: str | None) -> None:
    """NotAModel unless the class (by name) and the positive label fit the input ``schema``."""
    names = [attribute.name for attribute in schema.attributes]
    if class_name is not None and class_name not in names:
        raise NotAModel(f"the class {shown(class_name)} is not an input attribute")
    labels = () if class_name is None else schema.attributes[names.index(class_name)].labels
    if positive is not None and positive not in labels:
        raise NotAModel(f"the positive label {shown(positive)} is not a label of the class")


def _document_arrays(document: dict, path, n_attributes: int) -> dict[str, np.ndarray]:
    """Every array the checked ``document``'s stages refer to, by ``POSITION.KEY``: read
    from the ``.npz`` beside ``path`` (format 1) or decoded from the document (format 2)."""
    references = {
        f"{position}.{key}": value["array"]
        for position, entry in enumerate(document["stages"])
        for key, value in entry["state"].items()
        if isinstance(value, dict) and "array" in value
    }
    if document["format_version"] == 1:
        if not references:
            return {}
        stored = _read_arrays(arrays_path(path), list(references.values()), n_attributes)
        return {name: stored[entry] for name, entry in references.items()}
    return {name: decoded_array(name, array, n_attributes) for name, array in references.items()}


def decoded_array(name: str, array: dict, n_attributes: int) -> np.ndarray:
    """An embedded array (format 2), its size checked before its base64 is decoded: at most what its
    text already in the file decodes to (so it cannot inflate; a stage after ``words`` has arrays sized by
    the vocabulary, not by the input's attributes), or the bound per input attribute."""
    dtype = np.dtype(array["dtype"])
    size = math.prod(array["shape"]) * dtype.itemsize
    text = array["base64"]
    allowed = max(_INFLATED_BYTES_PER_ATTRIBUTE * (n_attributes + 1), 3 * len(text) // 4)
    if size > allowed:
        raise NotAModel(f"array '{name}' would take {size} bytes, more than the {allowed} allowed")
    _check_shape(name, array["shape"], allowed // dtype.itemsize)
    if len(text) != 4 * math.ceil(size / 3):
        raise NotAModel(f"array '{name}' declares {size} bytes of values but holds {len(text)} base64 characters")
    try:
        data = bytearray(base64.b64decode(text, validate=True))
    except binascii.Error as error:
        raise NotAModel(f"array '{name}' is not base64: {error}") from None
    if len(data) != size:
        raise NotAModel(f"array '{name}' declares {size} bytes of values but holds {len(data)}")
    values = np.frombuffer(data, dtype=dtype).reshape(array["shape"])
    if dtype.kind == "f" and np.isnan(values).any():  # infinities: where a stage's StateArray allows them
        raise NotAModel(f"array '{name}' holds a value that is not a finite number")
    return values.astype(dtype.newbyteorder("="), copy=False)


def _check_shape(name: str, shape, most: int) -> None:
    """Refuse a shape numpy cannot make, or a length beyond ``most`` (possible when another length is 0)."""
    if len(shape) > 32:
        raise NotAModel(f"array '{name}' has {len(shape)} dimensions, more than 32")
    if max(shape, default=0) > most:
        raise NotAModel(f"array '{name}' has a length of {max(shape)}, more than the {most} values allowed")


def _read_arrays(npz_path: Path, keys: list[str], n_attributes: int) -> dict[str, np.ndarray]:
    """The arrays ``keys`` of the model's ``.npz``, and no other; each checked before it is read."""
    try:
        with zipfile.ZipFile(npz_path) as archive:
            assert archive.fp is not None  # an open archive has its file
            archive_bytes = os.fstat(archive.fp.fileno()).st_size
            return {key: _read_array(archive, key, archive_bytes, n_attributes) for key in dict.fromkeys(keys)}
    except NotAModel as error:
        raise NotAModel(error.reason, npz_path) from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, NotImplementedError) as error:
        raise NotAModel(f"not a readable .npz: {error}", npz_path) from None
    except OSError as error:
        raise NotAModel(f"its arrays {npz_path}: {error.strerror or error}") from None


def _read_array(archive: zipfile.ZipFile, key: str, archive_bytes: int, n_attributes: int) -> np.ndarray:
    try:
        info = archive.getinfo(f"{key}.npy")
    except KeyError:
        raise NotAModel(f"no array '{key}'") from None
    allowed = max(min(info.compress_size, archive_bytes), _INFLATED_BYTES_PER_ATTRIBUTE * (n_attributes + 1))
    if info.file_size > allowed:
        raise NotAModel(f"array '{key}' would take {info.file_size} bytes, more than the {allowed} allowed")
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        read_header = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
        if version not in read_header:
            raise NotAModel(f"array '{key}' has .npy format version {version}")
        shape, fortran_order, dtype = read_header[version](member)
        if dtype.kind not in _ARRAY_KINDS:
            raise NotAModel(f"array '{key}' holds {dtype}, not numbers")
        _check_shape(key, shape, allowed // dtype.itemsize)
        size = math.prod(shape) * dtype.itemsize
        header = member.tell()
        if header + size != info.file_size:
            raise NotAModel(f"array '{key}' declares {size} bytes of values in a {info.file_size}-byte entry")
        buffer = bytearray(size)
        if cast(zipfile.ZipExtFile, member).readinto(buffer) != size or member.read(1):
            raise NotAModel(f"array '{key}' is truncated")
    array = np.frombuffer(buffer, dtype=dtype).reshape(shape, order="F" if fortran_order else "C")
    if dtype.kind == "f" and np.isnan(array).any():  # infinities: where a stage's StateArray allows them
        raise NotAModel(f"array '{key}' holds a value that is not a finite number")
    return array
