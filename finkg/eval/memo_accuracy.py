"""Exactness and completeness of memos against an independent gold (issue 19 part 3, seed 003's tables).

Source: ../shared/seeds/003_2b4a46a307636297.txt, "Numeric verification and evaluation metrics" (numeric
exactness; "A fact claim is exact when the absolute difference is no greater than one dollar or 0.01% of the
gold value, whichever is larger") and Tables 6, 9 and 11 (exactness, latency per system). Unlike
:mod:`finkg.eval.memos`, whose gold is the fact map the same code selected, the gold here comes from outside
finkg (``tests/gold/fsds_memo_gold.py``: plain pandas over the quarter's sub/num/pre files), so a wrong fact
choice counts as a miss.

What is scored is the memo **as written**: the numbers of its body, each tied to the claim whose marker
``[n]`` ends its sentence (the deterministic renderer writes one claim per bullet; an LLM's sentences may cite
several, and a number is then tied to the cited claim of its kind whose value it is nearest to). Per filing
and item (:data:`ITEMS`: eight facts and four ratios), one :class:`ItemOutcome`:

- ``exact``: the memo states the item and the gold has it, and the number as written (``$477.5 million``)
  is within seed 003's tolerance of the gold, max($1, 0.01% of the gold), for amounts; for ratios within
  half a unit of the shown digits, shown to at least 0.1 percentage point (``%``) or 0.01 (``x``);
- ``wrong_fact``: the memo's claim value itself differs from the gold beyond the seed's tolerance
  (max($1, 0.01%) for facts, 0.0005 for ratios); ``detail`` says how (span, period, tag, derivation,
  amendment, entity);
- ``rounding``: the claim value is right but the text shows it too coarsely or rounds it wrongly (the shown
  number is at most one unit of its last shown digit from the gold);
- ``miscopied``: the claim value is right but the text states another number (an LLM's copying error, or a
  number changed after rendering);
- ``missing``: the gold has the item, the memo states no number for it;
- ``extra``: the memo states a number, the gold has none ("gold has none");
- ``none``: neither has it (not a miss).

Rates (:func:`summarize`): **exact-number rate** = exact / items the memo states a number for (so an extra
number counts against it), **completeness** = gold items the memo states / gold items, **exact of gold** =
exact / gold items; each with a 95% percentile-bootstrap interval over items
(:func:`finkg.eval.metrics.intervals.bootstrap_mean`); **ms per memo** with its interval over memos.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from finkg.eval.metrics.intervals import bootstrap_mean
from generation.memo.claims import MEMO_FACTS, RATIOS, Claim, number
from generation.verify.numbers import NumberMention, find_numbers, rounding_tolerance

FACT_ITEMS: tuple[str, ...] = MEMO_FACTS  # the facts a memo states, in its order
RATIO_ITEMS: tuple[str, ...] = tuple(r.name for r in RATIOS)
ITEMS: tuple[str, ...] = (*FACT_ITEMS, *RATIO_ITEMS)
OUTCOMES: tuple[str, ...] = ("exact", "wrong_fact", "rounding", "miscopied", "missing", "extra", "none")
MISSES: tuple[str, ...] = ("wrong_fact", "rounding", "miscopied", "missing", "extra")
STATED = ("exact", "wrong_fact", "rounding", "miscopied", "extra")
GOLD_STATED = ("exact", "wrong_fact", "rounding", "miscopied")
RATIO_TOLERANCE = 0.0005  # finkg's ratio exactness (finkg.eval.memos): a percentage shown to 0.1
RATIO_PRECISION = {"percent": 0.0005 + 1e-12, "ratio": 0.005 + 1e-12}
_MARKER = re.compile(r"\[(\d+)\]")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True)
class GoldItem:
    """One gold item of one filing (a row of ``tests/gold/fsds_memo_gold.gold_items``).

    Attributes:
        adsh, item: the filing and the item (:data:`ITEMS`); kind: ``fact`` or ``ratio``.
        value: USD (facts) or a fraction (ratios). tag: the us-gaap tag, ``derived``, or ``A / B`` (ratios).
        qtrs, ddate: span in quarters (0: instant) and period end ``YYYYMMDD``.
        rule: how the gold was found; mezzanine: tags subtracted as temporary equity (``|``-joined).
        source_adsh: the filing whose rows gave the value (the latest amendment of the period).
        own_value: the filing's own value (NaN when it has none); entity: ``consolidated`` or ``ParentCompany``.
    """

    adsh: str
    item: str
    kind: str
    value: float
    tag: str = ""
    qtrs: int = 0
    ddate: str = ""
    rule: str = ""
    mezzanine: str = ""
    source_adsh: str = ""
    own_value: float = math.nan
    entity: str = "consolidated"


@dataclass
class ItemOutcome:
    """How one memo did on one item (see the module docstring for ``outcome``)."""

    system: str
    adsh: str
    item: str
    outcome: str
    gold: float | None = None
    stated: float | None = None
    stated_text: str = ""
    claim_value: float | None = None
    memo_tag: str = ""
    gold_tag: str = ""
    detail: str = ""

    def record(self) -> dict[str, Any]:
        """A flat dict for the results file."""
        return asdict(self)


def stated_numbers(body: str, claims: Sequence[Claim]) -> dict[str, tuple[NumberMention, Claim]]:
    """Item -> the number the body states for it and the claim it is tied to (module docstring).

    A sentence's numbers are tied to the fact and ratio claims its markers cite: amounts (currency or plain
    numbers) to facts, percentages and ``x`` ratios (or plain numbers) to ratios; each claim takes the
    candidate nearest to its own value, and an item cited in several sentences keeps the nearest overall.
    Dates, years and markers are not candidates.
    """
    by_n = {c.n: c for c in claims}
    best: dict[str, tuple[float, NumberMention, Claim]] = {}
    for sentence in _SENTENCE.split(body):
        cited = [by_n[int(m)] for m in _MARKER.findall(sentence) if int(m) in by_n]
        cited = [c for c in cited if c.kind in ("fact", "ratio") and c.value is not None]
        if not cited:
            continue
        text = _MARKER.sub(lambda m: " " * len(m.group(0)), sentence)
        mentions = [m for m in find_numbers(text) if m.kind in ("currency", "number", "percent", "ratio")]
        for c in cited:
            kinds = ("currency", "number") if c.kind == "fact" else ("percent", "ratio", "number")
            value = number(c.value)
            for m in mentions:
                if m.kind not in kinds:
                    continue
                distance = abs(m.value - value) / max(abs(value), 1e-12)
                if c.name not in best or distance < best[c.name][0]:
                    best[c.name] = (distance, m, c)
    return {name: (m, c) for name, (_, m, c) in best.items()}


def is_exact(m: NumberMention, gold: float, kind: str) -> bool:
    """The stated number equals the gold: amounts within seed 003's tolerance max($1, 0.01% of |gold|);
    ratios within half a unit of the shown digits, shown to at least 0.1 percentage point (``%``) or 0.01
    (``x``)."""
    diff = abs(m.value - gold)
    if kind == "fact":
        return diff <= max(1.0, 1e-4 * abs(gold)) + 1e-9 * abs(gold)
    half = rounding_tolerance(m)
    return diff <= half + 1e-9 and half <= RATIO_PRECISION.get(m.kind, RATIO_PRECISION["percent"])


def memo_tag(claim: Claim) -> str:
    """The tag a claim cites (``derived`` for a derived fact, ``A / B`` for a ratio), from its evidence keys
    ``adsh:cik:tag:ddate:qtrs:uom``."""
    tags = [label.split(":")[2] for label in claim.citation_labels if label.count(":") >= 5]
    if claim.kind == "ratio":
        return " / ".join(tags)
    if claim.note.startswith("derived") or len(tags) > 1:
        return "derived"
    return tags[0] if tags else ""


def _gold_text(g: GoldItem) -> str:
    """What the gold is and where it came from, for a miss's detail."""
    text = f"gold {g.tag}"
    if g.rule not in ("tag", "ratio of gold facts", "") and not g.rule.startswith("LiabilitiesAndStockholders"):
        text += f" ({g.rule})"
    if g.entity != "consolidated":
        text += f"; gold entity {g.entity} (every fact of the filing names a co-registrant)"
    return text


