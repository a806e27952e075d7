"""Companies as people name them: resolved against the graph's companies, the SEC ticker table and fuzzy matching.

Issue 44 ("Companies"). A question says "Abbott", "J&J", "Johnson and Johnson's", "PFE" or "Colgate", the graph
holds ``ABBOTT LABORATORIES``, ``JOHNSON & JOHNSON``, ``PFIZER INC``, ``COLGATE PALMOLIVE CO``. The index
(:class:`CompanyIndex`) gives every graph company its aliases:

1. its EDGAR name without the legal suffix, state tag and punctuation (``johnson & johnson``), with ``&`` and
   ``and`` both ways;
2. that name without a generic last word (``abbott laboratories`` -> ``abbott``; :data:`GENERIC_TAIL`), and its
   first word when that word is distinctive (at least 4 letters, not a common word, the first word of no other
   company in the graph);
3. the initials of an ``X & Y`` name (``j&j``, ``p&g``); a name's own initials as people write them: run together
   or apart, before the surname where EDGAR puts them after it (``J P MORGAN CHASE``: "JP Morgan", "J.P. Morgan";
   ``HEINZ H J``: "HJ Heinz"; ``RR DONNELLEY``: "R.R. Donnelley"; ``US BANCORP``: "U.S. Bancorp");
4. its tickers in the SEC's ticker table (``data/company_tickers.csv``, see ``data/NOTICE.md``), matched as an
   upper-case word of the question (never a finance abbreviation such as ``ROE`` or ``EPS``: :data:`NOT_TICKERS`);
   and the tickers the graph's own data gives (:func:`instance_ticker`: the prefix of a filing's XBRL instance
   file, ``goog-20090630.xml``, which the table no longer lists for a company that changed its CIK or was
   delisted; the ticker ``finkg fetch`` stored); a ticker the table gives to one of the graph's companies and the
   data to another (``MRK`` in 2009: Merck & Co's filings; today's table: the CIK that was Schering-Plough) is
   asked back;
5. its former names as its filings state them (FSDS ``sub.txt`` ``former``), by rules 1-3, where no company's
   present name gives the same alias (``HOST MARRIOTT`` is Host Hotels' former name; "Marriott" stays Marriott
   International's).

6. companies the graph does not hold, from the same ticker table: a name the table gives another company is never
   read as a graph company. Its whole name ("Dana": DANA INC; "EON Resources"; "Teledyne Technologies") is
   reported as not in the graph, never matched by a short form, a fuzzy match, a former name or the words of a
   longer name ("Marathon Petroleum" is not MARATHON OIL); its ticker likewise ("MARA"); a graph company's short
   name or initials that are its whole name or ticker ("Cabot": CABOT CORP, "CTS": CTS CORP) are asked back with
   both; a name's last word, or its first two, is its short name only when no other company's name in the table
   ends, or begins, with it ("disney", not "mining" of NEWMONT MINING or "united states" of UNITED STATES STEEL).

An alias two companies share is not used for either (a short name never picks one of two companies silently).
A capitalised word that matches no alias may be a short form (:meth:`CompanyIndex.short_form`): the head of a
compound first word (``Conoco``: ``CONOCOPHILLIPS``) or, written in camel case, the heads of a name's first words
(``LabCorp``: ``LABORATORY CORP OF AMERICA``; ``AmEx``: ``AMERICAN EXPRESS``); one company only, else asked back.
A word of four letters is a short form inside the question only, never as its capitalised first word ("Citi's net
income", "Free cash flow at Dover"). An upper-case word that is no ticker but the initials of companies' names
("TI": TEXAS INSTRUMENTS, TYCO INTERNATIONAL) is asked back with them, never read as one of them.
Other words of the question that look like a name (capitalised) but match no alias are matched fuzzily (rapidfuzz
``ratio``, a normalized edit distance, against the aliases, at least :data:`FUZZY_MIN`; a word of three letters or
fewer is no typo: the alias holds it as written, "KE Holdings" is not "HE HOLDINGS"; a typo keeps each word's first
letter: "Public Service" is not "REPUBLIC SERVICES"); when the best two candidates of different companies
are within :data:`FUZZY_MARGIN` points, the question is ambiguous and the caller asks back with both.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from rapidfuzz import fuzz, process

DATA = Path(__file__).resolve().parent / "data"

_SUFFIX = re.compile(
    r"\b(?:inc|incorporated|corp|corporation|co|company|ltd|limited|plc|lp|llc|l p|n v|nv|s a|sa|ag|the|de|"
    r"holdings?|group)\b"
)
GENERIC_TAIL = frozenset(
    {
        "laboratories", "labs", "pharmaceuticals", "pharmaceutical", "industries", "international", "technologies",
        "technology", "systems", "enterprises", "companies", "brands", "bancorp", "bancorporation", "financial",
        "resources", "energy", "entertainment", "communications", "stores", "foods", "products", "worldwide",
        "partners", "trust", "motors", "airlines", "petroleum", "oil", "electric", "semiconductor", "software",
        "networks", "services", "solutions", "therapeutics", "biosciences", "medical", "healthcare",
    }
)  # fmt: skip
"""Last words a name is often said without (``Abbott Laboratories`` -> ``Abbott``)."""

COMMON_WORDS = frozenset(
    {
        "american", "first", "general", "united", "national", "international", "new", "bank", "energy", "global",
        "capital", "financial", "home", "great", "southern", "northern", "western", "eastern", "pacific", "atlantic",
        "central", "standard", "royal", "public", "service", "services", "community", "federal", "security",
        "world", "china", "north", "south", "west", "east", "city", "state", "what", "which", "revenue",
        "sales", "income", "cash", "total", "quarter", "year", "fiscal", "debt", "equity", "margin", "ratio",
        "growth", "profit", "assets", "value", "health", "life", "data", "power", "gold", "star", "sun", "park",
        "industrial", "investors", "realty", "real", "apple", "mobile", "digital", "advanced", "applied", "allied",
        "universal", "continental", "premier", "dynamic", "integrated", "innovative", "alliance", "heritage",
        "pioneer", "liberty", "republic", "peoples", "citizens", "merchants", "farmers", "mutual", "diversified",
        # places, which many companies' names begin with ("Texas": Texas Instruments, Texas Roadhouse, Texas Capital)
        "america", "europe", "asia", "africa", "canada", "canadian", "mexico", "japan", "india", "texas",
        "california", "florida", "ohio", "virginia", "carolina", "georgia", "washington", "jersey", "york", "england",
        "michigan", "illinois", "pennsylvania", "massachusetts", "arizona", "colorado", "oregon", "nevada", "utah",
        "kansas", "missouri", "alabama", "louisiana", "kentucky", "tennessee", "indiana", "wisconsin", "minnesota",
        "iowa", "oklahoma", "arkansas", "mississippi", "connecticut", "maryland", "hawaii", "alaska", "idaho",
        "montana", "wyoming", "dakota", "nebraska", "maine", "vermont", "hampshire", "delaware", "puerto", "boston",
        "chicago", "dallas", "houston", "atlanta", "denver", "phoenix", "seattle", "miami", "detroit",
    }
)  # fmt: skip
"""Words that are never a company's short name on their own (generic words and places)."""

