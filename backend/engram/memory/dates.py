"""Natural date phrases ("this week", "yesterday", "since 2026-01-01") as date ranges.

Pure functions of the phrase and today's date (UTC). A range is `since` (inclusive) and
`until` (exclusive) dates; either may be open. Weeks start on Monday (ISO 8601).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from engram.errors import InvalidInputError

_UNITS = {"day": 1, "days": 1, "week": 7, "weeks": 7}
_NUMBERS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "ten": 10,
    "a": 1,
    "an": 1,
}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUM = r"(\d+|one|two|three|four|five|six|seven|ten|a|an)"
_DATE = r"(\d{4}(?:-\d{1,2}(?:-\d{1,2})?)?)"
_UNIT = r"(days?|weeks?|months?|years?)"


@dataclass(frozen=True)
class DateRange:
    """[since, until): either end may be None (open)."""

    since: dt.date | None = None
    until: dt.date | None = None

    def is_open(self) -> bool:
        """True when nothing is restricted."""
        return self.since is None and self.until is None

    def intersect(self, other: DateRange) -> DateRange:
        """The range both allow."""
        since = max((d for d in (self.since, other.since) if d), default=None)
        until = min((d for d in (self.until, other.until) if d), default=None)
        return DateRange(since, until)


def _month_start(day: dt.date, back: int = 0) -> dt.date:
    index = day.year * 12 + day.month - 1 - back
    return dt.date(index // 12, index % 12 + 1, 1)


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS[word]


def _back(n: int, unit: str, today: dt.date) -> dt.date:
    unit = unit.rstrip("s")
    if unit == "month":
        start = _month_start(today, n)
        return start.replace(day=min(today.day, 28)) if n else start
    if unit == "year":
        return today.replace(year=today.year - n, day=min(today.day, 28))
    return today - dt.timedelta(days=n * _UNITS[unit])


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


def _named(phrase: str, today: dt.date) -> DateRange | None:
    day = dt.timedelta(days=1)
    monday = today - dt.timedelta(days=today.weekday())
    fixed = {
        "today": DateRange(today, today + day),
        "yesterday": DateRange(today - day, today),
        "this week": DateRange(monday, today + day),
        "last week": DateRange(monday - 7 * day, monday),
        "this month": DateRange(_month_start(today), today + day),
        "last month": DateRange(_month_start(today, 1), _month_start(today)),
        "this year": DateRange(dt.date(today.year, 1, 1), today + day),
        "last year": DateRange(dt.date(today.year - 1, 1, 1), dt.date(today.year, 1, 1)),
    }
    if phrase in fixed:
        return fixed[phrase]
    m = re.fullmatch(rf"(?:last|past|previous) {_NUM} {_UNIT}", phrase)
    if m:  # "last 3 days": the 3 days up to and including today
        start = _back(_count(m.group(1)), m.group(2), today)
        return DateRange(start + day if m.group(2).startswith("day") else start, today + day)
    m = re.fullmatch(rf"{_NUM} {_UNIT} ago", phrase)
    if m:  # the day, week, month or year that far back
        n, unit = _count(m.group(1)), m.group(2).rstrip("s")
        if unit == "month":
            return DateRange(_month_start(today, n), _month_start(today, n - 1))
        if unit == "year":
            return DateRange(dt.date(today.year - n, 1, 1), dt.date(today.year - n + 1, 1, 1))
        start = _back(n, unit, today)
        return DateRange(start, start + _UNITS[unit] * day)
    if phrase in _WEEKDAYS or phrase in (f"last {w}" for w in _WEEKDAYS):
        back = (today.weekday() - _WEEKDAYS.index(phrase.split()[-1])) % 7 or 7
        start = today - dt.timedelta(days=back)
        return DateRange(start, start + day)
    if re.fullmatch(_DATE, phrase):
        return calendar_range(phrase)
    return None


def parse_range(phrase: str, today: dt.date) -> DateRange:
    """A date phrase as a range; InvalidInputError with examples when it is not one."""
    try:
        return _parse_range(phrase, today)
    except (OverflowError, ValueError):  # "last 99999999999 weeks" leaves the calendar
        raise InvalidInputError(f"{phrase!r} reaches outside years 1 to 9999") from None


def _parse_range(phrase: str, today: dt.date) -> DateRange:
    text = " ".join(phrase.lower().split())
    m = re.fullmatch(r"(since|after|from|before|until|till) (.+)", text)
    if m:
        inner = _named(m.group(2), today)
        if inner is None:
            raise InvalidInputError(_unknown(phrase))
        if m.group(1) in ("since", "from"):
            return DateRange(inner.since, None)
        if m.group(1) == "after":
            return DateRange(inner.until, None)
        return DateRange(None, inner.since)
    m = re.fullmatch(rf"between {_DATE} and {_DATE}", text)
    if m:
        return DateRange(calendar_range(m.group(1)).since, calendar_range(m.group(2)).until)
    found = _named(text, today)
    if found is None:
        raise InvalidInputError(_unknown(phrase))
    return found


def _unknown(phrase: str) -> str:
    return (
        f"not a date phrase: {phrase!r}; try today, yesterday, this week, last month, "
        "last 3 days, 2 weeks ago, since 2026-01-01, before 2025, between 2025-01 and 2025-03"
    )


_IN_QUERY = re.compile(
    rf"\b(?:(?:since|after|from|before|until|till) (?:{_DATE}|yesterday|today|last week|"
    rf"this week|last month|this month|{'|'.join(_WEEKDAYS)})"
    rf"|between {_DATE} and {_DATE}"
    rf"|(?:last|past|previous) {_NUM} {_UNIT}|{_NUM} {_UNIT} ago"
    r"|today|yesterday|this week|last week|this month|last month|this year|last year)\b",
    re.IGNORECASE,
)


def extract(query: str, today: dt.date) -> tuple[str, DateRange]:
    """Date phrases found in a query, as one range, and the query without them."""
    found = DateRange()
    for m in _IN_QUERY.finditer(query):
        found = found.intersect(parse_range(m.group(0), today))
    rest = " ".join(_IN_QUERY.sub(" ", query).split())
    return rest, found


def span(query: str, since: str | None, until: str | None, today: dt.date) -> tuple[str, DateRange]:
    """The query without its date phrases, and the range they and --since/--until allow
    (`since` takes the start of its phrase's range, `until` the end of its)."""
    rest, found = extract(query, today)
    if since:
        found = found.intersect(DateRange(parse_range(since, today).since))
    if until:
        found = found.intersect(DateRange(None, parse_range(until, today).until))
    return rest, found
