"""Names asked by their role (issue #15, names): the role a legal caption, a signature block, an apposition, a title
or a defined term states with a name; a name that only shares a sentence with the role's word is not the answer."""

from __future__ import annotations

import pytest

from tasks.generate import values as V
from tasks.generate.roles import asked_role
from tests.test_reader_examples import answer, passage, q

CAPTION = passage("p1", 0, [
    "No. 24-10071", "ALICE FERNHOLT,", "an individual,", "RIVERBEND TENANTS UNION, INC.,", "a Vermont nonprofit corporation,",
    "Plaintiffs-Appellants-", "Cross Appellees,", "versus", "COUNTY OF ORLEN,", "a political subdivision,", "Defendant-Appellee."])


def test_the_company_of_a_caption_block_is_the_name_with_a_legal_form():
    a = answer(q("What company is a plaintiff?", "entity", ["company", "plaintiff"]), [CAPTION])
    assert (a.answer_found, a.value) == (True, "RIVERBEND TENANTS UNION, INC.")


def test_the_names_of_a_caption_block_take_the_role_line_under_them():
    a = answer(q("Who is the plaintiff?", "entity", ["plaintiff"]), [CAPTION])
    assert (a.value, a.caveats) == ("ALICE FERNHOLT; RIVERBEND TENANTS UNION, INC.", [])
    a = answer(q("Who is the defendant of this case?", "entity", ["defendant", "case"]),
               [passage("p1", 0, CAPTION.lines and [ln.text for ln in CAPTION.lines] + ["Case summary"])])
    assert a.value == "COUNTY OF ORLEN"


def test_a_name_beside_the_roles_word_in_prose_is_not_the_role():
    a = answer(q("Who is the defendant of this case?", "entity", ["defendant", "case"]),
               [passage("p1", 4, ["Walton represented Hanson and the other individual defendants in the Federal",
                                  "Case. Hanson testified about the ordinance."])])
    assert not a.answer_found


def test_counsel_for_a_party_is_not_the_party():
    a = answer(q("Who is the defendant?", "entity", ["defendant"]),
               [passage("p1", 9, ["Respectfully submitted,", "MARIA OSTROWSKI", "Counsel for Defendants"])])
    assert not a.answer_found
    a = answer(q("Who is the counsel for the defendants?", "entity", ["counsel", "defendants"]),
               [passage("p1", 9, ["Respectfully submitted,", "MARIA OSTROWSKI", "Counsel for Defendants"])])
    assert a.value == "MARIA OSTROWSKI"


def test_an_apposition_with_initials_names_the_judge():
    a = answer(q("The document represents which judges' opinions?", "list", ["judges", "opinions"]),
               [passage("p1", 0, ["Janet A. Wright, Esq., Dover, DE.", "R. THOMAS QUILL, Judge.", "Dear Counsel:"])])
    assert (a.answer_found, a.value) == (True, "R. THOMAS QUILL")


def test_a_signature_block_role_and_the_questions_scope():
    cover = passage("p1", 0, ["Annual Plan 2016-2018", "Dana Whitfield", "GOVERNOR", "Page 1"])
    a = answer(q("What is the name of the governor as mentioned on the first page?", "entity", ["governor"]), [cover])
    assert a.value == "Dana Whitfield"
    # "on the last page" cannot be checked against a passage: 'last' is a term no passage names
    a = answer(q("What is the name of the governor as mentioned on the last page?", "entity", ["governor", "last"]),
               [cover])
    assert not a.answer_found


def test_a_defined_term_names_the_party_of_an_agreement():
    a = answer(q("Who is the client?", "entity", ["client"]), [passage("p1", 0, [
        'This Agreement is made between Harlow Freight, LLC, a Texas limited liability company ("Client"), and',
        'Nimbus Data Co. (the "Provider").'])])
    assert a.value == "Harlow Freight, LLC"


def test_a_title_before_the_name():
    a = answer(q("Who is the special agent?", "entity", ["special agent"]),
               [passage("p1", 12, ["I, Special Agent Dana Morrow, being duly sworn, state:"])])
    assert a.value == "Dana Morrow"


