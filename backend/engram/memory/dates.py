"""Natural date phrases ("this week", "yesterday", "since 2026-01-01") as date ranges.

Pure functions of the phrase and today's date (the caller's local day). A range is `since`
(inclusive) and `until` (exclusive) dates; either may be open. Weeks start on Monday (ISO
8601), quarters on January, April, July and October. Finding such phrases inside a query
(and in German) is memory/timewords.py's job; this module reads one phrase.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from engram.errors import InvalidInputError

_UNITS = {"day": 1, "week": 7}
NUMBERS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a": 1,
    "an": 1,
}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
MONTH_NUMBER = {name: i for i, name in enumerate(MONTHS, 1)} | {
    name[:3]: i for i, name in enumerate(MONTHS, 1)
}
MONTH_NUMBER["sept"] = 9
NUM = r"(\d+|" + "|".join(sorted(NUMBERS, key=len, reverse=True)) + ")"
ISO = r"(\d{4}(?:-\d{1,2}(?:-\d{1,2})?)?)"
UNIT = r"(hours?|days?|weeks?|months?|years?)"
_COMPACT = re.compile(r"(\d+)\s?([hdwmy])")
_COMPACT_UNIT = {"h": "hours", "d": "days", "w": "weeks", "m": "months", "y": "years"}
_MONTH = "(" + "|".join(sorted(MONTH_NUMBER, key=len, reverse=True)) + ")"
_ONE = "(day|week|month|year)"
_OPERATORS = ("since", "after", "from", "before", "until", "till", "up to", "prior to")


@dataclass(frozen=True)
class DateRange:
    """[since, until): either end may be None (open)."""

    since: dt.date | None = None
    until: dt.date | None = None

    def is_open(self) -> bool:
        """True when nothing is restricted."""
        return self.since is None and self.until is None

    def is_empty(self) -> bool:
        """True when no day is in the range (it ends before it starts)."""
        return self.since is not None and self.until is not None and self.until <= self.since

    def intersect(self, other: DateRange) -> DateRange:
        """The range both allow."""
        since = max((d for d in (self.since, other.since) if d), default=None)
        until = min((d for d in (self.until, other.until) if d), default=None)
        return DateRange(since, until)


def _month_start(day: dt.date, back: int = 0) -> dt.date:
    index = day.year * 12 + day.month - 1 - back
    return dt.date(index // 12, index % 12 + 1, 1)


def _quarter_start(day: dt.date, back: int = 0) -> dt.date:
    return _month_start(day.replace(day=1, month=(day.month - 1) // 3 * 3 + 1), 3 * back)


def _count(word: str) -> int:
    return int(word) if word.isdigit() else NUMBERS[word]


def _days_back(n: int, unit: str) -> int:
    """Whole days `n` hours, days or weeks reach back (an hour reaches into its day)."""
    if unit == "hour":
        return -(-n // 24)
    return n * _UNITS[unit]


def _back(n: int, unit: str, today: dt.date) -> dt.date:
    if unit == "month":
        start = _month_start(today, n)
        return start.replace(day=min(today.day, 28)) if n else start
    if unit == "year":
        return today.replace(year=today.year - n, day=min(today.day, 28))
    return today - dt.timedelta(days=_days_back(n, unit))


def calendar_range(text: str) -> DateRange:
    """`YYYY`, `YYYY-MM` or `YYYY-MM-DD` as the whole year, month or day."""
    parts = [int(p) for p in text.split("-")]
    try:
        if len(parts) == 1:
            return DateRange(dt.date(parts[0], 1, 1), dt.date(parts[0] + 1, 1, 1))
        if len(parts) == 2:
            start = dt.date(parts[0], parts[1], 1)
            return DateRange(start, _month_start(start, -1))
        day = dt.date(parts[0], parts[1], parts[2])
    except ValueError:
        raise InvalidInputError(f"not a date: {text!r} (use YYYY, YYYY-MM or YYYY-MM-DD)") from None
    return DateRange(day, day + dt.timedelta(days=1))


def _fixed(phrase: str, today: dt.date) -> DateRange | None:
    day = dt.timedelta(days=1)
    monday = today - dt.timedelta(days=today.weekday())
    fixed = {
        "today": DateRange(today, today + day),
        "yesterday": DateRange(today - day, today),
        "the day before yesterday": DateRange(today - 2 * day, today - day),
        "this week": DateRange(monday, today + day),
        "last week": DateRange(monday - 7 * day, monday),
        "this month": DateRange(_month_start(today), today + day),
        "last month": DateRange(_month_start(today, 1), _month_start(today)),
        "this quarter": DateRange(_quarter_start(today), today + day),
        "last quarter": DateRange(_quarter_start(today, 1), _quarter_start(today)),
        "this year": DateRange(dt.date(today.year, 1, 1), today + day),
        "last year": DateRange(dt.date(today.year - 1, 1, 1), dt.date(today.year, 1, 1)),
    }
    return fixed.get(phrase)


def _rolling(phrase: str, today: dt.date) -> DateRange | None:
    """Up to and including today: "last 3 days", "past two weeks", "the past month", "7d"."""
    day = dt.timedelta(days=1)
    m = _COMPACT.fullmatch(phrase)
    if m:
        phrase = f"last {m.group(1)} {_COMPACT_UNIT[m.group(2)]}"
    m = re.fullmatch(rf"(?:the )?(?:last|past|previous) {NUM} {UNIT}", phrase)
    count, unit = (_count(m.group(1)), m.group(2)) if m else (1, "")
    if m is None:
        m = re.fullmatch(rf"(?:the )?past {_ONE}|the last {_ONE}", phrase)
        if m is None:
            return None
        unit = m.group(1) or m.group(2)
    unit = unit.rstrip("s")
    start = _back(count, unit, today)
    return DateRange(start + day if unit == "day" else start, today + day)


def _ago(phrase: str, today: dt.date) -> DateRange | None:
    """The day, week, month or year back: "3 days ago", "a month ago", "a few days ago"."""
    day = dt.timedelta(days=1)
    m = re.fullmatch(r"(?:a )?(few|couple(?: of)?) (days|weeks) ago", phrase)
    if m:  # loose on purpose: a couple is 1-3 units back, a few 2-5
        low, high = (1, 3) if m.group(1).startswith("couple") else (2, 5)
        width = _UNITS[m.group(2).rstrip("s")]
        return DateRange(today - high * width * day, today - (low * width - 1) * day)
    m = re.fullmatch(rf"{NUM} {UNIT} ago", phrase)
    if m is None:
        return None
    n, unit = _count(m.group(1)), m.group(2).rstrip("s")
    if unit == "month":
        return DateRange(_month_start(today, n), _month_start(today, n - 1))
    if unit == "year":
        return DateRange(dt.date(today.year - n, 1, 1), dt.date(today.year - n + 1, 1, 1))
    if unit == "hour":
        start = today - dt.timedelta(days=n // 24)
        return DateRange(start, start + day)
    start = _back(n, unit, today)
    return DateRange(start, start + _UNITS[unit] * day)


def _weekday(phrase: str, today: dt.date) -> DateRange | None:
    """The latest such day before today: "monday", "last monday"."""
    m = re.fullmatch(r"(?:last )?(\w+)", phrase)
    if m is None or m.group(1) not in WEEKDAYS:
        return None
    back = (today.weekday() - WEEKDAYS.index(m.group(1))) % 7 or 7
    start = today - dt.timedelta(days=back)
    return DateRange(start, start + dt.timedelta(days=1))


def _month(phrase: str, today: dt.date) -> DateRange | None:
    """A month or a day of one: "march", "march 2024", "last march", "march 5", "5 march"."""
    m = re.fullmatch(rf"(?:(last|this) )?{_MONTH}(?: (\d{{4}}))?", phrase)
    if m:
        month, year = MONTH_NUMBER[m.group(2)], m.group(3)
        if year:
            return calendar_range(f"{year}-{month}")
        # without a year: this year's month once it began (last's for "last" in it)
        begun = month < today.month or (month == today.month and m.group(1) != "last")
        return calendar_range(f"{today.year - (0 if m.group(1) == 'this' or begun else 1)}-{month}")
    year = r"(?: (\d{4}))?"
    m = re.fullmatch(
        rf"{_MONTH} (\d{{1,2}}){year}|(?:the )?(\d{{1,2}}) (?:of )?{_MONTH}{year}", phrase
    )
    if m is None:
        return None
    name, number, year = (m.group(1), m.group(2), m.group(3)) if m.group(1) else m.group(5, 4, 6)
    month = MONTH_NUMBER[name]
    if year is None:  # the latest such day up to today
        ahead = (month, int(number)) > (today.month, today.day)
        year = str(today.year - 1 if ahead else today.year)
    return calendar_range(f"{year}-{month}-{number}")


def _quarter(phrase: str, today: dt.date) -> DateRange | None:
    m = re.fullmatch(r"q([1-4])(?: (\d{4}))?", phrase)
    if m is None:
        return None
    start_month = (int(m.group(1)) - 1) * 3 + 1
    year = int(m.group(2)) if m.group(2) else today.year - (start_month > today.month)
    start = dt.date(year, start_month, 1)
    return DateRange(start, _month_start(start, -3))


def named(phrase: str, today: dt.date) -> DateRange | None:
    """One phrase without an operator (already lower-case, single-spaced), or None."""
    phrase = re.sub(r"^(?:in|during|over|on|of|earlier) ", "", phrase)
    if re.fullmatch(ISO, phrase):
        return calendar_range(phrase)
    for reader in (_fixed, _rolling, _ago, _weekday, _month, _quarter):
        found = reader(phrase, today)
        if found is not None:
            return found
    return None


def canonical(phrase: str) -> str:
    """Lower case, single spaces, no commas or ordinal suffixes ("March 5th, 2024")."""
    text = re.sub(r"(\d)(?:st|nd|rd|th)\b", r"\1", phrase.lower().replace(",", " "))
    return " ".join(text.split())


def parse_range(phrase: str, today: dt.date) -> DateRange:
    """A date phrase as a range; InvalidInputError with examples when it is not one."""
    try:
        return _parse_range(phrase, today)
    except (OverflowError, ValueError):  # "last 99999999999 weeks" leaves the calendar
        raise InvalidInputError(f"{phrase!r} reaches outside years 1 to 9999") from None


def _parse_range(phrase: str, today: dt.date) -> DateRange:
    text = canonical(phrase)
    m = re.fullmatch(r"(?:between|from) (.+?) (?:and|to|until|till) (.+)", text)
    if m:
        first, last = named(m.group(1), today), named(m.group(2), today)
        if first is None or last is None:
            raise InvalidInputError(_unknown(phrase))
        if last.until and first.since and last.until <= first.since and not _has_year(m[2]):
            last = DateRange(None, _next_year(last.until))  # "from March to May": one year
        return DateRange(first.since, last.until)
    m = re.fullmatch(rf"({'|'.join(_OPERATORS)}) (.+)", text)
    if m:
        inner = named(m.group(2), today)
        if inner is None:
            raise InvalidInputError(_unknown(phrase))
        if m.group(1) == "since":
            return DateRange(inner.since, None)
        if m.group(1) == "from":  # "notes from last week": that week
            return inner
        if m.group(1) == "after":
            return DateRange(inner.until, None)
        if m.group(1) in ("before", "prior to"):
            return DateRange(None, inner.since)
        return DateRange(None, inner.until)  # until / till / up to: to its end, as --until
    found = named(text, today)
    if found is None:
        raise InvalidInputError(_unknown(phrase))
    return found


def _has_year(phrase: str) -> bool:
    return re.search(r"\d{4}", phrase) is not None


def _next_year(day: dt.date) -> dt.date:
    return day.replace(year=day.year + 1, day=min(day.day, 28) if day.month == 2 else day.day)


def _unknown(phrase: str) -> str:
    return (
        f"not a date phrase: {phrase!r}; try today, yesterday, this week, last month, "
        "last 3 days, 7d, 2 weeks ago, in March, since 2026-01-01, before 2025, "
        "between 2025-01 and 2025-03"
    )


def bounded(found: DateRange, since: str | None, until: str | None, today: dt.date) -> DateRange:
    """`found` within --since (from the start of its phrase) and --until (to its end)."""
    if since:
        found = found.intersect(DateRange(parse_range(since, today).since))
    if until:
        found = found.intersect(DateRange(None, parse_range(until, today).until))
    return found
