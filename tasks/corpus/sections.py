"""Sections (``toc`` rows) from a PDF outline, from recovered headings, or one per page.

Every source ends in :func:`build_toc`, so ranges and parents follow one rule: a section runs from its heading line
to the line before the next section (any level) starts, or to the last line of the document.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from difflib import SequenceMatcher

import polars as pl

TOC_SCHEMA = {
    "doc_id": pl.String,
    "section_id": pl.Int64,
    "level": pl.Int64,
    "title": pl.String,
    "page_start": pl.Int64,
    "page_end": pl.Int64,
    "line_start": pl.Int64,
    "line_end": pl.Int64,
    "parent_id": pl.Int64,
    "source": pl.String,
}

_LEADING_NUMBER = re.compile(
    r"^\s*(?:(?:chapter|section|part|article|appendix|item|note)\s+[\w.]+[.:]?"
    r"|\(?(?:[A-Z]\.)?\d+(?:\.\d+)*[.)]?|\(?[A-Z][.)]|[IVXLC]+\.)\s+",
    re.IGNORECASE,
)


def build_toc(entries: list[tuple[int, str, int]], pages: list[int], doc_id: str, source: str) -> pl.DataFrame:
    """``entries`` = (level, title, line_start); ``pages`` = page of every line. Sorted by line, ranges and parents set.

    Two entries on the same line (e.g. a parent heading directly followed by its first child, both resolved to the
    same line) keep a one-line range each rather than an empty one.
    """
    order = sorted(range(len(entries)), key=lambda k: (entries[k][2], k))
    rows = [entries[k] for k in order]
    last_line = len(pages) - 1
    cols: dict[str, list] = {k: [] for k in TOC_SCHEMA if k not in ("doc_id", "source")}
    stack: list[tuple[int, int]] = []  # (level, section_id) of the open ancestors
    for sid, (level, title, start) in enumerate(rows):
        nxt = rows[sid + 1][2] if sid + 1 < len(rows) else last_line + 1
        end = max(start, nxt - 1)
        while stack and stack[-1][0] >= level:
            stack.pop()
        cols["section_id"].append(sid)
        cols["level"].append(level)
        cols["title"].append(title)
        cols["page_start"].append(pages[start])
        cols["page_end"].append(pages[end])
        cols["line_start"].append(start)
        cols["line_end"].append(end)
        cols["parent_id"].append(stack[-1][1] if stack else None)
        stack.append((level, sid))
    frame = pl.DataFrame(cols, schema={k: v for k, v in TOC_SCHEMA.items() if k not in ("doc_id", "source")})
    return frame.with_columns(
        pl.lit(doc_id, dtype=pl.String).alias("doc_id"), pl.lit(source, dtype=pl.String).alias("source")
    ).select(list(TOC_SCHEMA))


def page_sections(lines: pl.DataFrame, doc_id: str) -> pl.DataFrame:
    """Last resort: one level-1 section per page that has text, titled with the 1-based page number ("Page 3")."""
    pages = lines["page"].to_list()
    entries = [(1, f"Page {p + 1}", i) for i, p in enumerate(pages) if i == 0 or pages[i - 1] != p]
    return build_toc(entries, pages, doc_id, "pages")


def outline_sections(lines: pl.DataFrame, outline: list, doc_id: str, n_pages: int) -> pl.DataFrame | None:
    """Map ``doc.get_toc()`` entries ([level, title, 1-based page]) to their heading lines; None if unusable.

    Entries pointing to no page (< 1) take the page of the entry before them; pages past the end are clamped. An
    entry whose title is not printed on its page starts at the page's first line (or the next line with text). An
    outline with fewer than two entries that point into the document is not a table of contents (None).
    """
    if sum(1 for e in outline if 1 <= e[2]) < 2:
        return None
    pages = lines["page"].to_list()
    texts = lines["text"].to_list()
    sizes = lines["font_size"].to_list()
    keys: dict[int, tuple[str, str]] = {}  # line -> (key, key without its leading number), filled page by page
    entries = []
    prev_page = 0
    for level, title, target in (e[:3] for e in outline):
        page = min(target - 1, n_pages - 1) if target >= 1 else prev_page
        prev_page = page
        lo, hi = bisect.bisect_left(pages, page), bisect.bisect_left(pages, page + 1)
        for i in range(lo, hi):
            if i not in keys:
                keys[i] = _line_keys(texts[i])
        line = _match_title(title, keys, sizes, lo, hi) if hi > lo else None
        if line is None:
            line = min(lo, len(pages) - 1)
        clean = " ".join(title.split()) or texts[line]
        entries.append((max(1, int(level)), clean, line))
    return build_toc(entries, pages, doc_id, "outline")


def _key(text: str) -> str:
    """Comparison key: NFKC (expands ligatures), case-folded, letters and digits only."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", text).casefold() if ch.isalnum())


