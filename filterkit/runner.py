"""Running a chain of stages over chunk sources (:mod:`filterkit.sources`).

:class:`Chain` fits stage 1 on the input, stage 2 on stage 1's output, and so on: one pass per
stage that learns (none where the stage before derives its statistics: ``shape bns``), holding
only statistics between chunks.  :meth:`Chain.rebuilt` makes a fitted chain again from each
stage's name, options and state (model files, Dask tasks, the scikit-learn adapters).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, NamedTuple

import numpy as np

from filterkit.contract import (
    STATE_MISFITS,
    OutputContract,
    PluginCrash,
    broken,
    called,
    declared,
    input_class_column,
    plugin_fault,
    stage_origin,
)
from filterkit.errors import FilterkitError
from filterkit.labels import (
    LABELS_TAKE_THE_CLASS,
    NamedLabels,
    label_names,
    label_positions,
    refuse_class_choice,
    refuse_label_options,
)
from filterkit.plugins import Registry
from filterkit.progress import Progress, active
from filterkit.schema import NOMINAL, Chunk, Schema, check_positive, rows_of_entries
from filterkit.stage import (
    DECLARED_ACCEPTS,
    DECLARED_WIDENING_HINT,
    Context,
    KeptPass,
    Stage,
    ValueMapped,
    refuse_negative_values,
    refuse_unaccepted_input,
)

if TYPE_CHECKING:
    from filterkit.sources import KeptChunks

#: A stage's output this many times as wide as its input, by this many attributes at least, is worth a
#: warning (the text benchmarks: ``ordinal`` ×2.8–×5.0, one-vs-rest ``shape`` ×6–×10; small files are cheap).
WIDENING_FACTOR, WIDENING_ATTRIBUTES = 5.5, 10_000

#: Held while a chain makes or looks up its :class:`TransformPlan`.
_PLANNING = threading.Lock()


#: What a stage's ``load_state`` (or the ``output_schema`` after it) raises on a state
#: that does not fit it, besides FilterkitError.
def resolve_class(schema: Schema, spec: str | None) -> int | None:
    """The class attribute's position for ``-c``: last, first, a 1-based index or a name."""
    if not schema.attributes or spec is None:
        return None
    count = len(schema.attributes)
    if spec == "last":
        return count - 1
    if spec == "first":
        return 0
    if spec.isascii() and spec.isdigit():
        position = int(spec)
        if not 1 <= position <= count:
            raise FilterkitError(f"class index {position} is outside 1..{count}")
        return position - 1
    try:
        return schema.index_of(spec)
    except KeyError:
        raise FilterkitError(f"no attribute called '{spec}' to use as the class") from None


