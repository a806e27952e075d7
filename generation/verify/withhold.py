"""Withhold the claims of a report that the gate could not back: the published text keeps only what is verified.

Issue 44 item 3: every number in a report is computed or verified by the engine and the prose model may only cite
them. The number check (:func:`generation.verify.report_numbers.check_numbers`) marks a number no fact carries with
``[unverified]``; the answer gate (:func:`generation.agent.gate.gate_report`) marks a claim about an indicator no
cited fact is about with ``[unsupported: ...]``. A sentence carrying either mark is not published: it is moved,
whole and with its reasons, to the report's list of withheld claims (the record keeps the model's raw answer too),
so a reader never sees a number without its source, and nothing the model wrote is lost. This is the report's
form of the analyst's abstention: "I cannot back this" rather than a wrong number (seed 001, section 4.4: the
answer gate; seed 003, section 3.4: a number is supported only when a cited source carries it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from generation.verify.report_numbers import MARK

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?!\[unsupported:)|(?<=\])\s+(?=[A-Z])|\n+")
"""Where a sentence ends: the gate's rule (:func:`generation.agent.gate.gate_report`: ``.``, ``!``, ``?`` and a space,
or a line break), its ``[unsupported: ...]`` mark kept with the sentence it follows; and a bracket followed by a
capital (after such a mark, or a citation that closes a sentence without a stop)."""
_UNSUPPORTED = re.compile(r"\s*\[unsupported: ([^\]]+)\]")
_UNVERIFIED = re.compile(r"([^\s\[]+)" + re.escape(MARK))
_CONCLUSION = "Conclusion:"


@dataclass(frozen=True)
class Withheld:
    """A gated report answer split into what is published and what is withheld.

    Attributes:
        published: the answer without the withheld sentences (no ``[unverified]`` or ``[unsupported: ...]`` mark
            left); a withheld conclusion line reads ``Conclusion: withheld (see Withheld claims).``.
        withheld: one ``{"claim": the sentence without its marks, "reasons": [...]}`` per withheld sentence, in
            text order; a reason is ``no fact carries <number>`` or the gate's ``no cited fact is about <topic>``.
    """

    published: str
    withheld: list[dict[str, object]] = field(default_factory=list)


def _reasons(sentence: str) -> list[str]:
    return [f"no fact carries {m.group(1)}" for m in _UNVERIFIED.finditer(sentence)] + [
        m.group(1) for m in _UNSUPPORTED.finditer(sentence)
    ]


def _clean(sentence: str) -> str:
    return _UNSUPPORTED.sub("", sentence.replace(MARK, "")).strip()


def withhold_claims(gated: str) -> Withheld:
    """Split ``gated`` (the answer after the number check and the gate, marks in place) into the published text and
    the withheld claims (see the module doc). Sentences end at ``.``, ``!`` or ``?`` followed by a space, or at a
    line break (as the gate splits them); a sentence without marks is published unchanged, line breaks kept.
    An answer without marks is returned as it is."""
    if MARK not in gated and "[unsupported:" not in gated:
        return Withheld(gated)
    out: list[str] = []
    withheld: list[dict[str, object]] = []
    last = 0
    for sep in [*_SENTENCE.finditer(gated), None]:
        end = sep.start() if sep is not None else len(gated)
        sentence, gap = gated[last:end], sep.group(0) if sep is not None else ""
        reasons = _reasons(sentence)
        if reasons:
            claim = _clean(sentence)
            withheld.append({"claim": claim, "reasons": reasons})
            if claim.startswith(_CONCLUSION):
                out.append(f"{_CONCLUSION} withheld (see Withheld claims).{gap}")
            elif out and "\n" in gap and "\n" not in out[-1][-1:]:
                out[-1] = out[-1].rstrip(" ") + gap  # the line goes on after a withheld last sentence: keep its break
        else:
            out.append(sentence + gap)
        if sep is not None:
            last = sep.end()
    return Withheld("".join(out).strip(), withheld)
