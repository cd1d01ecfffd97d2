"""Scoping a question over many documents by what they say they are: the issuer, period and type the question names
are read against each document's identity (``tasks.corpus.identity``), and the documents that match are searched
first, with the reason; the others stay searchable (a preference, never a filter: a wrong identity must not hide an
answer). A question that names two issuers or two periods (a comparison) gets one group of documents for each, so
that both are reached.

- Issuers: every word of a document's issuer name (legal words aside: 'Inc.', 'Corporation'), its trading symbol,
  or a word the corpus does not know that spells the name within a typo ('Nortwind').
- Periods: ``tasks.detect.periods`` (fiscal and calendar quarters, halves, nine months, year to date, end dates).
- Types: a filing's form or a document kind the question names ('10-Q', 'annual report', 'agreement').
- Recency: 'the latest / most recent' quarter or filing; compared with the earlier ones ('compared to the previous
  quarters'), the earlier filings are a second group, after it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date

from schemas.contracts import DocumentIdentity
from tasks.corpus.identity import describe, load_identity
from tasks.detect.periods import EXACT, SAME_YEAR, AskedPeriod, DocPeriod, asked_periods, period_match
from tasks.terms import nearest
from tasks.words import tokens
from warehouse import corpus
from warehouse.db import Warehouse

# the words of an organisation's name that every other organisation's name has too
_LEGAL_WORDS = """inc incorporated corp corporation company companies co ltd limited plc llc lp nv sa ag se gmbh
holdings holding group the com spa ab asa oyj kk and of""".split()
LEGAL = frozenset(t for w in _LEGAL_WORDS for t in tokens(w)) | frozenset(_LEGAL_WORDS)
_TICKER = re.compile(r"(?<![\w$])[A-Z]{2,5}(?![\w&])")
_CAPITALISED = re.compile(r"\b[A-Z][\w&.-]*")
# what a question calls a document (a filing's form or its kind): the type it asks for
_TYPE_CUES = (
    ("quarterly_report", re.compile(r"\b10-?Qs?\b|\bquarterly (?:reports?|filings?)\b", re.I)),
    ("annual_report", re.compile(r"\b10-?Ks?\b|\b20-?F\b|\bannual (?:reports?|filings?)\b", re.I)),
    ("current_report", re.compile(r"\b8-?Ks?\b", re.I)),
    ("half_year_report", re.compile(r"\b(?:half[- ]year(?:ly)?|interim) reports?\b", re.I)),
    ("contract", re.compile(r"\b(?:agreements?|contracts?|leases?)\b", re.I)),
)
_LATEST = re.compile(r"\b(?:latest|most recent|newest|last reported)\b", re.I)
# the question reaches back from the latest report: 'compared to the previous quarters', 'over time'
_ACROSS = re.compile(
    r"\b(?:previous|prior|preceding|earlier|past)\s+(?:\w+\s+)?(?:quarters|periods|years|filings|reports|ones)\b"
    r"|\bover time\b|\bacross (?:the )?(?:\w+ )?(?:quarters|periods|years|filings|reports)\b"
    r"|\breported (?:quarters|periods)\b|\beach (?:reported |reporting )?(?:period|quarter|year)\b"
    r"|\bquarter[- ]to[- ]quarter\b|\bhistorical (?:periods|quarters|rates)\b", re.I)
# a name's first word alone names it when the question capitalises it and it is this long (multi-word names)
FIRST_WORD_LETTERS = 5


@dataclass(frozen=True)
class DocFacts:
    """A document's identity as scoping reads it, built once per run."""

    doc_id: str
    identity: DocumentIdentity | None
    names: tuple[tuple[str, ...], ...]  # each issuer or party name as its distinctive tokens
    tickers: frozenset[str]
    period: DocPeriod | None
    doc_type: str | None
    ended: date | None  # the end of its period, else its date: what 'latest' orders by
    label: str

    @classmethod
    def of(cls, doc_id: str, identity: DocumentIdentity | None) -> DocFacts:
        names, tickers, kind, ended = [], frozenset(), None, None
        if identity is not None:
            for f in [identity.issuer, *identity.parties]:
                if f is not None:
                    toks = tuple(t for t in tokens(str(f.value)) if t not in LEGAL and len(t) > 1)
                    if toks:
                        names.append(toks)
            tickers = frozenset(str(t.value) for t in identity.tickers)
            kind = str(identity.doc_type.value) if identity.doc_type else None
            when = identity.period_end or identity.date
            ended = date.fromisoformat(str(when.value)) if when else None
        return cls(doc_id, identity, tuple(dict.fromkeys(names)), tickers, DocPeriod.of(identity), kind, ended,
                   describe(identity))


