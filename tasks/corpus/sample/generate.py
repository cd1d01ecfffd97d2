"""The project's own sample corpus: PDFs typeset with PyMuPDF from ``tasks.corpus.sample.texts``, plus a question set.

A user's clone has no ``../shared/data``; the demo and most tests stand on this corpus instead. Output is
byte-identical from run to run (fixed metadata and file ids), and the questions' gold pages come from where the
layout actually put each evidence text. ``python -m tasks.corpus.sample DEST [--bad]`` writes it.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

from tasks.corpus.sample.texts import (
    DOCUMENTS,
    INJECTION_LINE,
    QUESTIONS,
    DocSpec,
    QuestionSpec,
)

__all__ = [
    "DATASET",
    "ENCRYPTED_USER_PASSWORD",
    "INJECTION_LINE",
    "SampleCorpus",
    "generate_sample_corpus",
    "layout",
    "main",
    "normalize_ws",
    "write_bad_files",
]

DATASET = "arbiter_sample"
PDF_DATE = "D:20240916090000Z"  # fixed creation/modification date: part of the determinism contract

PAGE_W, PAGE_H = 612.0, 792.0  # US Letter
LEFT, RIGHT = 72.0, 540.0
TOP, BOTTOM = 80.0, 724.0  # body area; running header and footer sit outside it
HEADER_Y, FOOTER_Y = 48.0, 758.0
BOLD = {"helv": "hebo", "tiro": "tibo"}


@dataclass
class SampleCorpus:
    """Where a generated corpus lies: its root, the PDFs (in ``DOCUMENTS`` order) and the question file."""

    root: Path
    pdfs: list[Path]
    questions_path: Path


@dataclass
class _Page:
    spans: list[tuple[float, float, str, str, float]] = field(default_factory=list)  # x, baseline, text, font, size
    rules: list[tuple[float, float, float]] = field(default_factory=list)  # x0, x1, y
    dots: list[tuple[float, float]] = field(default_factory=list)  # bullet centres


@dataclass
class _Layout:
    pages: list[_Page]
    blocks: list[tuple[int, str]]  # (page, plain text) of every body block, for gold pages
    toc: list[list]  # [level, title, 1-based page, destination]


def normalize_ws(text: str) -> str:
    """Collapse all whitespace runs to one space: evidence is matched across line wraps."""
    return " ".join(text.split())


@functools.cache
def _advances(font: str) -> dict[str, float]:
    """Glyph advances (per 1 pt) of a built-in font for printable ASCII; far faster than measuring each word."""
    f = pymupdf.Font(font)
    return {chr(c): f.glyph_advance(c) for c in range(32, 127)}


def _width(text: str, font: str, size: float) -> float:
    adv = _advances(font)
    return sum(adv[c] for c in text) * size


def _words(text: str, family: str) -> list[tuple[str, str]]:
    """Split a paragraph into (word, font); a leading ``**lead**`` is bold."""
    words: list[tuple[str, str]] = []
    m = re.match(r"\*\*(.+?)\*\*", text)
    if m:
        if text[m.end():][:1] not in ("", " "):
            raise ValueError(f"bold lead {m.group(0)!r} must be followed by a space; move punctuation inside it")
        words += [(w, BOLD[family]) for w in m.group(1).split()]
        text = text[m.end():]
    if "**" in text:
        raise ValueError(f"bold is only allowed as a lead at the start of a paragraph: {text[:60]!r}")
    return words + [(w, family) for w in text.split()]


def _wrap(words: list[tuple[str, str]], size: float, width: float, family: str) -> list[list[tuple[str, str]]]:
    """Greedy line filling by measured word widths."""
    space = _width(" ", family, size)
    lines: list[list[tuple[str, str]]] = [[]]
    used = 0.0
    for word, font in words:
        w = _width(word, font, size)
        if lines[-1] and used + space + w > width:
            lines.append([])
            used = 0.0
        used += (space if lines[-1] else 0.0) + w
        lines[-1].append((word, font))
    return lines


def _parse(body: str) -> list[tuple]:
    """Markup (see ``tasks.corpus.sample.texts``) to blocks: ("h", level, text), ("p", text), ("li", text),
    ("table", rows), ("break",)."""
    blocks: list[tuple] = []
    para: list[str] = []
    table: list[list[str]] = []
    for raw in body.strip().splitlines() + [""]:
        line = raw.strip()
        if para and (not line or line == "<<page>>" or line.startswith(("#", "|", "- "))):
            kind = "li" if para[0].startswith("- ") else "p"
            blocks.append((kind, " ".join(para)[2 if kind == "li" else 0:]))
            para = []
        if table and not line.startswith("|"):
            blocks.append(("table", table))
            table = []
        if line == "<<page>>":
            blocks.append(("break",))
        elif line.startswith("#"):
            marks, _, title = line.partition(" ")
            blocks.append(("h", len(marks), title))
        elif line.startswith("|"):
            table.append([c.strip() for c in line.strip("|").split("|")])
        elif line:
            para.append(line)
    return blocks


class _Typesetter:
    """Places blocks top to bottom; a paragraph, bullet or table never splits across pages."""

    def __init__(self, spec: DocSpec):
        self.spec, self.size = spec, spec.body_size
        self.lead = round(spec.body_size * 1.42, 2)
        self.pages: list[_Page] = [_Page()]
        self.y = TOP
        self.blocks: list[tuple[int, str]] = []
        self.toc: list[list] = []
        self.body_on_page = False  # the title block alone does not count

    def _fits(self, height: float) -> bool:
        return self.y + height <= BOTTOM

    def new_page(self) -> None:
        self.pages.append(_Page())
        self.y = TOP
        self.body_on_page = False

    def _ensure(self, height: float, what: str) -> None:
        if height > BOTTOM - TOP:
            raise ValueError(f"{self.spec.name}: block taller than a page ({what[:60]!r}); split it in tasks/corpus/sample/texts.py")
        if not self._fits(height):
            self.new_page()

    def _put_lines(self, lines, x0: float, size: float, lead: float, family: str, centre: bool = False) -> None:
        space = _width(" ", family, size)
        for line in lines:
            self.y += lead
            total = sum(_width(w, f, size) for w, f in line) + space * (len(line) - 1)
            x = (PAGE_W - total) / 2 if centre else x0
            for font, run in itertools.groupby(line, key=lambda wf: wf[1]):
                text = " ".join(w for w, _ in run)
                self.pages[-1].spans.append((x, self.y - lead * 0.25, text, font, size))
                x += _width(text, font, size) + space

    def title(self) -> None:
        fam = self.spec.family
        for text, font, size in [(self.spec.title, BOLD[fam], 16.0)] + [(t, fam, 11.0) for t in self.spec.subtitle]:
            lines = _wrap([(w, font) for w in text.split()], size, RIGHT - LEFT, fam)
            self._put_lines(lines, LEFT, size, size * 1.45, fam, centre=True)
        self.y += self.lead * 1.5

    def heading(self, level: int, text: str) -> None:
        size = self.size + (4.5 if level == 1 else 1.5)
        lead = size * 1.4
        if level == 1 and self.spec.h1_new_page and self.body_on_page:
            self.new_page()
        space_before = (self.lead * (1.0 if level == 1 else 0.6)) if self.y > TOP else 0.0
        # keep the heading with at least three lines of what follows
        self._ensure(space_before + lead + 3 * self.lead, text)
        self.y += space_before if self.y > TOP else 0.0
        fam = self.spec.family
        self._put_lines(_wrap([(w, BOLD[fam]) for w in text.split()], size, RIGHT - LEFT, fam), LEFT, size, lead, fam)
        self.y += self.lead * 0.3
        dest = {"kind": pymupdf.LINK_GOTO, "to": pymupdf.Point(LEFT, self.y - lead - self.lead * 0.3)}
        self.toc.append([level, text, len(self.pages), dest])
        self.body_on_page = True
        self.blocks.append((len(self.pages) - 1, text))

    def paragraph(self, text: str, bullet: bool = False) -> None:
        indent = 18.0 if bullet else 0.0
        lines = _wrap(_words(text, self.spec.family), self.size, RIGHT - LEFT - indent, self.spec.family)
        self._ensure(len(lines) * self.lead, text)
        top = self.y
        self._put_lines(lines, LEFT + indent, self.size, self.lead, self.spec.family)
        self.body_on_page = True
        if bullet:
            self.pages[-1].dots.append((LEFT + 7.0, top + self.lead * 0.75 - self.size * 0.3))
        self.y += self.lead * (0.25 if bullet else 0.55)
        self.blocks.append((len(self.pages) - 1, text.replace("**", "")))

    def table(self, rows: list[list[str]]) -> None:
        fam, size = self.spec.family, self.size
        ncol = max(len(r) for r in rows)
        widths = [max(_width(r[c], BOLD[fam], size) for r in rows if c < len(r)) + 16.0 for c in range(ncol)]
        scale = min(1.0, (RIGHT - LEFT) / sum(widths))
        xs = [LEFT + sum(widths[:c]) * scale for c in range(ncol)]
        self._ensure((len(rows) + 0.8) * self.lead, " | ".join(rows[0]))
        page = self.pages[-1]
        self.body_on_page = True
        page.rules.append((LEFT, xs[-1] + widths[-1] * scale, self.y + 2.0))
        for i, row in enumerate(rows):
            self.y += self.lead
            for c, cell in enumerate(row):
                page.spans.append((xs[c] + 4.0, self.y - self.lead * 0.25, cell, BOLD[fam] if i == 0 else fam, size))
            if i == 0:
                page.rules.append((LEFT, xs[-1] + widths[-1] * scale, self.y + 2.0))
            self.blocks.append((len(self.pages) - 1, " ".join(row)))
        page.rules.append((LEFT, xs[-1] + widths[-1] * scale, self.y + 3.0))
        self.y += self.lead * 0.8


def layout(spec: DocSpec) -> _Layout:
    """Typeset one document into positioned spans (pure: no PDF is written)."""
    if not "".join((spec.title, *spec.subtitle, spec.header, spec.footer, spec.body)).isascii():
        raise ValueError(f"{spec.name}: text must be ASCII (built-in PDF fonts); replace the non-ASCII characters")
    ts = _Typesetter(spec)
    ts.title()
    previous = ""
    for block in _parse(spec.body):
        if previous == "li" and block[0] != "li":
            ts.y += ts.lead * 0.35  # close a bullet list with the paragraph gap
        previous = block[0]
        if block[0] == "h":
            ts.heading(block[1], block[2])
        elif block[0] in ("p", "li"):
            ts.paragraph(block[1], bullet=block[0] == "li")
        elif block[0] == "table":
            ts.table(block[1])
        else:
            ts.new_page()
    return _Layout(ts.pages, ts.blocks, ts.toc)


def _file_id(name: str) -> str:
    digest = hashlib.md5(f"arbiter-sample/{name}".encode()).hexdigest().upper()
    return f"[<{digest}><{digest}>]"


def _pdf_bytes(doc: pymupdf.Document, name: str, meta: dict[str, str]) -> bytes:
    """Serialize with fixed metadata and trailer /ID so that two runs give identical bytes."""
    doc.set_metadata({"creator": "arbiter sample corpus", "producer": "PyMuPDF", "creationDate": PDF_DATE,
                      "modDate": PDF_DATE, "keywords": "", "subject": "", **meta})
    doc.xref_set_key(-1, "ID", _file_id(name))
    return doc.tobytes(garbage=3, deflate=True, no_new_id=True)


def _runs(spans):
    """Merge spans of consecutive lines that share x, font and line step into one multi-line insert_text call
    (each call costs a font lookup on the page, which dominates the run time)."""
    runs: list[list] = []
    for x, y, text, font, size in spans:
        last = runs[-1] if runs else None
        if last and (last[0], last[4], last[5]) == (x, font, size) and (
            (len(last[3]) == 1 and 0 < y - last[1] < 2.5 * size)
            or (len(last[3]) > 1 and abs(y - last[1] - last[2] * len(last[3])) < 1e-6)
        ):
            if len(last[3]) == 1:
                last[2] = y - last[1]
            last[3].append(text)
        else:
            runs.append([x, y, size, [text], font, size])
    return runs


def render(spec: DocSpec, lay: _Layout, path: Path) -> None:
    """Write the laid-out document as a PDF, with running header/footer and (if wanted) an outline."""
    doc = pymupdf.open()
    total = len(lay.pages)
    for n, pg in enumerate(lay.pages, start=1):
        page = doc.new_page(width=PAGE_W, height=PAGE_H)
        shape = page.new_shape()
        for x, y, step, texts, font, size in _runs(pg.spans):
            shape.insert_text((x, y), texts, fontname=font, fontsize=size, lineheight=step / size)
        for x0, x1, y in pg.rules:
            shape.draw_line((x0, y), (x1, y))
        shape.finish(width=0.6, color=(0, 0, 0))
        for cx, cy in pg.dots:
            shape.draw_circle((cx, cy), 1.8)
        shape.finish(color=(0, 0, 0), fill=(0, 0, 0))
        grey = (0.35, 0.35, 0.35)
        if spec.header:
            shape.insert_text((LEFT, HEADER_Y), spec.header, fontname="helv", fontsize=8, color=grey)
            shape.draw_line((LEFT, HEADER_Y + 6), (RIGHT, HEADER_Y + 6))
            shape.finish(width=0.4, color=grey)
        if spec.header or spec.footer:
            shape.insert_text((LEFT, FOOTER_Y), spec.footer, fontname="helv", fontsize=8, color=grey)
            label = f"Page {n} of {total}"
            shape.insert_text((RIGHT - _width(label, "helv", 8), FOOTER_Y), label, fontname="helv", fontsize=8,
                              color=grey)
        shape.commit()
    if spec.outline:
        doc.set_toc(lay.toc)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_pdf_bytes(doc, spec.name, {"title": spec.title, "author": spec.author}))
    doc.close()


def _gold_pages(q: QuestionSpec, layouts: dict[str, _Layout]) -> list[int] | None:
    """Pages that print the question's evidence; [] when unanswerable; None for multi-document questions."""
    if q.kind == "unanswerable":
        return []
    if len(q.docs) > 1:
        return None
    pages: set[int] = set()
    for doc, text in q.evidence:
        hits = {p for p, block in layouts[doc].blocks if normalize_ws(text) in normalize_ws(block)}
        if not hits:
            raise ValueError(f"{q.qid}: evidence {text!r} is not in {doc}; fix QUESTIONS in tasks/corpus/sample/texts.py")
        pages |= hits
    return sorted(pages)


