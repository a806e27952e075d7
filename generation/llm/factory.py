"""The backend and client that the ``[llm]`` settings name (never a hard-coded model package).

Keys (``[llm]`` in the settings file, ``FINKG_LLM__<KEY>`` in the environment):
``backend`` (llama-cpp | llama-server | transformers | openai), ``model_path`` (a GGUF file, or a Hugging Face
directory), ``gguf_file`` (transformers: a GGUF file inside ``model_path``), ``adapter_path`` (a LoRA adapter:
a peft directory for transformers, a GGUF LoRA file for llama-cpp), ``base_url``,
``model``, ``api_key``, ``timeout``, ``n_ctx``, ``n_batch``, ``threads``, ``parallel``, ``server_path``, ``cache``,
``cache_dir``, ``budget_tokens``, ``seed`` (see :class:`finkg.config.LLMSettings`). The functions take
any object with an ``llm`` section of that shape (:class:`HasLLMSettings`; finkg's ``Settings`` is one).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

from generation.llm.base import Completion, LLMBackend, LLMUnavailable
from generation.llm.cache import LLMCache
from generation.llm.client import LLMClient
from generation.llm.hf import TransformersBackend
from generation.llm.llamacpp import MODEL_HINT, LlamaCppBackend
from generation.llm.openai import OpenAICompatibleBackend
from generation.llm.server import LlamaServerBackend

BACKENDS = ("llama-cpp", "llama-server", "transformers", "openai")
LOCAL_BACKENDS = ("llama-cpp", "llama-server", "transformers")


def shared_threads(threads: int, models: int, cores: int | None = None) -> int:
    """CPU threads for each of ``models`` local models that run at once on this machine (an evaluation's base and
    LoRA-tuned model: two llama-servers): the configured ``threads``, lowered so that together they ask for no more
    threads than there are cores, at least 1. llama.cpp's threads wait for each other at every layer, so threads
    that share a core with another model's slow both: two llama-servers with 2 threads each on 2 cores gave 2.40
    completion tokens/s, with 1 thread each 3.40 (1.42x; ``bench/two_servers.py``).

    Args:
        threads: ``[llm] threads`` (per model). models: how many run at once (>= 1).
        cores: cores this process may use (default: its CPU affinity, else ``os.cpu_count()``).

    Raises:
        ValueError: ``threads`` or ``models`` below 1.
    """
    if threads < 1 or models < 1:
        raise ValueError(f"threads ({threads}) and models ({models}) must be >= 1")
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(threads, cores // models))


class _Secret(Protocol):
    def get_secret_value(self) -> str: ...


class LLMConfig(Protocol):
    """The ``[llm]`` section's keys the factory reads (``finkg.config.LLMSettings`` has them)."""

    @property
    def backend(self) -> str | None: ...

    @property
    def model_path(self) -> Path | None: ...

    @property
    def gguf_file(self) -> str | None: ...

    @property
    def adapter_path(self) -> Path | None: ...

    @property
    def base_url(self) -> str | None: ...

    @property
    def model(self) -> str | None: ...

    @property
    def api_key(self) -> _Secret | None: ...

    @property
    def timeout(self) -> float: ...

    @property
    def n_ctx(self) -> int: ...

    @property
    def n_batch(self) -> int: ...

    @property
    def threads(self) -> int: ...

    @property
    def parallel(self) -> int: ...

    @property
    def server_path(self) -> Path | None: ...

    @property
    def cache(self) -> bool: ...

    @property
    def cache_dir(self) -> Path: ...

    @property
    def budget_tokens(self) -> int | None: ...

    @property
    def seed(self) -> int: ...


class HasLLMSettings(Protocol):
    """Settings with an ``llm`` section (``finkg.config.Settings``)."""

    @property
    def llm(self) -> LLMConfig: ...


DEFAULT_CACHE_DIR = Path("~/.cache/finkg/llm-cache")


