"""Find the us-gaap element a question names by its label ("how much goodwill", "accrued liabilities").

Issue 44 ("Measures"): beyond the catalog (:mod:`retrieval.facts.measures`), any element a company reports is
reachable by its label. The candidates are the elements the named companies report in USD, each with its standard
label (tag.txt ``tlabel``) and the filers' own line labels (pre.txt ``plabel``). The rule is strict, so that a
question is never answered with a near miss:

1. The question's content words (:func:`content_words`: the question without the company names the caller found,
   its period words, question words and function words, each singularised) must ALL be words of a label
   ("goodwill impairment" is not answered with ``Goodwill``).
2. Among the labels that hold them all, the one with the fewest other words wins ("goodwill" is ``Goodwill``, not
   ``Goodwill, Impairment Loss``), at most :data:`MAX_EXTRA_WORDS` other words and fewer than the question's
   own (a two-word question is not matched by a label of four words: "net change in cash" is not "Acquisitions,
   net of cash acquired"). A label's words are counted with
   only grammar words left out (:func:`label_words`): "accrued liabilities" is ``Accrued Liabilities, Current``
   (one other word), not ``Increase (Decrease) in Accrued Liabilities`` (two), although "increase" is a word a
   question uses for an operation.
3. Two elements tied at that count are asked back, never guessed ("deferred revenue": current or noncurrent?); a
   filer's own extension (custom element) gives way to a us-gaap element tied with it.
4. A label's stated basis ("..., Net of Tax", "..., Net of Cash Acquired") is not other words: AOCI is the total
   "Accumulated Other Comprehensive Income (Loss), Net of Tax", not a filer's component "..., Other". A question
   must say a word of the label outside its basis ("net change in cash" is not "..., net of cash acquired").
5. When the question's period says balance or flow, an element whose us-gaap standard label is exactly the words
   wins (Equity Residential's "net income attributable to noncontrolling interests", presented on its equity
   statement only); otherwise the balance sheet, income and cash flow statements first, then the fewest other
   words. When only a filer's line label names the best (its standard label, or a filer's extension's label, does
   not hold the words), an element whose standard label holds them with one word more is asked back beside it
   ("deferred income taxes": Helmerich & Payne's "Deferred income taxes" change in other deferred liabilities, or
   its "Deferred income tax expense"?).
6. A label that opens with "Other" is a remainder ("Other (income) and expense"): alone it is never the answer to a
   question that does not say "other"; tied with another element, both are asked back.
   A label that puts a word the question did not say directly before one of its words names a narrower quantity
   and does not match (:func:`narrows`: "Restricted cash", "Redeemable noncontrolling interests", "Preferred
   dividends"); a flow asked where only a balance's label holds the words, and not its whole standard label, matches
   nothing ("dividends paid in the quarter" is not "Dividends payable").
7. A question that names no period and no change is not asked a balance's change ("Increase (Decrease) in Accounts
   Payable") where a balance also holds its words ("PG&E latest accounts payable"); where a flow beats a balance
   on words alone, both are asked back ("latest noncontrolling interest": "Allocation to noncontrolling
   interests"?). A question that says "paid" never reads the statement of equity, whose dividends are declared.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

MAX_EXTRA_WORDS = 2
"""Most label words beyond the question's that a match may have."""

_FUNCTION_WORD_TEXT = """a an the of in on at for to by from as and or with its their it this that these those his her our your
    what was were is are be been did does do how much many which who whom whose when where why there
    have has had report reported reports state stated show showed shown give tell me please value amount
    figure number balance level total company company's firm firm's business end ended ending close closing
    period quarter quarters year years month months week weeks day days fiscal calendar latest last recent
    most first second third fourth half q1 q2 q3 q4 fy h1 h2 ytd ttm ltm trailing through thru date dated during spend spent paid pay
    carry carried
    compare compared comparison versus vs higher lower larger smaller bigger more less greater difference
    between among amongst than rank ranked order per ratio earn earned make made generate generated post posted record recorded
    book booked bring brought deliver delivered log logged achieve achieved run ran calculate
    compute estimate find get provide list now right sheet spending stand stood come came out same them all change changed grow grew growth increase increased decrease decreased
    rise rose fall fell percent percentage cent point points over against which one two both each
    january february march april may june july august september october november december jan feb mar apr
    jun jul aug sep sept oct nov dec three four six nine twelve usd dollars dollar million millions billion
    billions thousand could would can you want know like looking look interested"""
_FUNCTION_WORDS = frozenset(_FUNCTION_WORD_TEXT.split())
"""Words a question uses around the element it names (question words, period words, units): never label words."""


