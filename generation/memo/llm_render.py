"""The LLM memo renderer: the configured LLM writes the memo body as prose from the claims, and
the same verifier as the deterministic renderer checks (and repairs or removes) every number.

Source: ../shared/seeds/003_2b4a46a307636297.txt, "Compared systems" ("The code also supports
replacing the renderer with an external LLM output adapter while preserving the same
verification and evaluation layer"). The deterministic renderer (:mod:`generation.memo.render`)
stays the default; this is the second renderer.

One memo (:func:`generate_llm_memo`):

1. the claims are drafted from the canonical fact map exactly as for ``structured``;
2. the LLM gets each claim as the deterministic renderer writes it (:func:`render.claim_sentence`:
   marker ``[n]``, concept, value as formatted by :mod:`generation.verify.numbers`, period,
   not-applicable reasons, the risk label and its active tests) and is told to copy numbers
   exactly, end every sentence that states a number with the marker(s) it uses and add no other
   number (:func:`llm_body`);
3. :func:`generation.verify.claims.verify_body` (``repair=True``) checks every number of the prose:
   a wrong number in a sentence that cites a claim is replaced by the gold value, a number that
   no cited claim and no fact of the filing supports is replaced by
   :data:`generation.verify.claims.REMOVED`; each change has a repair record;
4. the Markdown memo is the deterministic header + the verified LLM body + the evidence list.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from generation.llm import LLMAnswerError, LLMClient, LLMResult
from generation.memo import render
from generation.memo.claims import Claim
from generation.memo.drafting import draft_structured
from generation.memo.systems import MemoContext, MemoResult
from generation.verify.claims import verify_body
from generation.verify.numbers import find_numbers
from retrieval.facts.concepts import iso_date
from retrieval.facts.fact_map import FactMap

SYSTEM = "structured-llm"
SYSTEM_NAME = "Structured+LLM+Verifier"
DEFAULT_MAX_TOKENS = 600

INSTRUCTIONS = """\
You are a credit-risk analyst writing the body of a short desk-risk memo about one SEC filing.
Use only the numbered claims you are given. Rules:
1. Write 2 to 4 short paragraphs of Markdown prose (no tables, no title).
2. Copy every number exactly as it is written in the claims (same digits, same unit, same "$", "million", "%" or "x").
3. End every sentence that states a number with the marker of the claim it comes from, e.g. "[3]";
   a sentence that uses two claims ends with both markers, e.g. "[5] [6]".
4. Do not write any number, date or year that is not in the claims. Do not compute anything new.
5. State the desk-risk label and the active tests, and say which figures are not applicable and why."""

_FENCE = re.compile(r"^\s*```[a-zA-Z]*\s*\n(.*?)\n\s*```\s*$", re.DOTALL)


def claims_prompt(claims: Sequence[Claim], filing: dict[str, Any]) -> str:
    """The user message: the filing's identity and one line per claim, as the deterministic
    renderer writes it (:func:`generation.memo.render.claim_sentence`, ending with its marker).

    Identity numbers (accession, CIK) are left out: they are not claims, and a number the body
    states must come from a claim.
    """
    lines = [
        f"Filing: {filing.get('form', '')} of {filing.get('name', '')} for the period ended "
        f"{iso_date(filing.get('period'))}.",
        "",
        "Claims:",
    ]
    lines += [f"- {render.claim_sentence(c)}" for c in claims]
    lines += ["", "Write the memo body now."]
    return "\n".join(lines)


def llm_messages(claims: Sequence[Claim], filing: dict[str, Any]) -> list[dict[str, str]]:
    """The chat messages :func:`llm_body` sends: the instructions (system) and the claims (user)."""
    return [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": claims_prompt(claims, filing)}]


def llm_body(
    claims: Sequence[Claim],
    filing: dict[str, Any],
    client: LLMClient,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    temperature: float = 0.0,
) -> tuple[str, LLMResult]:
    """The memo body the LLM writes from ``claims`` (Markdown prose, unverified).

    Args:
        claims: the drafted claims (markers ``n`` 1..k); filing: the filing record (name, form,
            period); client: an :class:`generation.llm.LLMClient` (its disk cache makes a rerun
            free); max_tokens: the answer's length limit in tokens; temperature: sampling
            temperature (0: greedy).

    Returns:
        ``(body, result)``: the answer, stripped, with a surrounding Markdown code fence removed,
        and the client's :class:`generation.llm.LLMResult` (token counts, seconds, cached).

    Raises:
        LLMAnswerError: the answer is empty (also after removing a code fence); names the backend.
        LLMUnavailable: the backend cannot be used. BudgetExceeded: the client's budget is spent.
    """
    res = client.chat(llm_messages(claims, filing), max_tokens=max_tokens, temperature=temperature)
    m = _FENCE.match(res.text)
    text = (m.group(1) if m else res.text).strip()
    if not text:
        raise LLMAnswerError("the answer is empty once its code fence is removed", client.name, res.text)
    return text, res


@dataclass
class LLMMemoResult(MemoResult):
    """A :class:`generation.memo.systems.MemoResult` whose body an LLM wrote, with the record of how.

    Attributes:
        raw_body: the LLM's answer before verification; backend: the backend's name.
        llm_seconds: wall time of the LLM call (a cache hit: the lookup); completion_tokens /
            prompt_tokens: as the backend reported them (0 when it reports none); llm_cached: the
            answer came from the disk cache.
    """

    raw_body: str = ""
    backend: str = ""
    llm_seconds: float = 0.0
    completion_tokens: int = 0
    prompt_tokens: int = 0
    numbers_written: int = field(default=0)
    llm_cached: bool = False

    @property
    def tokens_per_second(self) -> float:
        """Completion tokens per second of the LLM call (0.0 when unknown or answered from the cache)."""
        if self.llm_cached or self.llm_seconds <= 0:
            return 0.0
        return self.completion_tokens / self.llm_seconds


def generate_llm_memo(
    fm: FactMap, ctx: MemoContext, client: LLMClient, max_tokens: int = DEFAULT_MAX_TOKENS, temperature: float = 0.0
) -> LLMMemoResult:
    """One memo for the filing of ``fm`` whose body the LLM writes and the verifier checks.

    The claims are the structured system's (:func:`generation.memo.drafting.draft_structured`); the
    body is :func:`llm_body`'s prose after ``verify_body(..., repair=True)`` with every fact of
    the filing available as evidence. ``latency_ms`` covers drafting, the LLM call and the
    verification. The memo id is ``structured-llm:<adsh>``.

    Raises:
        LLMAnswerError: the LLM's answer is empty (nothing to verify: never silently dropped).
        LLMUnavailable: the backend cannot be used. BudgetExceeded: the client's budget is spent.
    """
    start = time.perf_counter()
    claims = draft_structured(fm, ctx.thresholds)
    raw, res = llm_body(claims, fm.filing, client, max_tokens=max_tokens, temperature=temperature)
    verification = verify_body(raw, claims, fm, ctx.thresholds, repair=True, available_keys=None)
    latency_ms = (time.perf_counter() - start) * 1000
    markdown = render.render_memo(fm.filing, SYSTEM_NAME, verification.claims, verification.body + "\n")
    return LLMMemoResult(
        SYSTEM,
        fm.filing,
        verification.claims,
        verification.body,
        markdown,
        verification,
        [],
        latency_ms,
        fm.available_at,
        raw_body=raw,
        backend=client.name,
        llm_seconds=res.seconds,
        completion_tokens=res.completion_tokens,
        prompt_tokens=res.prompt_tokens,
        numbers_written=len(find_numbers(raw)),
        llm_cached=res.cached,
    )
