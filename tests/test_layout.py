"""The house's layout holds: one folder per brick, no import circles, imports one way (between the top-level
packages, and between the bricks of tasks/ in the order the data flows), lazy imports explained.

Reads the source (``ast``), imports nothing of the project: a module pair that imports each other, an import that
runs upward (schemas <- warehouse <- tasks <- flows <- deployments), or an import inside a function without a
comment saying why fails here, naming the file and line.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("schemas", "warehouse", "tasks", "flows", "deployments")
LAYER = {name: i for i, name in enumerate(PACKAGES)}
# The README's bricks and their folders (the README names each one).
BRICKS = ("corpus", "questions", "detect", "arbiter", "generate", "llm", "evaluate", "report")
# tasks/ in the order the data flows, each floor importing only floors below it: the shared modules under everything
# (the words: tokens, stems, stopwords; the file helpers; then term matching over the words); the corpus and the LLM
# client beside each other; then questions <- detect <- arbiter <- generate <- evaluate <- report; the provider
# registry, then the one walk on top.
FLOORS = (("tasks.words", "tasks.files"), ("tasks.terms",), ("tasks.corpus", "tasks.llm"), ("tasks.questions",),
          ("tasks.detect",), ("tasks.arbiter",), ("tasks.generate",), ("tasks.evaluate",), ("tasks.report",),
          ("tasks.providers",), ("tasks.pipeline",))
# The CLI modules import each command's flow when it runs (their docstrings say why); `arbiter serve` reads the
# deployments, which import the flows: the one edge above the flows.
LAZY_BY_DESIGN = {"flows/cli.py", "flows/cli_ops.py", "flows/cli_eval.py", "flows/cli_learned.py", "flows/cli_corpus.py"}
UPWARD_BY_DESIGN = {("flows.cli_ops", "deployments")}


def _module(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> dict[str, Path]:
    return {_module(p): p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py")}


def _imports(path: Path, modules: dict[str, Path]):
    """(target module, line, lazy) for every project import, skipping ``if TYPE_CHECKING:`` blocks."""
    tree = ast.parse(path.read_text())
    top = {id(n) for n in tree.body}
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING":
            skip.update(id(n) for n in ast.walk(node))
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        for target in targets:
            if target in modules:
                yield target, node.lineno, id(node) not in top


def _graph() -> dict[str, set[str]]:
    modules = _sources()
    return {m: {t for t, _, _ in _imports(p, modules) if t != m} for m, p in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_circles():
    assert _cycles(_graph()) == []


def test_imports_run_one_way():
    upward = [(m, t) for m, targets in _graph().items() for t in targets
              if LAYER[t.split(".")[0]] > LAYER[m.split(".")[0]] and (m, t) not in UPWARD_BY_DESIGN]
    assert upward == []


def _floor(module: str) -> tuple[int, str]:
    """(floor, the piece of it: a brick's package or a shared module) of a tasks module."""
    for i, names in enumerate(FLOORS):
        for name in names:
            if module == name or module.startswith(name + "."):
                return i, name
    raise AssertionError(f"{module} is on no floor of FLOORS: place it there")


def test_bricks_import_in_the_order_the_data_flows():
    against = []
    for module, targets in _graph().items():
        if not module.startswith("tasks."):
            continue
        floor, piece = _floor(module)
        for target in targets:
            if not target.startswith("tasks."):
                continue
            t_floor, t_piece = _floor(target)
            if t_piece != piece and t_floor >= floor:
                against.append(f"{module} imports {target}")
    assert against == []


def test_lazy_imports_say_why():
    modules = _sources()
    unexplained = []
    for path in modules.values():
        rel = path.relative_to(REPO).as_posix()
        if rel in LAZY_BY_DESIGN:
            continue
        lines = path.read_text().splitlines()
        for target, lineno, lazy in _imports(path, modules):
            if lazy and "#" not in lines[lineno - 1] and not lines[lineno - 2].lstrip().startswith("#"):
                unexplained.append(f"{rel}:{lineno} imports {target}")
    assert unexplained == []


def test_one_folder_per_brick_and_the_readme_names_them():
    readme = (REPO / "README.md").read_text()
    for brick in BRICKS:
        folder = REPO / "tasks" / brick
        assert (folder / "__init__.py").is_file(), f"tasks/{brick}/ is not a package"
        assert f"tasks/{brick}/" in readme, f"the README does not name tasks/{brick}/"
    flat = sorted(p.name for p in (REPO / "tasks").glob("*.py") if p.name != "__init__.py")
    # cross-brick glue only: one question's walk, the provider registry, the words every brick reads, the term matching
    # detection and the arbiter share, and the file helpers (sha256, the user cache) the corpus and the local LLM
    # server share
    assert flat == ["files.py", "pipeline.py", "providers.py", "terms.py", "words.py"]


def test_shared_modules_import_no_brick():
    modules = _sources()
    assert [t for t, _, _ in _imports(REPO / "tasks" / "words.py", modules)] == []
    assert [t for t, _, _ in _imports(REPO / "tasks" / "terms.py", modules)] == ["tasks.words"]
    assert [t for t, _, _ in _imports(REPO / "tasks" / "files.py", modules)] == []


# a query as code sends it: the statement's verb first, then what a statement of that verb always holds
SQL_QUERY = re.compile(r"^\s*(SELECT\b.*\bFROM\b|INSERT\s+INTO\b|UPDATE\s+\w+\s+SET\b|DELETE\s+FROM\b|"
                       r"CREATE\s+(OR\s+REPLACE\s+)?(TABLE|VIEW|INDEX)\b|WITH\s+\w+\s+AS\s*\()", re.S | re.I)


def test_sql_stays_in_the_warehouse():
    """All SQL is in warehouse/: no string outside it is a query (a message may quote one for the user to run: it
    does not start with the verb)."""
    found = []
    for pkg in ("schemas", "tasks", "flows", "deployments"):
        for path in (REPO / pkg).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL_QUERY.match(node.value):
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert found == []
