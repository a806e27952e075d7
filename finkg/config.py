"""Configuration: environment variables over a TOML settings file over defaults (pydantic-settings).

Where things come from, highest priority first:

1. environment variables: ``NEO4J_URI``, ``NEO4J_USER``, ``NEO4J_PASSWORD``, ``NEO4J_DATABASE``
   (the keys docker-compose.yml uses too) and ``FINKG_<SECTION>_<KEY>`` for the rest, e.g.
   ``FINKG_SERVER_HOME``, ``FINKG_WRITER_BATCH_SIZE``;
2. the settings file: ``$FINKG_CONFIG`` if set, else ``$XDG_CONFIG_HOME/finkg/config.toml``
   (``~/.config/finkg/config.toml``). ``finkg init`` writes a commented one, with a freshly
   generated Neo4j password. Sections map to prefixes: ``[server] home`` is ``server_home``;
3. the defaults below.

No password or key lives in code: with none configured, commands that need one say how to set it.
"""

from __future__ import annotations

import os
import secrets
import tomllib
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, Field, SecretStr, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from kg.errors import ConfigError

NEO4J_VERSION = "5.26.30"


def config_path() -> Path:
    """Path of the settings file: ``$FINKG_CONFIG`` or ``$XDG_CONFIG_HOME/finkg/config.toml``."""
    if env := os.environ.get("FINKG_CONFIG"):
        return Path(env).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "finkg" / "config.toml"


def _data_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "finkg"


def _cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "finkg"


