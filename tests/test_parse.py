"""PDF parsing: bad inputs fail with specific errors, lines keep their invariants, outlines map to heading lines."""

from __future__ import annotations

import hashlib
import json
import pickle

import polars as pl
import pymupdf
import pytest

from tasks.corpus.parse import (
    LINE_SCHEMA,
    CorruptPdfError,
    DocumentError,
    EmptyPdfError,
    EncryptedPdfError,
    ImageOnlyPdfError,
    MissingPdfError,
    NotAPdfError,
    parse_pdf,
)
from tasks.corpus.sections import TOC_SCHEMA, outline_sections

BODY = "The quick brown fox jumps over the lazy dog near the river bank today."


def make_pdf(pages: list[list[tuple[str, float, bool]]], toc: list | None = None) -> bytes:
    """A PDF whose pages hold the given (text, font size, bold) lines, top to bottom, with an optional outline."""
    doc = pymupdf.open()
    for lines in pages:
        page = doc.new_page()
        y = 72.0
        for text, size, bold in lines:
            y += size * 1.6
            page.insert_text((72, y), text, fontsize=size, fontname="hebo" if bold else "helv")
    if toc:
        doc.set_toc(toc)
    return doc.tobytes()


def write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def body(n: int, tag: str = "") -> list[tuple[str, float, bool]]:
    return [(f"{BODY} {tag}{k}", 10, False) for k in range(n)]


# --- bad inputs ------------------------------------------------------------------------------------------------


def test_zero_byte_file_is_empty(tmp_path):
    path = write(tmp_path, "zero.pdf", b"")
    with pytest.raises(EmptyPdfError, match="zero.pdf.*0 bytes") as exc:
        parse_pdf(path)
    assert exc.value.kind == "empty" and exc.value.status == "failed"


def test_pdf_without_pages_is_empty(tmp_path):
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [] /Count 0 >>"]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for n, obj in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (n, obj)
    xref = len(out)
    out += b"xref\n0 3\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size 3 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % xref
    with pytest.raises(EmptyPdfError, match="no pages"):
        parse_pdf(write(tmp_path, "nopages.pdf", bytes(out)))


def test_text_file_renamed_pdf_is_not_a_pdf(tmp_path):
    path = write(tmp_path, "notes.pdf", b"just some notes, not a PDF\n")
    with pytest.raises(NotAPdfError, match="notes.pdf.*no %PDF- header") as exc:
        parse_pdf(path)
    assert exc.value.kind == "not_pdf"


def test_png_is_not_a_pdf(tmp_path):
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 20, 20), False)
    with pytest.raises(NotAPdfError, match="image.pdf"):
        parse_pdf(write(tmp_path, "image.pdf", pix.tobytes("png")))


def test_garbage_after_header_is_corrupt(tmp_path):
    path = write(tmp_path, "garbage.pdf", b"%PDF-1.7\n" + bytes(range(256)) * 8)
    with pytest.raises(CorruptPdfError, match="garbage.pdf.*(repair|re-download)") as exc:
        parse_pdf(path)
    assert exc.value.kind == "corrupt"


def test_truncated_pdf_is_corrupt(tmp_path):
    data = make_pdf([body(30)] * 3)
    with pytest.raises(CorruptPdfError, match="truncated.pdf"):
        parse_pdf(write(tmp_path, "truncated.pdf", data[: len(data) // 3]))


def test_password_protected_pdf_is_encrypted(tmp_path):
    doc = pymupdf.open(stream=make_pdf([body(3)]), filetype="pdf")
    data = doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="secret", owner_pw="owner")
    with pytest.raises(EncryptedPdfError, match="locked.pdf.*password.*decrypt") as exc:
        parse_pdf(write(tmp_path, "locked.pdf", data))
    assert exc.value.kind == "encrypted"


def test_owner_password_only_still_parses(tmp_path):
    doc = pymupdf.open(stream=make_pdf([body(3)]), filetype="pdf")
    data = doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner")
    assert parse_pdf(write(tmp_path, "restricted.pdf", data)).lines.height == 3


def test_image_only_pdf_asks_for_ocr(tmp_path):
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 64, 64), False)
    pix.clear_with(180)
    doc = pymupdf.open()
    for _ in range(2):
        doc.new_page().insert_image(pymupdf.Rect(72, 72, 400, 400), pixmap=pix)
    with pytest.raises(ImageOnlyPdfError, match="scan.pdf.*2 page.*OCR") as exc:
        parse_pdf(write(tmp_path, "scan.pdf", doc.tobytes()))
    assert exc.value.kind == "image_only"