class Chain:
    """Stages applied in order; fitted from a source, then applied to chunks."""

    def __init__(
        self,
        stages: list[Stage],
        class_spec: str | None = "last",
        positive: str | None = None,
        labels: NamedLabels | None = None,
    ):
        self.stages = list(stages)
        self.class_spec = class_spec
        self.positive = positive
        #: The label attributes' names as Mulan's XML gives them (None: MEKA's ``-C`` in the relation, or none).
        self.labels = labels
        self.input_schema: Schema | None = None
        self.output_schema: Schema | None = None
        self.class_name: str | None = None
        #: The label attributes of multi-label input (:mod:`filterkit.labels`), which then has no class.
        self.label_names: tuple[str, ...] = ()
        #: The stages and the :class:`TransformPlan` of the last transform (None: none since the fit).
        self._plan: tuple[list[Stage], TransformPlan] | None = None
        #: The warnings of the last fit: a stage whose output is much wider than its input (:func:`widening`),
        #: what a stage says of its fit (:meth:`Stage.fit_warnings`).
        self.warnings: list[str] = []
        #: Set to ``{}`` before a fit to keep, by stage position, the statistics each pass gathered (not those
        #: derived from the stage before): what ``--updatable`` saves (:mod:`filterkit.updating`).
        self.kept_statistics: dict[int, Any] | None = None

    @classmethod
    def rebuilt(
        cls,
        registry: Registry,
        stages: Iterable[tuple[str, dict, dict | None]],
        input_schema: Schema,
        class_name: str | None,
        positive: str | None,
        labels: tuple[str, ...] | None = None,
    ) -> "Chain":
        """A fitted chain made again from each stage's ``(name, options, state)``, the input schema, the
        class attribute's name and the positive label.  A state of None marks the stage being fitted
        (the last): it is prepared only, and the chain has no output schema.  FilterkitError
        ``stage N 'NAME': why`` when a stage cannot be made, or refuses its options or state.
        """
        entries = list(stages)
        made = []
        for position, (name, params, _) in enumerate(entries, 1):
            try:
                made.append(registry.make_stage(name, params, saved=True))
            except PluginCrash:  # its plugin's failure, not the model's
                raise
            except FilterkitError as error:
                raise FilterkitError(f"stage {position} '{name}': {error}") from None
        chain = cls(made, class_spec=None, positive=positive, labels=None if labels is None else NamedLabels(labels))
        chain.input_schema, chain.class_name = input_schema, class_name
        chain.label_names = label_names(input_schema, chain.labels)
        schema = input_schema
        for position, (stage, (_, _, state)) in enumerate(zip(made, entries)):
            try:
                chain.prepare_stage(position, schema, saved=state is not None)
                if state is None:
                    return chain
                stage.load_state(state)
                schema = stage.output_schema()
            except (FilterkitError, *STATE_MISFITS) as error:  # the state does not fit the stage: the model's fault
                detail = str(error) if isinstance(error, FilterkitError) else f"{type(error).__name__}: {error}"
                detail = detail.removeprefix(f"stage '{stage.name}': ")  # said once, with its position
                raise FilterkitError(f"stage {position + 1} '{stage.name}': {detail}") from None
            except BaseException as error:  # any other crash is its plugin's, as a fit's is
                if not plugin_fault(error):
                    raise
                crash = f"{type(error).__name__}: {error}"
                break
        else:
            chain.output_schema = schema
            return chain
        raise PluginCrash(f"{stage_origin(stage)} failed while loading its saved state: {crash}")

    def prepare_stage(self, position: int, schema: Schema, saved: bool = False) -> None:
        """Show stage ``position`` its input schema and context; ``saved``: a model's stage, whose options were
        taken when it was fitted (a model saved before label options were refused on a class still loads)."""
        named = (i for i, attribute in enumerate(schema.attributes) if attribute.name == self.class_name)
        labels = label_positions(schema, self.label_names)
        context = Context(next(named, None), self.positive, tuple(self.stages[:position]), labels)
        stage = self.stages[position]
        refuse_unaccepted_input(stage, schema, context)
        if not saved:
            refuse_label_options(stage, context)
        guarded(stage, "prepare", stage.prepare, schema, context)

    def planned_passes(self) -> int:
        """The passes over the input fitting may take: one per stage that learns."""
        return sum(1 for stage in self.stages if declared(stage, "learns"))

    def fit(
        self,
        source,
        progress: Progress | None = None,
        start: Callable[[int, Stage], Any] | None = None,
        keep: KeptChunks | None = None,
    ) -> "Chain":
        """Fit every stage in turn on the output of the stages before it, each pass reported to ``progress``;
        ``start(position, stage)`` gives the statistics a pass adds its rows to (default: the stage's new
        statistics; ``filterkit update``: those of the rows the chain was fitted on before).

        With ``keep``, each pass keeps the chunks its stage is given there, or the stage's own form of them
        when it :attr:`~KeptPass.keeps_fit_pass` (not chunks holding text: reading and cutting documents again costs
        less than keeping them), and the next pass reads them back instead of the input and the stages before:
        where every pass keeps, the input is read, and each stage's work done, once.  A pass that cannot keep (past
        the bound of :class:`KeptChunks`, a full temporary folder) leaves the pass before it to be read.  ``keep``
        holds the last pass's chunks for :meth:`transform_kept`."""
        progress = active() if progress is None else progress
        if keep is not None and keep.stage_position is not None:
            raise ValueError("a KeptChunks holds the chunks of one fit")

        def statistics_of(position: int, stage: Stage):
            statistics = guarded(stage, "fit", stage.new_statistics) if start is None else start(position, stage)
            kept_before = keep if keep is not None and keep.stage_position is not None else None
            # a source whose passes read its chunks parsed already gains nothing by a copy of them
            parsed_already = kept_before is None and position == 0 and getattr(source, "rereads_chunks", False)
            own_form = isinstance(stage, KeptPass) and declared(stage, "keeps_fit_pass")
            filling = None if keep is None or (parsed_already and not own_form) else keep.fresh()
            try:
                with progress.step(f"fitting {stage.name}", source if kept_before is None else kept_before) as meter:
                    statistics = self.fit_pass(position, statistics, source.chunks, kept_before, filling, meter.counted)
                if keep is not None and filling is not None and filling.stage_position is not None:
                    keep.adopt(filling)  # else the pass before it is still the one to read
            finally:
                if filling is not None:
                    filling.close()
            return statistics

        return self.fit_with(source.schema, statistics_of, progress)

    def fit_pass(
        self,
        position: int,
        statistics: Any,
        read: Callable[[], Iterable[Chunk]],
        kept_before: KeptChunks | None,
        filling: KeptChunks | None,
        counted: Callable[[Iterable[Chunk]], Iterator[Chunk]] = iter,
        own_form: bool = True,
    ) -> Any:
        """Stage ``position``'s ``statistics`` grown by one pass (the stages before it fitted): over the chunks the
        pass before kept (``kept_before``), else over ``read()``'s chunks through the stages before it, each
        ``counted`` as read; each chunk kept in ``filling`` (None: nothing kept) as :meth:`fit` keeps them, until
        ``filling`` gives up (its ``stage_position`` None then).  Not ``own_form``: a stage's own form of its chunks
        (which may number things as these statistics alone do, before they merge with others) is not kept."""
        stage = self.stages[position]
        kept_pass = stage if isinstance(stage, KeptPass) and declared(stage, "keeps_fit_pass") and own_form else None
        if kept_before is not None:
            chunks = self._from_kept(kept_before, position, counted)
        else:
            chunks = self._through(counted(read()), self.stages[:position])
        for chunk in chunks:
            chunk = refuse_negative_values(stage, chunk)
            if filling is None:
                statistics = guarded(stage, "fit", stage.accumulate, statistics, chunk)
                continue
            statistics = self._accumulated_keeping(position, stage, statistics, chunk, kept_pass, filling)
            if filling.stage_position is None:
                filling = None  # given up (closed): the rest of this pass keeps nothing
        return statistics

    @staticmethod
    def _accumulated_keeping(
        position: int, stage: Stage, statistics: Any, chunk: Chunk, kept_pass: KeptPass | None, filling: KeptChunks
    ) -> Any:
        """``stage``'s statistics with ``chunk`` added, the chunk kept in ``filling``: in the stage's own form
        when it keeps one (``kept_pass``, the stage: :meth:`KeptPass.accumulate_kept`), else as it is given,
        unless it holds text (string attributes)."""
        if kept_pass is None:
            if chunk.text_lengths():
                filling.give_up()
            else:
                filling.keep(position, chunk, None, own_form=False)
            return guarded(stage, "fit", stage.accumulate, statistics, chunk)
        statistics, kept = kept_form(stage, guarded(stage, "fit", kept_pass.accumulate_kept, statistics, chunk))
        if kept.n_rows != chunk.n_rows:
            raise broken(stage, "fit", f"accumulate_kept kept {kept.n_rows} rows of {chunk.n_rows}")
        # a kept form that cannot be saved (text not strings, arrays of objects) is the stage's fault
        class_column = input_class_column(stage, chunk)
        guarded(stage, "fit", lambda: filling.keep(position, kept, class_column, own_form=True))
        return statistics

    def checked_class(self, schema: Schema, name: str | None = None) -> int | None:
        """The position of the class ``-c`` names in ``schema`` (None: label sets, or no class); FilterkitError
        (naming the data's ``name``) for ``-c`` or ``--positive`` on label sets, and for a ``--positive`` that is
        no label of the class (checked here, as a stage that ignores it would record it)."""
        if label_names(schema, self.labels):
            refuse_class_choice(self.class_spec, name)
            if self.positive is not None:
                raise FilterkitError(
                    f"--positive {self.positive!r}: the data {LABELS_TAKE_THE_CLASS}: a stage's --label NAME learns "
                    "from one label alone",
                    name,
                )
            return None
        class_index = None
        try:
            class_index = resolve_class(schema, self.class_spec)
            check_positive(self.positive, None if class_index is None else schema.attributes[class_index], name)
        except FilterkitError as error:
            raise FilterkitError(error.message + class_hint(schema, class_index), error.path or name) from None
        return class_index

    def fit_with(self, schema: Schema, statistics_of, progress: Progress | None = None) -> "Chain":
        """Fit every stage in turn; ``statistics_of(position, stage)`` returns the statistics of all
        training rows of a stage that learns (one pass, local or on a cluster)."""
        progress = active() if progress is None else progress
        self.input_schema = schema
        self.label_names = label_names(schema, self.labels)
        class_index = self.checked_class(schema)
        self.class_name = None if class_index is None else schema.attributes[class_index].name
        hint = class_hint(schema, class_index)
        self.warnings, self._plan = [], None
        if self.kept_statistics is not None:
            self.kept_statistics.clear()
        for position, stage in enumerate(self.stages):
            try:
                self.prepare_stage(position, schema)
            except FilterkitError as error:
                if "(-c)" not in error.message:  # not the class's fault
                    raise
                raise FilterkitError(error.message + hint, error.path, error.line) from None
            if declared(stage, "learns"):
                statistics = self._derived_statistics(position, stage, progress)
                if statistics is None:
                    statistics = statistics_of(position, stage)
                    if self.kept_statistics is not None:
                        self.kept_statistics[position] = statistics
                else:
                    progress.expect(-1)
                    progress.note(
                        f"fitting {stage.name}: its statistics come from {self.stages[position - 1].name}'s pass "
                        "(no pass of its own)"
                    )
                with progress.working(f"fitting {stage.name}: its state from its statistics"):
                    guarded(stage, "fit", stage.finalize, statistics)
            output = guarded(stage, "fit", OutputContract.of, stage, "fit").schema
            warning = widening(position, stage, schema, output)
            if warning is not None:
                self.warnings.append(warning)
            self.warnings += [
                f"stage {position + 1} '{stage.name}' {text}" for text in guarded(stage, "fit", stage.fit_warnings)
            ]
            schema = output
        self.output_schema = schema
        return self

    def _derived_statistics(self, position: int, stage: Stage, progress: Progress):
        """``stage``'s statistics derived by the stage before it (:meth:`ValueMapped.statistics_for`), or None."""
        if position == 0 or not declared(self.stages[position - 1], "learns"):
            return None
        previous = self.stages[position - 1]
        if not isinstance(previous, ValueMapped):
            return None
        with progress.working(f"fitting {stage.name}: deriving its statistics from those of stage '{previous.name}'"):
            return guarded(previous, "fit", previous.statistics_for, stage)

    def transform(self, chunks: Iterable[Chunk]) -> Iterator[Chunk]:
        """Apply every (fitted) stage to each chunk, by the chain's :class:`TransformPlan`."""
        stages = list(self.stages)
        yield from self._through(chunks, stages, self._plan_for(stages))

    def transform_kept(
        self, kept: KeptChunks, counted: Callable[[Iterable[Chunk]], Iterator[Chunk]] = iter
    ) -> Iterator[Chunk]:
        """The output of the chunks the fit's last pass kept (:meth:`fit` with ``keep``), each ``counted`` as read."""
        yield from self._from_kept(kept, len(self.stages), counted)

    def _from_kept(
        self,
        kept: KeptChunks,
        end: int,
        counted: Callable[[Iterable[Chunk]], Iterator[Chunk]],
    ) -> Iterator[Chunk]:
        """The chunks stage ``end`` is given (the output, at the chain's length), made from the ``kept`` chunks,
        each ``counted`` as read: through the stages from the one that kept them, or, in its own form, through
        its :meth:`~KeptPass.transform_kept`, checked as :meth:`transform` checks a stage, then those after it."""
        position = kept.stage_position
        assert position is not None, "no chunk was kept"
        if not kept.own_form:
            return self._through(counted(chunk for chunk, _ in kept.chunks()), self.stages[position:end])
        stage = self.stages[position]
        assert isinstance(stage, KeptPass), "only a KeptPass keeps its own form"
        contract = guarded(stage, "transform", OutputContract.of, stage)

        def finished() -> Iterator[Chunk]:
            for chunk, class_column in kept.chunks():
                result = guarded(stage, "transform", stage.transform_kept, chunk)
                yield contract.checked(chunk, result, "transform", contract.class_before(chunk, class_column))[0]

        return self._through(counted(finished()), self.stages[position + 1 : end])

    def _plan_for(self, stages: list[Stage]) -> TransformPlan:
        """The plan of ``stages`` (the chain's), made on the first transform after a fit and kept, so a
        service's one-row calls pay for it once; under a lock, as threads may transform at once."""
        with _PLANNING:
            made = self._plan
            if made is None or len(made[0]) != len(stages) or any(a is not b for a, b in zip(made[0], stages)):
                made = self._plan = (stages, transform_plan(stages))
        return made[1]

    def each_stage(self, chunk: Chunk) -> list[Chunk]:
        """``chunk`` after each (fitted) stage in turn, each result checked as :meth:`transform` checks it."""
        stages = list(self.stages)
        plan = self._plan_for(stages)  # each stage's contract and map, as the chain's transform has them
        outputs = []
        for stage, contract, value_map in zip(stages, plan.contracts, plan.maps):
            chunk = next(self._through([chunk], [stage], TransformPlan([contract], [value_map], [(0, 1)])))
            outputs.append(chunk)
        return outputs

    def check_input(self, schema: Schema, name: str) -> None:
        """Refuse data whose header differs from the training header."""
        assert self.input_schema is not None, "check_input needs a fitted chain"
        difference = self.input_schema.first_difference(schema)
        if difference is not None:
            raise FilterkitError(f"header differs from the training data: {difference}", name)

    @staticmethod
    def _through(chunks: Iterable[Chunk], stages: list[Stage], plan: TransformPlan | None = None) -> Iterator[Chunk]:
        """Each chunk through ``stages`` (fitted), every result checked against the stage contract, by
        ``plan`` (made here when not given: once per pass).

        On a sparse chunk, consecutive stages with a stored-values map run as one step checked against
        the last one's contract; a stage that moves the class runs by its ``transform``, and one that
        changes the class ends its step."""
        contracts, maps, steps = transform_plan(stages) if plan is None else plan
        for chunk in chunks:
            class_column = None  # the chunk's class column as the last check read it
            for start, end in steps:
                if maps[start] is not None and chunk.is_sparse:
                    refuse_negative_values(stages[start], chunk)
                    chunk, class_column = _mapped_together(
                        chunk, stages[start:end], maps[start:end], contracts[end - 1]
                    )
                    continue
                for stage, contract in zip(stages[start:end], contracts[start:end]):
                    class_before = contract.class_before(chunk, class_column)  # a stage may change it in place
                    result = guarded(stage, "transform", stage.transform, refuse_negative_values(stage, chunk))
                    chunk, class_column = contract.checked(chunk, result, "transform", class_before)
            yield chunk