@dataclass
class Preference:
    """The documents a question names, searched first: ``groups`` (one per issuer and period the question names),
    each document's ``reasons``, and the ``rule`` line for the detector plan."""

    groups: list[list[str]]
    reasons: dict[str, str]
    rule: str
    group_of: dict[str, int] = field(default_factory=dict)

    @property
    def preferred(self) -> set[str]:
        return set(self.group_of)


@dataclass(frozen=True)
class _Issuer:
    key: tuple[str, ...]
    said: str  # how the question writes it
    how: str  # why it matches
    doc_ids: tuple[str, ...]


def named_issuers(text: str, docs: Sequence[DocFacts], known: Callable[[str], bool] = lambda t: False
                  ) -> list[_Issuer]:
    """The issuers (or parties) of ``docs`` that ``text`` names, in the order the question names them. ``known``:
    whether the searched documents have a word (a question word none of them has may be a typo of a name); asked
    only of a word that spells a name within a typo, so a question without one builds no vocabulary."""
    q_tokens = tokens(text)
    q_set = set(q_tokens)
    said_tickers = set(_TICKER.findall(text))
    capitalised = {t for w in _CAPITALISED.findall(text) for t in tokens(w)}
    loose = [t for t in dict.fromkeys(q_tokens) if t.isalpha() and len(t) >= 3]
    by_key: dict[tuple[str, ...], list[str]] = {}
    tickers_of: dict[tuple[str, ...], set[str]] = {}
    for d in docs:
        for key in d.names[:1] or ():  # the issuer (or first party) names the document's owner
            by_key.setdefault(key, []).append(d.doc_id)
            tickers_of.setdefault(key, set()).update(d.tickers)
        for key in d.names[1:]:
            by_key.setdefault(key, []).append(d.doc_id)
    found: list[tuple[int, _Issuer]] = []
    for key, ids in by_key.items():
        match: tuple[int, str, str] | None = None
        if all(t in q_set for t in key):
            match = (q_tokens.index(key[0]), key[0], "its name")
        elif tickers_of.get(key, set()) & said_tickers:
            t = sorted(tickers_of[key] & said_tickers)[0]
            match = (text.find(t), t, "its trading symbol")
        elif len(key) > 1 and key[0] in capitalised and len(key[0]) >= FIRST_WORD_LETTERS and key[0] in q_set:
            match = (q_tokens.index(key[0]), key[0], "the first word of its name")
        else:  # a word the corpus does not know that spells the name (its first word) within a typo
            typo = next((t for t in loose if t != key[0] and nearest(t, {key[0]}) == key[0]
                         and (len(key) == 1 or (t in capitalised and len(key[0]) >= FIRST_WORD_LETTERS))
                         and not known(t)), None)
            if typo is not None:
                match = (q_tokens.index(typo), typo, "its name within a typo")
        if match is not None:
            found.append((match[0], _Issuer(key, match[1], match[2], tuple(ids))))
    found.sort(key=lambda x: x[0])
    return [_Issuer(i.key, _surface(text, i.said), i.how, i.doc_ids) for _, i in found]


_WORD = re.compile(r"[\w&.'’-]+")


def _surface(text: str, token: str) -> str:
    """The question's own word for a matched token ('Northwind's' for 'northwind'); the token when none is found."""
    for m in _WORD.finditer(text):
        word = re.sub(r"['’]s$", "", m.group(0).strip(".-'’"))
        if token in tokens(word) or word == token:
            return word
    return token


def named_types(text: str) -> list[str]:
    return [kind for kind, cue in _TYPE_CUES if cue.search(text)]


@dataclass
class _Group:
    doc_ids: list[str]
    said: list[str]


