"""Offline, deterministic question parser (``rules-v1``): keywords, answer shape, decomposition, intent.

Rules only (no model, no download): detectors read the keywords and the generation router reads shape and
decomposition, so the same text must always give the same :class:`ParsedQuestion`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from schemas.contracts import ParsedQuestion
from tasks.questions.framing import frame_question, sentences

PARSER_NAME = "rules-v1"
INTENTS = ("lookup_amount", "count", "lookup_date", "yes_no", "lookup_entity", "enumerate", "compare", "relate",
           "summarize", "explain", "locate")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS = _words("""a about above across after again against all also am among amongst an and any are aren't as at
be because been before being below between both but by can cannot could did didn't do does doesn't doing don't down
during each either else etc ever every few for from further had has have having he her here hers herself him himself
his i if in into is isn't it its itself just let me might more most much must my myself neither no nor not now of off
on once one only onto or other others ought our ours ourselves out over own per please same shall she should so some
such than that the their theirs them themselves then there these they this those through thus to too toward towards
under until up upon us very via was wasn't we were weren't whether while will with within without would yet you your
yours what whats which who whom whose when where why how many whatever whichever whoever according regarding
respectively overall e.g i.e ie eg vs versus except exactly approximately nearly almost roughly least""")
# generic verbs: never keywords, and they end a phrase
GENERIC = _words("""mention mentioned mentions show shown shows showing give given gives provide provided provides
include included includes including contain contained contains containing appear appears appeared describe described
discuss discussed list listed present presented report reported reports disclosed disclose state stated say said see
seen make made get got go goes use used using based find found tell write written answer answers question questions
take takes took stand stands need needs needed require requires allow allows happen happens become becomes seem seems
want wants put puts come comes compare compares compared comparing relate relates related affect affects affected""")
# imperative openers ("List all ...", "Summarize the ..."): dropped when they start a clause
IMPERATIVES = _words("""list name enumerate describe explain summarize summarise outline give provide write identify
state tell show find compare analyze analyse examine assess evaluate discuss align combine correlate calculate compute
determine count please""")
AUX = _words("""is are was were do does did can could has have had will would should shall may might must isn't aren't
wasn't weren't doesn't don't didn't hasn't haven't can't won't""")
WH = _words("what which who whom whose when where why how")
LEAD_CLAUSE = _words("""in for from according among amongst based as during given using within on at by of with after
before since if compared considering regarding excluding including except besides across under over between""")
REF_NOUNS = _words("""figure fig table page pages section chapter appendix unit part step item exhibit note article
clause schedule annex slide quarter q equation eq""")
MONTHS = _words("""january february march april may june july august september october november december jan feb mar
apr jun jul aug sep sept oct nov dec""")
DATE_NOUNS = _words("date dates day days month months year years deadline time period quarter")
QUANTITY_NOUNS = _words("""number amount amounts percentage percent proportion share fraction ratio rate rates sum total
count value values gap average mean median size cost costs price prices fee fees premium premiums revenue revenues
sales income margin margins profit profits loss losses earnings expense expenses expenditure expenditures spending
budget capacity population score scores accuracy performance height weight length width distance area volume speed
voltage frequency power duration temperature age salary salaries dividend dividends balance growth decline cash
increase decrease f1 precision recall maximum minimum hours minutes weeks miles km kg
deductible deductibles allowance allowances charge charges rent wage wages stipend reimbursement compensation
tuition penalty fine""")
MASS_PLURALS = _words("""sales earnings expenses revenues costs proceeds savings profits losses assets liabilities
receivables payables borrowings""")
ENTITY_NOUNS = _words("""company firm name person organisation organization country city state region model method
dataset product brand author title party team department agency bank auditor university location place vendor
supplier customer segment color colour type kind term word symbol icon logo""")
IDENTIFIER_NOUNS = _words("number no id code identifier")
# words that get no plural/singular variant (determiners-like adjectives, uncountables, -ly adverbs are handled apart)
NO_INFLECTION = _words("""last first second third fourth next previous prior entire top total exact distinct specific
certain several various main key major minor net gross new old recent latest current highest lowest largest smallest
best worst greater higher lower larger smaller bigger better worse fewer earlier later people criteria data news
series species means analysis basis crisis thesis""")
LY_NOUNS = _words("family supply assembly monopoly anomaly quarterly monthly yearly weekly daily early italy ally "
                   "rally")

