"""Answer a question from a filing page: the lines it needs, a rule where one applies, else the LLM over those
lines only; the answer in the question's unit, gated, with the page cited (issue 46 item 4).

When the graph's facts do not hold the answer (a segment's revenue, a figure only in a note), the analyst reads
the page. Giving a 1.5B model the whole page (1,000-2,700 tokens of PDF text) took minutes on 2 cores and slipped
scales ("30.8 million" for a growth rate). Here:

1. the page is read into rows, a year header and sentences and only the lines the question needs are kept
   (:mod:`generation.agent.page_lines`);
2. a **rule** answers when it can (:func:`rule_answer`): one line item in one year ("the FY2018 capital
   expenditure"), free cash flow (operating cash flow less capital expenditure), unadjusted EBITDA (operating income
   plus D&A) and EBITDA less capex, a year-over-year change in percent, an item's % margin of revenue, the change of
   such a margin between two years, and its average over a span of years, and the textbook ratios of
   :data:`RATIOS` (payout, operating cash flow, current, return on assets, turnovers); failing those, TAT-QA's
   table forms (:func:`table_form_answer`, "What was the <row> in 2019?"). Each operand is a page row's cell of the
   year's column, the result a :func:`generation.agent.arithmetic.calculate` call;
3. otherwise the configured **LLM** reads the selected lines (never the page) and writes one arithmetic expression
   over their numbers (:func:`llm_answer`), which ``calculate`` evaluates; it reads them twice, in page order and
   in reverse order, and only an answer both readings give is kept;
4. the answer is stated in the asked unit (:mod:`generation.agent.page_units`: percent, ratio, or the currency
   scale asked) and passes the gate (:func:`generation.agent.page_units.unit_problems`: every number traced to a
   selected line, the kind of number the one asked; :func:`unplaced`: every number of the period asked), else the
   question is refused with the reasons;
5. the answer cites the pages (ids) and lines its operands came from.

:func:`whole_page_answer` is the baseline it is measured against: the whole page given to the model, its first
number read with the unit it wrote (``bench/page_questions.py``).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from generation.agent.arithmetic import calculate
from generation.agent.page_gate import operand_scale, shown_numbers, unnamed, unplaced
from generation.agent.page_lines import Page, PageLine, as_table, asked_items, item_rows, read_page, select_lines
from generation.agent.page_units import AskedUnit, asked_unit, rescale, state, unit_problems
from generation.agent.table_forms import answer_table_form
from generation.llm.client import LLMClient
from retrieval.facts.tables import parse_numbers

_FY = re.compile(r"\b(?:fy\s*|fiscal (?:year )?)?((?:19|20)\d\d)\b", re.IGNORECASE)
_FORMULA = re.compile(r"\bdefined as\b|\bratio\b|\bturnover\b|\baverage\b|\breturn on\b|\bcycle\b|\bpayout\b", re.I)
_CHANGE = re.compile(r"\bchange\b|\bgrowth\b|\bgrew\b|\bincrease\b|\bdecrease\b", re.IGNORECASE)
_MARGIN = re.compile(r"\bmargin\b", re.IGNORECASE)
_SPAN_AVG = re.compile(r"\b(\d) year average\b|\baverage\b", re.IGNORECASE)
_DEFINED = re.compile(r"\bdefined as\b|\bcalculated as\b|\bcomputed as\b|\bmeasured as\b", re.IGNORECASE)
_SUB_YEAR = re.compile(
    r"\b(?:three|six|nine|twelve|3|6|9|12)[- ]months?\b|\bquarter(?:ly)?\b|\bq[1-4]\b|\bfirst half\b|"
    r"\bsecond half\b|\bh[12]\b|\byear[- ]to[- ]date\b|\bytd\b",
    re.IGNORECASE,
)
_COMBINED = re.compile(
    r"\bcombined\b|\btogether\b|\bin aggregate\b|\baggregate\b|\bsum of\b|\btotal of\b|\bplus\b|"
    r"\band\b[^?]*\b(?:combined|together|in total|altogether)\b",
    re.IGNORECASE,
)
_PER_SHARE = re.compile(r"\bper (?:common )?share\b|\bper diluted share\b|\beps\b", re.IGNORECASE)

PROMPT = (
    "Answer the question from the lines of a company's filing below. Reply with ONE arithmetic expression that "
    "computes the answer from numbers copied from the lines (+ - * / and parentheses, no words, no units). For a "
    "percentage, margin or ratio write the fraction (do not multiply by 100). Capital expenditure is the amount "
    "spent, a positive number. For a question asking which item is highest or lowest, write that item's number."
    "\n\nLines:\n{lines}\n\nQuestion: {question}\nExpression:"
)
"""The reader's prompt over the selected lines."""

