"""data/questions/sec-user.jsonl (issue 44 part 4): the split by company holds, the counts are met, and every gold
recomputes from the shipped quarter's num.txt with pandas here (never through finkg code or the generator's code), so
the gold cannot drift.
"""

from __future__ import annotations

import ast
import hashlib
import json
import operator
import zipfile
from collections import Counter
from functools import cache
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "data" / "questions" / "sec-user.jsonl"
QUARTER = ROOT / "data" / "sec-fsds" / "2009q3.zip"
KINDS = {"value", "ratio", "change", "difference", "compare", "rank", "abstain"}


def questions() -> list[dict]:
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()
    return [json.loads(x) for x in lines if x.strip() and not x.startswith("#")]


@cache
def raw(member: str) -> pd.DataFrame:
    with zipfile.ZipFile(QUARTER) as z, z.open(member) as f:
        return pd.read_csv(f, sep="\t", dtype=str, keep_default_na=False, encoding="latin-1")


@cache
def whole_entity() -> pd.DataFrame:
    num = raw("num.txt")
    df = num[(num.segments == "") & (num.coreg == "") & (num.uom == "USD") & (num.value != "")].copy()
    df["value"] = df["value"].astype(float)
    df["qtrs"] = df["qtrs"].astype(int)
    return df


def fact(adsh: str, tag: str, ddate: str, qtrs: int) -> float:
    df = whole_entity()
    hit = df[(df.adsh == adsh) & (df.tag == tag) & (df.ddate == ddate) & (df.qtrs == qtrs)]
    values = set(hit.value)
    assert len(values) == 1, (adsh, tag, ddate, qtrs, values)  # present and unambiguous
    assert hit.version.str.startswith("us-gaap/").all(), (adsh, tag)  # the standard concept, not a custom one
    return values.pop()


OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def calc(formula: str, env: dict[str, float]) -> float:
    """The formula (names, numbers, + - * / and parentheses) evaluated over ``env``, nothing else allowed."""

    def ev(n: ast.AST) -> float:
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.BinOp) and type(n.op) in OPS:
            return OPS[type(n.op)](ev(n.left), ev(n.right))
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        if isinstance(n, ast.Name):
            return env[n.id]
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)):
            return float(n.value)
        raise ValueError(f"not allowed in a gold formula: {ast.dump(n)}")

    return ev(ast.parse(formula, mode="eval"))


def recompute(spec: dict) -> float:
    """One company's measure: each operand read from num.txt, the formula applied."""
    sub = raw("sub.txt")
    filing = sub[sub.adsh == spec["adsh"]]
    assert len(filing) == 1 and int(filing.cik.iloc[0]) == spec["cik"] and filing.name.iloc[0] == spec["name"]
    env = {}
    for name, op in spec["operands"].items():
        assert op["adsh"] == spec["adsh"]
        env[name] = fact(op["adsh"], op["tag"], op["ddate"], op["qtrs"])
        assert env[name] == op["value"]
    return calc(spec["formula"], env)


def split_of(cik: int) -> str:
    return "dev" if int(hashlib.sha256(str(cik).encode()).hexdigest(), 16) % 2 == 0 else "test"


def test_the_file_states_provenance_and_the_split_rule():
    head = [x for x in QUESTIONS.read_text(encoding="utf-8").splitlines() if x.startswith("# ")]
    text = " ".join(head)
    assert "scripts/make_user_questions.py" in text and "2009q3.zip" in text and "SPLIT RULE" in text


def test_no_company_of_a_dev_question_is_in_a_test_question_and_the_counts_hold():
    qs = questions()
    assert len(qs) >= 200 and len({q["id"] for q in qs}) == len(qs)
    assert {q["kind"] for q in qs} == KINDS and all(q["split"] in ("dev", "test") for q in qs)
    ciks = {s: {c["cik"] for q in qs if q["split"] == s for c in q["companies"]} for s in ("dev", "test")}
    assert not ciks["dev"] & ciks["test"]
    assert len(ciks["dev"] | ciks["test"]) >= 60
    for q in qs:
        for c in q["companies"]:
            assert split_of(c["cik"]) == q["split"], q["id"]  # two-company questions: all of one half
    test = [q for q in qs if q["split"] == "test"]
    assert len(test) >= 100 and len(ciks["test"]) >= 30
    kinds = Counter(q["kind"] for q in test)
    assert all(kinds[k] >= 5 for k in KINDS), kinds
    assert 8 <= sum(q["gold"] == "abstain" for q in qs) <= 20


