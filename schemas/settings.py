"""All settings in one place: ``ARBITER_*`` environment variables (or ``arbiter.toml`` in the working directory).

Nothing reads ``os.environ`` at import time; call :func:`get_settings` where a value is needed.
Nested groups use ``__``: ``ARBITER_LLM__BASE_URL``, ``ARBITER_DISPATCH__PROFILE``.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, Field, SecretStr
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)


class IngestSettings(BaseModel):
    parse_workers: int = Field(2, description="documents parsed and embedded at once by one process (threads)")
    window_lines: int = Field(4, description="consecutive lines per embedded/BM25 line window (inside one section)")
    window_stride: int = Field(2, description="lines between the starts of two windows")
    embed_block_lines: int = Field(4, description="lines per block run through the embedder once (<= 128 tokens); "
                                                  "window vectors are pooled from the blocks' token states")
    embed_batch_size: int = Field(32, description="texts per embedding batch (questions; the torch and hash "
                                                  "embedders' windows; blocks run one per pass)")
    embed_block_cache_mb: int = Field(64, ge=0, description="per process, MB of blocks' pooled states kept so a "
                                                          "block seen before (repeated boilerplate) is not run again "
                                                          "(about 3 KB a block; 0: none)")


class EmbedderSettings(BaseModel):
    kind: str = Field("minilm", description="'minilm' (bundled all-MiniLM-L6-v2, offline), 'minilm-torch' (same model through torch) or 'hash' (tests only)")
    device: str = Field("cpu", description="'cpu' (int8 onnxruntime) or a torch device such as 'cuda' (needs the gpu extra)")
    threads: int = Field(0, description="onnxruntime intra-op threads per embedder session (0: at ingest one per ingest thread, which runs its own session; for questions every core)")


class DetectSettings(BaseModel):
    top_k_per_detector: int = Field(30, description="hits kept from each detector per question")
    fill_depth: int = Field(60, description="hits each detector proposes in all: those ranked past "
                                            "top_k_per_detector only fill the pool places its hits left empty (hits of "
                                            "one page and section merge into one candidate); <= top_k: no fill")
    pool_size: int = Field(30, description="candidates handed to the arbiter (top by RRF); capped at 200")
    rrf_k: int = Field(60, description="RRF constant")
    cached_pages: int = Field(20_000, description="pages of documents' prepared views (lines, tokens, windows) kept "
                                                  "between questions, least recently used documents dropped first; "
                                                  "a corpus-wide question loads only the documents its hits fall in")
    vector_documents: int = Field(64, description="documents' line-window vectors kept in memory for doc-scoped "
                                                  "search, least recently used dropped first")
    keyword_indexes: int = Field(64, description="doc-scoped BM25 indexes kept (one per document or scope searched)")


class LLMSettings(BaseModel):
    base_url: str | None = Field(None, description="OpenAI-compatible server URL (vLLM, Ollama, llama.cpp, LiteLLM); None = OpenAI")
    api_key: SecretStr | None = Field(None, description="API key; falls back to OPENAI_API_KEY; never stored or logged")
    model: str = Field("gpt-4o-mini", description="model name sent to the provider")
    timeout_s: float = Field(60.0, description="per-request timeout")
    max_attempts: int = Field(4, description="attempts per call for transient errors (429, 5xx, timeouts)")
    backoff_base_s: float = Field(0.5, description="first backoff; doubles per attempt, with jitter; Retry-After wins")
    backoff_max_s: float = Field(30.0, description="cap of one backoff sleep")
    max_in_flight: int = Field(8, description="concurrent LLM calls")
    requests_per_minute: int | None = Field(None, description="rate limit on requests (None = unlimited)")
    tokens_per_minute: int | None = Field(None, description="rate limit on input+output tokens (None = unlimited)")
    fallback: str | None = Field(None, description="provider to fall back to after a terminal failure, e.g. 'rules'")
    tokenizer: str = Field("o200k_base", description="bpe-openai encoding used to count prompts offline")
    token_limit_param: str = Field("max_completion_tokens", description="output cap parameter: 'max_completion_tokens' "
                                   "(OpenAI) or 'max_tokens' (older OpenAI-compatible servers)")
    temperature: float | None = Field(None, description="sampling temperature (None = server default)")
    structured_output: str = Field("json_schema", description="first structured-output mode tried: 'json_schema' "
                                   "(strict), 'json_object' or 'prompt' (schema in the system message); a server "
                                   "that rejects a mode moves the run to the next, recorded in llm_calls")
    output_bounds: bool | None = Field(None, description="send size bounds in the schema (verdicts = pool size, "
                                       "candidate ids as an enum, maxLength/maxItems); None = only to a non-OpenAI "
                                       "base_url (OpenAI's strict mode documents no maxLength)")
    bound_text_chars: int = Field(240, description="maxLength of every free-text field when output_bounds is on")
    bound_list_items: int = Field(8, description="maxItems of every other list when output_bounds is on")
    durable_log: bool = Field(True, description="each llm_calls row is on disk before the call returns (journaled "
                              "beside the warehouse, inserted in batches; a killed run's rows are inserted on the next "
                              "open). False: no journal, rows of a killed run's last ~0.1 s are lost")
    call_process: bool = Field(True, description="the openai SDK's calls run in a child process, beside this one's "
                               "interpreter lock (tasks/llm/call_process.py); logging, retries and validation stay "
                               "here. False: the calls run in this process")


class ArbiterSettings(BaseModel):
    provider: str = Field("rules", description="rules | openai | replay | learned")
    replay_run_id: str | None = Field(None, description="run whose llm_calls the replay provider serves (None = any run)")


class DispatchProfile(BaseModel):
    """Thresholds and caps of the verdict dispatcher (seed 001: 0.9 for finance, 0.5 for a chat bot)."""

    min_relevance: float = Field(0.6, ge=0, le=1, description="a primary verdict below this is dropped")
    min_supporting_relevance: float = Field(0.45, ge=0, le=1, description="a supporting verdict below this is dropped")
    max_primary: int = Field(3, ge=1, description="primary passages kept, best relevance first (the rest lead the "
                                                 "supporting)")
    max_supporting: int = Field(4, ge=0, description="supporting passages kept, best relevance first")
    guard_high: float = Field(0.8, ge=0, le=1, description="inflation guard: a relevance above this counts as high")
    guard_share: float = Field(0.3, ge=0, le=1, description="inflation guard fires when more than this share is high")
    guard_top_k: int = Field(3, ge=1, description="passages kept (by relevance) when the inflation guard fires")
    guard_min_pool: int = Field(5, ge=1, description="smallest pool the inflation guard judges")


DISPATCH_PROFILES: dict[str, DispatchProfile] = {
    "strict": DispatchProfile(min_relevance=0.9, min_supporting_relevance=0.65, max_primary=2, max_supporting=2,
                              guard_top_k=2),
    "balanced": DispatchProfile(),
    "lenient": DispatchProfile(min_relevance=0.5, min_supporting_relevance=0.3, max_primary=5, max_supporting=8,
                               guard_share=0.5, guard_top_k=5),
}


class DispatchSettings(BaseModel):
    """Overrides applied on top of the chosen profile (``dispatch_profile``); None keeps the profile's value."""

    min_relevance: float | None = Field(None, ge=0, le=1, description="override: lowest primary relevance kept")
    min_supporting_relevance: float | None = Field(None, ge=0, le=1,
                                                   description="override: lowest supporting relevance kept")
    max_primary: int | None = Field(None, ge=1, description="override: primary passages kept")
    max_supporting: int | None = Field(None, ge=0, description="override: supporting passages kept")
    guard_high: float | None = Field(None, ge=0, le=1, description="override: inflation guard's high relevance")
    guard_share: float | None = Field(None, ge=0, le=1, description="override: inflation guard's share of high scores")
    guard_top_k: int | None = Field(None, ge=1, description="override: passages kept when the guard fires")
    guard_min_pool: int | None = Field(None, ge=1, description="override: smallest pool the guard judges")

    def overrides(self) -> dict[str, float | int]:
        return {k: v for k, v in self.model_dump().items() if v is not None}


