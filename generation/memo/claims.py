"""Memos as claims: fact claims, ratio claims and the desk-risk label, and their gold values.

Source: ../shared/seeds/003_2b4a46a307636297.txt, "Compared systems" ("Each generated memo is
represented internally as claims rather than as opaque prose. A fact claim contains a tag, value,
citation, and support flag. A ratio claim contains a ratio name, computed value, component tags,
and citation policy. A risk-label claim contains the desk-risk category.") and "Numeric
verification" (the four ratios and the four-test risk label: High >= 3 active tests, Medium 1-2,
Low 0). The paper gives no thresholds; finkg's defaults are in :class:`RiskThresholds` and the
``[memo]`` settings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from retrieval.facts import concepts as cc
from retrieval.facts.fact_map import FactMap, ResolvedFact
from retrieval.facts.ratios import RATIO_BY_NAME as RATIO_BY_NAME  # re-exported: the memo rooms read them here
from retrieval.facts.ratios import RATIOS as RATIOS
from retrieval.facts.ratios import Ratio as Ratio

# Fact claims of a memo, in the order the memo states them.
MEMO_FACTS: tuple[str, ...] = (
    "Revenues",
    "NetIncomeLoss",
    "OperatingCashFlow",
    "Cash",
    "CurrentAssets",
    "CurrentLiabilities",
    "Liabilities",
    "Assets",
)


HALLUCINATED_RATIO_ERROR = 0.025  # seed 003: "a ratio whose absolute error exceeds 0.025"


@dataclass(frozen=True)
class RiskThresholds:
    """The four risk tests (a test is active when the ratio crosses its threshold).

    Defaults (finkg's; the paper names the tests, not the cut-offs): current ratio < 1.0,
    leverage > 0.7, operating-cash-flow margin < 0.0, net margin < 0.0.
    """

    current_ratio_floor: float = 1.0
    leverage_ceiling: float = 0.7
    ocf_margin_floor: float = 0.0
    net_margin_floor: float = 0.0

    def active(self, ratios: dict[str, float | None]) -> dict[str, bool | None]:
        """Test name -> active (None when its ratio is not applicable)."""

        def test(name: str, crossed: Callable[[float], bool]) -> bool | None:
            v = ratios.get(name)
            return None if v is None else crossed(v)

        return {
            "weak current ratio": test("current_ratio", lambda v: v < self.current_ratio_floor),
            "high leverage": test("leverage", lambda v: v > self.leverage_ceiling),
            "weak operating-cash-flow margin": test("ocf_margin", lambda v: v < self.ocf_margin_floor),
            "weak net margin": test("net_margin", lambda v: v < self.net_margin_floor),
        }


INSUFFICIENT_DATA = "insufficient data"
"""The label of a memo whose leverage and liquidity cannot be judged (no evidence is not "Low" risk)."""
LEVERAGE_LIQUIDITY: tuple[str, ...] = ("current_ratio", "leverage")
"""The ratios of the liquidity and leverage tests; a label needs at least one of them (or >= 3 active tests)."""


def risk_label(ratios: dict[str, float | None], thresholds: RiskThresholds) -> tuple[str, list[str]]:
    """``(label, active test names)``: High when >= 3 tests are active, Medium for 1-2, Low for 0;
    :data:`INSUFFICIENT_DATA` when fewer than 3 are active and neither the liquidity nor the leverage test
    can be made (both ratios not applicable): missing evidence never reads as Low risk. Tests whose ratio
    is not applicable count as inactive."""
    active = [name for name, on in thresholds.active(ratios).items() if on]
    n = len(active)
    if n < 3 and all(ratios.get(name) is None for name in LEVERAGE_LIQUIDITY):
        return INSUFFICIENT_DATA, active
    return ("High" if n >= 3 else "Medium" if n >= 1 else "Low"), active


def missing_evidence(reasons: dict[str, str]) -> str:
    """The label note of an :data:`INSUFFICIENT_DATA` memo: each leverage/liquidity ratio and why it is
    missing (``reasons``: ratio name -> why not applicable), e.g. ``no liquidity or leverage test can be
    made: current ratio: current assets is not reported; leverage ...: total liabilities is not reported``."""
    parts = [f"{RATIO_BY_NAME[name].label}: {reasons.get(name) or 'not available'}" for name in LEVERAGE_LIQUIDITY]
    return "no liquidity or leverage test can be made: " + "; ".join(parts)


@dataclass
class Claim:
    """One claim of a memo (the unit the verifier and the evaluation work on).

    Attributes:
        n: its marker in the memo text (``[n]``), 1-based.
        kind: ``fact``, ``ratio``, ``label`` or ``not_applicable``.
        name: canonical concept (facts), ratio name (ratios), ``risk_label``.
        value: USD (facts), a fraction (ratios), the label (labels); None when not applicable.
        qtrs, ddate: the span and period end the claim is about (facts and ratios).
        citations: fact keys cited (a ratio cites its components; a derived fact its components).
        citation_labels: the readable evidence keys, same order.
        note: free text shown with the claim (derived formula, not-applicable reason, tests).
        status: after verification ``exact``, ``repaired``, ``unsupported`` or ``not_applicable``;
            ``draft`` before.
        original_value: the drafted value when the verifier repaired it.
        gold_value: the verifier's gold (fact value or recomputed ratio).
        citation_status: ``correct``, ``wrong`` or ``missing`` (set by the verifier/evaluator).
        decimals: the cited fact's XBRL precision (facts).
        flag: a plausibility warning on the fact (a value more than two orders of magnitude from the filer's
            other periods: :func:`retrieval.facts.statements.implausible`), "" when none.
    """

    n: int
    kind: str
    name: str
    value: float | str | None
    qtrs: int | None = None
    ddate: str | None = None
    citations: list[str] = field(default_factory=list)
    citation_labels: list[str] = field(default_factory=list)
    note: str = ""
    status: str = "draft"
    original_value: float | str | None = None
    gold_value: float | str | None = None
    citation_status: str = ""
    decimals: int | None = None
    flag: str = ""

    def record(self) -> dict[str, Any]:
        """A flat dict (citations joined by ``|``) for CSV/JSONL and graph rows."""
        row = asdict(self)
        row["citations"] = "|".join(self.citations)
        row["citation_labels"] = "|".join(self.citation_labels)
        return row


def number(value: float | str | None) -> float:
    """A fact's or ratio's value (a claim's or a gold's) as a float. Drafting sets a value on every
    fact and ratio claim, and callers test a gold for None first; None here is a bug (AssertionError)."""
    assert value is not None, "a fact or ratio value is None"
    return float(value)


@dataclass(frozen=True)
class GoldRatio:
    """A ratio recomputed from the fact map: value (None when not applicable), its numerator and
    denominator facts, and the reason when not applicable."""

    value: float | None
    numerator: ResolvedFact | None = None
    denominator: ResolvedFact | None = None
    reason: str = ""

    @property
    def cited_keys(self) -> list[str]:
        return [k for f in (self.numerator, self.denominator) if f for k in f.cited_keys]


def gold_ratio(fm: FactMap, ratio: Ratio) -> GoldRatio:
    """Recompute ``ratio`` from the filing's verified facts.

    Flows pair figures of the same span: the numerator's headline span (a 10-Q's operating cash
    flow is year-to-date) and revenue over that same span. Not applicable when a component is
    missing or not applicable, or the denominator is zero (or negative revenue).
    """
    num = fm.facts.get(ratio.numerator)
    if num is None:
        why = fm.not_applicable.get(ratio.numerator) or f"{cc.BY_NAME[ratio.numerator].label} is not reported"
        return GoldRatio(None, reason=why)
    if cc.BY_NAME[ratio.denominator].duration:
        den = fm.at_span(ratio.denominator, num.qtrs)
    else:
        den = fm.facts.get(ratio.denominator)
    if den is None:
        why = fm.not_applicable.get(ratio.denominator) or (
            f"{cc.BY_NAME[ratio.denominator].label} is not reported for the same period"
        )
        return GoldRatio(None, num, None, reason=why)
    if den.value == 0 or (ratio.denominator == "Revenues" and den.value < 0):
        return GoldRatio(None, num, den, reason=f"{cc.BY_NAME[ratio.denominator].label} is zero or negative")
    return GoldRatio(num.value / den.value, num, den)


def gold_ratios(fm: FactMap) -> dict[str, GoldRatio]:
    """All four ratios of a filing, recomputed from its fact map."""
    return {r.name: gold_ratio(fm, r) for r in RATIOS}


def gold_label(fm: FactMap, thresholds: RiskThresholds) -> tuple[str, list[str]]:
    """The desk-risk label implied by the filing's verified facts."""
    return risk_label({k: g.value for k, g in gold_ratios(fm).items()}, thresholds)
