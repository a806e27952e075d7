"""Configuration: environment variables over a TOML settings file over defaults (pydantic-settings).

``Settings`` has one typed section per ``[section]`` of the settings file: ``settings.neo4j.password``,
``settings.llm.backend``, ``settings.embedding.model_path`` ... (:class:`Neo4jSettings`, :class:`LLMSettings`,
...). Where a value comes from, highest priority first:

1. keyword overrides of :func:`load_settings` (flat ``section_key`` names or nested dicts);
2. environment variables ``FINKG_<SECTION>__<KEY>`` (e.g. ``FINKG_NEO4J__PASSWORD``,
   ``FINKG_LLM__MODEL_PATH``);
3. the older environment names, still accepted: ``NEO4J_URI``, ``NEO4J_USER``, ``NEO4J_PASSWORD``,
   ``NEO4J_DATABASE`` (the keys docker-compose.yml uses) and ``FINKG_<SECTION>_<KEY>`` with one
   underscore (e.g. ``FINKG_SERVER_HOME``, ``FINKG_LLM_BACKEND``);
4. the settings file: ``$FINKG_CONFIG`` if set, else ``$XDG_CONFIG_HOME/finkg/config.toml``
   (``~/.config/finkg/config.toml``). ``finkg init`` writes a commented one, with a freshly
   generated Neo4j password;
5. installed models (``[models] use_installed``, on by default): an unset ``[embedding] model_path``
   becomes the all-MiniLM-L6-v2 that ``finkg models install`` installed, and an unset ``[llm]`` backend
   the installed Qwen2.5-Coder-1.5B GGUF (llama-cpp), so a command run after the demo needs no variables;
6. the defaults below.

``finkg config show`` prints every value in effect, where it came from, secrets masked
(:func:`effective_settings`). No password or key lives in code: with none configured, commands that
need one say how to set it.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import stat
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self, get_args, get_origin
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from kg.errors import ConfigError

NEO4J_VERSION = "5.26.30"
log = logging.getLogger(__name__)
_warned: set[Path] = set()


def config_path() -> Path:
    """Path of the settings file: ``$FINKG_CONFIG`` or ``$XDG_CONFIG_HOME/finkg/config.toml``."""
    if env := os.environ.get("FINKG_CONFIG"):
        return Path(env).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "finkg" / "config.toml"


def settings_file_exposure(path: Path) -> str | None:
    """A warning when the settings file ``path`` (it holds the Neo4j password) is open to group or
    others (any of the mode bits 077), else None. Checked every time the file is read."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return None
    if not mode & 0o077:
        return None
    return (
        f"warning: the settings file {path} holds the Neo4j password but is mode {mode:03o} (group or others "
        f"may read it); make it private with `chmod 600 {path}`"
    )


def _data_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "finkg"


def _cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "finkg"