_SAME_WORD = {"stock": "share", "paid": "payment", "stockholder": "shareholder"}
"""Words read as one: "stock-based" and "share-based" compensation, "common stock" and "common share"; "dividends
paid" and "payments of dividends"; "shareholders' equity" and "stockholders' equity"."""

_USER_TERMS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.I), r)
    for p, r in (
        (r"\bEPS\b", "earnings per share"),
        (r"\bPP&E\b|\bPPE\b", "property, plant and equipment"),
        (r"\bD&A\b", "depreciation and amortization"),
        (r"\bR\s*&\s*D\b|\bR and D\b", "research and development"),
        (r"\bSG&A\b", "selling, general and administrative"),
        (r"\bAOCI\b", "accumulated other comprehensive income"),
        (r"\bAPIC\b", "additional paid-in capital"),
        (r"\bSBC\b", "share-based compensation"),
        (r"\b(?:(?:share|stock)\s+)?(?:buy-?backs?|repurchases?)\b", "repurchases of common stock"),
        (
            r"\b(?:(?:cash\s+)?(?:paid|spent|payments?)\s+(?:for|on)\s+acquisitions|acquisition\s+spending)\b",
            "payments to acquire businesses",
        ),
        (r"\b(?:stock\s+)?option\s+exercises\b", "stock options exercised"),
        (r"\bcash\s+dividends\s+paid\b", "dividends paid"),
        (r"\b(investing|financing)\s+cash\s+flows?\b", r"net cash provided by \1 activities"),
        (
            r"\bcash\s+flows?\s+(?:from|used\s+in|provided\s+by)\s+(investing|financing)\s+activities\b",
            r"net cash provided by \1 activities",
        ),
        (
            r"\bnet\s+(?:change|increase\s+or\s+decrease|increase\s+\(decrease\))\s+in\s+cash(?:\s+and\s+cash\s+equivalents)?\b",
            "cash and cash equivalents, period increase (decrease)",
        ),
    )
)
"""Analysts' abbreviations and words for line items, written as the us-gaap labels say them."""


def label_terms(text: str) -> str:
    """``text`` with analysts' abbreviations spelled as labels spell them (:data:`_USER_TERMS`): "diluted EPS" ->
    "diluted earnings per share", "stock buybacks" -> "repurchases of common stock"."""
    for pattern, words in _USER_TERMS:
        text = pattern.sub(words, text)
    return text


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith(("xes", "ches", "shes", "sses")):  # taxes, businesses
        return word[:-2]
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def content_words(text: str, drop: Iterable[str] = ()) -> set[str]:
    """The content words of ``text``: lower case, letters only (possessives, digits and punctuation out), without
    :data:`_FUNCTION_WORDS` and the words of ``drop`` (e.g. the company names found), singularised."""
    low = text.lower().replace("’", "'")
    for phrase in drop:
        tokens = re.findall(r"[a-z0-9]+", phrase.lower())
        if tokens:  # "h & r block" drops "H&R Block", "becton dickinson &" drops "Becton Dickinson &'s"
            low = re.sub(rf"(?<![a-z0-9]){'[^a-z0-9]*'.join(tokens)}(?![a-z0-9])", " ", low)
    return _words(low, _FUNCTION_WORDS)


def _tokens(low: str, marks: bool = False) -> list[tuple[str, str]]:
    """Lower-case text's words in order, each as ``(word, read)``: letters only, possessives cut, "non-" joined
    (non-controlling), ``read`` singularised with :data:`_SAME_WORD` applied; with ``marks``, the marks , ; : ( too,
    as themselves (a word before one is not next to the word after it)."""
    pattern = r"[a-z]+(?:'[a-z]+)?|[,;:(]" if marks else r"[a-z]+(?:'[a-z]+)?"
    out = []
    for w in re.findall(pattern, re.sub(r"\bnon-\s*", "non", low)):
        b = w.split("'")[0]
        out.append((b, _SAME_WORD.get(x := _singular(b), x) if b[0].isalpha() else b))
    return out


def _words(low: str, stop: frozenset[str]) -> set[str]:
    """Lower-case text's words (:func:`_tokens`), one-letter words and ``stop`` out."""
    return {read for b, read in _tokens(low) if len(b) > 1 and b not in stop}


_GRAMMAR_WORD_TEXT = "a an the of in on at for to by from as and or with its their per value"
_GRAMMAR_WORDS = frozenset(_GRAMMAR_WORD_TEXT.split())
"""The only words a label's word count leaves out: a label's other words ("Increase (Decrease) in", "Total",
"Net") say which quantity it is, so they count as words beyond the question's."""