# A small general-purpose synonym map for business and technical documents (members of a group are equivalent).
SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("revenue", "sales", "net sales", "turnover", "net revenue"), ("price", "premium", "cost", "pricing"),
    ("fee", "charge", "commission"), ("employee", "staff", "personnel", "workforce", "headcount"),
    ("terminate", "cancel", "termination", "cancellation"), ("profit", "income", "earnings", "net income"),
    ("percentage", "percent", "per cent", "%"), ("expense", "expenditure", "spending", "outlay"),
    ("operating expenses", "opex", "operating costs"), ("capital expenditure", "capex"),
    ("r&d", "research and development"), ("share repurchase", "stock repurchase", "buyback", "share buyback"),
    ("acquisition", "takeover", "merger"), ("divestiture", "divestment", "disposal", "spin-off"),
    ("customer", "client"), ("company", "corporation", "firm"), ("debt", "borrowings", "indebtedness"),
    ("foreign exchange", "currency", "exchange rate", "fx"), ("shareholder", "stockholder"), ("dividend", "payout"),
    ("lawsuit", "litigation", "legal proceedings"), ("gross margin", "gross profit"),
    ("salary", "compensation", "remuneration", "wages", "pay"), ("contract", "agreement"),
    ("increase", "rise", "growth"), ("decrease", "decline", "reduction", "drop"),
    ("quarter", "three months ended", "quarterly"), ("annual", "yearly", "fiscal year"),
    ("total", "sum", "aggregate"), ("figure", "chart", "graph", "diagram"), ("chapter", "section"),
    ("appendix", "annex"), ("deadline", "due date"), ("begin", "start", "commence"), ("buy", "purchase"),
    ("q1", "first quarter"), ("q2", "second quarter"), ("q3", "third quarter"), ("q4", "fourth quarter"),
)
SYNONYMS: dict[str, tuple[str, ...]] = {}
for _group in SYNONYM_GROUPS:
    for _term in _group:
        SYNONYMS[_term] = tuple(dict.fromkeys(SYNONYMS.get(_term, ()) + _group))

_LIST_HINT = re.compile(r"\b(in|as) (a |the )?list\b|\blist format\b|\bformatted as a list\b|\bin list form\b"
                        r"|^\W*(list|enumerate)\b|\b(list|enumerate|name) (all|each|every)\b|\brespectively\b")
_AMOUNT_HINT = re.compile(r"\b(int|integer|float|decimal|numeric|number) format\b|\bgive me an? (integer|number)\b"
                          r"|\bin (an )?(integer|float)\b|\bwith (one|two|three|\d) decimals?\b|\bdecimal places?\b"
                          r"|\bpercentage value\b|\bround(ed)? (to )?(an |the )?(integer|number)\b|\brounded integer\b")
_FORMAT_CLAUSE = re.compile(r"\[[^\]]*\]|\(?\b(e\.g\.|for example|for instance)[^)]*\)?[.?]?"
                            r"|,?\s*\b(in|with|by) (ascending|descending|alphabetical)( alphabetical)? order\b"
                            r"|,?\s*\bwith (one|two|three|\d) decimal places?\b", re.I)
_FORMAT_SENTENCE = re.compile(r"\bformat(ted)?\b|\bwrite (down )?(the|your) answer\b|\bthe answer (should|shall|must)\b"
                              r"|\bgive me an?\b|\breturn me\b|\b(in|as) a list\b|\bdecimal places?\b|\balphabetical\b"
                              r"|\b(ascending|descending) order\b|\brepresent these\b", re.I)
