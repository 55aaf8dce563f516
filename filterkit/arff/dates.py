"""ARFF dates: the part of Java's SimpleDateFormat that ARFF files use, held as milliseconds since
1970-01-01T00:00:00 UTC, as in Weka.

**Decisions**: a pattern without a time zone is read and written in UTC (Weka uses the JVM's zone),
and years are 1 to 9999.  Letters ``y M d H k K h m s S a E z Z X`` and quoted literals are
supported, any other refused when the header is read.  Dates are read as Weka reads them (not
lenient): a field out of its range (hour 25, February 30, a wrong weekday) is refused; digits are
decimal digits of any script, and no sign is taken.  A date whose zone (or hour 24) moves it outside
those years in UTC is refused where it is read, not only when written.  ``yy`` is Java's: two digits
written, read in the century that puts the year within 80 years before today, so a year outside that
window (1900 written ``00``) reads back as another; filterkit writes it as Weka does (write ``yyyy``
to keep every year).  As in Java, ``y`` alone reads a year of exactly two digits in that window too
(``99`` is 1999; ``5`` and ``123`` are the years 5 and 123) and writes the whole year.  ``''`` is a
quote mark, in a quoted literal (``'o''clock'``) or outside one.
"""

from __future__ import annotations

import datetime as _dt
import re

from filterkit.errors import ArffError
from filterkit.text import shown

DEFAULT_FORMAT = "yyyy-MM-dd'T'HH:mm:ss"

_SUPPORTED = set("yMdHkKhmsSaEzZX")
_NUMERIC = set("yMdHkKhmsS")
#: English names, as Weka writes them in an English locale (Java's follow the JVM's locale), whatever this
#: process's locale is
_MONTHS = "January February March April May June July August September October November December".split()
_DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()


class DateFormat:
    """A compiled SimpleDateFormat pattern that parses and formats in UTC."""

    def __init__(self, pattern: str):
        self.pattern = pattern
        self.fields = _compile(pattern)

    def parse(self, text: str) -> float:
        """Milliseconds since the epoch for ``text``; ArffError if it does not match."""
        # "a" is the hours a PM marker adds, "z" the zone's offset in minutes, "E" the weekday
        values = {"y": 1970, "M": 1, "d": 1, "H": 0, "m": 0, "s": 0, "S": 0, "a": 0, "z": 0}
        twelve_hour = False
        position = 0
        for index, (letter, count) in enumerate(self.fields):
            if letter is None:
                if not text.startswith(count, position):
                    raise self._mismatch(text)
                position += len(count)
                continue
            next_is_number = index + 1 < len(self.fields) and self.fields[index + 1][0] in _NUMERIC
            key, number, position = _read_field(text, position, letter, count, count if next_is_number else 0)
            if number is None:
                raise self._mismatch(text)
            values[key] = number
            twelve_hour |= letter in "Kh"
        if position != len(text):
            raise self._mismatch(text)
        hour = values["H"] + (values["a"] if twelve_hour else 0)
        try:
            moment = _dt.datetime(values["y"], values["M"], values["d"], tzinfo=_dt.timezone.utc)
        except ValueError:
            raise self._mismatch(text) from None
        if values.get("E", moment.weekday()) != moment.weekday():
            raise self._mismatch(text)
        seconds = (moment - _EPOCH).total_seconds() + hour * 3600 + values["m"] * 60 + values["s"]
        millis = float((seconds - values["z"] * 60) * 1000 + values["S"])
        if not FIRST_MILLISECOND <= millis <= LAST_MILLISECOND:  # a zone or hour 24 past the years' ends
            raise ArffError(f"date {shown(text)} is {YEARS_OUTSIDE} in UTC, as filterkit holds dates")
        return millis

    def format(self, millis: float) -> str:
        """The text of ``millis`` (ms since 1970 UTC) in this pattern; ArffError outside years 1 to 9999."""
        try:
            moment = _EPOCH + _dt.timedelta(milliseconds=float(millis))
        except (OverflowError, ValueError):
            raise ArffError(
                f"the date {float(millis)!r} (ms since 1970) is {YEARS_OUTSIDE} "
                f"and cannot be written in the format {_shown_pattern(self.pattern)}"
            ) from None
        pieces = []
        for letter, count in self.fields:
            if letter is None:
                pieces.append(count)
            elif letter in "ME" and (letter == "E" or count >= 3):
                name = _MONTHS[moment.month - 1] if letter == "M" else _DAYS[moment.weekday()]
                pieces.append(name if count >= 4 else name[:3])
            elif letter in "azZX":
                pieces.append({"a": "PM" if moment.hour >= 12 else "AM", "z": "UTC", "Z": "+0000", "X": "Z"}[letter])
            else:
                number = {
                    "y": moment.year % 100 if count == 2 else moment.year,
                    "M": moment.month,
                    "d": moment.day,
                    "H": moment.hour,
                    "k": moment.hour or 24,
                    "K": moment.hour % 12,
                    "h": moment.hour % 12 or 12,
                    "m": moment.minute,
                    "s": moment.second,
                    "S": moment.microsecond // 1000,
                }[letter]
                pieces.append(str(number).zfill(count))
        return "".join(pieces)

    def _mismatch(self, text: str) -> ArffError:
        return ArffError(f"date {shown(text)} does not match the format {_shown_pattern(self.pattern)}")


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
#: The first and last millisecond of the years 1 to 9999 (UTC), since 1970: the dates filterkit holds, each
#: of which it can write.
FIRST_MILLISECOND = (_dt.datetime(1, 1, 1, tzinfo=_dt.timezone.utc) - _EPOCH) / _dt.timedelta(milliseconds=1)
LAST_MILLISECOND = (_dt.datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=_dt.timezone.utc) - _EPOCH) / _dt.timedelta(
    milliseconds=1
)
#: How a message says a date is not one of them.
YEARS_OUTSIDE = "outside the years 1 to 9999"
#: Each numeric field's range (Java's non-lenient calendar): k counts hours 1-24, h 1-12.
_FIRST = {"y": 1, "M": 1, "d": 1, "H": 0, "k": 1, "K": 0, "h": 1, "m": 0, "s": 0, "S": 0}
_LAST = {"y": 9999, "M": 12, "d": 31, "H": 23, "k": 24, "K": 11, "h": 12, "m": 59, "s": 59, "S": 999}
#: More digits than any field's range takes: refused before int() is asked.
_MOST_DIGITS = 9
#: A zone: an offset ±hh, ±hhmm or ±hh:mm, after UTC or GMT or alone; UTC or GMT alone; Z.
_ZONE = re.compile(r"(?:UTC|GMT)?([+-])(\d\d)(?::?(\d\d))?|(?:UTC|GMT)(?![+-])|Z")


