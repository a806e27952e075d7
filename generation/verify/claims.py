"""The numeric verifier: every number in a memo body checked against the filing's facts.

Source: ../shared/seeds/003_2b4a46a307636297.txt, "Numeric verification and evaluation metrics":
"A fact claim is exact when the absolute difference is no greater than one dollar or 0.01% of the
gold value, whichever is larger. Ratio claims are recomputed from verified components ... The
verifier writes a repair record whenever a generated number differs from the gold fact or
recomputed ratio", and "If the evidence key is missing, the verifier marks the citation
incomplete even when the number is correct."

How the body is checked (it may come from the deterministic renderer or from an LLM):

1. The body is split into sentences; each sentence's markers ``[n]`` name the claims it states.
2. Every number mention (:func:`generation.verify.numbers.find_numbers`: currency with scale words,
   parentheses as negatives, percentages, ``x`` ratios, dates, years) is matched:
   - an amount against the gold value of a cited fact claim, with tolerance
     ``max($1, 0.01% of gold, half a unit of the fact's XBRL decimals)``;
   - a percentage or ``x`` ratio against the cited ratio recomputed from the gold facts; exact
     when it equals the gold ratio rounded to the digits shown (at least 2 decimals for ``x``,
     1 for percentages);
   - a date or year against the cited facts' period end; "three/six/nine/twelve months" against
     their span; ``High/Medium/Low`` against the label recomputed from the gold ratios.
3. A number that matches is ``exact``. One that does not, in a sentence that cites a claim of
   its kind, is ``repaired``: replaced in the text by the gold value, with a repair record
   (original text and value, gold value, claim, evidence keys). A number that no cited claim and
   no fact of the filing supports is ``unsupported``: it is taken out of the text (replaced by
   ``[unsupported number removed]``) and recorded.
4. Citations: a claim cites correctly when its fact keys are the gold keys. With ``repair``, a
   wrong or missing citation is replaced by the gold keys when they are among the evidence the
   system had (``available_keys``); otherwise it stays marked ``wrong``/``missing``.

With ``repair=False`` nothing is changed: the same checks label an unverified system's draft.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from generation.memo.claims import RATIO_BY_NAME, Claim, RiskThresholds, gold_label, gold_ratios, number
from generation.verify.numbers import (
    NumberMention,
    find_numbers,
    format_percent,
    format_ratio,
    format_usd,
    replace_span,
    rounding_tolerance,
)
from retrieval.facts.concepts import iso_date
from retrieval.facts.fact_map import FactMap

SPAN_WORDS = {1: "three months", 2: "six months", 3: "nine months", 4: "twelve months"}
SPAN_PATTERN = re.compile(r"\b(three|six|nine|twelve) months\b", re.IGNORECASE)
LABEL_PATTERN = re.compile(r"\b(High|Medium|Low|insufficient data)\b", re.IGNORECASE)
LABEL_AFTER = re.compile(r"\blabel\W+(?:is\W+|of\W+)?(High|Medium|Low|insufficient data)\b", re.IGNORECASE)
LABEL_CONTEXT = re.compile(r"\b(label|risk rating|risk level)\b", re.IGNORECASE)
MARKER = re.compile(r"\[(\d+)\]")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\-*#])|\n+")
REMOVED = "[unsupported number removed]"
AMOUNT_KINDS = ("currency", "number")
RATIO_KINDS = ("percent", "ratio")


def span_words(qtrs: int) -> str:
    """``1`` -> ``three months`` ... ``4`` -> ``twelve months``; other spans ``N quarters``."""
    return SPAN_WORDS.get(qtrs, f"{qtrs} quarters")


def fact_tolerance(gold: float, decimals: int | None = None) -> float:
    """The paper's tolerance, max($1, 0.01% of |gold|), widened to half a unit of the source's
    XBRL ``decimals`` when given (``decimals=-6``: the source itself is rounded to millions)."""
    tol = max(1.0, 1e-4 * abs(gold))
    if decimals is not None:
        tol = max(tol, 0.5 * 10.0 ** (-decimals))
    return tol


def ratio_tolerance(m: NumberMention) -> float:
    """Half a unit of the shown digits, but no coarser than 2 decimals (``x``) / 1 decimal (%)."""
    cap = 0.005 if m.kind == "ratio" else 0.0005
    return min(rounding_tolerance(m), cap) + 1e-12


@dataclass
class Gold:
    """What a claim should say: value (USD, fraction or label), cited keys, period end, span."""

    value: float | str | None
    keys: list[str]
    labels: list[str]
    ddate: str | None = None
    qtrs: int | None = None
    decimals: int | None = None
    reason: str = ""


@dataclass
class NumberCheck:
    """The verdict on one number mention of the body.

    Attributes:
        sentence: index of the sentence; text: the mention as written; kind: the mention kind.
        value: the written value (base units); status: ``exact``, ``repaired`` or ``unsupported``.
        claim: the claim it was matched to (marker number), or None.
        gold: the gold value; replacement: the text written instead (repairs and removals).
        keys: the evidence keys that support the gold value.
    """

    sentence: int
    text: str
    kind: str
    value: float | str | None
    status: str
    claim: int | None = None
    gold: float | str | None = None
    replacement: str | None = None
    keys: list[str] = field(default_factory=list)
    reason: str = ""


@dataclass
class Verification:
    """A verified memo body: the (repaired) text, every number's verdict, the repair records."""

    body: str
    checks: list[NumberCheck]
    repairs: list[dict[str, Any]]
    claims: list[Claim]

    def counts(self) -> dict[str, int]:
        """Number mentions per status, plus claims with correct/wrong/missing citations."""
        out = {"exact": 0, "repaired": 0, "unsupported": 0}
        for c in self.checks:
            out[c.status] += 1
        for c in self.claims:
            if c.citation_status:
                out[f"citation_{c.citation_status}"] = out.get(f"citation_{c.citation_status}", 0) + 1
        return out


