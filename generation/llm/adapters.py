"""LoRA adapters of a served model: which base model an adapter was trained on, and the refusal to load it on
another one.

An adapter trained by finkg (``finkg train reader``) carries :data:`ADAPTER_META` beside its weights: the base
model's name and the ids the backends report for that base (``hf:<directory identity>`` for a Hugging Face
directory, ``gguf:<sha256>`` / ``hf-gguf:<sha256>`` for the GGUF it was rebuilt from). A GGUF LoRA adapter (for
llama.cpp) carries the same record as ``<file>.finkg.json``. A backend given an adapter compares its own base
model id with the record and raises :class:`AdapterBaseMismatch` (naming both) when they differ; an adapter
without a record (trained elsewhere) is loaded as it is.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from generation.llm.base import LLMUnavailable

ADAPTER_META = "finkg_adapter.json"


class AdapterBaseMismatch(LLMUnavailable):
    """A tuned model whose base model differs from the configured one; the message names both."""


def meta_path(adapter: Path) -> Path:
    """Where an adapter's record lives: ``<dir>/finkg_adapter.json`` for a peft directory, ``<file>.finkg.json``
    for a GGUF LoRA file."""
    adapter = Path(adapter)
    return adapter / ADAPTER_META if adapter.is_dir() else adapter.with_name(adapter.name + ".finkg.json")


def write_adapter_meta(adapter: Path, *, base_name: str, base_ids: Mapping[str, str], **extra: Any) -> Path:
    """Write the adapter's record (``{"base_name", "base_ids": {kind: id}, ...extra}``); returns its path."""
    path = meta_path(adapter)
    path.write_text(
        json.dumps({"base_name": base_name, "base_ids": dict(base_ids), **extra}, indent=2) + "\n", encoding="utf-8"
    )
    return path


def read_adapter_meta(adapter: Path) -> dict[str, Any] | None:
    """The adapter's record, or None when it has none."""
    path = meta_path(adapter)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def check_adapter_base(adapter: Path, base_id: str, base_name: str) -> None:
    """Refuse an adapter trained on another base model.

    Args:
        adapter: the adapter directory or GGUF LoRA file. base_id: the configured base's id as the backend
            reports it (``hf:...``, ``gguf:...``, ``hf-gguf:...``). base_name: the configured base (a path).

    Raises:
        AdapterBaseMismatch: the record names other base ids (the message names the adapter's base and the
            configured one).
        LLMUnavailable: the adapter path does not exist.
    """
    if not Path(adapter).exists():
        raise LLMUnavailable(f"[llm] adapter_path {adapter}: no such adapter")
    meta = read_adapter_meta(adapter)
    if meta is None:
        return
    if base_id not in set(meta.get("base_ids", {}).values()):
        raise AdapterBaseMismatch(
            f"[llm] adapter_path {adapter} was trained on base model {meta.get('base_name')!r}, "
            f"but the configured base model is {base_name!r} ({base_id}); set [llm] model_path to the adapter's "
            "base or use an adapter trained on this one"
        )


def adapter_identity(adapter: Path) -> str:
    """16 hex digits of sha256 over the adapter's weight files (names and contents): part of the model id of
    every answer a tuned model writes."""
    adapter = Path(adapter)
    files = (
        sorted(p for p in adapter.rglob("*") if p.suffix in (".safetensors", ".bin", ".gguf"))
        if adapter.is_dir()
        else [adapter]
    )
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]
