"""The filter protocol every chain stage follows.

A stage declares its ``name``, ``summary`` and ``options`` (declared once: the CLI, the help and
the scikit-learn adapter read them here).  Its life, after Weka's Filter: :meth:`Stage.prepare`
sees the input schema; a stage that *learns* accumulates mergeable statistics over chunks
(:meth:`accumulate`, :meth:`merge`) and turns them into fitted state (:meth:`finalize`); then
:meth:`transform` maps chunks.  Fitted state is plain numbers, lists and numpy arrays
(:meth:`state`, :meth:`load_state`), so a model file holds it without pickle.

That core is all a stage must have.  What only some stages do is a small protocol each opts into by
inheriting it, which the chain tests with ``isinstance``, as Weka's ``UpdateableClassifier`` and
``StreamableFilter`` are: :class:`ValueMapped` (an elementwise map of values, from which its transform
comes), :class:`KeptPass` (a fitting pass kept in a form of its own), :class:`Updatable` (statistics a
model saves for ``filterkit update``) and :class:`Explainable` (counts behind its output, for ``explain``).
"""

from __future__ import annotations

import functools
import re
import warnings
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Literal

import numpy as np

from filterkit.contract import declared, declared_type
from filterkit.errors import FilterkitError, OptionError
from filterkit.saved_state import ATTRIBUTES, FEATURES, OPTIONS_KEY, SavedState, StateArray, fitted_options
from filterkit.schema import NOMINAL, NUMERIC, Chunk, Schema

#: ``Option.before_it_existed`` when the option's default keeps the behaviour from before it existed.
SAME_AS_DEFAULT: Any = type("SameAsDefault", (), {"__repr__": lambda self: "SAME_AS_DEFAULT"})()


@dataclass(frozen=True)
class Option:
    """One option of a stage: ``name`` (an identifier), ``kind`` (``int``, ``float``, ``str`` or
    ``bool``: a ``--x/--no-x`` flag pair), default (None: not given), help, ``choices`` of a ``str``;
    ``before_it_existed``: the value a saved model that does not record it was fitted with."""

    name: str
    kind: type
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    before_it_existed: Any = SAME_AS_DEFAULT
    #: The value names a file the stage reads when it is fitted (:func:`option_file`), which the Dask client
    #: sends with the fitting tasks; what it read goes into the stage's state, so that no fitted stage (a
    #: model's) opens the file again.
    names_file: bool = False
    #: With ``names_file``, the values that name no file but a list the stage holds (``words --stopwords weka``):
    #: never read as a path (a file of that name in the working folder may be anything, a FIFO).
    built_in: tuple[str, ...] = ()
    #: A bool option's flag for False (default: ``--no-NAME``).
    off_flag: str = ""
    #: The value is a Weka attribute range (:func:`~filterkit.schema.weka_range`): where the class is no column of
    #: the data (scikit-learn's y), its ``last`` is the data's last column (:func:`~filterkit.schema.range_within`).
    attribute_range: bool = False

    @property
    def value_before_it_existed(self) -> Any:
        """The value a saved model that predates this option was fitted with."""
        return self.default if self.before_it_existed is SAME_AS_DEFAULT else self.before_it_existed

    @property
    def flag(self) -> str:
        """The command-line spelling, e.g. ``--zero-preserve``."""
        return "--" + self.name.replace("_", "-")

    def convert(self, value: Any) -> Any:
        """``value`` checked and converted to this option's type, strictly (values also come from model
        files): an int option takes an integral number, a float a finite one, either or a bool its text."""
        if value is None:
            return None
        converted = self._typed(value)
        if self.kind is str and not self.names_file and _LONE_SURROGATE.search(value):
            raise FilterkitError(f"option {self.flag}: {value!r} is not UTF-8 text")
        self._refuse_outside(value, converted)
        return converted

    def _typed(self, value: Any) -> Any:
        """``value`` (not None) as this option's kind; FilterkitError saying what it is not."""
        text = isinstance(value, str)
        is_bool = isinstance(value, (bool, np.bool_))
        numeric = text or isinstance(value, (int, float, np.integer, np.floating)) and not is_bool
        wanted, accepted = {
            int: ("an integer", numeric),
            float: ("a finite number", numeric),
            str: ("a string", text),
            bool: ("a boolean", is_bool or text),
        }[self.kind]
        try:
            if not accepted:
                raise TypeError(value)
            converted = _to_bool(value) if self.kind is bool else self.kind(value)
            # an int option takes a number only when it is whole: int(2.5) is 2
            whole = self.kind is not int or text or converted == value
            if not whole or (self.kind is float and not np.isfinite(converted)):
                raise ValueError(value)
        except (TypeError, ValueError, OverflowError):
            raise OptionError(f"option {self.flag}: {value!r} is not {wanted}") from None
        return converted

    def _refuse_outside(self, value: Any, converted: Any) -> None:
        """FilterkitError when ``converted`` (from ``value``) is not one of the choices or outside the bounds."""
        if self.choices and converted not in self.choices:
            raise OptionError(f"option {self.flag}: {value!r} is not one of {', '.join(self.choices)}")
        if self.minimum is not None and converted < self.minimum:
            raise OptionError(f"option {self.flag}: {value!r} is below {self.minimum}")
        if self.maximum is not None and converted > self.maximum:
            raise OptionError(f"option {self.flag}: {value!r} is above {self.maximum}")