def gold_for_claims(claims: Sequence[Claim], fm: FactMap, thresholds: RiskThresholds) -> dict[int, Gold]:
    """Gold per claim marker: the fact map's fact for a fact claim, the recomputed ratio for a
    ratio claim, the recomputed label for the label; value None when it does not apply."""
    ratios = gold_ratios(fm)
    out: dict[int, Gold] = {}
    for c in claims:
        if c.kind == "label":
            out[c.n] = Gold(gold_label(fm, thresholds)[0], [], [])
        elif c.name in RATIO_BY_NAME:
            g = ratios[c.name]
            if g.value is None:
                out[c.n] = Gold(None, [], [], reason=g.reason)
            else:
                assert g.numerator is not None and g.denominator is not None, "gold_ratio sets both with a value"
                labels = [
                    x.citation for f in (g.numerator, g.denominator) for x in ([y for _, y in f.components] or [f])
                ]
                out[c.n] = Gold(
                    g.value, g.cited_keys, labels, g.numerator.ddate, g.numerator.qtrs or g.denominator.qtrs or None
                )
        else:
            f = fm.facts.get(c.name)
            if f is None:
                out[c.n] = Gold(None, [], [], reason=fm.not_applicable.get(c.name, "not reported"))
            else:
                labels = [x.citation for _, x in f.components] or [f.citation]
                out[c.n] = Gold(f.value, f.cited_keys, labels, f.ddate, f.qtrs, f.decimals)
    return out


def _fact_match(value: float, gold: Gold) -> bool:
    return isinstance(gold.value, float) and abs(value - gold.value) <= fact_tolerance(gold.value, gold.decimals)


def _ratio_match(m: NumberMention, gold: Gold) -> bool:
    return isinstance(gold.value, float) and abs(m.value - gold.value) <= ratio_tolerance(m)