class GenerateSettings(BaseModel):
    provider: str = Field("extractive", description="extractive (offline) | openai | replay")
    regime: str = Field("auto", description="auto | batch | sequential | both")
    top_k: int = Field(5, description="candidates given to generation")
    close_call_margin: float = Field(0.05, description="top-2 relevance within this share -> batch")
    max_output_tokens: int = Field(400, description="output cap per generation call")
    seq_max_tokens: int = Field(12000, description="sequential budget: input tokens over all steps")
    seq_max_seconds: float = Field(120.0, description="sequential budget: wall seconds")
    # 0.65: an honest reader abstains on most passages, so sequential reads on to its budget; on the dev set (frozen
    # retrieval) 0.65 keeps every sequential right answer of 1.0 at 0.52 of batch's single-value input (0.6 loses one)
    seq_max_batch_share: float = Field(0.65, ge=0, description="sequential budget: at most this share of the input "
                                       "tokens of the batch prompt over the same passages (1.0: sequential never "
                                       "spends more input than batch would); 0: no such cap")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="ARBITER_", env_nested_delimiter="__", toml_file="arbiter.toml", extra="ignore"
    )

    home: Path = Field(Path(".arbiter"), description="warehouse home: warehouse.duckdb, lance/, reports/, models/")
    lance_uri: str | None = Field(None, description="line-window vectors: a folder or an object-store URI "
                                                    "(s3://, gs://, az://); unset = <home>/lance")
    lance_metadata_cache_mb: int = Field(64, ge=1, description="LanceDB's file-metadata cache, MB (its default, 1 GB, "
                                                               "filled as an ingest wrote a version a document)")
    lance_index_cache_mb: int = Field(256, ge=1, description="LanceDB's cache of opened indexes, MB (its default: 6 GB)")
    ingest: IngestSettings = IngestSettings()
    embedder: EmbedderSettings = EmbedderSettings()
    detect: DetectSettings = DetectSettings()
    llm: LLMSettings = LLMSettings()
    arbiter: ArbiterSettings = ArbiterSettings()
    dispatch_profile: str = Field("balanced", description="dispatcher threshold profile: strict | balanced | lenient")
    dispatch: DispatchSettings = DispatchSettings()
    generate: GenerateSettings = GenerateSettings()

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, dotenv_settings, file_secret_settings):
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        sources.append(TomlConfigSettingsSource(settings_cls))
        return tuple(sources)

    @property
    def duckdb_path(self) -> Path:
        return self.home / "warehouse.duckdb"

    @property
    def lance_dir(self) -> Path | str:
        """Where LanceDB keeps the vectors: ``lance_uri`` when set (an object-store URI stays a string)."""
        if self.lance_uri:
            return self.lance_uri if "://" in self.lance_uri else Path(self.lance_uri)
        return self.home / "lance"

    def vector_store_options(self) -> dict[str, int]:
        """The bounds of LanceDB's caches, as :class:`warehouse.vectors.VectorStore` takes them."""
        return {"metadata_cache_mb": self.lance_metadata_cache_mb, "index_cache_mb": self.lance_index_cache_mb}

    @property
    def reports_dir(self) -> Path:
        return self.home / "reports"

    @property
    def models_dir(self) -> Path:
        return self.home / "models"

    def api_key_value(self) -> str | None:
        if self.llm.api_key is not None:
            return self.llm.api_key.get_secret_value()
        return os.environ.get("OPENAI_API_KEY")


def get_settings(home: Path | str | None = None, **overrides) -> Settings:
    """Settings from the environment and ``arbiter.toml``; ``home`` (when given) and ``overrides`` win."""
    if home:
        overrides["home"] = Path(home)
    return Settings(**overrides)


def offline_environment() -> None:
    """Defaults that keep a run offline and quiet: no hub downloads, no telemetry."""
    for key, value in {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
        "TOKENIZERS_PARALLELISM": "false",
    }.items():
        os.environ.setdefault(key, value)


def settings_reference() -> list[tuple[str, str, str]]:
    """(environment variable, default, description) for every setting, nested groups flattened with ``__``."""
    rows: list[tuple[str, str, str]] = []

    def walk(model_cls: type[BaseModel], prefix: str) -> None:
        for name, field in model_cls.model_fields.items():
            ann = field.annotation
            if isinstance(ann, type) and issubclass(ann, BaseModel):
                walk(ann, f"{prefix}{name.upper()}__")
                continue
            default = field.default
            shown = "unset" if default is None else (default.get_secret_value() if isinstance(default, SecretStr)
                                                      else str(default))
            rows.append((f"{prefix}{name.upper()}", shown, field.description or ""))

    walk(Settings, "ARBITER_")
    return rows
