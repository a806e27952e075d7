"""A Hugging Face causal LM run by transformers (PyTorch, CPU or GPU): a local model directory,
or a directory + a GGUF file in it that transformers dequantizes (``gguf_file``).

No constrained decoding here: in JSON mode the client states the schema in the prompt and
repairs the answer (:mod:`generation.llm.jsonmode`). Greedy decoding at temperature 0, sampling
above. The model is loaded once, on first use; calls are serialized by a lock.
"""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path
from typing import Any

from generation.llm.adapters import adapter_identity, check_adapter_base
from generation.llm.base import Completion, LLMUnavailable, file_sha256

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth")
CONFIG_FILES = ("config.json", "generation_config.json", "tokenizer_config.json", "tokenizer.json")


def hf_dir_identity(model_dir: Path) -> str:
    """sha256 over a model directory's config files (contents) and its weight files (names and
    sizes): cheap, and changes when the model is replaced."""
    h = hashlib.sha256()
    for name in CONFIG_FILES:
        p = model_dir / name
        if p.is_file():
            h.update(name.encode() + b"\0" + p.read_bytes() + b"\0")
    for p in sorted(model_dir.rglob("*")):
        if p.is_file() and p.suffix in WEIGHT_SUFFIXES:
            h.update(f"{p.relative_to(model_dir)}\0{p.stat().st_size}\0".encode())
    return h.hexdigest()


class TransformersBackend:
    """A transformers causal LM.

    Args:
        model_dir: a Hugging Face model directory (config.json, tokenizer, weights), or the folder
            holding ``gguf_file``.
        gguf_file: a GGUF file name inside ``model_dir`` (transformers dequantizes it to float32:
            about 4 bytes per parameter of memory).
        n_threads: torch CPU threads. device: ``"cpu"``, ``"cuda"``, ... (default: cuda if
            available, else cpu).

    Attributes:
        model_id: ``hf-gguf:<sha256 of the GGUF>`` or ``hf:<hash of the directory>``
            (:func:`hf_dir_identity`), followed by ``+lora:<16 hex digits>`` with an adapter.

    Raises (on first use):
        LLMUnavailable: transformers/torch are not installed, the directory or file is missing, or
            it cannot be loaded.
    """

    supports_schema = False

    def __init__(
        self,
        model_dir: str | Path,
        gguf_file: str | None = None,
        n_threads: int = 2,
        device: str | None = None,
        adapter_path: str | Path | None = None,
    ) -> None:
        self.model_dir = Path(model_dir).expanduser()
        self.adapter_path = Path(adapter_path).expanduser() if adapter_path else None
        self.gguf_file = gguf_file
        self.n_threads, self.device = n_threads, device
        self.name = f"transformers:{self.model_dir.name}" + (f"/{gguf_file}" if gguf_file else "")
        if self.adapter_path:
            self.name += f"+{self.adapter_path.name}"
        self.calls = 0
        self._model: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def _check(self) -> None:
        if not self.model_dir.is_dir():
            raise LLMUnavailable(
                f"transformers model directory not found: {self.model_dir} (set [llm] model_path "
                "to a Hugging Face model directory, or to the folder of a GGUF file with "
                "[llm] gguf_file)"
            )
        if self.gguf_file and not (self.model_dir / self.gguf_file).is_file():
            raise LLMUnavailable(f"GGUF file {self.gguf_file!r} not found in {self.model_dir} ([llm] gguf_file)")
        if not self.gguf_file and not (self.model_dir / "config.json").is_file():
            raise LLMUnavailable(
                f"{self.model_dir} has no config.json: not a Hugging Face model directory "
                "(for a GGUF file set [llm] gguf_file to its name)"
            )

    @property
    def model_id(self) -> str:
        """The model's identity for the cache key (see the class).

        Raises:
            LLMUnavailable: the directory or file is missing.
        """
        base = self.base_id
        return f"{base}+lora:{adapter_identity(self.adapter_path)}" if self.adapter_path else base

    @property
    def base_id(self) -> str:
        """The base model's id (:attr:`model_id` without the adapter).

        Raises:
            LLMUnavailable: the directory or file is missing.
        """
        self._check()
        if self.gguf_file:
            return f"hf-gguf:{file_sha256(self.model_dir / self.gguf_file)}"
        return f"hf:{hf_dir_identity(self.model_dir)}"

    def _load(self) -> tuple[Any, Any]:
        if self._model is None:
            try:
                import torch
                from transformers import AutoModelForCausalLM, AutoTokenizer
            except ImportError as exc:
                raise LLMUnavailable(
                    'transformers and torch are needed for [llm] backend = "transformers" '
                    "(pip install transformers torch)"
                ) from exc
            self._check()
            torch.set_num_threads(self.n_threads)
            kw = {"gguf_file": self.gguf_file} if self.gguf_file else {}
            try:
                tokenizer = AutoTokenizer.from_pretrained(str(self.model_dir), **kw)
                model = AutoModelForCausalLM.from_pretrained(str(self.model_dir), **kw)
            except (OSError, ValueError, RuntimeError) as exc:
                raise LLMUnavailable(
                    f"transformers cannot load {self.model_dir}{'/' + self.gguf_file if self.gguf_file else ''}: {exc}"
                ) from exc
            if self.adapter_path:
                model = self._with_adapter(model)
            device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
            # transformers' stubs type PreTrainedModel.to oddly (the str device is rejected)
            self._model, self._tokenizer = model.to(device).eval(), tokenizer  # pyright: ignore[reportArgumentType]
        return self._model, self._tokenizer

    def _with_adapter(self, model: Any) -> Any:
        """``model`` with the peft adapter at :attr:`adapter_path` (after checking its base model)."""
        assert self.adapter_path is not None
        configured = str(self.model_dir / self.gguf_file) if self.gguf_file else str(self.model_dir)
        check_adapter_base(self.adapter_path, self.base_id, configured)
        try:
            from peft import PeftModel

            return PeftModel.from_pretrained(model, str(self.adapter_path))
        except (OSError, ValueError, RuntimeError, KeyError) as exc:
            raise LLMUnavailable(f"[llm] adapter_path {self.adapter_path}: peft cannot load it ({exc})") from exc

    def generate(
        self, messages: list[dict], max_tokens: int, temperature: float, json_schema: dict | None = None, seed: int = 0
    ) -> Completion:
        """One chat completion through the tokenizer's chat template (``json_schema`` is ignored
        here: the client puts it in the prompt; ``constrained`` is always False).

        Raises:
            LLMUnavailable: see the class.
        """
        import torch

        with self._lock:
            model, tok = self._load()
            t0 = time.perf_counter()
            enc = tok.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt", return_dict=True)
            enc = {k: v.to(model.device) for k, v in enc.items()}
            sampling: dict[str, Any] = {"do_sample": False}
            if temperature > 0:
                torch.manual_seed(seed)
                sampling = {"do_sample": True, "temperature": temperature}
            pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
            with torch.inference_mode():
                out = model.generate(**enc, max_new_tokens=max_tokens, pad_token_id=pad, **sampling)
            n_prompt = int(enc["input_ids"].shape[1])
            new = out[0, n_prompt:]
            text = tok.decode(new, skip_special_tokens=True)
            seconds = time.perf_counter() - t0
            self.calls += 1
        return Completion(text, n_prompt, int(new.shape[0]), seconds, constrained=False)
