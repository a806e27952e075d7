"""generation.verify.numbers: finding, parsing and formatting the numbers of a memo (seed 003, numeric verification)."""

from __future__ import annotations

import dataclasses
import doctest
import math
import random

import pytest

import generation.verify.numbers as numbers
from generation.verify.numbers import (
    NumberMention,
    find_numbers,
    format_percent,
    format_ratio,
    format_usd,
    parse_number,
    replace_span,
    rounding_tolerance,
)


def only(text: str) -> NumberMention:
    """The one mention of ``text``; fails when there are none or several."""
    found = find_numbers(text)
    assert len(found) == 1, [m.text for m in found]
    return found[0]


def spans(text: str) -> list[tuple[str, str]]:
    return [(m.text, m.kind) for m in find_numbers(text)]


def assert_offsets(text: str, found: list[NumberMention]) -> None:
    last_end = -1
    for m in found:
        assert text[m.start : m.end] == m.text
        assert m.start >= last_end, "mentions overlap or are out of order"
        last_end = m.end


# ---------------------------------------------------------------------------------------------
# currency
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "value", "scale", "decimals", "negative"),
    [
        ("$1,234,567", 1_234_567.0, 1, 0, False),
        ("$1.2 million", 1_200_000.0, 1e6, 1, False),
        ("$1.2M", 1_200_000.0, 1e6, 1, False),
        ("$1.2m", 1_200_000.0, 1e6, 1, False),
        ("$1.2MM", 1_200_000.0, 1e6, 1, False),
        ("$1.2 mn", 1_200_000.0, 1e6, 1, False),
        ("$3.4 bn", 3_400_000_000.0, 1e9, 1, False),
        ("$3.4bn", 3_400_000_000.0, 1e9, 1, False),
        ("$3.4 Bn", 3_400_000_000.0, 1e9, 1, False),
        ("$5 b", 5e9, 1e9, 0, False),
        ("$5 billion", 5e9, 1e9, 0, False),
        ("$5 BILLION", 5e9, 1e9, 0, False),
        ("$2 trillion", 2e12, 1e12, 0, False),
        ("$2 tn", 2e12, 1e12, 0, False),
        ("USD 5.6 billion", 5_600_000_000.0, 1e9, 1, False),
        ("US$5bn", 5e9, 1e9, 0, False),
        ("USD5.6bn", 5_600_000_000.0, 1e9, 1, False),
        ("$12.5 thousand", 12_500.0, 1e3, 1, False),
        ("$7k", 7_000.0, 1e3, 0, False),
        ("$7K", 7_000.0, 1e3, 0, False),
        ("$(1,234)", -1_234.0, 1, 0, True),
        ("($1,234)", -1_234.0, 1, 0, True),
        ("-$1,234", -1_234.0, 1, 0, True),
        ("$-1,234", -1_234.0, 1, 0, True),
        ("\u2212$1,234", -1_234.0, 1, 0, True),
        ("$(1.2) million", -1_200_000.0, 1e6, 1, True),
        ("($1.2 million)", -1_200_000.0, 1e6, 1, True),
        ("-$12.3 million", -12_300_000.0, 1e6, 1, True),
        ("$1,234.50", 1_234.5, 1, 2, False),
        ("$0.62", 0.62, 1, 2, False),
        ("1,234 million dollars", 1_234_000_000.0, 1e6, 0, False),
        ("5,000 USD", 5_000.0, 1, 0, False),
        ("$1.2\u00a0million", 1_200_000.0, 1e6, 1, False),
    ],
)
def test_currency_forms(written, value, scale, decimals, negative):
    sentence = f"Net income was {written} for the three months ended 2023-12-31 [1]."
    m = find_numbers(sentence)[0]
    assert m.text == written
    assert m.kind == "currency"
    assert m.value == pytest.approx(value, rel=1e-15)
    assert m.scale == scale
    assert m.decimals_shown == decimals
    assert m.negative is negative
    assert m.iso_date is None
    assert m.start == len("Net income was ")
    assert m.end == m.start + len(written)


def test_currency_values_are_exact_in_base_units():
    # Decimal arithmetic: 1.1 * 1e6 is 1100000.0, not 1100000.0000000002.
    assert only("$1.1 million").value == 1_100_000.0
    assert only("$0.3 billion").value == 300_000_000.0
    assert only("$1,234.567 million").value == 1_234_567_000.0


