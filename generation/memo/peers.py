"""A filer's liquidity and leverage against its SIC peers of the same quarter (the memo's peer picture).

Issue 20, part 4 ("each memo shows the filer's leverage and liquidity against its SIC peers in the same
quarter"). The two ratios are the memo's own (:func:`generation.memo.claims.gold_ratio`: current ratio =
current assets / current liabilities, leverage = total liabilities / total assets, on the filing's
canonical fact map), so the picture shows exactly the figures the memo states.

**Peers** of a filing: the filings loaded from the same file (``Filing.source``, an FSDS quarter such as
``2009q3.zip``) by another company (CIK) with the same SIC code (sub.txt ``sic``, stored on the Company),
not superseded by an amendment in the graph, for which both ratios can be computed. When fewer than
:data:`MIN_PEERS` such filings share the four-digit code, the peers are those of the SIC **major group**
(the code's first two digits) instead, and the picture's caption says so. This module is pure: the
pipeline reads the quarter's fact maps once (:func:`retrieval.facts.fact_map.read_quarter_fact_maps`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from generation.memo.claims import LEVERAGE_LIQUIDITY, RATIO_BY_NAME, gold_ratio
from retrieval.facts.fact_map import FactMap

MIN_PEERS = 3
"""Fewest same-SIC peers with both ratios before the SIC major group (two digits) is used instead."""

SIC_LEVEL = "SIC"
MAJOR_GROUP_LEVEL = "SIC major group"


@dataclass(frozen=True)
class RatioPoint:
    """One filing's memo ratios: ``current_ratio`` (times) and ``leverage`` (a fraction), None when not
    applicable, with the reason in ``reasons`` (ratio name -> why, as the memo states it)."""

    adsh: str
    cik: int | None
    name: str
    sic: int | None
    current_ratio: float | None
    leverage: float | None
    reasons: dict[str, str] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Both ratios are known."""
        return self.current_ratio is not None and self.leverage is not None

    def dot(self) -> tuple[float, float]:
        """``(leverage, current_ratio)`` of a complete point (AssertionError otherwise: a bug)."""
        assert self.current_ratio is not None and self.leverage is not None, f"{self.adsh} lacks a ratio"
        return self.leverage, self.current_ratio

    def missing(self) -> str:
        """Why the point cannot be drawn: each missing ratio and its reason ("" when complete)."""
        parts = [
            f"{RATIO_BY_NAME[n].label}: {self.reasons.get(n) or 'not available'}"
            for n in LEVERAGE_LIQUIDITY
            if getattr(self, n) is None
        ]
        return "; ".join(parts)


def ratio_point(fm: FactMap) -> RatioPoint:
    """The current ratio and leverage of ``fm``'s filing, computed as the memo computes them."""
    values: dict[str, float | None] = {}
    reasons: dict[str, str] = {}
    for name in LEVERAGE_LIQUIDITY:
        g = gold_ratio(fm, RATIO_BY_NAME[name])
        values[name] = g.value
        if g.value is None:
            reasons[name] = g.reason
    f = fm.filing
    return RatioPoint(
        fm.adsh, f.get("cik"), str(f.get("name") or ""), f.get("sic"),
        values["current_ratio"], values["leverage"], reasons,
    )  # fmt: skip


@dataclass(frozen=True)
class PeerGroup:
    """The peers a filing is drawn against: ``level`` (:data:`SIC_LEVEL` or :data:`MAJOR_GROUP_LEVEL`),
    ``code`` (the four-digit SIC or its two-digit major group), ``source`` (the file, e.g. ``2009q3.zip``),
    ``peers`` (the other companies' points, by accession), ``members`` (every filing of the file in the group
    with both ratios, the filer's own included: the same for every filer of the group, and what the picture's
    medians and axes are computed over) and ``same_sic`` (the other companies of the filer's own four-digit code
    with both ratios)."""

    level: str
    code: int
    source: str
    peers: tuple[RatioPoint, ...]
    members: tuple[RatioPoint, ...]
    same_sic: int = 0

    def describe(self) -> str:
        """The peer set in words, e.g. ``the 20 other filers of SIC 1311 in 2009q3.zip with both ratios``,
        with why the major group was used when it was."""
        what = f"the {len(self.peers)} other filer{'s' if len(self.peers) != 1 else ''} of {self.level} {self.code}"
        text = f"{what} in {self.source} with both ratios"
        if self.level == MAJOR_GROUP_LEVEL:
            text += (
                f" (only {self.same_sic} of the filer's own four-digit SIC code had both, fewer than {MIN_PEERS}: "
                "its major group, the code's first two digits, is used)"
            )
        return text


class QuarterPeers:
    """The ratio points of one file's filings (an FSDS quarter) and the peer group of each.

    Args:
        source: the file the filings were loaded from (``Filing.source``).
        maps: the fact maps of every filing of ``source`` (:func:`read_quarter_fact_maps`); filings
            superseded by an amendment in the graph are left out.
    """

    def __init__(self, source: str, maps: Iterable[FactMap]) -> None:
        self.source = source
        self.points: dict[str, RatioPoint] = {
            fm.adsh: ratio_point(fm) for fm in maps if not fm.filing.get("superseded_by")
        }

    def _candidates(self, sic: int, digits: int) -> list[RatioPoint]:
        return [
            p
            for p in self.points.values()
            if p.complete and p.sic is not None and str(p.sic).zfill(4)[:digits] == str(sic).zfill(4)[:digits]
        ]

    def group(self, filer: RatioPoint) -> PeerGroup | str:
        """``filer``'s :class:`PeerGroup`, or why there is none (a sentence): no SIC code, or no other filer of
        its SIC major group with both ratios in the file."""
        if filer.sic is None:
            return f"the filer has no SIC code in the graph, so it has no SIC peers in {self.source}"
        same = self._candidates(filer.sic, 4)
        level, code, members = SIC_LEVEL, int(filer.sic), same
        others = [p for p in same if p.cik != filer.cik]
        if len(others) < MIN_PEERS:
            level, code = MAJOR_GROUP_LEVEL, int(str(filer.sic).zfill(4)[:2])
            members = self._candidates(filer.sic, 2)
        peers = tuple(p for p in members if p.cik != filer.cik)
        if not peers:
            return f"no other filer of SIC {filer.sic} or its major group {code} in {self.source} has both ratios"
        return PeerGroup(level, code, self.source, peers, tuple(members), same_sic=len(others))