#: A lone surrogate: how Python holds an argument's bytes that are not UTF-8 (``$'\xff'``), and how
#: JSON's ``"\ud800"`` reads; no file filterkit reads holds one, and none can be written as UTF-8.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _to_bool(value: Any) -> bool:
    if isinstance(value, str):
        if value.lower() in ("1", "true", "yes", "on"):
            return True
        if value.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(value)
    return bool(value)


@dataclass(frozen=True)
class Context:
    """What a stage knows of its place in the chain: the class attribute's position in its input
    (None without one), the ``--positive`` label, the stages before it, already fitted, and the
    positions of the label attributes of multi-label data (:mod:`filterkit.labels`; then no class)."""

    class_index: int | None = None
    positive: str | None = None
    previous: tuple = ()
    labels: tuple[int, ...] = ()


class Configurable:
    """Something with a registered ``name``, a one-line ``summary`` and declared ``options``, which
    ``__init__`` checks the parameters against (stages, classifiers and their adapters share it)."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    options: ClassVar[tuple[Option, ...]] = ()

    def __init__(self, **params: Any):
        known = {option.name: option for option in self.options}
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise OptionError(f"'{self.name}' has no option {', '.join(unknown)}")
        self.params = {name: option.convert(params.get(name, option.default)) for name, option in known.items()}
        try:
            self.check_params()
        except OptionError:
            raise
        except FilterkitError as error:
            raise OptionError(error.message, error.path, error.line) from None

    def check_params(self) -> None:
        """Refuse option combinations that make no sense (FilterkitError, raised as :class:`OptionError`)."""

    def command_words(self) -> list[str]:
        """The name and the options that differ from their defaults, as they would be typed (unquoted)."""
        words = [self.name]
        for option in self.options:
            value = self.params[option.name]
            if value == option.default:
                continue
            if option.kind is bool:
                words.append(option.flag if value else f"--no-{option.flag[2:]}")
            else:
                words.extend([option.flag, str(value)])
        return words

    @classmethod
    def one_line_summary(cls) -> str:
        """``summary``, else the first line of the class's own docstring ("" if neither)."""
        lines = (cls.__doc__ or "").strip().splitlines()
        return cls.summary or (lines[0].strip() if lines else "")


@dataclass(frozen=True)
class Accepts:
    """What a stage needs of its input, as Weka's ``Capabilities`` and scikit-learn's input tags say it
    (docs/plugins.md, "Accepts fields").  The chain refuses input without it before any work
    (:func:`refuse_unaccepted_input`) and refuses a negative value in a chunk it gives the stage
    (:func:`refuse_negative_values`); ``check_stage``, the test sweeps and the scikit-learn adapters' tags
    read it, so none of them keeps a list of stages."""

    #: A nominal class attribute (``-c``): the stage learns from the classes.
    nominal_class: bool = False
    #: A two-class task: a class of two labels, or ``--positive`` naming one (implies ``nominal_class``).
    two_classes: bool = False
    #: No negative value in the features it acts on (counts and frequencies).
    non_negative: bool = False
    #: String attributes: the stage reads text.
    text: bool = False
    #: Said after the error for a missing class: how to run the stage without one (e.g. "or --bins N").
    without_class: str = ""
    #: Several labels per row (:mod:`filterkit.labels`) in place of the class: the stage learns from each.
    labels: bool = False


@dataclass(frozen=True)
class Provenance:
    """Where a registered stage came from: its plugin, distribution and the distribution's version."""

    plugin: str
    distribution: str
    version: str = ""

    def __str__(self) -> str:
        version = f" {self.version}" if self.version else ""
        return f"plugin '{self.plugin}', distribution '{self.distribution}{version}'"


#: Filled once the protocols are defined (below :class:`Stage`).
_ADOPTED_BY: dict[type, frozenset[str]] = {}


