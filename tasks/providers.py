"""Provider choice by name, in one place: the arbiter's and the generator's (all behind ``LLMClient``)."""

from __future__ import annotations

import threading

from schemas.settings import Settings
from tasks.arbiter.rules import RulesArbiterProvider
from tasks.generate.extractive import ExtractiveProvider
from tasks.llm.base import Provider
from tasks.llm.client import LLMClient
from tasks.llm.replay import ReplayProvider
from warehouse.db import Warehouse

ARBITER_PROVIDERS = ("rules", "openai", "replay", "learned")
GENERATOR_PROVIDERS = ("extractive", "openai", "replay")
REMOTE_PROVIDERS = ("openai",)  # a call over the network: it costs money and time, keep each one's result at once


def calls_remote(settings: Settings) -> bool:
    """Whether a run with these settings calls a model over the network (arbiter, generator or their fallback)."""
    return any(p in REMOTE_PROVIDERS for p in (settings.arbiter.provider, settings.generate.provider,
                                               settings.llm.fallback))


def _openai(settings: Settings) -> Provider:
    # lazy: the openai SDK (and httpx) load only for runs that call a model, not for every offline run
    from tasks.llm.call_process import ChildCallProvider  # the same: it subclasses the SDK's provider
    from tasks.llm.openai_provider import OpenAIProvider  # lazy, as above

    kind = ChildCallProvider if settings.llm.call_process else OpenAIProvider
    return kind(settings.llm, token_limit_param=settings.llm.token_limit_param, temperature=settings.llm.temperature)


def _replay(settings: Settings, wh: Warehouse) -> Provider:
    return ReplayProvider(wh, run_id=settings.arbiter.replay_run_id)


def use_arbiter(settings: Settings, name: str | None) -> Settings:
    """``settings`` with the arbiter provider ``name`` (None: as configured); an unknown name is refused here,
    before any run is started for it."""
    if name is not None:
        if name not in ARBITER_PROVIDERS:
            raise ValueError(f"unknown arbiter provider {name!r}; choose one of {', '.join(ARBITER_PROVIDERS)}")
        settings.arbiter.provider = name
    return settings


def arbiter_provider(name: str, settings: Settings, wh: Warehouse) -> Provider:
    if name == "rules":
        return RulesArbiterProvider()
    if name == "openai":
        return _openai(settings)
    if name == "replay":
        return _replay(settings, wh)
    if name == "learned":
        # lazy: scikit-learn loads only for the learned arbiter
        from tasks.arbiter.learned import LearnedArbiterProvider

        return LearnedArbiterProvider.load(settings.models_dir)
    raise ValueError(f"unknown arbiter provider {name!r}; choose one of {', '.join(ARBITER_PROVIDERS)}")


def generator_provider(name: str, settings: Settings, wh: Warehouse) -> Provider:
    if name == "extractive":
        return ExtractiveProvider()
    if name == "openai":
        return _openai(settings)
    if name == "replay":
        return _replay(settings, wh)
    raise ValueError(f"unknown generator provider {name!r}; choose one of {', '.join(GENERATOR_PROVIDERS)}")


def fallback_provider(settings: Settings, wh: Warehouse, stage: str) -> Provider | None:
    """``ARBITER_LLM__FALLBACK``: e.g. 'rules' for the arbiter; generation falls back to 'extractive'."""
    name = settings.llm.fallback
    if not name:
        return None
    if stage == "arbiter":
        return arbiter_provider(name, settings, wh)
    return generator_provider("extractive" if name == "rules" else name, settings, wh)


def make_clients(settings: Settings, wh: Warehouse, run_id: str) -> tuple[LLMClient, LLMClient]:
    slots = threading.BoundedSemaphore(settings.llm.max_in_flight)  # MAX_IN_FLIGHT is the run's, both stages'
    arb = LLMClient(arbiter_provider(settings.arbiter.provider, settings, wh), wh, run_id, settings.llm,
                    fallback=fallback_provider(settings, wh, "arbiter"), durable_log=settings.llm.durable_log,
                    slots=slots)
    gen = LLMClient(generator_provider(settings.generate.provider, settings, wh), wh, run_id, settings.llm,
                    fallback=fallback_provider(settings, wh, "generate"), durable_log=settings.llm.durable_log,
                    slots=slots)
    return arb, gen
