"""The disk cache of LLM answers: a rerun of the same batch makes no backend call.

Key: sha256 of the canonical JSON of ``(model_id, messages, max_tokens, temperature,
json_schema, seed and any other sampling parameter)``. ``model_id`` is the model's identity
(the GGUF file's sha256, a Hugging Face directory's config and weight files, or endpoint +
model name), so a changed model file never answers from an old model's entries.

Value: the raw :class:`generation.llm.base.Completion` (text and token counts). Parsing and
repair happen after the cache, so a change of the parser applies to cached answers too.

Backed by ``diskcache`` (SQLite + files; safe across threads and processes).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import diskcache

from generation.llm.base import Completion


def cache_key(model_id: str, messages: list[dict], params: dict[str, Any]) -> str:
    """The sha256 (hex) identifying one request; ``params`` are every sampling parameter sent
    (max_tokens, temperature, json_schema, seed, ...). Dict key order does not matter."""
    blob = json.dumps(
        {"model": model_id, "messages": messages, "params": params},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class LLMCache:
    """Raw LLM answers on disk, keyed by :func:`cache_key`.

    Args:
        directory: the cache folder (created if missing), e.g. ``~/.cache/finkg/llm-cache``
            (``[llm] cache_dir``).
        size_limit: bytes before diskcache evicts the least recently stored entries (default 4 GB).
    """

    def __init__(self, directory: str | Path, size_limit: int = 4 << 30) -> None:
        self.directory = Path(directory).expanduser()
        self._cache = diskcache.Cache(str(self.directory), size_limit=size_limit)

    def get(self, key: str) -> Completion | None:
        """The cached answer for ``key``, or None."""
        value = self._cache.get(key)
        return Completion.from_json(value) if isinstance(value, dict) else None

    def put(self, key: str, completion: Completion) -> None:
        """Store ``completion`` under ``key`` (replacing any older entry)."""
        self._cache.set(key, completion.to_json())

    def __len__(self) -> int:
        return len(self._cache)  # pyright: ignore[reportArgumentType]  # diskcache's __len__ is untyped

    def clear(self) -> int:
        """Remove every entry; returns how many there were."""
        return self._cache.clear()

    def close(self) -> None:
        """Close the cache's database handle (it reopens on the next use)."""
        self._cache.close()
