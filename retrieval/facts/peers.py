"""Peer groups a question names: a company's SIC peers ("Chevron's peers") or an industry ("oil companies", "banks").

Issue 44 ("Several companies and periods in one question": rankings among named companies or SIC peers). Two ways a
question names a group of companies without naming each:

1. **A company's peers** ("How does Amgen's gross margin compare with its peers?", "Rank Chevron's competitors by
   ROE", "companies in Wyeth's industry"): the graph's companies with the named company's four-digit SIC code (FSDS
   ``sub.txt`` ``sic``, the code EDGAR assigns). Where that code holds fewer than :data:`MIN_GROUP` companies in the
   graph, the group widens to the company's Fama-French 48 industry, and the answer says so.
2. **An industry** ("Which oil company had the highest ROE?", "Rank the banks by net margin", "among drugmakers"):
   the words are read against :data:`INDUSTRY_TERMS`, each term naming either a Fama-French 48 industry (Kenneth
   French's Data Library, ``det_48_ind_port``: SIC ranges per industry) or one four-digit SIC code where the
   users' word is narrower than any Fama-French industry (software: 7372, semiconductors: 3674, airlines: 4512,
   REITs: 6798). An industry word counts only as a group ("oil companies", "oil and gas producers", or a plural
   that is itself a group: "banks", "insurers", "utilities", "REITs").

The SIC ranges of the 48 industries are edgartools' table (``edgar/xbrl/standardization/sic_industry.py``, from the
same data library), read from the installed package's file without importing the package (whose import takes
seconds); the industries' names are the library's. The terms users say are finkg's own vocabulary, each mapped to
one industry or code.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

MIN_GROUP = 3
"""A company's SIC code with fewer companies than this in the graph (the company included) widens to its Fama-French
48 industry."""

FF48_NAMES: dict[str, str] = {
    "Agric": "Agriculture", "Food": "Food Products", "Soda": "Candy & Soda", "Beer": "Beer & Liquor",
    "Smoke": "Tobacco Products", "Toys": "Recreation", "Fun": "Entertainment", "Books": "Printing and Publishing",
    "Hshld": "Consumer Goods", "Clths": "Apparel", "Hlth": "Healthcare", "MedEq": "Medical Equipment",
    "Drugs": "Pharmaceutical Products", "Chems": "Chemicals", "Rubbr": "Rubber and Plastic Products",
    "Txtls": "Textiles", "BldMt": "Construction Materials", "Cnstr": "Construction", "Steel": "Steel Works Etc",
    "FabPr": "Fabricated Products", "Mach": "Machinery", "ElcEq": "Electrical Equipment",
    "Autos": "Automobiles and Trucks", "Aero": "Aircraft", "Ships": "Shipbuilding, Railroad Equipment",
    "Guns": "Defense", "Gold": "Precious Metals", "Mines": "Non-Metallic and Industrial Metal Mining", "Coal": "Coal",
    "Oil": "Petroleum and Natural Gas", "Util": "Utilities", "Telcm": "Communication", "PerSv": "Personal Services",
    "BusSv": "Business Services", "Comps": "Computers", "Chips": "Electronic Equipment",
    "LabEq": "Measuring and Control Equipment", "Paper": "Business Supplies", "Boxes": "Shipping Containers",
    "Trans": "Transportation", "Whlsl": "Wholesale", "Rtail": "Retail", "Meals": "Restaurants, Hotels, Motels",
    "Banks": "Banking", "Insur": "Insurance", "RlEst": "Real Estate", "Fin": "Trading", "Other": "Almost Nothing",
}  # fmt: skip
"""The Fama-French 48 industries by their codes (Kenneth French's Data Library, ``det_48_ind_port``)."""

INDUSTRY_TERMS: tuple[tuple[str, str | int], ...] = (
    # narrower than a Fama-French industry: one SIC code (the SEC's SIC code list)
    (r"software", 7372),  # Services-Prepackaged Software
    (r"semiconductors?|chip ?makers?|chip", 3674),  # Semiconductors & Related Devices
    (r"airlines?|air carriers?", 4512),  # Air Transportation, Scheduled
    (r"railroads?|railways?", 4011),  # Railroads, Line-Haul Operating
    (r"reits?|real estate investment trusts?", 6798),  # Real Estate Investment Trusts
    (r"biotech|biotechnology", 2836),  # Biological Products (No Diagnostic Substances)
    (r"refiners?|refining", 2911),  # Petroleum Refining
    (r"e&p|exploration and production", 1311),  # Crude Petroleum & Natural Gas
    # Fama-French 48 industries
    (r"oil(?: and gas| & gas)?|petroleum|oil ?(?:and|&) ?gas", "Oil"),
    (r"pharma|pharmaceuticals?|drug ?makers?|drug", "Drugs"),
    (r"banks?|banking|lenders?", "Banks"),
    (r"insurers?|insurance", "Insur"),
    (r"utilit(?:y|ies)|electric utilit(?:y|ies)|power", "Util"),
    (r"retailers?|retail|retail chains?", "Rtail"),
    (r"restaurants?|restaurant chains?|hotels?", "Meals"),
    (r"aerospace|aircraft ?makers?|aircraft", "Aero"),
    (r"defen[cs]e(?: contractors?)?", "Guns"),
    (r"auto ?makers?|car ?makers?|auto(?:mobile)?", "Autos"),
    (r"telecoms?|telecommunications?|telcos?", "Telcm"),
    (r"tobacco", "Smoke"),
    (r"brewers?|spirits|liquor", "Beer"),
    (r"food(?: and beverage)?|packaged food", "Food"),
    (r"chemicals?|chemical ?makers?", "Chems"),
    (r"steel ?makers?|steel", "Steel"),
    (r"machinery", "Mach"),
    (r"medical devices?|medical equipment|medical device ?makers?|medtech", "MedEq"),
    (r"health ?care|hospitals?", "Hlth"),
    (r"gold miners?|gold|precious metals?", "Gold"),
    (r"coal(?: miners?)?", "Coal"),
    (r"computer ?makers?|computers?|hardware", "Comps"),
    (r"truckers?|trucking|shipping|transportation|transport", "Trans"),
    (r"wholesalers?|distributors?", "Whlsl"),
    (r"real estate", "RlEst"),
    (r"brokers?|broker-dealers?|asset managers?|investment banks?", "Fin"),
    (r"apparel|clothing", "Clths"),
    (r"homebuilders?|home ?builders?|construction", "Cnstr"),
)
"""Users' words for an industry -> a Fama-French 48 code (``"Oil"``) or one SIC code (``7372``), longest first within
a line; read only as a group (see :data:`_GROUP_NOUN`)."""

_GROUP_NOUN = (
    r"(?:companies|company|firms?|stocks?|names|makers|producers|groups?|players|sector|industry|peers|issuers)"
)
_PLURAL_GROUP = re.compile(
    r"^(?:banks|lenders|insurers|utilities|retailers|restaurants|hotels|airlines|air carriers|railroads|railways|reits"
    r"|real estate investment trusts|refiners|drug ?makers|chip ?makers|auto ?makers|car ?makers|telcos|telecoms"
    r"|brewers|steel ?makers|truckers|wholesalers|distributors|brokers|broker-dealers|asset managers"
    r"|investment banks|homebuilders|home ?builders|gold miners|coal miners|semiconductors|computer ?makers"
    r"|aircraft ?makers|chemical ?makers|medical device ?makers|defen[cs]e contractors)$"
)
"""Industry words that name a group by themselves ("Rank the banks"), without "companies" after them."""

_PEERS = re.compile(
    r"\b(?:peers?|peer group|competitors?|rivals?|(?:same|its|their|the|\w+['’]s?) (?:industry|sector|sic(?: code)?))\b",
    re.I,
)
"""Words that ask for a named company's peers ("its peers", "Amgen's competitors", "companies in Wyeth's industry",
"the industry average")."""


_AMONG = re.compile(
    r"\b(?:other|others|peers?|compare[sd]?|comparison|versus|vs|against|among|amongst|rank\w*|which|relative to|"
    r"stacks? up|stacked up|median|average|mean|industry|sector|top)\b",
    re.I,
)
"""Words that put a named company among an industry ("How does Chevron compare with other oil companies?"); in a
question that names a group they are the operation's words, not the measure's."""


@dataclass(frozen=True)
class PeerGroup:
    """A group of companies a question names by their industry.

    Attributes:
        ciks: the group's companies in the graph (CIK), the anchor first when there is one.
        anchor: the company whose peers were asked (CIK), None for an industry ("oil companies").
        description: what the group is, for the answer ("SIC 2836 peers of AMGEN INC", "Fama-French industry
            Petroleum and Natural Gas (SIC 1300-1399, 2900-2912, 2990-2999)").
        words: the question's words that named the group ("its peers", "oil companies"); not measure words.
        widened: the anchor's SIC code held fewer than :data:`MIN_GROUP` companies, so its industry was used.
    """

    ciks: tuple[int, ...]
    anchor: int | None
    description: str
    words: str
    widened: bool = False


@cache
def ff48_ranges() -> tuple[tuple[int, int, str], ...]:
    """The Fama-French 48 industries' SIC ranges, ``(first SIC, last SIC, code)``, from the installed edgartools'
    ``edgar/xbrl/standardization/sic_industry.py`` (read by path: importing ``edgar`` takes seconds).

    Raises:
        RuntimeError: edgartools is not installed, or its file no longer has ``_FF48_SIC_RANGES``.
    """
    spec = importlib.util.find_spec("edgar")
    roots = list(spec.submodule_search_locations or []) if spec is not None else []
    path = next((Path(r) / "xbrl" / "standardization" / "sic_industry.py" for r in roots), None)
    if path is None or not path.exists():
        raise RuntimeError("edgartools is not installed: the Fama-French industry table (sic_industry.py) is missing")
    mod_spec = importlib.util.spec_from_file_location("finkg_edgartools_sic_industry", path)
    assert mod_spec is not None and mod_spec.loader is not None
    module = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(module)
    ranges = getattr(module, "_FF48_SIC_RANGES", None)
    if not ranges:
        raise RuntimeError(f"{path} has no _FF48_SIC_RANGES table: edgartools changed it")
    return tuple((int(a), int(b), str(c)) for a, b, c in ranges)


@cache
def ff48_of(sic: int | None) -> str | None:
    """The Fama-French 48 industry code of a four-digit SIC code (``2834`` -> ``"Drugs"``), None when unclassified."""
    if sic is None:
        return None
    return next((code for a, b, code in ff48_ranges() if a <= sic <= b), None)


def _ff48_span(code: str) -> str:
    """The SIC ranges of industry ``code`` as text (``2830-2836``)."""
    return ", ".join(f"{a}-{b}" if a != b else str(a) for a, b, c in ff48_ranges() if c == code)


def peer_words(question: str) -> list[str]:
    """The words of a question that place companies among a group (:data:`_AMONG`: "other", "stack up", "among")."""
    return [m.group() for m in _AMONG.finditer(question)]


def industry_named(question: str) -> tuple[str | int, str] | None:
    """The industry a question names as a group (``("Oil", "oil companies")``, ``(6798, "REITs")``; "which bank"),
    else None."""
    text = question.lower().replace("’", "'")
    for pattern, target in INDUSTRY_TERMS:
        for m in re.finditer(rf"\b(?:{pattern})\b(?:\s+{_GROUP_NOUN}\b)?", text):
            words = m.group()
            grouped = re.search(rf"\s{_GROUP_NOUN}$", words) is not None
            which = re.search(r"\b(?:which|what)\s+$", text[: m.start()]) is not None  # "which bank", "what insurer"
            if grouped or which or _PLURAL_GROUP.match(words):
                return target, question[m.start() : m.end()]
    return None


def find_peer_group(
    question: str,
    named: list[tuple[int, str]],
    sic: Mapping[int, int | None],
    names: Mapping[int, str],
    said: Sequence[str] = (),
) -> PeerGroup | None:
    """The group of companies a question names by industry (see the module doc), or None.

    Args:
        question: the question. named: the companies it names (``(cik, EDGAR name)``, in order); one of them is
            the anchor of "its peers". sic: CIK -> SIC code of every graph company. names: CIK -> EDGAR name.
        said: the words that named the companies ("Southwest Airlines", "Host Hotels & Resorts"): an industry
            word inside a company's name is the name, not a group.

    Returns:
        :class:`PeerGroup`, or None when the question names no group, or names peers of no single company.

    Raises:
        RuntimeError: edgartools' industry table is missing (:func:`ff48_ranges`).
    """
    if len(named) >= 2:
        return None  # named companies are the group ("Chevron, Exxon and BP")
    blanked = question
    for words in sorted(said, key=len, reverse=True):
        blanked = re.sub(rf"(?<![A-Za-z]){re.escape(words)}(?![A-Za-z])", " ", blanked, flags=re.I)
    industry = industry_named(blanked)
    anchor = named[0][0] if named else None
    if industry is not None and anchor is not None and not _AMONG.search(question):
        industry = None  # "Wells Fargo's loans to banks": a named company's figure, not a group
    if industry is not None:
        target, words = industry
        if isinstance(target, int):
            ciks = [c for c, s in sic.items() if s == target]
            what = f"SIC {target} companies"
        else:
            ciks = [c for c, s in sic.items() if ff48_of(s) == target]
            what = f"Fama-French industry {FF48_NAMES[target]} (SIC {_ff48_span(target)})"
        if anchor is not None and anchor not in ciks:
            return None  # "Chevron and the banks": not one group
        return PeerGroup(_ordered(ciks, anchor, names), anchor, what, words)
    peers = _PEERS.search(question)
    if peers is None or anchor is None or sic.get(anchor) is None:
        return None
    code = sic[anchor]
    ciks = [c for c, s in sic.items() if s == code]
    what = f"SIC {code} peers of {names.get(anchor, anchor)}"
    widened = False
    if len(ciks) < MIN_GROUP and ff48_of(code) is not None:
        ff = ff48_of(code)
        assert ff is not None
        ciks = [c for c, s in sic.items() if ff48_of(s) == ff]
        what = (
            f"Fama-French industry {FF48_NAMES[ff]} (SIC {_ff48_span(ff)}) of {names.get(anchor, anchor)}: SIC {code} "
            f"holds fewer than {MIN_GROUP} companies in the graph"
        )
        widened = True
    return PeerGroup(_ordered(ciks, anchor, names), anchor, what, peers.group(), widened)


def _ordered(ciks: list[int], anchor: int | None, names: Mapping[int, str]) -> tuple[int, ...]:
    rest = sorted((c for c in set(ciks) if c != anchor), key=lambda c: (names.get(c, ""), c))
    return (anchor, *rest) if anchor is not None else tuple(rest)
