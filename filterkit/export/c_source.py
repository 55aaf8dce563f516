"""``filterkit export MODEL --c OUT.c`` (issue 78): a trained model as one C source file with no dependency that
scores a document as ``predict`` does, its decision values bit for bit (docs/serving.md).

The model's chain is lowered stage by stage to the steps of :mod:`filterkit.export.steps` (each stage's
``exported_step()``), its linear classifier to weights, intercepts and the rule its ``exported_rule()`` names;
``scorer.c`` (the template) performs them with the arithmetic of the Python and compiled paths.  What cannot be
expressed exactly is refused with one line naming the stage.  Nothing the model holds becomes code: its strings are
written as byte arrays, its numbers as hexadecimal floating-point literals, its sizes as integers checked here.
"""

from __future__ import annotations

import math
from importlib.resources import files
from typing import NamedTuple

import numpy as np

from filterkit.errors import FilterkitError
from filterkit.export.steps import Keep, Normalize, NotExportable, Presence, Scale, Shape, Step, Unchanged, Words
from filterkit.schema import NUMERIC
from filterkit.text import shown

#: ln(1 + c) of the whole counts below this is read from a table numpy computed (``--log-tf``); past it (a word
#: 65,536 times in one document), libm's, which may differ from numpy's in the last bit.
LOG_TABLE_SIZE = 65536

#: Numbers a line of a generated array holds.
_PER_LINE = 8


def c_source(model) -> str:
    """The C source of ``model``'s scorer: the template with the model's tokenizer (a chain starting with ``words``)
    or its input attributes, its data and its steps in it."""
    stages = list(model.chain.stages)
    steps = [exported_step_of(stage) for stage in stages]
    words = steps[0] if steps else None
    if isinstance(words, Words):
        steps.pop(0)
        stages.pop(0)
        others = [name for name in words.kept if name not in model.targets]
        if others:
            raise FilterkitError(
                f"the model reads attribute '{others[0]}' besides its text: an exported scorer reads one document"
            )
        reading, model_parts, source = "#define SCORER_DOCUMENTS 1\n", [_words_data(words)], words.source
    else:
        reading, model_parts, source = "#define SCORER_DOCUMENTS 0\n", [_input_data(model)], ""
    calls = []
    for number, (stage, step) in enumerate(zip(stages, steps), start=1):
        if isinstance(step, Words):
            raise FilterkitError(
                f"stage '{stage.name}' makes words after another stage: an exported scorer reads them first"
            )
        model_parts.append(_step_data(step, number))
        calls.append(_step_call(step, number))
    model_parts.append(_positions("SCORER_FEATURES", classifier_columns(model)))
    calls.append("scorer_renumber(v, &SCORER_FEATURES);")
    model_parts.append(_classifier_data(model))
    model_parts.append(
        "static int\nscorer_steps(scorer_vector *v)\n{\n"
        + "".join(f"    {call}\n" for call in calls)
        + "    return 1;\n}\n"
    )
    uses = "".join(
        f"#define SCORER_USES_{kind} {int(any(function in call for call in calls))}\n"
        for kind, function in (
            ("SHAPE", "scorer_shape_values"),
            ("COPIES", "scorer_shape_copies"),
            ("SCALE", "scorer_scale_values"),
            ("PRESENCE", "scorer_presence"),
            ("NORMALIZE", "scorer_normalize"),
        )
    )
    template = (files("filterkit.export") / "scorer.c").read_text(encoding="utf-8")
    return template.replace("/* @TOKENS@ */", reading + uses + source).replace("/* @MODEL@ */", "\n".join(model_parts))


def answer_line_warning(model) -> str | None:
    """What the scorer's ``main`` writes ambiguously, where a label holds a line break or a tab (which end its
    answer line and fields) or, of a label-set model, a comma (which joins labels); None where it does not.  The
    library's ``answer_name`` gives such a label whole."""
    breaking = "\n\r\t" + ("," if model.label_sets else "")
    for label in model.labels:
        held = next((character for character in breaking if character in label), None)
        if held is not None:
            return (
                f"label {shown(label)} holds {held!r}, which the C scorer's main writes as it is, making its answer "
                "lines ambiguous: read answers with answer_name() in a program"
            )
    return None