def _why_wrong(claim: Claim, g: GoldItem, adsh: str) -> str:
    reasons = []
    if claim.qtrs is not None and g.kind == "fact" and (claim.qtrs or 0) != g.qtrs:
        reasons.append(f"span {claim.qtrs} vs gold {g.qtrs} quarters")
    if claim.ddate and g.ddate and str(claim.ddate) != g.ddate:
        reasons.append(f"period {claim.ddate} vs gold {g.ddate}")
    if g.source_adsh and adsh not in g.source_adsh.split("|"):
        reasons.append(f"gold from the later amendment {g.source_adsh}")
    tag = memo_tag(claim)
    if g.tag == "derived" and g.mezzanine:
        reasons.append(f"temporary equity between liabilities and equity not subtracted ({g.mezzanine})")
    elif tag != g.tag:
        reasons.append(f"tag {tag or 'none'} vs gold {g.tag}")
    if g.entity != "consolidated":
        reasons.append(f"gold entity {g.entity}")
    if not reasons:
        reasons.append(f"same tag, different value; {_gold_text(g)}")
    return "; ".join(reasons)


def score_memo(
    system: str,
    adsh: str,
    body: str,
    claims: Sequence[Claim],
    gold: Mapping[str, GoldItem],
) -> list[ItemOutcome]:
    """One :class:`ItemOutcome` per item of :data:`ITEMS` for the memo ``body`` (with its ``claims``) of
    filing ``adsh`` against that filing's ``gold`` (item -> :class:`GoldItem`; absent: the gold has none)."""
    stated = stated_numbers(body, claims)
    by_name = {c.name: c for c in claims}
    out = []
    for item in ITEMS:
        g = gold.get(item)
        hit = stated.get(item)
        o = ItemOutcome(system, adsh, item, "none", gold=None if g is None else g.value)
        if g is not None:
            o.gold_tag = g.tag
        if hit is None:
            if g is not None:
                c = by_name.get(item)
                o.outcome = "missing"
                why = (c.note if c is not None and c.kind == "not_applicable" else "") or "no number stated"
                o.detail = f"{why}; {_gold_text(g)}"
            out.append(o)
            continue
        m, c = hit
        o.stated, o.stated_text, o.claim_value, o.memo_tag = m.value, m.text, number(c.value), memo_tag(c)
        if g is None:
            o.outcome, o.detail = "extra", "the gold has none"
        elif is_exact(m, g.value, g.kind):
            o.outcome = "exact"
        else:
            tolerance = max(1.0, 1e-4 * abs(g.value)) if g.kind == "fact" else RATIO_TOLERANCE
            if abs(o.claim_value - g.value) <= tolerance:
                near = abs(m.value - g.value) <= 2 * rounding_tolerance(m) + 1e-9 * max(abs(g.value), 1.0)
                o.outcome = "rounding" if near else "miscopied"
                o.detail = f"claim {o.claim_value:g} is right; the text shows {m.text!r}"
            else:
                o.outcome, o.detail = "wrong_fact", _why_wrong(c, g, adsh)
        out.append(o)
    return out