def _none(*_: Any) -> None:
    """None: for a subclass, the stored-values map and statistics a transform above it gave (:class:`ValueMapped`)."""
    return None


def _adopt(cls: type[Stage]) -> None:
    """Make ``cls``, a stage class written before the protocols, the subclass of each protocol (:data:`_ADOPTED_BY`)
    whose methods a class of its MRO defines (a mixin's count, :func:`_none` does not) without naming it.  Stage
    held those methods then: so that it runs as it did, its MRO becomes the one it had with the protocols just
    before Stage (by :func:`_with_protocols`'s bases, or, where C3 would move another class with those, by the
    whole order); one that adopts :class:`KeptPass` without setting ``keeps_fit_pass`` keeps no form of its own,
    as the old base's False said."""
    core = {Stage, Configurable, object, *_ADOPTED_BY}
    defined = {
        name for above in cls.__mro__ if above not in core for name, value in vars(above).items() if value is not _none
    }
    adopted = [
        protocol for protocol, methods in _ADOPTED_BY.items() if not issubclass(cls, protocol) and methods & defined
    ]
    if not adopted:
        return
    if KeptPass in adopted and "keeps_fit_pass" not in defined:
        cls.keeps_fit_pass = False  # type: ignore[attr-defined]
    order = list(cls.__mro__)
    order[order.index(Stage) : order.index(Stage)] = adopted
    try:
        cls.__bases__ = _with_protocols(cls, adopted)
        moved = cls.__mro__ != tuple(order)
    except TypeError:  # C3 finds no order of those bases
        moved = True
    if moved:
        # a layout where C3 moves another class once they are among the bases (a mixin whose own base came after
        # Stage): the bases are then the whole order, which C3 keeps as it is
        cls.__bases__ = tuple(order[1:])


def _with_protocols(cls: type, protocols: list[type]) -> tuple[type, ...]:
    """``cls``'s bases with ``protocols`` just before Stage, or, where Stage is not one of them, right after the
    last that comes before Stage in its MRO (``class S(Stage, Mixin)`` becomes ``S(ValueMapped, Stage, Mixin)``):
    the first base, which sets the instances' layout, stays or is a protocol, laid out as Stage is."""
    bases = cls.__bases__
    before_stage = cls.__mro__[: cls.__mro__.index(Stage)]
    at = bases.index(Stage) if Stage in bases else 1 + max(at for at, base in enumerate(bases) if base in before_stage)
    return (*bases[:at], *protocols, *bases[at:])


