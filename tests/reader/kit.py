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


# a manual page whose running footer prints a date (the reader must not take it for an answer)
FOOTER = "Issue 01 (2020-09-07) Copyright © Example Technologies Co., Ltd. {}"


def page(n: int, lines: list[str], start: int) -> GenerationPassage:
    lines = lines + [FOOTER.format(n + 1)]
    return GenerationPassage(candidate_id=f"c{n}", doc_id=DOC, page=n, line_start=start,
                             line_end=start + len(lines) - 1, section="5.5 Setting watch faces",
                             lines=[PassageLine(line_no=start + i, page=n, text=t) for i, t in enumerate(lines)])


# a handbook passage with an hour count beside the asked number of days
HANDBOOK = passage("h1", 2, [
    "Employees are also classified by schedule. Full-time employees are regularly scheduled",
    "to work at least 35 hours a week. Part-time employees are regularly scheduled for fewer",
    "than 35 hours a week.",
    "2.3 Probationary Period",
    "Every new employee, and every employee who moves into a new role, begins with a",
    "probationary period of 90 calendar days. Shift swaps are allowed when both",
    "employees agree and the supervisor approves the swap."], start=51)


# a syllabus whose units list questions, not items
OUTCOMES = ["UNIT 7: Designing Structures", "STUDENTS WILL ANSWER THESE LEARNING OUTCOMES:",
            "• What are the traditional forms of structure?", "• Why do companies use teams?",
            "• How does the informal organization affect the company?", "Unit 7 Key Assignments:",
            "• Ethics report", "UNIT 8: Managing People", "STUDENTS WILL ANSWER THESE LEARNING OUTCOMES:",
            "• How do firms recruit applicants?", "• How do firms select qualified applicants? What",
            "makes a selection fair?", "• What are the key laws?", "• What trends affect labor relations?",
            "Unit 8 Key Assignments:", "• Quiz #4"]


# a quarterly table of costs: two periods a column group, money and a percentage row
COSTS = ["Operating costs for the periods were as follows (dollars in millions):",
         "Three Months Ended Nine Months Ended", "March 30,", "2024", "March 31,", "2023", "March 30,", "2024",
         "March 31,", "2023",
         "Research and development $ 1,210 $ 1,105 $ 3,480 $ 3,020",
         "Percentage of total revenue 9 % 8 % 9 % 8 %",
         "Sales and marketing $ 950 $ 990 $ 2,700 $ 2,810",
         "Total operating costs $ 2,160 $ 2,095 $ 6,180 $ 5,830"]
