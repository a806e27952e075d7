"""A local GGUF model served by llama.cpp's own HTTP server (``llama-server``), started and stopped by finkg,
with several parallel slots and continuous batching: concurrent requests decode together.

Why: on a CPU a single sequence's decoding is bound by reading the weights once per token; with
``parallel`` sequences in one batch the same weights serve several tokens, so tokens per second grow
with the requests in flight (measured in ``bench/llm_throughput.py``). Each slot keeps the KV cache of
its last prompt (``cache_prompt``), so the shared instructions and few-shot turns are evaluated once
per slot, not once per call.

The binary is built by ``scripts/bootstrap.sh`` from the llama.cpp sources of the pinned
llama-cpp-python release, portably (the same CPU flags as the Python wheel), into the virtual
environment's ``bin/``; ``[llm] server_path`` names another one. The server listens on a free loopback
port chosen at start; requests go through :class:`generation.llm.openai.OpenAICompatibleBackend`
(retries with back-off: a request the busy server refuses is retried, never lost). The process is
stopped when the backend is closed or the Python process exits, whatever the reason: an exception or Ctrl-C
(:mod:`atexit`; the server runs in its own process group, so a terminal's Ctrl-C reaches only finkg), and
on Linux also SIGTERM or SIGKILL of finkg (the kernel's parent-death signal, :func:`kg.processes.spawn`).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from generation.llm.base import Completion, LLMUnavailable
from generation.llm.llamacpp import MESSAGE_OVERHEAD, GGUFBackend, check_gguf
from generation.llm.openai import OpenAICompatibleBackend
from kg.processes import spawn

SERVER_BINARY = "llama-server"
SERVER_HINT = (
    "llama.cpp's server binary `llama-server` is not installed: `bash scripts/bootstrap.sh` builds it into the "
    'virtual environment (a few minutes, once), or set [llm] server_path, or use [llm] backend = "llama-cpp"'
)


def default_server_path() -> Path | None:
    """The ``llama-server`` next to this Python interpreter (the virtual environment's ``bin/``), else the
    first one on ``PATH``; None when there is none."""
    beside = Path(sys.executable).parent / SERVER_BINARY
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which(SERVER_BINARY)
    return Path(found) if found else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServerBackend(GGUFBackend):
    """A GGUF file served by a ``llama-server`` process this backend starts on first use.

    Args:
        model_path: the ``.gguf`` file.
        server_path: the ``llama-server`` binary (None: :func:`default_server_path`).
        n_ctx: context window per slot, tokens (the server gets ``n_ctx * parallel`` in all).
        parallel: slots, i.e. requests decoded together (continuous batching); send at most this many at once.
        n_threads: CPU threads. n_batch: prompt tokens per batch.
        lora_path: a GGUF LoRA adapter (checked against the base like :class:`LlamaCppBackend`).
        start_timeout: seconds to wait for the server to load the model and answer ``/health``.
        timeout: seconds per request (a request waits while other slots decode).

    Attributes:
        model_id: ``gguf:<sha256>`` (``+lora:<id>`` with an adapter): the same identity as
            :class:`generation.llm.LlamaCppBackend`, since the same weights answer.
        calls: requests answered. base_url: ``http://127.0.0.1:<port>/v1`` once started.

    Raises (on first use):
        LLMUnavailable: the binary or the model file is missing, or the server exits or does not answer
            within ``start_timeout`` (the message holds the end of its log).
    """

    supports_schema = True

    def __init__(
        self,
        model_path: str | Path,
        server_path: str | Path | None = None,
        n_ctx: int = 4096,
        parallel: int = 4,
        n_threads: int = 2,
        n_batch: int = 512,
        lora_path: str | Path | None = None,
        start_timeout: float = 180.0,
        timeout: float = 600.0,
    ) -> None:
        if parallel < 1:
            raise ValueError("parallel must be >= 1")
        super().__init__("llama-server", model_path, lora_path)
        self.server_path = Path(server_path).expanduser() if server_path else None
        self.n_ctx, self.parallel, self.n_threads, self.n_batch = n_ctx, parallel, n_threads, n_batch
        self.start_timeout, self.timeout = start_timeout, timeout
        self.base_url: str | None = None
        self._http: OpenAICompatibleBackend | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: Any = None
        self._at_exit = False

    @property
    def context_window(self) -> int:
        """Tokens one request may use (prompt + completion): ``n_ctx`` (one slot's share)."""
        return self.n_ctx

    def command(self, port: int) -> list[str]:
        """The ``llama-server`` command line for ``port`` (shown in errors and the README)."""
        binary = self.server_path or default_server_path()
        if binary is None or not binary.is_file():
            raise LLMUnavailable(SERVER_HINT + (f" (not found: {binary})" if binary else ""))
        cmd = [
            str(binary),
            "--model",
            str(self.model_path),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--ctx-size",
            str(self.n_ctx * self.parallel),
            "--parallel",
            str(self.parallel),
            "--threads",
            str(self.n_threads),
            "--batch-size",
            str(self.n_batch),
            "--no-webui",
        ]
        if self.lora_path:
            cmd += ["--lora", str(self.lora_path)]
        return cmd

    def start(self) -> str:
        """Start the server (once; later calls return at once) and wait until it answers ``/health``.

        Returns:
            The OpenAI-compatible base URL.

        Raises:
            LLMUnavailable: see the class.
        """
        with self._lock:
            if self._http is not None and self._proc is not None and self._proc.poll() is None:
                return str(self.base_url)
            check_gguf(self.model_path, self.lora_path)
            port = _free_port()
            cmd = self.command(port)
            # the server's log, read back for errors; it lives as long as the process (closed in _stop)
            self._log = tempfile.TemporaryFile()  # noqa: SIM115
            # tied to this process (kg.processes): it stops when the command ends, even by SIGKILL (Linux)
            self._proc = spawn(cmd, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            if not self._at_exit:
                atexit.register(self.close)
                self._at_exit = True
            root = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + self.start_timeout
            while True:
                if self._proc.poll() is not None:
                    code = self._proc.returncode
                    hint = (
                        " (killed by a signal: a build for another CPU? rerun scripts/bootstrap.sh without "
                        "FINKG_LLAMA_NATIVE)"
                        if code < 0
                        else ""
                    )
                    raise LLMUnavailable(
                        f"llama-server exited with status {code}{hint} while loading {self.model_path}: "
                        f"{self._log_tail()}"
                    )
                try:
                    with urllib.request.urlopen(root + "/health", timeout=5) as resp:
                        if resp.status == 200:
                            break
                except (urllib.error.URLError, TimeoutError, ConnectionError):
                    pass
                if time.monotonic() > deadline:
                    self._stop()
                    raise LLMUnavailable(
                        f"llama-server did not answer {root}/health within {self.start_timeout:.0f} s: {self._log_tail()}"
                    )
                time.sleep(0.25)
            self.base_url = root + "/v1"
            self._http = OpenAICompatibleBackend(
                self.base_url,
                self.model_path.name,
                timeout=self.timeout,
                schema_styles=("json_schema",),
                plain_fallback=False,
            )
            return self.base_url

    def _log_tail(self, chars: int = 1500) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")[-chars:].strip()

    def _stop(self) -> None:
        proc, self._proc, self._http = self._proc, None, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def close(self) -> None:
        """Stop the server process (idempotent; also run at interpreter exit)."""
        with self._lock:
            self._stop()
            if self._log is not None:
                self._log.close()
                self._log = None

    def count_prompt_tokens(self, messages: list[dict]) -> int:
        """Tokens ``messages`` take in the prompt, by the server's ``/tokenize`` (the model's own tokenizer),
        plus :data:`generation.llm.llamacpp.MESSAGE_OVERHEAD` per message for the template's markers.

        Raises:
            LLMUnavailable: see the class.
        """
        root = self.start().removesuffix("/v1")
        total = MESSAGE_OVERHEAD
        for m in messages:
            body = json.dumps({"content": str(m.get("content", "")), "add_special": False}).encode()
            req = urllib.request.Request(root + "/tokenize", body, {"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    total += len(json.loads(resp.read())["tokens"]) + MESSAGE_OVERHEAD
            except (urllib.error.URLError, TimeoutError, ConnectionError, KeyError, ValueError) as exc:
                raise LLMUnavailable(f"llama-server {root}/tokenize failed: {exc}") from exc
        return total

    def generate(
        self, messages: list[dict], max_tokens: int, temperature: float, json_schema: dict | None = None, seed: int = 0
    ) -> Completion:
        """One chat completion through the server (JSON schema as ``response_format``: the server turns it
        into a grammar). Thread-safe: up to ``parallel`` calls decode at once, more wait in the server's queue.

        Raises:
            LLMUnavailable: see the class; LLMAnswerError: the answer has no message content.
        """
        self.start()
        http = self._http
        if http is None:  # closed by another thread meanwhile
            raise LLMUnavailable(f"llama-server for {self.model_path} was stopped")
        comp = http.generate(messages, max_tokens, temperature, json_schema=json_schema, seed=seed)
        with self._lock:
            self.calls += 1
        return comp