def test_document_errors_pickle(tmp_path):
    err = EncryptedPdfError(tmp_path / "x.pdf", "password-protected")
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is EncryptedPdfError and str(back) == str(err) and back.path == err.path and back.kind == "encrypted"


def test_missing_file(tmp_path):
    with pytest.raises(MissingPdfError, match="absent.pdf.*not found") as exc:
        parse_pdf(tmp_path / "absent.pdf")
    assert exc.value.status == "missing"
    assert isinstance(exc.value, DocumentError)


# --- lines -----------------------------------------------------------------------------------------------------


def check_lines(doc) -> None:
    lines = doc.lines
    assert dict(lines.schema) == LINE_SCHEMA
    assert lines["line_no"].to_list() == list(range(lines.height))
    pages = lines["page"].to_list()
    assert pages == sorted(pages) and 0 <= pages[0] and pages[-1] < doc.pages
    assert lines["bbox"].list.len().unique().to_list() == [4]
    texts = lines["text"].to_list()
    assert all(t and t == t.strip() and "  " not in t for t in texts)
    assert lines["doc_id"].unique().to_list() == [doc.doc_id]


def test_lines_and_doc_id_of_a_generated_pdf(tmp_path):
    data = make_pdf([[("Big Title", 20, True)] + body(3, "a"), body(2, "b")])
    doc = parse_pdf(write(tmp_path, "gen.pdf", data))
    check_lines(doc)
    assert doc.doc_id == hashlib.sha256(data).hexdigest() and doc.n_bytes == len(data) and doc.pages == 2
    first = doc.lines.row(0, named=True)
    assert (first["text"], first["page"], first["bold"], round(first["font_size"])) == ("Big Title", 0, True, 20)
    assert doc.lines.filter(pl.col("page") == 1)["text"].to_list() == [f"{BODY} b0", f"{BODY} b1"]
    assert not doc.lines["bold"][1]


def test_heading_number_and_title_fragments_merge_into_one_line(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 100), "3.5", fontsize=11, fontname="hebo")
    page.insert_text((110, 100), "Positional Encoding", fontsize=11, fontname="hebo")
    page.insert_text((72, 130), BODY, fontsize=10, fontname="helv")
    parsed = parse_pdf(write(tmp_path, "split.pdf", doc.tobytes()))
    assert parsed.lines["text"].to_list()[0] == "3.5 Positional Encoding"


# --- toc -------------------------------------------------------------------------------------------------------


def test_outline_of_a_generated_pdf_maps_to_heading_lines(tmp_path):
    pages = [
        [("1 Introduction", 14, True)] + body(3, "i") + [("1.1 Scope", 12, True)] + body(2, "s"),
        body(2, "x") + [("2 Methods", 14, True)] + body(4, "m"),
        [("3 Results", 14, True)] + body(3, "r"),
    ]
    toc = [[1, "1 Introduction", 1], [2, "1.1 Scope", 1], [1, "2 Methods", 2], [1, "3 Results", 3]]
    doc = parse_pdf(write(tmp_path, "outline.pdf", make_pdf(pages, toc)))
    assert doc.has_outline and doc.toc_source == "outline"
    assert dict(doc.toc.schema) == TOC_SCHEMA
    rows = doc.toc.to_dicts()
    texts = doc.lines["text"].to_list()
    assert [r["title"] for r in rows] == ["1 Introduction", "1.1 Scope", "2 Methods", "3 Results"]
    assert [texts[r["line_start"]] for r in rows] == ["1 Introduction", "1.1 Scope", "2 Methods", "3 Results"]
    assert [r["level"] for r in rows] == [1, 2, 1, 1]
    assert [r["parent_id"] for r in rows] == [None, 0, None, None]
    assert [r["section_id"] for r in rows] == [0, 1, 2, 3]
    assert [(r["page_start"], r["page_end"]) for r in rows] == [(0, 0), (0, 1), (1, 1), (2, 2)]
    for a, b in zip(rows, rows[1:]):
        assert a["line_end"] == b["line_start"] - 1
    assert rows[-1]["line_end"] == doc.lines.height - 1