class Stage(Configurable):
    """Base class of every chain stage (see the module docstring): it declares whether it ``learns``,
    its fitted arrays (``state_arrays``) and what the contract (:mod:`filterkit.contract`) must allow:
    ``filters_rows`` (fewer or more rows) and ``changes_class`` (the class attribute may change).
    """

    learns: ClassVar[bool] = False
    state_arrays: ClassVar[dict[str, StateArray]] = {}
    #: Entries of the state an earlier version saved that this one reads no more: a model holding them loads,
    #: where an entry that :meth:`state` does not give back once loaded is refused as unknown.
    retired_state: ClassVar[frozenset[str]] = frozenset()
    filters_rows: ClassVar[bool] = False
    changes_class: ClassVar[bool] = False
    #: Set by the plugin registry when it makes the stage (None for a stage made directly).
    provenance: Provenance | None = None
    #: The option that avoids a much wider output, said in the chain's warning (:func:`filterkit.runner.widening`);
    #: None for a stage whose purpose is a wide output (``words``: one attribute per word), which never warns.
    widening_hint: ClassVar[str | None] = ""
    #: Said in the chain's warning (:meth:`fit_warnings`) when the stage finds none of the attributes it reads
    #: (``features`` empty), not to pass the rows through as if it had done its work.
    nothing_to_read: ClassVar[str] = ""
    #: What the stage needs of its input (:class:`Accepts`); a property where it depends on the options.
    accepts: ClassVar[Accepts] = Accepts()
    #: Option sets worth running, the first what a user would type: the test sweeps and ``check_stage``
    #: callers run each (a stage whose defaults do not run alone gives options that do).
    examples: ClassVar[tuple[dict[str, Any], ...]] = ({},)

    def __init_subclass__(cls, **kwargs: Any):
        """A subclass that defines ``fitted``, the old name of ``learns``, learns by it (DeprecationWarning); one
        that defines ``transform`` but neither map has neither :meth:`ValueMapped.stored_values_map` nor
        :meth:`ValueMapped.statistics_for` (:func:`_none`), nor has a subclass that does not define its own; one
        that defines a protocol's methods without naming the protocol is made its subclass (:func:`_adopt`)."""
        super().__init_subclass__(**kwargs)
        if "fitted" in vars(cls) and "learns" not in vars(cls):
            warnings.warn(
                f"stage class {cls.__module__}.{cls.__qualname__} defines 'fitted', which is now called 'learns'",
                DeprecationWarning,
                stacklevel=2,
            )
            cls.learns = vars(cls)["fitted"]
        if "transform" in vars(cls) and not {"value_map", "stored_values_map"} & set(vars(cls)):
            # what a class above derives from its transform does not describe this one's
            cls.stored_values_map = cls.statistics_for = _none  # type: ignore[attr-defined]
        _adopt(cls)

    @property
    def fitted(self) -> bool:
        """Deprecated: the old name of ``learns``."""
        warnings.warn("Stage.fitted is now called Stage.learns", DeprecationWarning, stacklevel=2)
        return self.learns

    def preserves_zeros(self) -> bool:
        """True when every 0 of an acted-on feature stays 0 (checked by :func:`~filterkit.testing.check_stage`)."""
        return False

    def needs_row_positions(self) -> bool:
        """True when this stage's result depends on each row's position in the whole input,
        which a part of the input read on its own (a Dask partition) does not know; such a
        stage runs on the whole input only."""
        return False

    def prepare(self, schema: Schema, context: Context) -> None:
        """See the input schema before any data; decide which attributes to act on."""
        self.input_schema = schema
        self.context = context
        self.features = self.select_features(schema, context)

    def select_features(self, schema: Schema, context: Context) -> np.ndarray:
        """Positions of the attributes this stage acts on: numeric, not the class."""
        return numeric_features(schema, context.class_index)

    def fit_warnings(self) -> list[str]:
        """What the chain warns of once this stage is fitted, each a line ``filterkit: warning: stage N
        'NAME' …``: by default :attr:`nothing_to_read` when the stage found none of the attributes it reads."""
        return [self.nothing_to_read] if self.nothing_to_read and not len(self.features) else []

    def new_statistics(self) -> Any:
        """Empty statistics, for a stage that learns."""
        raise NotImplementedError

    def accumulate(self, statistics: Any, chunk: Chunk) -> Any:
        """Statistics updated with one chunk of training rows."""
        raise NotImplementedError

    def merge(self, first: Any, second: Any) -> Any:
        """Statistics of two disjoint parts of the data, combined: by default ``first.merge(second)``."""
        if not callable(getattr(first, "merge", None)):
            raise NotImplementedError(
                f"its statistics ({type(first).__name__}) have no merge method: "
                f"define {type(self).__name__}.merge(first, second)"
            )
        return first.merge(second)

    def finalize(self, statistics: Any) -> None:
        """Turn the statistics of all training rows into fitted state."""
        raise NotImplementedError

    def output_schema(self) -> Schema:
        """The schema of transformed chunks: changed attributes become ``numeric`` (made once per
        input schema and features: 40 ms at 13,000 attributes, asked for several times)."""
        made = self.__dict__.get("_output_schema_made")
        if made is not None and made[0] is self.input_schema and made[1] is self.features:
            return made[2]
        attributes = list(self.input_schema.attributes)
        redeclared = False
        for i in self.features.tolist():
            if not (attributes[i].is_plain_numeric and attributes[i].declared_type == "numeric"):
                attributes[i] = attributes[i].as_numeric()
                redeclared = True
        schema = self.input_schema.with_attributes(attributes) if redeclared else self.input_schema
        self._output_schema_made = (self.input_schema, self.features, schema)
        return schema

    def transform(self, chunk: Chunk) -> Chunk:
        """The chunk with this stage applied (pure)."""
        raise NotImplementedError

    def state(self) -> dict:
        """Fitted state as plain numbers, strings, lists and numpy arrays: by default each array of
        ``state_arrays`` (the attribute of its key) and the options it was fitted with
        (``fitted_options``); nothing for a stage without state arrays."""
        if not self.state_arrays:
            return {}
        return {**{key: getattr(self, key) for key in self.state_arrays}, OPTIONS_KEY: fitted_options(self)}

    def load_state(self, state: dict) -> None:
        """Restore fitted state saved by :meth:`state` (after :meth:`prepare`): by default refuse
        other options than the state recorded, check each array of ``state_arrays`` (FilterkitError
        naming the entry) and set it as the attribute of its key."""
        saved = SavedState(self, state)
        saved.check_options()
        sizes = {FEATURES: len(self.features), ATTRIBUTES: len(self.input_schema)}
        for key, state_array in self.state_arrays.items():
            array = saved.array(key, state_array, sizes)
            sizes[key] = len(array)
            setattr(self, key, array)


