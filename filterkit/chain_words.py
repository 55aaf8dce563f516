"""A chain's words (``shape --no-zero-bin bns l2``) read by the library (:meth:`Registry.parse_chain`): the stage
names and their options as ``filterkit IN.arff STAGE…`` reads them on the command line, each value checked
against its declared :class:`~filterkit.stage.Option` and refused in the command line's words, so that
``filterkit.train``, ``evaluate`` and a chain typed on the command line say the same thing about the same
mistake.

The words are read as click reads a chained group of stages: a stage's options follow its name (``--top 10``,
``--top=10``, a bool option's ``--presence`` or ``--no-presence``; a later one wins; ``--`` ends them), and the
first other word names the next stage.  Every stage's words are read before any stage is made.  Where click
would print a help (``shape --help``; ``--help`` before the first stage or in a stage's place, as in
``l2 -- --help``), the library, which prints none, raises :class:`ChainHelpError`: the command line prints it.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import get_close_matches
from typing import TYPE_CHECKING, Any, Mapping, Protocol

from filterkit.errors import FilterkitError, OptionError
from filterkit.stage import Option

if TYPE_CHECKING:
    from filterkit.tasks import ChainSpec


class Registry(Protocol):
    """What reading a chain's words asks of the plugin registry (:class:`filterkit.plugins.Registry`, which calls
    this module, so it is named here by what it offers)."""

    @property
    def stages(self) -> Mapping[str, Any]:
        """Each stage's registration by name (its ``value`` the stage class)."""

    def make_stage(self, name: str, params: dict, saved: bool = False) -> Any:
        """A new stage ``name`` with ``params``."""


#: The option every stage of the command line has besides its own.
HELP = "--help"


class ChainWordsError(Exception):
    """A mistake in a chain's words, as the command line words it."""


class _Misplaced(ChainWordsError):
    """An option its stage lacks: the words' mistake, the option as typed, and whether another stage has it."""

    def __init__(self, message: str, option: str, staged: bool) -> None:
        super().__init__(message)
        self.option, self.staged = option, staged


class MisplacedOptionError(FilterkitError):
    """A chain's option that its stage lacks, as :func:`parse_chain` words it; the chain's ``text``, the
    ``option`` as typed and whether another stage has it (``staged``), so that a command can say where its own
    option of that name goes."""

    def __init__(self, message: str, text: str, option: str, staged: bool) -> None:
        super().__init__(message)
        self.text, self.option, self.staged = text, option, staged


class HelpAsked(ChainWordsError):
    """The words ask for a help (``shape --help``), which the command line prints and the library cannot."""


class ChainHelpError(FilterkitError):
    """A chain's words ask for a help (``shape --help``): the command line prints it (and exits 0); a chain read
    by the library (``filterkit.train(chains=…)``) is refused."""


@dataclass
class StageWords:
    """One stage of a chain as typed: its name and each option given, by the option's name (its last value)."""

    name: str
    given: dict[str, Any]


def parse_chain(registry: Registry, words: list[str], preset: dict[str, dict] | None = None) -> ChainSpec:
    """The chain of ``words`` as stage names and parameters (:meth:`Registry.parse_chain`); ``preset`` gives,
    per stage name, values for options the words leave out.  FilterkitError ``chain 'WORDS': why``;
    :class:`ChainHelpError` where the command line would print a help instead."""
    import shlex

    from filterkit.tasks import ChainSpec

    text = shlex.join(words) if words else "(none)"
    try:
        typed = _stage_words(registry, list(words))
        stages = [_made(registry, stage, (preset or {}).get(stage.name, {})) for stage in typed]
    except HelpAsked as asked:
        raise ChainHelpError(f"chain '{text}': {asked}") from None
    except _Misplaced as misplaced:
        raise MisplacedOptionError(f"chain '{text}': {misplaced}", text, misplaced.option, misplaced.staged) from None
    except ChainWordsError as error:
        raise FilterkitError(f"chain '{text}': {error}") from None
    return ChainSpec(text, [(stage.name, dict(stage.params)) for stage in stages])


