"""TAT-QA's exact match (EM) and numeracy-focused F1, reimplemented from their published rules.

Source: Fengbin Zhu, Wenqiang Lei, Youcheng Huang, Chao Wang, Shuo Zhang, Jiancheng Lv, Fuli Feng and
Tat-Seng Chua, "TAT-QA: A Question Answering Benchmark on a Hybrid of Tabular and Textual Content in
Finance", ACL 2021, section 5 ("Evaluation Metrics": EM and the numeracy-focused F1 of DROP, Dua et
al. 2019, with the scale taken into account), and the semantics of the authors' evaluation script
(``tatqa_metric.py`` / ``tatqa_utils.py`` in github.com/NExTplusplus/TAT-QA). Written here from those
rules, not copied. Used by ``finkg/eval/tatqa.py`` (seed 004, section 4 evaluates generation; TAT-QA
is the public hybrid table+text benchmark the two-stage generator is measured on).

The rules, step by step (:func:`score`):

1. **Gold answers** (:func:`gold_answers`): ``span`` and ``multi-span`` answers are the list of
   strings in the data; an ``arithmetic`` answer is ``str(value)``; a ``count`` answer is
   ``str(int(value))``.
2. **Answer string** (:func:`answer_string`): the answers are sorted (as strings) and each becomes
   one string: a number (:func:`is_number`: the first word, without ``$ € £ ¥ % ( ) , [ ] ' "``,
   parses as a float, and a second word, if any, is a scale word) is written ``%.4f`` of its value
   with the scale applied, i.e. ``round(value, 2) * scale_factor(scale)`` (``thousand`` 1e3,
   ``million`` 1e6, ``billion`` 1e9, ``percent`` 0.01; a scale word written after the number counts
   too: ``"1.5 million"`` is 1,500,000); a number written with ``%`` is its value / 100 and the scale
   is not applied again. Anything else is the text, with ``" <scale>"`` appended when a scale is
   given. The strings are joined by spaces into **one** string: a multi-span answer is scored as one
   bag of words (the published script does this; span order does not matter because both sides are
   sorted).
3. **Normalization** (:func:`normalize_answer`), per space-separated token: lower case; punctuation
   removed unless the token is a number; then a number token becomes ``str`` of its value (so
   ``1496500000.0000`` and ``1,496,500,000`` agree); the articles a/an/the removed; white space
   collapsed.
4. **EM** is 1 when the normalized prediction and gold strings are equal. **F1** is the F1 of the
   two sets of normalized tokens (precision = shared / predicted tokens, recall = shared / gold
   tokens), rounded to 2 decimals. Because numbers are compared after the scale is applied, a
   prediction with the right digits but the wrong scale (``1,496.5`` for 1,496.5 *million*) is
   neither an exact match nor an F1 match of that token: **the scale must match**.
5. A single predicted number given without a scale and without ``%`` is also tried unrounded and
   unscaled (so ``0.2342`` matches the gold ``23.42`` with scale ``percent``); the best (EM, F1)
   pair over the tried strings counts.
6. For ``arithmetic`` and ``count`` questions **F1 = EM**: a different number scores 0.
7. An empty prediction scores (0, 0).

One deliberate difference from the reference script: a number in parentheses is negative also
when it has thousands separators: ``(1,212)`` is -1,212 here. The script's pattern
``\\([\\d.\\s%]+\\)`` does not allow the comma, so it reads the gold ``(1,212)`` (a TAT-QA dev answer,
scale ``million``) as +1,212 and scores the correct prediction ``-1,212 million`` as wrong. Values
without a comma are read the same way by both.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ANSWER_TYPES = ("span", "multi-span", "arithmetic", "count")
SCALES = ("", "thousand", "million", "billion", "percent")

_NOT_IN_NUMBER = set("'\"\\$€£¥%(),[]")
_NUMBER = re.compile(r"([+-]?\d+(\.\d+)?)|([+-]?\.\d+)")
_NEGATIVE = re.compile(r"\([\d.,\s%]+\)")  # (134), (1,212), (3.2%): see the module doc
_PERCENT = re.compile(r"[\d.\s]+%")
_NUMBER_THEN_WORD = re.compile(r"[\d.]+\s?[a-zA-Z]+")
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = set(string.punctuation)


def scale_factor(scale: str) -> float:
    """The multiplier of a TAT-QA scale word: hundred 100, thousand 1e3, million 1e6, billion 1e9,
    percent 0.01; anything else (``""`` included) 1. Matched as a substring of the lower-cased text
    (``"millions"`` and ``"5 million"`` count), as in the reference script."""
    s = scale.lower()
    for word, factor in (
        ("hundred", 100),
        ("thousand", 1_000),
        ("million", 1_000_000),
        ("billion", 1_000_000_000),
        ("percent", 0.01),
    ):
        if word in s:
            return factor
    return 1


def _clean(text: str) -> str:
    return "".join(ch for ch in str(text) if ch not in _NOT_IN_NUMBER)


def is_number(text: str) -> bool:
    """True when ``text`` is one number, optionally followed by a scale word: its first word,
    without ``$ € £ ¥ % ( ) , [ ] ' "``, parses as a (non-NaN) float, and its second word, if any, is a
    scale word (``"1,234"``, ``"$(9.8)"``, ``"12%"``, ``"1.5 million"``; not ``"2019 and 2018"``)."""
    words = " ".join(_clean(w) for w in str(text).split()).split()
    if not words:
        return False
    try:
        value = float(words[0])
    except ValueError:
        return False
    if math.isnan(value):
        return False
    return len(words) < 2 or scale_factor(words[1]) != 1


def to_number(text: str) -> float | int | None:
    """The value ``text`` states: its first number (separators and currency signs removed), times
    -1 in parentheses, / 100 with ``%``, times a scale word written after a number; rounded to 4
    decimals. An integer stays an ``int`` (``"2019"`` -> 2019, ``"2019.0"`` -> 2019.0). None when
    there is no number."""
    groups = _NUMBER.findall(_clean(text))
    if not groups or not groups[0][0]:
        return None
    raw = groups[0][0]
    num: float | int = float(raw) if "." in raw else int(raw)
    stripped = str(text).strip()
    negative = -1 if _NEGATIVE.search(stripped) else 1
    percent = 0.01 if _PERCENT.search(stripped) else 1
    word = _NUMBER_THEN_WORD.search(str(text))
    scale = scale_factor(word.group(0)) if word else 1
    return round(num * scale * negative * percent, 4)


def normalize_answer(text: str) -> str:
    """Lower case, punctuation removed from non-number tokens, numbers written as their value,
    articles removed, white space collapsed (per space-separated token; see the module doc)."""
    parts = []
    for token in str(text).split(" "):
        token = token.lower()
        if not is_number(token):
            token = "".join(ch for ch in token if ch not in _PUNCTUATION)
        if is_number(token):  # also a token that is a number only without its punctuation: "`70.07"
            token = str(to_number(token))
        token = " ".join(_ARTICLES.sub(" ", token).split())
        if token.strip():
            parts.append(token)
    return " ".join(parts).strip()


def answer_string(answers: Sequence[Any], scale: str) -> str:
    """The one comparable string of an answer list under a scale (rule 2 of the module doc), e.g.
    ``answer_string(["$1,496.5"], "million") == "1496500000.0000"``,
    ``answer_string(["12.5%"], "") == "0.1250"``, ``answer_string(["b", "a"], "") == "a b"``."""
    out = []
    for answer in sorted(str(a) for a in answers):
        text = answer
        value = to_number(answer) if is_number(answer) else None
        if value is not None:
            text = f"{value:.4f}" if "%" in answer else f"{round(value, 2) * scale_factor(scale):.4f}"
        elif scale:
            text = f"{answer} {scale}"
        out.append(text)
    return " ".join(out)


def exact_match_and_f1(predicted: str, gold: str) -> tuple[float, float]:
    """EM (0 or 1) and the bag-of-tokens F1 (rounded to 2 decimals) of two answer strings, after
    :func:`normalize_answer`. An empty bag has precision (or recall) 1, as in DROP."""
    p_norm, g_norm = normalize_answer(predicted), normalize_answer(gold)
    em = 1.0 if p_norm == g_norm else 0.0
    p_bag, g_bag = set(p_norm.split()), set(g_norm.split())
    shared = len(p_bag & g_bag)
    precision = shared / len(p_bag) if p_bag else 1.0
    recall = shared / len(g_bag) if g_bag else 1.0
    f1 = 0.0 if precision == 0.0 and recall == 0.0 else 2 * precision * recall / (precision + recall)
    return em, round(f1, 2)


def gold_answers(question: Mapping[str, Any]) -> list[str]:
    """The gold answer strings of a TAT-QA question (``answer``, ``answer_type``): the list for
    span/multi-span, ``[str(value)]`` for arithmetic, ``[str(int(value))]`` for count.

    Raises:
        ValueError: a span or multi-span answer that is not a list, or a count that is not a number.
    """
    kind, answer = question["answer_type"], question["answer"]
    if kind in ("span", "multi-span"):
        if not isinstance(answer, list):
            raise ValueError(f"a {kind} answer must be a list of strings, not {answer!r}")
        return [str(a) for a in answer]
    if kind == "count":
        try:
            return [str(int(float(answer)))]
        except (TypeError, ValueError) as exc:
            raise ValueError(f"a count answer must be a number, not {answer!r}") from exc
    return [str(answer)]


@dataclass(frozen=True)
class TatqaScore:
    """EM (0 or 1) and F1 (0..1, 2 decimals) of one prediction."""

    em: float
    f1: float


def score(
    predicted: str | Sequence[str] | None, predicted_scale: str, gold: Sequence[str], answer_type: str, gold_scale: str
) -> TatqaScore:
    """TAT-QA EM and F1 of one prediction (rules 2-7 of the module doc).

    Args:
        predicted: the predicted answer: one string, or the list of spans (multi-span); None or empty
            scores 0.
        predicted_scale: the scale the prediction states (one of :data:`SCALES`; ``""`` when it
            states none, e.g. ``"12.5%"`` or a plain number).
        gold: the gold answer strings (:func:`gold_answers`).
        answer_type: ``span``, ``multi-span``, ``arithmetic`` or ``count`` (F1 = EM for the last two).
        gold_scale: the question's ``scale``.

    Example (TAT-QA dev, "percentage change in Total Other operating expenses", gold -67.6 percent):
        ``score("-67.6%", "", ["-67.6"], "arithmetic", "percent") == TatqaScore(1.0, 1.0)``.
    """
    spans = [predicted] if isinstance(predicted, str) else list(predicted or [])
    spans = [s for s in spans if str(s).strip()]
    if not spans or not gold:
        return TatqaScore(0.0, 0.0)
    gold_string = answer_string(gold, gold_scale)
    candidates = [answer_string(spans, predicted_scale)]
    single = str(spans[0])
    if len(spans) == 1 and not predicted_scale and "%" not in single and is_number(single):
        value = to_number(single)
        if value is not None:
            candidates.append(f"{value:.4f}")
    em, f1 = max(exact_match_and_f1(c, gold_string) for c in candidates)
    if answer_type in ("arithmetic", "count"):
        f1 = em
    return TatqaScore(em, f1)


def score_question(
    predicted: str | Sequence[str] | None, predicted_scale: str, question: Mapping[str, Any]
) -> TatqaScore:
    """:func:`score` against a TAT-QA question record (``answer``, ``answer_type``, ``scale``)."""
    return score(
        predicted, predicted_scale, gold_answers(question), question["answer_type"], question.get("scale") or ""
    )