def test_scale_word_only_directly_after_the_number():
    assert spans("The desk spent $5 more on hedges.") == [("$5", "currency")]
    assert spans("The CEO received a $5 bonus.") == [("$5", "currency")]
    assert spans("Fees of $5 M&A advisory were paid.") == [("$5", "currency")]
    assert spans("Revenue of $5 billion.") == [("$5 billion", "currency")]
    assert spans("Revenue of $5 b.") == [("$5 b", "currency")]
    # two spaces: the word no longer follows the number directly
    assert spans("Revenue of $5  million.") == [("$5", "currency")]
    # a newline between the number and the word does not join them
    assert spans("Revenue of $5\nmillion.") == [("$5", "currency")]
    # a scale abbreviation after a plain number must be attached ("5 m" could be anything)
    assert spans("about 5 m away") == [("5", "number")]
    assert spans("5.6bn of notional") == [("5.6bn", "number")]
    assert only("5.6bn of notional").value == 5_600_000_000.0
    assert only("a 7k headcount").value == 7_000.0


def test_plain_numbers_take_full_scale_words():
    m = only("Shares outstanding were 1,234.5 million at year end.")
    assert (m.text, m.kind, m.value, m.scale, m.decimals_shown) == (
        "1,234.5 million",
        "number",
        1_234_500_000.0,
        1e6,
        1,
    )


# ---------------------------------------------------------------------------------------------
# negatives in parentheses
# ---------------------------------------------------------------------------------------------


def test_parenthesized_plain_number_is_negative():
    text = "Operating cash flow was (1,234) thousand dollars, against 5,678 a year earlier."
    found = find_numbers(text)
    assert [(m.text, m.kind, m.value, m.negative) for m in found] == [
        ("(1,234) thousand dollars", "currency", -1_234_000.0, True),
        ("5,678", "number", 5_678.0, False),
    ]
    m = only("Net loss: (1,234)")
    assert (m.text, m.kind, m.value, m.negative) == ("(1,234)", "number", -1_234.0, True)
    assert only("a change of (-1,234)").value == -1_234.0
    assert only("a change of (12.5)").value == -12.5


def test_parentheses_that_are_prose_are_not_negatives():
    # an unclosed "(" is prose; the number keeps its sign and the "(" stays out of the span
    m = only("Revenue rose (up $1.2 million from last year).")
    assert (m.text, m.value, m.negative) == ("$1.2 million", 1_200_000.0, False)
    m = only("Net margin (12.5%) was healthy.")
    assert (m.text, m.value, m.negative) == ("12.5%", 0.125, False)
    m = only("Current ratio (1.85x) improved.")
    assert (m.text, m.value, m.negative) == ("1.85x", 1.85, False)
    # enumeration and footnote markers
    assert find_numbers("(1) liquidity, (2) leverage and (12) others") == []
    # a year in parentheses is a year
    m = only("Revenue (2023) fell.")
    assert (m.text, m.kind, m.start) == ("2023", "year", 9)


# ---------------------------------------------------------------------------------------------
# percentages and ratios
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "value", "decimals", "negative"),
    [
        ("12.5%", 0.125, 1, False),
        ("-3.2%", -0.032, 1, True),
        ("\u22123.2%", -0.032, 1, True),
        ("(3.2)%", -0.032, 1, True),
        ("12.5 percent", 0.125, 1, False),
        ("12.5 per cent", 0.125, 1, False),
        ("12.5 %", 0.125, 1, False),
        ("2.1 percentage points", 0.021, 1, False),
        ("100%", 1.0, 0, False),
        ("0.05%", 0.0005, 2, False),
    ],
)
def test_percent_forms(written, value, decimals, negative):
    sentence = f"Net margin for fiscal 2023 was {written} [4]."
    found = find_numbers(sentence)
    assert [m.kind for m in found] == ["year", "percent"]
    m = found[1]
    assert m.text == written
    assert m.value == pytest.approx(value, rel=1e-15)
    assert (m.decimals_shown, m.negative, m.scale) == (decimals, negative, 1.0)
    assert sentence[m.start : m.end] == written


