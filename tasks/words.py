"""Words, as every brick reads them: stopwords, stems, tokens. One module, imported by the question parser, the
detectors, the arbiter and the reader, so that they cannot drift apart; it imports nothing of the project.

Stopwords come in groups by what the words do. Each brick's list is a union of groups, built here with the reason
it takes or leaves each one, so that one word is never a stopword by accident in one brick and a term in another:

- :data:`FUNCTION_WORDS` (articles, pronouns, auxiliaries, conjunctions, wh-words): noise to every brick;
- :data:`RELATIONAL_WORDS` (order, place, quantity, negation, focus: 'before', 'between', 'not', 'only', 'more'):
  noise to a search, but they change what a sentence states, so the reader keeps them;
- :data:`SHOWING_VERBS` ('show', 'give', 'get') and :data:`TELLING_VERBS` ('describe', 'mention', 'state',
  'list'): how a question asks, not what about; the reader leaves 'state' and 'list' in (in a document they are
  nouns: 'which state', 'the price list');
- :data:`DOCUMENT_WORDS` ('document', 'report', 'page'): a question points at its document with them; the reader's
  sentences are all in that document, so they tell none apart;
- :data:`QUESTION_HEDGES` ('approximately', 'exactly', 'please', 'one'): a question's register, never a keyword.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


FUNCTION_WORDS = _words("""a about according am an and any are as at be been being but by can could did do does doing
each every for from had has have having he her here hers herself him himself his how i in into is it its itself me
might many may much must my myself of on or our ours ourselves shall she should some than that the their theirs them
themselves there these they this those to us was we were what whatever whats when where which whichever who whoever
whom whose why will with would you your yours""")
RELATIONAL_WORDS = _words("""above across after again against all also among amongst because before below between both
cannot down during either else ever except few further if just more most neither no nor not now off once only onto other
others out over own per same so such then through thus too toward towards under until up upon very versus via whether
while within without yet aren't didn't doesn't don't isn't wasn't weren't""")
ABBREVIATIONS = _words("e.g i.e eg ie etc vs")
SHOWING_VERBS = _words("show shows shown give gives given get gets")
TELLING_VERBS = _words("describe described mention mentioned state stated list listed tell done")
DOCUMENT_WORDS = _words("document paper report page pages following")
QUESTION_HEDGES = _words("""almost approximately exactly least let nearly one ought overall please regarding respectively
roughly""")

# Function and relational words the keyword index has always counted: they weigh only as a line's length, which
# BM25 normalises by (a question's keywords never hold them: the parser drops them), and dropping them moved the
# keyword detector's and the arbiter's page hit@1 on MMLongBench dev (0.487 -> 0.483, 0.535 -> 0.531; measured
# when the three lists became these groups)
INDEXED_ANYWAY = _words("""every many much whose herself himself myself ourselves themselves whatever whats whichever
whoever across cannot either else ever except neither now onto others thus toward towards versus yet give gives get
gets""")
# The detectors' stopwords (BM25 and the arbiter's term matching): every group but a question's hedges (the
# detectors only ever see the parser's keywords of a question, which never hold them, and a document's
# 'approximately' or 'overall' is its own) and the words it points at its document with, less INDEXED_ANYWAY; and
# 'e' and 'g', the pieces their tokenizer cuts 'e.g.' into.
SEARCH_STOPWORDS = (FUNCTION_WORDS | RELATIONAL_WORDS | ABBREVIATIONS | SHOWING_VERBS | TELLING_VERBS
                    | _words("e g")) - INDEXED_ANYWAY
# Question scaffolding on top of the detectors' stopwords: words that say how to answer, not what about.
SCAFFOLD = frozenset(
    """many much how yes one ones document report paper article page figure table section give write answer
    please format number value total""".split()
)

