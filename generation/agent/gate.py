"""The answer gate: an answer leaves the agent only when every number in it can be traced.

Source: ../shared/seeds/001_70c6b08e66b7be55.txt, section 4.4, "Answer Consolidation Gate" (equation 9:
``Verify(Traj, a) = source-traceable(Traj) and units-ok(Traj) and format-valid(a)``). finkg's three checks:

1. **Traceable numbers** (source-traceable, units-ok): every number written in the answer
   (:func:`generation.verify.numbers.find_numbers`: amounts, percentages, ratios, dates, years) equals, within
   the rounding its written digits allow (:func:`~generation.verify.numbers.rounding_tolerance`), a number a
   successful tool call produced (:attr:`ToolResult.numbers`) or a number stated in the evidence. Scale-aware:
   ``15.6 billion`` traces to a tool's 15,608,000,000, ``1,496.5`` to ``$1.4965 billion``, ``-22.22`` (a
   percentage) to a fraction -0.2222; the factors tried are 1, thousand, million, billion (both ways) and 100
   (percent and fraction). A magnitude match counts (``decreased by 12.6`` traces to a change of -12.6): the
   sign is the direction check's business.
2. **Direction words** agree with the sign of the computed change: ``increased``/``rose``/``grew``/``up`` need
   a positive change, ``decreased``/``fell``/``declined``/``down`` a negative one, ``unchanged`` zero. The change
   is the caller's, else the last successful ``compare`` call's; with none computed, a direction word passes
   only when the evidence states the same direction (else it is unsupported: seed 003 counts such claims).
3. **Answer type** (format-valid) matches the question's: ``span`` one text, ``multi-span`` two or more texts,
   ``count`` one non-negative whole number, ``arithmetic`` exactly one number.
4. **Quoted words** (source-traceable, for text; asked for by the caller with ``quote_from``, as the tool-calling
   loop does): an answer item that states no number has nothing the first check can trace, so at least
   :data:`QUOTE_SHARE` of its content words (:func:`unquoted_words`) must be words of the evidence, the tools'
   outputs or the question. A text the model made up (its own complaint about a tool call, an opinion) fails.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from generation.agent.results import ToolResult
from generation.verify.numbers import NumberMention, find_numbers, rounding_tolerance
from retrieval.text.overlap import content_words

ANSWER_TYPES = ("span", "multi-span", "count", "arithmetic")
_FACTORS = (1.0, 1e3, 1e6, 1e9, 1e-3, 1e-6, 1e-9, 100.0, 0.01)
_UP = re.compile(r"\b(?:increas(?:ed|es|e|ing)|rose|rise[sn]?|grew|grow(?:s|th|n)?|up|higher|gain(?:ed|s)?)\b", re.I)
_DOWN = re.compile(
    r"\b(?:decreas(?:ed|es|e|ing)|fell|fall(?:s|en)?|declin(?:ed|es|e|ing)|dropp?(?:ed|s)?|down|lower|"
    r"shr[ua]nk|downward)\b",
    re.I,
)
_FLAT = re.compile(r"\b(?:unchanged|flat|no change)\b", re.I)
_TREND = re.compile(
    r"\b(?:improv(?:ed|es|e|ing|ement)|strengthen(?:ed|s|ing)?|weaken(?:ed|s|ing)?|worsen(?:ed|s|ing)?|"
    r"deteriorat(?:ed|es|e|ing|ion)|recover(?:ed|s|y|ing)?)\b",
    re.I,
)
_WORD = re.compile(r"[a-z]{3,}")
QUOTE_SHARE = 0.75
"""The least share of a number-free answer item's content words that must be quoted (check 4)."""


@dataclass(frozen=True)
class TracedNumber:
    """One number of the answer: its text, value (base units), and where it was found (``tool:<name>``,
    ``evidence`` or None when nowhere)."""

    text: str
    value: float
    source: str | None