NOT_TICKERS = frozenset(
    {
        "ROE", "ROA", "EPS", "USD", "EBIT", "EBITDA", "FCF", "OCF", "DSO", "TTM", "LTM", "YOY", "QOQ", "SGA", "CEO", "CFO",
        "SEC", "GAAP", "FY", "Q", "A", "I", "IT", "ON", "OR", "AND", "THE", "FOR", "BY", "TO", "IN", "OF", "AT",
        "ALL", "ARE", "ANY", "CAN", "HAS", "NOW", "ONE", "WAS", "YTD", "CAPEX", "ETR", "D", "R", "US", "U", "S",
        "UK", "EU", "NYSE", "GDP", "CPI", "ESG", "IPO", "M", "B", "K", "H", "PE", "PB", "EV", "DE", "VS", "HOW",
        "WHO", "WHAT", "DID", "DO", "IS", "BE", "AN", "AS", "IF", "SO", "UP", "NET", "LT", "ST", "RD",
        "PP&E", "SG&A", "R&D", "D&A", "M&A", "P&L", "G&A", "AOCI", "APIC", "SBC",
    }
)  # fmt: skip
"""Upper-case words that are finance or English abbreviations, never read as tickers."""

LEGAL_WORDS = frozenset({"INC", "CORP", "CO", "LTD", "LP", "LLC", "PLC", "NV", "SA", "AG", "DE", "L", "P"})
"""Upper-case legal-form words of a name, never a ticker or a name of their own."""

_LEGAL_FORM = frozenset({w.lower() for w in LEGAL_WORDS} | {"incorporated", "corporation", "company", "limited"})
"""The legal-form words at the end of a name, spelt out too (not ``group`` or ``holdings``, which people say)."""

SHORT_HEAD = 4
"""The least letters of a short form that is the head of a compound word (``Conoco``, ``Citi``)."""

QUESTION_WORDS = frozenset(
    {
        "what", "which", "how", "who", "when", "where", "why", "did", "does", "was", "were", "is", "rank", "compute",
        "calculate", "find", "get", "order", "sort", "name", "report", "state", "provide", "return", "compare", "give",
        "show", "tell", "list", "between", "and", "or", "the", "in", "of", "for", "q1", "q2", "q3", "q4", "fy", "by",
        "than", "its", "their", "please", "during", "at", "as", "on", "from",
    }
)  # fmt: skip
"""Capitalised words of a question that are never part of a company's name ("Rank", "Compare", "What")."""

MONTH_WORDS = frozenset(
    {"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
     "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"}
)  # fmt: skip
"""Month names and abbreviations: period words, never words of a company's name."""

FUZZY_MIN = 88.0
"""The least rapidfuzz ``ratio`` (normalized Levenshtein similarity, 0-100) for a fuzzy company match."""
FUZZY_MARGIN = 4.0
"""Two candidates of different companies closer than this are ambiguous (ask back)."""


_SAID_WITH = frozenset({"inc", "incorporated", "corp", "corporation", "co", "company", "ltd", "limited", "plc", "lp",
                        "llc", "n", "v", "nv", "s", "a", "sa", "ag", "holdings", "holding", "group"})  # fmt: skip
"""Words said after a company's name that its core name leaves out (:func:`core_name`): its legal form, "Holdings"."""


def normalize(text: str) -> str:
    """Lower case, possessives dropped, punctuation to spaces, ``&`` kept (``Johnson & Johnson's`` ->
    ``johnson & johnson``)."""
    text = re.sub(r"['’]s\b", "", text.lower())
    text = text.replace("&", " & ")
    return " ".join(re.sub(r"[^a-z0-9&]+", " ", text).split())


def full_name(name: str) -> str:
    """An EDGAR name normalized (:func:`normalize`) without its state tag, legal suffix kept (``DIRECTV GROUP INC
    /DE/`` -> ``directv group inc``)."""
    return normalize(re.sub(r"/[A-Za-z]{2,3}/?", " ", name))