@pytest.mark.parametrize("name", ["sec-user-dev2.jsonl", "sec-user-dev3.jsonl"])
def test_the_extra_development_sets_hold_development_companies_only_and_recompute(name):
    """The sets ``make_user_questions.py --seed 45/46 --splits dev`` writes: every company of the development half
    (by the split rule, recomputed here), none of a test question's, and every gold recomputed from num.txt."""
    path = QUESTIONS.with_name(name)
    extra = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip() and x[0] != "#"]
    assert len(extra) >= 100 and {q["split"] for q in extra} == {"dev"}
    test_ciks = {c["cik"] for q in questions() if q["split"] == "test" for c in q["companies"]}
    test_texts = {q["question"] for q in questions() if q["split"] == "test"}
    for q in extra:
        assert q["question"] not in test_texts, q["id"]
        for c in q["companies"]:
            assert split_of(c["cik"]) == "dev" and c["cik"] not in test_ciks, q["id"]
        if q["gold"] != "abstain" and q["kind"] in ("value", "ratio", "change"):
            assert recompute(q["spec"][0]) == pytest.approx(q["gold"]["value"], rel=1e-6, abs=1e-6), q["id"]


def test_every_measure_is_asked_and_phrasings_vary():
    qs = questions()
    measures = {q["measure"] for q in qs}
    for m in ["revenue", "net_income", "operating_income", "gross_profit", "rnd", "sga", "income_tax", "capex",
              "ocf", "fcf", "cash", "assets", "liabilities", "equity", "ltd", "inventory", "working_capital",
              "gross_margin", "operating_margin", "net_margin", "rnd_share", "sga_share", "tax_rate",
              "current_ratio", "quick_ratio", "cash_ratio", "debt_to_equity", "liabilities_to_equity",
              "liabilities_to_assets", "roa", "roe", "ocf_margin", "interest_coverage", "revenue_growth",
              "net_income_growth", "operating_income_growth"]:  # fmt: skip
        assert m in measures, m
    styles = Counter(q["period"]["style"] for q in qs if q["period"])
    assert {"quarter", "ytd", "instant", "latest"} <= set(styles)
    text = " ".join(q["question"] for q in qs)
    for phrase in ["the quarter ended June 30, 2009", "Q2 2009", "the June 2009 quarter", "as of June 30, 2009",
                   "the six months ended June 30, 2009", "'s "]:  # fmt: skip
        assert phrase in text, phrase
    # questions name companies as people do: never the raw EDGAR name with its legal suffix
    for q in qs:
        for c in q["companies"]:
            assert c["name"] not in q["question"] or not c["name"].endswith((" INC", " CORP", " CO")), q["id"]


def sample() -> list[dict]:
    """Every line with a computed gold (all of them: recomputing is cheap); at least 40 and every kind."""
    qs = [q for q in questions() if q["gold"] != "abstain"]
    assert len(qs) >= 40 and {q["kind"] for q in qs} == KINDS - {"abstain"}
    return qs


@pytest.mark.parametrize("q", sample(), ids=lambda q: q["id"])
def test_the_gold_recomputes_from_num_txt(q):
    values = [recompute(s) for s in q["spec"]]
    g = q["gold"]
    names = [s["name"] for s in q["spec"]]
    if q["kind"] in ("value", "ratio", "change"):
        assert len(values) == 1 and values[0] == pytest.approx(g["value"], rel=1e-6, abs=1e-6)
    elif q["kind"] == "difference":
        assert values[0] - values[1] == pytest.approx(g["value"], rel=1e-6) and g["value"] > 0
    elif q["kind"] == "compare":
        win = max(range(2), key=lambda i: values[i])
        assert names[win] == g["winner"] and q["spec"][win]["cik"] == g["winner_cik"]
        assert max(values) - min(values) == pytest.approx(g["difference"], rel=1e-6)
    else:
        order = sorted(range(len(values)), key=lambda i: -values[i])
        assert [names[i] for i in order] == g["order"]
    # one period end for every company of a question (a two-company question compares like with like)
    assert len({op["ddate"] for s in q["spec"] for k, op in s["operands"].items() if "year_earlier" not in k}) == 1