def _input_data(model) -> str:
    """A model read from its input attributes' values (no ``words``): their number, and which are the class or
    labels; FilterkitError for an input attribute that is not numeric."""
    attributes = model.input_schema.attributes
    for attribute in attributes:
        if attribute.kind != NUMERIC and attribute.name not in model.targets:
            raise FilterkitError(
                f"the model reads {attribute.kind} attribute '{attribute.name}': an exported scorer reads a document "
                "(a chain starting with words) or numeric attributes"
            )
    target = bytes(attribute.name in model.targets for attribute in attributes)
    return f"#define SCORER_INPUTS {_whole(len(attributes))}\n" + _bytes("SCORER_TARGET", target)


#: The methods by which a stage class computes its values: a subclass of the class that defines ``exported_step``
#: that defines one of them computes otherwise than the step says.
_COMPUTING = (
    "transform",
    "transform_kept",
    "value_map",
    "stored_values_map",
    "counted",
    "_weighted",
    "_words_of",
    "_shape",
    "_shaped_stored",
    "_transform_copies",
    "_normalized_stored",
    "scaling",
)


def exported_step_of(stage) -> Step:
    """``stage``'s step; FilterkitError naming it when it has none, refuses, or is of a subclass that computes its
    values otherwise than the class whose exported form it inherits."""
    exported = getattr(stage, "exported_step", None)
    if exported is None:
        raise FilterkitError(f"stage '{stage.name}' cannot be exported: it has no exported form")
    classes = type(stage).__mro__
    owner = next(k for k, cls in enumerate(classes) if "exported_step" in vars(cls))
    for cls in classes[:owner]:
        overridden = [name for name in _COMPUTING if name in vars(cls)]
        if overridden:
            raise FilterkitError(
                f"stage '{stage.name}' cannot be exported: its class {cls.__qualname__} defines its own "
                f"{overridden[0]}, which the exported form of {classes[owner].__qualname__} does not compute"
            )
    try:
        return exported()
    except NotExportable as refusal:
        raise FilterkitError(f"stage '{stage.name}' cannot be exported: {refusal}") from None


def _words_data(words: Words) -> str:
    """The words step's settings and tables."""
    log_table = np.log(np.arange(LOG_TABLE_SIZE, dtype=np.float64) + 1.0) if words.log_tf else np.zeros(1)
    parts = [_doubles("SCORER_LOG_TABLE", log_table)]
    if words.idf is not None:
        parts.append(_doubles("SCORER_IDF", words.idf))
    parts.append(
        "static const scorer_words SCORER_WORDS = {"
        f"{_whole(words.first_column)}, {int(words.counts)}, {int(words.log_tf)}, SCORER_LOG_TABLE, "
        f"{len(log_table) if words.log_tf else 0}, {'SCORER_IDF' if words.idf is not None else 'NULL'}}};\n"
    )
    return "".join(parts)