_CHANGE = r"(chang|evolv|fluctuat|vari|vary|shift|trend|develop|grow|grew|declin|increas|decreas|transform|move|adapt)"
_COMPARE = re.compile(
    r"\bcompar(e|es|ed|ing|ison|isons)\b|\bdifferences? (between|in)\b|\bdiffer(s|ed)? (from|between|across)\b"
    r"|\b(vs\.?|versus)\s|\b(higher|lower|better|worse|greater|smaller|larger|bigger|more|less|fewer) or\b"
    r"|\b(higher|lower|better|worse|greater|smaller|larger|bigger|more|less|fewer) than "
    r"(?!(?:one|a|an|once|twice)\b|\d)"
    r"|\brelative to\b|\b(stack|stacks|measure|measured) up against\b|\bover time\b|\btrend(s|ed|ing)?\b"
    r"|\b(year|quarter|month|period)[- ](over|to|on)[- ](year|quarter|month|period)\b"
    rf"|\bhow (has|have|did|does|do|had) \S+(?: \S+){{0,10}}? {_CHANGE}\w*"
    r"|\b(change|changed|changes|evolved|evolution|fluctuated|varied|shifted|transformed|shift|movements?) "
    r"(over|across|between|throughout|from period)\b"
    r"|\b(across|over|throughout|between) (the |these |all |those |its |different |various )?(reported |reporting "
    r"|past |last |previous |prior )?(\w+ )?(quarters|periods|years|months|timeframe|filings|reports)\b"
    r"|\bthroughout the (reporting|reported) (period|timeframe)\b"
    r"|\bfor each (reported |reporting )?(period|quarter|year)\b"
    r"|\bper (reported |reporting )?(period|quarter)\b|\bprevious (quarters|periods|years)\b")
_RELATE = re.compile(r"\b(relate|relates|related|correlat\w*|connect|connects|align|aligns|aligned|corresponds?|reflect"
                     r"|reflects|tie|ties) (to|with|between)\b|\b(correlation|connection|relationship|link|interplay)s?"
                     r"\b[^?]*\bbetween\b|(^|[,;:]\s*)(combine|correlate|align|relate|connect|link)\b")
# several periods or documents in scope ("in these 10-Qs", "during the reported quarters")
_MULTI_SCOPE = re.compile(r"\b(in|across|during|over|from|throughout) (these|those|the reported|all the|the last \w+"
                          r"|the past \w+) (\w+ )?(quarters|periods|years|months|reports|filings|10-qs|documents"
                          r"|statements)\b")
_MULTI = re.compile(r"\?\s*[^?]*[a-z][^?]*\?|\bif so\b|(,|;|\?)?\s*\band (what|how|which|who|when|where|why|whether|does|did"
                    r"|is|are|was|were|has|have)\b(?! (?:is|are|was|were)n't)|\bas well as (what|how|which)\b"
                    r"|\brespectively\b|\band (also|then) (list|name|describe|explain|give)\b")
_QUANTITY_GAP = re.compile(r"\b(difference|gap|change|increase|decrease|drop)\b.*\b(percentage|percent|%|number|value"
                           r"|rate|amount|score|points?)\b"
                           r"|\b(percentage|number|value|amount|point)s? (difference|gap)\b")
_ALTERNATIVE = re.compile(r"\b(higher|lower|more|less|better|worse|larger|smaller|greater|bigger|earlier|later) or\b")
_LOCATE = re.compile(r"\b(which|what) (page|pages|section|sections|chapter|chapters|slide|slides|appendix|paragraph)\b"
                     r"|\bon which page\b|\bwhere (in|on) (the|this)\b|\bpages? (on|in) which\b")
_SUMMARY = re.compile(r"^\W*(summari[sz]e|outline|describe|overview|give an overview)\b")
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