def backend_from_settings(settings: HasLLMSettings) -> LLMBackend:
    """The backend the ``[llm]`` settings name.

    Args:
        settings: a :class:`finkg.config.Settings` (any object with an ``llm`` section, :class:`HasLLMSettings`).

    Raises:
        LLMUnavailable: no backend is configured, or a key it needs is missing; the message names
            the settings keys (and environment variables) to set.
    """
    kind = settings.llm.backend
    if not kind:
        raise LLMUnavailable(
            'no LLM configured: set [llm] backend = "llama-cpp" (or "llama-server") with [llm] model_path (a GGUF file), '
            '[llm] backend = "transformers" with [llm] model_path (a Hugging Face directory; [llm] gguf_file for '
            'a GGUF in it), or [llm] backend = "openai" with [llm] base_url and [llm] model (and [llm] api_key if '
            "needed) in the settings file, or FINKG_LLM_BACKEND, FINKG_LLM_MODEL_PATH, FINKG_LLM_BASE_URL, "
            "FINKG_LLM_MODEL, FINKG_LLM_API_KEY"
        )
    threads = settings.llm.threads
    if kind == "llama-cpp":
        if not settings.llm.model_path:
            raise LLMUnavailable(f'[llm] backend = "llama-cpp" needs [llm] model_path: a GGUF file ({MODEL_HINT})')
        return LlamaCppBackend(
            settings.llm.model_path,
            n_ctx=settings.llm.n_ctx,
            n_threads=threads,
            n_batch=settings.llm.n_batch,
            lora_path=settings.llm.adapter_path,
        )
    if kind == "llama-server":
        if not settings.llm.model_path:
            raise LLMUnavailable(f'[llm] backend = "llama-server" needs [llm] model_path: a GGUF file ({MODEL_HINT})')
        return LlamaServerBackend(
            settings.llm.model_path,
            server_path=settings.llm.server_path,
            n_ctx=settings.llm.n_ctx,
            parallel=settings.llm.parallel,
            n_threads=threads,
            n_batch=settings.llm.n_batch,
            lora_path=settings.llm.adapter_path,
            timeout=max(settings.llm.timeout, 600.0),
        )
    if kind == "transformers":
        if not settings.llm.model_path:
            raise LLMUnavailable(
                '[llm] backend = "transformers" needs [llm] model_path (or FINKG_LLM_MODEL_PATH): '
                "a Hugging Face model directory, or the folder of a GGUF file named by [llm] gguf_file"
            )
        path, gguf = Path(settings.llm.model_path).expanduser(), settings.llm.gguf_file
        if path.is_file() and path.suffix == ".gguf" and not gguf:  # a GGUF file given directly
            path, gguf = path.parent, path.name
        return TransformersBackend(path, gguf_file=gguf, n_threads=threads, adapter_path=settings.llm.adapter_path)
    if kind == "openai":
        missing = [
            k
            for k, v in (
                ("[llm] base_url (FINKG_LLM_BASE_URL)", settings.llm.base_url),
                ("[llm] model (FINKG_LLM_MODEL)", settings.llm.model),
            )
            if not v
        ]
        if missing:
            raise LLMUnavailable(f'[llm] backend = "openai" needs {" and ".join(missing)}')
        key = settings.llm.api_key.get_secret_value() if settings.llm.api_key else None
        assert settings.llm.base_url and settings.llm.model  # checked above
        return OpenAICompatibleBackend(settings.llm.base_url, settings.llm.model, key, timeout=settings.llm.timeout)
    raise LLMUnavailable(f"unknown [llm] backend {kind!r}: use one of {', '.join(BACKENDS)}")


def cache_from_settings(settings: HasLLMSettings) -> LLMCache | None:
    """The disk cache at ``[llm] cache_dir``, or None when ``[llm] cache = false``."""
    if not settings.llm.cache:
        return None
    return LLMCache(settings.llm.cache_dir or DEFAULT_CACHE_DIR)


class UnconfiguredBackend:
    """The backend of a command that may make no LLM call when the ``[llm]`` settings name none it can use: the
    command runs, and its first call raises :class:`LLMUnavailable` with ``reason`` (the message
    :func:`backend_from_settings` gave: the setting to set). Its model identity is ``none``.

    Attributes:
        reason: why no backend could be made. name, model_id: ``none``. calls: always 0.
    """

    supports_schema = False

    def __init__(self, reason: str) -> None:
        self.reason = reason
        self.name = "none"
        self.calls = 0

    @property
    def model_id(self) -> str:
        """``none``: no model answers."""
        return "none"

    def generate(
        self, messages: list[dict], max_tokens: int, temperature: float, json_schema: dict | None = None, seed: int = 0
    ) -> Completion:
        """Raises LLMUnavailable: no backend is configured (:attr:`reason`)."""
        raise LLMUnavailable(self.reason)


def unconfigured(client: LLMClient) -> str | None:
    """Why ``client`` has no backend (its :class:`UnconfiguredBackend`'s reason), or None when it has one."""
    backend = client.backend
    return backend.reason if isinstance(backend, UnconfiguredBackend) else None


def client_from_settings(settings: HasLLMSettings, *, required: bool = True) -> LLMClient:
    """An :class:`LLMClient` with the ``[llm]`` backend, disk cache and ``budget_tokens``. The model itself loads at
    the first call (every backend loads its weights or starts its server then).

    Args:
        required: False for a command that may make no LLM call (a report the analyst answers from the graph): a
            missing or incomplete ``[llm]`` setting is then raised at the first call, not now
            (:class:`UnconfiguredBackend`).

    Raises:
        LLMUnavailable: see :func:`backend_from_settings` (``required`` only).
    """
    try:
        backend: LLMBackend = backend_from_settings(settings)
    except LLMUnavailable as exc:
        if required:
            raise
        backend = UnconfiguredBackend(str(exc))
    return LLMClient(
        backend,
        cache=cache_from_settings(settings),
        budget_tokens=settings.llm.budget_tokens,
        seed=settings.llm.seed,
    )
