"""Periods as users and filings state them, mapped to the SEC Financial Statement Data Sets' period keys.

Issue 44 ("Periods"). FSDS keys every value by ``ddate``, "the end date for the data value, rounded to the
nearest month end", and ``qtrs``, "the count of the number of quarters represented by the data value, rounded to
the nearest whole number; 0 indicates it is a point-in-time value" (SEC, *Financial Statement Data Sets*, readme,
field definitions of NUM). A filing states its fiscal dates exactly: Johnson & Johnson's second quarter of 2009
ended on Sunday June 28, 2009, a 52/53-week retailer's year on the Saturday nearest January 31. So a stated date
is rounded to the nearest month end (:func:`fsds_ddate`: June 28 -> 2009-06-30, January 2, 2010 -> 2009-12-31,
January 30 -> January 31), which is how FSDS rounded it.

What a question can say (:func:`find_periods`): an exact date ("the quarter ended June 28, 2009", "as of
6/30/2009"), a quarter ("Q2 2009", "2Q09", "the second quarter of 2009", "fiscal 2010 second quarter": a
fiscal quarter is resolved through the company's filings' ``fy``/``fp`` when one states it, see
:class:`PeriodAsk`), a month ("the June 2009 quarter"), a year end ("end of 2009", "year-end 2009": the balance
sheet at December 31), a span ("first half of 2009", "1H09", "six months ended", "nine months", "the 26 weeks ended", "fiscal year 2008",
"over 2009"; "calendar 2009": the twelve months ended December 31, not a fiscal year: the flows' ``qtrs``), the
trailing twelve months ("TTM revenue as of March 31, 2010", "LTM", "the last four quarters", "the twelve months
ended ..."; :data:`TRAILING_WORDS`), the fiscal year to date ("YTD": :data:`YTD_WORDS`), or nothing / "latest" /
"last quarter" (the latest period the company reports). Several periods at once ("the last two quarters":
:data:`SEVERAL_PERIODS`), a year no phrase reads ("Abbott's 2009 revenue") and a period without its year ("the third
quarter", "the end of December": :data:`_YEARLESS`) raise, so that no question is answered with the latest period
instead of the one it named; a period said relative to an unstated date ("last year":
:data:`RELATIVE_WORDS`, :func:`relative_period`) is for the caller to refuse, where it asks no change ("revenue growth
versus last year" is a change). "A year ago" (:data:`YEAR_AGO_WORDS`) moves a period back one year
(:attr:`PeriodAsk.years_back`), set by the caller where the question asks the value then.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass, replace

MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m} | {
    m.lower(): i for i, m in enumerate(calendar.month_abbr) if m
}
MONTHS["sept"] = 9
_MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
"""Every month's name and abbreviation, longest first (a regex alternation)."""
_MONTH = rf"(?P<month>{_MONTH_NAMES})\.?"
_ORD = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "last": 4}
_ORDS = "|".join(_ORD)
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_SPAN_WORDS = {
    "three months": 1,
    "3 months": 1,
    "quarter": 1,
    "six months": 2,
    "6 months": 2,
    "first half": 2,
    "half year": 2,
    "half-year": 2,
    "h1": 2,
    "nine months": 3,
    "9 months": 3,
    "twelve months": 4,
    "12 months": 4,
    "full year": 4,
    "fiscal year": 4,
    "year ended": 4,
    "annual": 4,
    "ttm": 4,
    "trailing twelve months": 4,
}
TRAILING_WORDS = re.compile(
    r"\b(?:ttm|ltm|trailing(?![\s-]+(?:two|three|six|nine|2|3|6|9)\b)(?:[\s-]+(?:twelve|12)[\s-]+months?)?|"
    r"rolling[\s-]+(?:twelve|12)[\s-]+months?|(?:trailing|last|past|previous|rolling)[\s-]+(?:four|4)[\s-]+quarters|"
    r"(?:last|past|previous)[\s-]+(?:twelve|12)[\s-]+months|(?:twelve|12)[\s-]+months?[\s-]+(?:period[\s-]+)?end(?:ed|ing))\b",
    re.I,
)
"""Words that ask for the twelve months ended a date (the trailing twelve months where no filing reports that span),
not a fiscal year; "trailing" alone ("IBM's trailing ROE") too: it was not read, and the quarter's ROE answered."""
SEVERAL_PERIODS = re.compile(
    r"\b(?:last|past|previous|prior|recent)[\s-]+(?:two|three|five|six|several|few|2|3|5|6|\d\d)[\s-]+"
    r"(?:quarters|years|fiscal years|periods)\b|\b(?:each|every) (?:fiscal )?(?:quarter|year|period)\b|"
    r"\b(?:quarter by quarter|year by year|by quarter|by year)\b",
    re.I,
)
"""Words that ask for several periods at once ("the last two quarters", "the past three years"): not the latest one
period, never answered as if it were (:func:`find_periods` raises); four quarters are :data:`TRAILING_WORDS`."""
YEAR_AGO_WORDS = re.compile(
    r"\b(?:a year (?:ago|earlier|before)|(?:the |a )?year[\s-]ago(?: quarter| period)?|"
    r"(?:the )?(?:prior|previous)[\s-]year(?:'s)? (?:quarter|period)|"
    r"(?:the )?same (?:quarter|period|three months) (?:of |in )?(?:the )?(?:last|prior|previous) year|"
    r"(?:the )?(?:quarter|period) a year (?:earlier|before|ago))\b",
    re.I,
)
"""Words that ask for the same period one year earlier ("revenue a year ago", "in the year-ago quarter"): without a
word of change they ask the value then (:attr:`PeriodAsk.years_back`), not the change since."""
YTD_WORDS = re.compile(r"\b(?:(?:fiscal\s+)?year[\s-]+to[\s-]+date|ytd|so far this (?:fiscal )?year)\b", re.I)
"""Words that ask for the fiscal year to date (:attr:`PeriodAsk.ytd`)."""
RELATIVE_WORDS = re.compile(
    r"\b(?:(?:last|this|current|past|previous|prior|preceding)\s+(?:fiscal\s+)?year(?![\s-]+to[\s-]+date)|"
    r"(?:prior|previous)[\s-]year|year[\s-]?end|end of (?:the|last|this) (?:fiscal )?year|"
    r"for the (?:fiscal |full )?year|(?:full|whole|entire)[\s-]year|annual(?:ly)?|yearly|"
    r"(?:previous|prior|preceding) (?:fiscal )?(?:quarter|period))\b",
    re.I,
)
"""Periods said relative to a date the question does not give ("last year", "this fiscal year", "year-end",
"annual revenue", "the prior quarter"): a question that names no other period and says one of these is
refused, never answered with the latest quarter (:func:`relative_period`)."""
LATEST_QUARTER_WORDS = re.compile(
    r"\b(?:last|latest|most\s+recent|recent|this|current|past)\s+(?:reported\s+)?(?:fiscal\s+)?quarter\b(?!s)", re.I
)
"""Words that ask the latest quarter itself ("revenue last quarter", "this quarter's net margin"): a flow over one
quarter, never a 10-K filer's whole year (which the latest period alone would give, with a note)."""
LATEST_WORDS = re.compile(
    r"\b(?:latest|most recent|last (?:reported )?quarter|last period|current quarter|recent quarter|"
    r"this quarter|lately|right now|currently|now)\b",
    re.I,
)