def _step_data(step: Step, number: int) -> str:
    """The data of step ``number`` of the chain, named after its number."""
    name = f"SCORER_STEP_{number}"
    if isinstance(step, Shape):
        tables = step.tables
        floats = (
            "knot_value",
            "knot_probability",
            "first_probability",
            "zero_probability",
            "default_probability",
            "zero_shift",
        )
        parts = [_positions(f"{name}_ACTED", step.acted), _int64s(f"{name}_KNOT_START", tables["knot_start"])]
        parts += [_doubles(f"{name}_{key.upper()}", tables[key]) for key in floats]
        parts.append(_bytes(f"{name}_NOMINAL", np.asarray(tables["column_nominal"], dtype=np.uint8).tobytes()))
        fields = ", ".join(f"{name}_{key.upper()}" for key in floats)
        parts.append(_doubles(f"{name}_MISSING_PROBABILITY", tables["missing_probability"]))
        parts.append(
            f"static const scorer_shape {name} = {{{name}_ACTED, {name}_KNOT_START, {fields}, {name}_NOMINAL, "
            f"{int(step.zero_bin)}, {name}_MISSING_PROBABILITY, {int(tables['missing_bin'])}}};\n"
        )
        if step.copies is not None:
            parts.append(_copies_data(name, *step.copies))
        return "".join(parts)
    if isinstance(step, Scale):
        exponents = ""
        if step.exponents is not None:
            inner, outer = ([int(e) for e in exponent] for exponent in step.exponents)
            exponents = _integers(f"{name}_INNER", inner, "int32_t") + _integers(f"{name}_OUTER", outer, "int32_t")
        powers = "NULL, NULL" if step.exponents is None else f"{name}_INNER, {name}_OUTER"
        return (
            _positions(f"{name}_ACTED", step.acted)
            + _doubles(f"{name}_FACTOR", step.factor)
            + exponents
            + f"static const scorer_scale {name} = {{{name}_ACTED, {name}_FACTOR, {powers}}};\n"
        )
    if isinstance(step, Keep):
        return _positions(name, step.columns)
    if isinstance(step, Presence):
        return _positions(name, step.acted)
    if isinstance(step, Normalize):
        return _positions(name, step.acted)
    return ""


def _copies_data(name: str, source: np.ndarray, output_table: np.ndarray) -> str:
    """One-vs-rest shaping's layout: per input column its first output column and their number, per output column
    its knot table (:class:`filterkit.export.steps.Shape`)."""
    source = np.asarray(source, dtype=np.int64)
    if len(source) and np.any(np.diff(source) < 0):
        raise FilterkitError("shape's copies are not in the order of their columns: an exported scorer keeps it")
    n_inputs = int(source[-1]) + 1 if len(source) else 0
    n_outputs = np.bincount(source, minlength=n_inputs)
    return (
        _int64s(f"{name}_FIRST_OUTPUT", np.cumsum(n_outputs) - n_outputs)
        + _int64s(f"{name}_N_OUTPUTS", n_outputs)
        + _integers(f"{name}_OUTPUT_TABLE", [int(v) for v in output_table], "int32_t")
        + f"static const scorer_copies {name}_COPIES = {{&{name}, {name}_FIRST_OUTPUT, {name}_N_OUTPUTS, "
        f"{_whole(n_inputs)}, {name}_OUTPUT_TABLE}};\n"
    )


def _step_call(step: Step, number: int) -> str:
    """The statement that performs step ``number``."""
    name = f"SCORER_STEP_{number}"
    if isinstance(step, Shape) and step.copies is not None:
        return f"if (!scorer_shape_copies(v, &{name}_COPIES))\n        return 0;"
    if isinstance(step, Shape):
        return f"scorer_shape_values(v, &{name});"
    if isinstance(step, Scale):
        return f"scorer_scale_values(v, &{name});"
    if isinstance(step, Keep):
        return f"scorer_renumber(v, &{name});"
    if isinstance(step, Presence):
        return f"scorer_presence(v, &{name});"
    if isinstance(step, Normalize):
        if step.order not in (1, 2):
            raise FilterkitError(f"a norm of order {step.order}: an exported scorer has l1 and l2")
        return f"scorer_normalize(v, &{name}, {step.order});"
    if isinstance(step, Unchanged):
        return "/* a stage that changes no value */"
    raise FilterkitError(f"an exported step of an unknown kind ({type(step).__name__})")


