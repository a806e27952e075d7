"""Find, parse and format the numbers of a financial memo's text.

This is the parsing layer of the numeric verifier (:mod:`generation.verify.claims`). It turns memo prose
into :class:`NumberMention` records -- exact character offsets, the value in base units (dollars
for amounts, a fraction for percentages), the scale word the text applied and the number of
decimals shown -- so that every written number can be compared with its gold XBRL fact and, when
it is wrong, repaired in place with :func:`replace_span`. The formatters write numbers the way
the parser reads them back.

Source: ../shared/seeds/003_2b4a46a307636297.txt, "Numeric verification and evaluation metrics":
"A fact claim is exact when the absolute difference is no greater than one dollar or 0.01% of the
gold value, whichever is larger" (the tolerance itself lives in :mod:`generation.verify.claims`). Judging
a claim needs the written value and how precisely it was written (:func:`rounding_tolerance`);
writing a repaired value needs a format that stays within the tolerance (:func:`format_usd`).

What counts as a number mention
-------------------------------
- currency: ``$1,234,567``, ``$1.2 million``, ``$1.2M``, ``$3.4 bn``, ``US$5bn``, ``USD 5.6 billion``,
  ``1,234 million dollars``; negatives ``-$1,234``, ``$-1,234``, ``$(1,234)``, ``($1,234)``;
- plain numbers ``1,234.5``, ``0.62``, ``7k``, ``(1,234)`` (financial-style negative);
- percentages ``12.5%``, ``-3.2%``, ``(3.2)%``, ``12.5 percent``, ``2.1 percentage points``;
- ratios ``1.85x``, ``1.85×``, ``0.62 times``;
- dates ``2009-06-30``, ``June 30, 2009``, ``30 June 2009``, ``06/30/2009`` (one mention each,
  never split into parts) and bare years 1900..2100 (``fiscal 2009``).

Scale words (case-insensitive) count only when they directly follow the number: the words
thousand(s), million(s), billion(s), trillion(s) after at most one space; the abbreviations k, m,
mm, mn, mln, b, bn, bln, tn, trn after at most one space when the number carries a currency sign,
and attached (``7k``, ``5.6bn``) otherwise. An abbreviation must end the word: ``$5 more`` is five
dollars, ``$5 b`` five billion.

What is never a number mention: anything inside square brackets (citation markers ``[1]``,
``[F12]``, ``[R3]``), accession numbers (``0000950123-09-012345``), the number after ``CIK``,
``SIC``, ``Note``, ``Item``, ``Section``, ``Exhibit``, ``Form``, ``Rule``, ``Page``..., words that mix
letters and digits (``Q2``, ``FY2023``, ``1st``), hyphen- or slash-joined tokens (``10-Q``,
``10-K``, ``20-F``, ``8-K``, ``us-gaap/2023``, ``2019-2021``, ``10-20%``), dotted version-like
numbers (``13.2.1``), and bare 1-2 digit integers in parentheses (``(1)``, enumeration markers).
Word numbers ("three months") are not parsed.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Context, Decimal

__all__ = [
    "NumberMention",
    "find_numbers",
    "format_percent",
    "format_ratio",
    "format_usd",
    "parse_number",
    "replace_span",
    "rounding_tolerance",
]

KINDS = ("currency", "percent", "ratio", "number", "date", "year")


@dataclass(frozen=True)
class NumberMention:
    """One number as written in a text.

    Attributes:
        start, end: character offsets; ``text[start:end]`` is the whole mention including the
            currency sign, sign, parentheses that make it negative, scale word, ``%`` and ``x``.
        text: that substring.
        value: in base units: dollars for currency (scale applied), a fraction for percentages
            (``12.5%`` -> 0.125), the plain number for ratios and numbers (scale applied), the year
            for ``year``, and ``YYYYMMDD`` as a float for ``date`` (use ``iso_date``).
        kind: ``currency``, ``percent``, ``ratio``, ``number``, ``date`` or ``year``.
        scale: the multiplier the text applied (1, 1e3, 1e6, 1e9, 1e12); 1 for percent, ratio,
            date and year.
        decimals_shown: digits written after the decimal point (``1,234.50`` -> 2).
        negative: written with a minus sign or in parentheses.
        iso_date: ``YYYY-MM-DD`` for ``date``, else None.
    """

    start: int
    end: int
    text: str
    value: float
    kind: str
    scale: float
    decimals_shown: int
    negative: bool
    iso_date: str | None = None


# --------------------------------------------------------------------------------------------
# Patterns
# --------------------------------------------------------------------------------------------

# Decimal arithmetic with enough digits for any finite float (the default context keeps 28).
_CTX = Context(prec=800, rounding=ROUND_HALF_EVEN)
_SP = "[ \u00a0\u202f]"  # one space: plain, no-break or narrow no-break (never a newline)
# The digits of a number: grouped thousands or a plain run, with an optional fraction. Not
# preceded by a word character (except in "USD5"), '.', ',' or a joined token ("10-", "gaap/", "10:"); not followed
# by another digit, ",<digit>", ".<digit>" (so "1,2345" and "13.2.1" are left alone).
_CORE = re.compile(
    r"(?:(?<![\w.,])|(?<=USD))(?<![\w][-\u2010\u2013/:])"
    r"(?P<int>[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.(?P<frac>[0-9]+))?"
    r"(?![0-9])(?!,[0-9])(?!\.[0-9])"
)
_CURRENCY_BEFORE = re.compile(r"(?:(?<![A-Za-z])US" + _SP + r"?\$|(?<![A-Za-z])\$|(?<![\w])USD)" + _SP + r"?\Z")
_MINUS = "-\u2212"  # hyphen-minus and the minus sign
_SCALE_WORDS = {
    "thousand": 1e3,
    "thousands": 1e3,
    "k": 1e3,
    "million": 1e6,
    "millions": 1e6,
    "m": 1e6,
    "mm": 1e6,
    "mn": 1e6,
    "mln": 1e6,
    "billion": 1e9,
    "billions": 1e9,
    "b": 1e9,
    "bn": 1e9,
    "bln": 1e9,
    "trillion": 1e12,
    "trillions": 1e12,
    "tn": 1e12,
    "trn": 1e12,
}
_END = r"(?![\w&'\u2019])"  # a scale word or unit ends the word ("$5 more" is not "$5 m")
_SCALE_FULL = re.compile(_SP + r"?(?P<w>(?i:thousands?|millions?|billions?|trillions?))" + _END)
_SCALE_ABBR_SPACED = re.compile(_SP + r"?(?P<w>(?i:mm|mn|mln|bn|bln|tn|trn|k|m|b))" + _END)
_SCALE_ABBR_ATTACHED = re.compile(r"(?P<w>(?i:mm|mn|mln|bn|bln|tn|trn|k|m|b))" + _END)
_PERCENT = re.compile(_SP + r"?%|" + _SP + r"(?i:percentage" + _SP + r"points?|percent|per" + _SP + r"cent|pct)" + _END)
_RATIO = re.compile(r"[xX](?![\w])|" + _SP + r"?\u00d7|" + _SP + r"(?i:times)" + _END)
_DOLLARS_AFTER = re.compile(_SP + r"(?:(?i:(?:US" + _SP + r")?dollars)|USD)" + _END)
# A token joined to the number by a hyphen, en dash, slash or colon ("10-Q", "2019-2021", "3/4"):
# reject. An em dash is prose punctuation ("revenue—$5 million") and joins nothing.
_JOINED_AFTER = re.compile(r"[-\u2010\u2013/:][0-9A-Za-z]")

# Spans where nothing is a number mention.
_BRACKETS = re.compile(r"\[[^\[\]\n]*\]")
_ACCESSION = re.compile(r"(?<![\w-])[0-9]{10}-[0-9]{2}-[0-9]{6}(?![\w-])")
_LABELLED = re.compile(
    r"(?<![\w])(?i:cik|sic|notes?|items?|sections?|exhibits?|footnotes?|pages?|rules?|forms?|"
    r"tables?|figures?|schedules?|chapters?|articles?|parts?|accession)"
    r"(?:" + _SP + r"*(?i:no\.?|number|#|:|=))?" + _SP + r"*"
    r"(?P<n>[0-9]+(?:[.\-][0-9]+)*)(?![.\-]?[0-9])(?!" + _SP + r"?%)"  # "notes 5.25%" is a rate
)
# SEC form names written without the hyphen ("the 10K", "an 8K"); "$10K" stays ten thousand dollars.
_FORM_NAMES = re.compile(r"(?<![\w$-])(?<!USD)(?<!USD )(?:10|6|8|11|20|40)-?[KQF](?:SB|405|T)?(?:/A)?(?![\w])")

# Dates.
_MONTHS = {
    "january": 1,
    "jan": 1,
    "february": 2,
    "feb": 2,
    "march": 3,
    "mar": 3,
    "april": 4,
    "apr": 4,
    "may": 5,
    "june": 6,
    "jun": 6,
    "july": 7,
    "jul": 7,
    "august": 8,
    "aug": 8,
    "september": 9,
    "sept": 9,
    "sep": 9,
    "october": 10,
    "oct": 10,
    "november": 11,
    "nov": 11,
    "december": 12,
    "dec": 12,
}
_MONTH = r"(?=[A-Z])(?P<mon>(?i:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r"))\.?"
_DAY = r"(?P<day>[0-9]{1,2})(?i:st|nd|rd|th)?"
_YEAR = r"(?P<year>[0-9]{4})"
_DATE_PATTERNS = (
    re.compile(r"(?<![\w.,/-])(?P<year>[0-9]{4})-(?P<month>[0-9]{2})-(?P<day>[0-9]{2})(?![\w/-])(?!\.[0-9])"),
    re.compile(r"(?<![\w])" + _MONTH + r"\s+" + _DAY + r",?\s+" + _YEAR + r"(?![\w])(?![-/.,][0-9])"),
    re.compile(r"(?<![\w.,])" + _DAY + r"\s+" + _MONTH + r",?\s+" + _YEAR + r"(?![\w])(?![-/.,][0-9])"),
    re.compile(r"(?<![\w.,/-])(?P<month>[0-9]{1,2})/(?P<day>[0-9]{1,2})/(?P<year>[0-9]{4})(?![\w/-])(?!\.[0-9])"),
)


# --------------------------------------------------------------------------------------------
# Finding
# --------------------------------------------------------------------------------------------


def find_numbers(text: str) -> list[NumberMention]:
    """Every number mention of ``text``, in text order, never overlapping.

    Values are in base units (see :class:`NumberMention`); offsets are exact, so
    ``text[m.start:m.end] == m.text`` and :func:`replace_span` can repair a number in place.

    >>> [(m.text, m.kind, m.value) for m in find_numbers("Revenue was $1.2 million [3], up 12.5%.")]
    [('$1.2 million', 'currency', 1200000.0), ('12.5%', 'percent', 0.125)]
    >>> [(m.text, m.value) for m in find_numbers("Net loss of ($1,234) in fiscal 2009 (see Note 3).")]
    [('($1,234)', -1234.0), ('2009', 2009.0)]
    >>> [(m.kind, m.iso_date) for m in find_numbers("as of June 30, 2009 per the 10-Q")]
    [('date', '2009-06-30')]
    """
    blocked = _blocked_spans(text)
    dates = _find_dates(text, blocked)
    taken = sorted(blocked + [(m.start, m.end) for m in dates])
    out: list[NumberMention] = list(dates)
    for core in _CORE.finditer(text):
        if _inside(core.start(), core.end(), taken):
            continue
        m = _extend(text, core)
        if m is None or _overlaps(m.start, m.end, taken):
            continue
        out.append(m)
    out.sort(key=lambda m: m.start)
    # Defensive: drop anything that would overlap an earlier mention.
    result: list[NumberMention] = []
    for m in out:
        if not result or m.start >= result[-1].end:
            result.append(m)
    return result


def parse_number(s: str) -> NumberMention | None:
    """The single mention that makes up all of ``s`` (surrounding whitespace aside), else None.

    >>> parse_number(" $3.4 bn ").value
    3400000000.0
    >>> parse_number("$3.4 bn and more") is None
    True
    """
    found = find_numbers(s)
    if len(found) == 1 and s[: found[0].start].strip() == "" and s[found[0].end :].strip() == "":
        return found[0]
    return None


def _blocked_spans(text: str) -> list[tuple[int, int]]:
    spans = [(m.start(), m.end()) for m in _BRACKETS.finditer(text)]
    spans += [(m.start(), m.end()) for m in _ACCESSION.finditer(text)]
    spans += [(m.start("n"), m.end("n")) for m in _LABELLED.finditer(text)]
    spans += [(m.start(), m.end()) for m in _FORM_NAMES.finditer(text)]
    return spans


def _inside(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= start < b or a < end <= b for a, b in spans)


def _overlaps(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    return any(start < b and a < end for a, b in spans)


def _find_dates(text: str, blocked: list[tuple[int, int]]) -> list[NumberMention]:
    found: list[NumberMention] = []
    taken = list(blocked)
    for pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            if _overlaps(m.start(), m.end(), taken):
                continue
            groups = m.groupdict()
            month = _MONTHS[groups["mon"].lower()] if groups.get("mon") else int(groups["month"])
            try:
                d = _dt.date(int(groups["year"]), month, int(groups["day"]))
            except ValueError:
                continue
            found.append(
                NumberMention(
                    m.start(), m.end(), m.group(0), float(d.strftime("%Y%m%d")), "date", 1.0, 0, False, d.isoformat()
                )
            )
            taken.append((m.start(), m.end()))
    return found


_BEFORE_SIGN = "([{\"'\u201c\u2018:;,=$<>*|~\u2014"


def _is_sign(text: str, i: int) -> bool:
    """``text[i]`` is a minus sign: it starts the text or follows a space, an opening bracket,
    ``$`` or punctuation -- not a word, number or unit (``10-3``, ``5%-6%`` are ranges)."""
    if i < 0 or text[i] not in _MINUS:
        return False
    return i == 0 or text[i - 1].isspace() or text[i - 1] in _BEFORE_SIGN


def _extend(text: str, core: re.Match[str]) -> NumberMention | None:
    """Grow the digits ``core`` into a whole mention: sign, currency, parentheses, scale, unit."""
    s, e, n = core.start(), core.end(), len(text)
    int_part, frac = core.group("int"), core.group("frac") or ""

    # Left, reading outwards: "(" sign currency sign "(" digits. At most one sign, one "(".
    i = s
    paren = sign = cur = None
    if i > 0 and text[i - 1] == "(":
        paren = i = i - 1
    if _is_sign(text, i - 1):
        sign = i = i - 1
    c = _CURRENCY_BEFORE.search(text, max(0, i - 8), i)
    if c:
        cur = i = c.start()
    if sign is None and _is_sign(text, i - 1):
        sign = i = i - 1
    if paren is None and i > 0 and text[i - 1] == "(":
        paren = i = i - 1

    # Right: [")"] [scale] [")"] [unit]. The ")" closes only a "(" opened on the left and only
    # before a percent/ratio unit: "(3.2)%" is negative, "(12.5%)" a parenthetical.
    j = e
    closed = False
    if paren is not None and j < n and text[j] == ")":
        j, closed = j + 1, True
    scale_word = None
    scale_re = _SCALE_ABBR_SPACED if cur is not None else _SCALE_ABBR_ATTACHED
    sm = _SCALE_FULL.match(text, j) or scale_re.match(text, j)
    if sm:
        scale_word = sm.group("w").lower()
        j = sm.end()
        if paren is not None and not closed and j < n and text[j] == ")":
            j, closed = j + 1, True
    kind = "currency" if cur is not None else "number"
    if cur is None and scale_word is None:
        pm = _PERCENT.match(text, j)
        rm = None if pm else _RATIO.match(text, j)
        if pm:
            kind, j = "percent", pm.end()
        elif rm:
            kind, j = "ratio", rm.end()
    if kind == "number":
        dm = _DOLLARS_AFTER.match(text, j)
        if dm:
            kind, j = "currency", dm.end()
    if kind in ("currency", "number") and paren is not None and not closed and j < n and text[j] == ")":
        j, closed = j + 1, True

    # Right boundary: the mention must end a word, and bare digits must not be joined on.
    if j < n and (text[j].isalnum() or text[j] == "_"):
        return None
    if j == e and _JOINED_AFTER.match(text, j):
        return None

    if paren is not None and not closed:
        # The "(" belongs to the prose, not to the number: drop it and whatever stood before it.
        if sign is not None and sign < paren:
            sign = None
        if cur is not None and cur < paren:
            cur = None
            if kind == "currency" and not _DOLLARS_AFTER.match(text, e):
                return _extend_plain(text, core)
        paren = None
    start = min(x for x in (s, paren, sign, cur) if x is not None)

    if (
        paren is not None
        and kind == "number"
        and sign is None
        and scale_word is None
        and not frac
        and "," not in int_part
    ):
        if len(int_part) <= 2:
            return None  # "(1)", "(12)": an enumeration or footnote marker
        if len(int_part) == 4 and 1900 <= int(int_part) <= 2100:
            return _year(text, s, e)  # "(2009)": a year in parentheses

    digits = Decimal(int_part.replace(",", "") + ("." + frac if frac else ""))
    negative = sign is not None or paren is not None
    scale = _SCALE_WORDS[scale_word] if scale_word else 1.0
    if kind == "percent":
        value = _CTX.divide(digits, Decimal(100))
    else:
        value = _CTX.multiply(digits, Decimal(int(scale)))
    if negative:
        value = -value
    if (
        kind == "number"
        and not negative
        and scale_word is None
        and not frac
        and "," not in int_part
        and len(int_part) == 4
        and 1900 <= int(int_part) <= 2100
        and start == s
        and j == e
    ):
        return _year(text, s, e)
    return NumberMention(
        start,
        j,
        text[start:j],
        float(value),
        kind,
        scale if kind in ("currency", "number") else 1.0,
        len(frac),
        negative,
        None,
    )


def _extend_plain(text: str, core: re.Match[str]) -> NumberMention | None:
    """The digits alone, as a plain number (fallback when the left context was rejected)."""
    s, e = core.start(), core.end()
    int_part, frac = core.group("int"), core.group("frac") or ""
    value = Decimal(int_part.replace(",", "") + ("." + frac if frac else ""))
    return NumberMention(s, e, text[s:e], float(value), "number", 1.0, len(frac), False, None)


def _year(text: str, s: int, e: int) -> NumberMention:
    return NumberMention(s, e, text[s:e], float(text[s:e]), "year", 1.0, 0, False, None)


# --------------------------------------------------------------------------------------------
# Tolerances
# --------------------------------------------------------------------------------------------


def rounding_tolerance(m: NumberMention) -> float:
    """Half a unit of the last digit shown, in the mention's base units.

    Currency and numbers: dollars (scale applied); percentages: a fraction; ratios: the ratio;
    dates and years: 0.

    >>> rounding_tolerance(find_numbers("$1,234.5 million")[0])
    50000.0
    >>> rounding_tolerance(find_numbers("12.5%")[0])
    0.0005
    >>> rounding_tolerance(find_numbers("1.23x")[0])
    0.005
    >>> rounding_tolerance(find_numbers("$1,234")[0])
    0.5
    """
    if m.kind in ("date", "year"):
        return 0.0
    half = Decimal(5).scaleb(-(m.decimals_shown + 1))
    if m.kind == "percent":
        return float(half / 100)
    if m.kind == "ratio":
        return float(half)
    return float(half * Decimal(int(m.scale)))


# --------------------------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------------------------


def _round(x: Decimal, decimals: int) -> Decimal:
    return x.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_EVEN, context=_CTX)


def _check_finite(value: float) -> None:
    if not math.isfinite(value):
        raise ValueError(f"cannot format a non-finite number: {value!r}")


def _grouped(q: Decimal, decimals: int) -> str:
    """``|q|`` with thousands separators and exactly ``decimals`` decimals."""
    return f"{abs(q):,.{decimals}f}"


def format_usd(value: float, tolerance: float) -> str:
    """Dollars, readable, at the coarsest precision that keeps ``|shown - value| <= tolerance``.

    ``value`` and ``tolerance`` are in dollars. When ``|value| >= 1e6`` the amount is written in
    millions with the fewest decimals (0..6) that meet the tolerance; otherwise (or when even 6
    decimals of a million do not) as plain dollars with thousands separators, in whole dollars
    when that meets the tolerance and in cents otherwise. Billions are never used, so the output
    is predictable. When no precision meets the tolerance (``tolerance < 0.005``) cents are
    written.
    Negatives are written ``-$12.3 million``; a value that rounds to zero has no sign.
    :func:`find_numbers` reads the result back to the shown value.

    >>> format_usd(1_234_567_000, 123_456.7)   # 0.01% of the value: $1,234.6 million is 33,000 off
    '$1,234.6 million'
    >>> format_usd(1_234_567_000, 1.0)
    '$1,234.567 million'
    >>> format_usd(-12_300_000, 1.0)
    '-$12.3 million'
    >>> format_usd(999_999.4, 1.0)
    '$999,999'
    >>> format_usd(1_234.5, 0.01)
    '$1,234.50'
    """
    _check_finite(value)
    exact = Decimal(value)
    if abs(value) >= 1e6:
        millions = _CTX.divide(exact, Decimal(1_000_000))
        for d in range(0, 7):
            q = _round(millions, d)
            if abs(float(_CTX.multiply(q, Decimal(1_000_000))) - value) <= tolerance:
                return _signed(q, f"${_grouped(q, d)} million")
    q = exact
    for d in (0, 2):  # whole dollars or cents, never "$1,234.5"
        q = _round(exact, d)
        if abs(float(q) - value) <= tolerance:
            return _signed(q, f"${_grouped(q, d)}")
    return _signed(q, f"${_grouped(q, 2)}")


def _signed(q: Decimal, body: str) -> str:
    return ("-" + body) if q < 0 else body


def format_ratio(value: float, digits: int = 2) -> str:
    """A ratio with ``digits`` decimals and an ``x``: ``1.8523 -> "1.85x"``.

    Thousands are grouped (``"1,234.50x"``); a value that rounds to zero has no sign.

    >>> format_ratio(1.8523)
    '1.85x'
    >>> format_ratio(-0.5, 1)
    '-0.5x'
    """
    _check_finite(value)
    q = _round(Decimal(value), digits)
    return _signed(q, f"{_grouped(q, digits)}x")


def format_percent(value: float, digits: int = 1) -> str:
    """A fraction as a percentage with ``digits`` decimals: ``0.1234 -> "12.3%"``.

    >>> format_percent(0.1234)
    '12.3%'
    >>> format_percent(-0.032, 2)
    '-3.20%'
    """
    _check_finite(value)
    q = _round(_CTX.multiply(Decimal(value), Decimal(100)), digits)
    return _signed(q, f"{_grouped(q, digits)}%")


# --------------------------------------------------------------------------------------------
# Editing
# --------------------------------------------------------------------------------------------


def replace_span(text: str, m: NumberMention, new: str) -> str:
    """``text`` with the mention ``m`` replaced by ``new``.

    Raises ValueError when ``m`` was not found in this text (its span no longer holds
    ``m.text``). Replace several mentions from the last to the first so offsets stay valid.

    >>> t = "Revenue was $1.3 million [1]."
    >>> replace_span(t, find_numbers(t)[0], "$1.2 million")
    'Revenue was $1.2 million [1].'
    """
    if not (0 <= m.start <= m.end <= len(text)) or text[m.start : m.end] != m.text:
        raise ValueError(f"mention {m.text!r} is not at {m.start}:{m.end} of this text")
    return text[: m.start] + new + text[m.end :]
