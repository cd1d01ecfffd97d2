"""Line windows: a few consecutive lines inside one section, the unit that is embedded and BM25-indexed.

Windows are a pure function of ``lines`` and ``toc`` so detection can rebuild exactly the windows that ingest
embedded (same ids) without storing their text twice. Their vectors come from blocks that run each line through
the model once (``blocks``), not from embedding each overlapping window's text.
"""

from __future__ import annotations

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
    return section_of_spans(line_nos, section_spans(toc))


def section_spans(toc: pl.DataFrame) -> list[tuple[int, int, int, int]]:
    """(line_start, level, section_id, line_end) of every section, sorted: what :func:`section_of_spans` sweeps."""
    return sorted(toc.select("line_start", "level", "section_id", "line_end").rows()) if toc.height else []


def section_of_spans(line_nos: list[int], spans: list[tuple[int, int, int, int]]) -> list[int | None]:
    """:func:`section_of_lines` from the sections' spans: each line's section depends on that line alone, so any
    sorted subset of a document's lines gets the sections the whole document gives them."""
    if not spans:
        return [None] * len(line_nos)
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

