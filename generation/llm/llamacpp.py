"""A local GGUF model run by llama.cpp (llama-cpp-python), with JSON-schema-constrained decoding.

One :class:`llama_cpp.Llama` per backend, loaded on first use (a few seconds) and kept: calls
are serialized by a lock (a ``Llama`` is not thread-safe). The model is never reset between
calls, on purpose: llama-cpp-python keeps the KV cache of the previous prompt and re-evaluates
only the tokens after the longest common token prefix with the next one. Batch extraction
relies on that: every call starts with the same system prompt and few-shot examples, so only
the new source text is evaluated.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from generation.llm.adapters import adapter_identity, check_adapter_base
from generation.llm.base import Completion, LLMAnswerError, LLMUnavailable, file_sha256

INSTALL_HINT = (
    "llama-cpp-python is not installed (a dependency of finkg: `bash scripts/bootstrap.sh` builds the "
    'environment with it, compiling llama.cpp, a few minutes), or set [llm] backend = "openai" with a server'
)
MESSAGE_OVERHEAD = 8
"""Tokens counted per chat message for the template's role and separator markers (ChatML uses 5)."""
MODEL_HINT = (
    "set [llm] model_path (or FINKG_LLM_MODEL_PATH); `finkg models install` fetches SmolLM2-135M and "
    "`finkg models list` shows its path"
)


def check_gguf(model_path: Path, lora_path: Path | None = None) -> None:
    """Check that the GGUF file exists and that a LoRA adapter (if any) was trained on it.

    Raises:
        LLMUnavailable: the file is missing (the message says how to get one).
        generation.llm.adapters.AdapterBaseMismatch: the adapter was trained on another base.
    """
    if not model_path.is_file():
        raise LLMUnavailable(f"GGUF model file not found: {model_path} ({MODEL_HINT})")
    if lora_path:
        check_adapter_base(lora_path, f"gguf:{file_sha256(model_path)}", str(model_path))


def gguf_identity(model_path: Path, lora_path: Path | None = None) -> str:
    """``gguf:<sha256 of the file>``, followed by ``+lora:<16 hex digits>`` with an adapter: the model identity of
    both llama.cpp backends (the same weights answer, so they share the answer cache).

    Raises:
        LLMUnavailable: the file is missing.
    """
    check_gguf(model_path)
    base = f"gguf:{file_sha256(model_path)}"
    return f"{base}+lora:{adapter_identity(lora_path)}" if lora_path else base


class GGUFBackend:
    """What both llama.cpp backends share: the GGUF file, an optional LoRA adapter, the name and the identity.

    Args:
        kind: the name's prefix (``llama-cpp``, ``llama-server``).
        model_path: the ``.gguf`` file. lora_path: a GGUF LoRA adapter or None.

    Attributes:
        model_path, lora_path: the paths (``~`` expanded). name: ``<kind>:<file name>[+<adapter file name>]``.
        calls: model runs made. model_id: see :func:`gguf_identity`.
    """

    def __init__(self, kind: str, model_path: str | Path, lora_path: str | Path | None) -> None:
        self.model_path = Path(model_path).expanduser()
        self.lora_path = Path(lora_path).expanduser() if lora_path else None
        self.name = f"{kind}:{self.model_path.name}" + (f"+{self.lora_path.name}" if self.lora_path else "")
        self.calls = 0
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        """``gguf:<sha256>`` of the model file (``+lora:<id>`` with an adapter).

        Raises:
            LLMUnavailable: the file is missing.
        """
        return gguf_identity(self.model_path, self.lora_path)


