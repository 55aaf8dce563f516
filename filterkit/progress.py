"""Progress on stderr, for a person at a terminal and for a log.

One :class:`Progress` reports a run as numbered passes ("pass 2/3: fitting bns"):
the chain's fitting passes, the spooling of standard input and the writing pass,
the Dask engine's passes over partitions, ``evaluate``'s steps.  Each pass shows
how far it is: the percentage of the input's bytes and the time left when the
size is known, rows (or fits, or partitions) and their rate.

Three modes (:func:`progress_mode`): ``terminal``, one line per pass redrawn in
place and kept, with its totals, when the pass ends; ``log``, plain lines, one
every :data:`LOG_INTERVAL` seconds and one at the end of each pass; ``off``,
nothing.  Progress only reads the input's position and counts rows: it never
touches the data, and when off its meters hand the chunks on untouched.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import os
import sys
import time
from typing import Callable, Iterable, Iterator, TextIO

from filterkit.schema import Chunk

OFF, TERMINAL, LOG = "off", "terminal", "log"
#: Seconds between two lines of a log.
LOG_INTERVAL = 2.0
#: Seconds between two redraws of a terminal's line.
TERMINAL_INTERVAL = 0.1
#: Seconds of work between passes worth a line of its own.
NOTABLE_WORK = 1.0


def progress_mode(quiet: bool, requested: bool, stream: TextIO | None = None) -> str:
    """How progress is shown on ``stream`` (stderr by default): ``off`` with ``-q`` or
    without a stream; ``terminal`` on a terminal; ``log`` elsewhere when ``--progress``
    (or FILTERKIT_PROGRESS=1) asked for it, else ``off``."""
    stream = sys.stderr if stream is None else stream
    if quiet or stream is None:
        return OFF
    with contextlib.suppress(AttributeError, ValueError, OSError):
        if stream.isatty():
            return TERMINAL
    return LOG if requested else OFF


class Progress:
    """The progress of one run, written to ``stream`` in ``mode`` (see the module docstring);
    ``word`` names a pass ("pass", or "step" for ``evaluate``).  While the total is uncertain
    (``expect(n, certain=False)``, until :meth:`settle`), a pass shows no total: the total
    announced is the number of passes run."""

    def __init__(
        self,
        mode: str = OFF,
        stream: TextIO | None = None,
        word: str = "pass",
        clock: Callable[[], float] = time.monotonic,
    ):
        if mode not in (OFF, TERMINAL, LOG):
            raise ValueError(f"unknown progress mode {mode!r}")
        self.mode = mode
        self.stream = sys.stderr if stream is None else stream
        self.word = word
        self.clock = clock
        self.planned = 0
        self.uncertain = False
        self.done = 0
        self.started = clock()

    @property
    def enabled(self) -> bool:
        """Whether anything is shown."""
        return self.mode != OFF

    def expect(self, passes: int, certain: bool = True) -> None:
        """Add ``passes`` (negative: take away) to the passes this run plans; ``certain=False``:
        some may be taken away later (a stage's pass that the stage before may save)."""
        self.planned += passes
        self.uncertain = self.uncertain or not certain

    def settle(self) -> None:
        """No planned pass will be taken away from now on: the passes show the total again."""
        self.uncertain = False

    def note(self, text: str) -> None:
        """One line between passes (``filterkit: TEXT``)."""
        if self.enabled:
            self.write(f"filterkit: {text}\n")

    @contextlib.contextmanager
    def step(
        self, label: str, source=None, items: int | None = None, unit: str = "rows", uneven: bool = False
    ) -> Iterator["Meter"]:
        """One pass called ``label``, measured by a :class:`Meter` that counts ``items`` things
        to do, or the rows of ``source``: against their number when an earlier pass counted them
        (``source.rows``), else by the share of the input's bytes read, when ``source`` tells its
        ``size`` and ``position()``; ``unit=""``: a pass that counts no rows, only bytes.
        ``uneven``: the items differ in cost (a model fit each), so the time left is "about" and a
        log too gets a line when the pass begins, since the first item may take long.
        Its last line, with the totals, is written when the block ends; a failure ends a
        terminal's line."""
        self.done += 1
        if not self.enabled:
            yield Meter(self, "", None, None, items, unit, uneven=uneven)
            return
        number = f"{self.done}/{self.planned}" if self.planned >= self.done and not self.uncertain else f"{self.done}"
        size = getattr(source, "size", None)
        position = getattr(source, "position", None)
        if items is None:
            items = getattr(source, "rows", None)
        meter = Meter(self, f"filterkit: {self.word} {number}: {label}", size, position, items, unit, uneven=uneven)
        if (self.mode == TERMINAL or uneven) and items is not None:
            meter.show()
        try:
            yield meter
        except BaseException:
            if self.mode == TERMINAL:
                self.write("\n")
            raise
        meter.close()

    def warning(self, text: str) -> None:
        """A warning (``filterkit: warning: TEXT``), written whatever the mode, on a line of its own
        (a terminal's pass line is cleared first and redrawn at its next count)."""
        cleared = "\r\x1b[K" if self.mode == TERMINAL else ""
        self.write(f"{cleared}filterkit: warning: {text}\n")

    @contextlib.contextmanager
    def working(self, label: str, announced: bool = False) -> Iterator[None]:
        """Work between passes called ``label`` (a stage computing its state from its statistics):
        shown on a terminal while it lasts, and kept (in a log, written) with its time when it
        took :data:`NOTABLE_WORK` seconds or more; ``announced``: a log says when it begins too
        (work that may be long, such as a model's fit)."""
        if not self.enabled:
            yield
            return
        started = self.clock()
        if self.mode == TERMINAL:
            self.write(f"\rfilterkit: {label}…\x1b[K")
        elif announced:
            self.note(f"{label}…")
        try:
            yield
        finally:
            elapsed = self.clock() - started
            if self.mode == TERMINAL:
                self.write("\r\x1b[K")
        if elapsed >= NOTABLE_WORK:
            self.note(f"{label}: {duration(elapsed)}")

    def finish(self) -> None:
        """The run's last line: how many passes and the total time."""
        plural = self.word + ("es" if self.word.endswith("s") else "s")
        passes = f"{self.done} {self.word if self.done == 1 else plural}"
        self.note(f"done in {duration(self.clock() - self.started)} ({passes})")

    def write(self, text: str) -> None:
        """Write to the stream; progress never stops a run (a closed or full stderr is ignored)."""
        with contextlib.suppress(OSError, ValueError):
            self.stream.write(text)
            self.stream.flush()

    @contextlib.contextmanager
    def activated(self) -> Iterator["Progress"]:
        """Make this the :func:`active` progress for the block (what a stream's spooling reports to)."""
        token = _ACTIVE.set(self)
        try:
            yield self
        finally:
            _ACTIVE.reset(token)


@dataclasses.dataclass(eq=False)
class Meter:
    """How far one pass is: rows or items counted, the input's position; drawn by its
    :class:`Progress` at most every :data:`TERMINAL_INTERVAL` (terminal) or :data:`LOG_INTERVAL` (log) seconds."""

    progress: Progress
    title: str
    size: int | None
    position: Callable[[], int | None] | None
    items: int | None
    unit: str
    count: int = 0
    detail: str = ""
    #: Whether the pass's line has been drawn (by :meth:`Progress.step`, when it knows the count to reach).
    drawn: bool = False
    #: Whether the items differ in cost, so that the time left is an estimate ("about").
    uneven: bool = False

    def __post_init__(self) -> None:
        self.started = self.progress.clock()
        self.interval = TERMINAL_INTERVAL if self.progress.mode == TERMINAL else LOG_INTERVAL
        self.next_draw = self.started + self.interval

    def counted(self, chunks: Iterable[Chunk]) -> Iterator[Chunk]:
        """The chunks, unchanged, their rows counted (``chunks`` itself when progress is off)."""
        if not self.progress.enabled:
            return iter(chunks)
        return self._counting(chunks)

    def counting(self, write: Callable[[Chunk], object]) -> Callable[[Chunk], object]:
        """``write``, counting the rows of each chunk once written (``write`` itself when progress is off)."""
        if not self.progress.enabled:
            return write

        def write_counted(chunk: Chunk) -> None:
            write(chunk)
            self.advance(chunk.n_rows)

        return write_counted

    def _counting(self, chunks: Iterable[Chunk]) -> Iterator[Chunk]:
        if self.progress.mode == TERMINAL and not self.drawn:
            self.show()
        for chunk in chunks:
            self.advance(chunk.n_rows)
            yield chunk

    def advance(self, count: int = 1, detail: str = "") -> None:
        """``count`` more rows or items done; ``detail`` says what is being done now (shown until the end)."""
        if not self.progress.enabled:
            return
        self.count += count
        self.detail = detail
        now = self.progress.clock()
        if now >= self.next_draw:
            self.show(now)

    def show(self, now: float | None = None) -> None:
        """Draw the pass's line as of ``now`` (by default, the clock's time): redrawn in place on
        a terminal, a new line in a log."""
        now = self.progress.clock() if now is None else now
        self.next_draw = now + self.interval
        self.drawn = True
        text = f"{self.title}: {self.describe(now - self.started)}"
        if self.detail:
            text += f" ({self.detail})"
        if self.progress.mode == TERMINAL:
            self.progress.write(f"\r{_fitted(text, self.progress.stream)}\x1b[K")
        else:
            self.progress.write(text + "\n")

    def close(self) -> None:
        """The pass's last line, kept: its totals and time."""
        elapsed = self.progress.clock() - self.started
        text = f"{self.title}: {self.describe(elapsed, finished=True)}"
        if self.progress.mode == TERMINAL:
            text = f"\r{text}\x1b[K"
        self.progress.write(text + "\n")

    def describe(self, elapsed: float, finished: bool = False) -> str:
        """What is done: rows (or items) against their number, or the share of the input's bytes;
        the rate and the time left; when ``finished``, the totals and the time taken."""
        if not self.unit:
            return self._bytes_only(elapsed, finished)
        rate = f"{_rate(self.count / elapsed)} {self.unit}/s" if elapsed > 0 and (finished or self.count) else ""
        read = self.position() if self.position is not None and self.items is None else None
        if finished:
            where = f"100% of {data_size(self.size)}" if self.size else data_size(read) if read else ""
            return ", ".join(filter(None, [where, f"{self.count:,} {self.unit} in {duration(elapsed)}", rate]))
        where, fraction = self._share(read)
        parts = [where, rate]
        if fraction and elapsed > 0 and fraction < 1:
            about = "about " if self.uneven else ""
            parts.append(f"{about}{duration(elapsed * (1 - fraction) / fraction)} left")
        return ", ".join(filter(None, parts))

    def _share(self, read: int | None) -> tuple[str, float | None]:
        """How far a running pass is, in words and as a fraction (None when unknown): its items
        against their number, or the bytes ``read`` of the input's size, and its rows."""
        counted = f"{self.count:,} {self.unit}"
        if self.items is not None:
            fraction = min(self.count / self.items, 1.0) if self.items else None
            shown = f" ({fraction:.0%})" if fraction is not None else ""
            return f"{self.count:,}/{self.items:,} {self.unit}{shown}", fraction
        if read is not None and self.size:
            fraction = min(read / self.size, 1.0)
            return f"{fraction:.0%} of {data_size(self.size)}, {counted}", fraction
        return f"{data_size(read)}, {counted}" if read else counted, None

    def _bytes_only(self, elapsed: float, finished: bool) -> str:
        """A pass that counts no rows (a copy): the bytes read, and the time taken when ``finished``."""
        read = self.position() if self.position is not None else None
        shown = data_size(read or 0)
        if self.size and read is not None and not finished:
            shown = f"{min(read / self.size, 1.0):.0%} of {data_size(self.size)}"
        return f"{shown} in {duration(elapsed)}" if finished else shown


_ACTIVE: contextvars.ContextVar[Progress | None] = contextvars.ContextVar("filterkit_progress", default=None)


def active() -> Progress:
    """The progress of the run under way (:meth:`Progress.activated`), else one that shows nothing."""
    return _ACTIVE.get() or Progress(OFF)


def data_size(count: int) -> str:
    """A number of bytes for a person: ``512 B``, ``84.8 MB``."""
    if count < 1000:
        return f"{count} B"
    scaled = float(count)
    for unit in ("kB", "MB", "GB", "TB"):
        scaled /= 1000
        if scaled < 1000 or unit == "TB":
            break
    return f"{scaled:.1f} {unit}"


def duration(seconds: float) -> str:
    """A duration for a person: ``4.1 s``, ``2 min 05 s``, ``1 h 02 min``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = int(round(seconds))
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def _rate(per_second: float) -> str:
    return f"{per_second:,.0f}" if per_second >= 100 else f"{per_second:.3g}"


def _fitted(text: str, stream) -> str:
    """``text`` cut to the terminal's width, so that redrawing it in place never wraps."""
    try:
        width = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        return text
    if width < 20 or len(text) < width:  # a terminal of no known width reports 0; too narrow to cut
        return text
    return text[: width - 2] + "…"