def _format_like(m: NumberMention, gold: Gold) -> str:
    if m.kind == "ratio":
        return format_ratio(number(gold.value), max(2, m.decimals_shown))
    if m.kind == "percent":
        return format_percent(number(gold.value), max(1, m.decimals_shown))
    return format_usd(number(gold.value), fact_tolerance(number(gold.value), gold.decimals))


def verify_body(
    body: str,
    claims: Sequence[Claim],
    fm: FactMap,
    thresholds: RiskThresholds,
    repair: bool = True,
    available_keys: Collection[str] | None = None,
) -> Verification:
    """Verify (and with ``repair``, repair) every number of a memo body.

    Args:
        body: the memo body (no header, no evidence list), sentences carrying ``[n]`` markers.
        claims: the memo's claims, by marker ``n``; updated in place with status, gold value,
            original value and citation status.
        fm: the filing's canonical fact map (the gold table).
        thresholds: the risk tests (for the recomputed label).
        repair: replace wrong numbers and citations; False only labels them.
        available_keys: fact keys the system had as evidence (citations can be repaired only to
            these); None means every fact of the filing (the structured system).

    Returns:
        :class:`Verification` with the final body, one :class:`NumberCheck` per mention and the
        repair records (dicts with ``claim, concept, field, original, gold, keys, reason``).
    """
    by_n = {c.n: c for c in claims}
    golds = gold_for_claims(claims, fm, thresholds)
    facts_of_filing = [
        Gold(float(r["value"]), [r["key"]], [r["citation"]], r["ddate"], r["qtrs"], r.get("decimals"))
        for r in fm.raw.values()
    ]
    ratio_golds = [golds[c.n] for c in claims if c.name in RATIO_BY_NAME and golds[c.n].value is not None]
    label_claim = next((c for c in claims if c.kind == "label"), None)
    checks: list[NumberCheck] = []
    repairs: list[dict[str, Any]] = []
    touched: dict[int, list[str]] = {}
    pieces = _split(body)
    out_pieces = []
    for si, (sentence, sep) in enumerate(pieces):
        cited = [by_n[int(x)] for x in MARKER.findall(sentence) if int(x) in by_n]
        edits: list[tuple[NumberMention, str]] = []
        for m in find_numbers(sentence):
            check = _check(si, m, cited, golds, facts_of_filing, ratio_golds)
            checks.append(check)
            if check.status == "exact":
                continue
            if check.claim is not None:
                touched.setdefault(check.claim, []).append(check.status)
            if repair:
                edits.append((m, check.replacement or REMOVED))
                repairs.append(
                    {
                        "claim": check.claim,
                        "concept": by_n[check.claim].name if check.claim else None,
                        "field": m.kind,
                        "original": m.text,
                        "original_value": check.value,
                        "gold": check.gold,
                        "replacement": check.replacement or REMOVED,
                        "keys": check.keys,
                        "reason": check.reason,
                    }
                )
        for m, new in sorted(edits, key=lambda e: e[0].start, reverse=True):
            sentence = replace_span(sentence, m, new)
        sentence = _check_words(si, sentence, cited, golds, checks, repairs, touched, repair, label_claim)
        out_pieces.append(sentence + sep)
    _settle_claims(claims, golds, touched, repair, available_keys, repairs)
    return Verification("".join(out_pieces), checks, repairs, list(claims))


def _split(body: str) -> list[tuple[str, str]]:
    """Sentences with the separator that followed each (so the text is rebuilt unchanged)."""
    out, pos = [], 0
    for m in SENTENCE_END.finditer(body):
        out.append((body[pos : m.start()], m.group(0)))
        pos = m.end()
    out.append((body[pos:], ""))
    return out


