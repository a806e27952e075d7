"""The memo generators of the four systems: what each one claims before verification.

Source: ../shared/seeds/003_2b4a46a307636297.txt, "Compared systems" and Table 4. The paper's
artifact simulated the weaker systems with a "controlled error process"; here nothing is
simulated, each generator is a real procedure whose errors come from its evidence:

- **No-RAG** (:func:`draft_prior_only`): knows the issuer, form, period and SIC code but no filing
  evidence; it writes the industry's typical figures (:class:`Prior`: medians of each concept
  over the filings of the same SIC major group) and cites nothing.
- **Text RAG** (:func:`draft_from_evidence`): reads the top-30 TF-IDF evidence sentences
  (:mod:`retrieval.text.tfidf`) and, for each concept, copies the value of the highest-ranked
  sentence whose tag is one of the concept's synonyms (whatever its period: this is how a text
  reader picks a comparative figure), citing that sentence's key; a concept with no such
  sentence falls back to the prior and is cited to nothing (an unsupported claim). Ratios are
  computed from the copied values.
- **Structured** (:func:`draft_structured`): the canonical filing fact map
  (:mod:`retrieval.facts.fact_map`), ratios recomputed from it, every claim cited to its fact keys.
Verifier RAG and Structured+Verifier pass these drafts through :mod:`generation.verify.claims`.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from generation.memo.claims import (
    INSUFFICIENT_DATA,
    LEVERAGE_LIQUIDITY,
    MEMO_FACTS,
    RATIOS,
    Claim,
    RiskThresholds,
    gold_ratios,
    missing_evidence,
    risk_label,
)
from retrieval.contract import AsOf, as_of_cutoff
from retrieval.facts import concepts as cc
from retrieval.facts.fact_map import FactMap
from retrieval.text.tfidf import Hit

EVIDENCE_PATTERN = re.compile(
    r"^Evidence (?P<citation>\S+)\. .*\((?P<tag>\w+)\) = (?P<value>-?[0-9.eE+]+|nil) (?P<uom>\w+) "
    r"(?:as of (?P<instant>\d{4}-\d{2}-\d{2})|for the (?P<qtrs>\d+) quarter\(s\) ended (?P<end>\d{4}-\d{2}-\d{2}))"
)


@dataclass(frozen=True)
class Choice:
    """What a generator decided to state for one concept."""

    value: float
    qtrs: int
    ddate: str
    citations: tuple[str, ...] = ()
    citation_labels: tuple[str, ...] = ()
    note: str = ""
    decimals: int | None = None
    flag: str = ""


class Prior:
    """Typical figures by industry: the median of each concept's headline value over filings of
    the same SIC major group (``sic // 100``), or over all filings when the group has fewer than
    ``min_group`` filings. The No-RAG generator's only knowledge.

    Point in time: a memo asks for the prior as of its filing's acceptance (:meth:`value`'s ``as_of``);
    only filings public by then count (:attr:`retrieval.facts.fact_map.FactMap.available_at`; undated
    filings never), so a later filing, of the same company or another, never shapes an earlier memo.
    Each (group, concept) keeps its values in availability order with the running median after each one,
    so a lookup is one binary search.
    """

    def __init__(self, maps: Iterable[FactMap], min_group: int = 3):
        by_group: dict[tuple[int | None, str], list[tuple[str, float]]] = defaultdict(list)
        overall: dict[str, list[tuple[str, float]]] = defaultdict(list)
        for fm in maps:
            when = fm.available_at
            if when is None:
                continue
            group = _group(fm.filing.get("sic"))
            for name, f in fm.facts.items():
                by_group[(group, name)].append((when, f.value))
                overall[name].append((when, f.value))
        self.min_group = min_group
        self._group = {k: _running_medians(v) for k, v in by_group.items()}
        self._overall = {k: _running_medians(v) for k, v in overall.items()}

    def value(self, concept: str, sic: int | None, *, as_of: AsOf | None) -> float:
        """The typical value (USD) of ``concept`` for an issuer of industry ``sic`` over the filings public
        at ``as_of`` (0.0 if none).

        Raises:
            AsOfRequired: ``as_of`` is None.
        """
        cutoff = as_of_cutoff(as_of)
        group = _median_at(self._group.get((_group(sic), concept)), cutoff, self.min_group)
        if group is not None:
            return group
        overall = _median_at(self._overall.get(concept), cutoff, 1)
        return 0.0 if overall is None else overall


def _running_medians(items: list[tuple[str, float]]) -> tuple[list[str], list[float]]:
    """Times in order and, after each, the median of the values up to it (``statistics.median``'s)."""
    items.sort(key=lambda t: t[0])
    seen: list[float] = []
    medians: list[float] = []
    for _, v in items:
        bisect.insort(seen, v)
        m = len(seen)
        medians.append(seen[m // 2] if m % 2 else (seen[m // 2 - 1] + seen[m // 2]) / 2)  # statistics.median
    return [t for t, _ in items], medians


def _median_at(series: tuple[list[str], list[float]] | None, cutoff: str, least: int) -> float | None:
    """The median over the values available at ``cutoff`` when there are at least ``least`` of them."""
    if series is None:
        return None
    n = bisect.bisect_right(series[0], cutoff)
    return series[1][n - 1] if n >= max(least, 1) else None


def _group(sic: Any) -> int | None:
    return int(sic) // 100 if sic not in (None, "") else None


def _own_qtrs(filing: dict[str, Any]) -> int:
    return cc.FORM_QUARTERS.get(str(filing.get("form")), 1)


def _claims(
    filing: dict[str, Any],
    choices: dict[str, Choice | None],
    ratio_values: dict[str, tuple[float | None, Sequence[str], Sequence[str], int | None, str]],
    thresholds: RiskThresholds,
    not_applicable: dict[str, str] | None = None,
) -> list[Claim]:
    """Number the claims: the facts of :data:`MEMO_FACTS`, the four ratios, the label."""
    claims: list[Claim] = []
    not_applicable = not_applicable or {}
    for name in MEMO_FACTS:
        ch = choices.get(name)
        n = len(claims) + 1
        if ch is None:
            claims.append(
                Claim(n, "not_applicable", name, None, note=not_applicable.get(name, "not reported for the period"))
            )
        else:
            claims.append(
                Claim(
                    n,
                    "fact",
                    name,
                    ch.value,
                    ch.qtrs,
                    ch.ddate,
                    list(ch.citations),
                    list(ch.citation_labels),
                    ch.note,
                    decimals=ch.decimals,
                    flag=ch.flag,
                )
            )
    values: dict[str, float | None] = {}
    for r in RATIOS:
        value, keys, labels, qtrs, note = ratio_values[r.name]
        values[r.name] = value
        n = len(claims) + 1
        if value is None:
            claims.append(Claim(n, "not_applicable", r.name, None, note=note))
        else:
            ddate = next((c.ddate for c in claims if c.name == r.numerator and c.ddate), filing.get("period"))
            claims.append(Claim(n, "ratio", r.name, value, qtrs, ddate, list(keys), list(labels), note))
    label, active = risk_label(values, thresholds)
    if label == INSUFFICIENT_DATA:
        note = missing_evidence({name: ratio_values[name][4] for name in LEVERAGE_LIQUIDITY})
    else:
        note = "active tests: " + (", ".join(active) if active else "none")
    claims.append(Claim(len(claims) + 1, "label", "risk_label", label, note=note))
    return claims


def _ratios_from_choices(choices: dict[str, Choice | None]):
    out = {}
    for r in RATIOS:
        num, den = choices.get(r.numerator), choices.get(r.denominator)
        if num is None or den is None or den.value == 0:
            out[r.name] = (None, (), (), None, "a component is not available")
        else:
            out[r.name] = (
                num.value / den.value,
                num.citations + den.citations,
                num.citation_labels + den.citation_labels,
                num.qtrs or den.qtrs or None,
                f"{r.numerator} / {r.denominator}",
            )
    return out


def draft_structured(fm: FactMap, thresholds: RiskThresholds) -> list[Claim]:
    """Structured system: claims straight from the canonical fact map, ratios recomputed from it
    (flows paired by span), every claim cited to fact keys; not-applicable concepts say why."""
    choices: dict[str, Choice | None] = {}
    for name in MEMO_FACTS:
        f = fm.facts.get(name)
        if f is None:
            choices[name] = None
            continue
        comps = [c for _, c in f.components]
        notes = [f"derived: {f.formula}"] if f.derived else []
        if f.basis:
            notes.append(f.basis if f.derived else f"reported tag {f.tag}: {f.basis}")
        alts = fm.alternatives.get(name)
        if alts:
            notes.append(f"reported tag {f.tag}; also reported: {', '.join(alts)}")
        choices[name] = Choice(
            f.value,
            f.qtrs,
            f.ddate,
            tuple(f.cited_keys),
            tuple(c.citation for c in comps) if comps else (f.citation,),
            "; ".join(notes),
            f.decimals,
            f.flag,
        )
    ratio_values = {}
    for name, g in gold_ratios(fm).items():
        if g.value is None:
            ratio_values[name] = (None, (), (), None, g.reason)
        else:
            assert g.numerator is not None and g.denominator is not None, "gold_ratio sets both with a value"
            facts = [g.numerator, g.denominator]
            labels = [c.citation for f in facts for c in ([x for _, x in f.components] or [f])]
            ratio_values[name] = (
                g.value,
                g.cited_keys,
                labels,
                g.numerator.qtrs or g.denominator.qtrs or None,
                f"{_tag_name(g.numerator)} / {_tag_name(g.denominator)}",
            )
    return _claims(fm.filing, choices, ratio_values, thresholds, fm.not_applicable)


def _tag_name(f) -> str:
    return f"{f.concept} (derived)" if f.derived else f.tag


def parse_evidence(text: str) -> dict[str, Any] | None:
    """``citation, tag, value, qtrs, ddate`` of an evidence sentence (see :mod:`ingest.sec.evidence`);
    None when the sentence does not have that shape or its value is nil."""
    m = EVIDENCE_PATTERN.match(text)
    if m is None or m["value"] == "nil":
        return None
    date = (m["instant"] or m["end"]).replace("-", "")
    return {
        "citation": m["citation"],
        "tag": m["tag"],
        "value": float(m["value"]),
        "qtrs": int(m["qtrs"] or 0),
        "ddate": date,
        "uom": m["uom"],
    }


def draft_from_evidence(
    filing: dict[str, Any], hits: Sequence[Hit], prior: Prior, thresholds: RiskThresholds, *, as_of: AsOf | None
) -> list[Claim]:
    """Text RAG system: for each memo concept, the highest-ranked retrieved sentence whose tag is
    one of the concept's synonyms (any period, any filing public at ``as_of``); the prior as of
    ``as_of`` when none (uncited).

    Raises:
        AsOfRequired: ``as_of`` is None (a memo's is its filing's acceptance time).
    """
    choices: dict[str, Choice | None] = {}
    parsed = [(h, parse_evidence(h.text)) for h in hits]
    for name in MEMO_FACTS:
        synonyms = cc.BY_NAME[name].synonyms
        found = next(((h, p) for h, p in parsed if p and p["tag"] in synonyms and p["uom"] == "USD"), None)
        if found is None:
            choices[name] = _prior_choice(filing, name, prior, as_of)
        else:
            h, p = found
            choices[name] = Choice(p["value"], p["qtrs"], p["ddate"], (h.fact_key,), (p["citation"],))
    return _claims(filing, choices, _ratios_from_choices(choices), thresholds)


def _prior_choice(filing: dict[str, Any], name: str, prior: Prior, as_of: AsOf | None) -> Choice:
    qtrs = _own_qtrs(filing) if cc.BY_NAME[name].duration else 0
    return Choice(prior.value(name, filing.get("sic"), as_of=as_of), qtrs, str(filing.get("period")))


def draft_prior_only(
    filing: dict[str, Any], prior: Prior, thresholds: RiskThresholds, *, as_of: AsOf | None
) -> list[Claim]:
    """No-RAG system: the industry's typical figures (over the filings public at ``as_of``) for the
    filing's period, no citations.

    Raises:
        AsOfRequired: ``as_of`` is None.
    """
    choices: dict[str, Choice | None] = {name: _prior_choice(filing, name, prior, as_of) for name in MEMO_FACTS}
    return _claims(filing, choices, _ratios_from_choices(choices), thresholds)
