"""Find the us-gaap element a question names by its label ("how much goodwill", "accrued liabilities").

Issue 44 ("Measures"): beyond the catalog (:mod:`retrieval.facts.measures`), any element a company reports is
reachable by its label. The candidates are the elements the named companies report in USD, each with its standard
label (tag.txt ``tlabel``) and the filers' own line labels (pre.txt ``plabel``). The rule is strict, so that a
question is never answered with a near miss:

1. The question's content words (:func:`content_words`: the question without the company names the caller found,
   its period words, question words and function words, each singularised) must ALL be words of a label
   ("goodwill impairment" is not answered with ``Goodwill``).
2. Among the labels that hold them all, the one with the fewest other words wins ("goodwill" is ``Goodwill``, not
   ``Goodwill, Impairment Loss``), at most :data:`MAX_EXTRA_WORDS` other words.
3. Two elements tied at that count are asked back, never guessed ("deferred revenue": current or noncurrent?); a
   filer's own extension (custom element) gives way to a us-gaap element tied with it.
"""

from __future__ import annotations

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
    most first second third fourth half q1 q2 q3 q4 fy h1 h2 ytd date dated spend spent paid pay carry carried
    compare compared comparison versus vs higher lower larger smaller bigger more less greater difference
    between than rank ranked order change changed grow grew growth increase increased decrease decreased
    rise rose fall fell percent percentage point points over against which one two both each
    january february march april may june july august september october november december jan feb mar apr
    jun jul aug sep sept oct nov dec three six nine twelve usd dollars dollar million millions billion
    billions thousand"""
_FUNCTION_WORDS = frozenset(_FUNCTION_WORD_TEXT.split())
"""Words a question uses around the element it names (question words, period words, units): never label words."""


def _singular(word: str) -> str:
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
        low = re.sub(rf"\b{re.escape(phrase.lower())}\b", " ", low)
    words = re.findall(r"[a-z]+(?:'[a-z]+)?", low)
    return {_singular(b) for w in words if len(b := w.split("'")[0]) > 1 and b not in _FUNCTION_WORDS}


@dataclass(frozen=True)
class ElementLabels:
    """One element a company reports: its tag, standard labels, filers' line labels, whether it is a flow
    (``duration``: tag.txt ``iord`` ``D``) and whether it is a filer's own extension (``custom``)."""

    tag: str
    labels: tuple[str, ...]
    plabels: tuple[str, ...] = ()
    duration: bool = False
    custom: bool = False

    @property
    def label(self) -> str:
        """How an answer names it: the standard label, else the first line label, else the tag."""
        return (self.labels or self.plabels or (self.tag,))[0]


@dataclass
class LabelMatch:
    """What :func:`match_label` found: ``found`` (one element), ``tied`` (several, to ask back), or neither, and the
    content words it matched (``words``)."""

    words: set[str]
    found: ElementLabels | None = None
    tied: list[ElementLabels] = field(default_factory=list)


def match_label(words: set[str], elements: Sequence[ElementLabels]) -> LabelMatch:
    """The element whose label holds every word of ``words`` with the fewest other words (see the module doc).

    Args:
        words: the question's content words (:func:`content_words`); empty: nothing is matched.
        elements: the candidates (``kg.cypher.COMPANY_CONCEPT_LABELS`` rows).
    """
    out = LabelMatch(set(words))
    if not words:
        return out
    scored: list[tuple[int, ElementLabels]] = []
    for e in elements:
        extras = [len(ws - words) for ws in (content_words(t) for t in (*e.labels, *e.plabels)) if words <= ws]
        if extras and min(extras) <= MAX_EXTRA_WORDS:
            scored.append((min(extras), e))
    if not scored:
        return out
    best = min(n for n, _ in scored)
    top = [e for n, e in scored if n == best]
    standard = [e for e in top if not e.custom]
    top = standard or top
    if len(top) == 1:
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
            )
        )
    return out