def _widened(
    text: str,
    start: int,
    end: int,
    name: str,
    free: Callable[[int, int], bool],
    other: Callable[[int], bool] = lambda _: False,
) -> tuple[int, int]:
    """The span ``text[start:end]`` of an alias of the EDGAR name ``name`` (``text`` :func:`normalize`-d, padded with
    spaces), widened over the words next to it that are further words of the name or a legal form ("charles" in
    "charles schwab" for ``SCHWAB CHARLES CORP``, "vf" in "vf corp"): the words that named the company, so none of
    them is read as a word of the measure. A word the alias already holds is not taken again ("Equity Residential's
    equity"); ``free(a, b)``: whether a span is not another company's; ``other(i)``: whether another company's name
    of two or more words starts at ``i`` ("Marvell Technology Group, Limited Brands": "limited" is Limited Brands',
    not Marvell's legal form)."""
    own = set(text[start:end].split())
    extra = (set(full_name(name).split()) | _LEGAL_FORM) - own
    while (
        (m := re.match(r" ([a-z0-9&]+)(?= )", text[end:]))
        and m.group(1) in extra
        and free(end, end + m.end())
        and not other(end + 1)
    ):
        extra.discard(m.group(1))
        end += m.end()
    while (m := re.search(r"(?<= )([a-z0-9&]+) $", text[:start])) and m.group(1) in extra and free(m.start(), start):
        extra.discard(m.group(1))
        start = m.start()
    return start, end


def core_name(name: str) -> str:
    """An EDGAR name without its legal suffix, state tag and punctuation (``JOHNSON & JOHNSON /NJ/`` ->
    ``johnson & johnson``, ``COLGATE PALMOLIVE CO`` -> ``colgate palmolive``)."""
    return " ".join(_SUFFIX.sub(" ", full_name(name)).split())


def aliases_of(name: str) -> set[str]:
    """The aliases a name gives by rules 1-3 of the module doc, before uniqueness (first words included)."""
    core = core_name(name)
    if not core:
        return set()
    full = full_name(name)  # the name as written, legal suffix kept
    out = {core, core.replace(" & ", " and "), core.replace(" and ", " & "), full, full.replace(" & ", " and ")}
    legal = full.split()
    while len(legal) > 1 and legal[-1] in _LEGAL_FORM:
        legal.pop()
    out.add(" ".join(legal))  # DIRECTV GROUP INC -> directv group (the core, directv, drops "group" too)
    words = core.split()
    if len(words) > 1 and all(len(w) == 1 for w in words):  # V F -> vf
        out.add("".join(words))
    lead = 0
    while lead < len(words) and len(words[lead]) == 1 and words[lead].isalpha():
        lead += 1
    if 2 <= lead < len(words):  # J P MORGAN CHASE -> jpmorgan chase, jp morgan chase, jpmorgan, jp morgan, j p morgan
        joined = "".join(words[:lead])
        out |= {" ".join([joined + words[lead], *words[lead + 1 :]]), " ".join([joined, *words[lead:]])}
        out |= {joined + words[lead], f"{joined} {words[lead]}", " ".join(words[: lead + 1])}
    trail = 0
    while trail < len(words) - 1 and len(words[-1 - trail]) == 1 and words[-1 - trail].isalpha():
        trail += 1
    if trail >= 2:  # HEINZ H J, GRAINGER W W: the initials said first (hj heinz, h j heinz)
        initials, surname = words[len(words) - trail :], " ".join(words[: len(words) - trail])
        out |= {f"{''.join(initials)} {surname}", f"{' '.join(initials)} {surname}"}
    head = " ".join(words[:-1])
    if len(words) > 1 and words[-1] in GENERIC_TAIL and head not in COMMON_WORDS and len(head) >= 4:
        out.add(head)
    if len(words) == 3 and words[1] == "&":
        out.add(f"{words[0][0]}&{words[2][0]}")
        out.add(f"{words[0][0]} & {words[2][0]}")
    if len(words) >= 3 and words[1] not in ("&", "and", "of", "the", "for", "de"):
        out.add(" ".join(words[:2]))
    last = words[-1]
    if len(words) == 2 and len(last) >= 5 and last not in GENERIC_TAIL and last not in COMMON_WORDS and last.isalpha():
        out.add(last)  # walt disney -> disney
    if len(words) == 1 and core.endswith("s") and len(core) >= 6:
        out.add(core[:-1])  # mcdonalds -> mcdonald (the question's "McDonald's" loses its 's as a possessive)
    if len(words) >= 2 and len(words[0]) == 2 and words[0].isalpha() and words[1] not in ("&", "and"):
        # RR DONNELLEY & SONS -> r r donnelley ("R.R. Donnelley"), as its first word's letters are said one by one
        out |= {f"{words[0][0]} {a[1:]}" for a in list(out) if a.startswith(f"{words[0]} ")}
    return {a for a in out if len(a.replace(" ", "")) >= 3 or "&" in a or (len(a) == 2 and a.isalpha())}


def _text_at(question: str, start: int) -> int:
    """Where the word at ``question[start:]`` begins in the question's matching text (``f" {normalize(question)} "``):
    after the normalized words before it and the space that follows them ("C" of "What was C H Robinson's" is at 10,
    not at the space before it, where a one-letter ticker's span missed the name found there)."""
    before = normalize(question[:start])
    return len(before) + 2 if before else 1


def instance_ticker(instance: str | None) -> str | None:
    """The ticker an XBRL instance file name begins with (``goog-20090630.xml`` -> ``GOOG``; EDGAR's filer manual
    names an instance ``<prefix>-<period end YYYYMMDD>.xml``, the prefix being the filer's ticker by convention), or
    None when the name is not of that form or the prefix is a finance abbreviation (:data:`NOT_TICKERS`)."""
    m = re.fullmatch(r"([a-z]{1,5})-\d{8}(?:_htm)?\.xml", (instance or "").strip().lower())
    if m is None or m.group(1).upper() in NOT_TICKERS or m.group(1).upper() in LEGAL_WORDS:
        return None
    return m.group(1).upper()