@pytest.mark.parametrize(
    ("written", "value", "decimals"),
    [
        ("1.85x", 1.85, 2),
        ("1.85X", 1.85, 2),
        ("1.85\u00d7", 1.85, 2),
        ("1.85 \u00d7", 1.85, 2),
        ("0.62 times", 0.62, 2),
        ("10x", 10.0, 0),
        ("-0.5x", -0.5, 1),
    ],
)
def test_ratio_forms(written, value, decimals):
    sentence = f"The current ratio was {written} as of 2023-12-31 [2]."
    m = find_numbers(sentence)[0]
    assert (m.text, m.kind, m.value, m.decimals_shown, m.scale) == (written, "ratio", value, decimals, 1.0)
    assert m.start == len("The current ratio was ")


def test_ratio_suffix_must_end_the_word():
    assert find_numbers("a 2x3 grid") == []
    assert spans("leverage of 0.62x, and 1.85x.") == [("0.62x", "ratio"), ("1.85x", "ratio")]


# ---------------------------------------------------------------------------------------------
# dates and years
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "iso"),
    [
        ("2009-06-30", "2009-06-30"),
        ("June 30, 2009", "2009-06-30"),
        ("June 30 2009", "2009-06-30"),
        ("30 June 2009", "2009-06-30"),
        ("Jun. 30, 2009", "2009-06-30"),
        ("Sept. 30, 2023", "2023-09-30"),
        ("December 31st, 2023", "2023-12-31"),
        ("06/30/2009", "2009-06-30"),
        ("JUNE 30, 2009", "2009-06-30"),
    ],
)
def test_dates_are_one_mention(written, iso):
    sentence = f"Total assets were $2.1 billion as of {written} [3]."
    found = find_numbers(sentence)
    assert [m.kind for m in found] == ["currency", "date"]
    d = found[1]
    assert (d.text, d.iso_date, d.value, d.scale, d.decimals_shown, d.negative) == (
        written,
        iso,
        float(iso.replace("-", "")),
        1.0,
        0,
        False,
    )
    assert sentence[d.start : d.end] == written


def test_invalid_dates_are_not_dates():
    assert spans("as of June 31, 2009") == [("31", "number"), ("2009", "year")]
    assert find_numbers("2009-13-45") == []  # not a date, and a hyphen-joined token


def test_years():
    text = "Revenue for fiscal 2009 rose versus 2008; Q4 2023 and FY2024 are later."
    found = find_numbers(text)
    assert [(m.text, m.kind, m.value) for m in found] == [
        ("2009", "year", 2009.0),
        ("2008", "year", 2008.0),
        ("2023", "year", 2023.0),
    ]
    assert_offsets(text, found)
    # not a year: out of range, grouped, signed, scaled or with a unit
    assert only("a count of 1899").kind == "number"
    assert only("a count of 2101").kind == "number"
    assert only("a count of 2,009").kind == "number"
    assert only("a change of -2009").kind == "number"
    assert only("revenue of $2009").kind == "currency"
    assert only("2009 million").kind == "number"
    # a year range is a hyphen-joined token: left alone
    assert find_numbers("over 2019-2021") == []


def test_month_and_year_without_a_day_is_a_year():
    assert spans("in March 2009") == [("2009", "year")]


# ---------------------------------------------------------------------------------------------
# plain numbers
# ---------------------------------------------------------------------------------------------


def test_plain_numbers():
    m = only("Headcount was 1,234.5 on average.")
    assert (m.text, m.kind, m.value, m.decimals_shown, m.scale, m.negative) == (
        "1,234.5",
        "number",
        1234.5,
        1,
        1.0,
        False,
    )
    m = only("beta of 0.62 versus peers")
    assert (m.text, m.kind, m.value, m.decimals_shown) == ("0.62", "number", 0.62, 2)
    m = only("1,234.50")
    assert (m.value, m.decimals_shown) == (1234.5, 2)
    assert [(m.text, m.value) for m in find_numbers("down to -3 from 4.")] == [("-3", -3.0), ("4", 4.0)]


def test_malformed_groupings_and_dotted_numbers_are_left_alone():
    assert find_numbers("value 1,2345 here") == []
    assert find_numbers("version 13.2.1 of the taxonomy") == []
    assert find_numbers("at 10:30 am") == []


