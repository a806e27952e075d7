"""Any OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp server, a hosted API), over HTTP
with the standard library; retried with exponential back-off (tenacity).

JSON mode: the schema is sent as ``response_format``, in the first of these styles the server
accepts (remembered for the backend's later calls):

1. ``{"type": "json_schema", "json_schema": {"name": ..., "schema": ..., "strict": true}}``
   (OpenAI, vLLM, Ollama, llama.cpp's own server);
2. ``{"type": "json_object", "schema": ...}`` (llama-cpp-python's server, Anyscale-style);

and when the server rejects both (HTTP 4xx, or any error status whose message names
``response_format``: llama-cpp-python's server answers an unknown style with HTTP 500), once
more plain, with the schema described in the prompt (``constrained=False``: the client then
repairs the answer if needed).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential

from generation.llm.base import Completion, LLMAnswerError, LLMUnavailable
from generation.llm.jsonmode import with_schema_in_prompt

SCHEMA_STYLES = ("json_schema", "json_object")


class _ServerError(Exception):
    """A retryable failure (connection error, timeout, HTTP 5xx or 429)."""


class _Rejected(Exception):
    """The server answered 4xx (not 429): the request itself is refused; not retried."""

    def __init__(self, code: int, detail: str) -> None:
        super().__init__(f"HTTP {code}: {detail}")
        self.code, self.detail = code, detail


def _too_long(exc: _Rejected) -> bool:
    """A refusal because prompt + completion exceed the context window (llama.cpp's server says
    ``exceed_context_size_error``; OpenAI ``context_length_exceeded``): the item fails, the server is fine."""
    return "exceed_context_size" in exc.detail or "context_length_exceeded" in exc.detail


def _response_format(style: str, schema: dict) -> dict[str, Any]:
    if style == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": True}}
    return {"type": "json_object", "schema": schema}


class OpenAICompatibleBackend:
    """POST ``{base_url}/chat/completions``.

    Args:
        base_url: e.g. ``http://127.0.0.1:8000/v1`` (without ``/chat/completions``).
        model: the model name the server knows. api_key: bearer token, if the server wants one.
        timeout: seconds per request. attempts: tries per request (connection errors, timeouts,
            5xx and 429 are retried with exponential back-off: 0.5 s, 1 s, 2 s ... at most 8 s).
        schema_styles: the ``response_format`` styles to try for JSON mode, in order
            (:data:`SCHEMA_STYLES`); an empty tuple sends the schema in the prompt only.
        plain_fallback: when the server refuses every style, ask once more with the schema in the prompt
            (``constrained=False``); False raises :class:`LLMUnavailable` with the server's reason instead
            (a server known to constrain, such as finkg's own llama-server, must not silently stop doing so).

    Attributes:
        model_id: ``openai:<base_url>:<model>``. calls: HTTP requests that got an answer.

    Raises (from :meth:`generate`):
        LLMUnavailable: the server cannot be reached after the retries, or refuses the request;
            the message names the URL.
        LLMAnswerError: the answer is not JSON or has no message content, or the server refused the prompt as
            longer than its context window (an item's failure, recorded by the caller; not the server's).
    """

    supports_schema = True

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 120.0,
        attempts: int = 3,
        schema_styles: Sequence[str] = SCHEMA_STYLES,
        plain_fallback: bool = True,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/chat/completions"
        self.model, self.api_key, self.timeout, self.attempts = model, api_key, timeout, attempts
        self.schema_styles = list(schema_styles)
        self.plain_fallback = plain_fallback
        self.name = f"openai:{self.url}:{model}"
        self.calls = 0

    @property
    def model_id(self) -> str:
        """``openai:<base_url>:<model>`` (the server's weights are not visible from here)."""
        return f"openai:{self.base_url}:{self.model}"

    def _post_once(self, payload: dict[str, Any]) -> bytes:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(self.url, json.dumps(payload).encode(), headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return resp.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:2000].decode("utf-8", "replace")
            if "response_format" in payload and "response_format" in detail:
                raise _Rejected(exc.code, detail[:300]) from exc  # llama-cpp-python's server says 500
            if exc.code >= 500 or exc.code == 429:
                raise _ServerError(f"HTTP {exc.code} from {self.url}: {detail[:300]}") from exc
            raise _Rejected(exc.code, detail[:300]) from exc
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            raise _ServerError(f"cannot reach {self.url}: {getattr(exc, 'reason', exc)}") from exc

    def _post(self, payload: dict[str, Any]) -> bytes:
        post = retry(
            retry=retry_if_exception_type(_ServerError),
            stop=stop_after_attempt(self.attempts),
            wait=wait_exponential(multiplier=0.5, max=8),
            reraise=True,
        )(self._post_once)
        try:
            return post(payload)
        except _ServerError as exc:
            raise LLMUnavailable(f"{exc} (after {self.attempts} attempts)") from exc

    def generate(
        self, messages: list[dict], max_tokens: int, temperature: float, json_schema: dict | None = None, seed: int = 0
    ) -> Completion:
        """One chat completion (see the module doc for JSON mode).

        Raises:
            LLMUnavailable, LLMAnswerError: see the class.
        """
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "seed": seed,
            "stream": False,
        }
        t0 = time.perf_counter()
        raw, constrained = None, False
        if json_schema is not None:
            for style in list(self.schema_styles):
                try:
                    raw = self._post({**payload, "response_format": _response_format(style, json_schema)})
                    constrained = True
                    break
                except _Rejected as exc:
                    if _too_long(exc):
                        raise LLMAnswerError(
                            f"the prompt does not fit: HTTP {exc.code}: {exc.detail}", self.name, ""
                        ) from exc
                    if not self.plain_fallback:
                        raise LLMUnavailable(
                            f"{self.url} refused the JSON schema: HTTP {exc.code}: {exc.detail}"
                        ) from exc
                    if style in self.schema_styles:  # this server does not take it: not again
                        self.schema_styles.remove(style)
            if raw is None:
                payload["messages"] = with_schema_in_prompt(messages, json_schema)
        if raw is None:
            try:
                raw = self._post(payload)
            except _Rejected as exc:
                if _too_long(exc):
                    raise LLMAnswerError(
                        f"the prompt does not fit: HTTP {exc.code}: {exc.detail}", self.name, ""
                    ) from exc
                raise LLMUnavailable(f"{self.url} refused the request: HTTP {exc.code}: {exc.detail}") from exc
        seconds = time.perf_counter() - t0
        self.calls += 1
        try:
            out = json.loads(raw)
            text = out["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMAnswerError(
                f"{self.url} did not answer with choices[0].message.content",
                self.name,
                raw[:2000].decode("utf-8", "replace"),
            ) from exc
        return Completion.from_chat_answer(text, out, seconds, constrained)
