"""The LLM client every caller uses: one backend + the disk cache + JSON mode + usage + budget.

``client.chat(messages, max_tokens, temperature, json_schema)`` -> :class:`LLMResult`:

1. the request's cache key (:func:`generation.llm.cache.cache_key`, with the backend's model
   identity); a hit returns the stored raw answer without a backend call (``cached=True``);
2. on a miss: :class:`BudgetExceeded` if this client's spent tokens reached its budget; else the
   backend call (constrained decoding when the backend supports it, else the schema is stated
   in the prompt); the raw answer is stored (also an empty or unparseable one: a rerun
   reproduces the same recorded failure without spending tokens again);
3. parsing after the cache (:func:`generation.llm.jsonmode.parse_answer`): JSON, else
   json-repair (``repaired=True``), else :class:`LLMAnswerError` with the raw answer. An empty
   plain-text answer is an :class:`LLMAnswerError` too: never a silent empty result.

:class:`LLMUsage` keeps the totals (per client; take per-batch totals with
``before = client.usage.snapshot(); ...; client.usage - before``); :func:`generation.llm.meter.metered` counts
the calls of one piece of work on one thread (one question among several in flight).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, fields
from typing import Any

from generation.llm import meter
from generation.llm.base import BudgetExceeded, Completion, LLMAnswerError, LLMBackend
from generation.llm.cache import LLMCache, cache_key
from generation.llm.jsonmode import AnswerNotJSON, parse_answer, with_schema_in_prompt


@dataclass
class LLMUsage:
    """Totals of a client's calls (or, as a difference of two snapshots, of one batch).

    Attributes:
        calls: backend calls made (cache misses that reached the model or server).
        cache_hits: requests answered from the disk cache (no backend call, no tokens spent).
        prompt_tokens / completion_tokens: tokens spent by the backend calls (cache hits excluded).
        seconds: wall seconds of the backend calls.
        failures: requests whose answer could not be used (:class:`LLMAnswerError`).
        repaired: JSON answers parsed only after json-repair.
    """

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    failures: int = 0
    repaired: int = 0

    @property
    def tokens(self) -> int:
        """prompt_tokens + completion_tokens."""
        return self.prompt_tokens + self.completion_tokens

    @property
    def requests(self) -> int:
        """calls + cache_hits."""
        return self.calls + self.cache_hits

    @property
    def completion_tokens_per_second(self) -> float:
        """Completion tokens per backend second (0.0 with no backend time)."""
        return self.completion_tokens / self.seconds if self.seconds > 0 else 0.0

    def snapshot(self) -> LLMUsage:
        """A copy of the totals now (subtract it later for a batch's totals)."""
        return LLMUsage(**{f.name: getattr(self, f.name) for f in fields(self)})

    def __sub__(self, other: LLMUsage) -> LLMUsage:
        return LLMUsage(**{f.name: getattr(self, f.name) - getattr(other, f.name) for f in fields(self)})

    def __add__(self, other: LLMUsage) -> LLMUsage:
        return LLMUsage(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    def as_dict(self) -> dict[str, Any]:
        """The totals as a dict (for tables, JSON and graph properties)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class LLMResult:
    """One answer.

    Attributes:
        text: the raw answer text, stripped.
        data: the parsed JSON (dict/list/...) when a ``json_schema`` was given, else None.
        prompt_tokens / completion_tokens: the backend's counts for this answer (for a cache hit:
            the counts of the call that produced it; nothing was spent now).
        seconds: wall time of this ``chat`` call (a cache hit: the lookup only).
        cached: answered from the disk cache. repaired: JSON parsed after json-repair.
        constrained: decoding was constrained to the schema. model_id: the model identity used in
            the cache key.
    """

    text: str
    data: Any
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    cached: bool
    repaired: bool
    model_id: str
    constrained: bool = False


class LLMClient:
    """A backend with a disk cache, JSON mode, usage totals and an optional token budget.

    Args:
        backend: any :class:`generation.llm.base.LLMBackend`.
        cache: an :class:`LLMCache`, or None for no caching.
        budget_tokens: prompt + completion tokens this client may spend (None: no cap); see
            :class:`BudgetExceeded`.
        seed: sampling seed sent with every call (part of the cache key).

    Thread-safe: usage is updated under a lock; backends serialize their own model access.
    """

    def __init__(
        self, backend: LLMBackend, cache: LLMCache | None = None, budget_tokens: int | None = None, seed: int = 0
    ) -> None:
        self.backend, self.cache, self.budget_tokens, self.seed = backend, cache, budget_tokens, seed
        self.usage = LLMUsage()
        self._lock = threading.Lock()
        self._model_id: str | None = None
        self._empty_message_tokens: int | None = None  # the template's markers around one user message

    @property
    def name(self) -> str:
        """The backend's description."""
        return self.backend.name

    @property
    def model_id(self) -> str:
        """The backend's model identity (computed once per client: hashing a GGUF reads it once).

        Raises:
            LLMUnavailable: the model file or directory is missing.
        """
        if self._model_id is None:
            self._model_id = self.backend.model_id
        return self._model_id

    def _call(self, messages: list[dict], max_tokens: int, temperature: float, json_schema: dict | None) -> Completion:
        if self.budget_tokens is not None:
            with self._lock:
                spent = self.usage.tokens
            if spent >= self.budget_tokens:
                raise BudgetExceeded(spent, self.budget_tokens)
        sent = messages
        if json_schema is not None and not self.backend.supports_schema:
            sent = with_schema_in_prompt(messages, json_schema)
        comp = self.backend.generate(sent, max_tokens, temperature, json_schema=json_schema, seed=self.seed)
        with self._lock:
            u = self.usage
            u.calls += 1
            u.prompt_tokens += comp.prompt_tokens
            u.completion_tokens += comp.completion_tokens
            u.seconds += comp.seconds
        return comp

    def close(self) -> None:
        """Release the backend's resources (a ``llama-server`` backend stops its server process); idempotent.
        The client may not be used after it."""
        close = getattr(self.backend, "close", None)
        if callable(close):
            close()

    def fits(self, messages: list[dict], max_tokens: int) -> bool:
        """Whether ``messages`` plus ``max_tokens`` of answer fit the backend's context window.

        True when the backend cannot count tokens (no ``count_prompt_tokens`` and ``context_window``, e.g.
        an HTTP server, which reports an over-long prompt itself). Raises LLMUnavailable when counting
        needs a model that cannot be loaded.
        """
        count = getattr(self.backend, "count_prompt_tokens", None)
        window = getattr(self.backend, "context_window", None)
        if count is None or window is None:
            return True
        return count(messages) + max_tokens <= window

    def count_tokens(self, text: str) -> int:
        """The tokens ``text`` takes in a user message to the served model, with its own tokenizer (the backend's
        ``count_prompt_tokens``, less the chat template's per-message markers), or about 4 characters a token
        when the backend cannot count (an OpenAI-compatible server).

        Raises:
            LLMUnavailable: counting needs a model that cannot be loaded.
        """
        count = getattr(self.backend, "count_prompt_tokens", None)
        if count is None:
            return max(1, len(text) // 4)
        if self._empty_message_tokens is None:
            self._empty_message_tokens = count([{"role": "user", "content": ""}])
        return max(0, count([{"role": "user", "content": text}]) - self._empty_message_tokens)

    def chat(
        self, messages: list[dict], max_tokens: int = 256, temperature: float = 0.0, json_schema: dict | None = None
    ) -> LLMResult:
        """The answer to ``messages`` (``{"role", "content"}`` dicts); see the module doc.

        Args:
            max_tokens: the answer's length limit in tokens. temperature: 0 for greedy decoding.
            json_schema: a JSON schema (dict): the answer must be JSON that fits it; ``data``
                holds the parsed value.

        Raises:
            LLMAnswerError: an empty answer, or (JSON mode) no JSON even after repair or JSON that
                does not fit the schema; ``.raw`` is the raw answer text.
            BudgetExceeded: the budget is spent (checked before a backend call only).
            LLMUnavailable: the backend cannot be used.
        """
        t0 = time.perf_counter()
        params = {"max_tokens": max_tokens, "temperature": temperature, "json_schema": json_schema, "seed": self.seed}
        comp: Completion | None = None
        key = None
        if self.cache is not None:
            key = cache_key(self.model_id, messages, params)
            comp = self.cache.get(key)
        cached = comp is not None
        if comp is None:
            comp = self._call(messages, max_tokens, temperature, json_schema)
            if self.cache is not None and key is not None:
                self.cache.put(key, comp)
        else:
            with self._lock:
                self.usage.cache_hits += 1
        meter.record(comp.prompt_tokens, comp.completion_tokens, cached)
        data, repaired = None, False
        try:
            if json_schema is not None:
                data, repaired = parse_answer(comp.text, json_schema)
            elif not comp.text.strip():
                raise AnswerNotJSON("the answer is empty")
        except AnswerNotJSON as exc:
            with self._lock:
                self.usage.failures += 1
            raise LLMAnswerError(
                str(exc) + (" (answer from the cache)" if cached else ""), self.backend.name, comp.text
            ) from exc
        if repaired:
            with self._lock:
                self.usage.repaired += 1
        return LLMResult(
            comp.text.strip(),
            data,
            comp.prompt_tokens,
            comp.completion_tokens,
            time.perf_counter() - t0,
            cached,
            repaired,
            self.model_id,
            comp.constrained,
        )
