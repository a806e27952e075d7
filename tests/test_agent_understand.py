"""The LLM-filled plan (generation/agent/understand.py, issue 44): what the model reads is resolved against the
graph's companies and the measure catalog, never taken on trust; with the real SmolLM2 under the plan's JSON
schema (mechanics only: SmolLM2 is too small to be right; what is asserted is that decoding is constrained to the
schema and that an answer, if any, passed both gates)."""

from __future__ import annotations

import zipfile
from functools import cache
from pathlib import Path

import pandas as pd
import pytest
import test_agent_ask
from test_llm import smol_gguf

from generation.agent.ask import answer_sec_question
from generation.agent.understand import plan_schema, resolve
from generation.llm import LlamaCppBackend, LLMClient
from retrieval.facts.measures import BY_ID
from retrieval.facts.names import CompanyIndex

QUARTER = Path(__file__).resolve().parents[1] / "data" / "sec-fsds" / "2009q3.zip"
loaded = test_agent_ask.loaded


@cache
def index() -> CompanyIndex:
    with zipfile.ZipFile(QUARTER) as z, z.open("sub.txt") as f:
        sub = pd.read_csv(f, sep="\t", dtype=str, keep_default_na=False, encoding="latin-1")
    return CompanyIndex({int(c): n for c, n in zip(sub.cik, sub.name, strict=True)}.items())


def read(**kw):
    return {"companies": [], "measure": "revenue", "periods": [], "operation": "value", "lower_wins": False, **kw}


def test_a_read_plan_is_resolved_by_the_catalogs():
    data = read(companies=["J&J"], measure="gross_margin", periods=["the quarter ended June 28, 2009"])
    plan, why = resolve(data, index(), {})
    assert why == "" and plan is not None
    assert plan.companies == [(200406, "JOHNSON & JOHNSON")] and plan.measures == [BY_ID["gross_margin"]]
    assert [p.ddate for p in plan.periods] == ["20090630"] and plan.kind == "value" and plan.unit == "%"
    plan, _ = resolve(read(companies=["Pfizer", "Merck"], measure="net_margin", operation="compare"), index(), {})
    assert plan is not None and plan.kind == "compare" and len(plan.companies) == 2
    plan, _ = resolve(read(companies=["Pfizer"], operation="compare"), index(), {})  # one company: its value
    assert plan is not None and plan.kind == "value"


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (read(companies=["Acme Widgets"]), "no company in the graph is named 'Acme Widgets'"),
        (read(companies=["Pfizer"], measure="beta"), "measure 'beta' is not a catalog id"),
        (read(), "no company named"),
        (read(companies=["Pfizer"], periods=["February 30, 2009"]), "not a date"),
    ],
)
def test_what_does_not_resolve_is_refused_with_the_reason(data, says):
    plan, why = resolve(data, index(), {})
    assert plan is None and says in why


def test_a_short_name_two_companies_share_is_asked_back():
    plan, _ = resolve(read(companies=["Johnson"]), index(), {})
    assert plan is not None and plan.kind == "ambiguous"


def test_the_schema_allows_only_catalog_measures_and_operations():
    schema = plan_schema()
    assert set(schema["properties"]["measure"]["enum"]) == set(BY_ID)
    assert schema["properties"]["operation"]["enum"] == ["value", "change", "difference", "sum", "compare", "rank"]


@pytest.fixture(scope="module")
def smol_client():
    return LLMClient(LlamaCppBackend(smol_gguf(), n_ctx=4096, n_threads=2))


@pytest.mark.model
def test_the_llm_reads_under_the_schema_and_any_answer_passed_both_gates(loaded, smol_client):
    question = "How profitable was the maker of Band-Aids, Johnson & Johnson?"
    words = answer_sec_question(loaded, question)
    assert words.status == "not in graph" and "names no concept or ratio" in words.reasons[0]
    got = answer_sec_question(loaded, question, client=smol_client)
    assert smol_client.usage.requests >= 1
    assert got.status in ("answered", "not understood", "not in graph", "could not verify", "ask back")
    if got.status == "not understood":
        assert got.reasons[0].startswith("not understood: read ")
    if got.answer is not None:
        assert got.verdict is not None and got.verdict.passed and got.verdict.checks["answers_the_question"]
        assert got.plan is not None and got.plan.measures[0].id in BY_ID
