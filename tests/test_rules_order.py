"""The rules arbiter's order among passages of a quarterly report: an acronym with no token of its own ('R&D') read
as the pool spells it out. Synthetic briefs shaped like a quarterly report's passages."""

from __future__ import annotations

from schemas.contracts import CandidateBrief
from tasks.arbiter.dispatch import verdict_order
from tasks.arbiter.reading import make_query
from tasks.arbiter.rules import arbitrate
from tasks.questions.parser import parse_question

DOCUMENT = ("Northwind Traders Inc. (NWTR) · quarterly report (Form 10-Q) · fiscal Q1 2024, period ended 2023-04-30 · "
            "dated 2023-05-26")


def brief(cid: str, page: int, section: str, lines: list[str], rank: int, doc: str = "nw",
          named: bool = False) -> CandidateBrief:
    return CandidateBrief(
        question_id="q", candidate_id=cid, doc_id=doc, page=page, line_start=page * 10, line_end=page * 10 + 3,
        section=section, methods=["keywords"], ranks={"keywords": rank}, raw_scores={"keywords": 1.0 / rank},
        matched_keywords=[], snippet="\n".join(lines), rrf_score=1 / (60 + rank), document=DOCUMENT,
        preferred="the question names issuer \"Northwind\" (its name): Northwind Traders Inc." if named else "",
        preferred_group=0 if named else None)


def order(question: str, pool: list[CandidateBrief]) -> list[str]:
    out = arbitrate(parse_question("q", question), pool, [])
    return verdict_order([(v.candidate_id, v.role, v.relevance) for v in out.verdicts])


COVER = ["NORTHWIND TRADERS INC.", "FORM 10-Q", "FOR THE QUARTER ENDED April 30, 2023", "TABLE OF CONTENTS"]


def test_an_acronym_with_no_token_of_its_own_is_read_as_the_pool_spells_it():
    q = parse_question("q", "How much did Northwind spend on R&D in Q2 FY2023, in USD millions?")
    assert "R&D" in make_query(q).acronyms
    pool = [brief("cover", 1, "NORTHWIND TRADERS INC.", COVER, rank=1),
            brief("rnd", 29, "Results of Operations > Operating Expenses",
                  ["($ in millions)", "Research and development", "expenses $ 2,040 $ 1,824 $ 216 12 %"], rank=2)]
    assert order(q.text, pool)[0] == "rnd"