def _question_row(q: QuestionSpec, layouts: dict[str, _Layout]) -> dict:
    docs = [f"docs/{d}.pdf" for d in q.docs]
    return {
        "dataset": DATASET,
        "qid": q.qid,
        "doc": docs[0] if len(docs) == 1 else docs,
        "question": q.question,
        "answer": q.answer,
        "gold_pages_0based": _gold_pages(q, layouts),
        "gold_source": "generated",
        "labels": {"answer_format": q.answer_format, "kind": q.kind},
    }


def generate_sample_corpus(dest: Path) -> SampleCorpus:
    """Write ``dest/docs/*.pdf`` and ``dest/questions.jsonl``; deterministic, overwrites earlier output."""
    dest = Path(dest)
    layouts = {spec.name: layout(spec) for spec in DOCUMENTS}
    pdfs = []
    for spec in DOCUMENTS:
        path = dest / "docs" / f"{spec.name}.pdf"
        render(spec, layouts[spec.name], path)
        pdfs.append(path)
    questions_path = dest / "questions.jsonl"
    rows = [json.dumps(_question_row(q, layouts)) for q in QUESTIONS]
    questions_path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return SampleCorpus(root=dest, pdfs=pdfs, questions_path=questions_path)


ENCRYPTED_USER_PASSWORD = "arbiter-sample"
_PDF_PAD = bytes.fromhex("28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A")