def _normalise(text: str) -> str:
    text = text.replace("\u201c", '"').replace("\u201d", '"').replace("\u2018", "'").replace("\u2019", "'")
    return " ".join(re.sub(r"[\u2013\u2014]", "-", text).split())


def _sentences(text: str) -> list[str]:
    return sentences(text)


def _question_core(text: str) -> str:
    """Drop answer-format instructions (examples, ordering, 'write the answer in list format'), keep the question."""
    sents = _sentences(text)
    core = " ".join([s for s in sents if not _FORMAT_SENTENCE.search(s)] or sents[:1])
    return " ".join(_FORMAT_CLAUSE.sub(" ", core).split()) or core


def _is_acronym(word: str, shouting: bool) -> bool:
    letters = [c for c in word if c.isalpha()]
    if not letters or not any(c.isupper() for c in letters):
        return False
    if any(c.isdigit() for c in word) or any(c.isupper() for c in letters[1:]) and any(c.islower() for c in letters):
        return True  # 10-Q, GPT-4, iPhone, ChatGPT
    if all(c.isupper() for c in letters) and len(letters) >= 2:
        return not shouting or len(letters) <= 3 or "&" in word or "." in word
    return False


def _is_plural(word: str) -> bool:
    w = word.lower()
    return w in ("people", "children", "men", "women", "criteria") or (
        len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is", "ics", "ous")))


def _is_adverb(low: str) -> bool:
    return len(low) > 5 and low.endswith("ly") and low not in LY_NOUNS and not low.endswith(("ply", "bly"))


@dataclass
class _Keywords:
    primary: list[str]
    names: set[str]  # lowercased capitalised words / acronyms: no inflection variants
    modifiers: set[str]  # words seen only before a phrase head ('significant change'): no inflection variants


def _extract(text: str) -> _Keywords:
    core = _SELF_REF.sub(" , ", _question_core(_normalise(text)))
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
        if (t in _PUNCT or low in STOPWORDS or low in GENERIC or low in AUX or low in WH or _is_adverb(low)
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
                    or (low.endswith("ing") and _is_plural(run[-1].text))):
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
    return _Keywords(list(dict.fromkeys(kw for _, _, kw in found)), names, modifiers - heads)


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
    return _extract(text).primary


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
    if not w.isalpha() or len(w) < 3 or w in NO_INFLECTION or w.endswith(("ous", "ful", "less")) or _is_adverb(w):
        return []
    if number_only and not _is_plural(w):
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


def _main_clause(text: str) -> tuple[str, str]:
    """The question's main clause (lowercase) and how it opens: a wh-word, an auxiliary, an imperative or ''."""
    sents = _sentences(text)
    target = next((s for s in sents if s.endswith("?")), sents[0] if sents else text).lower()
    clauses = [c.strip() for c in re.split(r"[,;:]\s+", target) if c.strip()]
    for i, clause in enumerate(clauses):
        first = re.match(r"[\w'&-]+", clause)
        word = first.group() if first else ""
        word = {"what's": "what", "how's": "how", "who's": "who", "where's": "where"}.get(word, word)
        # 'When using GPT-4, how many ...': a subordinate when/where clause, not the question word
        subordinate = word in ("when", "where") and not re.match(rf"^{word} (\w+ )?({'|'.join(AUX)})\b", clause)
        if (word in WH or word in AUX or word in IMPERATIVES) and not subordinate:
            return " ".join(clauses[i:]), word
        if word not in LEAD_CLAUSE and not word[:1].isdigit() and not subordinate:
            break
    m = re.search(r"\b(how|what|which|whose|whom|who|when|where|why)\b", target)
    return (target[m.start():], m.group()) if m else (target, "")


def _np_after(clause: str, opener: str) -> list[str]:
    """Words of the noun phrase a what/which question asks about ('what was the reported gross margin for ...')."""
    rest = re.sub(rf"^{opener}('s)?\s+", "", clause)
    rest = re.sub(r"^(is|are|was|were|'s)\s+", "", rest)
    rest = re.sub(r"^(the|a|an|its|their|his|her|this|these|those)\s+", "", rest)
    rest = re.sub(r"^[\w.&-]+'s?\s+", "", rest) if re.match(r"^[\w.&-]+'s?\s", rest) else rest
    words: list[str] = []
    for w in re.findall(r"[\w%&-]+", rest):
        if not words and w in GENERIC:
            continue  # 'the reported gross margin'
        if w in STOPWORDS - {"many", "much"} or w in AUX or w in GENERIC:
            break
        words.append(w)
    return words[:5]


def asked_measure(text: str) -> list[str]:
    """Words (lower case) of the noun phrase a question asks for, the measure it wants ('What was Apple's net PP&E
    at ...' -> ['net', 'pp&e']; 'Compute Apple's DPO for ...' -> ['dpo']); empty when the question does not ask
    for a thing by name (yes/no, why, how questions)."""
    clause, opener = _main_clause(_question_core(_normalise(frame_question(text).ask)))
    if opener in ("what", "which"):
        return _np_after(clause, opener)
    if opener in ("compute", "calculate", "determine", "give", "provide", "state", "find"):
        return _np_after(clause, opener)
    m = re.match(r"^how (?:much|many)\s+(?:(?:the|a|an)\s+)?([\w%&-]+(?:\s+[\w%&-]+){0,2})", clause)
    return [w for w in m.group(1).split() if w not in AUX and w not in STOPWORDS] if m else []


def _asks_plural(clause: str, opener: str, np: list[str]) -> bool:
    """Whether a what/which question asks for several things ('what are the ...', 'which X do ...')."""
    if opener == "what":
        if re.match(r"^what (are|were)\b|^what [\w'&-]+(?: [\w'&-]+)? (are|were)\b", clause):
            return True
        if re.match(r"^what('s| is| was)\b", clause):
            return False
    elif m := re.match(r"^which(?: [\w'&.-]+){1,3}? (are|were|have|do|is|was|has|does|did)\b", clause):
        if m.group(1) not in ("do", "does", "did") or not np:
            return m.group(1) in ("are", "were", "have", "do")
        # 'which public holidays does the company give': the verb agrees with its subject, the asked noun decides
        return _is_plural(np[-1]) and np[-1] not in MASS_PLURALS
    noun = (np[0] if opener == "which" else np[-1]) if np else ""
    return _is_plural(noun) and noun not in MASS_PLURALS


def _wh_shape(clause: str, opener: str, low: str) -> str:
    np = _np_after(clause, opener)
    head = np[-1] if np else ""
    plural = _asks_plural(clause, opener, np)
    quantity = bool(set(np) & QUANTITY_NOUNS) or bool(_QUANTITY_GAP.search(clause))
    if _COMPARE.search(low) and not quantity:
        return "comparison"
    if re.match(r"^(what|which) (date|day|month|year|time)\b", clause) or (head in DATE_NOUNS and not plural):
        return "date"
    if head in IDENTIFIER_NOUNS and len(np) > 1 and not set(np[:-1]) & QUANTITY_NOUNS:
        return "entity"  # 'case number', 'telephone no': an identifier, not a quantity
    if quantity and (not plural or head in MASS_PLURALS or head not in QUANTITY_NOUNS and not _is_plural(head)):
        return "amount"
    if plural:
        return "list"
    return "entity" if opener == "which" or head in ENTITY_NOUNS or "name" in np else "text"


def answer_shape(text: str) -> str:
    """One of amount | date | boolean | entity | text | list | comparison; the first matching rule wins."""
    norm = _normalise(text)
    low = norm.lower()
    if _LIST_HINT.search(low):  # explicit format instructions first
        return "list"
    if _AMOUNT_HINT.search(low):
        return "amount"
    clause, opener = _main_clause(_question_core(norm))
    if re.match(r"^how (many|much)\b|^how (long|old|far|often|big|large|tall|high)\b(?! ago)", clause):
        return "amount"
    if re.match(r"^what(?:'s| is| was)? the (?:most|least|maximum|minimum)\s+(?:(?:the|a|an|that|you|we|i|they|"
                r"one|it)\b|[?]|$)", clause):
        return "amount"  # 'what is the most the company will reimburse': a limit
    if re.match(r"^how long ago\b|^when (\w+ )?(did|was|were|is|are|does|do|will|has|have|had)\b", clause):
        return "date"
    if opener in AUX:
        return "comparison" if _ALTERNATIVE.search(clause) else "boolean"
    if opener in ("what", "which"):
        return _wh_shape(clause, opener, low)
    if opener in ("who", "whom", "whose", "where"):
        return "list" if re.match(r"^(who|where) (are|were)\b", clause) else "entity"
    if _COMPARE.search(low) and opener != "why":
        return "comparison"
    if opener in ("list", "enumerate"):
        return "list"
    if opener in ("calculate", "compute", "count"):
        return "amount"
    if opener in ("name", "identify", "give", "provide", "state", "find", "write"):
        words = re.findall(r"[a-z%&-]+", clause)[1:6]
        if any(_is_plural(w) for w in words) or {"all", "list"} & set(words) or " and " in clause:
            return "list"
        return "amount" if set(words) & QUANTITY_NOUNS else "entity" if set(words) & ENTITY_NOUNS else "text"
    return "text"


def decomposition(text: str, shape: str) -> str:
    """single | multi_part (several questions joined) | compare (several entities or periods contrasted)."""
    low = _question_core(_normalise(text)).lower()
    if _MULTI.search(low):
        return "multi_part"
    if shape == "comparison" or _COMPARE.search(low) or _RELATE.search(low) or _MULTI_SCOPE.search(low):
        return "compare"
    years = set(re.findall(r"\b(?:19|20)\d\d\b", low))
    quarters = set(re.findall(r"\b(?:q[1-4]|(?:first|second|third|fourth) quarter)\b", low))
    if (len(years) >= 2 or len(quarters) >= 2) and re.search(rf"\b{_CHANGE}\w*|\b(gap|differ\w*)\b", low):
        return "compare"
    return "single"


def intent(text: str, shape: str, decomp: str) -> str:
    """A short label for audits and routing reports (one of :data:`INTENTS`)."""
    core = _question_core(_normalise(text)).lower()
    if _LOCATE.search(core):
        return "locate"
    if shape == "comparison" or (decomp == "compare" and _COMPARE.search(core)):
        return "compare"
    if decomp == "compare" and _RELATE.search(core):
        return "relate"
    if shape == "amount":
        return "count" if re.search(r"\bhow many\b", core) else "lookup_amount"
    by_shape = {"date": "lookup_date", "boolean": "yes_no", "entity": "lookup_entity", "list": "enumerate"}
    return by_shape.get(shape) or ("summarize" if _SUMMARY.search(core) else "explain")


def parse_question(question_id: str, text: str) -> ParsedQuestion:
    """Parse one question with the rules; deterministic and offline."""
    if not text or not text.strip():
        raise ValueError(f"question {question_id!r} has empty text; give it a question or drop the line")
    kw = _extract(text)
    framed = frame_question(text)
    shape = answer_shape(text)
    decomp = decomposition(text, shape)
    return ParsedQuestion(
        question_id=question_id,
        text=text,
        keywords_primary=kw.primary,
        keywords_secondary=secondary_keywords(kw.primary, kw.names, kw.modifiers),
        answer_shape=shape,
        decomposition=decomp,
        intent=intent(text, shape, decomp),
        parser=PARSER_NAME,
        ask=framed.ask,
        framing=framed.framing,
        definitions=framed.definitions,
    )