def _stage_words(registry: Registry, words: list[str]) -> list[StageWords]:
    """Each stage of ``words`` with its options, read and converted (none made yet)."""
    rest = _chain_options(words)
    stages = []
    while rest:
        name = rest[0]
        if name in registry.stages:
            options = registry.stages[name].value.options
            given, rest = _options(registry, name, options, rest[1:])
            stages.append(StageWords(name, _converted(options, given)))
        elif name.startswith("-"):
            _chain_options(rest)
            raise ChainWordsError(_no_such(name, [], "command"))
        else:
            raise ChainWordsError(_no_such(name, sorted(registry.stages), "command"))
    return stages


def _chain_options(words: list[str]) -> list[str]:
    """The words after the chain's own options (it has one, ``--help``) at the start of ``words``, where click
    reads them: before the first stage, and again where a word like an option stands in a stage's place."""
    asked = False
    while words and _is_option(words[0]):
        word, words = words[0], words[1:]
        if word == "--":
            break
        spelled, equals, _ = word.partition("=")
        if not word.startswith("--"):
            raise ChainWordsError(_no_such(word[:2], []))
        if spelled != HELP:
            raise _Misplaced(_no_such(spelled, [HELP]), spelled, False)
        _no_value(spelled, equals)
        asked = True
    if asked:
        raise HelpAsked(f"{HELP} asks for the list of stages, which only the command line prints (filterkit {HELP})")
    return words


def _options(registry: Registry, stage: str, options: tuple[Option, ...], words: list[str]) -> tuple[dict, list]:
    """The options of ``stage`` at the start of ``words`` (as typed, by option name) and the words after them."""
    spellings = _spellings(options)
    given: dict[str, Any] = {}
    asked = False
    while words and _is_option(words[0]):
        word, words = words[0], words[1:]
        if word == "--":
            break
        spelled, equals, value = word.partition("=")
        if not word.startswith("--"):
            spelled = word[:2]  # a short option: the stages have none
        if spelled != HELP and spelled not in spellings:
            raise _misplaced(registry, stage, options, spelled)
        if spelled == HELP:
            _no_value(spelled, equals)
            asked = True
            continue
        option, flag_value = spellings[spelled]
        if option.kind is bool:
            _no_value(spelled, equals)
        elif not equals:
            if not words:
                raise ChainWordsError(f"Option '{spelled}' requires an argument.")
            value, words = words[0], words[1:]
        if option.name in given:  # as the command line refuses it (its last value had won without a word)
            raise ChainWordsError(f"option {_both_spellings(option)} is given twice: give it once")
        given[option.name] = flag_value if option.kind is bool else value
    if asked:
        raise HelpAsked(
            f"{HELP} asks for the help of {stage}, which only the command line prints (filterkit {stage} {HELP})"
        )
    return given, words


def _both_spellings(option: Option) -> str:
    """An option as click names it in an error: a flag with its off flag (``--presence/--no-presence``)."""
    return f"{option.flag}/{option.off_flag or '--no-' + option.flag[2:]}" if option.kind is bool else option.flag


def _no_value(spelled: str, equals: str) -> None:
    """Refuse a flag given a value (``--presence=1``) as the command line does."""
    if equals:
        raise ChainWordsError(f"Option '{spelled}' does not take a value.")


def _is_option(word: str) -> bool:
    return word.startswith("-") and len(word) > 1


def _spellings(options: tuple[Option, ...]) -> dict[str, tuple[Option, bool | None]]:
    """Each way an option of a stage is typed: its flag and, for a bool option, the flag that turns it off."""
    spellings: dict[str, tuple[Option, bool | None]] = {}
    for option in options:
        spellings[option.flag] = (option, True if option.kind is bool else None)
        if option.kind is bool:
            spellings[option.off_flag or f"--no-{option.flag[2:]}"] = (option, False)
    return spellings


