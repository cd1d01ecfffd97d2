"""Offline token counting with ``bpe_openai`` (o200k_base / cl100k_base bundled; ids identical to tiktoken's).

Used when a provider reports no usage (rules, extractive, some OpenAI-compatible servers) and to reserve
tokens in the rate limiter. ``bpe_openai`` refuses very long inputs (>= 1M characters, > 200k tokens), so long
text is cut on whitespace boundaries into bounded pieces whose counts are summed.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping

import bpe_openai

# Characters per piece: well under bpe_openai's 1M-character and 200k-token limits (a token is >= 1 character).
CHUNK_CHARS = 100_000

# OpenAI cookbook accounting for chat models (gpt-4o family): each message is framed by 3 tokens, a `name`
# adds 1, and every reply is primed with 3 (<|start|>assistant<|message|>).
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
TOKENS_REPLY_PRIMING = 3


class UnknownEncodingError(ValueError):
    """The tokenizer setting names an encoding bpe_openai does not bundle."""


@functools.lru_cache(maxsize=8)
def get_encoding(name: str = "o200k_base") -> bpe_openai.Encoding:
    """The encoding object, built once per name (building one takes ~0.3 s)."""
    available = bpe_openai.list_encoding_names()
    if name not in available:
        raise UnknownEncodingError(
            f"unknown tokenizer encoding {name!r}; set ARBITER_LLM__TOKENIZER to one of {', '.join(available)}"
        )
    return bpe_openai.get_encoding(name)


def split_for_counting(text: str, max_chars: int = CHUNK_CHARS) -> Iterator[str]:
    """Cut ``text`` into pieces of at most ``max_chars``, each cut placed before a whitespace run that starts
    with a space or tab after a non-space character.

    No pre-tokenizer pattern carries a token across such a space (punctuation absorbs only following newlines,
    words and numbers stop at it), and the run moves whole to the next piece, so the summed count equals the
    count of the whole text. Only a window with no such space is cut hard (a seam may then differ by a token).
    """
    start, n = 0, len(text)
    while n - start > max_chars:
        cut = start + max_chars
        i = cut
        while i > start and not (text[i] in " \t" and not text[i - 1].isspace()):
            i -= 1
        if i > start:
            cut = i
        yield text[start:cut]
        start = cut
    if start < n or n == 0:
        yield text[start:]


def count_tokens(text: str, encoding: str = "o200k_base") -> int:
    """Number of tokens of ``text`` (special-token strings such as ``<|endoftext|>`` count as plain text)."""
    if not text:
        return 0
    enc = get_encoding(encoding)
    if len(text) <= CHUNK_CHARS:
        return len(enc.encode_ordinary(text))
    return sum(len(enc.encode_ordinary(piece)) for piece in split_for_counting(text))


def count_messages(messages: Iterable[Mapping[str, str]], encoding: str = "o200k_base") -> int:
    """Prompt tokens of a chat request, by the OpenAI cookbook's per-message framing (an estimate, ±few)."""
    total = TOKENS_REPLY_PRIMING
    for message in messages:
        total += TOKENS_PER_MESSAGE
        for key, value in message.items():
            total += count_tokens(str(value), encoding)
            if key == "name":
                total += TOKENS_PER_NAME
    return total
