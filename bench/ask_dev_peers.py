"""Issue 44: a development check of peer questions in `finkg ask` ("How does Chevron's return on equity compare
with its peers in the quarter ended June 30, 2009?", "Rank Chevron's peers by ...", "Which of Chevron's peers had
the highest ...?") over the shipped 2009q3 quarter.

Items: every development-half company (the question sets' split rule: sha256 of the CIK) with a 10-Q for the
quarter ended 2009-06-30, each asked each of six ratio measures once, the kind (standing, rank, top) and the name
form drawn with ``--seed``. The company's peers are the quarter's companies with its SIC code (sub.txt ``sic``),
the company's Fama-French 48 industry where the code holds fewer than 3 (the industries' SIC ranges: edgartools'
table of Kenneth French's definition, read from its file as data). The group is the question's definition; it
holds companies of both halves, as any industry does; the companies named in the questions are development-half
only.

Gold, with pandas from num.txt, independent of finkg's engine: each member's operands are the first tag of the
documented synonym order (docs/analyst.md, ``retrieval/facts/concepts.py``'s table and its derivation of untagged total liabilities:
net income ``NetIncomeLoss``,
``ProfitLoss``, ``NetIncomeLossAvailableToCommonStockholdersBasic``; equity ``StockholdersEquity``, then including
noncontrolling interest; revenue ``Revenues``, ``SalesRevenueNet``, ...; long-term debt ``LongTermDebtNoncurrent``,
``LongTermDebt``) that its filing reports whole-entity in USD at 2009-06-30 (flows: the quarter, qtrs 1); a member
without one, or whose ratio divides by a figure at or below zero, is left out. Groups the gold cannot state
plainly are skipped, not asked: a member with two filings in the quarter, a co-registrant filing (nciks > 1) or one
that states an operand for a legal entity only (``coreg``; the engine reads the parent's facts and says so), a
filer's own element (version = the accession number), a bank asked about revenue (a bank's revenue has its own
formula), fewer than two members measured. A member whose filing states the flow over another span only (a 10-K's
year, no quarter) has no quarter to measure.

Scored: standing: the company's value and the group's median within 1 %; rank: the order of the members and every
value; top: the company picked. Abstained (not answered) and wrong with the gate passed are counted apart. Writes
``bench/results/ask-dev-peers.json``; answers checkpointed in ``--out``.

``--industries``: industries said as groups ("Rank the banks by ROE in Q2 2009.", "Which of the oil companies had
the highest current ratio at June 30, 2009?"; :data:`INDUSTRIES`), every industry asked every measure once, no
company named. Writes ``bench/results/ask-dev-peers-industries.json``.

    python bench/ask_dev_peers.py [--seed S] [--limit N] [--out DIR] [--results-dir DIR] [--name NAME] [--industries]
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import random
import re
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from finkg.eval.results import write_result

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ask_dev_exhaustive as exhaustive  # pyright: ignore[reportMissingImports]  (its checkpointed asking)

ROOT = Path(__file__).resolve().parents[1]
TOLERANCE = 0.01
PERIOD = "20090630"
MIN_GROUP = 3

SYNONYMS = {
    "net_income": ("NetIncomeLoss", "ProfitLoss", "NetIncomeLossAvailableToCommonStockholdersBasic"),
    "equity": ("StockholdersEquity", "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest"),
    "revenue": ("Revenues", "SalesRevenueNet", "SalesRevenueGoodsNet", "SalesRevenueServicesNet",
                "RevenueFromContractWithCustomerExcludingAssessedTax",
                "RevenueFromContractWithCustomerIncludingAssessedTax"),
    "assets": ("Assets",),
    "liabilities": ("Liabilities",),
    "current_assets": ("AssetsCurrent",),
    "current_liabilities": ("LiabilitiesCurrent",),
    "ltd": ("LongTermDebtNoncurrent", "LongTermDebt"),
}  # fmt: skip
FLOWS = {"net_income", "revenue"}
MEASURES = {
    # id: (phrases, numerator, denominator, unit); a % measure is the quotient times 100
    "roe": (("return on equity", "ROE"), "net_income", "equity", "%"),
    "roa": (("return on assets", "ROA"), "net_income", "assets", "%"),
    "net_margin": (("net margin", "net profit margin"), "net_income", "revenue", "%"),
    "current_ratio": (("current ratio",), "current_assets", "current_liabilities", "x"),
    "debt_to_equity": (("debt to equity ratio", "D/E ratio"), "ltd", "equity", "x"),
    "liabilities_to_assets": (("liabilities to assets ratio",), "liabilities", "assets", "%"),
}
TEMPLATES = {
    "standing": (
        "How does {pos} {m} compare with its peers {p}?",
        "How does {co} stack up against its peers on {m} {p}?",
    ),
    "rank": ("Rank {pos} peers by {m} {p}.", "Rank {co} and its peers by {m} {p}."),
    "top": ("Which of {pos} peers had the highest {m} {p}?",),
}


def ff48_ranges() -> list[tuple[int, int, str]]:
    """The Fama-French 48 industries' SIC ranges, parsed as data from edgartools' ``sic_industry.py``."""
    spec = importlib.util.find_spec("edgar")
    assert spec is not None and spec.submodule_search_locations
    text = (
        Path(next(iter(spec.submodule_search_locations))) / "xbrl" / "standardization" / "sic_industry.py"
    ).read_text()
    body = re.search(r"_FF48_SIC_RANGES\s*=\s*(\[.*?\n\])", text, re.S)
    assert body is not None, "edgartools' sic_industry.py has no _FF48_SIC_RANGES"
    return [(int(a), int(b), str(c)) for a, b, c in ast.literal_eval(body.group(1))]


class Gold:
    """The quarter's facts and groups, computed with pandas (module doc)."""

    def __init__(self, mq):
        self.sub = mq.read(mq.QUARTER, "sub.txt")
        num = mq.read(mq.QUARTER, "num.txt")
        num = num[(num.ddate == PERIOD) & (num.uom == "USD") & (num.value != "")]
        whole = num[(num.segments == "") & (num.coreg == "")]
        self.whole: dict[tuple[str, str, str], list[tuple[str, float]]] = {}  # whole-entity facts
        for r in whole.itertuples(index=False):
            self.whole.setdefault((r.adsh, r.tag, r.qtrs), []).append((r.version, float(r.value)))
        entity = num[num.coreg != ""]  # facts a filing states for a legal entity only (co-registrants)
        self.entity = set(zip(entity.adsh, entity.tag, entity.qtrs, strict=True))
        self.sub["sicn"] = pd.to_numeric(self.sub.sic, errors="coerce")
        self.ranges = ff48_ranges()
        counts = Counter(self.sub.cik)
        self.twice = {c for c, n in counts.items() if n > 1}
        self.by_cik = {r.cik: r for r in self.sub.itertuples()}

    def ff48(self, sic: float) -> str | None:
        return next((c for a, b, c in self.ranges if a <= sic <= b), None)

    def group(self, cik: str) -> list[str]:
        """The CIKs of company ``cik``'s peers, itself included (module doc)."""
        sic = self.by_cik[cik].sicn
        same = [r.cik for r in self.sub.itertuples() if r.sicn == sic]
        if len(set(same)) < MIN_GROUP and self.ff48(sic) is not None:
            ff = self.ff48(sic)
            same = [r.cik for r in self.sub.itertuples() if self.ff48(r.sicn) == ff]
        return sorted(set(same))

    def operand(self, adsh: str, name: str) -> float | str | None:
        """The first documented synonym reported; None when none; "custom" when the one read is a filer's own
        element or stated for a legal entity only (a co-registrant's ``coreg``), which the gold does not judge."""
        qtrs = "1" if name in FLOWS else "0"
        for tag in SYNONYMS[name]:
            v = self.one(adsh, tag, qtrs)
            if v is not None:
                return v
        if name == "liabilities":  # not tagged: derived as documented (retrieval/facts/concepts.py, seed 003)
            return self.derived_liabilities(adsh)
        return None

    def one(self, adsh: str, tag: str, qtrs: str = "0") -> float | str | None:
        """A tag's whole-entity value (a us-gaap element); "custom" when only a filer's own element or a legal
        entity's fact has it; None when absent."""
        hit = self.whole.get((adsh, tag, qtrs), [])
        std = [v for version, v in hit if version != adsh]
        if std:
            return std[0]
        return "custom" if hit or (adsh, tag, qtrs) in self.entity else None

    def derived_liabilities(self, adsh: str) -> float | str | None:
        """LiabilitiesAndStockholdersEquity less total equity (including noncontrolling interest, else parent equity
        plus MinorityInterest when reported) less temporary equity when reported."""
        total = self.one(adsh, "LiabilitiesAndStockholdersEquity")
        equity = self.one(adsh, "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest")
        if equity is None:
            parent, minority = self.one(adsh, "StockholdersEquity"), self.one(adsh, "MinorityInterest")
            if isinstance(parent, str) or isinstance(minority, str):
                return "custom"
            equity = None if parent is None else parent + (minority or 0.0)
        temporary = self.one(adsh, "TemporaryEquityCarryingAmount")
        if isinstance(total, str) or isinstance(equity, str) or isinstance(temporary, str):
            return "custom"
        if total is None or equity is None:
            return None
        return total - equity - (temporary or 0.0)

    def values(self, ciks: list[str], measure: str) -> dict[str, float] | None:
        """EDGAR name -> the measure, for the members measured; None when the group is skipped (module doc)."""
        _, top, bottom, unit = MEASURES[measure]
        out = {}
        for c in ciks:
            f = self.by_cik[c]
            if c in self.twice or f.nciks != "1":
                return None
            if (top == "revenue" or bottom == "revenue") and 6000 <= (f.sicn or 0) <= 6199:
                return None
            a, b = self.operand(f.adsh, top), self.operand(f.adsh, bottom)
            if isinstance(a, str) or isinstance(b, str):
                return None  # "custom": a filer's own element or a legal entity's fact
            if a is None or b is None or b <= 0:
                continue
            out[f.name] = a / b * (100 if unit == "%" else 1)
        return out if len(out) >= 2 else None