def month_end(year: int, month: int) -> dt.date:
    """The last day of ``month`` of ``year``."""
    return dt.date(year, month, calendar.monthrange(year, month)[1])


def fsds_ddate(day: dt.date) -> str:
    """A stated period end as FSDS's ``ddate`` (``YYYYMMDD``): the nearest month end; a tie goes to the earlier, as
    FSDS rounded the one tie of its 2009q3, 2010q1 and 2010q2 quarters (Costco's 10-Q for the quarter ended February
    14, 2010, 14 days from either month end: ``period`` and every ``ddate`` of the quarter 20100131).

    >>> fsds_ddate(dt.date(2009, 6, 28)), fsds_ddate(dt.date(2010, 1, 2)), fsds_ddate(dt.date(2009, 10, 3))
    ('20090630', '20091231', '20090930')
    """
    this_end = month_end(day.year, day.month)
    prev_end = day.replace(day=1) - dt.timedelta(days=1)
    nearest = this_end if (this_end - day).days < (day - prev_end).days else prev_end
    return nearest.strftime("%Y%m%d")


@dataclass(frozen=True)
class PeriodAsk:
    """One period a question names.

    Attributes:
        ddate: the FSDS period end (``YYYYMMDD``), or None for the latest the company reports.
        qtrs: the span the question names for flows (1 a quarter, 2 a half, 3 nine months, 4 a year), or None
            (the filing's own span: a 10-Q's quarter, a 10-K's year).
        text: the words that named it. stated: the exact date as stated (ISO) when it is not a month end.
        fiscal: ``(fy, fp)`` (``(2010, "Q2")``, ``(2008, "FY")``) when the question names a fiscal period: the
            company's filing with that fiscal focus gives ``ddate`` (the calendar reading is the fallback).
        trailing: the question asks for the twelve months ended ``ddate`` (:data:`TRAILING_WORDS`; ``qtrs`` 4): where
            no filing reports them, the trailing twelve months are built from the fiscal year and the years to date.
        years_back: the period that many years before ``ddate`` (or before the latest period when ``ddate`` is None):
            "a year ago", "the year-ago quarter" (:data:`YEAR_AGO_WORDS`; :meth:`end`).
        ytd: the fiscal year to date ended ``ddate`` (or the latest period): ``qtrs`` is the company's fiscal quarter
            there, as its filing for that period states it (:data:`YTD_WORDS`).
        month: a month named alone, with no span or quarter word ("revenue in June 2009"): a balance at its end,
            but a flow over that month, which no filing reports (the caller refuses it, never answers the quarter).
    """

    ddate: str | None
    qtrs: int | None = None
    text: str = ""
    stated: str | None = None
    fiscal: tuple[int, str] | None = None
    trailing: bool = False
    years_back: int = 0
    ytd: bool = False
    month: bool = False

    def end(self, latest: str | None = None) -> str | None:
        """The period end asked (``YYYYMMDD``): ``ddate``, else ``latest``, moved back :attr:`years_back` years."""
        day = self.ddate or latest
        if day is None:
            return None
        for _ in range(self.years_back):
            day = year_earlier(day)
        return day

    def describe(self) -> str:
        """How an answer names the period (``the 3 months ended 2009-06-30``, ``the latest period``)."""
        back = f"{self.years_back} year{'s' if self.years_back > 1 else ''} before " if self.years_back else ""
        if self.ddate is None:
            return f"{back}the latest period"
        iso = f"{self.ddate[:4]}-{self.ddate[4:6]}-{self.ddate[6:]}"
        return f"{back}the period ended {iso}" + (f" (stated {self.stated})" if self.stated else "")