class TransformPlan(NamedTuple):
    """What running fitted stages over a chunk needs that no chunk changes: each stage's output contract
    and stored-values map (None: none, or it moves the class), and the ``(start, end)`` steps they run in."""

    contracts: list[OutputContract]
    maps: list
    steps: list[tuple[int, int]]


def transform_plan(stages: list[Stage]) -> TransformPlan:
    """The :class:`TransformPlan` of fitted ``stages``: each contract's schema checks and each map made
    (a map asks every feature where 0 goes: at 13,000 words most of a one-row transform)."""
    contracts = [guarded(stage, "transform", OutputContract.of, stage) for stage in stages]
    maps = [
        guarded(stage, "transform", stage.stored_values_map)
        if isinstance(stage, ValueMapped) and contract.class_in == contract.class_out
        else None
        for stage, contract in zip(stages, contracts)
    ]
    # a stage that accepts no negative value is given a chunk it can check: it starts a step
    non_negative = [declared(stage, "accepts", DECLARED_ACCEPTS).non_negative for stage in stages]
    steps = _steps(maps, [contract.changes_class for contract in contracts], non_negative)
    return TransformPlan(contracts, maps, steps)


def class_hint(schema: Schema, class_index: int | None) -> str:
    """For an error about the class: the ``-c`` that names a nominal attribute when the class is not one."""
    attributes = schema.attributes
    nominal = [i for i, attribute in enumerate(attributes) if attribute.kind == NOMINAL]
    if class_index is None or not nominal or attributes[class_index].kind == NOMINAL:
        return ""

    def place(i: int) -> str:
        return "first" if i == 0 else "last" if i == len(attributes) - 1 else str(i + 1)

    given = attributes[class_index]
    choices = ", ".join(f"-c {place(i)} for '{attributes[i].name}'" for i in nominal[:3])
    more = ", …" if len(nominal) > 3 else ""
    return f"; the class (-c {place(class_index)}) is '{given.name}', {given.kind}: give {choices}{more}"


