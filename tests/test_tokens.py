"""Offline token counting: known ids and counts, round trips, long inputs, chat framing."""

from __future__ import annotations

import random

import pytest

from tasks.llm.tokens import (
    CHUNK_CHARS,
    UnknownEncodingError,
    count_messages,
    count_tokens,
    get_encoding,
    split_for_counting,
)

WORDS = ("the quick brown fox jumps over lazy dogs; chiffre d'affaires consolidé 2023, выручка составила "
         "1 234,5 млн руб. (+12%)\n\nSection 4.2 — Risques\tliquidity ratio").split(" ")


def _text(n_words: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    seps = [" ", " ", " ", "  ", "\n", "\n\n", " \n "]
    return "".join(rng.choice(WORDS) + rng.choice(seps) for _ in range(n_words))


def test_known_token_ids_match_tiktoken():
    # Values published in the OpenAI cookbook ("How to count tokens with tiktoken").
    assert get_encoding("cl100k_base").encode_ordinary("tiktoken is great!") == [83, 1609, 5963, 374, 2294, 0]
    assert get_encoding("o200k_base").encode_ordinary("tiktoken is great!") == [83, 8251, 2488, 382, 2212, 0]
    assert get_encoding("cl100k_base").encode_ordinary("hello world") == [15339, 1917]
    assert count_tokens("hello world") == 2
    assert count_tokens("tiktoken is great!", "cl100k_base") == 6
    assert count_tokens("") == 0


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_round_trip_and_count_agree(encoding):
    enc = get_encoding(encoding)
    text = _text(500)
    ids = enc.encode_ordinary(text)
    assert enc.decode(ids) == text
    assert count_tokens(text, encoding) == len(ids)
    # every id decodes to a non-empty piece: the count is a count of real tokens
    assert all(enc.decode_single_token_bytes(i) for i in ids[:200])


def test_special_token_text_is_counted_as_plain_text():
    assert count_tokens("<|endoftext|>") > 1


def test_encoding_object_is_cached():
    assert get_encoding("o200k_base") is get_encoding("o200k_base")


def test_unknown_encoding_says_what_to_set():
    with pytest.raises(UnknownEncodingError, match="ARBITER_LLM__TOKENIZER"):
        count_tokens("x", "no_such_encoding")


def test_split_keeps_every_character_and_cuts_before_whitespace():
    text = _text(3000)
    pieces = list(split_for_counting(text, max_chars=1000))
    assert "".join(pieces) == text
    assert len(pieces) > 10
    assert all(len(p) <= 1000 for p in pieces)
    assert all(p[0] in " \t" for p in pieces[1:])  # each cut sits before a space...
    assert all(not p[-1].isspace() for p in pieces[:-1])  # ...that follows a non-space


def test_chunked_count_equals_whole_count():
    text = _text(40_000)  # ~300k characters: over CHUNK_CHARS, under bpe_openai's 1M-character limit
    assert len(text) > CHUNK_CHARS
    whole = len(get_encoding("o200k_base").encode_ordinary(text))
    assert count_tokens(text) == whole
    assert sum(count_tokens(p) for p in split_for_counting(text, max_chars=5000)) == whole


def test_very_long_input_is_counted_not_refused():
    text = _text(400_000, seed=3)  # ~3M characters: bpe_openai alone refuses this
    assert len(text) > 1_000_000
    with pytest.raises(ValueError):
        get_encoding("o200k_base").encode_ordinary(text)
    n = count_tokens(text)
    per_piece = sum(len(get_encoding("o200k_base").encode_ordinary(p)) for p in split_for_counting(text, 500_000))
    assert n == per_piece
    assert 500_000 < n < 3_000_000


def test_text_without_whitespace_is_cut_hard():
    text = "x" * 250_001
    pieces = list(split_for_counting(text))
    assert [len(p) for p in pieces] == [CHUNK_CHARS, CHUNK_CHARS, 50_001]
    assert count_tokens(text) > 0


def test_count_messages_uses_chat_framing():
    messages = [{"role": "system", "content": "Answer in JSON."}, {"role": "user", "content": "hello world"}]
    expected = 3 + sum(3 + count_tokens(m["role"]) + count_tokens(m["content"]) for m in messages)
    assert count_messages(messages) == expected
    assert count_messages([{"role": "user", "content": "hello world", "name": "bob"}]) == 3 + 3 + 1 + 2 + 1 + 1
