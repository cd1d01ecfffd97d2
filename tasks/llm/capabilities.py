"""What an OpenAI-compatible server accepts, learned from its answers instead of assumed (issue #18).

Servers differ: llama.cpp's llama-server and vLLM take ``response_format`` json_schema, some take only
``json_object``, some neither; OpenAI's newer models want ``max_completion_tokens``, older servers ``max_tokens``.
The provider starts from the configured :class:`Capabilities` and, when a server rejects a feature with HTTP 400,
moves to the next one (:func:`capability_change`): json_schema -> json_object -> the schema in the prompt; the
other token-limit parameter; no schema bounds. The replies are always validated against the pydantic contract by
the client, whatever the mode. A change is logged, written on the ``llm_calls`` row of the call that made it, and
kept for the rest of the run (every row records the mode it was sent with).

Bounds (:func:`size_bounds`, :func:`pool_bounds`) make a looping model end its call: the arbiter's ``verdicts`` array exactly the
pool's size, candidate ids an enum of the pool's ids, ``maxLength`` on free text and ``maxItems`` on other lists.
They are sent only where they are known to be accepted (a non-OpenAI ``base_url``, or the ``output_bounds``
setting): OpenAI's strict mode documents a subset of JSON Schema, and a keyword outside it is a 400 there.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlparse

MODES = ("json_schema", "json_object", "prompt")
TOKEN_PARAMS = ("max_completion_tokens", "max_tokens")


@dataclass(frozen=True)
class Capabilities:
    mode: str = "json_schema"
    token_param: str = "max_completion_tokens"
    bounds: bool = False

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"structured output mode {self.mode!r}: choose one of {', '.join(MODES)}")
        if self.token_param not in TOKEN_PARAMS:
            raise ValueError(f"token limit parameter {self.token_param!r}: choose one of {', '.join(TOKEN_PARAMS)}")


def is_openai(base_url: str | None) -> bool:
    """True for the OpenAI API itself (no base_url, or an *.openai.com host)."""
    if base_url is None:
        return True
    host = (urlparse(base_url).hostname or "").lower()
    return host == "openai.com" or host.endswith(".openai.com")


_BOUND_WORDS = ("minitems", "maxitems", "maxlength", "enum")
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "schema", "grammar")


def capability_change(message: str, sent: Capabilities, *, formats: bool = True) -> tuple[Capabilities, str] | None:
    """The capabilities to retry with after a 400 whose text is ``message``, and what was rejected; None when
    the rejection names no feature we can do without (then it is a real error). ``formats=False`` (the OpenAI
    API, which documents json_schema): a rejected schema is our bug, reported, not papered over by json_object."""
    text = message.lower()
    if "max_completion_tokens" in text:
        other = "max_tokens" if sent.token_param == "max_completion_tokens" else "max_completion_tokens"
        return replace(sent, token_param=other), f"{sent.token_param} rejected; using {other}"
    if "max_tokens" in text and sent.token_param == "max_tokens":
        return replace(sent, token_param="max_completion_tokens"), "max_tokens rejected; using max_completion_tokens"
    if sent.bounds and any(word in text for word in _BOUND_WORDS):
        return replace(sent, bounds=False), "schema bounds rejected; sending the schema without them"
    if formats and sent.mode != "prompt" and any(word in text for word in _FORMAT_WORDS):
        nxt = MODES[MODES.index(sent.mode) + 1]
        return replace(sent, mode=nxt), f"response_format {sent.mode} rejected; using {nxt}"
    return None


def schema_instruction(schema: dict[str, Any]) -> str:
    """Appended to the system message when the server does not enforce the schema itself."""
    return ("\n\nReply with one JSON object and nothing else (no prose, no code fence). It must validate against "
            f"this JSON schema:\n{json.dumps(schema, separators=(',', ':'))}")


def _is_text(node: dict[str, Any]) -> bool:
    return node.get("type") == "string" and not {"enum", "const", "pattern", "format"} & node.keys()


def size_bounds(schema: dict[str, Any], *, text_chars: int, list_items: int) -> dict[str, Any]:
    """A copy of ``schema`` (strict, refs inlined) with ``maxLength`` on free text and ``maxItems`` on lists; the
    part of the bounds that is the same for every request of a model (a provider keeps it, see
    :func:`bounded_schema`)."""
    out = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
            return
        if not isinstance(node, dict):
            return
        if node.get("type") == "array":
            node.setdefault("maxItems", list_items)
        elif _is_text(node):
            node.setdefault("maxLength", text_chars)
        for key, value in node.items():
            if key == "properties":
                for sub in value.values():
                    walk(sub)
            elif key in ("items", "anyOf"):
                walk(value)

    walk(out)
    return out


def pool_bounds(bounded: dict[str, Any], ids: list[str]) -> dict[str, Any]:
    """``bounded`` (from :func:`size_bounds`) with an arbiter pool's bounds: the ``verdicts`` array exactly
    ``len(ids)`` long and every ``candidate_id`` an enum of ``ids``. Only the nodes on the way to those two are
    copied (a deep copy of the whole schema per call was a millisecond of a question's CPU); the rest is shared
    with ``bounded``, which is never changed."""
    if not ids:
        return bounded

    def walk(node: Any, name: str | None) -> Any:
        if isinstance(node, list):
            items = [walk(item, name) for item in node]
            return items if any(a is not b for a, b in zip(items, node)) else node
        if not isinstance(node, dict):
            return node
        changed: dict[str, Any] = {}
        if node.get("type") == "array" and name == "verdicts":
            changed["minItems"] = changed["maxItems"] = len(ids)
        elif name == "candidate_id" and node.get("type") == "string":  # an enum needs no length bound
            node = {k: v for k, v in node.items() if k != "maxLength"}
            changed["enum"] = list(ids)
        for key, value in node.items():
            if key == "properties":
                props = {prop: walk(sub, prop) for prop, sub in value.items()}
                if any(props[k] is not value[k] for k in value):
                    changed[key] = props
            elif key in ("items", "anyOf"):
                sub = walk(value, name)
                if sub is not value:
                    changed[key] = sub
        return {**node, **changed} if changed else node

    return walk(bounded, None)


def pool_ids(payload: dict[str, Any]) -> list[str]:
    """The candidate ids of an arbiter request's pool (``payload['candidates']``); none for other requests."""
    return [c["candidate_id"] for c in payload.get("candidates") or [] if isinstance(c, dict) and "candidate_id" in c]