def items(mq, gold: Gold, seed: int) -> list[dict]:
    daily = mq.read(mq.DAILY, "sub.txt")
    filings = [
        f
        for f in mq.question_filings(gold.sub, mq.company_names(gold.sub, daily))
        if mq.split_of(f.cik) == "dev" and f.period == PERIOD
    ]
    rng = random.Random(seed)
    out = []
    for f in filings:
        cik = next(c for c, r in gold.by_cik.items() if int(c) == f.cik)
        members = gold.group(cik)
        for mid, (phrases, _, _, _) in MEASURES.items():
            vals = gold.values(members, mid)
            kind = rng.choice(list(TEMPLATES))
            if vals is None or (f.name not in vals and kind == "standing"):
                continue
            co = rng.choice(f.names)
            flow = any(x in FLOWS for x in MEASURES[mid][1:3])
            p = f"in the quarter ended {mq.day(f.fiscal)}" if flow else f"at {mq.day(f.fiscal)}"
            question = rng.choice(TEMPLATES[kind]).format(co=co, pos=mq.possessive(co), m=rng.choice(phrases), p=p)
            order = sorted(vals, key=lambda n: -vals[n])
            out.append({"id": f"{f.adsh}:{mid}:{kind}", "kind": kind, "measure": mid, "cik": f.cik,
                        "company": f.name, "question": question, "values": vals, "order": order,
                        "median": statistics.median(vals.values())})  # fmt: skip
    return out