# ---------------------------------------------------------------------------------------------
# what is not a number mention
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Revenue grew [1] [F12] [R3] [12, 13].",
        "Accession 0000950123-09-012345 was filed.",
        "as filed under 0000950123-09-012345",
        "CIK 1318605",
        "CIK: 0001318605",
        "CIK#1318605",
        "cik 1318605",
        "SIC 3711",
        "tagged us-gaap/2023 and us-gaap:Revenues",
        "Q2 results",
        "FY23 and 2Q24",
        "the 1st and 2nd quarters",
        "the 10-Q",
        "the 10-K",
        "a 20-F",
        "an 8-K",
        "a 10-K/A",
        "the 10K and an 8K",
        "Form 4",
        "see Note 3",
        "(see note 3)",
        "Notes 12",
        "Item 7A",
        "Section 13(a)",
        "Exhibit 31.1",
        "Rule 10b-5",
        "a 10-20% range",
        "pages 3-5",
        "`0000950123-09-012345:1318605:Revenues:20231231:4:USD`",
    ],
)
def test_not_number_mentions(text):
    assert find_numbers(text) == []


def test_memo_header_yields_only_dates():
    header = (
        "> 10-K · accession 0000950123-09-012345 · CIK 1318605 · SIC 3711 · period 2023-12-31 · "
        "filed 2024-01-29 · system structured"
    )
    assert [(m.text, m.kind, m.iso_date) for m in find_numbers(header)] == [
        ("2023-12-31", "date", "2023-12-31"),
        ("2024-01-29", "date", "2024-01-29"),
    ]


def test_citation_markers_next_to_numbers():
    text = "Liabilities were $40.1 million[2] and assets $80.2 million [3][F1]."
    assert spans(text) == [("$40.1 million", "currency"), ("$80.2 million", "currency")]


def test_rates_after_notes_are_still_rates():
    assert spans("the senior notes 5.25% due 2030") == [("5.25%", "percent"), ("2030", "year")]


def test_ranges_and_dashes():
    assert spans("rose 5%-6%") == [("5%", "percent"), ("6%", "percent")]
    assert [m.value for m in find_numbers("rose 5%-6%")] == [0.05, 0.06]
    assert spans("revenue\u2014$5 million") == [("$5 million", "currency")]
    m = find_numbers("guidance of $1.2-$1.5 million")
    assert [(x.text, x.negative) for x in m] == [("$1.2", False), ("$1.5 million", False)]


# ---------------------------------------------------------------------------------------------
# whole memos: order, offsets, no overlaps
# ---------------------------------------------------------------------------------------------

MEMO = """# Desk-risk memo: Example Corp

> 10-K · accession 0000950123-24-000123 · CIK 1318605 · SIC 3711 · period 2023-12-31 · filed 2024-01-29

## Facts

- Revenues was $96,773 million for the twelve months ended 2023-12-31 [1].
- Net income (loss) was ($1.2 billion) for the twelve months ended December 31, 2023 [2].
- Current assets were $49,616.2 million as of 2023-12-31 [3]; current liabilities $28,748 million [4].

## Ratios

- Current ratio as of 2023-12-31 was 1.73x [5].
- Leverage was 40.5% and net margin (3.2)% in fiscal 2023 [6][7].
- Operating-cash-flow margin was 13.7 percent, versus 0.62 times a year earlier [8].
"""


def test_memo_mentions_in_order_with_exact_offsets():
    found = find_numbers(MEMO)
    assert_offsets(MEMO, found)
    assert [(m.text, m.kind) for m in found] == [
        ("2023-12-31", "date"),
        ("2024-01-29", "date"),
        ("$96,773 million", "currency"),
        ("2023-12-31", "date"),
        ("($1.2 billion)", "currency"),
        ("December 31, 2023", "date"),
        ("$49,616.2 million", "currency"),
        ("2023-12-31", "date"),
        ("$28,748 million", "currency"),
        ("2023-12-31", "date"),
        ("1.73x", "ratio"),
        ("40.5%", "percent"),
        ("(3.2)%", "percent"),
        ("2023", "year"),
        ("13.7 percent", "percent"),
        ("0.62 times", "ratio"),
    ]
    values = {m.text: m.value for m in found}
    assert values["$96,773 million"] == 96_773_000_000.0
    assert values["($1.2 billion)"] == -1_200_000_000.0
    assert values["$49,616.2 million"] == 49_616_200_000.0
    assert values["(3.2)%"] == pytest.approx(-0.032)


def test_random_text_offsets_never_overlap():
    rng = random.Random(3)
    pieces = [
        "$1.2 million",
        "(1,234)",
        "12.5%",
        "1.85x",
        "June 30, 2009",
        "2009-06-30",
        "[3]",
        "CIK 1318605",
        "10-K",
        "fiscal 2009",
        "Q2",
        "-$4",
        "$(5)",
        "0.62 times",
        "a",
        "and",
        "(",
        ")",
        ",",
        "-",
        "7k",
        "$5 b",
    ]
    for _ in range(300):
        text = " ".join(rng.choice(pieces) for _ in range(rng.randint(1, 15)))
        assert_offsets(text, find_numbers(text))


