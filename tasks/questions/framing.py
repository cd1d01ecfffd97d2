"""A question's ask apart from its framing: role-play preambles, instructions about the response, answer-format
requests, and the definitions it gives ("FCF is defined as ...").

Only the ask says what the documents must hold. A role ("Assume that you are a public equities analyst covering
X") or an instruction ("Give a response by relying on the cash flow statement") is addressed to the reader, and a
term the question defines is computed from the document, not printed in it; none of them is evidence that an
answer is missing when the document lacks its words. Rules only, deterministic: the same text always splits the
same way, so a question rebuilt from a stored row (without these fields) splits as it did when it was parsed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_ABBREV = re.compile(r"\b(?:mr|mrs|ms|dr|no|vs|fig|inc|co|ltd|st|jr|sr|approx|e\.g|i\.e|u\.s|[a-z])\.$", re.I)


def sentences(text: str) -> list[str]:
    """``text`` cut at sentence ends ('.', '?', '!' before more text), abbreviations ('e.g.', 'U.S.') kept whole."""
    out, start = [], 0
    for m in re.finditer(r"[.?!](?=\s+\S)", text):
        if m.group() == "." and _ABBREV.search(text[start : m.end()]):
            continue
        out.append(text[start : m.end()].strip())
        start = m.end()
    out.append(text[start:].strip())
    merged: list[str] = []
    for s in out:
        if merged and not re.search(r"[A-Za-z0-9]", s):
            merged[-1] = f"{merged[-1]} {s}"  # a stray '?' after 'survey.' belongs to the sentence before
        elif s:
            merged.append(s)
    return merged


# A role given to the reader: 'Assume (that) you are ...', 'Imagine you are ...', 'You are a ...', 'Act as ...'.
_ROLE = re.compile(r"^\W*(?:(?:please\s+)?(?:assume|imagine|suppose|pretend|consider)(?:\s+that)?\s+you(?:'re|\s+are)\b"
                   r"|you(?:'re|\s+are)\s+(?:an?|the)\s|act(?:ing)?\s+as\s+(?:an?|the)\s)", re.I)
# An instruction about the response rather than a question about the document: it speaks of the answer, the
# response or the question itself, or of how to read the sources ('by relying on', 'using only').
_INSTRUCTION = re.compile(r"^\W*(?:please\s+)?(?:give|provide|write|answer|respond|reply|return|express|report|round"
                          r"|state|use|rely|base|refer|keep|show|present|format)\b[^?]*\b(?:response|answer|reply"
                          r"|question|relying|rely|only|format|rounded|decimal|in (?:usd|\$|[a-z]{3} )|millions?"
                          r"|billions?|thousands?)\b", re.I)
# A definition the question gives: 'X is defined as', 'Define X as', 'X =', 'Treat X as', 'Taking X as', 'X here
# means', 'Using Y as X'.
_DEFINITION = re.compile(r"\b(?:is|are)\s+(?:defined|calculated|computed|measured|taken)\s+as\b|^\W*define[sd]?\b"
                         r"|^[^=?]{1,60}?\s=\s|^\W*(?:treat|take|taking|using|use|consider|with)\b[^,?]{1,120}?\bas\b"
                         r"|\bhere\s+(?:means?|refers?\s+to)\b|\bdefined\s+as\b|\bmeans\b[^?]*\b(?:plus|minus|less"
                         r"|divided|times|over)\b|^[^?]{1,60}?\s(?:is|are|equals)\s[^?]*\b(?:divided\s+by|plus|minus"
                         r"|less|times|multiplied\s+by|over)\b", re.I)
# A leading clause that defines or instructs, before the question word: 'Taking FCF as ..., what was ...'.
_LEAD = re.compile(r"^(?P<lead>[^?]{8,}?),\s+(?P<ask>(?:what|how|which|who|when|where|why|by how|is|are|was|were|did"
                   r"|does|do|can|compute|calculate)\b.*)$", re.I | re.S)
# The term a definition defines: the words before its verb ('Operating margin is defined as', 'FCF =') or after
# the cue ('Define FCF as', 'Treat SG&A as', 'Taking FCF as').
_DEFINED_BEFORE = re.compile(r"^\W*(?P<term>[A-Za-z][\w&%/.\- ]{0,50}?)\s+(?:is|are)\s+(?:defined|calculated"
                             r"|computed|measured|taken)\s+as\b|^\W*(?P<eq>[A-Za-z][\w&%/.\- ]{0,50}?)\s*=\s"
                             r"|^\W*(?P<means>[A-Za-z][\w&%/.\- ]{0,50}?)\s+here\s+(?:means?|refers?\s+to)\b"
                             r"|^\W*(?P<is>[A-Za-z][\w&%/.\- ]{0,50}?)\s+(?:is|are|equals)\s", re.I)
_DEFINED_AFTER = re.compile(r"^\W*(?:define[sd]?|treat|take|taking|consider|with)\s+(?P<term>[A-Za-z][\w&%/.\- ]{0,50}?)"
                            r"\s+(?:as|to be)\b", re.I)
_USING_AS = re.compile(r"^\W*(?:using|use)\s+(?P<body>[^,?]+?)\s+as\s+(?:(?:the|an?|[\w.&-]+'s?)\s+)*"
                       r"(?P<term>[A-Za-z][\w&%/.\-]*(?:\s+[A-Za-z][\w&%/.\-]*){0,3}?)(?:\s+(?:line|item|measure|metric"
                       r"|figure|proxy))?\s*$", re.I)
# defined terms mentioned inside a definition: acronyms ('COGS', 'PP&E') and 'where X is ...'
_ACRONYM = re.compile(r"(?<![\w&])[A-Z][A-Z&.]*[A-Z](?![\w&])")
_WHERE = re.compile(r"\bwhere\s+(?P<term>[A-Za-z][\w&%/.\-]*(?:\s+[A-Za-z][\w&%/.\-]*){0,3}?)\s+(?:is|are)\b", re.I)


# the wording of a definition, not what it defines or reads ('is defined as', 'operating income plus ...'), and of
# an instruction, not the source it points to ('give a response ... by relying on the details shown in ...')
FORMULA_WORDS = frozenset("""defined define defines definition calculated computed measured taking take treat
    treating here means mean plus minus less divided times multiplied over equals equal annualised annualized
    response respond responses reply answer answers question questions relying rely relies details detail shown
    show information provided based using use only""".split())


def is_role(sentence: str) -> bool:
    """A sentence giving the reader a role ('Assume that you are an analyst covering X')."""
    return bool(_ROLE.search(sentence))


@dataclass
class Framing:
    """The ask (what the question asks of the documents), the framing (role, instructions, answer format), and
    the definitions it gives (term -> definition text)."""

    ask: str
    framing: list[str] = field(default_factory=list)
    definitions: dict[str, str] = field(default_factory=dict)


def frame_question(text: str) -> Framing:
    """Split ``text`` into its ask, framing and definitions. A sentence is framing when it gives the reader a role
    or an instruction about the response, a definition when it defines a term; a leading clause of the asking
    sentence may be either. The ask is what is left (never empty: the last sentence when all else is framing)."""
    text = " ".join(text.split())
    framing: list[str] = []
    definitions: dict[str, str] = {}
    ask: list[str] = []
    for s in sentences(text):
        lead = _LEAD.match(s)
        # only before the question itself ('Taking FCF as ..., what was ...?'), not inside a definition's own
        # 'where X is ...' clause
        if lead and ("?" in s or re.match(r"(?:compute|calculate)\b", lead.group("ask"), re.I)) and (_is_definition(lead.group("lead")) or _ROLE.search(lead.group("lead"))):
            _file(lead.group("lead"), framing, definitions)
            s = lead.group("ask")
        if "?" not in s and (_ROLE.search(s) or _INSTRUCTION.search(s) or _is_definition(s)):
            _file(s, framing, definitions)
        elif _ROLE.search(s) and "?" not in s.split(".")[0]:
            _file(s, framing, definitions)
        else:
            ask.append(s)
    if not ask:
        ask = [sentences(text)[-1]] if text else []
    return Framing(ask=" ".join(ask), framing=framing, definitions=definitions)


def _is_definition(s: str) -> bool:
    return bool(_DEFINITION.search(s))


def _file(s: str, framing: list[str], definitions: dict[str, str]) -> None:
    """File a framing sentence or clause: under the terms it defines when it is a definition, else as framing."""
    if not _is_definition(s):
        framing.append(s)
        return
    terms = defined_terms(s)
    if not terms:
        framing.append(s)
    for t in terms:
        definitions.setdefault(t, s)


def defined_terms(definition: str) -> list[str]:
    """The terms a definition defines: the head it names ('Operating margin', 'FCF', 'SG&A'), the acronyms it
    mentions ('COGS' in '365 * accounts payable / COGS') and any 'where X is' term, in order."""
    out: list[str] = []
    m = _DEFINED_BEFORE.match(definition) or _DEFINED_AFTER.match(definition) or _USING_AS.match(definition)
    if m:
        term = next(g for g in (m.groupdict().get(k) for k in ("term", "eq", "means", "is")) if g)
        out.append(_head(term))
    out += [w.group("term") for w in _WHERE.finditer(definition)]
    out += _ACRONYM.findall(definition)
    return list(dict.fromkeys(t.strip(" .") for t in out if t.strip(" .")))


def _head(term: str) -> str:
    """The defined term without a possessive owner or article ('Amazon's R&D' -> 'R&D', 'the DPO' -> 'DPO')."""
    term = re.sub(r"^(?:the|an?|its|their)\s+", "", term.strip(), flags=re.I)
    return re.sub(r"^.*?['’]s?\s+", "", term) if re.search(r"['’]s?\s", term) else term
