"""What the rules arbiter reads: the question as its terms, phrases, secondary keywords and distinctive terms
(:class:`Query`, weighted by rarity in the pool), and from one candidate the terms on its lines, in its best window
and in its section title, the values of the asked shape next to them, and the table row whose label is the question's
own words (:class:`Evidence`). The verdicts drawn from them are :mod:`tasks.arbiter.rules`'.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from schemas.contracts import CandidateBrief, ParsedQuestion
from tasks.arbiter import evidence as ev

# A candidate's best window must carry at least this weighted share of the question's terms to anchor a value
# (and to be primary by co-occurrence: tasks.arbiter.rules).
PRIMARY_FLOOR = 0.3
TITLE_COVERAGE = 0.5  # share of a section title's words that must be question terms for a title match


@dataclass
class Query:
    """The question as the rules read it."""

    question: ParsedQuestion
    terms: list[str]  # stems, question order
    surface: dict[str, str]  # stem -> the question's own word, for reasons
    phrases: list[ev.Keyword]  # multi-word primary keywords
    secondary: list[ev.Keyword]  # secondary keywords that add a term the primaries lack
    distinct: list[str]  # years, numbers, codes, names the answer must involve (evidence.distinctive_terms)
    q_tokens: frozenset[str]
    acronyms: list[str] = field(default_factory=list)  # 'PP&E', 'COGS': read as the pool spells them out
    weights: dict[str, float] = field(default_factory=dict)
    # terms set aside as evidence of place: the named documents' identity states them (tasks.arbiter.named), yet a
    # row label may still use them ('Net income attributable to Northwind')
    context: list[str] = field(default_factory=list)

    @property
    def shape(self) -> str:
        return self.question.answer_shape


@dataclass
class Evidence:
    """What the rules read from one candidate; every field shows up in its reason or relevance."""

    cand: CandidateBrief
    title: str = ""
    title_terms: list[str] = field(default_factory=list)  # question terms in the matching section title
    coverage: float = 0.0  # rarity-weighted share of the terms on the lines
    present: list[str] = field(default_factory=list)  # terms on the lines
    phrases: list[str] = field(default_factory=list)  # multi-word keywords found as phrases
    secondary: list[str] = field(default_factory=list)
    window_terms: list[str] = field(default_factory=list)  # terms in the best window of ev.WINDOW lines
    window_coverage: float = 0.0
    values: list[str] = field(default_factory=list)  # values of the asked shape next to the best window
    distinct: float = 1.0  # share of the question's distinctive terms present
    rewrite: str | None = None
    ignored: list[str] = field(default_factory=list)  # sentences addressed to the model, not read as evidence
    needs_value: bool = True
    page_coverage: float = 0.0  # rarity-weighted share of the terms over every candidate of the same page
    label: float = 0.0  # rarity-weighted share of the terms that a value row's label states (row_label)
    label_text: str = ""

    @property
    def anchor_found(self) -> bool:
        """The candidate's own lines carry the keywords and a value of the asked shape."""
        return self.window_coverage >= PRIMARY_FLOOR and (bool(self.values) or not self.needs_value)


def make_query(question: ParsedQuestion) -> Query:
    # the ask's keywords (and those of the definitions it gives: the line items a computed answer reads), not the
    # framing's ('assume', 'analyst', 'relying') nor notations no document prints as such ('Q3', 'FY2023', 'USD')
    asked = ev.asked_keywords(question, question.keywords_primary)
    primary = ev.parse_keywords(asked) \
        or ev.parse_keywords(question.keywords_primary) or ev.parse_keywords(question.keywords_secondary)
    if not primary:  # a parse with no keywords at all: the question's own content words
        primary = ev.parse_keywords(ev.content_tokens(question.text))
    # terms: content words of the keywords, without one-letter fragments ('U.S.' -> 'u', 's'); the number of a
    # 'page 10' or 'figure 5' stays: page numbers and captions are printed on the page
    terms = list(dict.fromkeys(t for k in primary for t in k.toks if len(t) > 1 or t.isdigit()))
    if not terms:
        terms = list(dict.fromkeys(t for k in primary for t in k.toks))
    surface: dict[str, str] = {}
    for k in primary:
        for word in ev.normalise(k.text).split():
            for t in ev.tokens(word):
                surface.setdefault(t, word.strip(".,;:'\"()"))
    secondary = [k for k in ev.parse_keywords(question.keywords_secondary) if not set(k.toks) <= set(terms)]
    # an acronym with no token of its own ('R&D': one-letter fragments only) is no keyword, yet still an acronym
    acronyms = list(dict.fromkeys(w for k in [*(k.text for k in primary), *asked] for w in k.split()
                                  if ev.is_acronym(w)))
    return Query(
        question=question, terms=terms, surface=surface, phrases=[k for k in primary if len(k.toks) > 1],
        secondary=secondary, distinct=ev.question_terms(question),
        q_tokens=frozenset(ev.tokens(question.text)), acronyms=acronyms,
    )


def weighted(query: Query, present: set[str]) -> float:
    return ev.weighted_share(query.terms, query.weights, present)