_ALTERNATIVE = re.compile(r"\((?:loss|deficit|accumulated deficit|benefit|used in|income)\)", re.I)
"""A label's other sign in parentheses ("Income (Loss)", "Provided by (Used in)"): the same quantity, not other
words."""

_STATED_BASIS = re.compile(r"\bnet of (?:income )?tax(?:es)?\b|\b(?:net of|less) cash acquired\b", re.I)
"""The basis a label states its amount on ("Accumulated Other Comprehensive Income (Loss), Net of Tax", "Payments
to Acquire Businesses, Net of Cash Acquired"): the headline quantity, so its words are not other words; a question
that says them still matches the label."""

_SHARE_TERMS = re.compile(r"\$\s*[\d.,]+\s+per\s+share")
"""A share's stated par value inside a line label ("par value $0.01 per share"): a description, not the unit."""

EQUITY_STATEMENT = frozenset({"EQ"})
"""pre.txt ``stmt`` of the statement of stockholders' equity."""

UNCLASSIFIED = frozenset({"UN"})
"""pre.txt ``stmt`` of a line the SEC could not place on a statement: where it is presented is unknown."""

PRIMARY_STATEMENTS = frozenset({"BS", "IS", "CF"})
"""pre.txt ``stmt`` codes of the balance sheet, income statement and cash flow statement: where a line item a
question names is read, before the statement of equity (``EQ``) or comprehensive income (``CI``), whose lines
restate the same words for a movement ("Stock-based compensation" adjusting paid-in capital, "Dividends declared")."""


def _remainder(label: str, spoken: set[str]) -> bool:
    """Whether a label names a remainder the question did not ask: it opens with "Other" ("Other (income) and
    expense", "Other Comprehensive Income") and the question does not say "other" (IBM's "total expenses" was
    answered with its other (income) and expense, USD -28,000,000). "Stock-Based Compensation Expense and Other" is
    the compensation and more, not a remainder."""
    first = next((read for _, read in _tokens(label.lower())), "")
    return first == "other" and "other" not in spoken


def label_words(text: str) -> set[str]:
    """The words of a label (lower case, letters only, singularised) less :data:`_GRAMMAR_WORDS` and the other sign
    in parentheses (:data:`_ALTERNATIVE`): ``"Increase (Decrease) in Accrued Liabilities"`` -> ``{"increase",
    "decrease", "accrued", "liability"}``; ``"Net Income (Loss)"`` -> ``{"net", "income"}``."""
    return _words(_ALTERNATIVE.sub(" ", text).lower().replace("’", "'"), _GRAMMAR_WORDS)


_SAME_QUANTITY_MODIFIERS = frozenset({"total", "net"})
"""Words before a question's word that leave the quantity as it is ("Total accumulated other comprehensive loss")."""


_FAIR_VALUE = re.compile(r"\bfair[\s-]+value\b", re.I)


def narrows(label: str, words: set[str], spoken: set[str]) -> bool:
    """Whether ``label`` puts a word the question did not say directly before one of the question's ``words``, with
    no grammar word between: a narrower quantity ("Restricted cash", "Redeemable noncontrolling interests",
    "Preferred dividends"), not the one asked. "Stockholders' Equity Attributable to Noncontrolling Interest" does
    not narrow "noncontrolling interest" ("to" stands between); "Total" and "Net" do not narrow. A label measured "at
    fair value" narrows a question that does not say "fair" (JPMorgan's "loans" was its "Loans, at fair value", USD
    3,073,000,000 of 680,601,000,000)."""
    if "fair" not in spoken and _FAIR_VALUE.search(label):
        return True  # "Loans, at fair value": the part of loans measured at fair value ("value" is a question's word)
    tokens = [read for _, read in _tokens(_ALTERNATIVE.sub(" ", label).lower().replace("’", "'"), marks=True)]
    return any(
        word in words
        and before[0].isalpha()
        and len(before) > 1
        and before not in spoken | _GRAMMAR_WORDS | _SAME_QUANTITY_MODIFIERS
        for before, word in itertools.pairwise(tokens)
    )


def _headline_words(label: str) -> set[str]:
    """The words of a label outside its stated basis: a question must say one of them ("net change in cash" is not
    "Acquisitions, net of cash acquired", whose "net" and "cash" are only its basis)."""
    return label_words(_STATED_BASIS.sub(" ", label))


def _basis_words(label: str) -> set[str]:
    """The words of the basis a label states (:data:`_STATED_BASIS`), not counted as other words."""
    return set().union(*(label_words(m.group()) for m in _STATED_BASIS.finditer(label)))


