"""The learned arbiter: a small local scikit-learn model trained on logged (candidate, decision) pairs (seed 001:
"train the arbiter on your own data ... runs in milliseconds"), behind the same Provider interface as the others.

Labels come either from gold pages (a pooled candidate on a gold page of its question's document is a keep, every
other one a discard; an unanswerable question's pool is all discards) or from the verdicts some arbiter logged in a
run (primary/supporting = keep, unless that call said not_found). Features: :mod:`tasks.arbiter.features`.

Artifacts are versioned in the warehouse home: ``models/learned-arbiter-<n>.joblib`` (the estimator), its JSON
metadata (source, counts, feature names, sklearn version, sha256 of the file, cross-validated holdout metrics,
thresholds) and ``models/learned-arbiter-latest.json`` pointing at the newest. Loading checks the hash and the
feature names. The joblib file is a pickle: load only artifacts this warehouse wrote.

Decisions: candidates by predicted probability p; not_found when the best p is under ``floor`` (chosen on the
training data's out-of-fold predictions); otherwise the best is primary, others primary / supporting / tangential /
discarded by p. relevance = p, so the dispatcher's thresholds read a probability. The model judges candidates one
by one against their pool; it does not look for contradictions (``contradicts`` stays empty).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from schemas.contracts import ArbiterOutput, CandidateBrief, CandidateVerdict, ParsedQuestion
from tasks.arbiter.features import FEATURE_NAMES, PoolFeatures, as_question, pool_features
from tasks.llm.base import LLMRequest, ProviderReply

log = logging.getLogger("arbiter.learned")

POSITIVE_ROLES = ("primary", "supporting")
MODEL_KINDS = ("logreg", "hgb")
PREFIX = "learned-arbiter-"
LATEST = "learned-arbiter-latest.json"
FLOOR_GRID = tuple(round(0.02 * i, 2) for i in range(49))  # 0.00 .. 0.96
TOP_K = 3  # an answerable question is served when a kept page is in the top 3 (the dispatcher's max_primary)
# p is on a class-balanced scale (0.5 = as likely kept as not); the floor is re-chosen at training
DEFAULT_THRESHOLDS = {"floor": 0.5, "primary": 0.85, "supporting": 0.5, "tangential": 0.2}
TRAIN_COMMAND = "`arbiter train-arbiter --gold QUESTIONS.jsonl` or `arbiter train-arbiter --from-run RUN_ID`"


class ArtifactNotFoundError(FileNotFoundError):
    """No trained model in the models folder."""


class ArtifactError(RuntimeError):
    """An artifact that cannot be used as is (tampered, or built for other features)."""


@dataclass
class LabeledPool:
    """One question's pool with a 0/1 label per candidate; ``group`` is the unit kept whole in holdout splits."""

    question: ParsedQuestion
    candidates: list[CandidateBrief]
    labels: list[int]
    group: str
    answerable: bool


@dataclass
class TrainedArbiter:
    estimator: Any
    kind: str
    thresholds: dict[str, float]
    holdout: dict[str, Any]
    counts: dict[str, int]
    source: dict[str, Any] = field(default_factory=dict)


