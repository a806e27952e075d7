"""LLM backends: the configured model that may write a memo body (never a hard-coded model package).

Source: ../shared/seeds/003_2b4a46a307636297.txt, "Compared systems" ("The code also supports
replacing the renderer with an external LLM output adapter while preserving the same
verification and evaluation layer"). The backend only turns chat messages into text; what it
writes is checked number by number by :func:`generation.verify.verify_body`.

Two backends, picked by the ``[llm]`` settings (:func:`backend_from_settings`):

- ``llama-cpp``: a local GGUF file through llama-cpp-python (``pip install 'finkg[llm]'``);
  ``bash scripts/models.sh`` fetches a small real one (SmolLM2-135M-Instruct Q4_1);
- ``openai``: any OpenAI-compatible ``/chat/completions`` endpoint (vLLM, Ollama, llama.cpp
  server, a hosted API), over HTTP with the standard library, retried on connection errors and
  5xx answers.

An empty answer is never silently dropped: :class:`LLMAnswerError` carries the raw answer.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from tenacity import retry, retry_if_exception, stop_after_attempt, wait_exponential

SETTINGS_KEYS = ("[llm] backend", "[llm] model_path", "[llm] base_url", "[llm] model", "[llm] api_key")


class LLMUnavailable(RuntimeError):
    """No LLM can be used: none is configured, its package is not installed, its model file is
    missing, or its server cannot be reached. The message says what to set or install."""


class LLMAnswerError(RuntimeError):
    """The LLM answered, but the answer cannot be used (empty, or not the expected shape).

    Attributes:
        backend: the backend's description (model file or URL and model name).
        raw: the raw answer (text, or the JSON the server sent), kept for the record.
    """

    def __init__(self, message: str, backend: str, raw: Any) -> None:
        super().__init__(f"{backend}: {message}; raw answer: {str(raw)[:500]!r}")
        self.backend = backend
        self.raw = raw


@runtime_checkable
class LLMBackend(Protocol):
    """Something that completes a chat: ``messages`` are ``{"role": "system"|"user"|"assistant",
    "content": str}`` dicts; returns the assistant's text (stripped, never empty).

    Raises:
        LLMUnavailable: the model or server cannot be used.
        LLMAnswerError: the answer is empty or malformed.
    """

    name: str

    def complete(self, messages: list[dict], max_tokens: int, temperature: float) -> str: ...


def _nonempty(text: Any, backend: str, raw: Any) -> str:
    if not isinstance(text, str):
        raise LLMAnswerError("the answer has no text content", backend, raw)
    if not text.strip():
        raise LLMAnswerError("the answer is empty", backend, raw)
    return text.strip()


class LlamaCppBackend:
    """A local GGUF model run by llama.cpp (llama-cpp-python), loaded once on first use.

    Args:
        model_path: the ``.gguf`` file.
        n_ctx: context window in tokens; n_threads: CPU threads; seed: sampling seed (with
            ``temperature=0`` the output is deterministic for a given build and model).

    Raises (on first use):
        LLMUnavailable: llama-cpp-python is not installed, or the model file is missing/unloadable.
    """

    def __init__(self, model_path: str | Path, n_ctx: int = 4096, n_threads: int = 2, seed: int = 0) -> None:
        self.model_path = Path(model_path).expanduser()
        self.n_ctx, self.n_threads, self.seed = n_ctx, n_threads, seed
        self.name = f"llama-cpp:{self.model_path.name}"
        self._llama: Any = None
        self._lock = threading.Lock()
        self.last_usage: dict[str, int] = {}

    def _model(self) -> Any:
        if self._llama is None:
            try:
                import llama_cpp  # lazy: an optional dependency (finkg[llm])
            except ImportError as exc:
                raise LLMUnavailable(
                    "llama-cpp-python is not installed: pip install 'finkg[llm]' "
                    "(or CMAKE_ARGS=\"-DGGML_NATIVE=ON\" pip install llama-cpp-python==0.3.36; it builds "
                    "from source, a few minutes), or set [llm] backend = \"openai\" with a server"
                ) from exc
            if not self.model_path.is_file():
                raise LLMUnavailable(
                    f"GGUF model file not found: {self.model_path} (set [llm] model_path or "
                    "FINKG_LLM_MODEL_PATH; `bash scripts/models.sh` fetches SmolLM2-135M and prints its path)")
            try:
                self._llama = llama_cpp.Llama(model_path=str(self.model_path), n_ctx=self.n_ctx,
                                              n_threads=self.n_threads, seed=self.seed, verbose=False)
            except (ValueError, RuntimeError) as exc:
                raise LLMUnavailable(f"llama.cpp cannot load {self.model_path}: {exc}") from exc
        return self._llama

    def complete(self, messages: list[dict], max_tokens: int, temperature: float) -> str:
        """The assistant's answer to ``messages`` (see :class:`LLMBackend`).

        Raises:
            LLMUnavailable: see the class; LLMAnswerError: an empty or malformed answer.
        """
        with self._lock:  # a Llama object is not safe to use from two threads at once
            out = self._model().create_chat_completion(messages=messages, max_tokens=max_tokens,
                                                       temperature=temperature, seed=self.seed)
        try:
            text = out["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise LLMAnswerError("the answer has no choices[0].message.content", self.name, out) from exc
        self.last_usage = dict(out.get("usage") or {})
        return _nonempty(text, self.name, out)


class _ServerError(Exception):
    """A retryable failure of the OpenAI-compatible server (connection error or 5xx)."""


class OpenAICompatibleBackend:
    """An OpenAI-compatible chat endpoint: POST ``{base_url}/chat/completions``.

    Works with vLLM, Ollama (``http://127.0.0.1:11434/v1``), llama.cpp server and hosted APIs.
    Connection errors, timeouts and 5xx answers are retried (3 attempts, exponential back-off).

    Args:
        base_url: e.g. ``http://127.0.0.1:8000/v1`` (without ``/chat/completions``).
        model: the model name the server knows. api_key: bearer token, if the server wants one.
        timeout: seconds per request.

    Raises (from :meth:`complete`):
        LLMUnavailable: the server cannot be reached, or answers 4xx/5xx; the message names the URL.
        LLMAnswerError: the answer is not JSON, has no message content, or is empty.
    """

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = 120.0,
                 attempts: int = 3) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.api_key, self.timeout, self.attempts = model, api_key, timeout, attempts
        self.name = f"openai:{self.url}:{model}"
        self.last_usage: dict[str, int] = {}

    def _post(self, payload: dict[str, Any]) -> bytes:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(self.url, json.dumps(payload).encode(), headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return resp.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:300].decode("utf-8", "replace")
            if exc.code >= 500:
                raise _ServerError(f"HTTP {exc.code} from {self.url}: {detail}") from exc
            raise LLMUnavailable(f"HTTP {exc.code} from {self.url}: {detail}") from exc
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            raise _ServerError(f"cannot reach {self.url}: {getattr(exc, 'reason', exc)}") from exc

    def complete(self, messages: list[dict], max_tokens: int, temperature: float) -> str:
        """The assistant's answer to ``messages`` (see :class:`LLMBackend` and the class doc)."""
        payload = {"model": self.model, "messages": messages, "max_tokens": max_tokens,
                   "temperature": temperature, "stream": False}
        post = retry(retry=retry_if_exception(lambda e: isinstance(e, _ServerError)),
                     stop=stop_after_attempt(self.attempts), wait=wait_exponential(multiplier=0.5, max=8),
                     reraise=True)(self._post)
        try:
            raw = post(payload)
        except _ServerError as exc:
            raise LLMUnavailable(f"{exc} (after {self.attempts} attempts)") from exc
        try:
            out = json.loads(raw)
            text = out["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMAnswerError(f"{self.url} did not answer with choices[0].message.content", self.name,
                                 raw[:2000].decode("utf-8", "replace")) from exc
        self.last_usage = dict(out.get("usage") or {})
        return _nonempty(text, self.name, out)


def backend_from_settings(settings: Any) -> LLMBackend:
    """The backend the ``[llm]`` settings name (``llm_backend``: ``llama-cpp`` or ``openai``).

    Args:
        settings: a :class:`finkg.config.Settings` (any object with the ``llm_*`` attributes).

    Raises:
        LLMUnavailable: no backend is configured, or a key it needs is missing; the message names
            the settings keys (and environment variables) to set.
    """
    kind = getattr(settings, "llm_backend", None)
    if not kind:
        raise LLMUnavailable(
            "no LLM configured: set [llm] backend = \"llama-cpp\" with [llm] model_path (a GGUF file), or "
            "[llm] backend = \"openai\" with [llm] base_url and [llm] model (and [llm] api_key if needed) in "
            "the settings file, or FINKG_LLM_BACKEND, FINKG_LLM_MODEL_PATH, FINKG_LLM_BASE_URL, FINKG_LLM_MODEL, "
            "FINKG_LLM_API_KEY")
    if kind == "llama-cpp":
        if not settings.llm_model_path:
            raise LLMUnavailable("[llm] backend = \"llama-cpp\" needs [llm] model_path (or FINKG_LLM_MODEL_PATH): "
                                 "a GGUF file; `bash scripts/models.sh` fetches one and prints its path")
        return LlamaCppBackend(settings.llm_model_path, n_ctx=settings.llm_n_ctx, n_threads=settings.llm_threads)
    if kind == "openai":
        missing = [k for k, v in (("[llm] base_url (FINKG_LLM_BASE_URL)", settings.llm_base_url),
                                  ("[llm] model (FINKG_LLM_MODEL)", settings.llm_model)) if not v]
        if missing:
            raise LLMUnavailable(f"[llm] backend = \"openai\" needs {' and '.join(missing)}")
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
        return OpenAICompatibleBackend(settings.llm_base_url, settings.llm_model, key,
                                       timeout=getattr(settings, "llm_timeout", 120.0))
    raise LLMUnavailable(f"unknown [llm] backend {kind!r}: use \"llama-cpp\" or \"openai\"")
