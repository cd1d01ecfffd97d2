"""Hand-made questions and passages for the offline reader's tests (tests/reader/test_<rule family>.py): a parsed
question, a passage from its lines (three ways of numbering them), and the reader's answer through the provider."""

from __future__ import annotations

from schemas.contracts import AnswerWithEvidence, ParsedQuestion
from tasks.generate.extractive import ExtractiveProvider
from tasks.generate.prompts import GenerationPassage, PassageLine, build_generation_request

DOC = "d" * 64
DOC_A, DOC_B = "a" * 64, "b" * 64


def q(text: str, shape: str, primary: list[str], decomposition: str = "single") -> ParsedQuestion:
    return ParsedQuestion(question_id="q1", text=text, keywords_primary=primary, keywords_secondary=[],
                          answer_shape=shape, decomposition=decomposition, intent="t", parser="test")


def passage(cid: str, page: int, lines: list[str], start: int = 1, section: str = "") -> GenerationPassage:
    """Lines numbered from ``start`` (1 by default)."""
    return GenerationPassage(candidate_id=cid, doc_id=DOC, page=page, line_start=start,
                             line_end=start + len(lines) - 1, section=section,
                             lines=[PassageLine(line_no=start + i, page=page, text=t) for i, t in enumerate(lines)])


def passage_at(cid: str, page: int, lines: list[str], section: str = "", start: int = 10) -> GenerationPassage:
    """Lines numbered from ``start`` (10 by default), the section before it."""
    return passage(cid, page, lines, start, section)


def numbered(cid: str, page: int, lines: list[tuple[int, str]], doc: str = DOC_A,
             section: str = "") -> GenerationPassage:
    """Lines given with their own numbers, in a document of one's choice."""
    return GenerationPassage(candidate_id=cid, doc_id=doc, page=page, line_start=lines[0][0], line_end=lines[-1][0],
                             section=section, lines=[PassageLine(line_no=n, page=page, text=t) for n, t in lines])


def answer(question: ParsedQuestion, passages: list[GenerationPassage], regime: str = "batch") -> AnswerWithEvidence:
    request = build_generation_request(question, passages, regime, step=1, total=len(passages))
    return AnswerWithEvidence.model_validate_json(ExtractiveProvider().send(request).text)