def test_broken_outline_targets_are_clamped(tmp_path):
    pages = [[("Alpha Part", 14, True)] + body(2, "a"), [("Beta Part", 14, True)] + body(2, "b")]
    src = pymupdf.open(stream=make_pdf(pages), filetype="pdf")
    # pymupdf's set_toc refuses bad targets, so the broken outline is handed to outline_sections directly
    broken = [[1, "Alpha Part", 1], [1, "Nowhere", -1], [1, "Beta Part", 99]]
    parsed = parse_pdf(write(tmp_path, "ok.pdf", src.tobytes()))
    out = outline_sections(parsed.lines, broken, parsed.doc_id, parsed.pages).to_dicts()
    assert [r["title"] for r in out] == ["Alpha Part", "Nowhere", "Beta Part"]
    assert [r["page_start"] for r in out] == [0, 0, 1]  # -1 -> the previous entry's page; 99 -> the last page
    assert parsed.lines["text"][out[2]["line_start"]] == "Beta Part"
    assert outline_sections(parsed.lines, [[1, "Only", 1], [1, "Ghost", 0]], parsed.doc_id, parsed.pages) is None


def test_pdf_without_outline_recovers_headings(tmp_path):
    pages = [
        [("Annual Overview", 20, False)] + body(8, "o"),
        [("Regional Results", 20, False)] + body(8, "r"),
        [("Outlook", 20, False)] + body(8, "u"),
    ]
    doc = parse_pdf(write(tmp_path, "plain.pdf", make_pdf(pages)))
    assert not doc.has_outline and doc.toc_source == "headings"
    assert doc.toc["title"].to_list() == ["Annual Overview", "Regional Results", "Outlook"]


def test_pdf_without_headings_falls_back_to_pages(tmp_path):
    doc = parse_pdf(write(tmp_path, "flat.pdf", make_pdf([body(4, "a"), body(4, "b"), body(4, "c")])))
    assert doc.toc_source == "pages"
    assert doc.toc["title"].to_list() == ["Page 1", "Page 2", "Page 3"]
    assert doc.toc["line_start"].to_list() == [0, 4, 8] and doc.toc["line_end"].to_list() == [3, 7, 11]


# --- real document ---------------------------------------------------------------------------------------------


def test_attention_outline(shared_data):
    path = shared_data / "attention" / "1706.03762v5.pdf"
    doc = parse_pdf(path)
    check_lines(doc)
    expected = json.loads((shared_data / "attention" / "toc_v5.json").read_text())
    toc = doc.toc.to_dicts()
    assert doc.toc_source == "outline" and doc.pages == 15 and len(toc) == 22
    assert [(r["level"], r["title"]) for r in toc] == [(lvl, title) for lvl, title, _ in expected]
    assert {r["level"] for r in toc} == {1, 2, 3}
    texts = doc.lines["text"].to_list()
    pe = next(r for r in toc if r["title"] == "3.5 Positional Encoding")
    assert pe["page_start"] == 4 and texts[pe["line_start"]] == "3.5 Positional Encoding"
    assert toc[pe["parent_id"]]["title"] == "3 Model Architecture"
    # every entry sits on its outline page, at the line that reads its title
    for r, (_, title, page) in zip(toc, expected):
        assert r["page_start"] == page - 1
        assert texts[r["line_start"]] == title
    assert [(r["page_start"], r["line_start"]) for r in toc] == sorted((r["page_start"], r["line_start"]) for r in toc)
    # ligature glyphs (the PDF has dozens) come out as plain letters, so "fi" words match keyword search
    all_text = "\n".join(texts)
    assert not any(lig in all_text for lig in "\ufb00\ufb01\ufb02\ufb03\ufb04") and "fi" in all_text


def broken_colour_space_pdf() -> bytes:
    """A one-page PDF whose content selects a colour space that is not one: MuPDF complains, the text survives."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "Net sales were 42 million in 2023.")
    bogus = doc.get_new_xref()
    doc.update_object(bogus, "<< /Foo 1 >>")
    resources = int(doc.xref_get_key(page.xref, "Resources")[1].split()[0])
    doc.xref_set_key(resources, "ColorSpace", f"<< /CS9 {bogus} 0 R >>")
    content = page.get_contents()[0]
    doc.update_stream(content, b"/CS9 cs 0.5 sc\n" + doc.xref_stream(content))
    return doc.tobytes()


def test_mupdf_complaints_go_to_the_log_not_stdout(tmp_path, capfd, caplog):
    # MuPDF writes "MuPDF error: ..." on file descriptor 1 unless told not to, which broke `arbiter eval --json`
    path = tmp_path / "broken-colour-space.pdf"
    path.write_bytes(broken_colour_space_pdf())
    with caplog.at_level("WARNING", logger="arbiter.parse"):
        parsed = parse_pdf(path)
    out, _ = capfd.readouterr()
    assert "MuPDF" not in out and out == ""
    assert parsed.lines["text"].to_list() == ["Net sales were 42 million in 2023."]
    assert any("broken-colour-space.pdf: MuPDF reported" in r.getMessage() for r in caplog.records)