def _rate(flags: Sequence[float]) -> dict[str, Any]:
    if not flags:
        return {"mean": None, "ci_low": None, "ci_high": None, "n": 0}
    return bootstrap_mean(flags).as_dict()


def summarize(outcomes: Sequence[ItemOutcome], latency_ms: Mapping[str, Sequence[float]]) -> dict[str, Any]:
    """Per system: exact-number rate, completeness, exact of gold (each mean, 95% interval, n), ms per memo
    (mean, interval, n), memos, filings with every item exact, misses by cause, and per item the exact rate
    and completeness. ``latency_ms``: system -> the generation time of each of its memos."""
    out: dict[str, Any] = {}
    for system in dict.fromkeys(o.system for o in outcomes):
        ss = [o for o in outcomes if o.system == system]
        by_filing: dict[str, list[ItemOutcome]] = {}
        for o in ss:
            by_filing.setdefault(o.adsh, []).append(o)
        per_item = {}
        for item in ITEMS:
            xs = [o for o in ss if o.item == item]
            stated = [o for o in xs if o.outcome in STATED]
            gold = [o for o in xs if o.outcome in (*GOLD_STATED, "missing")]
            per_item[item] = {
                "exact_rate": sum(o.outcome == "exact" for o in stated) / len(stated) if stated else None,
                "completeness": sum(o.outcome in GOLD_STATED for o in gold) / len(gold) if gold else None,
                "stated": len(stated),
                "gold": len(gold),
                **{k: sum(o.outcome == k for o in xs) for k in MISSES},
            }
        stated = [o for o in ss if o.outcome in STATED]
        gold = [o for o in ss if o.outcome in (*GOLD_STATED, "missing")]
        lat = list(latency_ms.get(system, []))
        out[system] = {
            "memos": len(by_filing),
            "items": len(ss),
            "exact_rate": _rate([float(o.outcome == "exact") for o in stated]),
            "completeness": _rate([float(o.outcome in GOLD_STATED) for o in gold]),
            "exact_of_gold": _rate([float(o.outcome == "exact") for o in gold]),
            "ms_per_memo": _rate(lat),
            "filings_all_exact": sum(all(o.outcome in ("exact", "none") for o in v) for v in by_filing.values()),
            "misses": dict(Counter(o.outcome for o in ss if o.outcome in MISSES)),
            "per_item": per_item,
        }
    return out


