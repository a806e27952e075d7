"""The frozen event-impact reader (seed 000, section 3.2 and Appendix B).

Source: ../shared/seeds/000_79d55a8598b40f79.txt, section 3.2 ("a fixed prompt template, fixed JSON
schema, and greedy decoding"), section 3.3 (the anchor is the event description, never retrieved evidence;
the market-context card is appended) and Appendix B (the compact prompt and the output schema).

**Prompt** (:func:`reader_messages`): Appendix B's system sentence verbatim; the user message gives the
horizons and allowed labels, the event anchor (headline, ticker, anchor time, prediction day, event type),
the retrieved evidence as ``E1``..``Ek`` with its source family (``E2 [News]: ...``), the market-context
card, and the answer format. Nothing in it depends on the evaluation condition, so identical contexts give
identical prompts and the LLM disk cache answers them for free.

**Answer** (:func:`reader_schema`), finkg's compact form of Appendix B's schema for small local models:
``{"1D": -1|0|1, "3D": -1|0|1, "5D": -1|0|1, "cited_ids": ["E2", ...], "reason": "..."}``: one shared list
of cited evidence ids for the three horizons (the paper lists ids per horizon; a 135M-1.5B model repeats
one list anyway), whose items are an enum of the ids shown (at most k, none when no evidence was shown),
and a reason of at most :data:`MAX_REASON_CHARS` characters. Decoding is greedy (temperature 0) and
constrained by the schema where the backend can (llama.cpp grammar).

**Failures** are never turned into a neutral prediction: an answer that is not JSON even after json-repair,
or JSON that misses a horizon or gives a value outside {-1, 0, 1}, is a :class:`ReaderAnswer` with
``status = "failed"``, the error and the raw text (the cut-off answer of a too-small ``max_tokens`` is the
typical case). A repaired answer that fits is used (``repaired`` True). Cited ids that were not shown (a
repaired, unconstrained answer can contain any string) are kept in ``invalid_ids`` and never mapped.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from generation.llm import LLMAnswerError

HORIZONS = ("1D", "3D", "5D")
"""The reader's forecast horizons (seed 000, Appendix B)."""
SIGNALS = (-1, 0, 1)
MAX_REASON_CHARS = 120
"""Longest reason, in characters."""
MAX_EVIDENCE_CHARS = 400
"""Longest evidence passage shown, in characters (a tweet fits; a longer chunk is cut with an ellipsis)."""

SYSTEM = (
    "You are a financial event-impact reader. Use only the provided event anchor, point-in-time evidence, "
    "and pre-decision market context. Return valid JSON only."
)
"""Appendix B's system prompt, verbatim."""

FAMILY_NAMES = {"news": "News", "social": "Social", "sec_filing": "SEC Filing", "filing": "SEC Filing"}


@dataclass(frozen=True)
class EventAnchor:
    """The reader's view of a news-event anchor (Appendix B's ``A0``).

    Attributes:
        ticker: the firm; ``headline``: the anchor text; ``anchor_time``: when it became public (shown as
        given, e.g. ``2015-07-21 16:05 ET after close``); ``prediction_day``: the first tradable session
        (ISO date); ``event_type``: the Appendix A type.
    """

    ticker: str
    headline: str
    anchor_time: str
    prediction_day: str
    event_type: str


@dataclass(frozen=True)
class EvidenceItem:
    """One retrieved passage shown to the reader: its Chunk id, source family and text."""

    chunk_id: str
    source_family: str
    text: str


