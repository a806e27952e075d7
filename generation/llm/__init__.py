"""LLM backends behind one interface: chat -> text, or JSON that fits a schema.

Source: ../shared/seeds/003_2b4a46a307636297.txt, "Compared systems" (an external LLM output
adapter behind the same verifier) and ../shared/seeds/004_7a67e4eaf6285e0b.txt, section 3.1
(LLM triple extraction and verification, which need JSON answers at batch scale).

Three backends, picked by the ``[llm]`` settings (:func:`client_from_settings`):

- ``llama-cpp`` (:mod:`.llamacpp`): a local GGUF file through llama-cpp-python; JSON-schema
  constrained decoding by grammar; the KV cache of the common prompt prefix is reused;
- ``transformers`` (:mod:`.hf`): a local Hugging Face directory (or a GGUF file transformers
  dequantizes); the schema goes into the prompt and answers are repaired;
- ``openai`` (:mod:`.openai`): any OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp server,
  hosted APIs), with retries and back-off, ``response_format`` JSON schema with fallbacks.

:class:`LLMClient` (:mod:`.client`) adds the disk cache (:mod:`.cache`; a rerun costs nothing),
JSON parsing and json-repair (:mod:`.jsonmode`), token counts and timing per call and in total,
and an optional token budget; :func:`.meter.metered` counts the tokens of one piece of work on one
thread. A failure is raised (:class:`LLMAnswerError` with the raw answer), never returned as an
empty result.
"""

from generation.llm.adapters import AdapterBaseMismatch, check_adapter_base
from generation.llm.base import BudgetExceeded, Completion, LLMAnswerError, LLMBackend, LLMUnavailable, file_sha256
from generation.llm.cache import LLMCache, cache_key
from generation.llm.client import LLMClient, LLMResult, LLMUsage
from generation.llm.factory import (
    BACKENDS,
    LOCAL_BACKENDS,
    UnconfiguredBackend,
    backend_from_settings,
    cache_from_settings,
    client_from_settings,
    shared_threads,
    unconfigured,
)
from generation.llm.hf import TransformersBackend
from generation.llm.jsonmode import AnswerNotJSON, parse_answer, schema_problems
from generation.llm.llamacpp import LlamaCppBackend
from generation.llm.meter import TokenMeter, metered
from generation.llm.openai import OpenAICompatibleBackend

__all__ = [
    "BACKENDS",
    "LOCAL_BACKENDS",
    "AdapterBaseMismatch",
    "AnswerNotJSON",
    "BudgetExceeded",
    "Completion",
    "LLMAnswerError",
    "LLMBackend",
    "LLMCache",
    "LLMClient",
    "LLMResult",
    "LLMUnavailable",
    "LLMUsage",
    "LlamaCppBackend",
    "OpenAICompatibleBackend",
    "TokenMeter",
    "TransformersBackend",
    "UnconfiguredBackend",
    "backend_from_settings",
    "cache_from_settings",
    "cache_key",
    "check_adapter_base",
    "client_from_settings",
    "file_sha256",
    "metered",
    "parse_answer",
    "schema_problems",
    "shared_threads",
    "unconfigured",
]
