"""The memo ratios: each a numerator over a denominator of canonical concepts.

Source: ../shared/seeds/003_2b4a46a307636297.txt, "Numeric verification" (the four ratios of the
desk-risk memo). Defined here, below the generation rooms, so that the memos
(:mod:`generation.memo.claims`, which re-exports them) and the analyst agent's ``ratio`` tool
(:mod:`generation.agent.facts`) share one definition without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Ratio:
    """A memo ratio = numerator / denominator (canonical concepts); ``style`` is ``x`` or ``%``."""

    name: str
    numerator: str
    denominator: str
    label: str
    style: str


RATIOS: tuple[Ratio, ...] = (
    Ratio("current_ratio", "CurrentAssets", "CurrentLiabilities", "current ratio", "x"),
    Ratio("leverage", "Liabilities", "Assets", "leverage (total liabilities / total assets)", "%"),
    Ratio("net_margin", "NetIncomeLoss", "Revenues", "net margin", "%"),
    Ratio("ocf_margin", "OperatingCashFlow", "Revenues", "operating-cash-flow margin", "%"),
)
RATIO_BY_NAME: dict[str, Ratio] = {r.name: r for r in RATIOS}