def _line_keys(text: str) -> tuple[str, str]:
    """(key, key without the leading number) of a line."""
    return _key(text), _key(_LEADING_NUMBER.sub("", text, count=1))


def _long_enough(prefix: str, title: str) -> bool:
    """A line that starts a title must carry a fair share of it to count as its heading."""
    return len(prefix) >= 4 and (len(prefix) * 2 >= len(title) or len(prefix) >= 16)


def _match_title(title: str, keys: dict[int, tuple[str, str]], sizes: list[float], lo: int, hi: int) -> int | None:
    """Best line in [lo, hi) for an outline title: exact, without its number, over two lines, run-in, or fuzzy.

    ``keys[i]`` is line i's (key, key without leading number). Ties go to the larger font (a heading over a
    running header that repeats it).
    """
    full = _key(title)
    if not full:
        return None
    bare = _key(_LEADING_NUMBER.sub("", title, count=1)) or full
    best, best_rank = None, None
    for i in range(lo, hi):
        k, kn = keys[i]
        if not k:
            continue
        nxt = keys[i + 1][0] if i + 1 < hi else ""
        if full in (k, k + nxt):
            score = 4
        elif bare in (kn, kn + nxt):
            score = 3
        elif len(bare) >= 4 and (kn.startswith(bare) or (_long_enough(kn, bare) and bare.startswith(kn))):
            score = 2  # a run-in heading ("New Modules: The framework ...") or a title wrapped over lines
        elif abs(len(kn) - len(bare)) <= max(3, len(bare) // 4) and SequenceMatcher(None, kn, bare).ratio() >= 0.85:
            score = 1
        else:
            continue
        rank = (score, sizes[i])
        if best_rank is None or rank > best_rank:
            best, best_rank = i, rank
    return best


# --- heading recovery (PDFs without an outline) -------------------------------------------------------------------

_KEYWORD_RANK = {"part": 0, "chapter": 1, "article": 1, "appendix": 1, "annex": 1, "section": 2, "item": 2, "note": 3}
_KEYWORD_NUMBER = re.compile(
    r"^(part|chapter|article|appendix|annex|section|item|note)\s+(\d{1,3}[a-z]?|[ivxlc]{1,6}|[a-z])\b\.?", re.IGNORECASE
)
_DECIMAL_NUMBER = re.compile(r"^((?:\d{1,2}|[A-Z]\.\d{1,2})(?:\.\d{1,2})*)\.?\s+(?=[^\W\d_])")
_ROMAN_NUMBER = re.compile(r"^[IVXLC]{1,6}\.\s+(?=[^\W\d_])")
_TOC_ENTRY = re.compile(r"(?:\.\s?){4,}|…{2,}|_{4,}")  # dot leaders of a contents page
_PAGE_REF = re.compile(r"[^\d\s.,]\s+\d{1,4}$")  # "Highlights 5": a contents entry and its page
_PAGE_NUMBER = re.compile(r"^(?:page\s*)?(?:\d+|x{0,3}(?:ix|iv|v?i{0,3}))(?:\s*(?:of|/)\s*\d+)?$", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
_AMOUNT = re.compile(r"[$€£¥]\s?\d|\d{1,3}(?:,\d{3})+")  # money and thousands: table cells, not titles
_CONTINUES = {"of", "and", "or", "the", "for", "to", "in", "on", "with", "by", "a", "an", "&", "-", "–"}
_BIGGER = 1.15  # a heading font is at least this much larger than body text ...
_NOT_SMALLER = 0.95  # ... or bold and at least this large
_NUMBERED_MIN = 0.85  # ... or bold, numbered and at least this large (small caps "3 METHOD")
_MAX_RUN_LINES = 4  # longer same-style runs are paragraphs, not headings
_MAX_CHARS = 160
_MAX_PER_PAGE = 8.0  # a style used for more headings a page than this is content formatting (table labels, bold text)


def recover_sections(lines: pl.DataFrame, doc_id: str) -> pl.DataFrame | None:
    """Headings recovered from typography and numbering (``source='headings'``); None when fewer than two are found.

    A heading is a short run of same-style lines in one block, in a font clearly larger than the body text, or bold
    (or numbered: ``3.2``, ``Item 7.``, ``PART II``, ``Note 4``) at body size in a block of its own. Running headers and
    footers, page numbers, table cells and digit-heavy lines are rejected. Levels rank (font tier, numbering depth).
    """
    if lines.height == 0:
        return None
    texts = lines["text"].to_list()
    pages = lines["page"].to_list()
    blocks = lines["block_no"].to_list()
    tops = lines["bbox"].list.get(1).to_list()
    bottoms = lines["bbox"].list.get(3).to_list()
    sizes = [round(s * 2) / 2 for s in lines["font_size"].to_list()]
    bolds = lines["bold"].to_list()
    body = _body_size(texts, sizes)
    noise = _running_lines(texts, pages, tops)
    styled = [bold or sz >= body * _BIGGER for sz, bold in zip(sizes, bolds)]
    # a block of its own: no plain body line in it, or the run opens it and the next line does not continue it
    block_plain: dict[tuple[int, int], bool] = {}
    for p, b, st in zip(pages, blocks, styled):
        block_plain[(p, b)] = block_plain.get((p, b), False) or not st

    heads: list[dict] = []
    i, n = 0, len(texts)
    while i < n:
        j = i + 1
        while j < n and (pages[j], blocks[j], sizes[j], bolds[j]) == (pages[i], blocks[i], sizes[i], bolds[i]):
            j += 1
        if not styled[i]:  # plain body text: never a heading
            i = j
            continue
        key = (pages[i], blocks[i])
        opens = i == 0 or (pages[i - 1], blocks[i - 1]) != key
        continued = j < n and (pages[j], blocks[j]) == key and texts[j][0].islower()
        head = _as_heading(i, j, texts, sizes, bolds, body, noise, not block_plain[key] or (opens and not continued))
        if head is not None and not _in_table_row(i, j, pages, tops, bottoms, texts, styled):
            prev = heads[-1] if heads else None
            if prev and prev["end"] == i and head["rank"] is None and (
                (pages[prev["start"]], blocks[prev["start"]]) == key
                or (pages[prev["start"]] == pages[i] and prev["title"].rsplit(None, 1)[-1].lower() in _CONTINUES)
            ):  # one heading set in two styles, or wrapped after "of", "and", ...
                prev.update(title=f"{prev['title']} {head['title']}", end=j, size=max(prev["size"], head["size"]))
            else:
                heads.append(head)
        i = j

    heads = _drop_contents_entries(heads, pages)
    heads = _drop_crowded_styles(heads, len(set(pages)))
    if len(heads) < 2:
        return None
    levels = _levels(heads)
    entries = [(lvl, h["title"], h["start"]) for lvl, h in zip(levels, heads)]
    return build_toc(entries, pages, doc_id, "headings")


def _body_size(texts: list[str], sizes: list[float]) -> float:
    """The most common font size, weighted by characters."""
    weight: dict[float, int] = {}
    for t, s in zip(texts, sizes):
        weight[s] = weight.get(s, 0) + len(t)
    return max(weight, key=weight.__getitem__)


def _running_lines(texts: list[str], pages: list[int], tops: list[float]) -> list[bool]:
    """Running headers/footers and page furniture: the same text on at least 3 pages and a fifth of the pages, or
    the same text up to its numbers ("Page 3", "Report 2023 | 7") at the same height on that many pages."""
    exact: dict[str, set[int]] = {}
    placed: dict[tuple[str, int], set[int]] = {}
    keys = []
    for t, p, y in zip(texts, pages, tops):
        k = " ".join(t.casefold().split())
        m = (_DIGITS.sub("#", k), round(y / 8))
        exact.setdefault(k, set()).add(p)
        placed.setdefault(m, set()).add(p)
        keys.append((k, m))
    floor = max(3, 0.2 * len(set(pages)))
    return [len(exact[k]) >= floor or len(placed[m]) >= floor for k, m in keys]


def _numbering(text: str) -> int | None:
    """Rank of a heading's numbering (lower = higher in the hierarchy), None when unnumbered."""
    m = _KEYWORD_NUMBER.match(text)
    if m:
        return _KEYWORD_RANK[m.group(1).lower()]
    m = _DECIMAL_NUMBER.match(text)
    if m:
        return 3 + m.group(1).count(".") + 1
    return 1 if _ROMAN_NUMBER.match(text) else None


def _as_heading(i, j, texts, sizes, bolds, body, noise, own_block) -> dict | None:
    """The run of lines [i, j) as a heading, or None when its size, shape or text says it is not one."""
    size, bold = sizes[i], bolds[i]
    if j - i > _MAX_RUN_LINES or (size < body * _BIGGER and not (own_block and bold and size >= body * _NUMBERED_MIN)):
        return None
    title = " ".join(texts[i:j])
    if len(title) > _MAX_CHARS or _PAGE_NUMBER.match(title) or any(noise[i:j]):
        return None
    rank = _numbering(title)
    if size < body * _BIGGER and size < body * _NOT_SMALLER and rank is None:  # small bold text must be numbered
        return None
    stripped = _LEADING_NUMBER.sub("", title, count=1) if rank is not None else title
    letters = sum(ch.isalpha() for ch in stripped)
    if letters < 3 or sum(ch.isdigit() for ch in stripped) > letters or stripped[:1].islower():
        return None
    if not (title[0].isalnum() or title[0] in "\"'‘“") or title[-1] in ",;-" or (rank is None and title[-1] == ":"):
        return None
    if _TOC_ENTRY.search(title) or _AMOUNT.search(title):
        return None
    return {"start": i, "end": j, "title": title, "size": size, "bold": bold, "rank": rank}


def _in_table_row(i: int, j: int, pages, tops, bottoms, texts, styled) -> bool:
    """True when the run's first row holds a numeric cell or another short styled cell: a table row, not a heading.

    (Body text beside a heading, as in two-column layouts, is neither.)
    """
    y0, y1 = tops[i], bottoms[i]
    lo = bisect.bisect_left(pages, pages[i])
    hi = bisect.bisect_right(pages, pages[i], lo)
    for k in range(lo, hi):
        if i <= k < j:
            continue
        h = bottoms[k] - tops[k]
        same_row = min(y1, bottoms[k]) - max(y0, tops[k]) > 0.5 * min(y1 - y0, h)
        if h < 2 * (y1 - y0) and same_row:  # (a taller line is rotated text, e.g. an arXiv side stamp)
            if styled[k] and len(texts[k].split()) <= 4:
                return True
            digits = sum(ch.isdigit() for ch in texts[k])
            if digits and digits >= sum(ch.isalpha() for ch in texts[k]):
                return True
    return False


def _drop_contents_entries(heads: list[dict], pages: list[int]) -> list[dict]:
    """Drop entries of a contents page: three or more headings on one page that end with a page number."""
    per_page: dict[int, int] = {}
    for h in heads:
        if _PAGE_REF.search(h["title"]):
            per_page[pages[h["start"]]] = per_page.get(pages[h["start"]], 0) + 1
    return [h for h in heads if not (_PAGE_REF.search(h["title"]) and per_page[pages[h["start"]]] >= 3)]


def _drop_crowded_styles(heads: list[dict], n_pages: int) -> list[dict]:
    """Drop styles used for more than ``_MAX_PER_PAGE`` headings a page: formatting, not structure."""
    count: dict[tuple, int] = {}
    for h in heads:
        count[(h["size"], h["bold"])] = count.get((h["size"], h["bold"]), 0) + 1
    return [h for h in heads if count[(h["size"], h["bold"])] <= _MAX_PER_PAGE * max(1, n_pages)]


def _levels(heads: list[dict]) -> list[int]:
    """Levels from (font tier, numbering rank): bigger fonts first; within a tier, numbered headings by depth.

    Unnumbered headings in a tier with decimal numbering are peers of its top numbers (Abstract, References);
    in a tier numbered by keywords (PART, Item, Note) they are subheadings below the numbered ones.
    """
    tiers = sorted({(h["size"], h["bold"]) for h in heads}, key=lambda s: (-s[0], not s[1]))
    tier_of = {s: t for t, s in enumerate(tiers)}
    ranks_in: dict[int, list[int]] = {}
    for h in heads:
        if h["rank"] is not None:
            ranks_in.setdefault(tier_of[(h["size"], h["bold"])], []).append(h["rank"])
    keys = []
    for h in heads:
        t = tier_of[(h["size"], h["bold"])]
        rank = h["rank"]
        if rank is None:
            decimal = [r for r in ranks_in.get(t, []) if r >= 4]
            rank = min(decimal) if decimal else 99
        keys.append((t, rank))
    dense = {k: lvl for lvl, k in enumerate(sorted(set(keys)), start=1)}
    levels = [dense[k] for k in keys]
    # numbering outranks typography: every "3.2"-deep (or "Item"-) heading takes its numbering's most common level
    by_rank: dict[int, list[int]] = {}
    for h, lvl in zip(heads, levels):
        if h["rank"] is not None:
            by_rank.setdefault(h["rank"], []).append(lvl)
    rank_level = {r: max(set(lv), key=lambda x: (lv.count(x), -x)) for r, lv in by_rank.items()}
    ranks = sorted(rank_level)  # then keep the numbering order: PART above Item above Note, 3 above 3.2
    for hi, lo in reversed(list(zip(ranks, ranks[1:]))):
        rank_level[hi] = min(rank_level[hi], rank_level[lo] - 1)
    for k, r in enumerate(ranks):
        rank_level[r] = max(rank_level[r], 1, rank_level[ranks[k - 1]] + 1 if k else 1)
    return [rank_level[h["rank"]] if h["rank"] is not None else lvl for h, lvl in zip(heads, levels)]