def classifier_columns(model) -> np.ndarray:
    """The chain's output columns the classifier reads, in its order: the numeric ones but the class or labels
    (:func:`filterkit.classifying.classifier_matrix`); FilterkitError for a nominal feature (one-hot)."""
    schema = model.output_schema
    for position, attribute in enumerate(schema.attributes):
        if attribute.kind != NUMERIC and position not in model.left_out and attribute.kind == "nominal":
            raise FilterkitError(
                f"the chain's output holds nominal attribute '{attribute.name}', which the classifier reads one-hot: "
                "an exported scorer reads words only"
            )
    numeric = schema.positions_of(NUMERIC)
    return numeric[~np.isin(numeric, model.left_out)]


def _classifier_data(model) -> str:
    """The classifier's weights (feature after feature), intercepts, Platt sigmoids, thresholds, task and the
    names of its answers."""
    if model.linear is None:
        raise FilterkitError(f"classifier '{model.section['name']}' is not linear: it cannot be exported")
    weights, intercepts = model.linear
    outputs = len(model.classes)
    rules = classifier_rules(model, outputs)
    sigmoids, thresholds = rules.sigmoids, rules.thresholds
    constants = list(getattr(model, "constants", [None] * outputs))
    task = 2 if model.label_sets else 1 if model.multiclass else 0
    names = [name.encode("utf-8", "surrogatepass") for name in model.labels]
    starts = np.cumsum([0, *map(len, names)])
    return "".join(
        [
            f"#define SCORER_OUTPUTS {_whole(outputs)}\n#define SCORER_TASK {task}\n",
            _doubles("SCORER_WEIGHTS", np.ascontiguousarray(np.asarray(weights, dtype=np.float64).T).ravel()),
            _doubles("SCORER_INTERCEPTS", np.asarray(intercepts, dtype=np.float64)),
            f"#define SCORER_HAS_SIGMOIDS {int(rules.every_sigmoid)}\n",
            f"#define SCORER_ANY_SIGMOID {int(rules.sigmoid_of.any())}\n",
            _doubles("SCORER_SIGMOIDS", np.zeros(2) if sigmoids is None else sigmoids.ravel()),
            _integers("SCORER_SIGMOID_OF", rules.sigmoid_of.astype(int).tolist(), "signed char"),
            f"#define SCORER_HAS_THRESHOLDS {int(thresholds is not None)}\n",
            _doubles("SCORER_THRESHOLDS", np.zeros(1) if thresholds is None else thresholds),
            _integers("SCORER_THRESHOLD_OF", rules.threshold_of.astype(int).tolist(), "signed char"),
            _integers("SCORER_CONSTANT", [-1 if c is None else int(bool(c)) for c in constants], "signed char"),
            _bytes("SCORER_NAMES", b"".join(names)),
            _int64s("SCORER_NAME_START", starts),
        ]
    )


class ClassifierRules(NamedTuple):
    """What the classifier applies to its decision values, per output: the Platt sigmoids (A, B) (None where no
    output has one; zeros in an output without), the thresholds (None where none has one), which outputs have a
    sigmoid and which a threshold, and whether every fitted output has a sigmoid (then it gives probabilities).
    A label set's labels may differ: a label too rare for Platt's inner folds is decided by its margin."""

    sigmoids: np.ndarray | None
    thresholds: np.ndarray | None
    sigmoid_of: np.ndarray
    threshold_of: np.ndarray
    every_sigmoid: bool


def classifier_rules(model, outputs: int) -> ClassifierRules:
    """The rules of :class:`ClassifierRules`, as each classifier's ``exported_rule()`` gives them (each label's,
    for label sets)."""
    classifiers = model.classifiers if model.label_sets else [model.classifier]
    rules = [None if call is None else _rule(call, model) for call in classifiers]
    width = 1 if model.label_sets else outputs
    sigmoids, thresholds = np.zeros((outputs, 2)), np.zeros(outputs)
    sigmoid_of, threshold_of = np.zeros(outputs, dtype=bool), np.zeros(outputs, dtype=bool)
    for k, rule in enumerate(rules):
        if rule is None:
            continue
        at = slice(k, k + 1) if model.label_sets else slice(0, outputs)
        if rule[0] is not None:
            sigmoids[at], sigmoid_of[at] = np.reshape(rule[0], (width, 2)), True
        if rule[1] is not None:
            thresholds[at], threshold_of[at] = np.reshape(rule[1], width), True
    fitted = np.array([rule is not None for rule in rules]).repeat(width)
    return ClassifierRules(
        sigmoids if sigmoid_of.any() else None,
        thresholds if threshold_of.any() else None,
        sigmoid_of,
        threshold_of,
        bool(fitted.any() and sigmoid_of[fitted].all()),
    )


