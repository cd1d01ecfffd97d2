"""Many varied documents for scale benchmarks: ``ensure_varied_corpus(root, pages)`` writes PDFs until the corpus
holds at least ``pages`` pages, with one question per document whose gold page comes from the layout.

The hand-written sample corpus (``tasks.corpus.sample.texts``) is five documents; a corpus of 50,000 pages made by
copying them would be flattered by every dedup the pipeline does (the embedder's per-process cache embeds a block
once however often it occurs). Here each document is drawn from its own seeded generator: its organisation, units,
people, figures and sentences are drawn afresh, so no two pages print the same text and few lines repeat, except a
document's own running header and footer, as in real filings. Document ``i`` is the same whatever the target size,
so a larger corpus is a smaller one plus more documents, and the folder is reused across sizes and runs
(``manifest.jsonl`` says what is written; a version change starts it over).
"""

from __future__ import annotations

import json
import random
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tasks.corpus.sample.generate import layout, normalize_ws, render
from tasks.corpus.sample.texts import DocSpec

__all__ = ["VERSION", "VariedCorpus", "ensure_varied_corpus", "varied_document", "write_questions"]

VERSION = 1  # bump when the drawing changes: a manifest of another version is discarded

SYLLABLES = ("ka", "lor", "ven", "tri", "mo", "sa", "del", "qui", "ra", "bex", "no", "tar", "fi", "gul", "pe", "zan",
             "or", "mi", "cas", "lu", "dro", "hes", "va", "tem", "bri", "sol", "ny", "ark", "eph", "ul", "gor", "ti")
ORG_KINDS = ("Holdings", "Laboratories", "Works", "Group", "Partners", "Foundry", "Institute", "Cooperative",
             "Utilities", "Logistics", "Systems", "Trust")
DOC_KINDS = ("Annual Review", "Operations Manual", "Research Report", "Board Minutes", "Program Evaluation",
             "Technical Specification", "Sustainability Report", "Internal Audit")
SECTIONS = ("Overview", "Operations", "Markets", "Risks", "Staffing", "Facilities", "Finance", "Outlook",
            "Procedures", "Quality", "Safety", "Suppliers", "Methods", "Results", "Governance", "Maintenance",
            "Training", "Procurement", "Customers", "Energy", "Compliance", "Research", "Logistics", "Planning")
METRICS = ("revenue", "headcount", "output", "energy use", "defect rate", "order backlog", "capital spending",
           "water use", "downtime", "customer count", "shipments", "inventory", "overtime hours", "scrap volume",
           "freight cost", "warranty claims", "training hours", "average lead time", "fleet size", "payroll")
TOPICS = ("supplier contracts", "shift patterns", "the new warehouse", "pricing", "safety drills", "the audit plan",
          "spare parts", "the pension scheme", "software licences", "the vehicle fleet", "quality checks",
          "waste handling", "the apprentice program", "insurance cover", "site security", "customer returns")
MOVES = ("rose", "fell", "held steady", "climbed", "eased", "doubled", "recovered")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
FILLERS = (
    "{person}, who leads the {unit} team, reported that {metric} {move} by {pct} compared with {year}.",
    "The committee reviewed {n} proposals on {topic} and approved {m} of them at its {month} meeting.",
    "Work on {topic} at the {unit} site is expected to finish in {month} {year2}, at a cost of {money}.",
    "{person} noted that {metric} at {unit} depends mostly on {topic}, and asked for a review by {month}.",
    "Of the {n} incidents logged in {month}, {m} concerned {topic}; none led to lost working days.",
    "A survey of {n} staff found that {pct} were satisfied with {topic}, up from {pct2} a year earlier.",
    "The board set a target for {metric} of {money} by {year2} and asked {person} to report each quarter.",
    "Contracts worth {money} were signed with {n} suppliers, the largest with {org} for {topic}.",
    "Because {topic} took longer than planned, {metric} at {unit} {move} in the {quarter} quarter.",
    "{person} and {person2} visited the {unit} plant on {day} {month} to inspect {topic}.",
    "The {unit} office moved {n} roles to {topic}, which saved about {money} over the year.",
    "An external review of {topic} rated {unit} at {score} out of 10, against {score2} for the group.",
)