# ---------------------------------------------------------------------------------------------
# rounding tolerance
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "tolerance"),
    [
        ("$1,234.5 million", 0.05e6),
        ("$1,234 million", 0.5e6),
        ("$1,234", 0.5),
        ("$1,234.56", 0.005),
        ("$3.4 bn", 0.05e9),
        ("$7k", 500.0),
        ("12.5%", 0.0005),
        ("12%", 0.005),
        ("(3.20)%", 0.00005),
        ("1.23x", 0.005),
        ("2x", 0.5),
        ("0.62 times", 0.005),
        ("1,234.5", 0.05),
        ("1.5 million", 0.05e6),
        ("2009-06-30", 0.0),
        ("fiscal 2009", 0.0),
    ],
)
def test_rounding_tolerance(written, tolerance):
    assert rounding_tolerance(only(written)) == pytest.approx(tolerance, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# formatting
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "tolerance", "expected"),
    [
        (1_234_567_000, 123_456.7, "$1,234.6 million"),
        (1_234_567_000, 1.0, "$1,234.567 million"),
        (96_773_000_000, 9_677_300.0, "$96,773 million"),
        (1_200_000, 120.0, "$1.2 million"),
        (1_000_000, 1.0, "$1 million"),
        (-12_300_000, 1_230.0, "-$12.3 million"),
        (1_234_567.89, 0.5, "$1.234568 million"),
        (1_234_567.89, 0.01, "$1,234,567.89"),
        (999_999.4, 1.0, "$999,999"),
        (1_234.5, 1.0, "$1,234"),
        (1_234.5, 0.01, "$1,234.50"),
        (-1_234, 1.0, "-$1,234"),
        (-0.4, 1.0, "$0"),
        (0.0, 1.0, "$0"),
    ],
)
def test_format_usd(value, tolerance, expected):
    assert format_usd(value, tolerance) == expected


def test_format_usd_never_uses_billions_and_picks_fewest_decimals():
    assert format_usd(5_000_000_000, 1.0) == "$5,000 million"
    assert format_usd(123_456_789, 5_000.0) == "$123.46 million"  # 3,211 off; $123.5 million is 43,211 off
    assert format_usd(123_456_789, 3_000.0) == "$123.457 million"  # 211 off
    assert format_usd(123_456_789, 0.5) == "$123.456789 million"
    assert format_usd(123_456_789.4, 0.3) == "$123,456,789.40"


def test_format_ratio_and_percent():
    assert format_ratio(1.8523) == "1.85x"
    assert format_ratio(1.855, 1) == "1.9x"
    assert format_ratio(-0.5, 1) == "-0.5x"
    assert format_ratio(-0.001) == "0.00x"
    assert format_ratio(1234.5) == "1,234.50x"
    assert format_ratio(2.0, 0) == "2x"
    assert format_percent(0.1234) == "12.3%"
    assert format_percent(-0.032, 2) == "-3.20%"
    assert format_percent(0.5, 0) == "50%"
    assert format_percent(-0.00001) == "0.0%"
    assert format_percent(12.345, 1) == "1,234.5%"


def test_formatters_reject_non_finite():
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError):
            format_usd(bad, 1.0)
        with pytest.raises(ValueError):
            format_ratio(bad)
        with pytest.raises(ValueError):
            format_percent(bad)


# ---------------------------------------------------------------------------------------------
# round trips: format, then parse back within the tolerance
# ---------------------------------------------------------------------------------------------


def _random_amount(rng: random.Random) -> float:
    magnitude = 10 ** rng.uniform(-1, 13)
    value = rng.choice([magnitude, round(magnitude), round(magnitude, 2)])
    return -value if rng.random() < 0.3 else value


def test_round_trip_usd_with_the_seed_tolerance():
    rng = random.Random(2023)
    for _ in range(3000):
        v = _random_amount(rng)
        tol = max(1.0, 1e-4 * abs(v))
        s = format_usd(v, tol)
        m = parse_number(s)
        assert m is not None and m.kind == "currency", s
        assert abs(m.value - v) <= tol, (v, tol, s, m.value)
        assert m.negative == s.startswith("-")