def widening(position: int, stage: Stage, before: Schema, after: Schema) -> str | None:
    """The warning that stage ``position`` writes many times more attributes than it reads, or None."""
    width, wider = len(before.attributes), len(after.attributes)
    widening_hint = declared(stage, "widening_hint", DECLARED_WIDENING_HINT)
    if widening_hint is None or wider < WIDENING_FACTOR * width or wider - width < WIDENING_ATTRIBUTES:
        return None
    hint = f": {widening_hint}" if widening_hint else ""
    factor = wider / max(width, 1)
    return f"stage {position + 1} '{stage.name}' writes {wider:,} attributes from {width:,} ({factor:.1f}×){hint}"


def _steps(maps: list, ends_step: list[bool], starts_step: list[bool]) -> list[tuple[int, int]]:
    """``(start, end)`` ranges of stages: runs of stages with a map (cut after ``ends_step``, before
    ``starts_step``), others alone."""
    steps: list[tuple[int, int]] = []
    for position, value_map in enumerate(maps):
        joins = (
            steps
            and steps[-1][1] == position
            and maps[steps[-1][0]] is not None
            and not ends_step[position - 1]
            and not starts_step[position]
        )
        if value_map is not None and joins:
            steps[-1] = (steps[-1][0], position + 1)
        else:
            steps.append((position, position + 1))
    return steps


