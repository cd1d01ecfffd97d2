"""Keywords of a question as the detectors read them (``rules-v1``): the primary keywords (quoted terms, reference
phrases, noun phrases, names, acronyms, numbers, content words) and their secondary variants (inflections,
synonyms, number spellings). Deterministic and offline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tasks.questions.lexicon import (
    AUX,
    GENERIC,
    IMPERATIVES,
    MONTHS,
    NO_INFLECTION,
    REF_NOUNS,
    STOPWORDS,
    SYNONYMS,
    WH,
    is_adverb,
    is_plural,
    normalise_text,
    question_core,
)

_QUOTE = re.compile(r"\"([^\"]{1,80})\"|(?<![\w])'([^'\"]{1,80}?)'(?![\w])")
_TOKEN = re.compile(r"\$?\d[\d,]*(?:\.\d+)?%?(?:-[A-Za-z0-9]+)*|[A-Za-z](?:[A-Za-z0-9&]|[.\-/](?=[A-Za-z0-9]))*\.?"
                    r"|[,;:?!()\"]")
_SELF_REF = re.compile(r"\b(?:(?:in|from|of|according to|based on|throughout) )?(?:this|these|the|our) (?:report|"
                       r"document|paper|article|guidebook|guide|manual|brochure|file|pdf|filing|slides?|presentation"
                       r"|text)s?\b(?!')", re.I)
_CAPS_RUN = re.compile(r"\b[A-Z]{2,}(?:\s+[A-Z]{2,})+\b")
_REF_LABEL = re.compile(r"[A-Z](?:-?\d+)?|[IVX]+")
_SILENT_E = re.compile(r"(?:[cgvuz]|[aeiou]s|[^aeo]at|[^aeiou](?:ar|ir|ur|ut|id|ud|in|um|bl|pl|tl|dl|gl|kl|fl|ns|rs"
                       r"|ps|rg|dg))$")
_YEAR = re.compile(r"^(1[89]|20)\d\d$")
_PUNCT = ",;:?!()\""


@dataclass(frozen=True)
class _Tok:
    text: str
    pos: int
    clause_start: bool

def _is_acronym(word: str, shouting: bool) -> bool:
    letters = [c for c in word if c.isalpha()]
    if not letters or not any(c.isupper() for c in letters):
        return False
    if any(c.isdigit() for c in word) or any(c.isupper() for c in letters[1:]) and any(c.islower() for c in letters):
        return True  # 10-Q, GPT-4, iPhone, ChatGPT
    if all(c.isupper() for c in letters) and len(letters) >= 2:
        return not shouting or len(letters) <= 3 or "&" in word or "." in word
    return False

@dataclass
class Keywords:
    primary: list[str]
    names: set[str]  # lowercased capitalised words / acronyms: no inflection variants
    modifiers: set[str]  # words seen only before a phrase head ('significant change'): no inflection variants


def keyword_parts(text: str) -> Keywords:
    core = _SELF_REF.sub(" , ", question_core(normalise_text(text)))
    core = _CAPS_RUN.sub(lambda m: " ".join(w.lower() if len(w) > 3 else w for w in m.group().split()), core)
    alpha = re.findall(r"[A-Za-z]{2,}", core)
    shouting = bool(alpha) and sum(w.isupper() for w in alpha) / len(alpha) > 0.5
    found: list[tuple[int, int, str]] = []  # (position, order, keyword)
    names: set[str] = set()
    heads: set[str] = set()
    modifiers: set[str] = set()

    def shape(word: str) -> str:
        return word if _is_acronym(word, shouting) else word.lower()

    def add(pos: int, kw: str) -> None:
        kw = kw.strip(" -/'")
        kw = kw if re.search(r"(?:^|\s)(?:[A-Za-z]\.)+$", kw) else kw.rstrip(".")
        if kw and kw.lower() not in STOPWORDS:
            found.append((pos, len(found), kw))

    for m in _QUOTE.finditer(core):
        if term := (m.group(1) or m.group(2)).strip():
            add(m.start(), " ".join(shape(w) for w in term.split()))
    core = _QUOTE.sub(lambda m: f' " {m.group(1) or m.group(2)} " ', core)
    toks = _tokens(re.sub(r"(?<=\w)'s?(?=\s|$)", " ;", core))
    run: list[_Tok] = []

    def flush() -> None:
        words = [shape(t.text) for t in run]
        if len(words) >= 2:
            modifiers.update(w.lower() for w in words[:-1])
            heads.add(words[-1].lower())
        # the whole phrase, then its sub-phrases ('total net sales' -> 'net sales'); long runs only as pairs
        sizes = range(len(words), 1, -1) if len(words) <= 4 else [2]
        for n in sizes:
            for i in range(len(words) - n + 1):
                add(run[i].pos, " ".join(words[i : i + n]))
        run.clear()

    for i, tok in enumerate(toks):
        t, low = tok.text, tok.text.lower()
        prev, nxt = (toks[i - 1].text if i else ""), (toks[i + 1].text if i + 1 < len(toks) else "")
        if (t in _PUNCT or low in STOPWORDS or low in GENERIC or low in AUX or low in WH or is_adverb(low)
                or (tok.clause_start and low in IMPERATIVES) or prev.lower() == "how"):  # 'how long', 'how often'
            flush()
            continue
        if t[0].isdigit() or t[0] == "$":  # numbers, years, percentages, '10-Q', '50-shot'
            flush()
            num = shape(t.lstrip("$").rstrip(","))
            if prev.lower() in REF_NOUNS or prev.lower() in MONTHS:
                add(toks[i - 1].pos, f"{prev.lower()} {num}")
                if not _YEAR.match(num):
                    continue
            if len(num.rstrip("%")) > 1 or num.endswith("%") or "." in num:
                add(tok.pos, num)
            continue
        if low in REF_NOUNS and (nxt[:1].isdigit() or _REF_LABEL.fullmatch(nxt)):  # 'figure 3', 'appendix C'
            flush()
            if not nxt[:1].isdigit():
                add(tok.pos, f"{low} {nxt}")
            continue
        if _REF_LABEL.fullmatch(t) and prev.lower() in REF_NOUNS:
            continue
        # past participles and -ing forms may open a phrase ('proposed system', 'operating expenses') but not
        # continue one after a head noun ('sales changed', 'factors contributing'); nor before a name
        if run and ((low.endswith("ed") and len(low) > 4 and not t[0].isupper())
                    or (low.endswith("ing") and is_plural(run[-1].text))):
            flush()
        if low.endswith("ed") and not t[0].isupper() and nxt[:1].isupper():
            add(tok.pos, low)
            continue
        run.append(tok)
        if len(low) > 1 or _is_acronym(t, shouting):
            add(tok.pos, shape(t))
            if t[0].isupper() and not tok.clause_start:
                names.add(low)
    flush()
    found.sort()
    return Keywords(list(dict.fromkeys(kw for _, _, kw in found)), names, modifiers - heads)


def _tokens(text: str) -> list[_Tok]:
    out, clause_start = [], True
    for m in _TOKEN.finditer(text):
        t = m.group()
        if t in _PUNCT:
            clause_start = True
            out.append(_Tok(t, m.start(), False))
            continue
        if t.endswith(".") and not re.fullmatch(r"(?:[A-Za-z]\.)+", t):
            t = t[:-1]  # a sentence period; keep U.S. and e.g.
        out.append(_Tok(t, m.start(), clause_start))
        clause_start = False
    return out


def extract_keywords(text: str) -> list[str]:
    """Primary keywords: quoted terms, reference phrases, noun phrases, names, acronyms, numbers, content words."""
    return keyword_parts(text).primary


def _plural(w: str) -> str:
    if w.endswith("y") and w[-2] not in "aeiou":
        return w[:-1] + "ies"
    return w + "es" if w.endswith(("s", "x", "z", "ch", "sh")) else w + "s"


def _base(stem: str) -> str:
    """Undo the spelling change of -ed/-ing: 'stopp' -> 'stop', 'chang' -> 'change', 'vot' -> 'vote'."""
    if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
        return stem[:-1]
    if _SILENT_E.search(stem) or re.fullmatch(r"[^aeiou]*[aeiou][^aeiouwxy]", stem):
        return stem + "e"
    return stem


def word_variants(word: str, number_only: bool = False) -> list[str]:
    """Light inflection variants of one word: plural/singular and, unless ``number_only``, -ing/-ed/-tion forms."""
    w = word.lower()
    if not w.isalpha() or len(w) < 3 or w in NO_INFLECTION or w.endswith(("ous", "ful", "less")) or is_adverb(w):
        return []
    if number_only and not is_plural(w):
        return [] if w.endswith(("ing", "ed")) else [_plural(w)]
    out: list[str] = []
    if w.endswith("ies") and len(w) > 4:
        out.append(w[:-3] + "y")
    elif w.endswith(("sses", "shes", "ches", "xes", "zes")):
        out.append(w[:-2])
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        out.append(w[:-1])
    elif w.endswith("ing") and len(w) > 5:
        out.append(_base(w[:-3]))
    elif w.endswith("ied") and len(w) > 4:
        out.append(w[:-3] + "y")
    elif w.endswith("ed") and len(w) > 4:
        out.append(_base(w[:-2]))
    elif w.endswith(("ization", "isation")):
        out.append(w[:-5] + "e")
    elif w.endswith("ation") and len(w) > 7:
        out.append(w[:-5] + "ate")
    elif w.endswith("duction"):
        out.append(w[:-6] + "uce")
    elif w.endswith("ction"):
        out.append(w[:-3])
    else:
        out.append(_plural(w))
        if w.endswith("ate") and len(w) > 6:
            out += [w[:-1] + "ion", w + "d", w[:-1] + "ing"]
        elif w.endswith(("ize", "ise")) and len(w) > 5:
            out += [w + "d", w[:-1] + "ation"]
    return [v for v in dict.fromkeys(out) if v != w and len(v) > 2]


def secondary_keywords(primary: list[str], names: set[str] | frozenset[str] = frozenset(),
                       modifiers: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """Variants of the primaries: inflections, synonyms, hyphen/space and number forms; never a primary itself."""
    taken = {p.lower() for p in primary}
    out: list[str] = []

    def add(v: str) -> None:
        if v and v.lower() not in taken:
            taken.add(v.lower())
            out.append(v)

    for kw in primary:
        low = kw.lower()
        words = low.split()
        fixed = low in names or low in modifiers or kw != low  # names, acronyms, modifiers: no inflection
        head_forms = [] if kw.split()[-1] != words[-1] or words[-1] in names else word_variants(words[-1], True)
        for form in (low, *(" ".join(words[:-1] + [v]) for v in head_forms)):
            for syn in SYNONYMS.get(form, ()):
                add(syn)
        if len(words) == 1 and not fixed:
            for v in word_variants(low):
                add(v)
        elif len(words) > 1:
            for v in head_forms:
                add(" ".join(kw.split()[:-1] + [v]))
            if len(words) == 2 and all(w.isalpha() for w in words):
                add("-".join(kw.split()))
        if "-" in low and not low[0].isdigit():
            add(kw.replace("-", " "))
            add(kw.replace("-", ""))
        if re.fullmatch(r"[\w-]*[A-Z0-9]s", kw):  # '10-Qs', 'KPIs' -> '10-Q', 'KPI'
            add(kw[:-1])
        if re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?%?", low):
            add(low.replace(",", ""))
        if low.endswith("%"):
            add(low[:-1] + " percent")
            add(low[:-1] + " per cent")
    return out