def _shown_pattern(pattern: str) -> str:
    """A pattern in double quotes for a message, or cut short as :func:`shown` does when long."""
    return f'"{pattern}"' if len(pattern) <= 60 else shown(pattern)


def _compile(pattern: str) -> list[tuple]:
    """A pattern as ``(letter, count)`` fields and ``(None, literal)`` pieces."""
    fields: list[tuple] = []
    position = 0
    while position < len(pattern):
        char = pattern[position]
        if char == "'":
            literal, position = _quoted_literal(pattern, position)
            fields.append((None, literal))
        elif char.isalpha():
            if char not in _SUPPORTED:
                raise ArffError(f"date format {_shown_pattern(pattern)}: pattern letter '{char}' is not supported")
            end = position
            while end < len(pattern) and pattern[end] == char:
                end += 1
            fields.append((char, end - position))
            position = end
        else:
            fields.append((None, char))
            position += 1
    return fields


def _quoted_literal(pattern: str, position: int) -> tuple[str, int]:
    """The literal quoted at ``position`` (a quote mark) and the position after it, as Java reads it: ``''`` is
    one quote mark, outside a quoted literal (``yyyy''MM``) or in one (``'o''clock'``, the text ``o'clock``)."""
    if pattern.startswith("''", position):
        return "'", position + 2
    pieces = []
    position += 1
    while True:
        end = pattern.find("'", position)
        if end == -1:
            raise ArffError(f"date format {_shown_pattern(pattern)} has an unterminated quote")
        pieces.append(pattern[position:end])
        if not pattern.startswith("''", end):
            return "'".join(pieces), end + 1
        position = end + 2


def _read_field(text: str, position: int, letter: str, count: int, width: int) -> tuple[str, int | None, int]:
    """The field ``letter`` (``count`` times in the pattern) read at ``position``: the key of the parsed
    values it sets, its value (None when the text does not match) and the position after it. ``width``
    bounds a number's digits (0: as many as there are)."""
    if letter in _NUMERIC and not (letter == "M" and count >= 3):
        number, end = _read_number(text, position, width)
        if number is not None and letter == "y" and count <= 2 and end - position == 2:
            number = _two_digit_year(number)
        if number is None or not _FIRST[letter] <= number <= _LAST[letter]:
            return letter, None, end
        if letter in "HkKh":
            return "H", number % (12 if letter in "Kh" else 24), end
        return letter, number, end
    if letter == "M":
        number, end = _read_name(text, position, _MONTHS)
        return "M", None if number is None else number + 1, end
    if letter == "E":
        return ("E", *_read_name(text, position, _DAYS))
    if letter == "a":
        return "a", {"AM": 0, "PM": 12}.get(text[position : position + 2].upper()), position + 2
    return ("z", *_read_zone(text, position))


def _read_number(text: str, position: int, width: int):
    """The unsigned decimal number at ``position`` (at most ``width`` digits when not 0)."""
    start = position
    limit = position + width if width else len(text)
    while position < min(limit, len(text)) and text[position].isdecimal():
        position += 1
    digits = text[start:position]
    if not digits or len(digits.lstrip("0")) > _MOST_DIGITS:
        return None, start
    return int(digits), position


def _two_digit_year(year: int) -> int:
    """Java's window: the century that puts the year within 80 years before today."""
    today = _dt.date.today().year
    candidate = (today - 80) // 100 * 100 + year
    if candidate < today - 80:
        candidate += 100
    return candidate


def _read_name(text: str, position: int, names: list[str]):
    rest = text[position : position + max(map(len, names))].lower()  # not the whole rest: a copy per field
    for number, name in enumerate(names):
        for candidate in (name.lower(), name[:3].lower()):
            if rest.startswith(candidate):
                return number, position + len(candidate)
    return None, position


def _read_zone(text: str, position: int):
    match = _ZONE.match(text, position)
    if match is None:
        return None, position
    sign, hours, minutes = match.groups()
    if sign is None:
        return 0, match.end()
    if int(hours) > 23 or int(minutes or 0) > 59:
        return None, position
    return (-1 if sign == "-" else 1) * (int(hours) * 60 + int(minutes or 0)), match.end()
