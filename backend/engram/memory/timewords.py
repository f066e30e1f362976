"""Time words inside a query ("what did we decide last week"), in English and German.

`read` finds the phrases that name a time (memory/dates.py reads each one as a date range),
joins them into one range and returns the query without them, so a time word is a filter and
never also a search word. A phrase is taken only where it cannot be an ordinary word: a month
needs a preposition, a year or a day ("in May", "May 2024", "May 5"; not "may"), a bare year
needs one too ("in 2024"), a weekday needs "on", "last" or "since". A phrase that names no
real day ("2026-02-30") stays in the query as words. German phrases are read through a word
table into the English ones.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from engram.errors import InvalidInputError
from engram.memory import dates
from engram.memory.dates import NUM, UNIT, WEEKDAYS, DateRange

_S = r"\s+"
_WEEKDAY = "(?:" + "|".join(WEEKDAYS) + ")"
_FULL_MONTH = "(?:" + "|".join(dates.MONTHS) + ")"
_ANY_MONTH = "(?:" + "|".join(sorted(dates.MONTH_NUMBER, key=len, reverse=True)) + r")\.?"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_YEAR = r"\d{4}"
_ISO_DAY = r"\d{4}-\d{1,2}-\d{1,2}"
_PERIOD = r"(?:day|week|month|quarter|year)"

# one phrase, longest forms first (a regex alternation takes the first that matches)
_EN_PHRASE = "|".join(
    [
        rf"the{_S}day{_S}before{_S}yesterday",
        r"today|yesterday",
        rf"(?:earlier{_S})?this{_S}(?:week|month|quarter|year)",
        rf"(?:(?:in|over|during){_S})?the{_S}(?:last|past|previous){_S}{NUM}{_S}{UNIT}",
        rf"(?:(?:in|over|during){_S})?the{_S}(?:last|past){_S}{_PERIOD}",
        rf"(?:last|past|previous){_S}{NUM}{_S}{UNIT}",
        rf"past{_S}(?:day|week|month|year)",
        rf"last{_S}(?:week|month|quarter|year)",
        rf"(?:a{_S})?(?:few|couple(?:{_S}of)?){_S}(?:days|weeks){_S}ago",
        rf"{NUM}{_S}{UNIT}{_S}ago",
        rf"(?:last|on){_S}{_WEEKDAY}",
        rf"(?:on{_S})?{_ANY_MONTH}{_S}{_DAY}(?:,?{_S}{_YEAR})?",
        rf"(?:on{_S})?(?:the{_S})?{_DAY}{_S}(?:of{_S})?{_ANY_MONTH}(?:,?{_S}{_YEAR})?",
        rf"(?:(?:in|during){_S})?(?:(?:last|this){_S})?{_FULL_MONTH}{_S}{_YEAR}",
        rf"(?:in|during){_S}(?:(?:last|this){_S})?{_FULL_MONTH}",
        rf"(?:last|this){_S}{_FULL_MONTH}",
        rf"{_ANY_MONTH}{_S}{_YEAR}",
        rf"(?:in|during){_S}(?:q[1-4](?:{_S}{_YEAR})?|{_YEAR}(?:-\d{{1,2}})?)",
        rf"q[1-4]{_S}{_YEAR}",
        rf"(?:on{_S})?{_ISO_DAY}",
    ]
)
# what may follow since / before / between ... and: a phrase, or a bare date or day name
_EN_OPERAND = rf"(?:{_EN_PHRASE}|{_WEEKDAY}|{_ANY_MONTH}(?:{_S}{_YEAR})?|{dates.ISO}|\d+\s*[hdwmy])"
_EN_OPS = rf"since|after|from|before|until|till|up{_S}to|prior{_S}to"
_EN = (
    rf"(?:between|from){_S}{_EN_OPERAND}{_S}(?:and|to|until|till){_S}{_EN_OPERAND}"
    rf"|(?:{_EN_OPS}){_S}{_EN_OPERAND}"
    rf"|{_EN_PHRASE}"
)

_DE_NUM = r"(?:\d+|einem|einer|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn|elf|zwölf)"
_DE_UNIT = r"(?:stunden?|tagen?|tage|wochen?|monaten?|monate|jahren?|jahre)"
_DE_LAST = r"(?:letzte[nrs]?|vorige[nrs]?|vergangene[nrs]?)"
_DE_WEEKDAY = r"(?:montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag)"
_DE_MONTH = (
    r"(?:januar|jänner|februar|märz|maerz|april|mai|juni|juli|august|september|oktober|"
    r"november|dezember)"
)
_DE_PHRASE = "|".join(
    [
        r"heute|gestern|vorgestern",
        rf"(?:(?:in{_S}der|im){_S})?(?:diese[nrs]?|{_DE_LAST}){_S}(?:woche|monat|quartal|jahr)",
        rf"vor{_S}{_DE_NUM}{_S}{_DE_UNIT}",
        rf"(?:in{_S}den{_S})?letzten{_S}{_DE_NUM}{_S}{_DE_UNIT}",
        rf"(?:am|letzten|{_DE_LAST}){_S}{_DE_WEEKDAY}",
        rf"(?:am{_S})?\d{{1,2}}\.{_S}{_DE_MONTH}(?:{_S}{_YEAR})?",
        rf"(?:im{_S})?{_DE_MONTH}{_S}{_YEAR}|im{_S}{_DE_MONTH}",
        rf"im{_S}(?:jahr{_S})?{_YEAR}",
    ]
)
_DE_OPERAND = rf"(?:{_DE_PHRASE}|{_DE_WEEKDAY}|{_DE_MONTH}(?:{_S}{_YEAR})?|{dates.ISO})"
_DE = (
    rf"zwischen{_S}{_DE_OPERAND}{_S}und{_S}{_DE_OPERAND}"
    rf"|(?:seit|nach|bis|vor){_S}{_DE_OPERAND}"
    rf"|{_DE_PHRASE}"
)
_IN_QUERY = re.compile(rf"(?<![\w.-])(?:{_EN}|{_DE})(?![\w-])", re.IGNORECASE)

_GERMAN = {
    "heute": "today",
    "gestern": "yesterday",
    "vorgestern": "the day before yesterday",
    "stunde": "hour",
    "stunden": "hours",
    "tag": "day",
    "tage": "days",
    "tagen": "days",
    "woche": "week",
    "wochen": "weeks",
    "monat": "month",
    "monate": "months",
    "monaten": "months",
    "quartal": "quarter",
    "jahr": "year",
    "jahre": "years",
    "jahren": "years",
    "einem": "one",
    "einer": "one",
    "zwei": "two",
    "drei": "three",
    "vier": "four",
    "fünf": "five",
    "sechs": "six",
    "sieben": "seven",
    "acht": "eight",
    "neun": "nine",
    "zehn": "ten",
    "elf": "eleven",
    "zwölf": "twelve",
    "seit": "since",
    "nach": "after",
    "bis": "until",
    "zwischen": "between",
    "und": "and",
    "am": "on",
    "im": "in",
    "jänner": "january",
    "märz": "march",
    "maerz": "march",
    "mai": "may",
    "juni": "june",
    "juli": "july",
    "oktober": "october",
    "dezember": "december",
    "montag": "monday",
    "dienstag": "tuesday",
    "mittwoch": "wednesday",
    "donnerstag": "thursday",
    "freitag": "friday",
    "samstag": "saturday",
    "sonntag": "sunday",
} | {
    f"{stem}{end}": word
    for stem, word in (
        ("diese", "this"),
        ("letzte", "last"),
        ("vorige", "last"),
        ("vergangene", "last"),
    )
    for end in ("", "n", "r", "s")
}


@dataclass(frozen=True)
class Reading:
    """A query read for time: the words left to search, the range its time words allow,
    and those phrases as written."""

    rest: str
    range: DateRange
    phrases: tuple[str, ...]


def english(phrase: str) -> str:
    """A matched phrase in the English form memory/dates.py reads (German words translated,
    "vor 3 Tagen" → "3 days ago", "in der letzten Woche" → "last week")."""
    words = dates.canonical(phrase).split()
    words = [_GERMAN.get(w, w) for w in words if w not in ("der", "den")]
    text = " ".join(words)
    text = re.sub(r"^in (?=last \S+ (?:hours?|days?|weeks?|months?|years?)$)", "", text)
    text = re.sub(r"^in (?=(?:this|last) \w+$)", "", text)
    text = re.sub(r"\bvor (\S+ (?:hours?|days?|weeks?|months?|years?))$", r"\1 ago", text)
    text = re.sub(r"^vor ", "before ", text)
    text = re.sub(r"\b(\d{1,2})\. ", r"\1 ", text)  # "5. märz": the German day number
    text = re.sub(r"\b([a-z]{3,4})\. ", r"\1 ", text)  # "Jan. 5"
    return re.sub(r"\byear (\d{4})$", r"\1", text)


def read(query: str, today: dt.date) -> Reading:
    """The time words of a query as one range (they are ANDed), and the query without them."""
    found, phrases, kept = DateRange(), [], []
    last = 0
    for m in _IN_QUERY.finditer(query):
        try:
            rng = dates.parse_range(english(m.group(0)), today)
        except InvalidInputError:
            continue  # "2026-02-30", "last 99999999 years": words, not a time
        found = found.intersect(rng)
        phrases.append(" ".join(m.group(0).split()))
        kept.append(query[last : m.start()])
        last = m.end()
    kept.append(query[last:])
    rest = " ".join(" ".join(kept).split())
    return Reading(rest, found, tuple(phrases))


def extract(query: str, today: dt.date) -> tuple[str, DateRange]:
    """Date phrases found in a query, as one range, and the query without them."""
    found = read(query, today)
    return found.rest, found.range