@dataclass(frozen=True)
class VariedCorpus:
    """A prefix of the folder's documents holding at least the pages asked for, and one question per document."""

    root: Path
    pdfs: list[Path]
    pages: int
    questions: list[dict]  # rows as ``tasks.questions.load`` reads them ("doc" relative to ``root``)


def _name(rng: random.Random, parts: int) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(parts)).capitalize()


class _Drawer:
    """The document's own cast (organisation, units, people) and a sentence maker over it."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.org = f"{_name(rng, 3)} {rng.choice(ORG_KINDS)}"
        self.units = list(dict.fromkeys(_name(rng, 2) for _ in range(8)))
        self.people = [f"{_name(rng, 2)} {_name(rng, 3)}" for _ in range(10)]

    def money(self) -> str:
        return f"${self.rng.randint(12, 98_000):,}{self.rng.choice(('', ',000', '.5 million'))}"

    def sentence(self) -> str:
        r = self.rng
        n = r.randint(3, 400)
        return r.choice(FILLERS).format(
            person=r.choice(self.people), person2=r.choice(self.people), unit=r.choice(self.units),
            metric=r.choice(METRICS), move=r.choice(MOVES), pct=f"{r.randint(1, 99)}%", pct2=f"{r.randint(1, 99)}%",
            year=r.randint(2004, 2024), year2=r.randint(2025, 2031), n=n, m=r.randint(1, n), topic=r.choice(TOPICS),
            month=r.choice(MONTHS), money=self.money(), org=f"{_name(r, 3)} {r.choice(ORG_KINDS)}",
            quarter=r.choice(("first", "second", "third", "fourth")), day=r.randint(1, 28), score=r.randint(2, 9),
            score2=r.randint(2, 9))

    def paragraph(self, extra: str | None = None) -> str:
        sentences = [self.sentence() for _ in range(self.rng.randint(2, 5))]
        if extra:
            sentences.insert(self.rng.randrange(len(sentences) + 1), extra)
        return " ".join(sentences)

    def table(self) -> list[str]:
        r = self.rng
        cols = r.sample(METRICS, r.randint(2, 4))
        start = r.randint(2004, 2018)
        rows = ["| Year | " + " | ".join(c.capitalize() for c in cols) + " |"]
        for year in range(start, start + r.randint(3, 7)):
            rows.append(f"| {year} | " + " | ".join(f"{r.randint(10, 999_999):,}" for _ in cols) + " |")
        return rows


def varied_document(i: int, seed: int = 0) -> tuple[DocSpec, dict]:
    """Document ``i``: its spec (about 4 to 48 pages of body) and one question whose answer one sentence states."""
    rng = random.Random(f"arbiter-varied/{seed}/{i}")
    d = _Drawer(rng)
    kind = rng.choice(DOC_KINDS)
    year = rng.randint(2008, 2024)
    target_lines = rng.randint(4, 48) * 40  # ~40 body lines a page at the sample's sizes
    metric, unit, fact_year = rng.choice(METRICS), rng.choice(d.units), rng.randint(1990, 2003)
    value = d.money()
    # the one sentence that answers the question: its unit, metric and year (before any filler's) occur nowhere else
    fact = f"In {fact_year}, {metric} at the {unit} unit of {d.org} was {value}."
    blocks, lines, fact_at = [], 0, None
    sections = rng.sample(SECTIONS, len(SECTIONS))
    s = 0
    while lines < target_lines:
        s += 1
        blocks.append(f"# {s}. {sections[(s - 1) % len(sections)]}{'' if s <= len(sections) else f' ({s})'}")
        lines += 3
        for sub in range(1, rng.randint(2, 4)):
            blocks.append(f"## {s}.{sub} {rng.choice(SECTIONS)} at {rng.choice(d.units)}")
            lines += 2
            for _ in range(rng.randint(2, 5)):
                roll = rng.random()
                if roll < 0.15:
                    rows = d.table()
                    blocks.append("\n".join(rows))
                    lines += len(rows) + 2
                elif roll < 0.3:
                    items = [f"- {d.sentence()}" for _ in range(rng.randint(2, 4))]
                    blocks.append("\n".join(items))
                    lines += 2 * len(items)
                else:
                    extra = None
                    if fact_at is None and lines >= target_lines // 3:
                        extra, fact_at = fact, s
                    text = d.paragraph(extra)
                    blocks.append(text)
                    lines += len(text) // 95 + 2
    if fact_at is None:
        blocks.append(d.paragraph(fact))
    name = f"doc_{i:05d}"
    header = f"{d.org} | {kind} {year}" if rng.random() < 0.7 else ""
    spec = DocSpec(name=name, title=f"{d.org}: {kind} {year}", subtitle=(f"Prepared by {rng.choice(d.people)}",),
                   body="\n\n".join(blocks), author=d.org, family=rng.choice(("helv", "tiro")),
                   outline=rng.random() < 0.5, h1_new_page=rng.random() < 0.3, header=header,
                   footer=f"{kind} {year}" if header or rng.random() < 0.5 else "",
                   body_size=rng.choice((9.5, 10.0, 10.5, 11.0)))
    question = {"qid": f"v{i:05d}", "question": f"What was {metric} at the {unit} unit of {d.org} in {fact_year}?",
                "answer": value, "evidence": fact}
    return spec, question


def _write(args: tuple[int, int, str]) -> dict:
    """Lay out and render document ``i`` under ``root/docs``; its manifest row (pages, question, gold pages)."""
    i, seed, root = args
    spec, q = varied_document(i, seed)
    lay = layout(spec)
    render(spec, lay, Path(root) / "docs" / f"{spec.name}.pdf")
    gold = sorted({p for p, block in lay.blocks if normalize_ws(q["evidence"]) in normalize_ws(block)})
    if not gold:
        raise AssertionError(f"{spec.name}: the answering sentence was not laid out")
    return {"version": VERSION, "seed": seed, "name": spec.name, "pages": len(lay.pages),
            "question": {**q, "gold_pages_0based": gold}}


def _manifest(root: Path, seed: int) -> list[dict]:
    path = root / "manifest.jsonl"
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if any(r["version"] != VERSION or r["seed"] != seed for r in rows):
        path.unlink()  # another drawing: start over (the PDFs are overwritten as they are drawn again)
        return []
    return rows


def ensure_varied_corpus(root: Path, pages: int, seed: int = 0, workers: int = 1) -> VariedCorpus:
    """The first documents of the folder that hold at least ``pages`` pages, drawing and writing those not yet
    there (``workers`` processes; each document's bytes are the same however many)."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    rows = _manifest(root, seed)
    pool = ProcessPoolExecutor(workers) if workers > 1 and sum(r["pages"] for r in rows) < pages else None
    try:
        with (root / "manifest.jsonl").open("a") as out:
            while sum(r["pages"] for r in rows) < pages:
                # a batch sized to the pages missing (~26 pages a document): a small target draws few extra documents
                missing = pages - sum(r["pages"] for r in rows)
                batch = [(len(rows) + k, seed, str(root)) for k in range(max(1, min(4 * workers, missing // 26 + 1)))]
                for row in (pool.map(_write, batch) if pool else map(_write, batch)):
                    out.write(json.dumps(row) + "\n")
                    rows.append(row)
                out.flush()
    finally:
        if pool is not None:
            pool.shutdown()
    chosen, total = [], 0
    for row in rows:
        if total >= pages:
            break
        chosen.append(row)
        total += row["pages"]
    questions = [{"dataset": "arbiter_varied", "qid": r["question"]["qid"], "doc": f"docs/{r['name']}.pdf",
                  "question": r["question"]["question"], "answer": r["question"]["answer"],
                  "gold_pages_0based": r["question"]["gold_pages_0based"], "gold_source": "generated",
                  "labels": {"answer_format": "Str", "kind": "single"}} for r in chosen]
    return VariedCorpus(root=root, pdfs=[root / "docs" / f"{r['name']}.pdf" for r in chosen], pages=total,
                        questions=questions)


def write_questions(corpus: VariedCorpus, path: Path, n: int) -> Path:
    """``n`` of the corpus's questions, spread evenly over its documents, as a JSONL question set at ``path``."""
    step = max(1, len(corpus.questions) / max(1, n))
    picked = [corpus.questions[int(k * step)] for k in range(min(n, len(corpus.questions)))]
    path.write_text("".join(json.dumps(q) + "\n" for q in picked))
    return path