class ValueMapped(Stage):
    """Opt-in protocol of a stage whose output value of an acted-on feature depends only on the feature and the
    value (``shape``, the scorers, ``binarize``, ``minmax``): it declares :meth:`value_map` once, and its
    :meth:`transform`, :meth:`stored_values_map` and :meth:`statistics_for` come from it.  A subclass that
    defines ``transform`` but neither map inherits neither of the last two: they describe the transform above it."""

    def value_map(self) -> Any:
        """None, or, for a stage whose output value of an acted-on feature depends only on the
        feature and the value, ``map(positions, values) -> values`` (float64) for the features
        ``features[positions]`` (None, the default, for a stage that has only a :meth:`stored_values_map`)."""
        return None

    def stored_values_map(self) -> Any:
        """None, or, for a fitted stage whose transform of a sparse chunk changes only its stored values
        (0 kept at 0), ``map(rows, data) -> values``: the float64 stored values its transform gives the
        CSR structure ``rows`` (read-only) holding ``data`` (not to be modified).  By default from
        :meth:`value_map`; ``l2`` (the row's norm) defines its own.  The chain runs consecutive such
        stages as one step on a sparse chunk."""
        value_map = self.value_map()
        n = len(self.features)
        if value_map is None or np.any(value_map(np.arange(n), np.zeros(n))):
            return None
        position_of = positions_by_width(self.features)
        return lambda rows, data: mapped_stored(rows, data, position_of(rows.shape[1]), value_map)

    def statistics_for(self, following: Stage) -> Any:
        """The statistics ``following`` (the next stage, prepared) would gather in a pass over this
        stage's training output, derived from this stage's own (called right after :meth:`finalize`);
        None (the default) when they cannot be derived exactly."""
        return None

    def transform(self, chunk: Chunk) -> Chunk:
        """The chunk with this stage applied (pure): by its :meth:`value_map`."""
        value_map = self.value_map()
        if value_map is None:
            raise NotImplementedError
        return map_features(chunk, self.features, value_map)


class KeptPass(Stage):
    """Opt-in protocol of a stage that learns whose fitting pass keeps each chunk in a form of its own
    (:meth:`accumulate_kept`), so that the passes after it (the fit's and the one writing the output) read that
    form back (:meth:`transform_kept`) instead of the input, and do not run this stage's work or the stages'
    before it again.  A stage that is not one keeps the chunks it is given, but not chunks holding text."""

    #: Whether it keeps its own form: True, or a property where that depends on the options (``words``: not
    #: with character n-grams).  A stage that sets it without naming this protocol is made one.
    keeps_fit_pass: ClassVar[bool] = True

    def accumulate_kept(self, statistics: Any, chunk: Chunk) -> tuple[Any, Chunk]:
        """:meth:`accumulate`'s statistics, and ``chunk`` (its rows, in order) in a form of its choosing that
        :meth:`transform_kept` turns into its output once fitted."""
        raise NotImplementedError

    def transform_kept(self, kept: Chunk) -> Chunk:
        """The output of the chunk whose kept form (:meth:`accumulate_kept`) is ``kept``: what
        :meth:`transform` makes of that chunk, to the bit."""
        raise NotImplementedError


class Updatable(Stage):
    """Opt-in protocol of a stage a model saved ``--updatable`` can hold (:mod:`filterkit.updating`): it saves
    and loads the statistics of :meth:`accumulate`, and says how it writes the old rows once fitted again."""

    def saved_statistics(self, statistics: Any) -> dict:
        """The statistics of :meth:`accumulate` as plain numbers, strings, lists, dicts and numpy arrays, the
        same whatever order the rows came in (the class counts of :mod:`filterkit.statistics` are saved
        without it); by default (a stage written before the protocols that defines only
        :meth:`values_after_refit`) none can be."""
        raise FilterkitError(f"stage '{self.name}' cannot save its statistics, so a model holding it cannot be updated")

    def loaded_statistics(self, saved: dict) -> Any:
        """The statistics :meth:`saved_statistics` gave (after :meth:`prepare`); FilterkitError where they do
        not fit the stage (by default, as that one, always)."""
        raise FilterkitError(f"stage '{self.name}' cannot load saved statistics")

    def values_after_refit(self, before: Stage, before_statistics: Any) -> list[str] | None:
        """For ``filterkit update``: whether this stage, fitted again on more rows, writes for the rows ``before``
        (this stage fitted on those rows alone, from ``before_statistics``) was fitted on the values it wrote
        then, attribute by attribute (by name).  None when it may not (the default: what a stage learns
        changes its values); else the names of the output attributes ``before`` did not write that may hold
        a value other than 0 in those rows (a word they hold that was not kept then).  A FilterkitError says
        why it may not, its message what the stage does, as in "stage 1 MESSAGE" (``words``: "names the
        word 'label' 'label_2' now, where it named it 'label_1'")."""
        return None