def _check(
    si: int,
    m: NumberMention,
    cited: list[Claim],
    golds: dict[int, Gold],
    facts_of_filing: list[Gold],
    ratio_golds: list[Gold],
) -> NumberCheck:
    if m.kind in ("date", "year"):
        dates = {iso_date(golds[c.n].ddate) for c in cited if golds[c.n].ddate}
        shown = m.iso_date if m.kind == "date" else m.text
        assert shown is not None, "find_numbers sets iso_date on every date mention"
        ok = any((d == shown) if m.kind == "date" else d.startswith(shown) for d in dates)
        if ok:
            return NumberCheck(si, m.text, m.kind, shown, "exact")
        if not cited and any(
            ((iso_date(g.ddate) == shown) if m.kind == "date" else str(g.ddate).startswith(shown))
            for g in facts_of_filing
        ):
            return NumberCheck(
                si, m.text, m.kind, shown, "exact", reason="a period end of the filing's facts; the sentence cites none"
            )
        if len(dates) == 1 and m.kind == "date":
            c = next(c for c in cited if golds[c.n].ddate)
            return NumberCheck(
                si,
                m.text,
                m.kind,
                shown,
                "repaired",
                c.n,
                dates.pop(),
                iso_date(golds[c.n].ddate),
                golds[c.n].labels,
                "period end differs from the cited fact",
            )
        return NumberCheck(si, m.text, m.kind, shown, "unsupported", reason="no cited fact has this period")
    ratio_kind = m.kind in RATIO_KINDS
    candidates = [c for c in cited if (c.kind == "ratio") == ratio_kind and c.kind in ("fact", "ratio")]
    for c in candidates:
        g = golds[c.n]
        if _ratio_match(m, g) if ratio_kind else _fact_match(m.value, g):
            return NumberCheck(si, m.text, m.kind, m.value, "exact", c.n, g.value, keys=g.labels)
    with_gold = [c for c in candidates if golds[c.n].value is not None]
    if with_gold:
        c = with_gold[0]
        g = golds[c.n]
        return NumberCheck(
            si,
            m.text,
            m.kind,
            m.value,
            "repaired",
            c.n,
            g.value,
            _format_like(m, g),
            g.labels,
            "differs from the recomputed ratio" if ratio_kind else "differs from the cited fact",
        )
    claim_n = candidates[0].n if candidates else None
    # an uncited match: any recomputed ratio (only when no ratio is cited; claim_n is then None),
    # any fact of the filing
    if ratio_kind:
        uncited, why = ([] if candidates else ratio_golds), "equals a recomputed ratio that the sentence does not cite"
    else:
        uncited, why = facts_of_filing, "matches a fact of the filing that the sentence does not cite"
    for g in uncited:
        if _ratio_match(m, g) if ratio_kind else _fact_match(m.value, g):
            return NumberCheck(si, m.text, m.kind, m.value, "exact", claim_n, g.value, keys=g.labels, reason=why)
    reason = (
        golds[claim_n].reason
        if claim_n is not None and golds[claim_n].reason
        else "no cited fact or recomputed ratio supports it"
    )
    return NumberCheck(si, m.text, m.kind, m.value, "unsupported", claim_n, reason=reason)