_SAME_OF_YEAR = re.compile(
    r"\b(?:same|corresponding|comparable|equivalent)\s+(?:quarter|period|months?|half)\s+(?:of|in|a year earlier in)\s+"
    r"(?:fiscal\s+|calendar\s+)?(?:19|20)\d\d\b",
    re.I,
)
"""A period said as another's in a named year ("the same quarter of 2008"): the year alone was read (fiscal 2008, the
whole year), so it is refused."""
_WEEKS = re.compile(r"\b(?P<n>\d{1,2})[\s-]+weeks?\b", re.I)
"""A span in weeks, as 52/53-week filers state it ("the 26 weeks ended June 27, 2009")."""


_COUNTED = re.compile(
    r"\b(?P<n>one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d{1,2})[\s-]+(?P<unit>months?|quarters?)\b",
    re.I,
)
"""A span counted in months or quarters, as filings state it ("the six-month period ended", "the 6-month period",
"the two quarters ended")."""
_NUMBER_WORDS: dict[str, int] = dict(
    zip(
        ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"),
        range(1, 13),
    )
)


def _span(text: str) -> int | None:
    """The span in quarters a text names (:data:`_SPAN_WORDS`; :data:`_COUNTED`: 3, 6, 9 or 12 months, 1 to 4
    quarters; weeks as FSDS counts ``qtrs``, "rounded to the nearest whole number" of quarters: 13 or 16 weeks 1, 26 or
    28 weeks 2, 39 or 40 weeks 3, 52 or 53 weeks 4), or None. "Half year ended" is two quarters, not a year.

    Raises:
        ValueError: a counted span FSDS has no ``qtrs`` for ("the eighteen months ended", "two months"); the message
            starts "unread period".
    """
    low = re.sub(r"\bhalf[\s-]+year\b", "six months", text.lower())
    hits = [(low.find(w), q) for w, q in _SPAN_WORDS.items() if re.search(rf"\b{re.escape(w)}\b", low)]
    hits += [(m.start(), min(4, max(1, round(int(m.group("n")) / 13)))) for m in _WEEKS.finditer(low)]
    for m in _COUNTED.finditer(low):
        n = _NUMBER_WORDS.get(m.group("n")) or int(m.group("n"))
        quarters = n if m.group("unit").startswith("quarter") else n / 3
        if quarters not in (1, 2, 3, 4):
            raise ValueError(
                f"unread period: {m.group()!r} is no span a filing reports (3, 6, 9 or 12 months); ask for one of them"
            )
        hits.append((m.start(), int(quarters)))
    if not hits:
        return None
    return max(q for _, q in hits) if any(q > 1 for _, q in hits) else 1


