"""Line windows: a few consecutive lines inside one section, the units BM25 indexes and the embedder embeds.

Two granularities, both pure functions of ``lines`` and ``toc``: ``build_windows`` (4 lines every 2, overlapping:
what BM25 indexes, rebuilt by detection without storing text twice) and ``build_embed_windows`` (each line in at
most one window: what is embedded and stored with its vector and text in LanceDB). Embedding the overlapping
windows embedded every line twice; the embedding detector only needs each passage once.
"""

from __future__ import annotations

import re

import polars as pl

WINDOW_SCHEMA = {
    "doc_id": pl.String,
    "window_id": pl.Int64,
    "page": pl.Int64,
    "line_start": pl.Int64,
    "line_end": pl.Int64,
    "section_id": pl.Int64,
    "text": pl.String,
}


def build_windows(lines: pl.DataFrame, toc: pl.DataFrame, size: int = 4, stride: int = 2) -> pl.DataFrame:
    """Windows of up to ``size`` lines every ``stride`` lines; a window never crosses a section boundary.

    ``lines`` and ``toc`` belong to one document.
    """
    if lines.height == 0:
        return pl.DataFrame(schema=WINDOW_SCHEMA)
    lines = lines.sort("line_no")
    line_nos = lines["line_no"].to_list()
    pages = lines["page"].to_list()
    texts = lines["text"].to_list()
    doc_id = lines["doc_id"][0]
    sections = section_of_lines(line_nos, toc)
    # split into runs of lines that share a section
    runs: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(line_nos) + 1):
        if i == len(line_nos) or sections[i] != sections[start]:
            runs.append((start, i))
            start = i
    cols: dict[str, list] = {k: [] for k in WINDOW_SCHEMA}
    wid = 0
    for a, b in runs:
        starts = list(range(a, max(a + 1, b - size + 1), stride))
        if starts[-1] + size < b:
            starts.append(b - size)
        for s in starts:
            e = min(s + size, b)
            cols["doc_id"].append(doc_id)
            cols["window_id"].append(wid)
            cols["page"].append(pages[s])
            cols["line_start"].append(line_nos[s])
            cols["line_end"].append(line_nos[e - 1])
            cols["section_id"].append(sections[s])
            cols["text"].append("\n".join(texts[s:e]))
            wid += 1
    return pl.DataFrame(cols, schema=WINDOW_SCHEMA)


def section_of_lines(line_nos: list[int], toc: pl.DataFrame) -> list[int | None]:
    """Innermost section containing each line (sorted line numbers), by one sweep over section starts."""
    if toc.height == 0:
        return [None] * len(line_nos)
    spans = sorted(toc.select("line_start", "level", "section_id", "line_end").rows())
    out: list[int | None] = []
    stack: list[tuple[int, int]] = []  # (line_end, section_id)
    j = 0
    for ln in line_nos:
        while j < len(spans) and spans[j][0] <= ln:
            _, _, sid, end = spans[j]
            stack.append((end, sid))
            j += 1
        stack = [(end, sid) for end, sid in stack if end >= ln]
        out.append(stack[-1][1] if stack else None)
    return out


def repeated_lines(lines: pl.DataFrame, min_pages: int = 3, share: float = 0.2) -> set[int]:
    """Line numbers of running heads, footers and other boilerplate: a short line whose text, digits aside
    (page numbers, dates), is printed on at least ``min_pages`` pages and ``share`` of the document's pages."""
    if lines.height == 0:
        return set()
    n_pages = lines["page"].n_unique()
    need = max(min_pages, int(share * n_pages + 0.999))
    shape = pl.col("text").str.to_lowercase().str.replace_all(r"\d+", "#").str.strip_chars()
    keyed = lines.select("line_no", "page", shape.alias("shape")).filter(pl.col("shape").str.len_chars() <= 80)
    common = keyed.group_by("shape").agg(pl.col("page").n_unique().alias("pages")).filter(pl.col("pages") >= need)
    return set(keyed.join(common.select("shape"), on="shape")["line_no"].to_list())


_WORD = r"[A-Za-z]{2,}"


def build_embed_windows(lines: pl.DataFrame, toc: pl.DataFrame, size: int = 4, min_words: int = 3,
                        skip_repeated: bool = True) -> pl.DataFrame:
    """The windows that are embedded: every line in at most one window (up to ``size`` consecutive lines inside one
    section, no overlap), so no line is embedded twice. Running heads and footers (``repeated_lines``) are left
    out of the text, and windows with fewer than ``min_words`` words of two letters or more (table rows of numbers,
    page furniture) are not embedded at all: BM25's windows (``build_windows``, unchanged) still index every line.
    """
    if lines.height == 0:
        return pl.DataFrame(schema=WINDOW_SCHEMA)
    lines = lines.sort("line_no")
    if skip_repeated:
        drop = repeated_lines(lines)
        lines = lines.filter(~pl.col("line_no").is_in(list(drop))) if drop else lines
    line_nos = lines["line_no"].to_list()
    pages = lines["page"].to_list()
    texts = lines["text"].to_list()
    doc_id = lines["doc_id"][0] if lines.height else None
    sections = section_of_lines(line_nos, toc)
    cols: dict[str, list] = {k: [] for k in WINDOW_SCHEMA}
    start = 0
    for i in range(1, len(line_nos) + 1):
        if i < len(line_nos) and sections[i] == sections[start] and i - start < size:
            continue
        text = "\n".join(texts[start:i])
        if len(re.findall(_WORD, text)) >= min_words:
            cols["doc_id"].append(doc_id)
            cols["window_id"].append(len(cols["window_id"]))
            cols["page"].append(pages[start])
            cols["line_start"].append(line_nos[start])
            cols["line_end"].append(line_nos[i - 1])
            cols["section_id"].append(sections[start])
            cols["text"].append(text)
        start = i
    return pl.DataFrame(cols, schema=WINDOW_SCHEMA)