def _named_before(question: str, alias: str) -> bool:
    """True when ``alias`` (a name's first word) follows, in ``question``, a capitalised word with only spaces between
    (no comma: "Rank Celgene, Wyeth") that is no question word, month or finance abbreviation: a word of the same
    name ("US" in "US Steel")."""
    for m in re.finditer(rf"([A-Za-z][\w&'’.-]*)[ \t]+{re.escape(alias)}(?![A-Za-z])", question, re.I):
        word = normalize(m.group(1))
        if not word[:1].isalpha() or not m.group(1)[:1].isupper() or word in QUESTION_WORDS or word in MONTH_WORDS:
            continue
        if all(len(w) == 1 for w in word.split()):
            continue  # initials: "W.W. Grainger" is GRAINGER W W
        if word.upper() in NOT_TICKERS and word.upper() not in ("US", "UK", "EU"):  # "ROE Chevron"; not "US Steel"
            continue
        return True
    return False


def _words_said(alias: str) -> set[str]:
    """An alias's words, its single letters also run together as said ("c h robinson": c, h, robinson, ch)."""
    words = alias.split()
    out, run = set(words), ""
    for w in [*words, ""]:
        if len(w) == 1:
            run += w
        else:
            if len(run) > 1:
                out.add(run)
            run = ""
    return out


def _capitalised(question: str, word: str) -> bool:
    """True when ``word`` appears in ``question`` with a capital letter (``Abbott``, ``eBay``: a name, not a common
    word such as "the gap between")."""
    return any(
        any(c.isupper() for c in m.group())
        for m in re.finditer(rf"(?<![A-Za-z]){re.escape(word)}(?![A-Za-z])", question, re.I)
    )


def acronyms_of(name: str) -> set[str]:
    """The initials of a name, with and without its legal suffix, when 3 to 5 letters (``COMPUTER SCIENCES CORP`` ->
    ``CSC``, ``PHILIP MORRIS INTERNATIONAL INC`` -> ``PMI``, ``COCA COLA ENTERPRISES INC`` -> ``CCE``)."""
    full = [w for w in full_name(name).split() if w not in ("&", "and", "of", "the")]
    core = [w for w in core_name(name).split() if w not in ("&", "and", "of", "the")]
    out = {"".join(w[0] for w in ws).upper() for ws in (full, core) if len(ws) >= 2}
    return {a for a in out if 3 <= len(a) <= 5 and a.isalpha()}


@cache
def table_names() -> tuple[tuple[str, int, str], ...]:
    """Every company of the SEC's ticker table (``data/company_tickers.csv``) as ``(core name, CIK, name)``
    (:func:`core_name`; ``DANA INC`` -> ``("dana", 26780, "DANA INC")``), one row per CIK."""
    out: dict[int, tuple[str, int, str]] = {}
    with (DATA / "company_tickers.csv").open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            cik, name = int(row["cik"]), row["name"].strip()
            core = core_name(name)
            if cik not in out:
                out[cik] = (core, cik, name)
    return tuple(out.values())


@cache
def table_by_core() -> dict[str, tuple[tuple[int, str], ...]]:
    """Core name -> the ticker table's companies of that core name as ``(CIK, name)``, in the table's order (a
    successor registrant under a new CIK shares its predecessor's: ``"walt disney"``)."""
    out: dict[str, list[tuple[int, str]]] = {}
    for core, cik, name in table_names():
        out.setdefault(core, []).append((cik, name))
    return {core: tuple(rows) for core, rows in out.items()}


@cache
def table_name_by_cik() -> dict[int, str]:
    """CIK -> the company's name in the ticker table."""
    return {cik: name for _, cik, name in table_names()}


@cache
def table_last_words() -> dict[str, frozenset[int]]:
    """The last word of every name of two or more words in the SEC's ticker table -> the CIKs whose name ends with it
    (``"mining"``: NEWMONT MINING and a hundred others; ``"disney"``: WALT DISNEY alone)."""
    out: dict[str, set[int]] = {}
    for core, cik, _ in table_names():
        words = core.split()
        if len(words) >= 2:
            out.setdefault(words[-1], set()).add(cik)
    return {w: frozenset(c) for w, c in out.items()}


@cache
def table_first_two_words() -> dict[str, frozenset[int]]:
    """The first two words of every name of two or more words in the SEC's ticker table -> the CIKs whose name begins
    with them (``"united states"``: UNITED STATES STEEL and many funds; ``"freeport mcmoran"``: one company)."""
    out: dict[str, set[int]] = {}
    for core, cik, _ in table_names():
        words = core.split()
        if len(words) >= 2:
            out.setdefault(" ".join(words[:2]), set()).add(cik)
    return {w: frozenset(c) for w, c in out.items()}


@cache
def ticker_owners() -> dict[str, frozenset[int]]:
    """Ticker -> the CIKs the SEC's ticker table gives it (the inverse of :func:`ticker_table`)."""
    out: dict[str, set[int]] = {}
    for cik, tickers in ticker_table().items():
        for t in tickers:
            out.setdefault(t, set()).add(cik)
    return {t: frozenset(c) for t, c in out.items()}


@cache
def ticker_table() -> dict[int, tuple[str, ...]]:
    """CIK -> its tickers, from the SEC's ticker table (``data/company_tickers.csv``)."""
    out: dict[int, list[str]] = {}
    with (DATA / "company_tickers.csv").open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            out.setdefault(int(row["cik"]), []).append(row["ticker"].upper())
    return {k: tuple(v) for k, v in out.items()}


@dataclass(frozen=True)
class CompanyHit:
    """A company the question names: CIK, EDGAR name, the words that named it and how (``name``, ``alias``,
    ``ticker``, ``cik``, ``short form``, ``fuzzy``), and where in the question."""

    cik: int
    name: str
    text: str
    how: str
    at: int