def _mapped_together(
    chunk: Chunk, stages: list[Stage], maps: list, contract: OutputContract
) -> tuple[Chunk, np.ndarray | None]:
    """``chunk`` (sparse) through ``stages``' stored-values maps, checked once against ``contract``."""
    structure = chunk.csr()
    # what the maps see: read-only views of its indices and indptr, which every map and the output share
    indices, indptr = structure.indices.view(), structure.indptr.view()
    indices.flags.writeable = indptr.flags.writeable = False
    rows = structure._replace(indices=indices, indptr=indptr)
    data = rows.data
    # the class column's stored values, copied: each map is checked to leave them (in place too)
    class_entries = contract.class_entries(rows)
    class_values = rows.data[class_entries].copy() if class_entries is not None else np.empty(0)
    for stage, value_map in zip(stages, maps):
        data = guarded(stage, "transform", value_map, rows, data)
        if not isinstance(data, np.ndarray) or data.dtype != np.float64 or data.shape != rows.data.shape:
            raise broken(
                stage,
                "transform",
                f"its stored-values map returned {getattr(data, 'dtype', type(data).__name__)} values of shape "
                f"{np.shape(data)}, expected float64 of shape {rows.data.shape}",
            )
        if class_entries is None:
            continue
        if declared(stage, "changes_class"):
            class_values = data[class_entries].copy()  # what the later maps must leave as it is
        elif not np.array_equal(data[class_entries], class_values, equal_nan=True):
            raise broken(
                stage,
                "transform",
                "its stored-values map changed the class column's values "
                "(a stage that does declares changes_class = True)",
            )
    class_before = None  # the class column whose stored values the maps were given
    if class_entries is not None:
        class_before = np.zeros(rows.shape[0])
        class_before[rows_of_entries(rows.indptr, class_entries)] = class_values
    return contract.checked(chunk, chunk.with_stored(data, structure), "transform", class_before)


def kept_form(stage: Stage, returned) -> tuple[Any, Chunk]:
    """What a stage's ``accumulate_kept`` returned, when it is its statistics and a chunk; else ContractError."""
    if not isinstance(returned, tuple) or len(returned) != 2 or not isinstance(returned[1], Chunk):
        raise broken(stage, "fit", "accumulate_kept must return its statistics and a filterkit Chunk")
    return returned


def guarded(stage: Stage, step: str, function, *args):
    """Call a stage's method; a crash becomes an error naming the stage."""
    return called(stage_origin(stage), step, function, *args)