@dataclass(frozen=True)
class Verdict:
    """The gate's decision on one answer.

    Attributes:
        passed: True when every check holds. reasons: one sentence per failed check (empty when passed).
        numbers: each number of the answer and where it traces to. direction: the direction the answer states
        (``increased``, ``decreased``, ``unchanged``, ``mixed`` or None). change: the computed change it was
        checked against (None when none). answer_type, question_type: the answer's shape and the question's.
    """

    passed: bool
    reasons: tuple[str, ...] = ()
    numbers: tuple[TracedNumber, ...] = ()
    direction: str | None = None
    change: float | None = None
    answer_type: str = ""
    question_type: str = ""
    checks: dict[str, bool] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON-able (what a run records)."""
        return {
            "passed": self.passed,
            "reasons": list(self.reasons),
            "numbers": [{"text": n.text, "value": n.value, "source": n.source} for n in self.numbers],
            "direction": self.direction,
            "change": self.change,
            "answer_type": self.answer_type,
            "question_type": self.question_type,
            "checks": self.checks,
        }


def _shown(m: NumberMention) -> tuple[float, float]:
    """The number as written (scale word and % undone) and the tolerance its digits allow, in those units."""
    tol = rounding_tolerance(m)
    if m.kind == "percent":
        return m.value * 100, tol * 100
    if m.kind in ("currency", "number") and m.scale != 1:
        return m.value / m.scale, tol / m.scale
    return m.value, tol


def _matches(m: NumberMention, pool: Sequence[float]) -> bool:
    shown, tol = _shown(m)
    if m.kind in ("date", "year"):
        return any(p == m.value for p in pool)
    for p in pool:
        for k in _FACTORS:
            target = abs(p) * k
            if abs(abs(shown) - target) <= tol + 1e-9 * max(abs(shown), target):
                return True
    return False


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if x == int(x) and abs(x) < 1e18 else f"{x:,.6g}"


def same_number(a: float, b: float) -> bool:
    """True when ``a`` and ``b`` are one number up to float noise: ``|a - b| <= 1e-9 * max(1, |a|, |b|)``
    (``math.isclose`` with both tolerances 1e-9): an operand or a span traced to the number the evidence states."""
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def evidence_numbers(evidence: Sequence[str]) -> list[float]:
    """Every number the evidence texts state, as written (scale words undone) and in base units."""
    out: list[float] = []
    for text in evidence:
        for m in find_numbers(text):
            shown, _ = _shown(m)
            out += [shown, m.value]
    return out


def direction_of(text: str) -> str | None:
    """The direction ``text`` states: ``increased``, ``decreased``, ``unchanged``, ``mixed`` (several) or None."""
    found = {d for d, rx in (("increased", _UP), ("decreased", _DOWN), ("unchanged", _FLAT)) if rx.search(text)}
    if not found:
        return None
    return found.pop() if len(found) == 1 else "mixed"


def unquoted_words(item: str, sources: Sequence[str]) -> tuple[list[str], int]:
    """The content words of ``item`` that no text of ``sources`` contains, and how many content words it has.

    Content words are :func:`retrieval.text.overlap.content_words` that are not direction words (check 2 judges
    those). Example:
    ``unquoted_words("Sales rose on higher demand", ["Sales were USD 5 million"])`` -> ``(["demand"], 2)``.
    """
    known = {w for text in sources for w in _WORD.findall(text.lower())}
    words = [w for w in content_words(item) if direction_of(w) is None]
    return [w for w in words if w not in known], len(words)


def _answer_type(items: list[str], mentions: list[NumberMention]) -> str:
    if len(items) >= 2:
        return "multi-span"
    numeric = [m for m in mentions if m.kind not in ("date", "year")]
    text = items[0] if items else ""
    if len(numeric) == 1 and re.fullmatch(r"[\s$€£%(),.\-\w]*", text) and len(re.sub(r"[^A-Za-z]", "", text)) <= 12:
        m = numeric[0]
        if m.kind == "number" and m.scale == 1 and m.value >= 0 and m.value == int(m.value) and m.decimals_shown == 0:
            return "count"
        return "arithmetic"
    return "span"


def _type_ok(question_type: str, answer_type: str, items: list[str], mentions: list[NumberMention]) -> bool:
    numeric = [m for m in mentions if m.kind not in ("date", "year")]
    if question_type == "multi-span":
        return len(items) >= 2
    if len(items) != 1:
        return False
    if question_type == "arithmetic":
        return len(numeric) == 1
    if question_type == "count":
        return answer_type == "count"
    return True  # span: one text (a number, a year or words)


def check_answer(
    answer: str | Sequence[str],
    question_type: str,
    tool_results: Sequence[ToolResult] = (),
    evidence: Sequence[str] = (),
    change: float | None = None,
    quote_from: Sequence[str] | None = None,
) -> Verdict:
    """Gate one answer (see the module doc for the four checks).

    Args:
        answer: the answer text, or its spans (a multi-span answer is a list of texts).
        question_type: ``span``, ``multi-span``, ``count`` or ``arithmetic`` (TAT-QA's answer types).
        tool_results: the run's tool calls; only successful ones count.
        evidence: the texts the answer may quote (passages, table rows joined as text, fact sentences).
        change: the computed change the answer's direction word must agree with (else the last ``compare``).
        quote_from: texts besides ``evidence`` that a number-free item may quote (the tools' outputs, the
            question); given, check 4 runs (None: it does not).

    Returns:
        the :class:`Verdict`; ``passed`` False with a reason per failed check.

    Raises:
        ValueError: ``question_type`` is not one of :data:`ANSWER_TYPES` (a caller's bug, not the LLM's).
    """
    if question_type not in ANSWER_TYPES:
        raise ValueError(f"question_type must be one of {ANSWER_TYPES}, got {question_type!r}")
    items = [answer] if isinstance(answer, str) else [str(a) for a in answer]
    items = [i for i in items if i.strip()]
    text = " ; ".join(items)
    mentions = [m for item in items for m in find_numbers(item)]
    reasons: list[str] = []

    ok_results = [r for r in tool_results if r.ok]
    traced: list[TracedNumber] = []
    ev_pool = evidence_numbers(evidence)
    for m in mentions:
        source = next((f"tool:{r.tool}" for r in ok_results if _matches(m, r.numbers)), None)
        if source is None and _matches(m, ev_pool):
            source = "evidence"
        traced.append(TracedNumber(m.text, m.value, source))
    untraced = [n.text for n in traced if n.source is None]
    if untraced:
        tool_values = sorted({x for r in ok_results for x in r.numbers})[:8]
        reasons.append(
            f"number(s) {', '.join(untraced)} are neither a tool output nor in the evidence"
            + (f" (tool outputs: {', '.join(_fmt(x) for x in tool_values)})" if tool_values else "")
        )

    direction = direction_of(text)
    if change is None:
        compares = [r for r in ok_results if r.tool == "compare"]
        if compares:
            change = compares[-1].detail.get("change")
    direction_ok = True
    if direction is not None:
        if change is not None:
            expected = "increased" if change > 0 else "decreased" if change < 0 else "unchanged"
            if direction != expected:
                direction_ok = False
                reasons.append(f"the answer says {direction!r} but the computed change is {_fmt(change)} ({expected})")
        elif direction == "mixed" or direction_of(" ".join(evidence)) not in (direction, "mixed"):
            direction_ok = False
            reasons.append(f"the answer says {direction!r} but no change was computed and the evidence does not say so")

    answer_type = _answer_type(items, mentions)
    type_ok = bool(items) and _type_ok(question_type, answer_type, items, mentions)
    if not items:
        reasons.append("the answer is empty")
    elif not type_ok:
        reasons.append(
            f"the question is {question_type} and needs {_NEEDS[question_type]}; the answer is {answer_type}"
        )
    checks = {"numbers_traced": not untraced, "direction": direction_ok, "answer_type": type_ok}
    if quote_from is not None:
        sources = [*evidence, *quote_from]
        made_up: list[str] = []
        for item in items:
            if any(m.kind not in ("date", "year") for m in find_numbers(item)):
                continue
            missing, total = unquoted_words(item, sources)
            if total and len(missing) > (1 - QUOTE_SHARE) * total:
                made_up += missing
        checks["quoted"] = not made_up
        if made_up:
            reasons.append(
                f"the answer's words {', '.join(dict.fromkeys(made_up))} are in neither the evidence nor the tools' "
                "outputs: quote the facts or give the number"
            )
    return Verdict(not reasons, tuple(reasons), tuple(traced), direction, change, answer_type, question_type, checks)


_NEEDS = {
    "span": "one text",
    "multi-span": "two or more texts",
    "count": "one whole number",
    "arithmetic": "exactly one number",
}


# ----------------------------------------------------------------------------------------- the report path

INDICATOR_TOPICS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("money supply", ("money supply", "m2", "m1", "m0", "broad money"), ("money supply", "cn_m0", "cn_m1", "cn_m2")),
    ("consumer prices", ("cpi", "consumer price", "inflation"), ("cpi", "consumer price")),
    ("producer prices", ("ppi", "producer price"), ("ppi", "producer price")),
    ("interbank rates", ("shibor", "interbank"), ("shibor", "interbank")),
    ("bond yields", ("yield", "treasury", "bond"), ("yield", "treasury", "bond")),
    ("revenue", ("revenue", "revenues", "sales"), ("revenue", "sales")),
    ("net income", ("net income", "net earnings", "net loss", "profit"), ("netincome", "net income", "profitloss")),
    ("current assets", ("current assets",), ("assetscurrent", "current assets")),
    ("current liabilities", ("current liabilities",), ("liabilitiescurrent", "current liabilities")),
    ("cash", ("cash",), ("cash",)),
)
"""Indicators a report sentence can make a claim about: ``(topic, words in the sentence, words in a fact's
indicator code or text that make the fact about it)``."""

_CLAIM_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True)
class ReportGate:
    """The gate's verdict on a report answer.

    Attributes:
        passed: no number left unverified and no unsupported claim. text: the answer with ``[unsupported: ...]``
        after each sentence that claims something about an indicator no cited fact is about (the numbers'
        ``[unverified]`` marks kept). unverified: the numbers that could not be verified. unsupported: one
        ``{"sentence", "topic"}`` per unsupported claim. reasons: one sentence per failure.
    """

    passed: bool
    text: str
    unverified: tuple[str, ...] = ()
    unsupported: tuple[dict[str, str], ...] = ()
    reasons: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """JSON-able (the report record's ``gate``)."""
        return {
            "verdict": "passed" if self.passed else "could not verify",
            "passed": self.passed,
            "unverified_numbers": list(self.unverified),
            "unsupported_claims": [dict(u) for u in self.unsupported],
            "reasons": list(self.reasons),
        }


def _words(text: str, words: Sequence[str]) -> bool:
    low = text.lower()
    return any(re.search(rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])", low) for w in words)


def _trend(text: str) -> bool:
    """True when ``text`` states a change or a trend (a direction word, or improving, weakening, recovering...)."""
    return direction_of(text) is not None or bool(_TREND.search(text))


def gate_report(
    answer: str, number_statuses: Sequence[tuple[str, str]], cited: Sequence[tuple[str, str]]
) -> ReportGate:
    """Gate a report answer (seed 001, section 4.4, on the report path; seed 003 counts unsupported claims).

    Args:
        answer: the answer text, numbers already checked (``[unverified]`` marks in place:
            :func:`generation.verify.report_numbers.check_numbers`).
        number_statuses: ``(number text, status)`` per number mention (``verified``, ``context``,
            ``unverified``).
        cited: ``(indicator code or tag, text)`` of each fact the answer cites.

    Returns:
        :class:`ReportGate`: a sentence that states a direction or a number about an indicator of
        :data:`INDICATOR_TOPICS` none of the cited facts is about gets ``[unsupported: no cited fact is about
        <topic>]``; a sentence that states a change or trend ("rose", "improving", "weakening") when no cited fact
        states one (levels only) gets ``[unsupported: no cited fact states a change]``; ``passed`` is False when
        such a claim or an unverified number remains. Each unsupported claim is ``{"sentence", "topic", "why"}``.
    """
    unverified = tuple(t for t, s in number_statuses if s == "unverified")
    unsupported: list[dict[str, str]] = []
    out: list[str] = []
    last = 0
    for sep in [*_CLAIM_SENTENCE.finditer(answer), None]:
        end = sep.start() if sep is not None else len(answer)
        sentence = answer[last:end]
        mark = ""
        claims = direction_of(sentence) is not None or any(
            m.kind not in ("date", "year") for m in find_numbers(sentence)
        )
        if claims:
            for topic, words, about in INDICATOR_TOPICS:
                if _words(sentence, words) and not any(
                    any(a in f"{code} {text}".lower() for a in about) for code, text in cited
                ):
                    why = f"no cited fact is about {topic}"
                    unsupported.append({"sentence": sentence.strip(), "topic": topic, "why": why})
                    mark = f" [unsupported: {why}]"
                    break
        if not mark and _trend(sentence) and not any(_trend(text) for _, text in cited):
            why = "no cited fact states a change"
            unsupported.append({"sentence": sentence.strip(), "topic": "a change", "why": why})
            mark = f" [unsupported: {why}]"
        out.append(sentence.rstrip() + mark + (sentence[len(sentence.rstrip()) :] if not mark else ""))
        if sep is not None:
            out.append(sep.group(0))
            last = sep.end()
    reasons = []
    if unverified:
        reasons.append(f"could not verify {len(unverified)} number(s): {', '.join(unverified)}")
    reasons += [
        f"unsupported: a claim about {u['topic']} but no cited fact is about it"
        if u["topic"] != "a change"
        else "unsupported: a claimed change (rising, falling, improving) but no cited fact states a change"
        for u in unsupported
    ]
    return ReportGate(not reasons, "".join(out), unverified, tuple(unsupported), tuple(reasons))