@pytest.mark.parametrize("text,role", [
    ("Who is the defendant of this case?", ["defendant"]), ("What company is a plaintiff?", ["plaintiff"]),
    ("What is the name of the governor?", ["governor"]), ("Who produced the report?", None),
    ("What is the name of the company that audits the fund?", None),
    ("What is the name of the branch that has the least leaves?", None), ("Who is the plaintiff's attorney?",
                                                                      ["plaintiff", "attorney"])])
def test_the_role_a_question_asks_a_name_by(text, role):
    got = asked_role(text)
    assert (got.words if got else None) == role


def test_a_legal_form_is_part_of_a_name_and_an_acronym_expands_within_one_phrase():
    assert [v.text for v in V.find_entities("signed by Acme Holdings, Inc. on behalf of", set())
            if v.kind == "name"] == ["Acme Holdings, Inc."]
    assert V.expand_acronym("The test is, according to PIC, if the conduct would", "PIC") is None
    assert V.expand_acronym("the Public Integrity Commission (PIC) found", "PIC").text == "Public Integrity Commission"


@pytest.mark.parametrize("line,name", [
    ("Mr. Rohan Mehta is the Chairman of the Board and a partner of a law firm.", "Mr. Rohan Mehta"),
    ("The auditor of the fund, Keller Brandt LLP, reviewed the accounts.", "Keller Brandt LLP"),
    ("The plaintiff is Harlow Freight, LLC, a shipping firm.", "Harlow Freight, LLC"),
])
def test_a_copula_or_an_article_states_the_role(line, name):
    role = {"Mr. Rohan Mehta": "chairman", "Keller Brandt LLP": "auditor", "Harlow Freight, LLC": "plaintiff"}[name]
    a = answer(q(f"Who is the {role}?", "entity", [role]), [passage("p1", 3, [line])])
    assert (a.answer_found, a.value) == (True, name)


def test_a_role_a_sentence_gives_another_name_is_not_the_asked_one():
    a = answer(q("Who is the chairman?", "entity", ["chairman"]),
               [passage("p1", 3, ["Mr. Rohan Mehta, who is the Secretary of the Chairman's office, spoke first."])])
    assert not a.answer_found


@pytest.mark.parametrize("label,role,ok", [
    ("Plaintiffs-Appellees-", "plaintiff", True), ("Individual Defendants", "defendant", False),
    ("Counsel for Defendants", "defendant", False), ("Attorney for Plaintiff", "plaintiff's attorney", True),
    ("Chairman of the Board", "chairman", True), ("Health Program Lead", "lead", False),
    ("Title: Chief Executive Officer", "chief executive officer", True)])
def test_a_role_label_names_the_role_unqualified(label, role, ok):
    from tasks.generate.roles import names_role
    assert names_role(asked_role(f"Who is the {role}?"), label) is ok


def test_a_group_defined_collectively_is_not_its_last_name():
    a = answer(q("Who is the defendant?", "entity", ["defendant"]), [passage("p1", 1, [
        "Mayor Dell Tush, David King, and Richard Hanewinckel (collectively, the \u201cDefendants\u201d) moved."])])
    assert a.value != "Richard Hanewinckel"


def test_a_name_wrapped_at_a_line_break_is_read_whole():
    a = answer(q("Which court heard the federal claims?", "entity", ["court", "federal claims"]), [passage("p1", 2, [
        "The town and its officers answered the federal claims before the United States District",
        "Court for the District of Delaware in July."])])
    assert a.value == "United States District Court for the District of Delaware"
    assert "Court for the District" in a.evidence[0].quote


def test_a_line_of_capitals_ends_its_name():
    a = answer(q("What type of court is noted on the cover page?", "entity", ["type", "court"]),
               [passage("p1", 0, ["C A N A D A", "SUPERIOR COURT", "(Class Action)", "PROVINCE OF ONTARIO"])])
    assert a.value == "SUPERIOR COURT"