# Irregular English verb and plural forms that suffix stripping cannot reach ('paid' meets 'pay', 'children' meets
# 'child'). Only forms with one common reading: the forms of :data:`AMBIGUOUS_FORMS` are also a direction, a stem
# of 'founded', a diode, a currency, a flower and a noun, so :func:`stem` keeps them as written.
IRREGULAR = {"paid": "pay", "said": "say", "laid": "lay", "made": "make", "given": "give", "gave": "give",
             "held": "hold", "sold": "sell", "bought": "buy", "spent": "spend", "took": "take", "taken": "take",
             "kept": "keep", "brought": "bring", "lost": "lose", "grew": "grow", "grown": "grow", "risen": "rise",
             "fallen": "fall", "began": "begin", "begun": "begin", "met": "meet", "sent": "send", "built": "build",
             "chose": "choose", "chosen": "choose", "wrote": "write", "written": "write", "drove": "drive",
             "driven": "drive", "spoke": "speak", "spoken": "speak", "taught": "teach", "thought": "think",
             "sought": "seek", "caught": "catch", "children": "child", "people": "person", "women": "woman",
             "men": "man"}
# Irregular forms with a second, common reading. A reader of a sentence that answers a question may take them as
# the verb ('revenue rose' answers 'did revenue rise'); a search may not ('the left side', 'an LED').
AMBIGUOUS_FORMS = {"left": "leave", "found": "find", "led": "lead", "won": "win", "rose": "rise", "fell": "fall"}

_VOWEL = re.compile(r"[aeiouy]")


# a word's stem is a pure function of it and a corpus's vocabulary is small beside its tokens: every line, question
# and passage is stemmed word by word by detection, the arbiter and the reader, 445k calls for 256 questions
@lru_cache(maxsize=1 << 17)
def stem(token: str) -> str:
    """Light suffix stripping (plurals, -ing, -ed, final e) so 'encodings', 'encoded' and 'encode' meet; the
    irregular forms of :data:`IRREGULAR` first. A doubled final consonant before -ing or -ed is written once
    ('running' -> 'run'), but for l, s and z ('falling', 'passed', 'buzzed'); so 'cancelled' stems to 'cancell',
    which the reader's prefix match meets with 'cancel' (``tasks.generate.sentences.same``)."""
    if token in IRREGULAR:
        token = IRREGULAR[token]
    if len(token) <= 3 or not token.isalpha():
        return token
    if token.endswith("ies") and len(token) > 4:
        token = token[:-3] + "y"
    elif token.endswith("sses"):
        token = token[:-2]
    elif token.endswith("s") and not token.endswith(("ss", "us", "is")):
        token = token[:-1]
    for suffix in ("ing", "ed"):
        base = token[: -len(suffix)]
        if token.endswith(suffix) and len(base) >= 3 and _VOWEL.search(base):
            token = base[:-1] if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz" else base
            break
    if len(token) > 3 and token.endswith("e"):
        token = token[:-1]
    return token


# Numbers stay whole (thousands separators dropped, decimals and a trailing % kept); words are unicode letters+digits.
_TOKEN = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?%?|\d+(?:\.\d+)+%?|\d+%|[^\W_]+")


def tokenize(text: str) -> list[str]:
    """The detectors' tokens: lowercased, stemmed, without :data:`SEARCH_STOPWORDS`; numbers kept (``1,000`` ->
    ``1000``, ``3.5``, ``25%``)."""
    out = []
    for raw in _TOKEN.findall(text.lower()):
        if raw[0].isdigit():
            out.append(raw.replace(",", "") if "," in raw else raw)
        elif raw not in SEARCH_STOPWORDS and (len(raw) > 1 or raw.isdigit()):
            out.append(stem(raw))
    return out


def normalise(text: str) -> str:
    """NFKC (expands ligatures such as 'ﬁ') and lower case."""
    return unicodedata.normalize("NFKC", text).lower()


_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")


def tokens(text: str) -> list[str]:
    """:func:`tokenize` after NFKC and lower case, a possessive 's dropped first ("Calloway's" -> "calloway"): how
    the arbiter and the detectors both read "a keyword is on a line"."""
    return tokenize(_POSSESSIVE.sub("", normalise(text)))


def content_tokens(text: str) -> list[str]:
    """Tokens without question scaffolding ('how many', 'page', 'answer')."""
    return [t for t in tokens(text) if t not in SCAFFOLD]


# The reader's words: a sentence's words as written, compounds whole ('year-over-year', 'r&d', 'e.g').
WORD_TOKEN = re.compile(r"[a-z0-9]+(?:[.'’&-][a-z0-9]+)*")