def _rc4(key: bytes, data: bytes) -> bytes:
    s, j = list(range(256)), 0
    for i in range(256):
        j = (j + s[i] + key[i % len(key)]) % 256
        s[i], s[j] = s[j], s[i]
    out, i, j = bytearray(), 0, 0
    for byte in data:
        i = (i + 1) % 256
        j = (j + s[i]) % 256
        s[i], s[j] = s[j], s[i]
        out.append(byte ^ s[(s[i] + s[j]) % 256])
    return bytes(out)


def _encrypted_pdf(text: str, user_pw: str, owner_pw: str) -> bytes:
    """One page under the standard security handler (RC4 128-bit, R3; PDF 32000-1, 7.6.3.3 algorithms 2, 3, 5).

    Written by hand because MuPDF draws a random /ID whenever it encrypts, which would break determinism.
    """
    def md5(b: bytes) -> bytes:
        return hashlib.md5(b).digest()

    def pad(pw: str) -> bytes:
        return (pw.encode("latin-1") + _PDF_PAD)[:32]

    def rc4_rounds(key: bytes, data: bytes) -> bytes:
        for i in range(20):
            data = _rc4(bytes(b ^ i for b in key), data)
        return data

    file_id, perms = md5(b"arbiter-sample/encrypted"), -4
    okey = md5(pad(owner_pw))
    for _ in range(50):
        okey = md5(okey)
    o = rc4_rounds(okey, pad(user_pw))
    key = md5(pad(user_pw) + o + perms.to_bytes(4, "little", signed=True) + file_id)
    for _ in range(50):
        key = md5(key)
    u = rc4_rounds(key, md5(_PDF_PAD + file_id)) + bytes(16)
    stream = _rc4(md5(key + (4).to_bytes(3, "little") + b"\0\0"), f"BT /F1 14 Tf 72 720 Td ({text}) Tj ET".encode())
    objects = [
        b"<</Type/Catalog/Pages 2 0 R>>",
        b"<</Type/Pages/Kids[3 0 R]/Count 1>>",
        b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]/Resources<</Font<</F1 5 0 R>>>>/Contents 4 0 R>>",
        b"<</Length %d>>stream\n%s\nendstream" % (len(stream), stream),
        b"<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>",
        f"<</Filter/Standard/V 2/R 3/Length 128/P {perms}/O<{o.hex()}>/U<{u.hex()}>>>".encode(),
    ]
    out, offsets = bytearray(b"%PDF-1.7\n"), []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (n, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += (f"trailer\n<</Size {len(objects) + 1}/Root 1 0 R/Encrypt 6 0 R/ID[<{file_id.hex()}><{file_id.hex()}>]>>"
            f"\nstartxref\n{xref}\n%%EOF\n").encode()
    return bytes(out)


def _image_only_pdf() -> bytes:
    """A 'scanned' page: text rendered to a grey Pixmap and placed as the page's only content."""
    src = pymupdf.open()
    scan = src.new_page(width=PAGE_W, height=PAGE_H)
    scan.insert_textbox(pymupdf.Rect(LEFT, 90, RIGHT, 400), "NOTICE OF RENEWAL\n\nThis page was scanned from "
                        "paper. It carries no text layer, so only OCR could read it.", fontname="helv", fontsize=14)
    pix = scan.get_pixmap(dpi=72, colorspace=pymupdf.csGRAY)
    doc = pymupdf.open()
    page = doc.new_page(width=PAGE_W, height=PAGE_H)
    page.insert_image(page.rect, pixmap=pix)
    return _pdf_bytes(doc, "image_only", {"title": "Scanned notice", "author": "arbiter sample corpus"})


def bad_file_bytes() -> dict[str, bytes]:
    """File name -> content of each bad input."""
    garbage, block = bytearray(), b"arbiter-sample/corrupt"
    while len(garbage) < 4096:
        block = hashlib.sha256(block).digest()
        garbage += block
    return {
        "corrupt.pdf": b"%PDF-1.7\n" + bytes(garbage),
        "encrypted.pdf": _encrypted_pdf("Confidential renewal terms", ENCRYPTED_USER_PASSWORD, "arbiter-owner"),
        "empty.pdf": b"",
        "image_only.pdf": _image_only_pdf(),
        "not_a_pdf.pdf": b"Quarterly notes\n\nThis is a plain text file that was saved with a .pdf extension.\n",
    }


def write_bad_files(dest: Path) -> dict[str, Path]:
    """Write the bad inputs under ``dest``; returns {"corrupt": path, "encrypted": ..., "empty": ...,
    "image_only": ..., "not_a_pdf": ...}. Deterministic."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, data in bad_file_bytes().items():
        (dest / name).write_bytes(data)
        out[name.removesuffix(".pdf")] = dest / name
    return out


def main(argv: list[str] | None = None) -> int:
    """CLI: ``python -m tasks.corpus.sample DEST [--bad]``."""
    parser = argparse.ArgumentParser(prog="python -m tasks.corpus.sample", description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path, help="folder to write docs/ and questions.jsonl into")
    parser.add_argument("--bad", action="store_true", help="also write bad input files under DEST/bad/")
    args = parser.parse_args(argv)
    corpus = generate_sample_corpus(args.dest)
    for pdf in corpus.pdfs:
        print(pdf)
    print(corpus.questions_path)
    if args.bad:
        for path in write_bad_files(args.dest / "bad").values():
            print(path)
    return 0