class Explainable(Stage):
    """Opt-in protocol of a stage whose output is a function of counts (a log, an idf), which ``explain`` shows
    as the counts (:mod:`filterkit.trained`)."""

    def explained_counts(self, chunk: Chunk) -> Chunk | None:
        """What ``explain`` shows as the count of a feature this stage makes: ``chunk`` counted only, shaped as
        its :meth:`transform` output; None where the output's values are themselves what a person reads as the
        counts."""
        raise NotImplementedError


#: Each protocol, by the methods (or the flag) that a stage class written before the protocols defines to
#: implement it: such a class is made the protocol's subclass (:func:`_adopt`).
_ADOPTED_BY.update(
    {
        ValueMapped: frozenset({"value_map", "stored_values_map", "statistics_for"}),
        KeptPass: frozenset({"keeps_fit_pass", "accumulate_kept", "transform_kept"}),
        Updatable: frozenset({"saved_statistics", "loaded_statistics", "values_after_refit"}),
        Explainable: frozenset({"explained_counts"}),
    }
)


#: What a stage's ``accepts`` and ``widening_hint`` must be (:func:`filterkit.contract.declared`).
DECLARED_ACCEPTS = declared_type(Accepts, expected="a filterkit.stage.Accepts")
DECLARED_WIDENING_HINT = declared_type(str, type(None), expected="a string or None")


def map_features(chunk: Chunk, features: np.ndarray, value_map) -> Chunk:
    """The chunk with each value x of feature ``features[p]`` replaced by ``value_map(p, x)``
    (:meth:`ValueMapped.value_map`); a sparse chunk stays sparse, touching only its stored values, where
    every feature maps 0 to 0 (otherwise it is computed densely and stored sparse again)."""
    n = len(features)
    if chunk.is_sparse and not np.any(value_map(np.arange(n), np.zeros(n))):
        rows = chunk.csr()
        return chunk.with_stored(
            mapped_stored(rows, rows.data, feature_positions(rows.shape[1], features), value_map), rows
        )
    values = chunk.dense_values().copy()
    block = values[:, features]
    positions = np.broadcast_to(np.arange(n), block.shape)
    values[:, features] = value_map(positions.ravel(), block.ravel()).reshape(block.shape)
    if not chunk.is_sparse:
        return Chunk(values, chunk.text, chunk.weights)
    import scipy.sparse as sp

    return Chunk(sp.csr_matrix(values), chunk.text, chunk.weights)


def mapped_stored(rows: Any, data: np.ndarray, position_of: np.ndarray, value_map) -> np.ndarray:
    """``data``, the stored values of the CSR ``rows``, with those of the features mapped (``position_of``:
    each column's position among them, :func:`feature_positions`), as float64."""
    if isinstance(value_map, _Factors):
        return value_map.stored(rows, data, position_of)
    positions = position_of[rows.indices]
    mapped = np.array(data, dtype=np.float64)
    acted = np.flatnonzero(positions >= 0)
    mapped[acted] = value_map(positions[acted], mapped[acted])
    return mapped


def scale_features(
    chunk: Chunk,
    features: np.ndarray,
    factor: np.ndarray,
    offset: np.ndarray | None = None,
    exponents: tuple[np.ndarray, np.ndarray] | None = None,
) -> Chunk:
    """The chunk with each feature column j replaced by ``(x − offset[j]) · factor[j]``, with the
    power-of-two ``exponents = (inner, outer)`` of :func:`range_scaling` when given (bit for bit the
    plain result where no step overflows or underflows, the true one where it would); other columns,
    missing values, text and weights kept, a sparse chunk sparse when no offset moves a zero."""
    zeros = np.zeros(len(features), dtype=np.int64)
    inner, outer = (zeros, zeros) if exponents is None else exponents
    offset = np.zeros(len(features)) if offset is None else offset
    return map_features(chunk, features, scaling_map(np.asarray(factor), offset, inner, outer))


def scale_values(
    values: np.ndarray, factor: np.ndarray, offset: np.ndarray, exponents: tuple[np.ndarray, np.ndarray] | None = None
) -> np.ndarray:
    """``(values − offset) · factor`` elementwise, with :func:`range_scaling`'s ``exponents`` when given; a zero
    unsigned (``+ 0.0``: a value below the offset times a factor of 0 is 0, not -0, as :class:`_Factors` gives it)."""
    if exponents is None:
        return (values - offset) * factor + 0.0
    inner, outer = exponents
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        return np.ldexp((np.ldexp(values, inner) - np.ldexp(offset, inner)) * factor, outer) + 0.0