def prefer_documents(text: str, docs: Sequence[DocFacts], known: Callable[[str], bool] = lambda t: False
                     ) -> Preference | None:
    """The documents ``text`` names (issuer, period, type, recency) among ``docs``, in groups, with reasons; None when
    the question names none of them, or names every document alike (nothing to prefer)."""
    if len(docs) < 2:
        return None
    by_id = {d.doc_id: d for d in docs}
    issuers = named_issuers(text, docs, known)
    periods = asked_periods(text)
    kinds = named_types(text)
    latest = bool(_LATEST.search(text)) and not periods
    across = bool(_ACROSS.search(text))
    if not (issuers or periods or kinds or latest):
        return None
    bases = [(f'issuer "{i.said}" ({i.how})', [by_id[d] for d in i.doc_ids]) for i in issuers]
    bases = bases or [("", list(docs))]
    groups: list[_Group] = []
    for said, base in bases:
        typed = [d for d in base if d.doc_type in kinds]
        if typed and len(typed) < len(base):
            base, said = typed, "; ".join(s for s in (said, f"type {', '.join(kinds)}") if s)
        before = len(groups)
        for p in periods:
            groups.extend(_by_period(p, base, said))
        if len(groups) == before and latest:
            ended = [d for d in base if d.ended is not None]
            if ended:
                last = max(d.ended for d in ended)
                newest = [d.doc_id for d in ended if d.ended == last]
                groups.append(_Group(newest, [s for s in (said, f"the latest period (ended {last.isoformat()})") if s]))
                earlier = [d.doc_id for d in base if d.doc_id not in newest]
                if across and earlier:  # a comparison with the earlier periods: they are the other side of it
                    groups.append(_Group(earlier, [s for s in (said, "the earlier periods it compares") if s]))
        if len(groups) == before and said:
            groups.append(_Group([d.doc_id for d in base], [said]))
    return _preference(groups, docs, issuers, periods)


def _by_period(p: AskedPeriod, base: list[DocFacts], said: str) -> list[_Group]:
    levels = {d.doc_id: period_match(p, d.period) for d in base}
    best = max(levels.values(), default=0)
    if best < SAME_YEAR:
        return []
    chosen = [d for d in base if levels[d.doc_id] == best]
    how = "reports it" if best == EXACT else "reports another part of that year"
    if p.ytd and best == SAME_YEAR:  # year to date: the last report of that year
        last = max((d.ended for d in chosen if d.ended), default=None)
        chosen = [d for d in chosen if d.ended == last] or chosen
        how = "is the last report of that year"
    return [_Group([d.doc_id for d in chosen], [s for s in (said, f'period "{p.describe()}" ({how})') if s])]


def _preference(groups: list[_Group], docs: Sequence[DocFacts], issuers, periods) -> Preference | None:
    by_id = {d.doc_id: d for d in docs}
    unique: list[_Group] = []
    for g in groups:
        if g.doc_ids and all(set(g.doc_ids) != set(u.doc_ids) for u in unique):
            unique.append(g)
    preferred = {d for g in unique for d in g.doc_ids}
    if not unique or len(preferred) == len(docs):
        return None
    reasons: dict[str, str] = {}
    group_of: dict[str, int] = {}
    for i, g in enumerate(unique):
        for d in g.doc_ids:
            group_of.setdefault(d, i)
            reasons.setdefault(d, f"the question names {' and '.join(g.said)}: {by_id[d].label}")
    named = [f'issuer "{i.said}"' for i in issuers] + [f'period "{p.describe()}"' for p in periods]
    rule = (f"scope: {len(preferred)} of {len(docs)} documents searched first, in {len(unique)} group(s)"
            + (f" ({', '.join(named)})" if named else "") + "; the others after them")
    return Preference(groups=[g.doc_ids for g in unique], reasons=reasons, rule=rule, group_of=group_of)


class Identities:
    """The documents' identities as scoping reads them (:class:`DocFacts`), loaded once per run from ``documents``
    (or handed in with :meth:`set`, for a cache without a warehouse), shared by threads."""

    def __init__(self, wh: Warehouse | None = None):
        self.wh = wh
        self._facts: dict[str, DocFacts] = {}
        self._loaded = wh is None
        self._lock = threading.Lock()

    def set(self, doc_id: str, identity: DocumentIdentity | None) -> None:
        with self._lock:
            self._facts[doc_id] = DocFacts.of(doc_id, identity)

    def facts(self, doc_ids: Sequence[str]) -> list[DocFacts]:
        with self._lock:
            if not self._loaded:
                for doc_id, stored in corpus.load_identities(self.wh).items():
                    self._facts.setdefault(doc_id, DocFacts.of(doc_id, load_identity(stored)))
                self._loaded = True
            return [self._facts.get(d) or DocFacts.of(d, None) for d in doc_ids]