def question_words(text: str) -> set[str]:
    """Every word of a question (lower case, letters only, singularised), function words too: what
    :func:`match_label` does not count as a label's other words."""
    return _words(text.lower().replace("’", "'"), frozenset())


@dataclass(frozen=True)
class ElementLabels:
    """One element a company reports: its tag, standard labels, filers' line labels, whether it is a flow
    (``duration``: tag.txt ``iord`` ``D``), whether it is a filer's own extension (``custom``) and the statements it
    is presented on (pre.txt ``stmt``: ``BS``, ``IS``, ``CF``, ``EQ``, ``CI``...; empty when unknown)."""

    tag: str
    labels: tuple[str, ...]
    plabels: tuple[str, ...] = ()
    duration: bool = False
    custom: bool = False
    statements: frozenset[str] = frozenset()

    @property
    def label(self) -> str:
        """How an answer names it: the standard label, else the first line label, else the tag."""
        return (self.labels or self.plabels or (self.tag,))[0]

    @property
    def per_share(self) -> bool:
        """A per-share amount (EPS, dividends per share, a par value): its tag or a label says so; a line label's
        description of the shares ("at cost, par value $0.01 per share") does not."""
        return (
            "PerShare" in self.tag
            or "ParValue" in self.tag
            or any("per share" in _SHARE_TERMS.sub(" ", t.lower()) for t in (*self.labels, *self.plabels))
        )

    @property
    def deprecated(self) -> bool:
        """An element the taxonomy has since deprecated (its standard label says "(Deprecated ...)")."""
        return any("deprecated" in t.lower() for t in self.labels)

    @property
    def rank(self) -> int:
        """Order among elements tied for the words: a current us-gaap element (0), a filer's extension (1), a
        deprecated element (2)."""
        return 2 if self.deprecated else 1 if self.custom else 0


@dataclass
class LabelMatch:
    """What :func:`match_label` found: ``found`` (one element), ``tied`` (several, to ask back), or neither, and the
    content words it matched (``words``)."""

    words: set[str]
    found: ElementLabels | None = None
    tied: list[ElementLabels] = field(default_factory=list)


_CHANGE_WORDS = frozenset({"change", "increase", "decrease", "changed", "increased", "decreased"})
"""Words that ask for a change: without them, an element that is a balance's change is not what is asked."""


def _is_change(e: ElementLabels) -> bool:
    """An element whose standard label makes it a change of another quantity ("Increase (Decrease) in Accounts
    Payable", "Cash and Cash Equivalents, Period Increase (Decrease)")."""
    return any(re.search(r"\bincrease \(decrease\)", t, re.I) for t in e.labels)