def _check_words(
    si: int,
    sentence: str,
    cited: list[Claim],
    golds: dict[int, Gold],
    checks: list[NumberCheck],
    repairs: list[dict[str, Any]],
    touched: dict[int, list[str]],
    repair: bool,
    label_claim: Claim | None = None,
) -> str:
    """Span words ("six months") against the cited claims, and the risk label word (any case) in
    every sentence that cites the label claim or speaks of a label or risk rating."""
    flows = [c for c in cited if golds[c.n].qtrs]
    for m in list(SPAN_PATTERN.finditer(sentence))[::-1]:
        if not flows:
            break
        gold_words = {span_words(int(golds[c.n].qtrs or 0)) for c in flows}
        if m.group(0).lower() in gold_words:
            checks.append(NumberCheck(si, m.group(0), "span", m.group(0), "exact", flows[0].n))
            continue
        c = flows[0]
        new = span_words(int(golds[c.n].qtrs or 0))
        checks.append(
            NumberCheck(
                si,
                m.group(0),
                "span",
                m.group(0),
                "repaired",
                c.n,
                new,
                new,
                golds[c.n].labels,
                "span differs from the cited fact",
            )
        )
        touched.setdefault(c.n, []).append("repaired")
        if repair:
            repairs.append(
                {
                    "claim": c.n,
                    "concept": c.name,
                    "field": "span",
                    "original": m.group(0),
                    "original_value": m.group(0),
                    "gold": new,
                    "replacement": new,
                    "keys": golds[c.n].labels,
                    "reason": "span differs from the cited fact",
                }
            )
            sentence = sentence[: m.start()] + new + sentence[m.end() :]
    speaks = [label_claim] if label_claim is not None and LABEL_CONTEXT.search(sentence) else []
    for c in [x for x in cited if x.kind == "label"] or speaks:
        m = LABEL_AFTER.search(sentence) or LABEL_PATTERN.search(sentence)
        if m is None:
            continue
        gold = str(golds[c.n].value)
        if m.group(1).lower() == gold.lower():
            checks.append(NumberCheck(si, m.group(1), "label", m.group(1), "exact", c.n, gold))
            continue
        checks.append(
            NumberCheck(
                si,
                m.group(1),
                "label",
                m.group(1),
                "repaired",
                c.n,
                gold,
                gold,
                reason="label differs from the one the verified ratios imply",
            )
        )
        touched.setdefault(c.n, []).append("repaired")
        if repair:
            repairs.append(
                {
                    "claim": c.n,
                    "concept": "risk_label",
                    "field": "label",
                    "original": m.group(1),
                    "original_value": m.group(1),
                    "gold": gold,
                    "replacement": gold,
                    "keys": [],
                    "reason": "label differs from the one the verified ratios imply",
                }
            )
            sentence = sentence[: m.start(1)] + gold + sentence[m.end(1) :]
    return sentence


def _settle_claims(
    claims: Sequence[Claim],
    golds: dict[int, Gold],
    touched: dict[int, list[str]],
    repair: bool,
    available_keys: Collection[str] | None,
    repairs: list[dict[str, Any]],
) -> None:
    """Each claim's status, gold value and citation status after the checks (in place)."""
    for c in claims:
        g = golds[c.n]
        c.gold_value = g.value
        if c.kind == "not_applicable":
            c.status = "not_applicable" if g.value is None else "unsupported"
            c.citation_status = ""
            continue
        if g.value is None:
            c.status = "unsupported"
        elif c.kind == "label":
            c.status = "exact" if c.value == g.value else "repaired"
        elif c.kind == "ratio":
            c.status = "exact" if abs(number(c.value) - float(g.value)) <= 0.0005 else "repaired"
        else:
            c.status = "exact" if _fact_match(number(c.value), g) else "repaired"
        if "repaired" in touched.get(c.n, []) or "unsupported" in touched.get(c.n, []):
            c.status = "repaired" if g.value is not None else "unsupported"
        if c.kind == "label":
            c.citation_status = ""
        elif set(c.citations) == set(g.keys) and g.keys:
            c.citation_status = "correct"
        else:
            c.citation_status = "missing" if not c.citations else "wrong"
        if not repair:
            continue
        if c.status == "repaired":
            c.original_value, c.value = c.value, g.value
            if c.kind != "label":
                c.ddate, c.qtrs, c.decimals = g.ddate, g.qtrs, g.decimals
        if (c.citation_status in ("wrong", "missing") and g.keys) and (
            available_keys is None or set(g.keys) <= set(available_keys)
        ):
            repairs.append(
                {
                    "claim": c.n,
                    "concept": c.name,
                    "field": "citation",
                    "original": "|".join(c.citations),
                    "original_value": None,
                    "gold": "|".join(g.keys),
                    "replacement": "|".join(g.labels),
                    "keys": g.labels,
                    "reason": f"citation {c.citation_status}",
                }
            )
            c.citations, c.citation_labels = list(g.keys), list(g.labels)
            c.citation_status = "correct"