def test_a_month_after_a_name_and_a_full_stop_are_not_the_names():
    assert [v.text for v in V.find_entities("It was heard by the District Court in July.", set())
            if v.kind == "name"] == ["District Court"]
    assert [v.text for v in V.find_entities("Walton represented the town in the Federal Case.", set())
            if v.kind == "name"] == ["Walton", "Federal Case"]


def test_a_signature_block_with_labels():
    block = passage("p1", 40, ["SIGNATURES", "Apex Widgets, Inc.", "By: /s/ Priya Raman", "Name: Priya Raman",
                               "Title: Senior Vice President, Chief Financial Officer", "Date: May 3, 2023"])
    a = answer(q("Who is the chief financial officer?", "entity", ["chief financial officer"]), [block])
    assert a.value == "Priya Raman"


CASE = ["Superior Court of Vermont.", "Re: Martin OKAFOR", "v.", "VERMONT STATE ETHICS", "COMMISSION.",
        "C.A. No. 19A-02-004.", "Dear Counsel:"]


@pytest.mark.parametrize("role,name", [("defendant", "VERMONT STATE ETHICS COMMISSION"), ("plaintiff", "Martin OKAFOR")])
def test_a_caption_names_the_plaintiff_then_the_defendant_around_its_v(role, name):
    a = answer(q(f"Who is the {role} of this case?", "entity", [role, "case"]), [passage("p1", 0, CASE)])
    assert (a.answer_found, a.value) == (True, name)


def test_a_cited_case_is_not_the_documents_caption():
    a = answer(q("Who is the defendant?", "entity", ["defendant"]), [passage("p1", 6, [
        "explained in our prior decision, see Anderson v. Celebrezze, 460 U.S. 780, 787 (1983), and"])])
    assert not a.answer_found


def test_a_role_after_a_dash_and_a_relative_clause_that_selects_by_deed():
    a = answer(q("Who is the chief executive officer?", "entity", ["chief executive officer"]),
               [passage("p1", 2, ["Leadership team", "Tomas Eriksen – Chief Executive Officer", "Lena Voss – Chair"])])
    assert a.value == "Tomas Eriksen"


def test_a_defined_term_wrapped_over_two_lines():
    a = answer(q("Who is the client?", "entity", ["client"]), [passage("p1", 0, [
        "This Services Agreement is entered into by Harlow Freight, LLC, a Texas limited",
        'liability company ("Client"), and Nimbus Data Co. ("Provider"), as of May 1, 2023.'])])
    assert a.value == "Harlow Freight, LLC"


def test_a_role_not_stated_says_so():
    a = answer(q("Who is the defendant of this case?", "entity", ["defendant", "case"]),
               [passage("p1", 4, ["Walton represented the individual defendants in the Federal Case."])])
    assert not a.answer_found and "stated as the defendant" in a.caveats[0]


def test_which_case_asks_a_case_name():
    statement = ["The board never determined whether her immunity defense would outweigh the conflict. FN54 The",
                 "board did conclude that she could argue it."]
    a = answer(q('Which case is related to the statement that "The board never determined whether her immunity '
                 'defense would outweigh the conflict."?', "entity", ["case", "board", "immunity", "defense"]),
               [passage("p1", 12, statement)])
    assert not a.answer_found
    a = answer(q("Which case held that the signature requirement was valid?", "entity",
                 ["case", "signature requirement", "valid"]),
               [passage("p1", 6, ["The signature requirement was held valid in Jenness v. Fortson, 403 U.S. 431."])])
    assert a.value == "Jenness v. Fortson"


def test_the_signer_is_the_name_the_text_marks_as_signed():
    page = passage("p1", 15, ["I declare under penalty of perjury that the foregoing is true.", "Respectfully submitted,",
                              "/s/ Marcus Linde", "Special Agent", "Federal Bureau of Investigation"])
    a = answer(q("Which officer verified and signed the complaint?", "entity", ["officer", "verified", "signed"]), [page])
    assert a.value == "Marcus Linde"