def _rule(call, model) -> tuple:
    """One loaded classifier's ``exported_rule()``: (sigmoids or None, thresholds or None)."""
    if not hasattr(call.classifier, "exported_rule"):
        raise FilterkitError(
            f"classifier '{model.section['name']}' cannot be exported: it does not say how it decides (exported_rule)"
        )
    sigmoids, thresholds = call("exported_rule")
    return (
        None if sigmoids is None else np.asarray(sigmoids, dtype=np.float64),
        None if thresholds is None else np.asarray(thresholds, dtype=np.float64),
    )


def _positions(name: str, columns) -> str:
    """A ``scorer_positions`` giving each of ``columns`` (ascending) its position: a range when they are
    consecutive, else a table by column."""
    columns = np.asarray(columns, dtype=np.int64)
    if len(columns) and np.any(np.diff(columns) <= 0):
        raise FilterkitError("a step's columns are not ascending: an exported scorer keeps the columns' order")
    if len(columns) == 0 or columns[-1] - columns[0] + 1 == len(columns):
        first = int(columns[0]) if len(columns) else 0
        return f"static const scorer_positions {name} = {{{_whole(first)}, {_whole(len(columns))}, NULL, 0}};\n"
    if len(columns) >= 2**31 - 1:
        raise FilterkitError("more than 2^31 features: an exported scorer numbers them in 32 bits")
    table = np.full(int(columns[-1]) + 1, -1, dtype=np.int64)
    table[columns] = np.arange(len(columns))
    return _integers(f"{name}_TABLE", table.tolist(), "int32_t") + (
        f"static const scorer_positions {name} = {{0, 0, {name}_TABLE, {_whole(len(table))}}};\n"
    )


def _doubles(name: str, values) -> str:
    """A ``static const double`` array of ``values``, each written exactly."""
    return _array(name, "double", [_double(float(x)) for x in np.ravel(np.asarray(values, dtype=np.float64))])


def _double(x: float) -> str:
    """``x`` as a C99 constant expression of exactly its value."""
    if math.isnan(x):
        return "NAN"
    if math.isinf(x):
        return "INFINITY" if x > 0 else "-INFINITY"
    return x.hex()


def _int64s(name: str, values) -> str:
    return _integers(name, [int(v) for v in np.ravel(values)], "int64_t")


def _bytes(name: str, data: bytes) -> str:
    """Bytes from the model (names, words) as numbers: no byte of them is written into the source as a character."""
    return _integers(name, list(data), "unsigned char")


def _integers(name: str, values: list[int], kind: str) -> str:
    return _array(name, kind, [_whole(v) for v in values])


def _whole(value: int) -> str:
    """A whole number as a C constant (64-bit ones written as such)."""
    value = int(value)
    if not -(2**63) <= value < 2**63:
        raise FilterkitError(f"a size or index of {value} does not fit an exported scorer's 64 bits")
    return f"INT64_C({value})" if not -(2**31) < value < 2**31 else str(value)


def _array(name: str, kind: str, literals: list[str]) -> str:
    """``static const KIND NAME[] = {…};`` (one 0 for an empty array, which C does not allow)."""
    literals = literals or ["0"]
    lines = (", ".join(literals[at : at + _PER_LINE]) for at in range(0, len(literals), _PER_LINE))
    return f"static const {kind} {name}[] = {{\n    " + ",\n    ".join(lines) + "\n};\n"
