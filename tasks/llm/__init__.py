"""Model calls: the one logging client, its providers (openai, replay; rules and extractive live with their
stages), token counting, rate limiting and the Batch API path. Nothing else calls an LLM SDK."""

from tasks.llm.base import (
    InvalidOutputError,
    LLMRequest,
    LLMResult,
    Provider,
    ProviderReply,
    TerminalLLMError,
    TransientLLMError,
)
from tasks.llm.client import LLMCallFailed, LLMClient, parse_reply
from tasks.llm.ratelimit import RateLimiter
from tasks.llm.tokens import count_messages, count_tokens

__all__ = [
    "InvalidOutputError",
    "LLMCallFailed",
    "LLMClient",
    "LLMRequest",
    "LLMResult",
    "Provider",
    "ProviderReply",
    "RateLimiter",
    "TerminalLLMError",
    "TransientLLMError",
    "count_messages",
    "count_tokens",
    "parse_reply",
]