_PART_OF_YEAR = re.compile(
    rf"\b(?:(?P<o>{_ORDS})[\s-]+(?:fiscal\s+)?quarter|q(?P<q>[1-4])|(?P<h>first|second)\s+half|h(?P<hn>[12])|"
    r"(?:first\s+)?(?P<n>three|3|six|6|nine|9)[\s-]+months?)\s+(?:of|in)\s+(?:the\s+|its\s+|that\s+)?(?:fiscal\s+)?"
    rf"year\s+end(?:ed|ing)\s+(?:on\s+)?(?:{_MONTH}\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+{_YEAR}|"
    r"(?P<iy>(?:19|20)\d\d)-(?P<im>\d\d)-(?P<id>\d\d))\b",
    re.I,
)
"""A quarter, half or months of a fiscal year named by the year's end ("the fourth quarter of the year ended January
31, 2025", "Q1 of fiscal year ended March 31, 2010", "the first nine months of the year ended ..."): that part of the
year (the date alone was read, and the year answered for its quarter)."""


def _part_of_year(m: re.Match[str]) -> PeriodAsk:
    """The :class:`PeriodAsk` of a :data:`_PART_OF_YEAR` match: the quarter ``n`` ends ``3 (4 - n)`` months before
    the year's end (FSDS month ends), a half 6 or 0, "the first n months" ``12 - n``.

    Raises:
        ValueError: the stated year end is not a date.
    """
    g = m.groupdict()
    month = int(g["im"]) if g["im"] else MONTHS[g["month"].lower().rstrip(".")]
    try:
        day = dt.date(int(g["iy"] or g["year"]), month, int(g["id"] or g["d"]))
    except ValueError:
        raise ValueError(f"{m.group()!r} is not a date") from None
    if g["o"] or g["q"]:
        quarter = _ORD[g["o"].lower()] if g["o"] else int(g["q"])
        back, qtrs = 3 * (4 - quarter), 1
    elif g["h"] or g["hn"]:
        back, qtrs = (6, 2) if (g["h"] or "").lower() == "first" or g["hn"] == "1" else (0, 2)
    else:
        months = {"three": 3, "six": 6, "nine": 9}.get(g["n"].lower()) or int(g["n"])
        back, qtrs = 12 - months, months // 3
    return PeriodAsk(months_before(fsds_ddate(day), back), qtrs, m.group())


_MONTH_RANGE = re.compile(
    rf"\b(?:from\s+|between\s+)?(?P<m1>{_MONTH_NAMES})\.?(?:\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?)?,?(?:\s+(?P<y1>(?:19|20)\d\d))?"
    rf"\s*(?:-|–|to|through|thru|until|and)\s*(?P<m2>{_MONTH_NAMES})\.?(?:\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?)?,?\s+{_YEAR}\b",
    re.I,
)
"""A span said by its first and last months ("January through June 2009", "Jan-Jun 2009", "from April 1 to June 30,
2009", "July 2008 to June 2009"): the months between, inclusive (it was the last month's quarter: Chevron's revenue
"from January through June 2009" was its second quarter's)."""