def read_evidence(query: Query, c: CandidateBrief, raw_lines: list[str], ignored: list[str]) -> Evidence:
    e = Evidence(cand=c, ignored=ignored, needs_value=ev.shape_needs_value(query.shape))
    lines = [ln for ln in raw_lines if ln.strip()]
    line_toks = [ev.tokens(ln) for ln in lines]
    all_toks = [t for lt in line_toks for t in lt]
    all_set = set(all_toks)
    e.present = [t for t in query.terms if t in all_set]
    e.coverage = weighted(query, all_set)
    e.phrases = [k.text for k in query.phrases if ev.keyword_score(list(k.toks), all_toks, all_set) == 1.0]
    e.secondary = [k.text for k in query.secondary if ev.keyword_score(list(k.toks), all_toks, all_set) >= 0.8]

    e.title = c.section.split(" > ")[-1].strip() if c.section else ""
    title_words = [t for t in ev.content_tokens(e.title) if not t.isdigit()]
    if title_words:
        matched = [t for t in title_words if t in query.terms]
        share = len(matched) / len(title_words)
        # the whole title, or most of it in two words or more: 'Positional Encoding', not 'Health Insurance'
        if share == 1.0 or (len(matched) >= 2 and share >= TITLE_COVERAGE):
            e.title_terms = matched

    best_i, best = 0, (-1.0, -1)
    for i in range(max(1, len(lines))):
        window = set(t for lt in line_toks[i : i + ev.WINDOW] for t in lt)
        key = (weighted(query, window), sum(1 for k in query.secondary if set(k.toks) <= window))
        if key > best:
            best_i, best = i, key
            e.window_terms = [t for t in query.terms if t in window]
    e.window_coverage = max(0.0, best[0])
    if e.window_terms:
        # values from the window and a line either side: those on lines richest in question terms first, a
        # line's own values before one broken across it and the next line (read whole from the pair)
        terms = set(query.terms)
        near = range(max(0, best_i - 1), min(len(lines), best_i + ev.WINDOW + 1))
        ordered = sorted(near, key=lambda j: (-len(terms & set(line_toks[j])), abs(j - best_i - 1)))
        found = [v for j in ordered
                 for v in (*ev.values_of_shape(lines[j], query.shape, query.q_tokens),
                           *ev.values_of_shape("\n".join(lines[j : j + 2]), query.shape, query.q_tokens))]
        if query.shape in ("amount", "comparison"):
            found = ev.prefer_units(found)
        e.values = list(dict.fromkeys(found))[:3]
        e.rewrite = _table_rewrite(lines, best_i)
    e.label, e.label_text = row_label(query, lines)
    if query.distinct:
        carried = all_set | set(ev.tokens(c.section))
        e.distinct = sum(1 for t in query.distinct if ev.carries(t, carried)) / len(query.distinct)
    return e


_FIRST_NUMBER = re.compile(r"[$€£¥(]?\s*\d")
_PARENTHESES = re.compile(r"\([^)]*\)")
_CELL = re.compile(r"[$€£¥]?\(?[$€£¥]?[-+]?\d[\d,]*(?:\.\d+)?\)?%?|[$€£¥%—–-]")


def _value_cells(text: str) -> bool:
    """Whether ``text`` is the cells of a table row: two numbers or more and nothing but numbers, currency signs,
    percent signs and dashes ('$ 16,110 $ 20,538', '310 2.2 % (985)'), not a page number, a range or a sentence."""
    cells = text.split()
    return all(_CELL.fullmatch(c) for c in cells) and sum(any(ch.isdigit() for ch in c) for c in cells) >= 2


def row_label(query: Query, lines: list[str]) -> tuple[float, str]:
    """(share, label) of the value row whose label states most of the question: a line of table cells (two numbers
    or more) after words that are all the question's own (its terms, the context its documents state, its secondary
    keywords), parentheses aside ('Net income (loss) attributable to Northwind $ 297 $ 1,019' for 'net income
    attributable to Northwind'); (0, '') when no row is labelled so. A careful reader goes to the row that names the
    asked measure, not to a sentence that only mentions its words beside another figure (a percentage, another
    segment's total)."""
    allowed = set(query.terms) | set(query.context) | {t for k in query.secondary for t in k.toks}
    best, text = 0.0, ""
    for line in lines:
        m = _FIRST_NUMBER.search(line)
        if not m or m.start() == 0 or not _value_cells(line[m.start():]):
            continue
        label = " ".join(_PARENTHESES.sub(" ", line[: m.start()]).split())
        toks = set(ev.tokens(label))
        if toks and toks <= allowed and (share := weighted(query, toks)) > best:
            best, text = share, label
    return best, text


def _table_rewrite(lines: list[str], i: int) -> str | None:
    """'<header> | <row>' when the anchor is a flattened table row and a label line stands above it."""
    for j in (i, i + 1):
        if j < len(lines) and ev.is_table_row(lines[j]):
            for h in range(j - 1, max(-1, j - 5), -1):
                if ev.is_header_line(lines[h]):
                    return f"{lines[h].strip()} | {lines[j].strip()}"
            return None
    return None