def _section_fields(settings_cls: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """``{section name: section model}`` of a settings class."""
    out: dict[str, type[BaseModel]] = {}
    for name, field in settings_cls.model_fields.items():
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            out[name] = field.annotation
    return out


WRITTEN_KEYS = {"lambda_": "lambda"}
"""Field names that are Python keywords, and the key the settings file and environment use for them."""


def _keys(model: type[BaseModel]) -> dict[str, str]:
    """``{key as written in the file or environment: field name}`` of a section (``lambda`` -> ``lambda_``)."""
    return {WRITTEN_KEYS.get(n, n): n for n in model.model_fields} | {n: n for n in model.model_fields}


class TomlSectionsSource(PydanticBaseSettingsSource):
    """Reads the settings file: ``[section] key = value`` becomes ``settings.section.key``.

    Raises:
        ConfigError: the file is not valid TOML, or names a section or key finkg does not know.
    """

    def __init__(self, settings_cls: type[BaseSettings], path: Path) -> None:
        super().__init__(settings_cls)
        self.path = path

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ returns the whole mapping

    def __call__(self) -> dict[str, Any]:
        if not self.path.is_file():
            return {}
        warning = settings_file_exposure(self.path)
        if warning and self.path not in _warned:  # once per process
            _warned.add(self.path)
            log.warning(warning)
        try:
            data = tomllib.loads(self.path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{self.path}: not valid TOML: {exc}") from exc
        sections = _section_fields(self.settings_cls)
        nested: dict[str, Any] = {}
        for section, body in data.items():
            if not isinstance(body, dict):
                raise ConfigError(f"{self.path}: '{section}' must be a [section] of keys")
            if section not in sections:
                raise ConfigError(f"{self.path}: unknown section [{section}]")
            keys = _keys(sections[section])
            for key, value in body.items():
                if key not in keys:
                    raise ConfigError(f"{self.path}: unknown setting [{section}] {key}")
                nested.setdefault(section, {})[keys[key]] = value
        return nested


LEGACY_NEO4J_ENV = {
    "NEO4J_URI": "uri",
    "NEO4J_USER": "user",
    "NEO4J_PASSWORD": "password",
    "NEO4J_DATABASE": "database",
}
"""The environment names docker-compose.yml and earlier finkg versions use for ``[neo4j]``."""


def _is_complex(annotation: Any) -> bool:
    """True for list/dict/set annotations (their environment values are JSON, as pydantic-settings reads them)."""
    origins = {get_origin(annotation), *(get_origin(a) for a in get_args(annotation))}
    return bool(origins & {list, dict, set, tuple})


def split_flat_name(settings_cls: type[BaseModel], flat: str) -> tuple[str, str] | None:
    """``"llm_model_path"`` -> ``("llm", "model_path")`` for a settings class; None when no section matches.

    The longest section name that prefixes ``flat`` wins (``memory_kappa`` is ``[memory] kappa``, not ``[memo]``).
    """
    sections = _section_fields(settings_cls)
    for section in sorted(sections, key=len, reverse=True):
        if flat.startswith(section + "_"):
            key = flat[len(section) + 1 :]
            keys = _keys(sections[section])
            if key in keys:
                return section, keys[key]
    return None


class LegacyEnvSource(PydanticBaseSettingsSource):
    """The older environment names: ``NEO4J_*`` and ``FINKG_<SECTION>_<KEY>`` (one underscore)."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ returns the whole mapping

    def __call__(self) -> dict[str, Any]:
        nested: dict[str, Any] = {}
        sections = _section_fields(self.settings_cls)
        for env, key in LEGACY_NEO4J_ENV.items():
            if env in os.environ:
                nested.setdefault("neo4j", {})[key] = os.environ[env]
        for env, value in os.environ.items():
            if not env.startswith("FINKG_") or "__" in env:
                continue
            found = split_flat_name(self.settings_cls, env[len("FINKG_") :].lower())
            if found is None:
                continue
            section, key = found
            if _is_complex(sections[section].model_fields[key].annotation):
                try:
                    value = json.loads(value)
                except ValueError as exc:
                    raise ConfigError(f"environment variable {env}: not valid JSON: {exc}") from exc
            nested.setdefault(section, {})[key] = value
        return nested


def nest_overrides(settings_cls: type[BaseModel], overrides: dict[str, Any]) -> dict[str, Any]:
    """Flat overrides (``llm_backend="openai"``) and nested ones (``llm={"backend": ...}``) as one nested dict.

    Raises:
        ConfigError: a name that is neither a section nor ``section_key``.
    """
    sections = _section_fields(settings_cls)
    nested: dict[str, Any] = {}
    for name, value in overrides.items():
        if name in sections:
            if isinstance(value, BaseModel):
                value = value.model_dump()
            nested.setdefault(name, {}).update(value)
            continue
        found = split_flat_name(settings_cls, name)
        if found is None:
            raise ConfigError(f"unknown setting {name!r}")
        nested.setdefault(found[0], {})[found[1]] = value
    return nested


URI_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")
URI_SCHEMES_TEXT = (
    "use one of bolt://, bolt+s://, bolt+ssc://, neo4j://, neo4j+s://, neo4j+ssc:// with the Bolt port "
    "(7687 by default; http:// and the HTTP port 7474 serve the Browser, not finkg)"
)


class Neo4jSettings(BaseModel):
    """[neo4j]: the database finkg talks to"""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    uri: str | None = Field(
        default=None,
        description="Bolt URI; default bolt://127.0.0.1:<server.bolt_port>",
    )
    user: str = Field(default="neo4j")
    password: SecretStr | None = Field(default=None)
    database: str = Field(
        default="neo4j",
        description="the database finkg reads and writes; the local server serves it as its default (Community "
        "serves one user database), so switching to a bulk-imported one is this setting and a server restart",
    )
    query_timeout: float | None = Field(
        default=60.0,
        gt=0,
        description="seconds a `finkg cypher` query may run before the server stops it (the driver's "
        "per-transaction timeout; `finkg cypher --timeout` overrides it); unset: the server's db.transaction.timeout",
    )

    @field_validator("uri")
    @classmethod
    def _bolt_scheme(cls, v: str | None) -> str | None:
        if v is not None and v.split("://", 1)[0].lower() not in URI_SCHEMES:
            raise ValueError(f"{v!r} is not a Bolt URI: {URI_SCHEMES_TEXT}")
        if v is not None:
            try:
                port = urlsplit(v).port  # ValueError for a port that is not a number in 0..65535, a broken IPv6 host
            except ValueError as exc:
                raise ValueError(f"{v!r} is not a usable URI ({exc}): {URI_SCHEMES_TEXT}") from None
            if port == 0:
                raise ValueError(f"{v!r}: port 0; a port is a number from 1 to 65535 (Bolt: 7687)")
        return v


class ServerSettings(BaseModel):
    """[server]: the local Neo4j that `finkg neo4j start` assembles and runs"""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    home: Path = Field(default_factory=lambda: _data_home() / "neo4j")
    dist_dir: Path = Field(default_factory=lambda: _cache_home() / "neo4j-dist")
    bolt_port: int = Field(default=7687, ge=1, le=65535)
    http_port: int = Field(default=7474, ge=1, le=65535)
    heap: str = "2g"
    pagecache: str = "4g"
    java: str = "java"
    mvn: str = "mvn"
    start_timeout: float = Field(default=180.0, gt=0)
    transaction_timeout: str = Field(
        default="30m",
        pattern=r"^\d+(ms|s|m|h|d)?$",
        description="db.transaction.timeout in neo4j.conf: the longest any transaction may run (e.g. 90s, "
        "30m, 2h; 0: no limit); a `finkg cypher` query has its own, shorter [neo4j] query_timeout",
    )
    transaction_memory: str = Field(
        default="1g",
        pattern=r"^\d+(\.\d+)?([kKmMgGtT]([iI]?[bB])?|[bB])?$",
        description="db.memory.transaction.max in neo4j.conf: the most heap one transaction may use "
        "(e.g. 512m, 1g; 0: no limit but the server's total)",
    )


class WriterSettings(BaseModel):
    """[writer]: batched writes"""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    batch_size: int = Field(default=5_000, ge=1)
    workers: int = Field(default=2, ge=1, le=16)


class IngestSettings(BaseModel):
    """[ingest]: limits on input files, checked before they are read"""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    max_member_bytes: int = Field(
        default=1 << 30,
        ge=1,
        description="an FSDS archive member declaring more bytes uncompressed than this is refused (1 GiB)",
    )
    max_compression_ratio: float = Field(
        default=100.0,
        gt=1,
        description="an FSDS member above 1 MiB that compresses more times than this is refused (a ZIP bomb)",
    )


class MemoSettings(BaseModel):
    """[memo]: the desk-risk label's four tests (seed 003, "risk label"); a test is active when the ratio
    is below its floor (current ratio, margins) or above its ceiling (leverage)"""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    current_ratio_floor: float = 1.0
    leverage_ceiling: float = Field(default=0.7, gt=0)
    ocf_margin_floor: float = 0.0
    net_margin_floor: float = 0.0
    batch_size: int = Field(default=200, ge=1, description="filings per Neo4j read and per graph write")
    pictures: bool = Field(default=True, description="draw each memo's peer picture (OUT/SYSTEM/ADSH.png)")


class LLMSettings(BaseModel):
    """[llm]: the LLM behind memo prose and triple extraction (generation/llm/, seed 003 "Compared
    systems", seed 004 section 3.1); unset backend means no LLM (the deterministic renderer writes
    memos)"""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    backend: str | None = Field(
        default=None,
        pattern=r"^(llama-cpp|llama-server|transformers|openai)$",
        description="llama-cpp (a local GGUF file, one call at a time), llama-server (a local GGUF file served by "
        "llama.cpp's server with `parallel` slots: concurrent calls decode together), transformers (a Hugging Face "
        "directory) or openai (an OpenAI-compatible server)",
    )
    model_path: Path | None = Field(
        default=None, description="GGUF file (llama-cpp), or Hugging Face directory (transformers)"
    )
    gguf_file: str | None = Field(
        default=None, description="transformers: a GGUF file name inside model_path (dequantized to float32)"
    )
    adapter_path: Path | None = Field(
        default=None,
        description="a LoRA adapter on model_path (`finkg train reader`): a peft directory (transformers) or a "
        "GGUF LoRA file (llama-cpp); refused when trained on another base model",
    )
    base_url: str | None = Field(default=None, description="e.g. http://127.0.0.1:8000/v1 for backend openai")
    model: str | None = Field(default=None, description="model name sent to the openai backend")
    api_key: SecretStr | None = Field(
        default=None, description="bearer token for the openai backend (FINKG_LLM_API_KEY)"
    )
    n_ctx: int = Field(default=4096, ge=256, description="llama-cpp context window, tokens")
    n_batch: int = Field(default=512, ge=1, description="llama-cpp prompt tokens per batch")
    threads: int = Field(
        default=2,
        ge=1,
        description="CPU threads per model (llama-cpp, llama-server, transformers); with --adapter two models run "
        "at once, each with at most half the cores",
    )
    parallel: int = Field(
        default=4,
        ge=1,
        le=64,
        description="llama-server slots decoded together, and the LLM calls batch jobs keep in flight (extraction)",
    )
    server_path: Path | None = Field(
        default=None,
        description="the llama-server binary (default: the one scripts/bootstrap.sh builds into the environment)",
    )
    max_tokens: int = Field(default=600, ge=1)
    temperature: float = Field(default=0.0, ge=0.0)
    seed: int = Field(default=0, description="sampling seed (part of the cache key)")
    timeout: float = Field(default=120.0, gt=0, description="seconds per request to the openai backend")
    cache: bool = Field(default=True, description="keep answers in a disk cache: a rerun makes no LLM call")
    cache_dir: Path = Field(
        default_factory=lambda: _cache_home() / "llm-cache", description="folder of the LLM answer cache"
    )
    budget_tokens: int | None = Field(
        default=None, ge=1, description="prompt+completion tokens one client (one command run) may spend; unset: no cap"
    )

    def concurrency(self) -> int:
        """Calls worth keeping in flight: ``parallel`` for a backend that serves them in parallel
        (llama-server, openai), else 1 (llama-cpp and transformers run one call at a time)."""
        return self.parallel if self.backend in ("llama-server", "openai") else 1


class MemorySettings(BaseModel):
    """[memory]: point-in-time evidence and the market-feedback source memory (seed 000, sections 3.3 and
    3.5; retrieval/text/point_in_time.py, retrieval/memory/source_memory.py). kappa is not in the
    extracted paper text: see retrieval/memory/source_memory.py; clip and lambda are Appendix C's
    selected values"""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    kappa: float = Field(default=10.0, gt=0, description="shrinkage pseudo-count: rho = n / (n + kappa)")
    clip: float = Field(default=0.20, ge=0, description="bound c of the shrunk, centered utility (equation 6)")
    lambda_: float = Field(
        default=0.30, ge=0, description="strength of source memory against static relevance (0: static ranking)"
    )
    top_k: int = Field(default=5, ge=1, description="passages in the reader's context (the memory-reranked top k)")
    pool_size: int = Field(default=20, ge=1, description="K, point-in-time candidates kept per anchor")
    peer_share: float = Field(
        default=0.20, ge=0, lt=1, description="largest share of the pool that same-sector peer evidence may fill"
    )
    near_duplicate_threshold: float = Field(
        default=90.0,
        gt=0,
        le=100,
        description="rapidfuzz ratio (0-100) at or above which a passage is a near-duplicate of the anchor",
    )


class HybridSettings(BaseModel):
    """[hybrid] and [rerank]: hybrid chunk retrieval and reranking (retrieval/text/hybrid.py,
    retrieval/text/rerank.py; seed 002 sections 3.2-3.3, 4.3, 5.4; seed 000 section 3.3)"""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    fusion: str = Field(
        default="minmax",
        pattern=r"^(minmax|rrf)$",
        description="minmax: alpha * dense + "
        "(1 - alpha) * BM25, both min-max normalized within the candidate pool; rrf: "
        "reciprocal rank fusion",
    )
    alpha: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="dense weight; unset: the corpus's swept alpha stored on (:Corpus), else 0.5",
    )
    alpha_step: float = Field(default=0.025, gt=0.0, le=1.0, description="alpha sweep step (seed 002 section 5.4)")
    rrf_k: int = Field(default=60, ge=1, description="RRF constant k (Cormack et al. 2009)")


class RerankSettings(BaseModel):
    """"""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    model_path: Path | None = Field(
        default=None,
        description="local cross-encoder directory (bge-reranker: "
        "FlagReranker; else sentence-transformers CrossEncoder); unset: the model "
        "`finkg train reranker` promoted (only when reranking measured better than none), "
        "else no reranking (measured best here, see retrieval/text/rerank.py)",
    )
    backend: str = Field(
        default="auto",
        pattern=r"^(auto|cross-encoder|flag|llm)$",
        description="auto: flag when the directory name contains bge; llm: the [llm] "
        "model as a relevance judge (one call per passage; model_path unused)",
    )
    top_n: int = Field(default=20, ge=1, description="retrieved passages reranked (seed 002 section 4.3: top-20)")
    max_length: int = Field(
        default=256, ge=16, description="tokens per (query, passage) pair (finkg's reranker is trained at 256)"
    )
    batch_size: int = Field(default=32, ge=1, description="pairs per forward pass")
    device: str | None = Field(default=None, description="torch device; unset: the library's choice")


class FeedbackSettings(BaseModel):
    """[feedback]: the market-feedback evaluation (`finkg eval feedback`, finkg/eval/feedback.py; seed 000,
    sections 3.1-3.5 and 4.1-4.4)"""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    data_dir: Path | None = Field(
        default=None,
        description="folder with tweets/<TICKER>/, prices/<TICKER>.csv and "
        "the market proxy (e.g. ../shared/data/market)",
    )
    market_proxy: str = Field(
        default="index/sp500.csv",
        description="market proxy price file, relative to "
        "data_dir (the paper's QQQ is not in the data; the S&P 500 stands in)",
    )
    tickers: list[str] = Field(
        default=["MSFT", "JPM", "XOM", "GE"],
        description="the universe (tickers with both a tweet folder and a price file)",
    )
    shuffles: int = Field(default=5, ge=1, description="seeds of each shuffled-memory control (section 4.3)")
    reader_max_tokens: int = Field(default=128, ge=8, description="the reader's answer cap, tokens")
    alpha: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="dense weight of the static hybrid score (seed 000, 3.3: BM25 and dense with equal weights)",
    )
    max_anchors_per_day: int | None = Field(
        default=None,
        ge=1,
        description="sampling: at most this many anchors per ticker and prediction day (seeded); unset: all",
    )
    portfolio_top_k: int = Field(
        default=2,
        ge=1,
        description="K of the top-K 3-day sleeves (the paper's K is lost; 2 of the 4-name tweet universe)",
    )
    cost_bps: float = Field(default=10.0, ge=0.0, description="cost on one-way turnover, basis points")


class AkshareSettings(BaseModel):
    """[akshare]: live AKShare calls (`finkg ingest akshare --live`, ingest/market/akshare.py); AKShare
    itself sets no timeout, so every socket operation of a call is bounded here"""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    retry_attempts: int = Field(default=3, ge=1, le=20, description="tries per live AKShare call (tenacity)")
    retry_wait: float = Field(default=2.0, ge=0, description="seconds before the first retry, doubling after")
    timeout: float = Field(default=30.0, gt=0, description="seconds per socket connect or read of a live call")


class EdgarSettings(BaseModel):
    """[edgar]: SEC EDGAR through edgartools (`finkg fetch`, ingest/sec/edgar.py): who is asking (SEC's fair-access
    rules want a User-Agent naming a person or company and an email), how fast, and where responses are kept"""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    identity: str | None = Field(
        default=None,
        description='the User-Agent sent to SEC EDGAR: your name and email, e.g. "Jane Doe jane@example.com"; '
        "unset: `finkg fetch` is refused (only --offline runs without it)",
    )
    cache_dir: Path = Field(
        default_factory=lambda: _cache_home() / "edgar",
        description="edgartools' local data directory (EDGAR_LOCAL_DATA_DIR): companyfacts/CIK##########.json "
        "as fetched, and its HTTP cache; a company found here is not requested again (--refresh asks EDGAR)",
    )
    rate_limit: int = Field(
        default=9, ge=1, le=10, description="requests per second at most (SEC allows 10; edgartools' limiter)"
    )
    base_url: str | None = Field(
        default=None,
        description="a mirror of https://www.sec.gov (EDGAR_BASE_URL, read when edgartools is first imported)",
    )
    data_url: str | None = Field(
        default=None,
        description="a mirror of https://data.sec.gov (EDGAR_DATA_URL, read when edgartools is first imported)",
    )


class EvalSettings(BaseModel):
    """[eval]: text metrics of generated analyses (finkg/eval/metrics/text.py, seed 004 section 4.1):
    BERTScore from a local model directory (never downloaded) and the LLM consistency judge
    (GLM-4-Score)"""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    bertscore_model_path: Path | None = Field(
        default=None,
        description="local Hugging Face model directory for BERTScore, e.g. all-MiniLM-L6-v2 or all-mpnet-base-v2",
    )
    bertscore_num_layers: int | None = Field(
        default=None,
        ge=1,
        description="layer whose embeddings BERTScore "
        "compares; unset: the model's last (6 for MiniLM-L6, 12 for mpnet)",
    )
    bertscore_batch_size: int = Field(default=32, ge=1, description="texts per BERTScore forward pass")
    bertscore_device: str | None = Field(
        default=None, description="torch device for BERTScore; unset: cuda if available, else cpu"
    )
    judge: bool = Field(
        default=True,
        description="rate consistency with the reference conclusion and text by the "
        "[llm] model (0-5); false: skip the judge",
    )
    judge_max_tokens: int = Field(default=192, ge=16, description="completion cap per judge answer")


class ModelsSettings(BaseModel):
    """[models]: offline weights that `finkg models install` assembles (finkg/models.py)"""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    dir: Path = Field(
        default_factory=lambda: _cache_home() / "models",
        description="folder holding one sub-folder per installed model",
    )
    use_installed: bool = Field(
        default=True,
        description="an unset [embedding] model_path / [llm] backend uses the installed all-MiniLM-L6-v2 / "
        "Qwen2.5-Coder-1.5B GGUF",
    )


class ExtractSettings(BaseModel):
    """[extract]: LLM triple extraction (generation/kgbuild/extraction.py, seed 004 section 3.1)"""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    sentences_per_call: int = Field(default=4, ge=1, description="sentences numbered in one extraction call")
    max_tokens: int = Field(default=384, ge=16, description="completion cap per extraction call")
    batch_chunks: int = Field(default=8, ge=1, description="chunks per committed batch (resume granularity)")
    reuse_sentences: bool = Field(
        default=True,
        description="answer a sentence identical to one extracted before "
        "(same schema and model) from that answer instead of a new LLM call",
    )
    content_filter: bool = Field(
        default=True,
        description="skip sentences with no financial content (no number, no word of the financial lexicon) "
        "without an LLM call; what it loses on the gold set: docs/text-kg.md",
    )
    verify: bool = Field(
        default=False,
        description="run the LLM verification pass (seed 004 section 3.1, phase 3) by default; `finkg extract "
        "--verify/--no-verify` overrides; off because on the gold set it removes more correct triples than wrong ones",
    )


class TextSettings(BaseModel):
    """[text]: text ingest (`finkg ingest text`): token-aware chunking of FOMC statements, filing text and
    tweets (ingest/text/chunking.py); 240 tokens fit all-MiniLM-L6-v2's 256-token window with its
    two special tokens and a margin for the approximate counter"""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    chunk_tokens: int = Field(default=240, ge=8, description="token budget per chunk (whole sentences)")
    chunk_overlap: int = Field(
        default=48,
        ge=0,
        description="at most this many tokens of whole trailing "
        "sentences repeat at the start of the next chunk; below chunk_tokens / 2",
    )
    tokenizer: Path | None = Field(
        default=None,
        description="tokenizer.json file or model directory that counts "
        "tokens; unset: words and punctuation marks (no model needed)",
    )


class EmbeddingSettings(BaseModel):
    """[embedding]: node embeddings (retrieval/embeddings.py); seed 004 section 3.2 encodes nodes with bge-
    base-zh: a bge directory here uses FlagEmbedding, any sentence-transformers directory works"""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    backend: str = Field(
        default="auto",
        pattern=r"^(auto|sentence-transformers|flag)$",
        description="auto (flag when the directory name has 'bge'), sentence-transformers or flag",
    )
    model_path: Path | None = Field(default=None, description="local model directory (nothing is downloaded)")
    batch_size: int = Field(default=64, ge=1, description="texts per forward pass")
    device: str | None = Field(
        default=None, description="torch device (cpu, cuda, cuda:0); unset: the library's choice"
    )


class ClusterSettings(BaseModel):
    """[cluster]: entity resolution and agglomerative clustering (`finkg cluster`,
    finkg/pipelines/clusters.py) 0.30: the threshold whose clusters best match the XBRL tags of
    5,000 real line-item labels (ARI 0.351 with MiniLM; 0.25: 0.341, 0.35: 0.302;
    bench/clustering.py --sweep)"""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    distance_threshold: float = Field(
        default=0.30, gt=0, le=2, description="cosine distance at or above which clusters do not merge"
    )
    n_neighbors: int = Field(
        default=15, ge=1, le=200, description="k of the kNN connectivity graph and of merge candidates"
    )
    fuzzy_threshold: float = Field(default=92.0, gt=0, le=100, description="token-sort ratio (0-100) for a fuzzy merge")
    embedding_merge_threshold: float = Field(
        default=0.95, gt=0, le=1, description="cosine similarity for an embedding merge"
    )


class RetrievalSettings(BaseModel):
    """[retrieval]: knowledge retrieval for generation (retrieval/knowledge.py, seed 004 section 3.2)"""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    k: int = Field(default=10, ge=0, description="knowledge items (triples or chunks) per query")
    top_n: int = Field(default=100, ge=1, description="TFR: candidate triples before the cluster weighting (n >> k)")
    temperature: float = Field(default=0.1, gt=0, description="TFR: softmax temperature over cluster mean similarities")


class ReportSettings(BaseModel):
    """[report]: report batches (`finkg report`, finkg/pipelines/reports.py, seed 004 section 3.3)"""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    system: str = Field(
        default="tfr",
        pattern=r"^(tfr|dense-triples|bm25-docs|dense-docs|none)$",
        description="retrieval system: tfr, dense-triples, bm25-docs, dense-docs or none",
    )
    max_facts: int = Field(default=30, ge=1, description="facts F shown to the LLM (the most similar to the question)")
    max_selected: int = Field(default=8, ge=1, description="facts stage 1 may select")
    answer_tokens: int = Field(default=400, ge=16, description="completion cap of the answer (stage 2)")
    answer_format: str = Field(
        default="cited-points",
        pattern=r"^(cited-points|text)$",
        description="stage 2 answer: cited-points (JSON claims, each citing fact/knowledge ids) or text",
    )
    workers: int | None = Field(
        default=None,
        ge=1,
        description="questions in flight at once; unset: [llm] parallel with a backend that serves calls in "
        "parallel (llama-server, openai), else 1",
    )
    agent_steps: int = Field(
        default=6, ge=1, le=50, description="--reader agent: LLM turns (tool calls and answers) per question at most"
    )


class BatchSettings(BaseModel):
    """[batch]: what a long LLM batch costs before it starts (finkg/cost.py): the commands that run the LLM over
    many items print the estimate, and ask for confirmation above these limits (`--yes` skips the question)"""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    confirm_above_hours: float = Field(
        default=1.0,
        ge=0,
        description="a batch estimated to take longer (from the rate measured for the model) asks before it starts "
        "on a terminal, and is refused without --yes elsewhere",
    )
    confirm_above_items: int = Field(
        default=1_000,
        ge=0,
        description="with no rate measured for the model yet: a batch of more items asks (and is refused without "
        "--yes elsewhere)",
    )
    rates_file: Path = Field(
        default_factory=lambda: _cache_home() / "batch-rates.json",
        description="seconds per item measured at the end of each batch, per command and model",
    )


class Settings(BaseSettings):
    """All of finkg's settings, one attribute per ``[section]`` of the settings file (``settings.llm.backend``).

    See the module docstring for the sources and their order.
    """

    model_config = SettingsConfigDict(env_prefix="FINKG_", env_nested_delimiter="__", extra="ignore")

    neo4j: Neo4jSettings = Field(default_factory=lambda: Neo4jSettings())
    server: ServerSettings = Field(default_factory=lambda: ServerSettings())
    writer: WriterSettings = Field(default_factory=lambda: WriterSettings())
    ingest: IngestSettings = Field(default_factory=lambda: IngestSettings())
    memo: MemoSettings = Field(default_factory=lambda: MemoSettings())
    llm: LLMSettings = Field(default_factory=lambda: LLMSettings())
    memory: MemorySettings = Field(default_factory=lambda: MemorySettings())
    hybrid: HybridSettings = Field(default_factory=lambda: HybridSettings())
    rerank: RerankSettings = Field(default_factory=lambda: RerankSettings())
    feedback: FeedbackSettings = Field(default_factory=lambda: FeedbackSettings())
    akshare: AkshareSettings = Field(default_factory=lambda: AkshareSettings())
    edgar: EdgarSettings = Field(default_factory=lambda: EdgarSettings())
    eval: EvalSettings = Field(default_factory=lambda: EvalSettings())
    models: ModelsSettings = Field(default_factory=lambda: ModelsSettings())
    extract: ExtractSettings = Field(default_factory=lambda: ExtractSettings())
    text: TextSettings = Field(default_factory=lambda: TextSettings())
    embedding: EmbeddingSettings = Field(default_factory=lambda: EmbeddingSettings())
    cluster: ClusterSettings = Field(default_factory=lambda: ClusterSettings())
    retrieval: RetrievalSettings = Field(default_factory=lambda: RetrievalSettings())
    report: ReportSettings = Field(default_factory=lambda: ReportSettings())
    batch: BatchSettings = Field(default_factory=lambda: BatchSettings())

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (
            init_settings,
            env_settings,
            LegacyEnvSource(settings_cls),
            TomlSectionsSource(settings_cls, config_path()),
        )

    @model_validator(mode="after")
    def _installed_models(self) -> Settings:
        """Unset model paths become the installed defaults (``[models] use_installed``)."""
        if not self.models.use_installed:
            return self
        from finkg import models  # late: finkg.models imports this module

        directory = Path(self.models.dir).expanduser()
        if self.embedding.model_path is None:
            self.embedding.model_path = models.promoted_model(
                directory, models.TUNED_EMBEDDER
            ) or models.installed_path(models.DEFAULT_EMBEDDING, directory)
        if self.rerank.model_path is None and self.rerank.backend != "llm":
            self.rerank.model_path = models.promoted_model(directory, models.TUNED_RERANKER)
        if self.llm.backend is None and self.llm.model_path is None and self.llm.base_url is None:
            gguf = models.installed_path(models.DEFAULT_LLM, directory)
            if gguf is not None:
                # llama.cpp's server (parallel slots) where scripts/bootstrap.sh built it, else llama-cpp-python
                from generation.llm.server import default_server_path

                local = "llama-server" if default_server_path() is not None else "llama-cpp"
                self.llm.backend, self.llm.model_path = local, gguf
        return self

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with ``update`` applied; keys are flat (``llm_backend``) or sections (``llm``), values validated.

        Raises:
            ConfigError: an unknown name or an invalid value.
        """
        data = self.model_dump()
        for section, values in nest_overrides(type(self), dict(update or {})).items():
            data[section].update(values)
        try:
            return type(self).model_validate(data)
        except ValidationError as exc:
            raise ConfigError(_problems(exc)) from exc

    @property
    def uri(self) -> str:
        """The Bolt URI in use (``[neo4j] uri`` or the local server's loopback address)."""
        return self.neo4j.uri or f"bolt://127.0.0.1:{self.server.bolt_port}"

    def password(self) -> str:
        """The Neo4j password.

        Raises:
            ConfigError: none is configured; the message says how to set one.
        """
        if self.neo4j.password is None or not self.neo4j.password.get_secret_value():
            raise ConfigError(
                "no Neo4j password configured: set NEO4J_PASSWORD (or FINKG_NEO4J__PASSWORD), or run `finkg init` "
                f"to write a settings file with a generated one ({config_path()})"
            )
        return self.neo4j.password.get_secret_value()


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())


def load_settings(**overrides: Any) -> Settings:
    """Load :class:`Settings`; ``overrides`` (flat ``section_key`` names, or a section's dict) win over every source.

    Raises:
        ConfigError: invalid file or values; the message names the setting.
    """
    try:
        return Settings(**nest_overrides(Settings, overrides))
    except ValidationError as exc:
        raise ConfigError(f"invalid settings ({config_path()}): {_problems(exc)}") from exc


SECRET_KEYS = {("neo4j", "password"), ("llm", "api_key")}


def effective_settings(settings: Settings | None = None) -> list[dict[str, str]]:
    """Every setting in effect: rows ``{"setting": "section.key", "value", "source"}``, secrets masked.

    ``source`` is ``override``, ``env FINKG_X__Y`` / ``env NAME`` (the variable), ``file``, ``installed``
    (a model ``finkg models install`` installed) or ``default``.
    """
    s = settings or load_settings()
    file_data = TomlSectionsSource(Settings, config_path())()
    bare = Settings.model_construct()  # defaults only, no sources, no validators
    rows: list[dict[str, str]] = []
    for section, model in _section_fields(Settings).items():
        current = getattr(s, section)
        for key in model.model_fields:
            value = getattr(current, key)
            written = WRITTEN_KEYS.get(key, key)
            nested_env = f"FINKG_{section.upper()}__{written.upper()}"
            legacy_env = f"FINKG_{section.upper()}_{written.upper()}"
            neo4j_env = next((e for e, k in LEGACY_NEO4J_ENV.items() if section == "neo4j" and k == key), None)
            if nested_env in os.environ:
                source = f"env {nested_env}"
            elif legacy_env in os.environ:
                source = f"env {legacy_env}"
            elif neo4j_env and neo4j_env in os.environ:
                source = f"env {neo4j_env}"
            elif key in file_data.get(section, {}):
                source = "file"
            elif value != getattr(getattr(bare, section), key):
                source = "installed" if section in ("embedding", "llm") else "override"
            else:
                source = "default"
            if (section, key) in SECRET_KEYS:
                shown = "(set)" if value is not None and str(value) else "(not set)"
            else:
                shown = "" if value is None else str(value)
            rows.append({"setting": f"{section}.{written}", "value": shown, "source": source})
    return rows


SETTINGS_TEMPLATE = """\
# finkg settings. Environment variables override every value here:
#   FINKG_<SECTION>__<KEY> (e.g. FINKG_NEO4J__PASSWORD, FINKG_LLM__MODEL_PATH), and the older names
#   NEO4J_URI, NEO4J_USER, NEO4J_PASSWORD, NEO4J_DATABASE and FINKG_<SECTION>_<KEY>
#   (e.g. FINKG_SERVER_HOME, FINKG_WRITER_BATCH_SIZE). Point FINKG_CONFIG at another file to use it.

[neo4j]
# The database finkg reads and writes. Unset uri means the local server below (bolt://127.0.0.1:<bolt_port>).
# uri = "bolt://127.0.0.1:7687"
user = "neo4j"
# Generated by `finkg init`. A local server keeps the password it was first started with.
password = "{password}"
database = "neo4j"
# Seconds a `finkg cypher` query may run before the server stops it (`finkg cypher --timeout` overrides it):
query_timeout = 60

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
# Limits written to neo4j.conf (restart the server after a change): the longest any transaction may run
# (db.transaction.timeout) and the most heap one transaction may use (db.memory.transaction.max).
transaction_timeout = "30m"
transaction_memory = "1g"

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
# Each memo's picture of the filer's current ratio and leverage against its SIC peers of the quarter
# (OUT/SYSTEM/ADSH.png, linked from the memo); false: no pictures (about 3 times as many memos per second).
pictures = true

[llm]
# The LLM that writes memo prose and extracts triples (`finkg models list` shows the installed weights).
# Unset backend (the default): no LLM, the deterministic renderer writes every memo.
# A local GGUF file through llama-cpp-python (installed with finkg); `finkg models install`
# fetches a small one (SmolLM2-135M) and `finkg models list` prints its path:
# backend = "llama-cpp"
# model_path = "/path/to/model.gguf"
# n_ctx = 4096
# n_batch = 512
# threads = 2            # per model; `finkg eval ... --adapter` runs two, each with at most half the cores
# The same GGUF file served by llama.cpp's own server (built by scripts/bootstrap.sh), which decodes
# `parallel` calls together (continuous batching): extraction and report batches keep that many in flight:
# backend = "llama-server"
# parallel = 4
# server_path = "/path/to/llama-server"   # default: the one in finkg's virtual environment
# Or a Hugging Face model directory through transformers (no constrained JSON: answers are repaired);
# gguf_file names a GGUF inside model_path that transformers dequantizes:
# backend = "transformers"
# model_path = "/path/to/hf-model-dir"
# gguf_file = "model.gguf"
# A LoRA adapter trained by `finkg train reader` on model_path's base: a peft directory (transformers)
# or a GGUF LoRA file (llama-cpp); refused, naming both, when it was trained on another base model:
# adapter_path = "/path/to/adapter"
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
# Reranking of the top_n hits by a local cross-encoder (unset model_path: the model `finkg train reranker`
# promoted, only if reranking measured better than none; else no reranking, the measured best without
# downloadable reranker weights). A bge-reranker directory loads with FlagEmbedding; `finkg train reranker`
# trains finkg's own on TAT-QA's training half into ~/.cache/finkg/models/finkg-reranker-minilm-tatqa/model:
# model_path = "~/.cache/finkg/models/finkg-reranker-minilm-tatqa/model"
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
# over that sentence's triples and verdicts instead of a new call; content_filter: sentences with no
# number and no word of the financial lexicon are not sent; verify: the LLM verification pass by default
# (off: on the gold set it removed more correct triples than wrong ones; docs/text-kg.md).
sentences_per_call = 4
max_tokens = 384
batch_chunks = 8
reuse_sentences = true
content_filter = true
verify = false

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

[edgar]
# SEC EDGAR through edgartools (`finkg fetch AAPL MSFT`). SEC's fair-access rules want every client to say who
# it is: set identity to your name and email (the User-Agent); `finkg fetch` is refused without it. At most
# rate_limit requests per second (SEC allows 10). Fetched companyfacts stay in cache_dir (edgartools' local data
# directory), so a second fetch of a company makes no request; default shown:
# identity = "Jane Doe jane@example.com"
rate_limit = 9
# cache_dir = "{edgar_cache_dir}"

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
# and the answer format: cited-points (JSON claims, each citing the ids it rests on) or text;
# agent_steps: LLM turns per question of `finkg report --reader agent`.
system = "tfr"
max_facts = 30
max_selected = 8
answer_tokens = 400
# workers = 4         # unset: [llm] parallel with the llama-server or openai backend, else 1
answer_format = "cited-points"
agent_steps = 6

[batch]
# Long LLM batches (`finkg report`, `finkg eval tatqa`/`agent`/`reports`, `finkg extract`, `finkg experience learn`)
# print their size and estimated time before they start, from the seconds per item measured at the end of
# the last batch of the same command and model (kept in rates_file). Above confirm_above_hours they ask
# before starting on a terminal and are refused (exit 2) elsewhere, unless run with --yes; with no rate
# measured for the model yet, above confirm_above_items items.
confirm_above_hours = 1.0
confirm_above_items = 1000
# rates_file = "{batch_rates_file}"
"""


def write_settings_file(path: Path | None = None, force: bool = False) -> tuple[Path, bool]:
    """Write the commented settings file with a freshly generated Neo4j password, mode 600 (an existing
    file that ``force`` overwrites is made 600 too, before the password is written).

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
        batch_rates_file=_cache_home() / "batch-rates.json",
        edgar_cache_dir=_cache_home() / "edgar",
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        os.fchmod(fh.fileno(), 0o600)  # O_CREAT's mode applies to a new file only; --force keeps the inode
        fh.write(text)
    return path, True