INDUSTRIES = {
    # the words a question says -> the group they mean: a Fama-French 48 industry or one SIC code (the probe's own
    # reading of the words, written from Kenneth French's industry names and the SEC's SIC titles)
    "oil companies": "Oil", "oil and gas producers": "Oil", "banks": "Banks", "insurers": "Insur",
    "utilities": "Util", "retailers": "Rtail", "drugmakers": "Drugs", "pharmaceutical companies": "Drugs",
    "medical device makers": "MedEq", "restaurants": "Meals", "REITs": 6798, "software companies": 7372,
    "chipmakers": 3674, "railroads": 4011, "chemical companies": "Chems", "machinery makers": "Mach",
}  # fmt: skip
INDUSTRY_TEMPLATES = {
    "rank": ("Rank the {ind} by {m} {p}.", "Rank {ind} by {m} {p}, highest first."),
    "top": ("Which of the {ind} had the highest {m} {p}?", "Among {ind}, which had the highest {m} {p}?"),
}


def industry_items(gold: Gold, seed: int) -> list[dict]:
    """``--industries``: each industry of :data:`INDUSTRIES` asked each measure once (kind drawn), no company
    named (so no split applies); the group is every quarter company of the industry."""
    rng = random.Random(seed)
    out = []
    for words, target in INDUSTRIES.items():
        if isinstance(target, int):
            members = sorted({r.cik for r in gold.sub.itertuples() if r.sicn == target})
        else:
            members = sorted({r.cik for r in gold.sub.itertuples() if gold.ff48(r.sicn) == target})
        for mid, (phrases, _, _, _) in MEASURES.items():
            vals = gold.values(members, mid)
            kind = rng.choice(list(INDUSTRY_TEMPLATES))
            if vals is None:
                continue
            flow = any(x in FLOWS for x in MEASURES[mid][1:3])
            p = "in Q2 2009" if flow else "at June 30, 2009"
            question = rng.choice(INDUSTRY_TEMPLATES[kind]).format(ind=words, m=rng.choice(phrases), p=p)
            order = sorted(vals, key=lambda n: -vals[n])
            out.append({"id": f"{words}:{mid}:{kind}", "kind": f"industry {kind}", "measure": mid, "cik": None,
                        "company": None, "question": question, "values": vals, "order": order,
                        "median": statistics.median(vals.values())})  # fmt: skip
    return out