class TomlSectionsSource(PydanticBaseSettingsSource):
    """Reads the settings file, flattening ``[section] key`` to the field ``section_key``.

    Raises:
        ConfigError: the file is not valid TOML, or names a key finkg does not know.
    """

    def __init__(self, settings_cls: type[BaseSettings], path: Path) -> None:
        super().__init__(settings_cls)
        self.path = path

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ returns the whole mapping

    def __call__(self) -> dict[str, Any]:
        if not self.path.is_file():
            return {}
        try:
            data = tomllib.loads(self.path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{self.path}: not valid TOML: {exc}") from exc
        flat: dict[str, Any] = {}
        for section, body in data.items():
            if not isinstance(body, dict):
                raise ConfigError(f"{self.path}: '{section}' must be a [section] of keys")
            for key, value in body.items():
                name = f"{section}_{key}"
                if name not in self.settings_cls.model_fields:
                    raise ConfigError(f"{self.path}: unknown setting [{section}] {key}")
                flat[name] = value
        return flat


class Settings(BaseSettings):
    """All of finkg's settings. See the module docstring for sources and their order."""

    model_config = SettingsConfigDict(env_prefix="FINKG_", extra="ignore", populate_by_name=True)

    # [neo4j]: the database finkg talks to
    neo4j_uri: str | None = Field(
        None,
        validation_alias=AliasChoices("NEO4J_URI", "neo4j_uri"),
        description="Bolt URI; default bolt://127.0.0.1:<server.bolt_port>",
    )
    neo4j_user: str = Field("neo4j", validation_alias=AliasChoices("NEO4J_USER", "neo4j_user"))
    neo4j_password: SecretStr | None = Field(None, validation_alias=AliasChoices("NEO4J_PASSWORD", "neo4j_password"))
    neo4j_database: str = Field("neo4j", validation_alias=AliasChoices("NEO4J_DATABASE", "neo4j_database"))

    # [server]: the local Neo4j that `finkg neo4j start` assembles and runs
    server_home: Path = Field(default_factory=lambda: _data_home() / "neo4j")
    server_dist_dir: Path = Field(default_factory=lambda: _cache_home() / "neo4j-dist")
    server_bolt_port: int = Field(7687, ge=1, le=65535)
    server_http_port: int = Field(7474, ge=1, le=65535)
    server_heap: str = "2g"
    server_pagecache: str = "4g"
    server_java: str = "java"
    server_mvn: str = "mvn"
    server_start_timeout: float = Field(180.0, gt=0)

    # [writer]: batched writes
    writer_batch_size: int = Field(5_000, ge=1)
    writer_workers: int = Field(2, ge=1, le=16)

    # [memo]: the desk-risk label's four tests (seed 003, "risk label"); a test is active when
    # the ratio is below its floor (current ratio, margins) or above its ceiling (leverage)
    memo_current_ratio_floor: float = 1.0
    memo_leverage_ceiling: float = Field(0.7, gt=0)
    memo_ocf_margin_floor: float = 0.0
    memo_net_margin_floor: float = 0.0
    memo_batch_size: int = Field(200, ge=1, description="filings per Neo4j read and per graph write")

    # [llm]: the LLM behind memo prose and triple extraction (generation/llm/, seed 003 "Compared
    # systems", seed 004 section 3.1); unset backend means no LLM (the deterministic renderer writes memos)
    llm_backend: str | None = Field(
        None,
        pattern=r"^(llama-cpp|transformers|openai)$",
        description="llama-cpp (a local GGUF file), transformers (a Hugging Face "
        "directory) or openai (an OpenAI-compatible server)",
    )
    llm_model_path: Path | None = Field(
        None, description="GGUF file (llama-cpp), or Hugging Face directory (transformers)"
    )
    llm_gguf_file: str | None = Field(
        None, description="transformers: a GGUF file name inside model_path (dequantized to float32)"
    )
    llm_base_url: str | None = Field(None, description="e.g. http://127.0.0.1:8000/v1 for backend openai")
    llm_model: str | None = Field(None, description="model name sent to the openai backend")
    llm_api_key: SecretStr | None = Field(None, description="bearer token for the openai backend (FINKG_LLM_API_KEY)")
    llm_n_ctx: int = Field(4096, ge=256, description="llama-cpp context window, tokens")
    llm_n_batch: int = Field(512, ge=1, description="llama-cpp prompt tokens per batch")
    llm_threads: int = Field(2, ge=1, description="CPU threads (llama-cpp, transformers)")
    llm_max_tokens: int = Field(600, ge=1)
    llm_temperature: float = Field(0.0, ge=0.0)
    llm_seed: int = Field(0, description="sampling seed (part of the cache key)")
    llm_timeout: float = Field(120.0, gt=0, description="seconds per request to the openai backend")
    llm_cache: bool = Field(True, description="keep answers in a disk cache: a rerun makes no LLM call")
    llm_cache_dir: Path = Field(
        default_factory=lambda: _cache_home() / "llm-cache", description="folder of the LLM answer cache"
    )
    llm_budget_tokens: int | None = Field(
        None, ge=1, description="prompt+completion tokens one client (one command run) may spend; unset: no cap"
    )

    # [memory]: point-in-time evidence and the market-feedback source memory (seed 000, sections 3.3 and 3.5;
    # retrieval/text/point_in_time.py, retrieval/memory/source_memory.py). kappa is not in the extracted paper text: see
    # retrieval/memory/source_memory.py; clip and lambda are Appendix C's selected values
    memory_kappa: float = Field(10.0, gt=0, description="shrinkage pseudo-count: rho = n / (n + kappa)")
    memory_clip: float = Field(0.20, ge=0, description="bound c of the shrunk, centered utility (equation 6)")
    memory_lambda: float = Field(
        0.30, ge=0, description="strength of source memory against static relevance (0: static ranking)"
    )
    memory_top_k: int = Field(5, ge=1, description="passages in the reader's context (the memory-reranked top k)")
    memory_pool_size: int = Field(20, ge=1, description="K, point-in-time candidates kept per anchor")
    memory_peer_share: float = Field(
        0.20, ge=0, lt=1, description="largest share of the pool that same-sector peer evidence may fill"
    )
    memory_near_duplicate_threshold: float = Field(
        90.0,
        gt=0,
        le=100,
        description="rapidfuzz ratio (0-100) at or above which a passage is a near-duplicate of the anchor",
    )

    # [hybrid] and [rerank]: hybrid chunk retrieval and reranking (retrieval/text/hybrid.py, retrieval/text/rerank.py;
    # seed 002 sections 3.2-3.3, 4.3, 5.4; seed 000 section 3.3)
    hybrid_fusion: str = Field(
        "minmax",
        pattern=r"^(minmax|rrf)$",
        description="minmax: alpha * dense + "
        "(1 - alpha) * BM25, both min-max normalized within the candidate pool; rrf: "
        "reciprocal rank fusion",
    )
    hybrid_alpha: float | None = Field(
        None, ge=0.0, le=1.0, description="dense weight; unset: the corpus's swept alpha stored on (:Corpus), else 0.5"
    )
    hybrid_alpha_step: float = Field(0.025, gt=0.0, le=1.0, description="alpha sweep step (seed 002 section 5.4)")
    hybrid_rrf_k: int = Field(60, ge=1, description="RRF constant k (Cormack et al. 2009)")
    rerank_model_path: Path | None = Field(
        None,
        description="local cross-encoder directory (bge-reranker: "
        "FlagReranker; else sentence-transformers CrossEncoder); unset: no "
        "reranking (measured best here: finkg's own MiniLM cross-encoder and the "
        "LLM judge both lowered TAT-QA NDCG@10, see retrieval/text/rerank.py)",
    )
    rerank_backend: str = Field(
        "auto",
        pattern=r"^(auto|cross-encoder|flag|llm)$",
        description="auto: flag when the directory name contains bge; llm: the [llm] "
        "model as a relevance judge (one call per passage; model_path unused)",
    )
    rerank_top_n: int = Field(20, ge=1, description="retrieved passages reranked (seed 002 section 4.3: top-20)")
    rerank_max_length: int = Field(
        128, ge=16, description="tokens per (query, passage) pair (finkg's reranker is trained at 128)"
    )
    rerank_batch_size: int = Field(32, ge=1, description="pairs per forward pass")
    rerank_device: str | None = Field(None, description="torch device; unset: the library's choice")

    # [feedback]: the market-feedback evaluation (`finkg eval feedback`, finkg/eval/feedback.py; seed 000,
    # sections 3.1-3.5 and 4.1-4.4)
    feedback_data_dir: Path | None = Field(
        None,
        description="folder with tweets/<TICKER>/, prices/<TICKER>.csv and "
        "the market proxy (e.g. ../shared/data/market)",
    )
    feedback_market_proxy: str = Field(
        "index/sp500.csv",
        description="market proxy price file, relative to "
        "data_dir (the paper's QQQ is not in the data; the S&P 500 stands in)",
    )
    feedback_tickers: list[str] = Field(
        ["MSFT", "JPM", "XOM", "GE"], description="the universe (tickers with both a tweet folder and a price file)"
    )
    feedback_shuffles: int = Field(5, ge=1, description="seeds of each shuffled-memory control (section 4.3)")
    feedback_reader_max_tokens: int = Field(128, ge=8, description="the reader's answer cap, tokens")
    feedback_alpha: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="dense weight of the static hybrid score (seed 000, 3.3: BM25 and dense with equal weights)",
    )
    feedback_max_anchors_per_day: int | None = Field(
        None, ge=1, description="sampling: at most this many anchors per ticker and prediction day (seeded); unset: all"
    )
    feedback_portfolio_top_k: int = Field(
        2, ge=1, description="K of the top-K 3-day sleeves (the paper's K is lost; 2 of the 4-name tweet universe)"
    )
    feedback_cost_bps: float = Field(10.0, ge=0.0, description="cost on one-way turnover, basis points")

    # [akshare]: live AKShare calls (`finkg ingest akshare --live`, ingest/market/akshare.py); AKShare itself
    # sets no timeout, so every socket operation of a call is bounded here
    akshare_retry_attempts: int = Field(3, ge=1, le=20, description="tries per live AKShare call (tenacity)")
    akshare_retry_wait: float = Field(2.0, ge=0, description="seconds before the first retry, doubling after")
    akshare_timeout: float = Field(30.0, gt=0, description="seconds per socket connect or read of a live call")

    # [eval]: text metrics of generated analyses (finkg/eval/metrics/text.py, seed 004 section 4.1):
    # BERTScore from a local model directory (never downloaded) and the LLM consistency judge (GLM-4-Score)
    eval_bertscore_model_path: Path | None = Field(
        None, description="local Hugging Face model directory for BERTScore, e.g. all-MiniLM-L6-v2 or all-mpnet-base-v2"
    )
    eval_bertscore_num_layers: int | None = Field(
        None,
        ge=1,
        description="layer whose embeddings BERTScore "
        "compares; unset: the model's last (6 for MiniLM-L6, 12 for mpnet)",
    )
    eval_bertscore_batch_size: int = Field(32, ge=1, description="texts per BERTScore forward pass")
    eval_bertscore_device: str | None = Field(
        None, description="torch device for BERTScore; unset: cuda if available, else cpu"
    )
    eval_judge: bool = Field(
        True,
        description="rate consistency with the reference conclusion and text by the "
        "[llm] model (0-5); false: skip the judge",
    )
    eval_judge_max_tokens: int = Field(192, ge=16, description="completion cap per judge answer")

    # [models]: offline weights that `finkg models install` assembles (finkg/models.py)
    models_dir: Path = Field(
        default_factory=lambda: _cache_home() / "models",
        description="folder holding one sub-folder per installed model",
    )

    # [extract]: LLM triple extraction (generation/kgbuild/extraction.py, seed 004 section 3.1)
    extract_sentences_per_call: int = Field(4, ge=1, description="sentences numbered in one extraction call")
    extract_max_tokens: int = Field(384, ge=16, description="completion cap per extraction call")
    extract_batch_chunks: int = Field(8, ge=1, description="chunks per committed batch (resume granularity)")
    extract_reuse_sentences: bool = Field(
        True,
        description="answer a sentence identical to one extracted before "
        "(same schema and model) from that answer instead of a new LLM call",
    )

    # [text]: text ingest (`finkg ingest text`): token-aware chunking of FOMC statements, filing text
    # and tweets (ingest/text/chunking.py); 240 tokens fit all-MiniLM-L6-v2's 256-token window with its
    # two special tokens and a margin for the approximate counter
    text_chunk_tokens: int = Field(240, ge=8, description="token budget per chunk (whole sentences)")
    text_chunk_overlap: int = Field(
        48,
        ge=0,
        description="at most this many tokens of whole trailing "
        "sentences repeat at the start of the next chunk; below chunk_tokens / 2",
    )
    text_tokenizer: Path | None = Field(
        None,
        description="tokenizer.json file or model directory that counts "
        "tokens; unset: words and punctuation marks (no model needed)",
    )

    # [embedding]: node embeddings (retrieval/embeddings.py); seed 004 section 3.2 encodes nodes with
    # bge-base-zh: a bge directory here uses FlagEmbedding, any sentence-transformers directory works
    embedding_backend: str = Field(
        "auto",
        pattern=r"^(auto|sentence-transformers|flag)$",
        description="auto (flag when the directory name has 'bge'), sentence-transformers or flag",
    )
    embedding_model_path: Path | None = Field(None, description="local model directory (nothing is downloaded)")
    embedding_batch_size: int = Field(64, ge=1, description="texts per forward pass")
    embedding_device: str | None = Field(
        None, description="torch device (cpu, cuda, cuda:0); unset: the library's choice"
    )

    # [cluster]: entity resolution and agglomerative clustering (`finkg cluster`, finkg/pipelines/clusters.py)
    # 0.30: the threshold whose clusters best match the XBRL tags of 5,000 real line-item labels
    # (ARI 0.351 with MiniLM; 0.25: 0.341, 0.35: 0.302; bench/clustering.py --sweep)
    cluster_distance_threshold: float = Field(
        0.30, gt=0, le=2, description="cosine distance at or above which clusters do not merge"
    )
    cluster_n_neighbors: int = Field(
        15, ge=1, le=200, description="k of the kNN connectivity graph and of merge candidates"
    )
    cluster_fuzzy_threshold: float = Field(92.0, gt=0, le=100, description="token-sort ratio (0-100) for a fuzzy merge")
    cluster_embedding_merge_threshold: float = Field(
        0.95, gt=0, le=1, description="cosine similarity for an embedding merge"
    )

    # [retrieval]: knowledge retrieval for generation (retrieval/knowledge.py, seed 004 section 3.2)
    retrieval_k: int = Field(10, ge=0, description="knowledge items (triples or chunks) per query")
    retrieval_top_n: int = Field(100, ge=1, description="TFR: candidate triples before the cluster weighting (n >> k)")
    retrieval_temperature: float = Field(
        0.1, gt=0, description="TFR: softmax temperature over cluster mean similarities"
    )

    # [report]: report batches (`finkg report`, finkg/pipelines/reports.py, seed 004 section 3.3)
    report_system: str = Field(
        "tfr",
        pattern=r"^(tfr|dense-triples|bm25-docs|dense-docs|none)$",
        description="retrieval system: tfr, dense-triples, bm25-docs, dense-docs or none",
    )
    report_max_facts: int = Field(30, ge=1, description="facts F shown to the LLM (the most similar to the question)")
    report_max_selected: int = Field(8, ge=1, description="facts stage 1 may select")
    report_answer_tokens: int = Field(400, ge=16, description="completion cap of the answer (stage 2)")
    report_answer_format: str = Field(
        "cited-points",
        pattern=r"^(cited-points|text)$",
        description="stage 2 answer: cited-points (JSON claims, each citing fact/knowledge ids) or text",
    )
    report_workers: int = Field(
        1, ge=1, description="questions in flight at once (an HTTP backend serves them in parallel)"
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, TomlSectionsSource(settings_cls, config_path()))

    @property
    def uri(self) -> str:
        """The Bolt URI in use (``neo4j_uri`` or the local server's loopback address)."""
        return self.neo4j_uri or f"bolt://127.0.0.1:{self.server_bolt_port}"

    def password(self) -> str:
        """The Neo4j password.

        Raises:
            ConfigError: none is configured; the message says how to set one.
        """
        if self.neo4j_password is None or not self.neo4j_password.get_secret_value():
            raise ConfigError(
                "no Neo4j password configured: set NEO4J_PASSWORD, or run `finkg init` to write "
                f"a settings file with a generated one ({config_path()})"
            )
        return self.neo4j_password.get_secret_value()