def scaling_map(factor: np.ndarray, offset: np.ndarray, inner: np.ndarray, outer: np.ndarray):
    """``map(positions, values)`` for :meth:`ValueMapped.value_map`: :func:`scale_values` of each feature."""
    if not (inner.any() or outer.any() or offset.any()):
        return _Factors(factor)
    exponents = inner.any() or outer.any()
    return lambda positions, values: scale_values(
        values, factor[positions], offset[positions], (inner[positions], outer[positions]) if exponents else None
    )


class _Factors:
    """The map ``x · factor[position]``, on stored values one multiplication by each column's factor, then ``+ 0.0``,
    which changes -0 alone: a negative x of a feature scored 0 gives 0 (a sparse row, which stores no zero, wrote 0
    where its dense twin wrote -0), as does a -0, whatever the other columns' factors."""

    def __init__(self, factor: np.ndarray):
        self.factor = factor
        #: The ``position_of`` of the last chunk and its columns' factors (1 outside the features): a stored-values
        #: map, made once per chain, is given the same ``position_of`` for every chunk (:func:`positions_by_width`).
        self.column_factor: tuple[np.ndarray, np.ndarray] | None = None

    def __call__(self, positions: np.ndarray, values: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):  # past a double's range is ±inf (0·inf NaN), as in Java
            scaled = values * self.factor[positions]
        return np.add(scaled, 0.0, out=scaled)

    def stored(self, rows: Any, data: np.ndarray, position_of: np.ndarray) -> np.ndarray:
        made = self.column_factor
        if made is None or made[0] is not position_of:
            made = self.column_factor = (position_of, np.append(self.factor, 1.0)[position_of])  # −1: the 1 appended
        with np.errstate(over="ignore", invalid="ignore"):
            scaled = data * made[1][rows.indices]
        return np.add(scaled, 0.0, out=scaled)


def refuse_infinite_ranges(stage: Stage, low: np.ndarray, high: np.ndarray) -> None:
    """FilterkitError naming the first feature of ``stage`` whose training range is not finite."""
    infinite = ~(np.isfinite(low) & np.isfinite(high))
    if infinite.any():
        name = stage.input_schema.attributes[stage.features[np.flatnonzero(infinite)[0]]].name
        raise FilterkitError(
            f"stage '{stage.name}': attribute '{name}' has an infinite training value, so its range cannot be scaled"
        )


def range_scaling(low: np.ndarray, high: np.ndarray, target: np.ndarray):
    """``(factor, (inner, outer))`` for :func:`scale_features` mapping each feature's range
    [low, high] onto a width of ``target`` (factor 0 where the width is not positive).

    Where ``target / (high − low)`` is a safe double, that is the factor and both exponents are 0.
    Elsewhere the values are first scaled by a power of two that brings the range near 1 and the
    factor split into a mantissa and a power of two, so no step overflows or underflows.
    """
    low, high, target = (np.asarray(a, dtype=np.float64) for a in (low, high, target))
    with np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore"):
        width = high - low
        valid = width > 0
        factor = np.where(valid, target / np.where(valid, width, 1.0), 0.0)
        tiny = np.finfo(np.float64).tiny
        plain = ~valid | (
            (width >= tiny) & np.isfinite(width) & np.isfinite(factor) & ((factor >= tiny) | (target == 0))
        )
        inner = np.zeros(len(width), dtype=np.int64)
        outer = np.zeros(len(width), dtype=np.int64)
        extreme = np.flatnonzero(~plain)
        if len(extreme):
            magnitude = np.maximum(np.abs(low[extreme]), np.abs(high[extreme]))
            inner[extreme] = -np.frexp(magnitude)[1]
            scaled_width = np.ldexp(high[extreme], inner[extreme]) - np.ldexp(low[extreme], inner[extreme])
            mantissa, outer[extreme] = np.frexp(target[extreme])
            factor[extreme] = mantissa / scaled_width
    return factor, (inner, outer)


#: How :func:`range_scaling`'s exponents are saved: whole numbers well inside ±4096 (doubles span
#: 2^±1074), and 0 in a state saved before they were.
SCALING_EXPONENTS = {
    key: StateArray(whole=True, low=-4096, high=4096, default=0) for key in ("inner_exponent", "outer_exponent")
}


def stored_in_features(rows: Any, features: np.ndarray) -> np.ndarray:
    """Per stored entry of CSR ``rows``: whether its column is one of ``features``."""
    acted = np.zeros(rows.shape[1], dtype=bool)
    acted[features] = True
    return acted[rows.indices]


