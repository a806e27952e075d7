"""Score answers to FinanceBench page questions against their gold numbers (issue 46 item 4).

FinanceBench's gold answers are free text (``"$1577.00"``, ``"30.8%"``, ``"JnJ sold its inventory 2.7 times in
FY2022."``). The page questions finkg is measured on are those whose gold answer states **one number**
(:func:`gold_number`: at most 90 characters, exactly one number besides years, not a yes/no answer): 66 of the 150.
They are split once, by the SHA-256 of the question id, into a development part (tuned on) and a test part
(scored, never read): ``scripts/make_financebench_split.py`` writes both lists to ``data/questions/``.

An answer is **correct** when its number equals the gold's (:func:`same_value`: to the gold's decimals, or within
1 % of it) in the gold's unit: a gold percentage needs an answer in percent; a gold with a scale word (``"$13.2
billion"``, ``"$2,018mn"``) is compared at full scale; any other gold (``"$1577.00"`` to a question asked "in USD
millions", a ratio ``"0.66"``) is the number as the question's unit states it, so the answer's number as stated is
compared. An answer that states no number is **abstained**; any other is **wrong**.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from ingest.datasets.financebench import PageQuestion

NOT_ON_PAGE = "NOT ON PAGE"
"""The gold of a development question whose answer its page does not hold (``data/financebench/page-dev-extra.jsonl``):
the reader is right to refuse it, wrong to answer it."""
MAX_GOLD_CHARS = 90
DEV_SIZE = 26
"""Questions of the pool in the development part (the rest, 40, are the test part)."""

_YEARS = re.compile(r"\b(?:FY\s*|Q[1-4]\s*(?:of\s*)?(?:FY\s*)?)?(?:19|20)\d\d\b", re.IGNORECASE)
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9.])(?P<neg>-)?\s*\$?\s*(?P<neg2>-)?(?P<num>\d[\d,]*(?:\.\d+)?)"
    r"\s*(?P<unit>%|percent\b|billion\b|bn\b|million\b|mn\b|thousand\b)?",
    re.IGNORECASE,
)
_YES_NO = re.compile(r"\s*(?:yes|no)\b", re.IGNORECASE)
_SCALES = {"thousand": 1e3, "million": 1e6, "mn": 1e6, "billion": 1e9, "bn": 1e9}


@dataclass(frozen=True)
class GoldNumber:
    """A gold answer's number: ``value`` as written, ``decimals`` written, ``percent`` (``%``), ``scale`` (1 when
    no scale word; 1e6 for ``million``/``mn``...) and whether a scale word was written (``scaled``)."""

    value: float
    decimals: int
    percent: bool
    scale: float
    scaled: bool


def gold_number(answer: str) -> GoldNumber | None:
    """The one number of a gold answer, or None when it is not a page question's gold (longer than 90 characters,
    a yes/no answer, none or several numbers besides years)."""
    if len(answer) > MAX_GOLD_CHARS or _YES_NO.match(answer):
        return None
    found = list(_NUMBER.finditer(_YEARS.sub(" ", answer)))
    if len(found) != 1:
        return None
    m = found[0]
    text = m.group("num").replace(",", "")
    unit = (m.group("unit") or "").lower()
    sign = -1.0 if (m.group("neg") or m.group("neg2")) else 1.0
    decimals = len(text.split(".")[1]) if "." in text else 0
    percent = unit in ("%", "percent")
    return GoldNumber(sign * float(text), decimals, percent, _SCALES.get(unit, 1.0), unit in _SCALES)


def page_pool(questions: list[PageQuestion]) -> list[PageQuestion]:
    """The questions whose gold answer states one number (:func:`gold_number`), in file order."""
    return [q for q in questions if gold_number(q.answer) is not None]


def split_pool(pool: list[PageQuestion], dev_size: int = DEV_SIZE) -> tuple[list[str], list[str]]:
    """``(dev uids, test uids)``: the pool ordered by the SHA-256 of each uid, the first ``dev_size`` the
    development part, the rest the test part (each list in that hash order)."""
    ordered = sorted(pool, key=lambda q: hashlib.sha256(q.uid.encode()).hexdigest())
    return [q.uid for q in ordered[:dev_size]], [q.uid for q in ordered[dev_size:]]


def read_uids(path: Path) -> list[str]:
    """The uids of a frozen list (one a line; ``#`` lines are comments)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [s.strip() for s in lines if s.strip() and not s.startswith("#")]


def same_value(answer: float, gold: GoldNumber) -> bool:
    """Whether ``answer`` (in the gold's unit and scale) equals the gold to the gold's decimals or within 1 %."""
    if abs(answer - gold.value) <= 0.5 * 10 ** (-gold.decimals) + 1e-9:
        return True
    return gold.value != 0 and abs(answer - gold.value) <= 0.01 * abs(gold.value)


def score(value: float | None, unit: str, scale: float, gold: GoldNumber) -> str:
    """``correct``, ``abstained`` or ``wrong`` (module doc).

    Args:
        value: the answer's number as stated (None: no answer). unit: the answer's unit (``percent`` for a
            percentage; anything else is not one). scale: the factor of the answer's scale word (1e6 for
            "million"; 1 when none). gold: the gold number.
    """
    if value is None:
        return "abstained"
    if gold.percent:
        return "correct" if unit == "percent" and same_value(value, gold) else "wrong"
    if unit == "percent":
        return "wrong"
    if gold.scaled:
        full = GoldNumber(gold.value * gold.scale, 0, False, 1.0, False)
        return "correct" if same_value(value * scale, full) else "wrong"
    return "correct" if same_value(value, gold) else "wrong"
