"""The ``llama-server`` backend (generation/llm/server.py): llama.cpp's own HTTP server, built by
scripts/bootstrap.sh, started by finkg with parallel slots, with the real SmolLM2-135M GGUF. No mock.

What users rely on: concurrent calls are all answered (none lost, each the JSON its schema asks for); the
model identity is the GGUF's, so the answer cache is shared with the in-process llama-cpp backend; a missing
binary, a missing model or a server that dies while loading is one clear error; closing stops the process.
"""

from __future__ import annotations

import os
import stat
from concurrent.futures import ThreadPoolExecutor

import pytest
from test_llm import SCHEMA, smol_gguf

from finkg import api
from finkg.config import load_settings
from generation.llm import LLMAnswerError, LLMClient, LLMUnavailable, backend_from_settings, shared_threads
from generation.llm.server import LlamaServerBackend, default_server_path

pytestmark = pytest.mark.model

QUESTIONS = [
    f"{name} had revenue of {rev} billion dollars in 2009. Give company and revenue."
    for name, rev in (("Walmart", 405), ("Exxon", 310), ("Chevron", 171), ("Ford", 118), ("Pfizer", 50))
]


@pytest.fixture(scope="module")
def served():
    backend = LlamaServerBackend(smol_gguf(), n_ctx=2048, parallel=2, n_threads=2)
    yield backend
    backend.close()


def test_the_server_binary_is_built_by_bootstrap_into_the_environment():
    path = default_server_path()
    assert path is not None and path.is_file(), "scripts/bootstrap.sh builds llama-server into the venv's bin/"
    assert os.stat(path).st_mode & stat.S_IXUSR


def test_concurrent_calls_are_all_answered_with_json_that_fits_the_schema(served):
    client = LLMClient(served)  # no cache: every call reaches the server
    messages = [[{"role": "user", "content": q}] for q in QUESTIONS]
    with ThreadPoolExecutor(len(messages)) as pool:  # more calls than slots: the rest wait in the queue
        answers = list(pool.map(lambda m: client.chat(m, max_tokens=48, json_schema=SCHEMA), messages))
    assert len(answers) == len(QUESTIONS) == served.calls
    for a in answers:
        assert a.constrained and set(a.data) >= {"company", "revenue"} and isinstance(a.data["revenue"], int | float)
        assert a.completion_tokens > 0 and a.prompt_tokens > 0
    assert client.usage.calls == len(QUESTIONS) and client.usage.failures == 0
    # the same weights: the in-process backend's identity, so the disk cache is shared between the two
    assert served.model_id.startswith("gguf:") and len(served.model_id) == len("gguf:") + 64
    assert served.count_prompt_tokens(messages[0]) > len(QUESTIONS[0].split())


def test_settings_pick_the_server_backend_and_its_parallel_slots(tmp_path):
    s = load_settings(llm_backend="llama-server", llm_model_path=smol_gguf(), llm_parallel=3, llm_cache_dir=tmp_path)
    backend = backend_from_settings(s)
    assert isinstance(backend, LlamaServerBackend) and backend.parallel == 3
    assert "--parallel" in (cmd := backend.command(8080)) and cmd[cmd.index("--parallel") + 1] == "3"
    assert cmd[cmd.index("--ctx-size") + 1] == str(3 * s.llm.n_ctx)  # each slot gets the whole n_ctx
    assert s.llm.concurrency() == 3
    assert load_settings(llm_backend="llama-cpp", llm_model_path=smol_gguf()).llm.concurrency() == 1


def test_threads_are_shared_so_two_models_never_ask_for_more_than_the_cores():
    assert shared_threads(2, 2, cores=2) == 1  # two llama-servers on this 2-core machine: 1 thread each
    assert shared_threads(2, 2, cores=16) == 2  # cores enough: the configured threads stand
    assert shared_threads(8, 2, cores=6) == 3 and shared_threads(4, 1, cores=2) == 2
    assert shared_threads(2, 3, cores=2) == 1  # never below one thread
    with pytest.raises(ValueError, match="threads"):
        shared_threads(0, 2)


def test_an_adapter_run_gives_the_base_and_the_tuned_server_their_share_of_the_cores(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)  # the 2 cores of the brief
    s = load_settings(llm_backend="llama-server", llm_model_path=smol_gguf(), llm_threads=2, llm_cache_dir=tmp_path)
    shared = api._beside_tuned(s)
    for settings in (shared, shared.model_copy(update={"llm_adapter_path": tmp_path / "adapter.gguf"})):
        cmd = backend_from_settings(settings).command(8080)
        assert cmd[cmd.index("--threads") + 1] == "1"
    assert s.llm.threads == 2  # the caller's settings are left as they were
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert api._beside_tuned(s) is s
    openai = load_settings(llm_backend="openai", llm_base_url="http://127.0.0.1:1/v1", llm_model="m", llm_threads=2)
    assert api._beside_tuned(openai).llm.threads == 2  # a remote endpoint's threads are not ours to share


def test_a_missing_binary_or_model_is_one_clear_error(tmp_path):
    with pytest.raises(LLMUnavailable, match=r"llama-server.*bootstrap"):
        LlamaServerBackend(smol_gguf(), server_path=tmp_path / "no-such-llama-server").start()
    with pytest.raises(LLMUnavailable, match="GGUF model file not found"):
        LlamaServerBackend(tmp_path / "missing.gguf").start()


def test_a_server_that_dies_while_loading_is_reported_with_its_log(tmp_path):
    bad = tmp_path / "not-a-model.gguf"
    bad.write_bytes(b"this is not a GGUF file" * 100)
    backend = LlamaServerBackend(bad, start_timeout=60)
    with pytest.raises(LLMUnavailable, match="exited with status") as err:
        backend.start()
    assert "gguf" in str(err.value).lower()  # the server's own words about the file


def test_close_stops_the_server_process():
    backend = LlamaServerBackend(smol_gguf(), n_ctx=512, parallel=1)
    backend.start()
    proc = backend._proc
    assert proc is not None and proc.poll() is None
    backend.close()
    assert proc.poll() is not None
    backend.close()  # idempotent


def test_every_schema_finkg_sends_is_constrained_by_the_server_never_silently_dropped(served):
    from generation.kgbuild.extraction import extraction_json_schema, extraction_messages, verify_json_schema

    client = LLMClient(served)
    for schema in (extraction_json_schema(2), verify_json_schema(3)):
        res = client.chat(
            extraction_messages(["Financial markets remain quite strained.", "Inflation has moderated."]),
            max_tokens=64,
            json_schema=schema,
        )
        assert res.constrained  # decoded under the schema's grammar, not asked in the prompt
    # a schema llama-server refuses (a boolean "items") is an error naming the reason: no unconstrained fallback
    refused = {
        "type": "object",
        "properties": {"x": {"type": "array", "prefixItems": [{"type": "integer"}], "items": False}},
    }
    with pytest.raises(LLMUnavailable, match="refused the JSON schema"):
        client.chat([{"role": "user", "content": "x"}], max_tokens=8, json_schema=refused)
    # a prompt longer than a slot's window fails that call only (recorded by the caller), the server stays up
    with pytest.raises(LLMAnswerError, match="does not fit"):
        client.chat([{"role": "user", "content": "inflation " * 3000}], max_tokens=8, json_schema=verify_json_schema(1))
    assert client.chat([{"role": "user", "content": "Say OK."}], max_tokens=4).text
