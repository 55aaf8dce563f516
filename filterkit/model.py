"""Saved models: a fitted chain as JSON, with its arrays in a side ``.npz``.

Nothing in a model file is executed: the JSON is data, the arrays are loaded
with ``allow_pickle=False``, and stages are looked up by name in the plugin
registry.  The top-level ``format_version`` is checked on load.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np

from filterkit import __version__
from filterkit.errors import FilterkitError
from filterkit.plugins import Registry
from filterkit.runner import Chain
from filterkit.schema import Attribute, Schema

FORMAT_VERSION = 1


def schema_to_json(schema: Schema) -> dict:
    """A schema as plain JSON data."""
    return {"relation": schema.relation, "attributes": [_attribute_to_json(a) for a in schema.attributes]}


def _attribute_to_json(attribute: Attribute) -> dict:
    data = {"name": attribute.name, "kind": attribute.kind}
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
    """Where the arrays of the model at ``model_path`` live (``M.json`` → ``M.npz``)."""
    return Path(model_path).with_suffix(".npz")


def save_model(path: str | os.PathLike, chain: Chain, registry: Registry) -> None:
    """Write the fitted ``chain`` to ``path`` (and its arrays beside it)."""
    arrays: dict[str, np.ndarray] = {}
    stages = []
    for position, stage in enumerate(chain.stages):
        registered = registry.stages[stage.name]
        state = {}
        for key, value in stage.state().items():
            if isinstance(value, np.ndarray):
                array_key = f"{position}.{key}"
                arrays[array_key] = value
                state[key] = {"array": array_key}
            else:
                state[key] = _plain(value, stage, key)
        stages.append(
            {
                "name": stage.name,
                "plugin": registered.plugin,
                "distribution": registered.distribution,
                "params": stage.params,
                "state": state,
            }
        )
    document = {
        "format_version": FORMAT_VERSION,
        "filterkit_version": __version__,
        "input_schema": schema_to_json(chain.input_schema),
        "class": chain.class_name,
        "positive": chain.positive,
        "stages": stages,
    }
    text = json.dumps(document, indent=1).encode("utf-8") + b"\n"
    files = ([(arrays_path(path), lambda handle: np.savez(handle, **arrays))] if arrays else [])
    files.append((Path(path), lambda handle: handle.write(text)))
    _write_all_or_nothing(files, path)


def _write_all_or_nothing(files, path) -> None:
    """Write every (destination, writer) under a temporary name, then rename them all.

    A failure while writing (a full disk, say) removes the temporaries and leaves the
    previous files, or none, in place: never a new ``.npz`` beside an old ``.json``.
    """
    temporaries = []
    try:
        for destination, write in files:
            directory = os.path.dirname(os.path.abspath(destination))
            handle, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(destination)}.", dir=directory)
            temporaries.append(temporary)
            with os.fdopen(handle, "wb") as stream:
                write(stream)
                stream.flush()
                os.fsync(stream.fileno())
        for (destination, _), temporary in zip(files, temporaries):
            os.replace(temporary, destination)
    except OSError as error:
        raise FilterkitError(f"cannot save the model: {error.strerror or error}", str(path)) from None
    finally:
        for temporary in temporaries:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)


def _plain(value, stage, key):
    """A JSON value for ``value`` (numpy scalars become numbers); else an error naming the stage."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(item, stage, key) for item in value]
    if isinstance(value, dict):
        return {str(k): _plain(v, stage, key) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise FilterkitError(
        f"stage '{stage.name}' cannot be saved: its state '{key}' holds a {type(value).__name__} "
        "(state is numbers, strings, lists, dicts and numpy arrays)"
    )


def load_model(path: str | os.PathLike, registry: Registry) -> Chain:
    """A fitted chain from a model file; FilterkitError if it cannot be used."""
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except json.JSONDecodeError as error:
        raise FilterkitError(f"not a filterkit model (bad JSON: {error.msg})", str(path), error.lineno) from None
    if not isinstance(document, dict) or "format_version" not in document:
        raise FilterkitError("not a filterkit model (no format_version)", str(path))
    version = document["format_version"]
    if version != FORMAT_VERSION:
        raise FilterkitError(
            f"unknown model format_version {version!r} (this filterkit reads {FORMAT_VERSION})", str(path)
        )
    try:
        return _chain_from_document(document, path, registry)
    except (KeyError, TypeError, ValueError) as error:
        raise FilterkitError(f"malformed model file ({type(error).__name__}: {error})", str(path)) from None


def _chain_from_document(document: dict, path, registry: Registry) -> Chain:
    for entry in document["stages"]:
        if entry["name"] not in registry.stages:
            raise FilterkitError(
                f"the model needs stage '{entry['name']}' from plugin '{entry.get('plugin')}' "
                f"({entry.get('distribution')}), which is not installed",
                str(path),
            )
    arrays = {}
    if any(isinstance(v, dict) and "array" in v for e in document["stages"] for v in e["state"].values()):
        with np.load(arrays_path(path), allow_pickle=False) as stored:
            arrays = {key: stored[key] for key in stored.files}
    stages = [registry.make_stage(entry["name"], entry["params"]) for entry in document["stages"]]
    chain = Chain(stages, class_spec=None, positive=document["positive"])
    schema = schema_from_json(document["input_schema"])
    chain.input_schema = schema
    chain.class_name = document["class"]
    for position, (stage, entry) in enumerate(zip(stages, document["stages"])):
        chain.prepare_stage(position, schema)
        state = {
            key: arrays[value["array"]] if isinstance(value, dict) and "array" in value else value
            for key, value in entry["state"].items()
        }
        stage.load_state(state)
        schema = stage.output_schema()
    chain.output_schema = schema
    return chain