def close(a: float | None, b: float) -> bool:
    return a is not None and abs(a - b) <= TOLERANCE * abs(b) + 1e-9


def judge(row: dict, a: dict) -> str:
    if a["status"] != "answered":
        return "abstained"
    if row["kind"] == "standing":
        ok = close(a["value"], row["values"][row["company"]]) and close(a["median"], row["median"])
    elif row["kind"].endswith("rank"):
        ok = a["pick"] == row["order"] and all(close(a["values"].get(n), row["values"][n]) for n in row["order"])
    else:
        ok = a["pick"] == row["order"][:1]
    return "correct" if ok else "wrong_gate_passed"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="checkpoint folder (default out/<results name>)")
    ap.add_argument("--results-dir", type=Path, default=None)
    ap.add_argument("--name", default=None, help="results name (default ask-dev-peers[-industries])")
    ap.add_argument("--industries", action="store_true", help="industries named as groups, no company named")
    args = ap.parse_args()
    args.name = args.name or ("ask-dev-peers-industries" if args.industries else "ask-dev-peers")
    args.out = args.out or ROOT / "out" / args.name
    mq = exhaustive.generator()
    gold = Gold(mq)
    rows = (industry_items(gold, args.seed) if args.industries else items(mq, gold, args.seed))[: args.limit or None]

    def saved(r: dict, a: Any) -> dict:
        d = a.derivation or {}
        median = float(d["result"]) if r["kind"] == "standing" and d.get("result") is not None else None
        return {"status": a.status, "value": a.value, "pick": a.pick, "answer": a.answer, "median": median,
                "values": dict(d.get("values") or {}), "reasons": a.reasons[:1]}  # fmt: skip

    done = exhaustive.ask_checkpointed(rows, args.out, saved, "peer questions")
    figures, table, missed = exhaustive.summary(rows, done, judge, lambda r: r["kind"])
    wrong = exhaustive.not_correct(missed, lambda r: {"gold_order": r["order"][:5], "gold_median": r["median"]})
    params = {"seed": args.seed, "tolerance": TOLERANCE, "period": PERIOD,
              "split": "industries (no company named)" if args.industries else "dev",
              **({"limit": args.limit} if args.limit else {})}  # fmt: skip
    out = write_result(args.name, params, figures, tables={"kinds": table, "not correct": wrong},
                       directory=args.results_dir)  # fmt: skip
    print(f"wrote {out}")


if __name__ == "__main__":
    sys.exit(main())