class LlamaCppBackend(GGUFBackend):
    """A GGUF file through llama.cpp.

    Args:
        model_path: the ``.gguf`` file.
        n_ctx: context window in tokens; n_threads: CPU threads; n_batch: prompt tokens evaluated
            per llama.cpp batch.
        lora_path: a GGUF LoRA adapter applied on load (``finkg train reader --gguf``, converted with llama.cpp's
            ``convert_lora_to_gguf.py``); refused (:class:`generation.llm.adapters.AdapterBaseMismatch`) when
            it was trained on another base.

    Attributes:
        model_id: ``gguf:<sha256 of the file>`` (hashed once per file and change), followed by
            ``+lora:<16 hex digits>`` with an adapter.
        calls: model runs made.

    Raises (on first use):
        LLMUnavailable: llama-cpp-python is not installed, or the model file is missing/unloadable.
    """

    supports_schema = True

    def __init__(
        self,
        model_path: str | Path,
        n_ctx: int = 4096,
        n_threads: int = 2,
        n_batch: int = 512,
        lora_path: str | Path | None = None,
    ) -> None:
        super().__init__("llama-cpp", model_path, lora_path)
        self.n_ctx, self.n_threads, self.n_batch = n_ctx, n_threads, n_batch
        self._llama: Any = None

    def llama(self) -> Any:
        """The loaded :class:`llama_cpp.Llama` (loaded on first call; the same object afterwards).

        Raises:
            LLMUnavailable: see the class.
        """
        if self._llama is None:
            try:
                import llama_cpp  # lazy: loading it costs time that commands without an LLM need not pay
            except ImportError as exc:
                raise LLMUnavailable(INSTALL_HINT) from exc
            check_gguf(self.model_path, self.lora_path)
            lora: dict[str, Any] = {"lora_path": str(self.lora_path)} if self.lora_path else {}
            try:
                self._llama = llama_cpp.Llama(
                    model_path=str(self.model_path),
                    **lora,
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    n_batch=self.n_batch,
                    verbose=False,
                )
            except (ValueError, RuntimeError) as exc:
                raise LLMUnavailable(f"llama.cpp cannot load {self.model_path}: {exc}") from exc
        return self._llama

    @property
    def context_window(self) -> int:
        """The context window in tokens (``n_ctx``): prompt + completion must fit in it."""
        return self.n_ctx

    def count_prompt_tokens(self, messages: list[dict]) -> int:
        """Tokens ``messages`` take in the prompt: each content tokenized with the model's tokenizer, plus
        :data:`MESSAGE_OVERHEAD` per message for the chat template's role markers (an upper bound for the
        ChatML and Llama-style templates of the models finkg runs).

        Raises:
            LLMUnavailable: see the class (the model is loaded to tokenize).
        """
        with self._lock:
            llama = self.llama()
            return (
                sum(
                    len(llama.tokenize(str(m.get("content", "")).encode("utf-8"), add_bos=False, special=False))
                    + MESSAGE_OVERHEAD
                    for m in messages
                )
                + MESSAGE_OVERHEAD
            )

    def generate(
        self, messages: list[dict], max_tokens: int, temperature: float, json_schema: dict | None = None, seed: int = 0
    ) -> Completion:
        """One chat completion; with ``json_schema`` the grammar from the schema constrains
        decoding (``response_format={"type": "json_object", "schema": ...}``).

        Returns:
            The raw :class:`Completion` (``constrained`` True when a schema was given); token
            counts from the answer's ``usage``.

        Raises:
            LLMUnavailable: see the class; LLMAnswerError: the answer has no message content, or the prompt
            and ``max_tokens`` do not fit the context window (llama.cpp's message, e.g. "Requested tokens
            (4486) exceed context window of 4096"; callers trim with :meth:`LLMClient.fits` first).
        """
        kwargs: dict[str, Any] = {}
        if json_schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": json_schema}
        with self._lock:
            llama = self.llama()
            t0 = time.perf_counter()
            try:
                out = llama.create_chat_completion(
                    messages=messages, max_tokens=max_tokens, temperature=temperature, seed=seed, **kwargs
                )
            except ValueError as exc:  # llama-cpp-python's over-long prompt; the call fails, the caller records it
                raise LLMAnswerError(f"the prompt does not fit: {exc}", self.name, "") from exc
            seconds = time.perf_counter() - t0
            self.calls += 1
        try:
            text = out["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise LLMAnswerError("the answer has no choices[0].message.content", self.name, out) from exc
        return Completion.from_chat_answer(text, out, seconds, constrained=json_schema is not None)
