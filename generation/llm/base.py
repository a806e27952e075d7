"""The LLM layer's errors, the backend protocol and what a backend returns.

A backend turns chat messages into one raw answer (:class:`Completion`); everything above it
(JSON parsing and repair, the disk cache, usage totals, the token budget) lives in
:class:`generation.llm.client.LLMClient`, so every backend gets it the same way.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from kg.errors import LLMError


class LLMUnavailable(LLMError):
    """No LLM can be used: none is configured, its package is not installed, its model file is
    missing or unloadable, or its server cannot be reached (after the retries). The message says
    which settings key to set or what to install."""


class LLMAnswerError(LLMError):
    """The LLM answered, but the answer cannot be used: empty, not JSON even after repair, or JSON
    that does not fit the schema asked for. Never swallowed into an empty result.

    Args / attributes:
        message: what is wrong with the answer.
        backend: the backend's description (model file or URL and model name).
        raw: the raw answer (the text, or the JSON the server sent), kept so callers can record it.
    """

    def __init__(self, message: str, backend: str, raw: Any) -> None:
        super().__init__(f"{backend}: {message}; raw answer: {str(raw)[:500]!r}")
        self.backend = backend
        self.raw = raw


class BudgetExceeded(LLMError):
    """A client's token budget is spent: raised *before* a backend call once the prompt +
    completion tokens this client has spent reach ``budget_tokens`` (cache hits cost nothing).

    Attributes:
        spent: tokens spent so far; budget: the cap (``[llm] budget_tokens``).
    """

    def __init__(self, spent: int, budget: int) -> None:
        super().__init__(
            f"LLM token budget spent: {spent:,} prompt+completion tokens used, budget "
            f"{budget:,} ([llm] budget_tokens or FINKG_LLM_BUDGET_TOKENS; unset for no cap)"
        )
        self.spent, self.budget = spent, budget


@dataclass(frozen=True)
class Completion:
    """One raw answer of a backend, before any parsing (this is what the disk cache stores).

    Attributes:
        text: the assistant's text as the model wrote it (may be empty: the client decides).
        prompt_tokens / completion_tokens: token counts the backend reported (0 when unknown).
        seconds: wall time of the backend call.
        constrained: True when decoding was constrained to the JSON schema (grammar or server
            ``response_format``); False when the schema was only stated in the prompt.
    """

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    constrained: bool = False

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (the cache's value)."""
        return {
            "text": self.text,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "seconds": self.seconds,
            "constrained": self.constrained,
        }

    @classmethod
    def from_chat_answer(cls, text: str | None, out: dict[str, Any], seconds: float, constrained: bool) -> Completion:
        """From an OpenAI-style chat answer ``out`` (its ``usage`` token counts; 0 when absent) and
        the ``text`` already taken from ``choices[0].message.content`` (None reads as empty)."""
        usage = out.get("usage") or {}
        return cls(
            text or "",
            int(usage.get("prompt_tokens") or 0),
            int(usage.get("completion_tokens") or 0),
            seconds,
            constrained,
        )

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Completion:
        """The inverse of :meth:`to_json`."""
        return cls(
            str(d["text"]),
            int(d.get("prompt_tokens") or 0),
            int(d.get("completion_tokens") or 0),
            float(d.get("seconds") or 0.0),
            bool(d.get("constrained")),
        )


@runtime_checkable
class LLMBackend(Protocol):
    """Something that completes a chat.

    ``messages`` are ``{"role": "system"|"user"|"assistant", "content": str}`` dicts. With
    ``json_schema`` a backend that can constrain decoding to the schema does so and returns
    ``Completion(constrained=True)``; one that cannot returns the plain answer
    (``constrained=False``) and the client adds the schema to the prompt first
    (:attr:`supports_schema` False) and repairs the answer.

    Attributes:
        name: a human description (``llama-cpp:<file>``, ``openai:<url>:<model>``).
        model_id: the model's identity for the cache key (see each backend).
        supports_schema: whether :meth:`generate` can constrain to a JSON schema.
        calls: backend calls made so far (each one a real model run or HTTP request).

    Raises (from :meth:`generate`):
        LLMUnavailable: the model or server cannot be used.
        LLMAnswerError: the answer is malformed (no message content at all).
    """

    name: str
    supports_schema: bool
    calls: int

    @property
    def model_id(self) -> str: ...

    def generate(
        self, messages: list[dict], max_tokens: int, temperature: float, json_schema: dict | None = None, seed: int = 0
    ) -> Completion: ...


_SHA_MEMO: dict[tuple[str, int, int], str] = {}
_SHA_LOCK = threading.Lock()


def file_sha256(path: str | Path) -> str:
    """The sha256 (hex) of a file, memoized per process by (resolved path, size, mtime): a model
    file is hashed once (about 1 s per GB), and again only when it changes.

    Raises:
        OSError: the file cannot be read.
    """
    p = Path(path).expanduser().resolve()
    st = p.stat()
    key = (str(p), st.st_size, st.st_mtime_ns)
    with _SHA_LOCK:
        if key in _SHA_MEMO:
            return _SHA_MEMO[key]
    h = hashlib.sha256()
    with open(p, "rb") as fh:
        while chunk := fh.read(1 << 22):
            h.update(chunk)
    digest = h.hexdigest()
    with _SHA_LOCK:
        _SHA_MEMO[key] = digest
    return digest