# -- labelled pools from warehouse rows (warehouse.training) ------------------------------------------------------
def _by_question(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    out: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        out.setdefault(r["question_id"], []).append(r)
    return out


def _question(r: Mapping[str, Any]) -> ParsedQuestion:
    return ParsedQuestion(question_id=r["question_id"], text=r["text"],
                          keywords_primary=list(r["keywords_primary"] or []),
                          keywords_secondary=list(r["keywords_secondary"] or []), answer_shape=r["answer_shape"],
                          decomposition=r["decomposition"], intent=r["intent"] or "", parser=r["parser"] or "")


def _candidate(r: Mapping[str, Any]) -> CandidateBrief:
    return CandidateBrief(question_id=r["question_id"], candidate_id=r["candidate_id"], doc_id=r["doc_id"],
                          page=r["page"], line_start=r["line_start"], line_end=r["line_end"],
                          section_id=r["section_id"], section=r["section"] or "", methods=list(r["methods"] or []),
                          ranks=dict(r["ranks"]), raw_scores=dict(r["raw_scores"]),
                          matched_keywords=list(r["matched_keywords"] or []), snippet=r["snippet"] or "",
                          rrf_score=r["rrf_score"])


def _group(r: Mapping[str, Any]) -> str:
    return "|".join(sorted(r["doc_ids"])) if r.get("doc_ids") else r["question_id"]


def pools_from_gold(rows: Sequence[Mapping[str, Any]],
                    gold: Mapping[str, list[int] | None] | None = None) -> list[LabeledPool]:
    """Label pooled candidates by gold pages: ``gold`` (qid -> pages, e.g. from a question file) or the rows' own
    ``gold_pages``. Questions without page gold (None) are left out; [] marks an unanswerable question."""
    pools = []
    for qid, rs in _by_question(rows).items():
        pages = gold.get(qid) if gold is not None else rs[0]["gold_pages"]
        if pages is None:
            continue
        docs = set(rs[0]["doc_ids"]) if rs[0].get("doc_ids") else None
        labels = [int(r["page"] in pages and (docs is None or r["doc_id"] in docs)) for r in rs]
        pools.append(LabeledPool(_question(rs[0]), [_candidate(r) for r in rs], labels, _group(rs[0]),
                                 answerable=bool(pages)))
    return pools


def pools_from_verdicts(rows: Sequence[Mapping[str, Any]]) -> list[LabeledPool]:
    """Label candidates by a logged arbiter's verdicts: primary/supporting = 1, unless its call said not_found.
    Verdicts flagged by validation (missing from the arbiter's reply) are no decision and are left out."""
    pools = []
    for _, rs in _by_question(rows).items():
        kept = [r for r in rs if not r["flagged"]]
        if not kept:
            continue
        said_nf = bool(kept[0].get("arbiter_not_found"))
        labels = [int(r["role"] in POSITIVE_ROLES and not said_nf) for r in kept]
        pools.append(LabeledPool(_question(kept[0]), [_candidate(r) for r in kept], labels, _group(kept[0]),
                                 answerable=any(labels)))
    return pools


# -- training -----------------------------------------------------------------------------------------------------
def make_estimator(kind: str, seed: int = 0):
    """A fresh scikit-learn classifier, class-balanced: a scaled, strongly regularised logistic regression
    ('logreg', the default: sub-millisecond to score) or gradient-boosted trees ('hgb')."""
    if kind == "logreg":
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        return make_pipeline(StandardScaler(), LogisticRegression(C=0.03, class_weight="balanced", max_iter=3000))
    if kind == "hgb":
        from sklearn.ensemble import HistGradientBoostingClassifier

        return HistGradientBoostingClassifier(max_iter=150, learning_rate=0.05, max_leaf_nodes=15,
                                              min_samples_leaf=20, l2_regularization=1.0,
                                              class_weight="balanced", random_state=seed)
    raise ValueError(f"unknown model kind {kind!r}; choose one of {', '.join(MODEL_KINDS)}")


def _matrix(pools: Sequence[LabeledPool]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stacked features, labels, and the pool index of every row."""
    mats = [pool_features(p.question, p.candidates).matrix for p in pools]
    width = len(FEATURE_NAMES)
    x = np.vstack(mats) if mats else np.zeros((0, width))
    y = np.array([lab for p in pools for lab in p.labels], dtype=int)
    idx = np.array([i for i, p in enumerate(pools) for _ in p.labels], dtype=int)
    return x, y, idx


def _proba(estimator, x: np.ndarray) -> np.ndarray:
    from threadpoolctl import threadpool_limits

    if not len(x):
        return np.zeros(0)
    with threadpool_limits(1):  # a 30-row pool gains nothing from threads; oversubscribed OpenMP costs 100x
        return estimator.predict_proba(x)[:, 1]


def _fit(kind: str, x: np.ndarray, y: np.ndarray, seed: int, weight: np.ndarray | None = None):
    """Fit; ``weight`` (1 / pool size per row) makes every question count once, whatever its pool's size."""
    from threadpoolctl import threadpool_limits

    if len(set(y.tolist())) < 2:
        raise ValueError(f"training needs both kept and discarded candidates; got {len(y)} pairs all labelled "
                         f"{y[0] if len(y) else '-'} (a gold set whose pools never reach a gold page, or a run whose "
                         "arbiter kept nothing?)")
    est = make_estimator(kind, seed)
    key = f"{est.steps[-1][0]}__sample_weight" if hasattr(est, "steps") else "sample_weight"
    with threadpool_limits(1):
        return est.fit(x, y, **({key: weight} if weight is not None else {}))


def _pool_weights(idx: np.ndarray) -> np.ndarray:
    return 1.0 / np.bincount(idx)[idx] if len(idx) else np.zeros(0)


def _ranked_pages(p: LabeledPool, probs: np.ndarray) -> list[int]:
    """Page labels (1 = a kept page) in order of the candidates' probability, pages deduplicated."""
    order = sorted(range(len(p.candidates)), key=lambda i: (-probs[i], -p.candidates[i].rrf_score))
    seen: dict[tuple[str, int], int] = {}
    for i in order:
        c = p.candidates[i]
        seen.setdefault((c.doc_id, c.page), 0)
        seen[(c.doc_id, c.page)] |= p.labels[i]
    return list(seen.values())


def choose_floor(pools: Sequence[LabeledPool], probs: Sequence[np.ndarray]) -> tuple[float, float]:
    """The not-found floor that maximises decision accuracy over the pools (an answerable question is right when
    a kept page is among its TOP_K best and its best is above the floor, an unanswerable one when its best is below); lowest on ties."""
    best = (-1.0, DEFAULT_THRESHOLDS["floor"])
    for floor in FLOOR_GRID:
        right = 0
        for p, pr in zip(pools, probs):
            top = float(pr.max()) if len(pr) else 0.0
            if p.answerable:
                right += top >= floor and 1 in _ranked_pages(p, pr)[:TOP_K]
            else:
                right += top < floor
        acc = right / len(pools) if pools else 0.0
        if acc > best[0]:
            best = (acc, floor)
    return best[1], round(best[0], 4)


def summarize(pools: Sequence[LabeledPool], probs: Sequence[np.ndarray], floor: float) -> dict[str, Any]:
    """Page hit@1/@5 (answerable questions), not-found precision/recall at ``floor``, candidate AUC / AP."""
    from sklearn.metrics import average_precision_score, roc_auc_score

    ans = [(p, pr) for p, pr in zip(pools, probs) if p.answerable]
    ranked = [_ranked_pages(p, pr) for p, pr in ans]
    rrf = [_ranked_pages(p, np.array([c.rrf_score for c in p.candidates])) for p, _ in ans]
    said = [len(pr) == 0 or float(pr.max()) < floor for pr in probs]
    tp = sum(1 for p, s in zip(pools, said) if s and not p.answerable)
    unans = sum(1 for p in pools if not p.answerable)
    y = np.concatenate([np.array(p.labels) for p in pools]) if pools else np.zeros(0)
    s = np.concatenate(list(probs)) if pools else np.zeros(0)
    two = len(set(y.tolist())) == 2

    def rate(xs: list[bool]) -> float | None:
        return round(sum(xs) / len(xs), 4) if xs else None

    return {
        "questions": len(pools), "answerable": len(ans), "unanswerable": unans,
        "page_hit_at_1": rate([r[:1] == [1] for r in ranked]), "page_hit_at_5": rate([1 in r[:5] for r in ranked]),
        "rrf_page_hit_at_1": rate([r[:1] == [1] for r in rrf]), "rrf_page_hit_at_5": rate([1 in r[:5] for r in rrf]),
        "not_found_precision": round(tp / sum(said), 4) if sum(said) else None,
        "not_found_recall": round(tp / unans, 4) if unans else None, "not_found_predicted": int(sum(said)),
        "candidate_roc_auc": round(float(roc_auc_score(y, s)), 4) if two else None,
        "candidate_average_precision": round(float(average_precision_score(y, s)), 4) if two else None,
    }


def out_of_fold(pools: Sequence[LabeledPool], kind: str = "logreg", folds: int = 4, seed: int = 0,
                data: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> list[np.ndarray] | None:
    """Each pool's probabilities from a model fitted without its group (GroupKFold); None with under 2 groups."""
    from sklearn.model_selection import GroupKFold

    groups = sorted({p.group for p in pools})
    if len(groups) < 2:
        return None
    x, y, idx = data if data is not None else _matrix(pools)
    gid = np.array([groups.index(pools[i].group) for i in idx])
    out = np.zeros(len(y))
    for train, test in GroupKFold(n_splits=min(folds, len(groups))).split(x, y, gid):
        if len(set(y[train].tolist())) < 2:
            out[test] = float(y[train].mean()) if len(train) else 0.0
        else:
            out[test] = _proba(_fit(kind, x[train], y[train], seed, _pool_weights(idx)[train]), x[test])
    return [out[idx == i] for i in range(len(pools))]


def train_learned_arbiter(pools: Sequence[LabeledPool], *, kind: str = "logreg", source: Mapping[str, Any] | None = None,
                          folds: int = 4, seed: int = 0) -> TrainedArbiter:
    """Fit on every labelled (candidate, decision) pair of ``pools``. Holdout metrics and the not-found floor come
    from out-of-fold predictions (folds by ``group``: no document is in both halves)."""
    make_estimator(kind)  # an unknown kind fails before any work
    if not pools:
        raise ValueError("no labelled pools to train on (no question with page gold / verdicts and candidates)")
    data = _matrix(pools)
    estimator = _fit(kind, data[0], data[1], seed, _pool_weights(data[2]))
    oof = out_of_fold(pools, kind, folds, seed, data)
    thresholds = dict(DEFAULT_THRESHOLDS)
    holdout: dict[str, Any] = {"method": "none: fewer than 2 groups"}
    if oof is not None:
        thresholds["floor"], accuracy = choose_floor(pools, oof)
        holdout = {"method": f"GroupKFold({min(folds, len({p.group for p in pools}))}) out-of-fold, by document; "
                             "floor chosen on the same predictions", "decision_accuracy": accuracy,
                   **summarize(pools, oof, thresholds["floor"])}
    counts = {"pairs": int(len(data[1])), "positive": int(data[1].sum()), "questions": len(pools),
              "groups": len({p.group for p in pools})}
    return TrainedArbiter(estimator, kind, thresholds, holdout, counts, dict(source or {}))


# -- artifacts ----------------------------------------------------------------------------------------------------
def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write_json(path: Path, obj: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=str), encoding="utf-8")
    os.replace(tmp, path)


def versions(models_dir: Path) -> list[int]:
    return sorted(int(p.stem[len(PREFIX):]) for p in Path(models_dir).glob(f"{PREFIX}*.joblib")
                  if p.stem[len(PREFIX):].isdigit())


def save_artifact(trained: TrainedArbiter, models_dir: Path) -> dict[str, Any]:
    """Write ``learned-arbiter-<n>.joblib`` + ``.json`` (n = next version) and move the latest pointer to it."""
    import joblib
    import sklearn

    models_dir = Path(models_dir)
    models_dir.mkdir(parents=True, exist_ok=True)
    version = (versions(models_dir) or [0])[-1] + 1
    while True:
        path = models_dir / f"{PREFIX}{version}.joblib"
        try:
            with path.open("xb") as fh:  # claim the version even against a concurrent trainer
                joblib.dump({"estimator": trained.estimator, "feature_names": list(FEATURE_NAMES)}, fh)
            break
        except FileExistsError:
            version += 1
    meta = {
        "version": version, "model": f"learned-{version}", "artifact": path.name, "sha256": _sha256(path),
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "kind": trained.kind,
        "sklearn_version": sklearn.__version__, "feature_names": list(FEATURE_NAMES),
        "thresholds": trained.thresholds, "holdout": trained.holdout, "source": trained.source, **trained.counts,
    }
    _write_json(models_dir / f"{PREFIX}{version}.json", meta)
    _write_json(models_dir / LATEST, {"version": version, "artifact": path.name, "metadata": f"{PREFIX}{version}.json"})
    return meta


def load_artifact(models_dir: Path, version: int | None = None) -> tuple[Any, dict[str, Any]]:
    """(estimator, metadata) of ``version`` or of the latest pointer; checks hash and feature names."""
    import joblib
    import sklearn

    models_dir = Path(models_dir)
    if version is None:
        pointer = models_dir / LATEST
        if not pointer.is_file():
            raise ArtifactNotFoundError(f"no learned arbiter model at {pointer}; train one with {TRAIN_COMMAND} "
                                        f"(same --home), or choose another arbiter (rules)")
        version = int(json.loads(pointer.read_text(encoding="utf-8"))["version"])
    meta_path, path = models_dir / f"{PREFIX}{version}.json", models_dir / f"{PREFIX}{version}.joblib"
    if not (meta_path.is_file() and path.is_file()):
        raise ArtifactNotFoundError(f"learned arbiter version {version} is incomplete or missing ({path}, "
                                    f"{meta_path}); retrain with {TRAIN_COMMAND}")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if _sha256(path) != meta["sha256"]:
        raise ArtifactError(f"{path} does not match the sha256 in {meta_path.name}: changed after training; "
                            f"retrain with {TRAIN_COMMAND}")
    blob = joblib.load(path)
    if list(blob["feature_names"]) != list(FEATURE_NAMES):
        raise ArtifactError(f"{path} was trained on other features than this code computes; retrain with "
                            f"{TRAIN_COMMAND}")
    if meta.get("sklearn_version") != sklearn.__version__:
        log.warning("%s was trained with scikit-learn %s, running %s", path.name, meta.get("sklearn_version"),
                    sklearn.__version__)
    return blob["estimator"], meta


# -- the provider -------------------------------------------------------------------------------------------------
class LearnedArbiterProvider:
    """Provider protocol: scores ``request.payload``'s pool with the local model; no network."""

    name = "learned"
    offline = True

    def __init__(self, estimator: Any, metadata: Mapping[str, Any]):
        self.estimator = estimator
        self.metadata = dict(metadata)
        self.model = self.metadata.get("model", "learned-?")
        self.thresholds = {**DEFAULT_THRESHOLDS, **self.metadata.get("thresholds", {})}

    @classmethod
    def load(cls, models_dir: Path, version: int | None = None) -> "LearnedArbiterProvider":
        return cls(*load_artifact(models_dir, version))

    def score(self, question, candidates) -> tuple[np.ndarray, PoolFeatures]:
        feats = pool_features(question, candidates)
        return _proba(self.estimator, feats.matrix), feats

    def arbitrate(self, question: ParsedQuestion | Mapping[str, Any],
                  candidates: Sequence[CandidateBrief | Mapping[str, Any]]) -> ArbiterOutput:
        q = as_question(question)
        if not candidates:
            return ArbiterOutput(verdicts=[], not_found=True, not_found_reason="no candidate was proposed")
        probs, feats = self.score(q, candidates)
        t = self.thresholds
        order = sorted(range(len(probs)), key=lambda i: (-probs[i], -feats.candidates[i].rrf_score))
        best = float(probs[order[0]])
        not_found = best < t["floor"]
        roles: dict[int, str] = {}
        for rank, i in enumerate(order):
            p = float(probs[i])
            if not not_found and (rank == 0 or p >= t["primary"]):
                roles[i] = "primary"
            elif not not_found and p >= t["supporting"]:
                roles[i] = "supporting"
            else:
                roles[i] = "tangential" if p >= t["tangential"] else "discarded"
        verdicts = []
        for i, c in enumerate(feats.candidates):
            role = roles[i]
            anchor = role == "primary" and (q.answer_shape == "text" or feats.value(i, "value_in_window") > 0)
            verdicts.append(CandidateVerdict(
                candidate_id=c.candidate_id, role=role, decision="discard" if role == "discarded" else "keep",
                reason=self._reason(feats, i, float(probs[i])), relevance=round(min(1.0, max(0.0, float(probs[i]))), 3),
                anchor_found=anchor))
        reason = (f"no candidate scores above the floor {t['floor']:g} of {self.model} (best p={best:.2f})"
                  if not_found else None)
        return ArbiterOutput(verdicts=verdicts, not_found=not_found, not_found_reason=reason)

    def _reason(self, f: PoolFeatures, i: int, p: float) -> str:
        bits = []
        for det, label in (("keywords", "bm25"), ("embeddings", "embedding"), ("toc", "toc")):
            if f.value(i, f"{det}_seen"):
                bits.append(f"{label} rank {int(f.value(i, f'{det}_rank'))}")
        if f.value(i, "toc_title_match"):
            bits.append("toc match")
        if f.n_primary_keywords:
            found = round(f.value(i, "kw_primary_share") * f.n_primary_keywords)
            bits.append(f"{found}/{f.n_primary_keywords} keywords")
        if f.value(i, "value_in_window"):
            bits.append("value of the asked shape near them")
        return f"learned model {self.model}: p={p:.2f} ({', '.join(bits) or 'no detector evidence'})"

    def send(self, request: LLMRequest) -> ProviderReply:
        try:
            question, candidates = request.payload["question"], request.payload["candidates"]
        except KeyError as exc:
            raise ValueError(f"learned arbiter needs payload['question'] and payload['candidates'] (build the request "
                             f"with tasks.arbiter.brief.build_arbiter_request); missing {exc}") from None
        return ProviderReply(text=self.arbitrate(question, candidates).model_dump_json())
