"""One memo, end to end, for each of the four systems of seed 003 (Table 4).

Source: ../shared/seeds/003_2b4a46a307636297.txt, "Compared systems":

============================  ==========================  ===========================  ==========
system                        evidence                    generation                   verifier
============================  ==========================  ===========================  ==========
``no-rag``                    none                        industry prior               none
``text-rag``                  top-30 TF-IDF sentences     cited memo renderer          none
``verifier-rag``              top-30 TF-IDF sentences     cited memo renderer          yes
``structured``                canonical filing fact map   structured template          yes
============================  ==========================  ===========================  ==========

``structured`` is the paper's Structured+Verifier and finkg's production system. The unverified
systems' drafts are still checked (``repair=False``) after their latency is taken, so that the
evaluation can count their errors; their text is left as generated.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from generation.memo import render
from generation.memo.claims import Claim, RiskThresholds
from generation.memo.drafting import Prior, draft_from_evidence, draft_prior_only, draft_structured
from generation.verify.claims import Verification, verify_body
from retrieval.contract import AsOfRequired
from retrieval.facts.fact_map import FactMap
from retrieval.text.tfidf import EvidenceIndex, Hit, memo_query

SYSTEMS: tuple[str, ...] = ("no-rag", "text-rag", "verifier-rag", "structured")
SYSTEM_NAMES = {
    "no-rag": "No-RAG",
    "text-rag": "Text RAG",
    "verifier-rag": "Verifier RAG",
    "structured": "Structured+Verifier",
}
VERIFIED = ("verifier-rag", "structured")


@dataclass
class MemoContext:
    """What the systems need besides the filing: thresholds, the industry prior (No-RAG and the
    text systems' fallback), the evidence index (text systems) and top-k."""

    thresholds: RiskThresholds
    prior: Prior | None = None
    index: EvidenceIndex | None = None
    k: int = 30


@dataclass
class MemoResult:
    """A generated memo: its claims (verified or checked), final body and Markdown, retrieval
    hits, the verification, and the generation latency in milliseconds."""

    system: str
    filing: dict
    claims: list[Claim]
    body: str
    markdown: str
    verification: Verification
    hits: list[Hit] = field(default_factory=list)
    latency_ms: float = 0.0
    as_of: str | None = None
    picture: str | None = None
    """The file name of the memo's peer picture beside its Markdown (set by the memo pipeline; None: none)."""

    @property
    def memo_id(self) -> str:
        return f"{self.system}:{self.filing['adsh']}"

    @property
    def risk_label(self) -> str:
        return next(str(c.value) for c in self.claims if c.kind == "label")


def generate_memo(system: str, fm: FactMap, ctx: MemoContext) -> MemoResult:
    """Draft, render and (for verified systems) verify one memo for the filing of ``fm``.

    Raises:
        ValueError: unknown ``system``, or a text system without ``ctx.index`` / No-RAG without
            ``ctx.prior``.
    """
    if system not in SYSTEMS:
        raise ValueError(f"unknown system {system!r}; choose from {', '.join(SYSTEMS)}")
    start = time.perf_counter()
    hits: list[Hit] = []
    as_of = memo_as_of(fm)
    if system == "structured":
        claims = draft_structured(fm, ctx.thresholds)
    elif system == "no-rag":
        if ctx.prior is None:
            raise ValueError("no-rag needs the industry prior (MemoContext.prior)")
        claims = draft_prior_only(fm.filing, ctx.prior, ctx.thresholds, as_of=_required(as_of, fm, system))
    else:
        if ctx.index is None or ctx.prior is None:
            raise ValueError(f"{system} needs the evidence index and the prior (MemoContext)")
        when = _required(as_of, fm, system)
        hits = ctx.index.hits(memo_query(fm.filing), ctx.k, as_of=when)
        claims = draft_from_evidence(fm.filing, hits, ctx.prior, ctx.thresholds, as_of=when)
    body = render.body(claims)
    verified = system in VERIFIED
    verification: Verification | None = None
    if verified:
        available = None if system == "structured" else {h.fact_key for h in hits}
        verification = verify_body(body, claims, fm, ctx.thresholds, repair=True, available_keys=available)
    latency_ms = (time.perf_counter() - start) * 1000
    if verification is None:
        verification = verify_body(body, claims, fm, ctx.thresholds, repair=False)
    markdown = render.render_memo(fm.filing, SYSTEM_NAMES[system], verification.claims, verification.body)
    return MemoResult(
        system, fm.filing, verification.claims, verification.body, markdown, verification, hits, latency_ms, as_of
    )


def memo_as_of(fm: FactMap) -> str | None:
    """A memo's as-of time: its filing's acceptance (:attr:`FactMap.available_at`; None when undated).
    Whatever a memo retrieves beyond its own filing (evidence sentences, the industry prior) must have
    been public by then, so a later filing, of the same company or another, never reaches it."""
    return fm.available_at


def _required(as_of: str | None, fm: FactMap, system: str) -> str:
    if as_of is None:
        raise AsOfRequired(
            f"{system} memo for {fm.adsh}: the filing has no acceptance or filing time in the graph (an XBRL "
            "instance carries neither), so nothing can be retrieved for it as of its filing; use the structured system"
        )
    return as_of
