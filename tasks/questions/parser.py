"""Offline, deterministic question parser (``rules-v1``): keywords, answer shape, decomposition, intent.

Rules only (no model, no download): detectors read the keywords and the generation router reads shape and
decomposition, so the same text must always give the same :class:`ParsedQuestion`.
"""

from __future__ import annotations

import re

from schemas.contracts import ParsedQuestion
from tasks.questions.asked import asked_class
from tasks.questions.framing import frame_question, sentences
from tasks.questions.keywords import (  # noqa: F401 (extract_keywords, word_variants: the parser's public names)
    extract_keywords,
    keyword_parts,
    secondary_keywords,
    word_variants,
)
from tasks.questions.lexicon import (
    AUX,
    DATE_NOUNS,
    ENTITY_NOUNS,
    GENERIC,
    IDENTIFIER_NOUNS,
    IMPERATIVES,
    LEAD_CLAUSE,
    MASS_PLURALS,
    QUANTITY_NOUNS,
    STOPWORDS,
    WH,
    is_plural,
    normalise_text,
    question_core,
)

PARSER_NAME = "rules-v1"
INTENTS = ("lookup_amount", "count", "lookup_date", "yes_no", "lookup_entity", "enumerate", "compare", "relate",
           "summarize", "explain", "locate")


_LIST_HINT = re.compile(r"\b(in|as) (a |the )?list\b|\blist format\b|\bformatted as a list\b|\bin list form\b"
                        r"|^\W*(list|enumerate)\b|\b(list|enumerate|name) (all|each|every)\b|\brespectively\b")
_AMOUNT_HINT = re.compile(r"\b(int|integer|float|decimal|numeric|number) format\b|\bgive me an? (integer|number)\b"
                          r"|\bin (an )?(integer|float)\b|\bwith (one|two|three|\d) decimals?\b|\bdecimal places?\b"
                          r"|\bpercentage value\b|\bround(ed)? (to )?(an |the )?(integer|number)\b|\brounded integer\b")
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


def _main_clause(text: str) -> tuple[str, str]:
    """The question's main clause (lowercase) and how it opens: a wh-word, an auxiliary, an imperative or ''."""
    sents = sentences(text)
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
    tokens = re.findall(r"[\w%&-]+", rest)
    for i, w in enumerate(tokens):
        if not words and w in GENERIC:
            continue  # 'the reported gross margin'
        after = tokens[i + 1] if i + 1 < len(tokens) else ""
        if w == "and" and words and after and after not in STOPWORDS | AUX | GENERIC:
            words.append(w)  # one name of two words joined: 'research and development expenses'
            continue
        if w in STOPWORDS - {"many", "much"} or w in AUX or w in GENERIC:
            break
        words.append(w)
    return words[:5]


def asked_measure(text: str) -> list[str]:
    """Words (lower case) of the noun phrase a question asks for, the measure it wants ('What was Apple's net PP&E
    at ...' -> ['net', 'pp&e']; 'Compute Apple's DPO for ...' -> ['dpo']); empty when the question does not ask
    for a thing by name (yes/no, why, how questions)."""
    clause, opener = _main_clause(question_core(normalise_text(frame_question(text).ask)))
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
        return is_plural(np[-1]) and np[-1] not in MASS_PLURALS
    noun = (np[0] if opener == "which" else np[-1]) if np else ""
    return is_plural(noun) and noun not in MASS_PLURALS


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
    if quantity and (not plural or head in MASS_PLURALS or head not in QUANTITY_NOUNS and not is_plural(head)):
        return "amount"
    if plural:
        return "list"
    return "entity" if opener == "which" or head in ENTITY_NOUNS or "name" in np else "text"


def answer_shape(text: str) -> str:
    """One of amount | date | boolean | entity | text | list | comparison; the first matching rule wins."""
    norm = normalise_text(text)
    low = norm.lower()
    if _LIST_HINT.search(low):  # explicit format instructions first
        return "list"
    if _AMOUNT_HINT.search(low):
        return "amount"
    clause, opener = _main_clause(question_core(norm))
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
        if any(is_plural(w) for w in words) or {"all", "list"} & set(words) or " and " in clause:
            return "list"
        return "amount" if set(words) & QUANTITY_NOUNS else "entity" if set(words) & ENTITY_NOUNS else "text"
    return "text"


def decomposition(text: str, shape: str) -> str:
    """single | multi_part (several questions joined) | compare (several entities or periods contrasted)."""
    low = question_core(normalise_text(text)).lower()
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
    core = question_core(normalise_text(text)).lower()
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
    kw = keyword_parts(text)
    framed = frame_question(text)
    shape = answer_shape(text)
    decomp = decomposition(text, shape)
    asked = asked_class({"text": text, "answer_shape": shape, "decomposition": decomp})
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
        asked=asked,
    )
