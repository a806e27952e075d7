"""Reading an LLM's final answer line back into a comparable answer: the answer spans and their scale.

Source: ../shared/seeds/004_7a67e4eaf6285e0b.txt, sections 3.3 and 4.2 (answers generated from selected facts);
the comparable form is what TAT-QA's metric (Zhu et al., ACL 2021) scores. Shared by every room whose LLM
answers in free text (the question answerers of :mod:`generation.qa`, the analyst agent's quoted answers).

An answerer writes free text that ends with one line ``Answer: <answer>``
(:data:`generation.qa.answer.ANSWER_INSTRUCTION` asks for it). :func:`extract_answer` reads it back:

1. the **last** line that starts with ``Answer:`` (also ``Final answer:``, ``**Answer:**``, a full-width
   colon) holds the answer; with no such line the last non-empty line is used and ``found`` is False
   (the harness counts these); a second ``Answer:`` inside that line ends the answer (``2019 | Answer: $ 175``
   -> ``2019``: a small model's habit of answering twice);
2. markdown emphasis, surrounding quotes and a final full stop are removed; a Unicode minus becomes
   ``-``;
3. several items are separated by ``|`` or ``;``; a list of numbers only is also split at ``", "`` and
   ``" and "`` (``"2020, 2019 and 2018"``: numbers never contain ``", "``; a text answer is never
   split at commas); an item that is a scale word alone (``"$4,143 | thousand"``) is the scale of the
   numbers before it, not an item;
4. an item that is a number followed by a scale word (``thousand``, ``million``, ``billion``,
   ``percent``/``per cent``, and the attached abbreviations ``k``, ``m``, ``mn``, ``mm``, ``bn``, ``b``),
   optionally followed by a currency word, becomes the number alone and sets the answer's scale
   (``"$2.8 billion"`` -> ``("$2.8",)``, scale ``billion``); ``%`` stays in the number (the metric
   reads it); the first scale found applies to the whole answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ANSWER_LINE = re.compile(r"^[\W_]*(?:final\s+)?answer[\W_]*?[:：][*_\s]*(?P<answer>.*)$", re.IGNORECASE)
_ANSWER_IN_LINE = re.compile(r"\banswer\s+is\s*:?\s*(?P<answer>.+)$", re.IGNORECASE)
_SECOND_ANSWER = re.compile(r"\b(?:final\s+)?answer\s*[:：]", re.IGNORECASE)
_SCALE_WORDS = {
    "thousand": "thousand",
    "thousands": "thousand",
    "k": "thousand",
    "million": "million",
    "millions": "million",
    "m": "million",
    "mn": "million",
    "mm": "million",
    "billion": "billion",
    "billions": "billion",
    "bn": "billion",
    "b": "billion",
    "percent": "percent",
    "per cent": "percent",
}
_NUMBER_SCALE = re.compile(
    r"^(?P<num>[-+]?\s*[$€£¥]?\s*[-+]?\(?\s*[$€£¥]?\s*\d[\d,]*(?:\.\d+)?\s*\)?)\s*"
    r"(?P<word>thousands?|millions?|billions?|percent|per cent|k|mn|mm|m|bn|b)\b\.?"
    r"(?:\s+(?:of\s+)?(?:us\s+)?(?:dollars|usd|euros?|eur|pounds|gbp|yuan|rmb|cny))?$",
    re.IGNORECASE,
)
_PLAIN_NUMBER = re.compile(r"^[-+]?\s*[$€£¥]?\s*[-+]?\(?\s*[$€£¥]?\s*\d[\d,]*(?:\.\d+)?\s*\)?\s*%?$")


@dataclass(frozen=True)
class ExtractedAnswer:
    """An answer read from generated text, in the form TAT-QA's metric scores.

    Attributes:
        spans: the answer items (one for a single answer), e.g. ``("1,234.5",)`` or ``("2020", "2019")``.
        scale: ``""``, ``thousand``, ``million``, ``billion`` or ``percent`` (from a scale word).
        found: an ``Answer:`` line was present (False: the last line was taken instead).
        line: the text the answer was read from.
    """

    spans: tuple[str, ...]
    scale: str
    found: bool
    line: str


def _clean(item: str) -> str:
    item = item.replace("−", "-").strip().strip("*_`").strip()
    if re.match(r"^[–—]\s*[$€£¥(]?\d", item):  # a dash used as a minus sign
        item = "-" + item[1:]
    if len(item) >= 2 and item[0] == item[-1] and item[0] in "\"'":
        item = item[1:-1].strip()
    item = item.strip("“”‘’").strip()
    return item[:-1].rstrip() if item.endswith(".") else item


def extract_answer(text: str) -> ExtractedAnswer:
    """The answer of a generated text (see the module doc for the rules); empty text gives no spans."""
    lines = [ln.strip() for ln in str(text or "").splitlines() if ln.strip()]
    found, line = False, lines[-1] if lines else ""
    for ln in reversed(lines):
        if m := _ANSWER_LINE.match(ln):
            found, line = True, m.group("answer")
            break
    else:
        if m := _ANSWER_IN_LINE.search(line):  # "The answer is 42." on the last line
            line = m.group("answer")
    while (again := _SECOND_ANSWER.match(line.lstrip(" *_"))) is not None:  # "Answer: Answer: 42"
        line = line.lstrip(" *_")[again.end() :].strip()
    if (second := _SECOND_ANSWER.search(line)) and line[: second.start()].strip(" |;*_"):
        line = line[: second.start()]
    items = [_clean(x) for x in re.split(r"\s*[|;]\s*", line)]
    items = [x for x in items if x]
    if len(items) == 1:
        parts = [p.strip() for p in re.split(r",\s+|\s+and\s+", items[0]) if p.strip()]
        if len(parts) > 1 and all(_PLAIN_NUMBER.match(p) or _NUMBER_SCALE.match(p) for p in parts):
            items = parts
    scale, spans = "", []
    for item in items:
        if spans and item.lower() in _SCALE_WORDS and len(item) > 2:  # "$4,143 | thousand"
            scale = scale or _SCALE_WORDS[item.lower()]
            continue
        if m := _NUMBER_SCALE.match(item):
            scale = scale or _SCALE_WORDS[m.group("word").lower()]
            item = m.group("num").strip()
        spans.append(item)
    return ExtractedAnswer(tuple(spans), scale, found, line)
