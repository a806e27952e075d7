"""Entity names: normalization, deterministic entity ids and the guards that keep distinct
financial entities apart when their names are alike.

The extraction code makes every entity id with :func:`entity_id`, so an entity's identity is
``(type, normalized name)``. Seed 004 (section 3.1) defines the seven entity types; they are stored
as the codes in :data:`ENTITY_TYPES`.
"""

from __future__ import annotations

import re
import unicodedata

#: Seed 004's entity types (section 3.1, Table 1), as stored in ``(:Entity {type})``: financial
#: indicator, change of an indicator, comparison between indicators, composition of two indicators,
#: comparison of an indicator with a threshold, market status, macro-economic control policy.
ENTITY_TYPES = (
    "indicator",
    "indicator_change",
    "indicator_comparison",
    "indicator_composition",
    "threshold_comparison",
    "market_status",
    "policy",
)

_APOSTROPHES = re.compile(r"['’‘`´]")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_LONE_DOT = re.compile(r"(?<!\d)\.|\.(?!\d)")
# A token: a signed number (the minus only at a word start: "-3%", not "covid-19"), a decimal,
# a run of letters/digits (any script, so Chinese names survive), each with an optional "%".
_TOKEN = re.compile(r"(?<![^\s(\[])-\d+(?:\.\d+)?%?|\d+(?:\.\d+)+%?|[^\W_]+%?|%")
_NUMBER = re.compile(r"\d")


def normalize_name(name: str) -> str:
    """The normalized key of an entity name: the same key means the same entity (within a type).

    Steps: Unicode NFKC (full-width forms to ASCII), case folding, ``&`` to ``and``, apostrophes
    dropped (``stockholders' equity``), thousands separators dropped (``1,000`` -> ``1000``), dots
    dropped unless between digits (``U.S.`` -> ``us``, ``3.5%`` kept), every other punctuation or
    space run becomes one space. A minus sign is kept when it starts a number (``-3%`` is not
    ``3%``); ``%`` stays attached to its number.

    Examples: ``"Net Income (Loss)"`` -> ``"net income loss"``; ``"WAL-MART STORES, INC."`` ->
    ``"wal mart stores inc"``; ``"CPI above -0.5%"`` -> ``"cpi above -0.5%"``.

    Returns:
        The key; ``""`` when the name holds no letter, digit or ``%``.
    """
    s = unicodedata.normalize("NFKC", str(name)).casefold()
    s = s.replace("&", " and ")
    s = _APOSTROPHES.sub("", s)
    s = _THOUSANDS.sub("", s)
    s = _LONE_DOT.sub("", s)
    return " ".join(_TOKEN.findall(s))


def entity_id(entity_type: str, name: str) -> str:
    """The deterministic id of an entity: ``f"{type}:{normalize_name(name)}"``.

    Raises:
        ValueError: ``entity_type`` is not one of :data:`ENTITY_TYPES`, or the name normalizes
            to an empty key; the message quotes both.
    """
    if entity_type not in ENTITY_TYPES:
        raise ValueError(f"entity type {entity_type!r} is not one of {', '.join(ENTITY_TYPES)}")
    key = normalize_name(name)
    if not key:
        raise ValueError(f"entity name {name!r} ({entity_type}) has no letters or digits")
    return f"{entity_type}:{key}"


def split_id(eid: str) -> tuple[str, str]:
    """``(type, key)`` of an entity id made by :func:`entity_id`.

    Raises:
        ValueError: the id has no ``type:`` prefix of a known type.
    """
    typ, sep, key = eid.partition(":")
    if not sep or typ not in ENTITY_TYPES:
        raise ValueError(f"{eid!r} is not an entity id (expected '<type>:<key>', type one of {ENTITY_TYPES})")
    return typ, key


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def split_camel_case(tag: str) -> str:
    """XBRL element names to words: ``"NetIncomeLoss"`` -> ``"Net Income Loss"``,
    ``"EBITDAMargin"`` -> ``"EBITDA Margin"``."""
    return _CAMEL.sub(" ", tag)


_LEGAL_FORMS = {
    "inc",
    "incorporated",
    "corp",
    "corporation",
    "co",
    "company",
    "ltd",
    "limited",
    "plc",
    "llc",
    "lp",
    "llp",
    "sa",
    "ag",
    "nv",
    "the",
}
_STATE_SUFFIX = re.compile(r"\s*/[a-z]{2,3}/?\s*$", re.IGNORECASE)


def company_key(name: str) -> str:
    """A company name's key for identifier resolution: :func:`normalize_name` without the SEC
    state suffix (``APPLE INC /CA/``) and without leading "the" and trailing legal forms (inc,
    corp, co, ltd, plc, llc ...): ``"WAL MART STORES INC"`` and ``"Wal-Mart Stores"`` share
    ``"wal mart stores"``. Empty when nothing else is left."""
    tokens = normalize_name(_STATE_SUFFIX.sub("", str(name))).split()
    while tokens and tokens[0] == "the":
        tokens.pop(0)
    while tokens and tokens[-1] in _LEGAL_FORMS:
        tokens.pop()
    return " ".join(tokens)


# Direction words: two names that say opposite directions are different entities however alike
# they read ("revenue increase" / "revenue decrease" score 88 in token-sort ratio, and close in
# sentence embeddings).
_UP = {
    "increase",
    "increased",
    "increases",
    "increasing",
    "rise",
    "rises",
    "rising",
    "rose",
    "growth",
    "grow",
    "grows",
    "grew",
    "up",
    "higher",
    "high",
    "gain",
    "gains",
    "above",
    "exceed",
    "exceeds",
    "surplus",
    "expansion",
    "expand",
    "easing",
    "loosening",
    "raise",
    "raised",
    "hike",
    "hikes",
    "profit",
    "income",
    "inflow",
    "inflows",
    "appreciation",
    "upgrade",
    "positive",
    "bull",
    "bullish",
}
_DOWN = {
    "decrease",
    "decreased",
    "decreases",
    "decreasing",
    "fall",
    "falls",
    "falling",
    "fell",
    "decline",
    "declines",
    "declined",
    "drop",
    "drops",
    "dropped",
    "down",
    "lower",
    "low",
    "loss",
    "losses",
    "below",
    "deficit",
    "cut",
    "cuts",
    "contraction",
    "contract",
    "tightening",
    "tighten",
    "expense",
    "outflow",
    "outflows",
    "depreciation",
    "downgrade",
    "negative",
    "bear",
    "bearish",
    "shrink",
}


def name_guard(key: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """What two keys must share before a fuzzy or embedding merge: their numbers (as a sorted
    multiset: "CPI above 3%" never merges with "CPI above 5%", nor 2008 with 2009) and their
    direction words (up / down / both / none, see the module source), so "revenue increase" never
    merges with "revenue decrease".

    Args:
        key: a normalized name (:func:`normalize_name`).

    Returns:
        ``(numbers, directions)``; equal guards are required for a merge.
    """
    tokens = key.split()
    numbers = tuple(sorted(t for t in tokens if _NUMBER.search(t)))
    words = set(tokens) | {t[:-1] for t in tokens if t.endswith("s")}  # plurals: "incomes", "cuts"
    directions = frozenset(({"up"} if words & _UP else set()) | ({"down"} if words & _DOWN else set()))
    return numbers, directions