def _month_range(m: re.Match[str]) -> PeriodAsk | None:
    """The :class:`PeriodAsk` of a :data:`_MONTH_RANGE` match: ``qtrs`` the months between over three; None where the
    words are two period ends, not a span ("from December 31, 2008 to June 30, 2009": two balance dates; "from
    December 2008 to June 2009": seven months, no span a filing reports), left to the other patterns.

    Raises:
        ValueError: two months of one year, no days, that no filing's span joins ("from January to May 2009"); the
            message starts "unread period".
    """
    g = m.groupdict()
    if g["d1"] and int(g["d1"]) != 1:
        return None
    first, last = MONTHS[g["m1"].lower().rstrip(".")], MONTHS[g["m2"].lower().rstrip(".")]
    end_year = int(g["year"])
    start_year = int(g["y1"]) if g["y1"] else (end_year if first <= last else end_year - 1)
    months = (end_year * 12 + last) - (start_year * 12 + first) + 1
    if months not in (3, 6, 9, 12):
        if g["y1"] or first > last or g["d1"] or g["d2"]:
            return None
        raise ValueError(  # "from January to May 2009": five months, never read as the May quarter
            f"unread period: {m.group()!r} spans {months} months, no span a filing reports (3, 6, 9 or 12 months)"
        )
    return PeriodAsk(month_end(end_year, last).strftime("%Y%m%d"), months // 3, m.group())


_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("part", _PART_OF_YEAR),
    ("range", _MONTH_RANGE),
    # 2009-06-28, 20090628
    ("iso", re.compile(r"\b(?P<year>(?:19|20)\d\d)-(?P<m>\d\d)-(?P<d>\d\d)\b")),
    # June 28, 2009 / June 28 2009
    ("mdy", re.compile(rf"\b{_MONTH}\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+{_YEAR}\b", re.I)),
    # 28 June 2009, 30-Jun-2009
    ("dmy", re.compile(rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?:\s+|-){_MONTH}\s*(?:,?\s+|-){_YEAR}\b", re.I)),
    # 6/28/2009
    ("slash", re.compile(r"\b(?P<m>\d{1,2})/(?P<d>\d{1,2})/(?P<year>(?:19|20)\d\d)\b")),
    # Q2 2009, Q2 FY2010, Q2'09, 2Q09, 2Q 2009, second quarter of 2009, fiscal 2010 second quarter
    (
        "quarter",
        re.compile(
            r"\b(?:(?P<fisc1>fiscal\s+|fy\s*)?q(?P<q1>[1-4])\s*(?:of\s+)?(?:(?P<fisc2>fiscal\s+(?:year\s+)?|fy\s*)|calendar\s+)?'?"
            r"(?P<y1>(?:19|20)?\d\d)\b"
            r"|(?P<q2>[1-4])q\s*(?P<fisc3>fy\s*)?'?(?P<y2>(?:19|20)?\d\d)\b"
            rf"|(?P<fisc4>fiscal\s+(?:year\s+)?)?(?P<y3>(?:19|20)\d\d)(?:['’]s)?\s+(?P<o1>{_ORDS})[\s-]+"
            r"(?:fiscal\s+|calendar\s+)?quarter\b"
            rf"|(?P<o2>{_ORDS})[\s-]+(?:(?P<fisc5>fiscal\s+)|calendar\s+)?quarter,?\s+(?:of\s+|in\s+)?(?:its\s+|the\s+)?"
            r"(?:(?P<fisc6>fiscal\s+(?:year\s+)?|fy\s*)|calendar\s+(?:year\s+)?)?(?P<y4>(?:19|20)\d\d)\b"
            r"|(?P<fisc7>fiscal\s+|fy\s*)?(?P<y5>(?:19|20)\d\d)\s*[-/ ]?\s*q(?P<q3>[1-4])\b)",
            re.I,
        ),
    ),
    # calendar 2009, calendar year 2009: the twelve months ended December 31, whatever the company's fiscal year
    ("calendar", re.compile(rf"\bcalendar\s+(?:year\s+)?{_YEAR}\b", re.I)),
    # first half of 2009, H1 2009, 1H09, H1'09
    (
        "half",
        re.compile(
            rf"\b(?:(?:(?P<h>first|second|1st|2nd)\s+half|h(?P<hn>[12]))\s+(?:of\s+)?(?:its\s+|the\s+)?(?P<fisc>fiscal\s+(?:year\s+)?|fy\s*)?"
            rf"{_YEAR}"
            r"|(?:(?P<hn2>[12])h|h(?P<hn3>[12]))\s*'?(?P<y2>(?:19|20)?\d\d))\b",
            re.I,
        ),
    ),
    # the first six months of 2009, first nine months of 2009, six months of 2009
    (
        "months",
        re.compile(
            rf"(?<!second )(?<!third )(?<!fourth )(?<!last )(?<!final )(?<!later )"
            rf"\b(?:first\s+)?(?P<n>three|3|six|6|nine|9|twelve|12)\s+months\s+(?:of|in)\s+(?:fiscal\s+|fy\s*)?{_YEAR}\b",
            re.I,
        ),
    ),
    # fiscal 2008, fiscal year 2008, FY2008, FY 08
    (
        "fy",
        re.compile(
            r"\b(?:fiscal(?:\s+year)?|fy)\s*'?(?P<year>(?:19|20)?\d\d)\b(?!\s+(?:first|second|third|fourth|q[1-4]))",
            re.I,
        ),
    ),
    # end of 2009, year-end 2009, close of 2009, December 2009 year end
    (
        "yearend",
        re.compile(
            rf"\b(?:(?:the\s+)?end\s+of|year[\s-]?end(?:ed)?|close\s+of|as\s+at\s+end)\s+(?:of\s+)?(?:fiscal\s+)?{_YEAR}\b",
            re.I,
        ),
    ),
    # June 2009 (a month without a day)
    ("month", re.compile(rf"\b{_MONTH}\s+(?:of\s+)?{_YEAR}\b", re.I)),
)


def _year4(text: str) -> int:
    y = int(text)
    return y + 2000 if y < 100 else y


def find_periods(question: str) -> list[PeriodAsk]:
    """The periods a question names, in the order stated (an empty list: the latest).

    A span word ("six months ended", "first half", "fiscal year") sets ``qtrs``; an exact date is rounded to
    FSDS's month end (:func:`fsds_ddate`); a quarter of a year is the calendar quarter's end month unless the
    question says "fiscal" (then ``fiscal`` carries ``(fy, "Qn")`` for the company's filings to resolve, with the
    calendar reading as ``ddate``'s fallback). A bare year ("in 2008") is a fiscal year (``fiscal`` ``(2008,
    "FY")``, ``qtrs`` 4, fallback December 31).

    Raises:
        ValueError: a stated date does not exist (``February 30, 2009``), naming it; the question asks for
            several periods at once (:data:`SEVERAL_PERIODS`, the message starts "several periods"); or it names a
            year that no period phrase reads ("Abbott's 2009 revenue", the message starts "unread period"), which
            the latest period would silently answer.
    """
    same = _SAME_OF_YEAR.search(question)
    if same:
        raise ValueError(
            f'unread period: {same.group()!r} is relative to a quarter the question does not name; name it ("Q2 '
            '2008", "the quarter ended June 30, 2008")'
        )
    several = SEVERAL_PERIODS.search(question)
    if several:
        raise ValueError(
            f'several periods: {several.group()!r} asks for more than one period; ask for one at a time ("the '
            'quarter ended June 30, 2009"), for a span ("the six months ended June 30, 2009"), or for the change '
            "between two"
        )
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, PeriodAsk]] = []
    span = _span(question)

    def free(m: re.Match[str]) -> bool:
        return not any(a < m.end() and m.start() < b for a, b in taken)

    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(question):
            if not free(m):
                continue
            g = m.groupdict()
            ask: PeriodAsk | None = None
            if kind == "part":
                ask = _part_of_year(m)
            elif kind == "range":
                ask = _month_range(m)
            elif kind in ("iso", "mdy", "dmy", "slash"):
                month = int(g["m"]) if g.get("m") else MONTHS[g["month"].lower().rstrip(".")]
                try:
                    day = dt.date(int(g["year"]), month, int(g["d"]))
                except ValueError:
                    raise ValueError(f"{m.group()!r} is not a date") from None
                stated = None if day == month_end(day.year, day.month) else day.isoformat()
                ask = PeriodAsk(fsds_ddate(day), span, m.group(), stated)
            elif kind == "quarter":
                q = int(g["q1"] or g["q2"] or g["q3"] or _ORD[(g["o1"] or g["o2"]).lower()])
                year = _year4(g["y1"] or g["y2"] or g["y3"] or g["y4"] or g["y5"])
                fiscal = any(g.get(f"fisc{i}") for i in range(1, 8)) or bool(re.search(r"\bfiscal\b", question, re.I))
                # the span words outside the quarter's own ("the fourth quarter of its 2008 fiscal year" is a quarter)
                after = re.sub(r"^\s*(?:fiscal\s+)?year\b", "", question[m.end() :], flags=re.I)
                around = _span(question[: m.start()] + " " + after)
                ask = PeriodAsk(
                    month_end(year, 3 * q).strftime("%Y%m%d"), around if around in (2, 3) else 1, m.group(),
                    fiscal=(year, f"Q{q}") if fiscal else None,
                )  # fmt: skip
            elif kind == "calendar":
                ask = PeriodAsk(f"{g['year']}1231", 4, m.group())
            elif kind == "half":
                half = 1 if (g["h"] or "").lower() in ("first", "1st") or "1" in (g["hn"], g["hn2"], g["hn3"]) else 2
                year = _year4(g["year"] or g["y2"])
                fiscal = bool(g["fisc"] or re.search(r"\bfiscal\b", question, re.I))
                ask = PeriodAsk(
                    month_end(year, 6 * half).strftime("%Y%m%d"),
                    2,
                    m.group(),
                    fiscal=(year, f"H{half}") if fiscal else None,
                )
            elif kind == "months":
                n = {"three": 3, "six": 6, "nine": 9, "twelve": 12}.get(g["n"].lower()) or int(g["n"])
                year = int(g["year"])
                ask = PeriodAsk(month_end(year, n).strftime("%Y%m%d"), n // 3, m.group())
            elif kind == "fy":
                year = _year4(g["year"])
                ask = PeriodAsk(month_end(year, 12).strftime("%Y%m%d"), 4, m.group(), fiscal=(year, "FY"))
            elif kind == "yearend":
                year = int(g["year"])
                fiscal = "fiscal" in m.group().lower() or question[: m.start()].lower().rstrip().endswith("fiscal")
                ask = PeriodAsk(  # "fiscal year-end 2009": the company's fiscal year end (General Mills' May 31)
                    month_end(year, 12).strftime("%Y%m%d"), span if span and span > 1 else None, m.group(),
                    fiscal=(year, "FY") if fiscal else None,
                )  # fmt: skip
            elif kind == "month":
                year, month = int(g["year"]), MONTHS[g["month"].lower().rstrip(".")]
                alone = (
                    span is None and _MONTH_END_WORDS.search(question[: m.start()]) is None
                )  # not "FY ended Jan 2025"
                ask = PeriodAsk(month_end(year, month).strftime("%Y%m%d"), span, m.group(), month=alone)
            if ask is not None:
                taken.append((m.start(), m.end()))
                found.append((m.start(), ask))
    if not found:
        for m in re.finditer(
            r"\b(?:in|for|during|of|over|throughout|across)\s+(?:all\s+of\s+)?(?P<year>(?:19|20)\d\d)\b", question, re.I
        ):
            if free(m) and span in (None, 4):  # "the second three months of 2009" is no year
                year = int(m.group("year"))
                found.append((m.start(), PeriodAsk(f"{year}1231", 4, m.group(), fiscal=(year, "FY"))))
    found.sort(key=lambda f: f[0])
    if not found:
        unread = [y.group() for y in re.finditer(r"(?<![\d,.$])\b(?:19|20)\d\d\b(?![\d,.%])", question) if free(y)]
        if unread:
            raise ValueError(
                f"unread period: the question names {', '.join(repr(y) for y in unread)} but no period finkg reads "
                '("in 2009", "Q2 2009", "the quarter ended June 30, 2009"); never answered with the latest period'
            )
    part = next((m for m in _PART_WORDS.finditer(question) if free(m)), None)
    if part is not None and any(a.qtrs == 4 or (a.fiscal and a.fiscal[1] == "FY") for _, a in found):
        raise ValueError(  # "the third quarter of its fiscal 2009" was read as the year
            f"unread period: {part.group()!r} is part of a year, and finkg read the whole year: name the part with its "
            'year ("Q3 fiscal 2009", "the quarter ended June 30, 2009"); never answered with the year'
        )
    ytd = YTD_WORDS.search(question)
    yearless = _YEARLESS.search(question)
    if not found and yearless is not None and ytd is None and TRAILING_WORDS.search(question) is None:
        raise ValueError(
            f'unread period: {yearless.group()!r} names no year; name it ("Q3 2009", "the nine months ended '
            'September 30, 2009"); never answered with the latest period'
        )
    if ytd is not None:  # "revenue YTD", "year to date through June 30, 2009": the company's fiscal year to date
        return (
            [replace(a, ytd=True, month=False) for _, a in found]
            if found
            else [PeriodAsk(None, text=ytd.group(), ytd=True)]
        )
    trailing = TRAILING_WORDS.search(question)
    if trailing is None:
        return [a for _, a in found]
    if not found:  # "What is X's TTM revenue?": the twelve months ended the latest period end
        return [PeriodAsk(None, 4, trailing.group(), trailing=True)]
    return [replace(a, qtrs=4, trailing=True, month=False) for _, a in found]


_MONTH_END_WORDS = re.compile(
    r"\b(?:ended|ending|ends|end(?:\s+of)?|to|through|thru|until|fy|fiscal(?:\s+year)?|year|quarter|as\s+(?:of|at)|at|by)"
    r"\s*$",
    re.I,
)
"""Words before a month that make it the end of a period ("the year ended Jan 2025", "as of June 2009"), not the month
itself ("revenue in June 2009")."""


_YEARLESS = re.compile(
    rf"\b(?:q[1-4]|[1-4]q|h[12]|(?:first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:fiscal\s+)?(?:quarter|half)|"
    rf"(?:three|six|nine|3|6|9)[\s-]+months?|(?:{_MONTH_NAMES})\.?\s+quarter|end\s+of\s+(?:{_MONTH_NAMES})\b\.?)\b",
    re.I,
)
"""A quarter, half, span or month named without its year ("the third quarter", "Q3", "the September quarter", "the
nine months", "the end of December"): refused where no period is read, never answered with the latest period."""


_PART_WORDS = re.compile(
    rf"\b(?:q[1-4]|[1-4]q|h[12]|(?:{_ORDS})[\s-]+(?:fiscal\s+|calendar\s+)?(?:quarter|half))\b", re.I
)
"""A named quarter or half ("the third quarter", "Q3", "H1"): beside a year that a period phrase read whole, the part
was not read."""


def relative_period(question: str) -> str | None:
    """The words of a period said relative to an unstated date (:data:`RELATIVE_WORDS`, "last year"), or None."""
    m = RELATIVE_WORDS.search(question)
    return m.group() if m else None


def year_earlier(ddate: str) -> str:
    """The same month end one year earlier (``20090630`` -> ``20080630``; February's end stays February's)."""
    day = dt.date(int(ddate[:4]), int(ddate[4:6]), 1)
    return month_end(day.year - 1, day.month).strftime("%Y%m%d")


def months_before(ddate: str, months: int) -> str:
    """The month end ``months`` months before the month end ``ddate`` (``20100331``, 3 -> ``20091231``)."""
    n = int(ddate[:4]) * 12 + int(ddate[4:6]) - 1 - months
    return month_end(n // 12, n % 12 + 1).strftime("%Y%m%d")


FISCAL_NAME_UNSETTLED = ("0108", "0215")
"""Fiscal year ends (``MMDD``, inclusive) whose years companies name either way: by the calendar year the year starts
in (Home Depot's and Gap's fiscal 2009 ended January 30-31, 2010) or ends in (Dell's and NVIDIA's fiscal 2010 ended
January 29-31, 2010; Walmart's fiscal 2010 ended January 31, 2010). FSDS's ``fy`` does not tell them apart (2009 for
all of the 10-Qs of July 2009), so a fiscal year named for such a company is not read."""


def fiscal_period_end(fye: str, fy: int, fp: str) -> str:
    """FSDS's ``ddate`` of a company's fiscal period ``(fy, fp)`` from its fiscal year end ``fye`` (``MMDD``, sub.txt's
    field): a fiscal year is named by the calendar year it ends in (Symantec's fiscal 2010 ended April 2, 2010, its
    first quarter July 3, 2009), one ending in the first week of January by the year before (a 52/53-week year ended
    January 2, 2010 is fiscal 2009). ``fp`` is ``Q1``-``Q4``, ``H1``, ``H2`` or ``FY``; quarter ``n`` ends ``3 (4 - n)``
    months before the year's end (month ends, as FSDS rounds them: :func:`fsds_ddate`).

    >>> fiscal_period_end("0331", 2010, "Q1"), fiscal_period_end("0102", 2009, "FY"), fiscal_period_end("0930", 2009, "Q3")
    ('20090630', '20091231', '20090630')

    Raises:
        ValueError: ``fye`` is not ``MMDD``, falls in :data:`FISCAL_NAME_UNSETTLED` (the message says why), or ``fp``
            is none of the above.
    """
    if not re.fullmatch(r"(0[1-9]|1[0-2])[0-3]\d", fye or ""):
        raise ValueError(f"fiscal year end {fye!r} is not MMDD")
    back = {"Q1": 9, "Q2": 6, "Q3": 3, "Q4": 0, "FY": 0, "H1": 6, "H2": 0}.get(fp.upper())
    if back is None:
        raise ValueError(f"fiscal period {fp!r} is none of Q1-Q4, H1, H2, FY")
    if FISCAL_NAME_UNSETTLED[0] <= fye <= FISCAL_NAME_UNSETTLED[1]:
        month = calendar.month_name[int(fye[:2])]
        raise ValueError(
            f"its fiscal year ends {month} {int(fye[2:])}, and companies name such a year by the calendar year it "
            "starts in (Home Depot's fiscal 2009 ended January 31, 2010) or ends in (Dell's fiscal 2010 ended "
            'January 29, 2010): name the period by its end date ("the quarter ended July 31, 2009")'
        )
    year = fy + 1 if fye <= "0107" else fy
    month = int(fye[:2])
    end = dt.date(year, month, min(int(fye[2:]), calendar.monthrange(year, month)[1]))
    return months_before(fsds_ddate(end), back)


def iso(ddate: str) -> str:
    """``20090630`` -> ``2009-06-30``."""
    return f"{ddate[:4]}-{ddate[4:6]}-{ddate[6:]}"
