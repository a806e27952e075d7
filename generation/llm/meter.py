"""Tokens per unit of work: what the LLM calls made inside a block, on this thread, cost.

:class:`generation.llm.client.LLMUsage` keeps a client's totals; with several questions in flight on one client
(``finkg eval tatqa --workers 4``) the totals cannot say what one question cost. ``with metered() as m:``
counts the calls this thread makes inside the block, through any :class:`generation.llm.client.LLMClient`:

    with metered() as m:
        text = answerer(question, facts, passages)
    m.prompt_tokens, m.completion_tokens, m.calls, m.cache_hits

A call answered from the disk cache counts the tokens of the call that produced it (what the work costs when it
is run afresh), so a rerun over a warm cache measures the same figures as the first run; ``cache_hits`` says how
many were. Blocks nest (an outer block counts its inner blocks' calls too). Work an answerer hands to another
thread is not counted.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

_local = threading.local()


@dataclass
class TokenMeter:
    """The calls of one :func:`metered` block.

    Attributes:
        calls: ``LLMClient.chat`` calls that got an answer (from the backend or the cache).
        cache_hits: how many of them the disk cache answered.
        prompt_tokens / completion_tokens: the backend's counts of those answers (a cache hit: the counts of the
            call that produced it).
    """

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@contextmanager
def metered() -> Iterator[TokenMeter]:
    """A :class:`TokenMeter` counting this thread's LLM calls until the block ends (module doc)."""
    meter = TokenMeter()
    stack: list[TokenMeter] = _local.__dict__.setdefault("stack", [])
    stack.append(meter)
    try:
        yield meter
    finally:
        stack[:] = [m for m in stack if m is not meter]  # by identity: two meters may hold equal counts


def record(prompt_tokens: int, completion_tokens: int, cached: bool) -> None:
    """Count one answered call in every block open on this thread (called by ``LLMClient.chat``)."""
    for meter in _local.__dict__.get("stack", ()):
        meter.calls += 1
        meter.cache_hits += cached
        meter.prompt_tokens += prompt_tokens
        meter.completion_tokens += completion_tokens
