"""The deterministic memo renderer: claims to Markdown, one sentence per claim, each with its marker.

Source: ../shared/seeds/003_2b4a46a307636297.txt, "Compared systems" ("Generation is implemented
as a deterministic memo renderer ... The renderer emits the same classes of claims that an LLM
memo is expected to produce"). A memo is three parts:

- the **header** (issuer, form, accession, CIK, SIC, period, filed date, system): identity, not
  claims; rendered from the filing record;
- the **body**: the claims as prose, each sentence ending with ``[n]``; this is the part an LLM
  renderer may write instead, and the part the verifier checks number by number;
- the **evidence** list: each marker's readable evidence keys (``adsh:cik:tag:ddate:qtrs:uom``).

Numbers are written at the coarsest scale that stays within the verifier's tolerance
(max($1, 0.01%), or the fact's XBRL decimals), so the deterministic memo verifies exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from generation.memo.claims import RATIO_BY_NAME, Claim, number
from generation.verify.claims import fact_tolerance, span_words
from generation.verify.numbers import format_percent, format_ratio, format_usd
from retrieval.facts.concepts import BY_NAME, iso_date

EVIDENCE_HEADING = "## Evidence"


def header(filing: dict[str, Any], system: str) -> str:
    """Title and identity line of a memo (not claims; rendered from the filing record), and what the reader
    must know about the filing itself: which legal entity the memo speaks for in a co-registrant filing
    (``entity``, ``coregistrants``), the earlier filings an amendment supersedes (``supersedes``), the
    amendment that supersedes this filing (``superseded_by``), or sub.txt's ``prevrpt`` (``amended_later``)."""
    lines = [
        f"# Desk-risk memo: {filing.get('name', '')}\n",
        f"> {filing.get('form', '')} · accession {filing['adsh']} · CIK {filing.get('cik', '')} · "
        f"SIC {filing.get('sic') or 'n/a'} · period {iso_date(filing.get('period'))} · "
        f"filed {iso_date(filing.get('filed'))} · system {system}",
    ]
    if filing.get("coregistrants"):
        who = f"its {filing['entity']} facts" if filing.get("entity") else "the consolidated registrant's facts"
        lines.append(
            f">\n> Co-registrant filing: this memo uses {who}; the co-registrants "
            f"{', '.join(filing['coregistrants'])} are separate entities of the filing (their facts are in the "
            "graph with their `coreg`, not in this memo)."
        )
    if filing.get("supersedes"):
        lines.append(
            f">\n> Amendment: supersedes {', '.join(filing['supersedes'])} for the same period; the superseded "
            "values are kept as history (`finkg facts history`)."
        )
    if filing.get("superseded_by"):
        lines.append(
            f">\n> Superseded: amended by {filing['superseded_by']} for the same period; its memo uses the amendment."
        )
    elif filing.get("amended_later"):
        lines.append(
            ">\n> Amended later (sub.txt `prevrpt`): the amendment is not in the graph, so these values may "
            "have been superseded."
        )
    return "\n".join(lines) + "\n"


def _span(claim: Claim) -> str:
    if not claim.qtrs:
        return f"as of {iso_date(claim.ddate)}"
    return f"for the {span_words(claim.qtrs)} ended {iso_date(claim.ddate)}"


def _label(name: str) -> str:
    text = RATIO_BY_NAME[name].label if name in RATIO_BY_NAME else BY_NAME[name].label
    return text[0].upper() + text[1:]


def format_ratio_value(name: str, value: float) -> str:
    """A ratio as the memo writes it: ``1.85x`` (current ratio) or ``12.3%`` (the others)."""
    return format_ratio(value) if RATIO_BY_NAME[name].style == "x" else format_percent(value)


def claim_sentence(claim: Claim) -> str:
    """The one sentence that states ``claim``, ending with its marker ``[n]``."""
    marker = f"[{claim.n}]"
    if claim.kind == "label":
        return f"Desk-risk label: {claim.value}; {claim.note} {marker}."
    if claim.kind == "not_applicable":
        return f"{_label(claim.name)}: not applicable; {claim.note} {marker}."
    if claim.kind == "ratio":
        shown = format_ratio_value(claim.name, number(claim.value))
        return f"{_label(claim.name)} {_span(claim)} was {shown} {marker}."
    shown = format_usd(number(claim.value), fact_tolerance(number(claim.value), claim.decimals))
    derived = f" ({claim.note.split(';')[0]})" if claim.note.startswith("derived") else ""
    verb = "were" if BY_NAME[claim.name].label.endswith("s") else "was"
    return f"{_label(claim.name)}{derived} {verb} {shown} {_span(claim)} {marker}."


def _section_of(claim: Claim) -> str:
    """The section a not-applicable claim belongs to: ``fact`` (a concept) or ``ratio`` (a ratio name)."""
    return "fact" if claim.name in BY_NAME else "ratio"


def body(claims: Sequence[Claim]) -> str:
    """The memo body: facts, ratios and the label as Markdown bullets, one claim per line; a not-applicable
    claim stands once, in the section of what it is about (a concept among the facts, a ratio among the ratios)."""
    sections = (("## Facts", "fact"), ("## Ratios", "ratio"), ("## Desk-risk label", "label"))
    out = []
    for title, kind in sections:
        lines = [c for c in claims if c.kind == kind or (c.kind == "not_applicable" and _section_of(c) == kind)]
        out.append(title + "\n\n" + "\n".join(f"- {claim_sentence(c)}" for c in lines) + "\n")
    return "\n".join(out)


def evidence(claims: Sequence[Claim]) -> str:
    """The evidence list: each marker with the readable keys it cites (or why it cites none)."""
    lines = [EVIDENCE_HEADING, ""]
    for c in claims:
        if c.kind == "label":
            cites = "recomputed from the ratios above"
        elif c.citation_labels:
            cites = "; ".join(f"`{k}`" for k in c.citation_labels)
        else:
            cites = "no evidence cited"
        extra = f" ({c.note})" if c.note and c.kind in ("fact", "ratio") else ""
        flag = f" **plausibility flag:** {c.flag}" if c.flag else ""
        lines.append(f"- [{c.n}] {cites}{extra}{flag}")
    return "\n".join(lines) + "\n"


def render_memo(filing: dict[str, Any], system: str, claims: Sequence[Claim], body_text: str | None = None) -> str:
    """The whole Markdown memo: header, body (rendered from ``claims`` unless ``body_text`` is
    given, e.g. the verified body), evidence list."""
    return "\n".join((header(filing, system), body_text if body_text is not None else body(claims), evidence(claims)))