def test_round_trip_usd_with_random_tolerances():
    rng = random.Random(7)
    for _ in range(3000):
        v = _random_amount(rng)
        tol = 10 ** rng.uniform(-2.3, 8)  # from under a cent up to $100 million
        s = format_usd(v, tol)
        m = parse_number(s)
        assert m is not None and m.kind == "currency", s
        assert abs(m.value - v) <= tol, (v, tol, s, m.value)
        # and inside a sentence, with a citation marker after it
        sentence = f"Revenues were {s} for the twelve months ended 2023-12-31 [1]."
        first = find_numbers(sentence)[0]
        assert first.text == s and first.value == m.value


def test_round_trip_usd_is_coarsest():
    rng = random.Random(11)
    for _ in range(500):
        v = abs(_random_amount(rng)) + 1e6
        tol = max(1.0, 1e-4 * v)
        s = format_usd(v, tol)
        decimals = only(s).decimals_shown
        if decimals > 0:  # one decimal fewer would have broken the tolerance
            coarser = round(v / 1e6, decimals - 1) * 1e6
            assert abs(coarser - v) > tol * (1 - 1e-9), (v, s)


def test_round_trip_ratio():
    rng = random.Random(5)
    for _ in range(3000):
        v = rng.uniform(-5, 50) if rng.random() < 0.9 else rng.uniform(-5000, 5000)
        digits = rng.randint(0, 4)
        s = format_ratio(v, digits)
        m = parse_number(s)
        assert m is not None and m.kind == "ratio", s
        assert m.decimals_shown == digits
        assert abs(m.value - v) <= 0.5 * 10**-digits + 1e-9, (v, s)
        assert abs(m.value - v) <= rounding_tolerance(m) + 1e-9


def test_round_trip_percent():
    rng = random.Random(6)
    for _ in range(3000):
        v = rng.uniform(-2, 2) if rng.random() < 0.9 else rng.uniform(-200, 200)
        digits = rng.randint(0, 4)
        s = format_percent(v, digits)
        m = parse_number(s)
        assert m is not None and m.kind == "percent", s
        assert m.decimals_shown == digits
        assert abs(m.value - v) <= 0.5 * 10**-digits / 100 + 1e-12, (v, s)
        assert abs(m.value - v) <= rounding_tolerance(m) + 1e-12


# ---------------------------------------------------------------------------------------------
# replace_span and parse_number
# ---------------------------------------------------------------------------------------------


def test_replace_span_repairs_in_place():
    text = "Revenue was $1.3 million [1], net margin (3.2)% [2] and current ratio 1.90x [3]."
    found = find_numbers(text)
    assert [m.text for m in found] == ["$1.3 million", "(3.2)%", "1.90x"]
    new = {
        "$1.3 million": format_usd(1_234_000, 123.4),
        "(3.2)%": format_percent(-0.0345),
        "1.90x": format_ratio(1.8523),
    }
    for m in sorted(found, key=lambda m: m.start, reverse=True):
        text = replace_span(text, m, new[m.text])
    assert text == "Revenue was $1.234 million [1], net margin -3.5% [2] and current ratio 1.85x [3]."
    assert [m.value for m in find_numbers(text)] == [1_234_000.0, pytest.approx(-0.035), 1.85]


def test_replace_span_rejects_a_stale_mention():
    m = only("Revenue was $1.3 million.")
    with pytest.raises(ValueError):
        replace_span("Revenue is $1.3 million.", m, "$1.2 million")
    with pytest.raises(ValueError):
        replace_span("short", m, "x")


def test_parse_number():
    assert parse_number("  $3.4 bn ").value == 3_400_000_000.0
    assert parse_number("$3.4 bn and $2") is None
    assert parse_number("no numbers") is None
    assert parse_number("[3]") is None


def test_mentions_are_frozen():
    m = only("$1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.value = 2.0  # type: ignore[misc]


def test_docstring_examples():
    result = doctest.testmod(numbers)
    assert result.attempted > 10
    assert result.failed == 0


def test_formatters_handle_huge_and_tiny_values():
    for v in (1e25, -3.3e40, 5e-324):
        tol = max(1.0, 1e-4 * abs(v))
        assert abs(parse_number(format_usd(v, tol)).value - v) <= tol
        assert abs(parse_number(format_ratio(v)).value - v) <= max(0.005, 1e-12 * abs(v))