def with_stored_values(matrix: Any, data: np.ndarray) -> Any:
    """``matrix`` (a CSR matrix) with new stored values, sharing its structure; values that became 0
    are dropped, on a copy (:meth:`Chunk.with_stored` needs no matrix)."""
    import scipy.sparse as sp

    result = sp.csr_matrix((data, matrix.indices, matrix.indptr), shape=matrix.shape, copy=False)
    if not data.all():
        result = result.copy()
        result.eliminate_zeros()
    return result


def feature_positions(n_columns: int, features: np.ndarray) -> np.ndarray:
    """Per column, its position among ``features`` (−1 for a column that is not one)."""
    position = np.full(n_columns, -1, dtype=np.int64)
    position[features] = np.arange(len(features))
    return position


def task_choices(labels: int, command: Literal["evaluate", "train", ""] = "") -> str:
    """What to give where a class of ``labels`` (more than two) labels meets what needs a task, one
    positive class: ``--positive``, and the command's ways to every class (``evaluate``: ``--each-class`` or
    ``--multiclass``; ``train``: ``--multiclass``); for a stage that needs one (no command), ``evaluate
    --each-class`` (``--multiclass`` runs no stage that needs a positive class)."""
    one = "--positive LABEL (that class against the rest)"
    every = f"--multiclass (all {labels} classes at once)"
    if command == "evaluate":
        return f"{one}, --each-class (each class against the rest, in turn) or {every}"
    if command == "train":
        return f"{one} or {every}"
    return f"{one}, or run each class in turn with evaluate --each-class"


def positions_by_width(features: np.ndarray) -> Callable[[int], np.ndarray]:
    """``n_columns -> feature_positions(n_columns, features)`` (read-only), made once for the last width asked:
    for a stored-values map, which a chain makes once and calls at every chunk (at 13,000 words making the
    positions and the factors of every column took a seventh of a one-document transform)."""

    @functools.lru_cache(maxsize=1)
    def positions(n_columns: int) -> np.ndarray:
        made = feature_positions(n_columns, features)
        made.flags.writeable = False  # shared by every chunk the map is given
        return made

    return positions


def refuse_unaccepted_input(stage: Stage, schema: Schema, context: Context) -> None:
    """FilterkitError, before any work, when the input lacks the class ``stage.accepts`` needs."""
    accepts = declared(stage, "accepts", DECLARED_ACCEPTS)
    if not (accepts.nominal_class or accepts.two_classes):
        return
    if context.labels and context.class_index is None:
        if accepts.labels:
            return
        raise FilterkitError(
            f"stage '{stage.name}' learns from one class and this data has {len(context.labels)} labels a row "
            "(multi-label): it has no multi-label form"
        )
    given = None if context.class_index is None else schema.attributes[context.class_index]
    if given is None or given.kind != NOMINAL:
        alternative = f", {accepts.without_class}" if accepts.without_class else ""
        raise FilterkitError(f"stage '{stage.name}' needs a nominal class attribute (-c){alternative}")
    if accepts.two_classes and context.positive is None and len(given.labels) != 2:
        raise FilterkitError(
            f"stage '{stage.name}' needs a two-class task (it has no k-class form, so --multiclass cannot run it): "
            f"the class '{given.name}' has {len(given.labels)} labels: give {task_choices(len(given.labels))}"
        )


def refuse_negative_values(stage: Stage, chunk: Chunk) -> Chunk:
    """``chunk``, unless ``stage`` accepts only non-negative values and one of its features holds a negative
    one: FilterkitError naming the stage and the attribute."""
    if not declared(stage, "accepts", DECLARED_ACCEPTS).non_negative or not len(stage.features):
        return chunk
    if chunk.is_sparse:
        rows = chunk.csr()
        acted = feature_positions(rows.shape[1], stage.features)[rows.indices] >= 0
        negative = rows.indices[acted][rows.data[acted] < 0]
    else:
        block = np.asarray(chunk.values)[:, stage.features]
        negative = stage.features[np.nonzero(block < 0)[1]]
    if len(negative):
        name = stage.input_schema.attributes[int(negative.min())].name
        raise FilterkitError(f"stage '{stage.name}' accepts no negative value: attribute '{name}' holds one")
    return chunk


def numeric_features(schema: Schema, class_index: int | None) -> np.ndarray:
    """Positions of the numeric attributes other than the class."""
    numeric = schema.positions_of(NUMERIC)
    return numeric[numeric != (-1 if class_index is None else class_index)]  # a new array, the caller's