def top_causes(outcomes: Sequence[ItemOutcome], system: str, top: int = 15) -> list[dict[str, Any]]:
    """``system``'s misses grouped by (outcome, detail), most frequent first: ``cause, items`` (those the group
    covers), ``detail``, ``count``, ``filings``, ``gold_tags`` (the most common, with counts) and an
    ``example`` filing. Accessions, periods, quoted labels and gold tag names are generalised in the detail
    (the tags are listed in ``gold_tags``) so that alike misses group together."""
    groups: dict[tuple[str, str], list[ItemOutcome]] = {}
    for o in outcomes:
        if o.system != system or o.outcome not in MISSES:
            continue
        detail = re.sub(r"\d{10}-\d{2}-\d{6}", "ADSH", o.detail)
        detail = re.sub(r"claim .* is right; the text shows .*", "claim right, text differs", detail)
        detail = re.sub(r"period \d+ vs gold \d+", "period differs", detail)
        detail = re.sub(r"line '.*?' \(pre", "line '...' (pre", detail)
        detail = re.sub(r"not subtracted \([^)]*\)", "not subtracted (TAG)", detail)
        detail = re.sub(r"\bgold (?!entity|from)[A-Za-z]+(?: / [A-Za-z]+)?", "gold TAG", detail)
        groups.setdefault((o.outcome, detail), []).append(o)
    rows = [
        {
            "cause": cause,
            "items": ", ".join(dict.fromkeys(o.item for o in v)),
            "detail": detail,
            "count": len(v),
            "filings": len({o.adsh for o in v}),
            "gold_tags": ", ".join(
                f"{t} ({n})" for t, n in Counter(o.gold_tag for o in v if o.gold_tag).most_common(4)
            ),
            "example": v[0].adsh,
        }
        for (cause, detail), v in groups.items()
    ]
    return sorted(rows, key=lambda r: (-r["count"], r["cause"], r["detail"]))[:top]


def top_causes_of_records(records: Sequence[Mapping[str, Any]], system: str, top: int = 15) -> list[dict[str, Any]]:
    """:func:`top_causes` over miss records as the results file keeps them (:meth:`ItemOutcome.record`)."""
    return top_causes([ItemOutcome(**r) for r in records], system, top)