@dataclass
class CompanyMatch:
    """The companies a question names (in order), the names that fit several (``(words, [(cik, name)])``: ask
    back) and the capitalised words that look like a name but match no company."""

    found: list[CompanyHit] = field(default_factory=list)
    ambiguous: list[tuple[str, list[tuple[int, str]]]] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    elsewhere: list[tuple[str, int, str]] = field(default_factory=list)
    """Names the SEC's ticker table gives a company the graph does not hold (``("Dana", 26780, "DANA INC")``): never
    read as a graph company by a short form or a fuzzy match (:meth:`CompanyIndex.outside_name`); also in
    ``unresolved``."""


class CompanyIndex:
    """The aliases of the graph's companies (see the module doc); built once per graph state.

    Args:
        companies: ``(cik, EDGAR name)`` pairs (``kg.cypher.COMPANY_NAMES``).
        tickers: CIK -> tickers (default: :func:`ticker_table`).
        data_tickers: CIK -> tickers the graph's own data gives (rule 4: :func:`instance_ticker`, a fetched ticker);
            one is used only when no other company holds it, in the table or in the data.
        former: CIK -> the company's former names (rule 5).
    """

    def __init__(
        self,
        companies: Iterable[tuple[int, str]],
        tickers: dict[int, tuple[str, ...]] | None = None,
        data_tickers: Mapping[int, Iterable[str]] | None = None,
        former: Mapping[int, Iterable[str]] | None = None,
    ):
        self.names: dict[int, str] = {int(c): n for c, n in companies}
        tickers = ticker_table() if tickers is None else tickers
        owners: dict[str, set[int]] = {}
        exact: dict[str, set[int]] = {}
        for cik, name in self.names.items():
            exact.setdefault(core_name(name), set()).add(cik)
            for a in aliases_of(name):
                owners.setdefault(a, set()).add(cik)
        ends, heads, same_name = table_last_words(), table_first_two_words(), table_by_core()

        def weak(cik: int, name: str) -> set[str]:
            """The short names of ``name`` that other companies of the ticker table share: its last word ("mining"
            of NEWMONT MINING; "disney" of WALT DISNEY stays) or first two ("united states" of UNITED STATES STEEL).
            A table company of the same name (a successor registrant) is not another."""
            core = core_name(name)
            # a successor registrant under a new CIK (WALT DISNEY CO, 2019) is no other company
            words, itself = core.split(), {cik} | {c for c, _ in same_name.get(core, ())}
            out = set()
            if len(words) == 2 and ends.get(words[-1], frozenset()) - itself:
                out.add(words[-1])
            if len(words) >= 3 and heads.get(" ".join(words[:2]), frozenset()) - itself:
                out.add(" ".join(words[:2]))
            return out

        for cik, name in self.names.items():
            for a in weak(cik, name) & set(owners):
                owners[a].discard(cik)
        owners = {a: c for a, c in owners.items() if c}
        was: dict[str, set[int]] = {}
        for cik, names in (former or {}).items():
            for a in {a for n in names if n for a in aliases_of(n) - weak(cik, n)}:
                was.setdefault(a, set()).add(cik)
        firsts: dict[str, set[int]] = {}
        for cik, name in self.names.items():
            words = core_name(name).split()
            if words and len(words[0]) >= 4 and words[0] not in COMMON_WORDS and words[0].isalpha():
                firsts.setdefault(words[0], set()).add(cik)
        for w, ciks in firsts.items():
            owners.setdefault(w, set()).update(ciks)
        self.first_words: frozenset[str] = frozenset(firsts)
        """One-word aliases that are a name's first word ("steel" of STEEL DYNAMICS): such a word begins the name, so
        a capitalised name word just before it ("US Steel") says another name (:meth:`find`)."""
        for a, ciks in was.items():  # a former name's alias only where no company's present name claims it
            if self._unheld(a) is None:  # "teledyne technologies" is TELEDYNE's, not ALLEGHENY TECHNOLOGIES' former
                owners.setdefault(a, ciks)
        for a, ciks in owners.items():  # a short name ("cabot", "prudential") that is another company's whole name
            if a not in exact and (other := self._unheld(a)) is not None:
                ciks.add(other[0])  # (CABOT CORP, PRUDENTIAL PLC, not in the graph): asked back with it
        for core, ciks in exact.items():  # a company's own name beats another's short form (Coca-Cola)
            if len(ciks) == 1:
                owners[core] = set(ciks)
        self.aliases: dict[str, int] = {a: next(iter(c)) for a, c in owners.items() if len(c) == 1}
        self.shared: dict[str, list[int]] = {a: sorted(c) for a, c in owners.items() if len(c) > 1}
        self.tickers: dict[str, int] = {}
        for cik in self.names:
            for t in tickers.get(cik, ()):
                if t not in NOT_TICKERS:
                    self.tickers[t] = cik
        held: dict[str, set[int]] = {}
        for cik, ts in (data_tickers or {}).items():
            if cik in self.names:
                for t in {t.upper() for t in ts if t}:
                    held.setdefault(t, set()).add(cik)
        self.rivals: dict[str, set[int]] = {}
        """Tickers two of the graph's companies hold, one by today's table and one by its filings (``MRK``: the
        table gives it to the CIK that was SCHERING PLOUGH CORP in 2009, Merck & Co's 2009 filings use it): asked
        back."""
        for t, ciks in held.items():
            if t in NOT_TICKERS:
                continue
            if t in self.tickers:
                if ciks - {self.tickers[t]}:
                    self.rivals[t] = ciks - {self.tickers[t]}
            elif len(ciks) == 1:
                self.tickers[t] = next(iter(ciks))
        initials: dict[str, set[int]] = {}
        for cik, name in self.names.items():
            for a in acronyms_of(name):
                initials.setdefault(a, set()).add(cik)
        listed = ticker_owners()
        for a, ciks in initials.items():  # an acronym is a name only when it is no other company's ticker
            if len(ciks) == 1 and a not in self.tickers and a not in NOT_TICKERS:
                self.tickers[a] = next(iter(ciks))
                if listed.get(a, ciks) - ciks:  # "PMI": PHILIP MORRIS INTERNATIONAL's initials, another's ticker
                    self.rivals[a] = set(listed[a] - ciks)  # asked back with both
        # a ticker that is also another company's initials ("HP": Helmerich & Payne's ticker, Hewlett-Packard's
        # initials) is asked back, never read as the ticker's company alone
        self.initials: dict[str, set[int]] = {}
        for cik, name in self.names.items():
            words = [w for w in core_name(name).split() if w not in ("&", "and", "of", "the")]
            if 2 <= len(words) <= 5 and all(w[:1].isalpha() for w in words):
                self.initials.setdefault("".join(w[0] for w in words).upper(), set()).add(cik)
            for a in acronyms_of(name):
                self.initials.setdefault(a, set()).add(cik)
        self._choices = sorted(self.aliases)
        self._owned = frozenset(owners)
        self._words: dict[int, list[str]] = {cik: full_name(name).split() for cik, name in self.names.items()}

    def short_form(self, word: str) -> list[int]:
        """The companies a one-word short form names (CIKs, sorted; several: ambiguous, none: no short form).

        ``word`` as written in the question (its case matters): ``Conoco`` is the head (at least
        :data:`SHORT_HEAD` letters, not a common word, at least 3 letters short of the word) of the compound first
        word of ``CONOCOPHILLIPS``; ``LabCorp`` (camel case: two or more parts, each at least 2 letters) is the heads
        of the first words of ``LABORATORY CORP OF AMERICA HOLDINGS``, one part per word in order."""
        low = normalize(word)
        if " " in low or not low.isalpha() or low in COMMON_WORDS:
            return []
        parts = [p.lower() for p in re.findall(r"[A-Z][a-z]+", word)]
        camel = len(parts) >= 2 and "".join(parts) == low and all(len(p) >= 2 for p in parts)
        out = set()
        for cik, words in self._words.items():
            first = words[0] if words else ""
            head = len(low) >= SHORT_HEAD and first.startswith(low) and len(first) >= len(low) + 3
            heads = (
                camel and len(words) >= len(parts) and all(w.startswith(p) for p, w in zip(parts, words, strict=False))
            )
            if head or heads:
                out.add(cik)
        return sorted(out)

    def _unheld(self, core: str) -> tuple[int, str] | None:
        """``(CIK, name)`` of the ticker table's company of core name ``core`` that the graph does not hold (the last
        of several, in the table's order), or None; a common word or a name of fewer than three letters is none."""
        if core in COMMON_WORDS or len(core.replace(" ", "")) < 3:
            return None
        rows = [r for r in table_by_core().get(core, ()) if r[0] not in self.names]
        return rows[-1] if rows else None

    def outside(self, core: str) -> tuple[int, str] | None:
        """``(CIK, name)`` of the company the graph does not hold whose core name is ``core`` (``"dana"``: DANA INC),
        or None, also when ``core`` is any graph company's alias (:meth:`outside_name`)."""
        return None if core in self._owned else self._unheld(core)

    def outside_ticker(self, ticker: str) -> int | None:
        """The CIK (the least of several) of a company the graph does not hold that the SEC's table gives ``ticker``
        (``CTS``: CTS CORP, not the initials of COGNIZANT TECHNOLOGY SOLUTIONS), or None where the ticker is a graph
        company's or a finance abbreviation: such a ticker is never read as a graph company."""
        if ticker in self.tickers or ticker in NOT_TICKERS:
            return None
        ciks = [c for c in ticker_owners().get(ticker, ()) if c not in self.names]
        return min(ciks) if ciks else None

    def outside_name(self, words: list[str], single: bool | None = None) -> tuple[str, str] | None:
        """The longest run of ``words`` (the normalized words of one capitalised run of a question) that names a
        company the SEC's ticker table lists and the graph does not hold (:meth:`outside`), as ``(its core name, the
        words that say it)``: ``["dana"]`` -> ``("dana", "dana")``, DANA INC, not DANAHER CORP's short form;
        ``["eon", "resources"]``: EON RESOURCES INC, not a fuzzy match of EOG RESOURCES; ``["dht", "holdings"]`` ->
        ``("dht", "dht holdings")``, the legal form or "Holdings" it is said with included. None when no run does.
        Two or more words, or one word when it is the run's only word, or the run less its legal form (``single``:
        whether a one-word name counts, by default when ``words`` is one word)."""
        single = len(words) == 1 if single is None else single
        for size in range(len(words), 0, -1):
            for i in range(len(words) - size + 1):
                said = words[i : i + size]
                end = i + size
                while end < len(words) and words[end] in _SAID_WITH:  # "n v", "holdings", "inc" after the name
                    end += 1
                core = core_name(" ".join(words[i:end]))
                if (size > 1 or single or end > i + 1) and core.split() == said and self.outside(core) is not None:
                    return core, " ".join(words[i:end])
        return None

    def _label(self, ciks: Iterable[int]) -> list[tuple[int, str]]:
        """``(CIK, name)`` of each company; one the graph does not hold is named so (``CABOT CORP, not in the
        graph``)."""
        named = table_name_by_cik()
        return [(c, self.names[c] if c in self.names else f"{named[c]}, not in the graph") for c in ciks]

    def find(self, question: str) -> CompanyMatch:
        """The companies ``question`` names, in the order it names them, and the ambiguous names (see the module
        doc). ``CIK 200406`` names a company by its CIK."""
        out = CompanyMatch()
        taken: list[tuple[int, int]] = []
        # positions are in the normalized text; the original is only used for tickers and capitalised words
        text = f" {normalize(question)} "

        def free(a: int, b: int) -> bool:
            return not any(x < b and a < y for x, y in taken)

        for m in re.finditer(r"\bcik\s*(\d{1,10})\b", text):
            cik = int(m.group(1))
            if cik in self.names:
                taken.append((m.start(), m.end()))
                out.found.append(CompanyHit(cik, self.names[cik], m.group(), "cik", m.start()))
        keys = sorted([*self.aliases, *self.shared], key=len, reverse=True)
        lower_case_question = question == question.lower()
        for alias in keys:
            for m in re.finditer(rf"(?<= ){re.escape(alias)}(?= )", text):
                if not free(m.start(), m.end()):
                    continue
                if " " not in alias and not lower_case_question and not _capitalised(question, alias):
                    continue  # "the gap between", "selling, general and ...": a word, not Gap Inc. or GE
                if alias in self.first_words and _named_before(question, alias):
                    continue  # "US Steel": a first word ("steel" of STEEL DYNAMICS) after another name word
                if alias in self.aliases:
                    cik = self.aliases[alias]
                    how = "name" if alias == core_name(self.names[cik]) else "alias"

                    def other(i: int, cik: int = cik) -> bool:
                        words = text[i:].split()[:6]
                        return any(
                            self.aliases.get(w, cik) != cik or w in self.shared
                            for w in (" ".join(words[:k]) for k in range(2, len(words) + 1))
                        )

                    a, b = _widened(text, m.start(), m.end(), self.names[cik], free, other)
                    taken.append((a, b))
                    out.found.append(CompanyHit(cik, self.names[cik], text[a:b], how, a))
                    continue
                taken.append((m.start(), m.end()))
                out.ambiguous.append((alias, self._label(self.shared[alias])))
        for m in re.finditer(r"(?<![\w&])\$?([A-Z][A-Z.]{0,5})(?![\w&])", question):
            t = m.group(1).rstrip(".")
            pos = _text_at(question, m.start())
            if not free(pos, pos + len(t)) or t in NOT_TICKERS or t in LEGAL_WORDS:
                continue  # a word of a name already found ("CNX" in "CNX Gas"), or not a ticker
            if "/" in question[max(0, m.start() - 1) : m.end() + 1]:
                continue  # a letter of "D/E", "P/E", "Q/C Technologies": no ticker
            before, after = question[: m.start()].rstrip(), question[m.end() :].lstrip(" .")
            word_before = re.search(r"[A-Z][\w&'’.-]*$", before)  # "Texas TI"; not "Rank TI, ..."
            in_name = (word_before is not None and word_before.group().lower() not in QUESTION_WORDS) or bool(
                re.match(r"[A-Z]", after)
            )
            if t in self.tickers:
                cik = self.tickers[t]
                others = sorted((self.initials.get(t, set()) | self.rivals.get(t, set())) - {cik})
                if others and all(h.cik not in others for h in out.found):
                    out.ambiguous.append((t, self._label([cik, *others])))
                    taken.append((pos, pos + len(t)))
                elif all(h.cik != cik for h in out.found):
                    out.found.append(CompanyHit(cik, self.names[cik], t, "ticker", pos))
                    taken.append((pos, pos + len(t)))
            elif len(t) >= 2 and not in_name and (cik := self.outside_ticker(t)) is not None:
                # "MARA": MARA HOLDINGS' ticker, a company not in the graph
                out.unresolved.append(t)
                out.elsewhere.append((t, cik, table_name_by_cik()[cik]))
                taken.append((pos, pos + len(t)))
            elif len(t) >= 2 and "." not in t and not in_name and t in self.initials:
                # "TI": no ticker, but the initials of TEXAS INSTRUMENTS and of TYCO INTERNATIONAL: asked back (one
                # company too: initials alone are never read as a name)
                out.ambiguous.append((t, self._label(sorted(self.initials[t]))))
                taken.append((pos, pos + len(t)))
            elif len(t) >= 2 and "." not in t and not in_name:
                out.unresolved.append(t)  # "GOOG": an upper-case name no company of the graph has
        self._fuzzy(question, text, out, free, taken)
        seen: set[int] = set()
        ordered = []
        for h in sorted(out.found, key=lambda h: h.at):
            if h.cik not in seen:
                seen.add(h.cik)
                ordered.append(h)
        out.found = ordered
        return out

    def _fuzzy(self, question: str, text: str, out: CompanyMatch, free, taken: list[tuple[int, int]]) -> None:
        """Capitalised word runs not yet matched, matched fuzzily against the aliases (margin rule)."""
        skip = set(QUESTION_WORDS)
        months = set(MONTH_WORDS)
        opening = CompanyMatch()  # the question's first word as a short form, used when nothing else is found
        for m in re.finditer(r"(?:[A-Z][\w&.'’/-]*)(?:\s+(?:&\s+)?[A-Z][\w&.'’/-]*)*", question):
            words = [w for w in normalize(m.group()).split() if w not in skip and w not in months]
            phrase = " ".join(words)
            if len(phrase.replace(" ", "")) < 4 or phrase.replace(" ", "").upper() in NOT_TICKERS:
                continue
            said = normalize(m.group()).split()
            while said and said[0] in skip:  # "Compare", "What": the run's question words, not its name's ("Right On")
                said.pop(0)
            outside = self.outside_name(said, single=len(words) == 1)
            if outside is not None:  # "Dana", "EON Resources", "Marathon Petroleum": companies the graph does not hold
                away, spoken = outside
                at = text.find(f" {spoken} ") + 1
                end = at + len(spoken)
                if at > 0 and not any(x <= at and end <= y and y - x > end - at for x, y in taken):
                    out.found = [h for h in out.found if not at - 1 <= h.at < end]  # "marathon" of "marathon petroleum"
                    taken[:] = [(x, y) for x, y in taken if not at <= x < end]
                    taken.append((at, end))
                    company = self.outside(away)
                    assert company is not None  # outside_name found it so
                    if all(c != company[0] for _, c, _ in out.elsewhere):  # not "MARA" again
                        out.elsewhere.append((re.sub(r"['’]s$", "", m.group()), *company))
                        out.unresolved.append(m.group())
                    continue
            camel = re.fullmatch(r"(?:[A-Z][a-z]+){2,}(?:['’]s)?", m.group()) is not None  # LabCorp, AmEx
            first = not question[: m.start()].strip() and normalize(m.group().split()[0]) == words[0]
            if " " not in phrase and not camel and first and len(phrase) >= 5:
                # the question's first word ("Estimate", "Conoco"): too weak for a fuzzy match; a short form only
                # when it names exactly one company and the question names no other (kept for the end)
                at = _text_at(question, m.start())
                self._short_in_run(m.group(), at, text, opening, free, [], skip | months, only_sure=True)
                continue
            if " " not in phrase and not camel and len(phrase) < 5:
                # one short word: too weak for a fuzzy match; inside the question (not its capitalised first word,
                # "Free cash flow at ..."), the head of a name's first word ("Citi") or nothing
                at = _text_at(question, m.start())
                if not first and len(phrase) >= SHORT_HEAD and phrase not in self.aliases and phrase not in self.shared:
                    self._short_in_run(m.group(), at, text, out, free, taken, skip | months)
                continue
            pos = text.find(f" {phrase} ")
            if pos >= 0 and not free(pos + 1, pos + 1 + len(phrase)):
                continue
            if phrase in self.aliases or phrase in self.shared:
                continue
            best = process.extract(phrase, self._choices, scorer=fuzz.ratio, limit=8)
            short = {w for w in phrase.split() if len(w) <= 3}  # "KE Holdings" is no typo of "HE HOLDINGS"
            best = [(a, s) for a, s, _ in best if s >= FUZZY_MIN and short <= _words_said(a) and _same_heads(phrase, a)]
            at = pos + 1 if pos >= 0 else _text_at(question, m.start())
            if not best:
                if not self._short_in_run(m.group(), at, text, out, free, taken, skip | months):
                    out.unresolved.append(m.group())
                continue
            top_alias, top_score = best[0]
            top_cik = self.aliases[top_alias]
            rivals = [(a, s) for a, s in best[1:] if self.aliases[a] != top_cik and top_score - s < FUZZY_MARGIN]
            if rivals:
                ciks = [top_cik, *dict.fromkeys(self.aliases[a] for a, _ in rivals)]
                out.ambiguous.append((m.group(), self._label(ciks)))
                continue
            named = m.group().split()
            while len(named) > 1 and normalize(named[0]) in skip | months:
                named.pop(0)  # "Sort ExxonMobil": the name is "ExxonMobil", "Sort" stays the operation's word
            out.found.append(CompanyHit(top_cik, self.names[top_cik], " ".join(named), "fuzzy", at))
            taken.append((at, at + len(phrase)))
        if opening.found and not out.found and not out.ambiguous:
            out.found.extend(opening.found)

    def _short_in_run(
        self,
        run: str,
        run_at: int,
        text: str,
        out: CompanyMatch,
        free,
        taken: list[tuple[int, int]],
        ignore: set[str],
        only_sure: bool = False,
    ) -> bool:
        """The first word of a capitalised run that is a short form (:meth:`short_form`), as written (its case
        matters), words of ``ignore`` ("compare", months) passed over: "Compare Conoco's" and "LabCorp's ROA" name
        ConocoPhillips and Laboratory Corp. One company is a hit, placed where the word is in the normalized ``text``
        (where the run is, ``run_at``, when the word's normal form is not found as a word); several are asked back
        (with ``only_sure``, ignored). Returns whether a word was a short form."""
        for raw in re.split(r"\s+", run):
            word = re.sub(r"['’]s$", "", raw)
            low = normalize(word)
            short = self.short_form(word) if low and low not in ignore else []
            if not short or (only_sure and len(short) > 1):
                continue
            pos = text.find(f" {low} ")
            at = pos + 1 if pos >= 0 else run_at
            if pos >= 0 and not free(at, at + len(low)):
                continue
            if len(short) == 1:
                out.found.append(CompanyHit(short[0], self.names[short[0]], word, "short form", at))
                taken.append((at, at + len(low)))
            else:
                out.ambiguous.append((word, self._label(short)))
            return True
        return False


def _same_heads(phrase: str, alias: str) -> bool:
    """Whether a phrase and an alias of as many words begin each word with the same letter (a typo keeps them:
    "Amgn" is AMGEN, "Public Service" is not REPUBLIC SERVICES, 88.9 by ``ratio``); of other lengths, the first."""
    a, b = phrase.split(), alias.split()
    pairs = zip(a, b, strict=False) if len(a) == len(b) else [(a[0], b[0])] if a and b else []
    return all(x[0] == y[0] for x, y in pairs)


def mentions_company(text: str, companies: Iterable[str]) -> bool:
    """True when ``text`` names one of ``companies`` (EDGAR names) by its name or one of its aliases (rules 1-3
    of the module doc; a first word only when it is not a common word), whole words, any case."""
    words = f" {normalize(text)} "
    for name in companies:
        aliases = aliases_of(name)
        first = core_name(name).split()[:1]
        if first and len(first[0]) >= 4 and first[0] not in COMMON_WORDS:
            aliases.add(first[0])
        if any(f" {a} " in words for a in aliases):
            return True
    return False