def match_label(
    words: set[str],
    elements: Sequence[ElementLabels],
    duration: bool | None = None,
    said: Iterable[str] = (),
    per_share: bool = False,
    paid: bool = False,
) -> LabelMatch:
    """The element whose label holds every word of ``words`` with the fewest other words (see the module doc).

    Args:
        words: the question's content words (:func:`content_words`); empty: nothing is matched.
        elements: the candidates (``kg.cypher.COMPANY_CONCEPT_LABELS`` rows).
        duration: the span the question's period asks for: True a flow ("in the six months ended"), False a
            balance ("as of June 30"), None either. Where candidates of that kind match, the others are left out
            ("accounts payable as of ..." is ``AccountsPayableCurrent``, not the cash flow statement's
            ``IncreaseDecreaseInAccountsPayable`` whose line label is also "Accounts payable"); a balance asked is
            never answered with a flow ("noncontrolling interest as of ..." is not "Payments to noncontrolling
            interests"). A flow asked where only balances match, none by its whole standard label, matches nothing
            ("dividends paid in the quarter" is not "Dividends payable"), or, while a flow's label holds the words
            with more other words, is asked back ("deferred income taxes in the six months ended": the balance sheet's
            "Deferred income taxes" or the cash flow statement's deferred income tax expense?).
        said: every word of the question, function words too (:func:`question_words`): a label word the question
            says is not another word ("dividends paid" and the line label "Dividends paid").
        per_share: the question asks for a per-share amount ("per share", "EPS"); otherwise per-share elements are
            left out ("dividends paid" is never "dividends per share").
        paid: the question says "paid": an element presented on the statement of equity only (dividends declared) is
            left out ("cash dividends paid" is not "Cash dividends declared").
    """
    out = LabelMatch(set(words))
    if not words:
        return out
    spoken = set(said) | words
    most = min(MAX_EXTRA_WORDS, max(1, len(words) - 1))  # two words are not matched by a label of four
    holding: list[tuple[int, int, ElementLabels]] = []  # (other words, other words of a standard label, element)
    meaning: set[str] = set()  # the elements whose us-gaap standard label holds the words
    balances: list[ElementLabels] = []  # balances holding every word, however many other words
    remainders: set[str] = set()  # elements whose every fitting label is a remainder ("Other ...")
    for e in elements:
        if e.per_share != per_share:
            continue
        if paid and e.statements and e.statements <= EQUITY_STATEMENT:
            continue  # "dividends paid": the equity statement's dividends are declared, not paid
        read = [(i < len(e.labels) and not e.custom, t, label_words(t)) for i, t in enumerate((*e.labels, *e.plabels))]
        holding_words = [(std, t, ws) for std, t, ws in read if words <= ws and words & _headline_words(t)]
        fits = [
            (std, len(ws - spoken - _basis_words(t))) for std, t, ws in holding_words if not narrows(t, words, spoken)
        ]
        if fits and all(_remainder(t, spoken) for _, t, _ in holding_words):
            remainders.add(e.tag)
        if fits and min(n for _, n in fits) <= MAX_EXTRA_WORDS:
            standard = min((n for std, n in fits if std), default=MAX_EXTRA_WORDS + 1)
            if any(std and words <= ws for std, _, ws in read):
                meaning.add(e.tag)
            holding.append((min(n for _, n in fits), standard, e))
        if fits and not e.duration:
            balances.append(e)
    std_extra = {e.tag: s for _, s, e in holding}  # other words of each element's standard label
    scored = [(n, e) for n, _, e in holding if n <= most]
    if duration is not None and any(e.duration == duration for _, e in scored):
        scored = [(n, e) for n, e in scored if e.duration == duration]
    elif duration is False:
        return out  # "as of June 30" is a balance: never a flow's value
    elif duration and scored:
        whole = any(s == 0 for n, s, _ in holding if n <= most)  # "Goodwill" asked "in Q2": the balance
        flows = [e for _, _, e in holding if e.duration]
        if flows and not whole:
            out.tied = sorted({*flows, *(e for _, e in scored)}, key=lambda e: e.tag)
            return out
        if not whole:
            return out  # "dividends paid in the quarter" is never the balance "Dividends payable"
    if duration is None and not spoken & _CHANGE_WORDS and any(not e.duration for _, e in scored):
        scored = [(n, e) for n, e in scored if not _is_change(e)]  # "accounts payable right now": not its change
    exact = [(n, e) for n, e in scored if e.tag in meaning and std_extra[e.tag] == 0]
    if duration is not None and exact:  # an element whose own standard label is the question's words
        scored = exact
    if any(e.statements & PRIMARY_STATEMENTS for _, e in scored):
        scored = [(n, e) for n, e in scored if e.statements & PRIMARY_STATEMENTS or not e.statements - UNCLASSIFIED]
    if not scored:
        return out
    best = min((n, e.rank) for n, e in scored)
    top = [e for n, e in scored if (n, e.rank) == best]
    if duration is not None and len(top) == 1 and top[0].tag not in meaning:
        # only a filer's line label names the best: an element whose meaning holds the words, one word longer, is
        # as likely the one asked ("Deferred income taxes" on a change in other deferred liabilities, beside the
        # deferred income tax expense)
        top += [e for n, e in scored if e.tag in meaning and n <= best[0] + 1]
    if duration is None and all(e.duration for e in top) and balances:
        # no period said and the best is a flow while a balance holds the words too ("PG&E latest accounts payable":
        # the cash flow statement's "Accounts payable" change or the balance sheet's?): asked back, never a guess
        top += [e for e in balances if e not in top]
    if len(top) == 1:
        if top[0].tag not in remainders:  # a remainder alone is never the answer; beside another it is asked back
            out.found = top[0]
    else:
        out.tied = sorted(top, key=lambda e: e.tag)
    return out


def element_rows(rows: Iterable[dict]) -> list[ElementLabels]:
    """``kg.cypher.COMPANY_CONCEPT_LABELS`` rows as :class:`ElementLabels` (an element whose instant/duration is
    unknown, having no Concept node, is left out: its span cannot be chosen)."""
    out = []
    for r in rows:
        iord = [x for x in r.get("iord") or [] if x]
        if len(set(iord)) != 1:
            continue
        out.append(
            ElementLabels(
                r["tag"],
                tuple(x for x in r.get("labels") or [] if x),
                tuple(x for x in r.get("plabels") or [] if x),
                iord[0] == "D",
                any(bool(x) for x in r.get("custom") or []),
                frozenset(x for x in r.get("stmts") or [] if x),
            )
        )
    return out
