"""Names asked by their role ("Who is the defendant?", "What company is a plaintiff?", "which judges' opinions"):
the answer is a name the text states that role with, never a name that only shares a sentence with the role's word.
A role is stated next to its name in a few layouts every kind of document uses:

- a block of name lines closed by a short line of the role: a legal caption ("JOHN MONDS," / "an individual," /
  "LIBERTARIAN PARTY OF GEORGIA, INC.," / "Plaintiffs-Appellees-") or a signature block ("Rick Scott" /
  "GOVERNOR");
- an apposition: "E. SCOTT BRADLEY, Judge.", "Acme Corp., the seller,";
- a title before the name: "Judge E. Scott Bradley", "plaintiff John Monds";
- a defined term: 'Acme Corp., a Delaware corporation ("Client")';
- a label: "Plaintiff: John Monds", a signature block's "By: /s/ Jane Doe" / "Title: Chief Financial Officer";
- a copula or an article: "Mr. Shah is the Chairman of the Board", "the defendant, Acme Corp.,";
- a case's caption "A v. B": the plaintiff (petitioner) first, the defendant (respondent) after it.

In "Attorney for Plaintiff" the role is the attorney's: the asked role must be named before any "for"/"of"."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tasks.generate import values as V
from tasks.generate.sentences import STOPWORDS, PLine, matched, stem, stems
from tasks.generate.typed import Pick, Reader

_END = (r"(?=\s+(?:of|in|for|on|at|to|as|by|from|with|during|when|where|named|mentioned|listed|stated|shown|given|"
        r"who|that|according)\b|\s*[?.]|\s*$)")
_ROLE_WORDS = r"[a-z][\w'’-]*(?:\s+[a-z][\w'’-]*){0,3}?"
# "who is the defendant of this case", "what company is a plaintiff", "who are the plaintiffs"
_ROLE_ASK = re.compile(rf"(?i)^\s*(?:who|which\s+(?P<kind>[a-z]+)|what\s+(?P<kind2>[a-z]+))\s+(?:is|was|are|were)\s+"
                       rf"(?:the|a|an)\s+(?P<role>{_ROLE_WORDS}){_END}")
# "what is the name of the governor", "the names of the plaintiffs"
_NAME_OF = re.compile(rf"(?i)\bnames?\s+of\s+(?:the|a|an)\s+(?P<role>{_ROLE_WORDS}){_END}")
# "which judges' opinions": the names of the people of a role, asked through what they own
_WHOSE = re.compile(r"(?i)\bwhich\s+(?P<role>[a-z]+s)['’]\s+(?P<kind>[a-z]+)")
# a company's legal form, in its name or in the descriptor under it: what makes a name a company's
_CORPORATE = re.compile(rf"(?i)\b(?:{V.LEGAL_FORMS}|partnership)\b\.?")
_COMPANY_NOUNS = {"company", "companies", "firm", "corporation", "organisation", "organization", "business"}
_PREPOSITION = re.compile(r"\s(?:for|of|to|at|in|on|by)\s", re.I)
_SEPARATOR = re.compile(r"(?i)^\s*(?:v\.?|vs\.?|versus|and|-and-)\s*$")
_TITLE_WORD = re.compile(r"^(?:[A-Z][\w'’.&]*(?:-[A-Za-z][\w'’.&]*)*-?|and|&|the|of|for|to)$")


@dataclass(frozen=True)
class Role:
    words: list[str]  # the role's stems, the head (last) first named before any "for"/"of"
    kind: str  # the noun the question asks the name as ("company"), or what the role's names own ("opinions")
    text: str  # the role as the question words it


# a kind says what a name is, not what it does: "the name of the company that ..." asks by a deed
_KINDS = {"person", "people", "individual", "company", "companies", "firm", "organisation", "organization", "entity",
          "body", "business", "corporation", "place", "city", "state", "country", "thing", "one", "name", "title"}


def asked_role(q_text: str) -> Role | None:
    """The role a question asks a name by, or None ("Who produced the report?" asks by a deed, not a role)."""
    for pattern in (_ROLE_ASK, _NAME_OF, _WHOSE):
        if m := pattern.search(q_text):
            words = [stem(w) for w in re.findall(r"[a-z][\w-]*", m.group("role").lower().replace("'s", ""))
                     if w not in STOPWORDS]
            # "the name of the branch that has the least leaves": a relative clause selects the name by a deed, the
            # noun before it only says its kind
            deed = re.match(r"(?i)\s+(?:that|which|who|whom|whose|with|having)\b", q_text[m.end("role"):])
            if words and m.group("role").lower().split()[-1] not in _KINDS and not deed:
                kind = (m.groupdict().get("kind") or m.groupdict().get("kind2") or "").lower()
                return Role(words, kind, m.group("role"))
    return None


def names_role(role: Role, label: str) -> bool:
    """Whether a short role label ("Plaintiffs-Appellees-", "Judge", "Chairman of the Board") names the role: one
    of the roles it joins before any preposition is the asked one, no other word qualifying it ("Individual
    Defendants" are some defendants, "Counsel for Defendants" is counsel); the role's other words may follow
    ("Attorney for Plaintiff" names the plaintiff's attorney)."""
    label = re.sub(r"(?i)^(?:the|a|an)\s+", "", label.strip(" ,.;:-"))
    if not label or len(re.findall(r"[\w'’]+", label)) > 6:
        return False
    head = _PREPOSITION.split(f" {label} ", maxsplit=1)[0]
    if len(matched(role.words, stems(label.replace("-", " ")))) < len(role.words):
        return False
    for part in re.split(r"\s*(?:[-,:/&]|\band\b)\s*", head):
        pool = stems(part) - STOPWORDS
        if pool and matched(role.words[-1:], pool) and all(matched([w], set(role.words)) for w in pool):
            return True
    return False


# a signature block's labels and mark before a name or a role: "By: /s/ Jane Doe", "Name: Jane Doe", "Title: CEO"
_LEAD_LABEL = re.compile(r"^\s*(?:[A-Z][a-z]+(?:\s[a-z]+)?\s*:\s*)?(?:/s/\s*)?")


def _is_role_line(role: Role, text: str) -> bool:
    text = _LEAD_LABEL.sub("", text)
    words = text.strip(" ,.;:").split()
    return bool(words) and all(_TITLE_WORD.match(w.strip(",.;:")) for w in words) and names_role(role, text)


def _whole_name(text: str) -> str | None:
    """The line as one name ("LIBERTARIAN PARTY OF GEORGIA, INC.,", "Rick Scott"), else None: a name of two or more
    words covering the line."""
    core = _LEAD_LABEL.sub("", text).strip().rstrip(",;")
    names = [v for v in V.find_entities(core, set()) if v.kind == "name"]
    if not names or names[0].start != 0 or core[names[0].end:].strip(" ,.") or len(names[0].text.split()) < 2:
        return None
    return names[0].text.rstrip(",;")


def _block_names(rows: list[PLine], k: int) -> list[tuple[str, str, PLine]]:
    """(name, descriptor, line) of the name lines just above the role line ``rows[k]``, a lower-case descriptor
    under a name ("an individual,", "a Georgia nonprofit corporation,") read as that name's."""
    out: list[tuple[str, str, PLine]] = []
    desc, seen_label = "", False
    for j in range(k - 1, max(-1, k - 21), -1):
        text = rows[j].text.strip()
        if _SEPARATOR.match(text):
            break  # "versus": the other side's names
        if text[:1].islower() and len(text.split()) <= 12:
            desc = f"{text} {desc}".strip()
            continue
        labelled = bool(_LEAD_LABEL.match(text).group(0).strip())
        name = _whole_name(text)
        if name is None or seen_label and not labelled:
            break  # not a name; or the principal above a signer's "By: /s/ ..." lines
        seen_label = seen_label or labelled
        out.insert(0, (name, desc, rows[j]))
        desc = ""
    return out


_APPOSED = re.compile(r"^\s*(?:,|\s[-–—]|[–—])\s*(?P<role>(?:(?:the|a|an)\s+)?[\w'’-]+(?:\s+[\w'’&-]+){0,4}?)\s*(?:[,.;]|$)")
_DEFINED = re.compile(r"^\s*(?:,\s*(?:a|an|the)\s+[^,()]{1,60}?)?,?\s*\(\s*(?:the\s+)?[\"“]?(?P<role>[^\"”(),]{2,40}?)[\"”]?\s*\)")
# "Mr. Shah is the Chairman of the Board", "Walton, who was the attorney for Hanson", "appointed Lee as auditor"
_COPULA_AFTER = re.compile(r"(?i)^\s*,?\s*(?:who\s+)?(?:is|was|has been|had been|will be|became|serves as|served as|"
                           r"acts as|acted as|as)\s+(?:the|a|an|its|our|their)?\s*(?P<role>[\w'’ -]{2,60}?)\s*(?=[,.;:()]|$)")
# "the defendant, Acme Corp.," / "The plaintiff is Acme Corp."
_ROLE_BEFORE = re.compile(r"(?i)\b(?:the|its|our|their)\s+(?P<role>[\w'’ -]{2,40}?)\s*(?:,|\s(?:is|was))\s*$")


def _role_of(role: Role, words: str) -> bool:
    """Whether the first words of a clause ("President of the Society of Indian Law Firms") name the role."""
    return names_role(role, " ".join(words.split()[:6]))


def _stated_names(role: Role, text: str, prose: bool) -> list[tuple[str, str]]:
    """(name, descriptor) a line states the role with: in apposition ("E. SCOTT BRADLEY, Judge."), under a title
    before it ("Judge E. Scott Bradley", "plaintiff John Monds"), as a defined term's party ('Acme, Inc.
    ("Client")'); or a sentence (``prose``), by a copula ("Mr. Shah is the Chairman", "the defendant is Acme
    Corp."). A line's break ends an apposition or a title: "Tomas Eriksen – Chief Executive Officer" / "Lena Voss"
    are two lines of a list."""
    out = []
    for v in V.find_entities(text, set()):
        if v.kind != "name":
            continue
        name = v.text.rstrip(",")
        after, before = text[v.start + len(name):], text[:v.start]
        words = name.split()
        if prose:  # a defined term's party is prose too: 'Acme Corp., a Delaware' / 'corporation ("Client")'
            if (m := _DEFINED.match(after)) and names_role(role, m.group("role")):
                out.append((name, m.group(0)))
            elif (m := _COPULA_AFTER.match(after)) and _role_of(role, m.group("role")) and len(words) >= 2 or (
                    m := _ROLE_BEFORE.search(before)) and names_role(role, m.group("role")) and len(words) >= 2:
                out.append((name, ""))
        elif (m := _APPOSED.match(after)) and (names_role(role, m.group("role")) and (
                m.group("role")[:1].isupper() or re.match(r"(?i)the\s", m.group("role")))):
            out.append((name, ""))
        elif (m := _DEFINED.match(after)) and names_role(role, m.group("role")):
            out.append((name, m.group(0)))
        elif (m := re.search(r"(?:^|\s)([a-z][\w-]+)\s+$", before)) and names_role(role, m.group(1)) \
                and len(words) >= 2:
            out.append((name, ""))  # "plaintiff John Monds"
        else:
            for i in range(1, min(3, len(words) - 2) + 1):  # "Judge E. Scott Bradley": the title, then the name
                # a title ends its word ("Plaintiffs-Appellees-" / "Cross Appellants," is one role on two lines)
                if names_role(role, " ".join(words[:i])) and words[i][:1].isupper() and not words[i - 1].endswith(
                        "-") and not _PREPOSITION.search(f" {' '.join(words[:i + 1])} "):
                    out.append((" ".join(words[i:]), ""))
                    break
    return out


# A case is named "A v. B": the party that brings it, then the party that answers it (the appeal's sides, appellant
# and appellee, keep neither place)
_SIDES = ({"plaintiff", "petitioner", "claimant", "complainant"}, {"defendant", "respondent"})
_VERSUS_LINE = re.compile(r"(?i)^\s*(?:v|vs|versus)\.?\s*$")
_VERSUS_IN = re.compile(r"^(?P<a>.+?)\s+(?:v|vs)\.\s+(?P<b>.+?)[,.]?\s*$")


def _party(lines: list[str]) -> str | None:
    """A party's name from its caption lines ("Re: Diane HANSON"; "DELAWARE STATE PUBLIC INTEGRITY" /
    "COMMISSION."), else None: capitalised words only, no figure, no role word."""
    text = " ".join(_LEAD_LABEL.sub("", t).strip() for t in lines).strip(" ,.;")
    words = text.split()
    if not 2 <= len(words) <= 10 or re.search(r"\d", text) or not all(_TITLE_WORD.match(w.strip(",.")) for w in words):
        return None
    return None if stems(text) & (_SIDES[0] | _SIDES[1]) else text


def _case_parties(rows: list[PLine], k: int) -> tuple[str, str] | None:
    """The two parties a caption names around the "v." of line ``k``, or in the line itself ("A v. B")."""
    if m := _VERSUS_IN.match(rows[k].text):
        a, b = _party([m.group("a")]), _party([m.group("b")])
        return (a, b) if a and b else None
    if not _VERSUS_LINE.match(rows[k].text):
        return None
    above = []
    for j in range(k - 1, max(-1, k - 4), -1):
        if rows[j].text.rstrip().endswith(".") or not _party([rows[j].text]) and len(rows[j].text.split()) > 1:
            break
        above.insert(0, rows[j].text)
    below = []
    for j in range(k + 1, min(len(rows), k + 4)):
        below.append(rows[j].text)
        if re.search(r"[.,]\s*$", rows[j].text):
            break  # the party's name ends at its line's full stop or comma
    a, b = _party(above), _party(below)
    return (a, b) if a and b else None


def pick_party(r: Reader, role: Role) -> list[Pick]:
    """The party a case's caption names on the asked side of its "v." ("Who is the defendant?" -> the second),
    on the document's first pages, where a caption stands; one answer only where every caption agrees."""
    side = next((i for i, words in enumerate(_SIDES) if len(role.words) == 1 and matched(role.words, words)), None)
    if side is None:
        return []
    out = []
    for rows in r.by_passage:
        for k, ln in enumerate(rows):
            if ln.page <= 1 and (parties := _case_parties(rows, k)) and _in_scope(r, role, [ln]):
                out.append(Pick(parties[side], rows[max(0, k - 2): k + 3], 2.4 - 0.03 * ln.pidx, 0.75, 2, "party", 0.6))
    return out if len({p.value.lower() for p in out}) == 1 else []


def _in_scope(r: Reader, role: Role, lines: list[PLine]) -> bool:
    """The question's other words scope the role ("the governor ... on the last page", "the CEO of Acme"): the
    passage that states the role names them too, and is on the page the question names. What "this" points at
    ("the defendant of this case") is the document itself, no scope."""
    deictic = stems(" ".join(re.findall(r"(?i)\b(?:this|these)\s+([a-z]+)", r.q_text)))
    rest = [w for w in r.terms.words if not matched([w], set(role.words) | stems(role.kind) | deictic)]
    pool = set().union(r.titles[lines[0].pidx], *(x.stems for x in r.by_passage[lines[0].pidx]))
    return len(matched(rest, pool)) >= (len(rest) if len(rest) <= 2 else -(-2 * len(rest) // 3)) and (
        r.only_page is None or lines[0].page == r.only_page)


def pick_role(r: Reader, role: Role) -> list[Pick]:
    """The names the passages state the asked role with (see the module docstring); a question that asks the name
    as a company's ("What company is a plaintiff?") keeps the names whose legal form or descriptor is a company's.
    The names of one block are one answer ("A; B")."""
    found: list[tuple[list[tuple[str, str]], list[PLine]]] = []
    for rows in r.by_passage:
        for k, ln in enumerate(rows):
            if _is_role_line(role, ln.text) and (block := _block_names(rows, k)):
                found.append(([(n, d) for n, d, _ in block], [x for _, _, x in block] + [ln]))
            elif (lv := r.label_pair(ln)) and names_role(role, lv[0]) and (name := _whole_name(lv[1])):
                found.append(([(name, "")], [ln]))
            elif named := _stated_names(role, ln.text, False):
                found.append((named, [ln]))
        for sent in r.sents[rows[0].pidx] if rows else []:
            if named := _stated_names(role, re.sub(r"\xad\s*", "", sent.text), True):  # "Integ\xad rity": one word
                found.append((named, list(dict.fromkeys(sent.lines))))
    out = []
    for named, lines in found:
        if not _in_scope(r, role, lines):
            continue
        if role.kind in _COMPANY_NOUNS:
            named = [(n, d) for n, d in named if _CORPORATE.search(n) or _CORPORATE.search(d)]
        names = list(dict.fromkeys(n.strip(" ,;") for n, _ in named))
        if names:
            out.append(Pick("; ".join(names), lines, 2.5 - 0.03 * lines[0].pidx, 0.75, 2, "role", 0.6))
    return out or pick_party(r, role)


_SIGN_ASK = re.compile(r"(?i)\b(?:signed|signs|sign|signatory|signatories|signer|signature)\b")
# the text layer marks a signature: "/s/ Jane Doe", "By: Jane Doe"
_SIGNED = re.compile(r"^\s*(?:By\s*:\s*)?/s/\s*|^\s*By\s*:\s*(?=[A-Z])")


def pick_signer(r: Reader) -> list[Pick]:
    """ "Who signed the complaint?": the names the passages mark as signed ("/s/ Jane Doe", "By: Jane Doe"), the
    signers of one passage one answer ("A; B"), on the page the question names (a signature page seldom repeats what
    it signs)."""
    if not _SIGN_ASK.search(r.q_text):
        return []
    out = []
    for rows in r.by_passage:
        lines = [ln for ln in rows if _SIGNED.match(ln.text) and _whole_name(_SIGNED.sub("", ln.text))]
        names = list(dict.fromkeys(_whole_name(_SIGNED.sub("", ln.text)) for ln in lines))
        if names and (r.only_page is None or lines[0].page == r.only_page):
            out.append(Pick("; ".join(n for n in names if n), lines, 2.4 - 0.03 * lines[0].pidx, 0.75, 2, "signer", 0.6))
    return out