def _converted(options: tuple[Option, ...], given: dict[str, Any]) -> dict[str, Any]:
    """The options given, each value converted to its option's type and checked against its choices and bounds,
    in the order they were first given."""
    by_name = {option.name: option for option in options}
    return {name: _value(by_name[name], value) for name, value in given.items()}


def _value(option: Option, value: Any) -> Any:
    """One typed value as its option takes it; the command line's words for one it refuses."""
    if option.kind is bool or option.kind is str and not option.choices:
        return value
    where = f"Invalid value for '{option.flag}'"
    if option.choices:
        if value not in option.choices:
            listed = ", ".join(repr(choice) for choice in option.choices)
            refusal = (
                f"{value!r} is not {listed}." if len(option.choices) == 1 else f"{value!r} is not one of {listed}."
            )
            raise ChainWordsError(f"{where}: {refusal}")
        return value
    kind, low, high = option.kind, option.minimum, option.maximum
    try:
        number = kind(value)
    except ValueError:
        named = ("integer" if kind is int else "float") + (" range" if low is not None or high is not None else "")
        raise ChainWordsError(f"{where}: {value!r} is not a valid {named}.") from None
    if (low is not None and number < low) or (high is not None and number > high):
        raise ChainWordsError(f"{where}: {number} is not in the range {_range(low, high)}.")
    return number


def _default(option: Option) -> Any:
    """An option's declared default as the command line passes it on: a number in the option's type."""
    if option.default is None or option.choices or option.kind not in (int, float):
        return option.default
    return option.kind(option.default)


def _range(low, high) -> str:
    """A closed range as the command line describes it."""
    if low is None:
        return f"x<={high}"
    if high is None:
        return f"x>={low}"
    return f"{low}<=x<={high}"


def _made(registry: Registry, stage: StageWords, preset: dict):
    """The stage of ``stage``'s words: its options' defaults, then ``preset``, then the options given; an
    option both preset and given (a chain's own value that ``--sweep`` would replace, silently) or one the
    stage refuses is a mistake in the words."""
    options = registry.stages[stage.name].value.options
    both = [name for name in preset if name in stage.given]
    if both:
        spelled = "--" + both[0].replace("_", "-")
        raise ChainWordsError(f"stage '{stage.name}' is given {spelled}, which --sweep sets: leave it out of the chain")
    params = {option.name: _default(option) for option in options}
    params.update(preset)
    params.update(stage.given)
    try:
        return registry.make_stage(stage.name, params)
    except OptionError as error:
        raise ChainWordsError(error.message) from None


def _misplaced(registry: Registry, stage: str, options: tuple[Option, ...], option: str) -> _Misplaced:
    """The mistake of ``option``, which ``stage`` does not have: the stages it belongs to, or the stage's
    options that look like it (compared without their dashes, so that ``--top`` does not look like ``--output``)."""
    owners = sorted(
        name
        for name, registered in registry.stages.items()
        if name != stage and option in _spellings(registered.value.options)
    )
    if owners:
        where = f"put it after '{owners[0]}'" if len(owners) == 1 else "put it after the name of the stage it is for"
        return _Misplaced(f"{option} is an option of {', '.join(owners)}, not of {stage}: {where}", option, True)
    bare = {name.lstrip("-"): name for name in [*_spellings(options), HELP]}
    close = get_close_matches(option.lstrip("-"), list(bare), n=3)
    return _Misplaced(_no_such(option, [bare[name] for name in close]), option, False)


def _no_such(name: str, possibilities: list[str], what: str = "option") -> str:
    """``No such option 'NAME'.`` (or command), with those of ``possibilities`` that look like it."""
    close = sorted(get_close_matches(name, possibilities)) if possibilities else []
    message = f"No such {what} {name!r}."
    if len(close) == 1:
        return f"{message} Did you mean {close[0]!r}?"
    if close:
        return f"{message} (Did you mean one of: {', '.join(repr(option) for option in close)}?)"
    return message