def load_settings(**overrides: Any) -> Settings:
    """Load :class:`Settings`; ``overrides`` (field names) win over every source.

    Raises:
        ConfigError: invalid file or values; the message names the setting.
    """
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"invalid settings ({config_path()}): {problems}") from exc


SETTINGS_TEMPLATE = """\
# finkg settings. Environment variables override every value here:
#   NEO4J_URI, NEO4J_USER, NEO4J_PASSWORD, NEO4J_DATABASE, and FINKG_<SECTION>_<KEY>
#   (e.g. FINKG_SERVER_HOME, FINKG_WRITER_BATCH_SIZE). Point FINKG_CONFIG at another file to use it.

[neo4j]
# The database finkg reads and writes. Unset uri means the local server below (bolt://127.0.0.1:<bolt_port>).
# uri = "bolt://127.0.0.1:7687"
user = "neo4j"
# Generated by `finkg init`. A local server keeps the password it was first started with.
password = "{password}"
database = "neo4j"

[server]
# The local Neo4j {neo4j_version} that `finkg neo4j start` assembles from Maven Central (no Docker needed).
# Database files, logs and neo4j.conf live here (outside the repository); default shown:
# home = "{home}"
# Assembled jars (Neo4j + Browser), shared by every home and reused once present; default shown:
# dist_dir = "{dist_dir}"
bolt_port = 7687
http_port = 7474
# Memory for a 2-core / 24 GiB machine that also runs embedding models and a local LLM:
heap = "2g"
pagecache = "4g"
java = "java"
mvn = "mvn"
# Seconds to wait for Bolt to answer after start:
start_timeout = 180

[writer]
# Rows per transaction for batched writes (UNWIND ... MERGE), and transactions in flight at once.
batch_size = 5000
workers = 2

[memo]
# The desk-risk label (High: >= 3 of the 4 tests active, Medium: 1-2, Low: 0). A test is active when
# current ratio < current_ratio_floor, liabilities/assets > leverage_ceiling,
# operating cash flow / revenue < ocf_margin_floor, net income / revenue < net_margin_floor.
current_ratio_floor = 1.0
leverage_ceiling = 0.7
ocf_margin_floor = 0.0
net_margin_floor = 0.0
# Filings per Neo4j read and per graph write in `finkg memo --all`.
batch_size = 200

[llm]
# The LLM that writes memo prose and extracts triples (`finkg models list` shows the installed weights).
# Unset backend (the default): no LLM, the deterministic renderer writes every memo.
# A local GGUF file through llama-cpp-python (installed with finkg); `finkg models install`
# fetches a small one (SmolLM2-135M) and `finkg models list` prints its path:
# backend = "llama-cpp"
# model_path = "/path/to/model.gguf"
# n_ctx = 4096
# n_batch = 512
# threads = 2
# Or a Hugging Face model directory through transformers (no constrained JSON: answers are repaired);
# gguf_file names a GGUF inside model_path that transformers dequantizes:
# backend = "transformers"
# model_path = "/path/to/hf-model-dir"
# gguf_file = "model.gguf"
# Or any OpenAI-compatible server (vLLM, Ollama, llama.cpp server, a hosted API):
# backend = "openai"
# base_url = "http://127.0.0.1:8000/v1"
# model = "name-the-server-knows"
# api_key = "..."            # better: the environment variable FINKG_LLM_API_KEY
# timeout = 120
# Generation, every backend:
# max_tokens = 600
# temperature = 0.0
# seed = 0
# Answers are kept in a disk cache keyed by model identity, prompt and parameters (a rerun costs nothing):
# cache = true
# cache_dir = "{llm_cache_dir}"
# At most this many prompt+completion tokens per command run (unset: no cap):
# budget_tokens = 2000000

[memory]
# Point-in-time evidence and the market-feedback source memory (seed 000, sections 3.3 and 3.5).
# Equation 6: score = relevance + lambda * clip(rho * (u - 1/2), -clip, clip), u = (a + 1) / (a + b + 2),
# rho = n / (n + kappa), n = a + b. clip and lambda: the paper's Appendix C; kappa: finkg's choice (the
# extracted paper lost its value).
kappa = 10.0
clip = 0.20
lambda = 0.30
# The reader's context (top k after memory reranking) and the candidate pool K per anchor, of which
# same-sector peer evidence fills at most peer_share; near_duplicate_threshold: rapidfuzz ratio (0-100).
top_k = 5
pool_size = 20
peer_share = 0.20
near_duplicate_threshold = 90

[hybrid]
# Hybrid chunk retrieval (seed 002 sections 3.2, 5.4; seed 000 section 3.3): BM25 and dense cosine, each
# min-max normalized within the candidate pool, alpha * dense + (1 - alpha) * BM25; or rrf.
fusion = "minmax"
# alpha unset: the corpus's swept alpha stored on (:Corpus {{name}}) by `finkg eval retrieval`, else 0.5.
# alpha = 0.5
alpha_step = 0.025
rrf_k = 60

[rerank]
# Reranking of the top_n hits by a local cross-encoder (unset model_path: no reranking, the measured best
# without downloadable reranker weights). A bge-reranker directory loads with FlagEmbedding; `finkg rerank
# train` trains finkg's own from MiniLM on TAT-QA's training half into ~/.cache/finkg/models/finkg-reranker-minilm:
# model_path = "~/.cache/finkg/models/finkg-reranker-minilm"
# backend = "auto"          # auto (flag when the name contains "bge"), cross-encoder, flag, or llm (the [llm]
#                           # model grades each passage 0-3: one call per passage; no model_path needed)
top_n = 20
max_length = 128
batch_size = 32

[feedback]
# The market-feedback evaluation (`finkg eval feedback`; seed 000, sections 3-4): tweets, prices and the
# market proxy under data_dir (tweets/<TICKER>/, prices/<TICKER>.csv, market_proxy):
# data_dir = "../shared/data/market"
market_proxy = "index/sp500.csv"
tickers = ["MSFT", "JPM", "XOM", "GE"]
shuffles = 5
reader_max_tokens = 128
alpha = 0.5
# max_anchors_per_day = 2      # sampling for a CPU run (seeded); unset: every anchor
portfolio_top_k = 2
cost_bps = 10.0

[eval]
# Text metrics of generated analyses (seed 004, section 4.1). BERTScore uses a LOCAL model directory
# (nothing is downloaded), e.g. the all-MiniLM-L6-v2 folder that `finkg models path all-minilm-l6-v2` prints,
# at one layer (unset: the model's last: 6 for MiniLM-L6, 12 for mpnet):
# bertscore_model_path = "/path/to/all-MiniLM-L6-v2"
# bertscore_num_layers = 6
# bertscore_batch_size = 32
# bertscore_device = "cpu"
# The LLM judge ([llm] model) rates each text's consistency with the reference conclusion and text (0-5):
# judge = true
# judge_max_tokens = 192

[extract]
# LLM triple extraction (`finkg extract`, seed 004 section 3.1): sentences numbered in one call (more:
# fewer calls, longer answers), the completion cap per call, and chunks per committed batch;
# reuse_sentences: a sentence identical to one already extracted (FOMC statements repeat many) takes
# over that sentence's triples and verdicts instead of a new call.
sentences_per_call = 4
max_tokens = 384
batch_chunks = 8
reuse_sentences = true

[text]
# Text ingest (`finkg ingest text`): sentences are packed into chunks of at most chunk_tokens tokens;
# the next chunk repeats whole trailing sentences of at most chunk_overlap tokens (< chunk_tokens / 2).
chunk_tokens = 240
chunk_overlap = 48
# Tokens are counted with this tokenizer.json (or a model directory holding one), e.g. the embedding
# model's; unset: words and punctuation marks are counted (about 0.96 x MiniLM's WordPiece tokens).
# tokenizer = "/path/to/all-MiniLM-L6-v2"

[akshare]
# Live AKShare calls (`finkg ingest akshare --live`): tries per call, seconds before the first retry
# (doubling), and seconds per socket connect or read (AKShare sets no timeout of its own).
retry_attempts = 3
retry_wait = 2.0
timeout = 30

[models]
# Where `finkg models install` puts the offline weights (one folder per model); default shown:
# dir = "{models_dir}"


[embedding]
# Node embeddings for entity resolution and clustering (`finkg cluster`). A local directory: any
# sentence-transformers model (e.g. all-MiniLM-L6-v2), or a bge model (FlagEmbedding), as in seed 004.
# backend = "auto"          # auto (flag when the directory name contains "bge"), sentence-transformers, flag
# model_path = "/path/to/all-MiniLM-L6-v2"
# batch_size = 64
# device = "cpu"

[cluster]
# Agglomerative clustering of entity embeddings on cosine distance (seed 004, section 3.2), constrained
# to a k-nearest-neighbour graph so 50,000 entities fit in memory. distance_threshold: clusters at or
# above this cosine distance stay apart. 0.30 best matched the XBRL tags of 5,000 real line-item labels with
# MiniLM (bench/clustering.py --sweep); measure again for another model.
distance_threshold = 0.30
n_neighbors = 15
# Entity resolution within a type: rapidfuzz token-sort ratio (0-100) and embedding cosine similarity.
fuzzy_threshold = 92
embedding_merge_threshold = 0.95

[retrieval]
# Knowledge retrieval for reports (seed 004 section 3.2): k items per query; TFR takes the top_n most
# similar triples, weights their clusters by softmax(mean similarity / temperature) and takes k in all.
k = 10
top_n = 100
temperature = 0.1

[report]
# Report batches (`finkg report`): retrieval system (tfr, dense-triples, bm25-docs, dense-docs, none),
# facts shown to the LLM, facts stage 1 may select, the answer's completion cap, questions in flight,
# and the answer format: cited-points (JSON claims, each citing the ids it rests on) or text.
system = "tfr"
max_facts = 30
max_selected = 8
answer_tokens = 400
workers = 1
answer_format = "cited-points"
"""


def write_settings_file(path: Path | None = None, force: bool = False) -> tuple[Path, bool]:
    """Write the commented settings file with a freshly generated Neo4j password.

    Returns:
        ``(path, written)``; ``written`` is False when the file existed and ``force`` is False.
    """
    path = path or config_path()
    if path.exists() and not force:
        return path, False
    path.parent.mkdir(parents=True, exist_ok=True)
    text = SETTINGS_TEMPLATE.format(
        password=secrets.token_urlsafe(18),
        neo4j_version=NEO4J_VERSION,
        home=_data_home() / "neo4j",
        dist_dir=_cache_home() / "neo4j-dist",
        llm_cache_dir=_cache_home() / "llm-cache",
        models_dir=_cache_home() / "models",
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path, True