WHOLE_PAGE_PROMPT = (
    "Answer the question from this page of a company's filing.\n\n{page}\n\nQuestion: {question}\n"
    "Reply with the answer only: one number with its unit."
)
"""The baseline's prompt: the whole page."""


@dataclass
class PageAnswer:
    """The answer to a question over filing pages.

    Attributes:
        question: as asked. answer: the answer in the asked unit (``"65.4%"``, ``"$1,577 million"``) with its
            citation, or None when refused. status: ``answered`` or ``refused``. value: the number as stated
            (None when refused). unit: ``percent``, ``ratio`` or ``amount``. scale: an amount's scale word
            (``million``...; ``""`` for none). route: ``rule``, ``llm`` or ``whole page``. citations: the ids of the
            pages whose lines gave the operands. lines: the lines put before the model or read by the rule.
            expression: the arithmetic evaluated. reasons: why it was refused. seconds: wall time.
            llm: prompt and completion tokens of the model call (empty for the rule).
    """

    question: str
    answer: str | None
    status: str
    value: float | None
    unit: str
    scale: str
    route: str
    citations: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    expression: str = ""
    reasons: list[str] = field(default_factory=list)
    seconds: float = 0.0
    llm: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The answer as JSON-able data (every attribute)."""
        return dict(self.__dict__)


def question_years(question: str) -> list[int]:
    """The fiscal years the question names, in its order, without repeats."""
    return list(dict.fromkeys(int(y) for y in _FY.findall(question)))


ABSOLUTE_ITEMS = ("capital expenditure", "dividends", "cost of revenue")
"""Items a filing may print negative (an outflow, a cost in parentheses) that the rules use as amounts spent."""


def _cell(pages: Sequence[Page], item: str, year: int) -> tuple[float, PageLine] | None:
    for line in item_rows(item, pages):
        if _PER_SHARE.search(line.label):
            continue  # a per-share row is never the item's amount ("Dividends per share" is not dividends paid)
        value = line.value(year)
        if value is not None:
            return value, line
    return None


def _scale_of(pages: Sequence[Page], lines: Sequence[PageLine]) -> str:
    by_id = {p.id: p.scale for p in pages}
    scales = {by_id[line.page] for line in lines}
    return scales.pop() if len(scales) == 1 else ""


def _item_value(pages: Sequence[Page], item: str, year: int, used: list[PageLine]) -> float | None:
    got = _cell(pages, item, year)
    if got is None:
        return None
    used.append(got[1])
    return abs(got[0]) if item in ABSOLUTE_ITEMS else got[0]


def _amount_expr(q: str) -> list[tuple[str, str]] | None:
    """The items (with sign) an amount question sums, or None."""
    if re.search(r"\bfree cash flow\b|\bfcf\b", q):
        return [("+", "cash from operations"), ("-", "capital expenditure")]
    if re.search(r"\bebitda\b", q):
        terms = [("+", "operating income"), ("+", "depreciation and amortization")]
        if re.search(r"\bless capex\b|\bminus capex\b|\bless capital expenditure", q):
            terms.append(("-", "capital expenditure"))
        return terms
    return None


def _margin_terms(q: str) -> list[tuple[str, str]] | None:
    head = q.split("margin")[0]
    terms = _amount_expr(head)
    if terms is not None:
        return terms
    for item in ("operating income", "net income", "depreciation and amortization", "cost of revenue"):
        if item in asked_items(head):
            return [("+", item)]
    return None


def _sum(pages: Sequence[Page], terms: list[tuple[str, str]], year: int, used: list[PageLine]) -> float | None:
    total = 0.0
    for sign, item in terms:
        v = _item_value(pages, item, year, used)
        if v is None:
            return None
        total += v if sign == "+" else -v
    return total


RATIOS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"\bdividend payout ratio\b"), "dividends", "net income"),
    (re.compile(r"\boperating cash flow ratio\b"), "cash from operations", "current liabilities"),
    (re.compile(r"\bworking capital ratio\b|\bcurrent ratio\b"), "current assets", "current liabilities"),
    (re.compile(r"\breturn on assets\b|\broa\b"), "net income", "total assets"),
    (re.compile(r"\bfixed asset turnover\b"), "revenue", "property, plant and equipment"),
    (re.compile(r"\binventory turnover\b"), "cost of revenue", "inventory"),
    (re.compile(r"\b(?:total )?asset turnover\b"), "revenue", "total assets"),
)
"""Ratios by their textbook definitions (CFA Institute, *Financial Reporting and Analysis*, ratio analysis):
numerator item / denominator item of the year asked; the denominator averaged over the two years when the
question says "average ... between FY2018 and FY2019"."""
_AVERAGE_OF = re.compile(r"\baverage\b[^.?]*\bbetween\b")


def _ratio(q: str, pages: Sequence[Page], years: list[int], used: list[PageLine]) -> tuple[float, str] | None:
    for pattern, top, bottom in RATIOS:
        if not pattern.search(q):
            continue
        if not definition_agrees(q, (top, bottom)):
            return None
        later = max(years)
        numerator = _item_value(pages, top, later, used)
        spans = sorted(years) if _AVERAGE_OF.search(q) and len(years) == 2 else [later]
        parts = [_item_value(pages, bottom, y, used) for y in spans]
        if numerator is None or any(p is None for p in parts):
            return None
        denominator = sum(p for p in parts if p is not None) / len(parts)
        if denominator == 0:
            return None
        shown = f"average {bottom}" if len(parts) > 1 else bottom
        return numerator / denominator, f"{top} / {shown}"
    return None


def rule_may_answer(question: str) -> bool:
    """Whether the question is one the rules can place at all; they read a row's cell in a fiscal year's column,
    by a textbook definition, so they leave to the model (or refuse) a question that

    - asks for a span within a year (six months, a quarter, year to date: a page's columns are named by year only,
      so a 10-Q's three- and six-month columns cannot be told apart by the year);
    - combines items ("share repurchases and dividends combined", "the sum of"): one row is not the answer.

    A per-share row is never read as an item's amount ("Dividends per share" is not dividends paid).
    """
    return not (_SUB_YEAR.search(question) or _COMBINED.search(question))


def definition_agrees(question: str, items: Sequence[str]) -> bool:
    """Whether a definition the question states ("ROA is defined as: net income / average total assets") names
    exactly the line items a rule would read (:func:`generation.agent.page_lines.asked_items` of the text after
    "defined as"); True when the question states none. A definition over other items ("dividends per share divided
    by diluted EPS" for a payout ratio) is the question's own formula, not the rule's: the rule leaves it."""
    m = _DEFINED.search(question)
    if m is None:
        return True
    return set(asked_items(question[m.end() :])) == set(items)


def rule_answer(question: str, pages: Sequence[Page]) -> tuple[float, str, list[PageLine], AskedUnit] | None:
    """The answer by rule (module doc, step 2), or None when no rule applies or a cell is missing.

    Returns:
        ``(value in the asked unit, expression, the rows read, the asked unit)``.
    """
    q = " ".join(question.lower().split())
    years = question_years(q)
    if not years or not pages or not rule_may_answer(q):
        return None
    used: list[PageLine] = []
    ratio = _ratio(q, pages, years, used)
    if ratio is not None:
        unit = asked_unit(q)
        return (ratio[0] * 100 if unit.kind == "percent" else ratio[0]), ratio[1], used, unit
    used.clear()
    if _MARGIN.search(q):
        terms = _margin_terms(q)
        if terms is None or not definition_agrees(q, [i for _, i in terms] + ["revenue"]):
            return None
        span = sorted(years)
        m = _SPAN_AVG.search(q)
        if m and len(span) == 2:
            span = list(range(span[0], span[1] + 1))
        margins: list[float] = []
        for y in span:
            part, revenue = _sum(pages, terms, y, used), _item_value(pages, "revenue", y, used)
            if part is None or not revenue:
                return None
            margins.append(part / revenue * 100)
        unit = asked_unit(q)
        if m and len(margins) >= 2:
            return sum(margins) / len(margins), "average of margins", used, unit
        if _CHANGE.search(q) and len(margins) == 2:
            return margins[1] - margins[0], "later margin - earlier margin", used, unit
        if len(margins) == 1:
            return margins[0], "item / revenue * 100", used, unit
        return None
    terms = _amount_expr(q)
    if re.match(r"(?:in [^,]*, )?which\b", q) or (terms is None and _FORMULA.search(q)):
        return None
    items = asked_items(q)
    if terms is None and len(items) == 1:
        terms = [("+", items[0])]
    if terms is None or not definition_agrees(q, [i for _, i in terms]):
        return None
    if _CHANGE.search(q) and len(years) == 2:
        a, b = sorted(years)
        va, vb = _sum(pages, terms, a, used), _sum(pages, terms, b, used)
        if va is None or vb is None or va == 0:
            return None
        unit = asked_unit(q)
        if unit.kind != "percent":
            return None
        return (vb - va) / abs(va) * 100, f"(y{b} - y{a}) / y{a} * 100", used, unit
    if len(years) != 1 or _CHANGE.search(q):
        return None
    value = _sum(pages, terms, years[0], used)
    if value is None:
        return None
    unit = asked_unit(q, _scale_of(pages, used))
    if unit.kind != "amount":
        return None
    expression = " ".join(f"{s} {i}" for s, i in terms).lstrip("+ ")
    return rescale(value, _scale_of(pages, used), unit.scale), expression, used, unit


def table_form_answer(question: str, pages: Sequence[Page]) -> tuple[float, str, list[PageLine], AskedUnit] | None:
    """The answer of TAT-QA's table forms (:func:`generation.agent.table_forms.answer_table_form`: "What was the
    <row> in 2019?", "the percentage change in <row> from 2018 to 2019"...) over each page's rows with year columns
    (:func:`generation.agent.page_lines.as_table`), restated in the asked unit; None when no page's table answers
    or the form's unit is not the one asked (a percentage for an amount, or the other way round)."""
    if not rule_may_answer(question):
        return None
    for page in pages:
        rows = [line for line in page.lines if line.kind == "row" and line.years and line.years == page.years]
        if not rows:
            continue
        got = answer_table_form(question, as_table(page, rows))
        if got is None or got[0].answer is None or " | " in got[0].answer:
            continue
        numbers = parse_numbers(got[0].answer)
        if len(numbers) != 1:
            continue
        unit = asked_unit(question, page.scale)
        percent = got[1] == "percent"
        if percent != (unit.kind == "percent"):
            continue
        value = numbers[0] if percent or unit.kind == "ratio" else rescale(numbers[0], page.scale, unit.scale)
        expression = str(got[0].derivation.get("expression") or "the cell")
        return value, f"table form: {expression}", rows, unit
    return None


_COUNT = re.compile(r"\bhow many\b|\bnumber of\b", re.IGNORECASE)
_SPENT = re.compile(r"\bspen[dt]\b|\bpaid\b|\bpay\b|\bexpenditures?\b|\bcapex\b|\boutflow\b", re.IGNORECASE)


def _clean_expression(text: str) -> str:
    first = next((s for s in text.strip().strip("`").splitlines() if s.strip()), "")
    first = first.split("=")[0] if not first.strip().startswith("=") else first.strip("= ")
    first = re.sub(r"(?<=\d),(?=\d{3})", "", first).replace("$", "").replace("%", "")
    return re.sub(r"[^0-9+\-*/(). ]", "", first).strip()


def _reading(
    question: str,
    lines: Sequence[PageLine],
    pages: Sequence[Page],
    unit: AskedUnit,
    llm: LLMClient,
    max_tokens: int,
) -> tuple[float | None, str, list[str], dict[str, Any]]:
    """One reading of ``lines`` (in the order given) by the model: ``(value in the asked unit or None, expression,
    the gate's reasons when refused, the call's tokens and raw text)``."""
    numbered = "\n".join(f"[{i + 1}] {line.text}" for i, line in enumerate(lines))
    result = llm.chat([{"role": "user", "content": PROMPT.format(lines=numbered, question=question)}], max_tokens)
    call = {"prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens, "raw": result.text}
    expression = _clean_expression(result.text)
    calc = calculate(expression, {}) if expression else None
    if calc is None or not calc.ok:
        return None, expression, [f"the model's expression could not be evaluated: {result.text.strip()[:120]!r}"], call
    value = float(calc.value)
    direct = (unit.kind == "percent" and any("%" in line.text for line in lines)) or (
        bool(_PER_SHARE.search(question)) and any(_PER_SHARE.search(line.label) for line in lines)
    )
    problems = unit_problems(expression, unit, shown_numbers(lines), direct)
    years = question_years(question)
    off = unplaced(expression, lines, years)
    if off and not problems:
        asked = ", ".join(f"FY{y}" for y in years)
        problems = [
            f"numbers not in a column or sentence of the period asked ({asked}): " + ", ".join(f"{x:g}" for x in off)
        ]
    missing = "" if problems else unnamed(question, expression, lines, pages)
    if missing:
        problems = [f"the sentence an operand comes from does not mention {missing}"]
    scale = operand_scale(expression, lines, pages) if not problems and unit.kind == "amount" else ""
    if scale is None:
        problems = ["the operands are in different scales, or one's scale is not on the lines"]
    if problems:
        return None, expression, problems, call
    times100 = bool(re.search(r"\*\s*100(?![\d.])", expression))
    if unit.kind == "percent" and not times100 and "/" in expression:
        value *= 100
    if unit.kind == "ratio" and times100:
        value /= 100
    if unit.kind == "amount":
        value = rescale(value, scale or "", unit.scale)
        if value < 0 and _SPENT.search(question) and re.fullmatch(r"\(?\s*-\s*[\d.]+\s*\)?", expression):
            value = -value  # an amount spent is stated as spent; the cash flow statement prints it negative
    return value, expression, [], call


AGREE = 0.005
"""The most two readings' values may differ (relative) and still be one answer."""


def llm_answer(
    question: str, pages: Sequence[Page], llm: LLMClient, k: int = 8, max_tokens: int = 40, readings: int = 2
) -> PageAnswer:
    """The LLM's answer over the selected lines only (module doc, step 3), gated and stated in the asked unit.

    With ``readings=2`` (the default) the model reads the lines twice, in page order and in reverse order, and the
    answer is given only when both readings pass the gate with the same value (within :data:`AGREE`): a
    self-consistency check (Wang et al. 2023, "Self-Consistency Improves Chain of Thought Reasoning in Language
    Models", ICLR; here over two orders of the same lines at temperature 0). Otherwise the question is refused with
    both readings' expressions. ``readings=1`` is one reading, as before.
    """
    t0 = time.perf_counter()
    lines = select_lines(question, pages, k)
    unit = asked_unit(question, _scale_of(pages, [line for line in lines if line.kind == "row"]))
    out = PageAnswer(question, None, "refused", None, unit.kind, unit.scale, "llm", lines=[line.text for line in lines])
    if not lines:
        out.reasons = ["no line of the page matches the question"]
    elif unit.kind == "amount" and _COUNT.search(question):
        out.reasons = ["a count was asked (how many): the reader states amounts, percentages and ratios only"]
    if out.reasons:  # refused before any model call
        out.seconds = time.perf_counter() - t0
        return out
    value, expression, reasons, call = _reading(question, lines, pages, unit, llm, max_tokens)
    out.llm, out.expression, out.reasons = call, expression, reasons
    if value is not None and readings > 1:
        again, expression2, reasons2, call2 = _reading(question, lines[::-1], pages, unit, llm, max_tokens)
        out.llm = {
            "prompt_tokens": call["prompt_tokens"] + call2["prompt_tokens"],
            "completion_tokens": call["completion_tokens"] + call2["completion_tokens"],
            "raw": call["raw"],
            "raw_second_reading": call2["raw"],
        }
        if again is None or not math.isclose(value, again, rel_tol=AGREE, abs_tol=1e-9):
            shown = f"{again:g}" if again is not None else "refused: " + "; ".join(reasons2)
            out.reasons = [f"two readings of the lines disagree: {expression} = {value:g}; {expression2} = {shown}"]
            value = None
    if value is not None:
        _answered(out, value, unit, lines)
    out.seconds = time.perf_counter() - t0
    return out


def _answered(out: PageAnswer, value: float, unit: AskedUnit, lines: Sequence[PageLine]) -> None:
    rounded = round(value, unit.decimals) if unit.kind != "amount" else value
    cited = list(dict.fromkeys(line.page for line in lines if line.kind != "years"))
    out.value, out.status, out.citations = rounded, "answered", cited
    out.answer = f"{state(rounded, unit)} (source: {', '.join(cited)})"


def answer_page_question(
    question: str, pages: Sequence[tuple[str, str]], llm: LLMClient | None = None, k: int = 8, readings: int = 2
) -> PageAnswer:
    """Answer ``question`` from filing pages: rule first, else the LLM over the selected lines (module doc).

    Args:
        question: as asked, e.g. "What is the FY2018 capital expenditure amount (in USD millions) for 3M?".
        pages: ``(page id, page text)`` pairs (a FinanceBench ``"3M_2018_10K#p59"``, a graph Chunk id...).
        llm: the configured model (None: the rule only; a question it cannot place is refused).
        k: the most lines put before the model.
        readings: the model's readings of the lines that must agree (:func:`llm_answer`; 1: one reading).

    Returns:
        A :class:`PageAnswer`: ``answered`` with the answer in the asked unit and the pages cited, or ``refused``
        with the reasons (no rule and no model, a gate problem, an expression that does not evaluate).

    Raises:
        LLMAnswerError, LLMUnavailable: the model cannot be used.
    """
    t0 = time.perf_counter()
    read = [read_page(pid, text) for pid, text in pages]
    got = rule_answer(question, read) or table_form_answer(question, read)
    if got is not None:
        value, expression, used, unit = got
        out = PageAnswer(question, None, "refused", None, unit.kind, unit.scale, "rule", expression=expression)
        out.lines = [line.text for line in used]
        _answered(out, value, unit, used)
        out.seconds = time.perf_counter() - t0
        return out
    if llm is None:
        unit = asked_unit(question)
        out = PageAnswer(question, None, "refused", None, unit.kind, unit.scale, "rule")
        out.reasons, out.seconds = ["no rule applies and no model is configured"], time.perf_counter() - t0
        return out
    out = llm_answer(question, read, llm, k, readings=readings)
    out.seconds = time.perf_counter() - t0
    return out


_ANSWER_NUMBER = re.compile(
    r"(?P<neg>-)?\s*\$?\s*(?P<neg2>-)?(?P<num>\d[\d,]*(?:\.\d+)?)\s*(?P<unit>%|percent|billion|bn|million|mn|thousand)?",
    re.IGNORECASE,
)
_SCALE_WORDS = {"thousand": "thousand", "million": "million", "mn": "million", "billion": "billion", "bn": "billion"}


def whole_page_answer(
    question: str, pages: Sequence[tuple[str, str]], llm: LLMClient, max_tokens: int = 64
) -> PageAnswer:
    """The baseline: the whole page(s) given to the model, its first number (years skipped) read with the unit it
    wrote (``%``/``percent`` -> percent; a scale word -> an amount in that scale). No gate, no citation check."""
    t0 = time.perf_counter()
    text = "\n\n".join(f"[{pid}]\n{body}" for pid, body in pages)
    result = llm.chat([{"role": "user", "content": WHOLE_PAGE_PROMPT.format(page=text, question=question)}], max_tokens)
    out = PageAnswer(question, None, "refused", None, "amount", "", "whole page")
    out.llm = {"prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens, "raw": result.text}
    for m in _ANSWER_NUMBER.finditer(result.text):
        number = m.group("num").replace(",", "")
        if re.fullmatch(r"(?:19|20)\d\d", number) and not m.group("unit"):
            continue
        word = (m.group("unit") or "").lower()
        sign = -1.0 if (m.group("neg") or m.group("neg2")) else 1.0
        out.value, out.status, out.answer = sign * float(number), "answered", result.text.strip()
        out.unit = "percent" if word in ("%", "percent") else "amount"
        out.scale = _SCALE_WORDS.get(word, "")
        out.citations = [pid for pid, _ in pages]
        break
    else:
        out.reasons = ["the model's answer states no number"]
    out.seconds = time.perf_counter() - t0
    return out