@dataclass
class ReaderAnswer:
    """What the reader returned for one context.

    Attributes:
        status: ``ok`` or ``failed`` (no usable answer: see ``error`` and ``raw``).
        predictions: horizon -> signal in {-1, 0, 1} (empty when failed).
        cited_ids: the Chunk ids of the valid cited evidence ids, in citation order, each once.
        invalid_ids: cited ids that were not shown (never mapped to a chunk).
        reason: the reader's reason ("" when failed).
        evidence_ids: short id -> Chunk id of what was shown (``{"E1": "tweet:...#0", ...}``).
        raw: the raw answer text; error: why it failed (None when ok).
        prompt_tokens, completion_tokens: the backend's counts (for a cache hit: of the call that made it).
        seconds: wall time of the call; cached: answered from the disk cache; repaired: json-repair was needed.
    """

    status: str
    predictions: dict[str, int] = field(default_factory=dict)
    cited_ids: list[str] = field(default_factory=list)
    invalid_ids: list[str] = field(default_factory=list)
    reason: str = ""
    evidence_ids: dict[str, str] = field(default_factory=dict)
    raw: str = ""
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cached: bool = False
    repaired: bool = False

    @property
    def ok(self) -> bool:
        """True when the answer is usable."""
        return self.status == "ok"

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict of every field."""
        return asdict(self)


def short_ids(n: int) -> list[str]:
    """``["E1", ..., "En"]``: the ids the reader sees for n passages."""
    return [f"E{i}" for i in range(1, n + 1)]


def reader_schema(n_evidence: int) -> dict[str, Any]:
    """The JSON schema of the answer for a context of ``n_evidence`` passages.

    Each horizon is an integer enum -1/0/1; ``cited_ids`` is an array of the ids shown (enum ``E1..En``, at
    most n items; with no evidence an empty array); ``reason`` a string of at most :data:`MAX_REASON_CHARS`.
    """
    signal = {"type": "integer", "enum": list(SIGNALS)}
    cited: dict[str, Any] = (
        {"type": "array", "items": {"type": "string", "enum": short_ids(n_evidence)}, "maxItems": n_evidence}
        if n_evidence
        else {"type": "array", "maxItems": 0}
    )
    return {
        "type": "object",
        "properties": {
            **{h: signal for h in HORIZONS},
            "cited_ids": cited,
            "reason": {"type": "string", "maxLength": MAX_REASON_CHARS},
        },
        "required": [*HORIZONS, "cited_ids", "reason"],
    }


def _clip(text: str, limit: int = MAX_EVIDENCE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def reader_messages(anchor: EventAnchor, evidence: Sequence[EvidenceItem], market_card: str) -> list[dict[str, str]]:
    """The fixed prompt (Appendix B) for one anchor, its evidence and its market-context card."""
    lines = [
        f"E{i} [{FAMILY_NAMES.get(e.source_family, e.source_family.title())}]: {_clip(e.text)}"
        for i, e in enumerate(evidence, 1)
    ] or ["(none)"]
    ids = ", ".join(short_ids(len(evidence))) or "none"
    user = "\n".join(
        [
            "Predict residual market impact for fixed horizons: 1D, 3D, and 5D.",
            "Allowed labels: 1 positive, 0 neutral/uncertain, -1 negative (residual return after removing the "
            "market's move).",
            "",
            "Event anchor:",
            f"A0: {_clip(anchor.headline)}",
            f"ticker: {anchor.ticker}",
            f"anchor_time: {anchor.anchor_time}",
            f"prediction_day: {anchor.prediction_day}",
            f"event_type: {anchor.event_type}",
            "",
            "Retrieved evidence:",
            *lines,
            "",
            "Market context:",
            market_card,
            "",
            'Answer with JSON {"1D": label, "3D": label, "5D": label, "cited_ids": [evidence ids you used, '
            f'from {ids}], "reason": one short sentence}}.',
        ]
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def parse_reader_answer(
    data: Any, evidence: Sequence[EvidenceItem]
) -> tuple[dict[str, int], list[str], list[str], str]:
    """``(predictions, valid cited chunk ids, invalid ids, reason)`` of a parsed answer.

    Raises:
        ValueError: ``data`` is not an object, a horizon is missing, or a signal is not -1, 0 or 1 (a
            string such as ``"+1"`` included: the schema asks for integers).
    """
    if not isinstance(data, dict):
        raise ValueError(f"the answer is a {type(data).__name__}, not a JSON object")
    predictions: dict[str, int] = {}
    for h in HORIZONS:
        if h not in data:
            raise ValueError(f"the answer has no {h!r} signal")
        value = data[h]
        if isinstance(value, bool) or not isinstance(value, int) or value not in SIGNALS:
            raise ValueError(f"{h} is {value!r}, not -1, 0 or 1")
        predictions[h] = int(value)
    by_short = {s: e.chunk_id for s, e in zip(short_ids(len(evidence)), evidence)}
    cited = data.get("cited_ids") or []
    if not isinstance(cited, list):
        cited = [cited]
    valid: list[str] = []
    invalid: list[str] = []
    for ref in (str(x).strip() for x in cited):
        if ref in by_short:
            if by_short[ref] not in valid:
                valid.append(by_short[ref])
        elif ref not in invalid:
            invalid.append(ref)
    reason = str(data.get("reason") or "")[:MAX_REASON_CHARS]
    return predictions, valid, invalid, reason


class FrozenReader:
    """The frozen LLM reader: fixed prompt, fixed schema, greedy decoding (section 3.2).

    Args:
        client: a :class:`generation.llm.LLMClient` (its disk cache makes a repeated context free).
        max_tokens: the answer's token cap (too small a cap cuts the JSON: the answer is then recorded as
            failed, never guessed).

    ``LLMUnavailable`` and ``BudgetExceeded`` propagate (the run stops; what is written stays).
    """

    def __init__(self, client: Any, max_tokens: int = 160) -> None:
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        self.client, self.max_tokens = client, max_tokens

    def read(self, anchor: EventAnchor, evidence: Sequence[EvidenceItem], market_card: str) -> ReaderAnswer:
        """One answer for ``anchor`` with ``evidence`` (E1..Ek in this order) and the card."""
        ids = dict(zip(short_ids(len(evidence)), (e.chunk_id for e in evidence)))
        messages = reader_messages(anchor, evidence, market_card)
        t0 = time.perf_counter()
        try:
            res = self.client.chat(
                messages, max_tokens=self.max_tokens, temperature=0.0, json_schema=reader_schema(len(evidence))
            )
        except LLMAnswerError as exc:
            return ReaderAnswer(
                "failed", evidence_ids=ids, raw=str(exc.raw), error=str(exc)[:500], seconds=time.perf_counter() - t0
            )
        answer = ReaderAnswer(
            "ok",
            evidence_ids=ids,
            raw=res.text,
            prompt_tokens=int(res.prompt_tokens or 0),
            completion_tokens=int(res.completion_tokens or 0),
            seconds=float(res.seconds or 0.0),
            cached=bool(res.cached),
            repaired=bool(res.repaired),
        )
        try:
            answer.predictions, answer.cited_ids, answer.invalid_ids, answer.reason = parse_reader_answer(
                res.data, evidence
            )
        except ValueError as exc:
            answer.status, answer.error = "failed", str(exc)
        return answer
