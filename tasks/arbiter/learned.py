"""The learned arbiter: a small local scikit-learn model trained on logged (candidate, decision) pairs (seed 001:
"train the arbiter on your own data ... runs in milliseconds"), behind the same Provider interface as the others.

Labels: gold pages (a pooled candidate on a gold page of its question's document is a keep, any other a discard; an
unanswerable question's pool is all discards) or the verdicts an arbiter logged in a run (primary/supporting = keep,
unless that call said not_found). Features: :mod:`tasks.arbiter.features`. Model: a class-balanced classifier
(logistic regression by default), each question weighted once, so p is on a balanced scale (0.5 = as likely kept as
not). Artifacts: ``<home>/models/learned-arbiter-<n>.joblib`` + JSON metadata (source, counts, feature names, sklearn
version, sha256, out-of-fold holdout metrics, thresholds) + ``learned-arbiter-latest.json``. Loading checks the hash
and the feature names; joblib is a pickle, so load only artifacts this warehouse wrote.

Decisions: not_found when the best p is under ``floor`` (chosen on out-of-fold predictions). relevance is p mapped,
monotone and piecewise linear, so that the floor lands on the balanced profile's min_relevance (0.6): the dispatcher
then agrees with the model's not-found line (a floor of 0.5 against a min_relevance of 0.6 would silently turn found
questions into not found), and strict / lenient profiles ask for more / less than the floor. The best candidate is
primary (unless not found), the rest primary / supporting / tangential / discarded by relevance; reasons quote p;
no contradiction search (``contradicts`` stays empty)."""

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
from threadpoolctl import threadpool_limits  # a scikit-learn dependency

from schemas.contracts import (
    ArbiterOutput,
    CandidateBrief,
    CandidateVerdict,
    ParsedQuestion,
)
from schemas.settings import DISPATCH_PROFILES
from tasks.arbiter.features import FEATURE_NAMES, as_question, pool_features
from tasks.llm.base import LLMRequest, ProviderReply

log = logging.getLogger("arbiter.learned")

POSITIVE_ROLES = ("primary", "supporting")
MODEL_KINDS = ("logreg", "hgb")
PREFIX = "learned-arbiter-"
LATEST = "learned-arbiter-latest.json"
FLOOR_GRID = tuple(round(0.02 * i, 2) for i in range(49))  # 0.00 .. 0.96
TOP_K = 3  # an answerable question is served when a kept page is in the top 3 (the dispatcher's max_primary)
# floor: on p's class-balanced scale, re-chosen at training; the others: on the relevance scale (floor -> ANCHOR)
DEFAULT_THRESHOLDS = {"floor": 0.5, "primary": 0.85, "supporting": 0.45, "tangential": 0.2}
ANCHOR = DISPATCH_PROFILES["balanced"].min_relevance
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
def _by_question(rows: Sequence[Mapping[str, Any]]) -> list[list[Mapping[str, Any]]]:
    out: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        out.setdefault(r["question_id"], []).append(r)
    return list(out.values())


def _question(r: Mapping[str, Any]) -> ParsedQuestion:
    # fields a warehouse row lacks (the ask/framing split, stored nowhere) keep their defaults
    return ParsedQuestion.model_validate({k: r[k] for k in ParsedQuestion.model_fields if k in r})


def _candidate(r: Mapping[str, Any]) -> CandidateBrief:
    return CandidateBrief.model_validate({k: r[k] for k in CandidateBrief.model_fields})


def _group(r: Mapping[str, Any]) -> str:
    return "|".join(sorted(r["doc_ids"])) if r.get("doc_ids") else r["question_id"]


def pools_from_gold(rows: Sequence[Mapping[str, Any]],
                    gold: Mapping[str, list[int] | None] | None = None) -> list[LabeledPool]:
    """Label pooled candidates by gold pages: ``gold`` (qid -> pages, e.g. from a question file) or the rows' own
    ``gold_pages``. Questions without page gold (None) are left out; [] marks an unanswerable question."""
    pools = []
    for rs in _by_question(rows):
        pages = gold.get(rs[0]["question_id"]) if gold is not None else rs[0]["gold_pages"]
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
    for rs in _by_question([r for r in rows if not r["flagged"]]):
        labels = [int(r["role"] in POSITIVE_ROLES and not r.get("arbiter_not_found")) for r in rs]
        pools.append(LabeledPool(_question(rs[0]), [_candidate(r) for r in rs], labels, _group(rs[0]),
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
    x = np.vstack([pool_features(p.question, p.candidates).matrix for p in pools]
                  or [np.zeros((0, len(FEATURE_NAMES)))])
    y = np.array([lab for p in pools for lab in p.labels], dtype=int)
    idx = np.array([i for i, p in enumerate(pools) for _ in p.labels], dtype=int)
    return x, y, idx


def _proba(estimator, x: np.ndarray) -> np.ndarray:
    if not len(x):
        return np.zeros(0)
    if hasattr(estimator, "steps"):  # the linear pipeline: no threads to tame, and taming them costs milliseconds
        return estimator.predict_proba(x)[:, 1]
    with threadpool_limits(1):  # trees: a 30-row pool gains nothing from OpenMP threads; oversubscribed, 100x slower
        return estimator.predict_proba(x)[:, 1]


def _fit(kind: str, x: np.ndarray, y: np.ndarray, seed: int, weight: np.ndarray | None = None):
    """Fit; ``weight`` (1 / pool size per row) makes every question count once, whatever its pool's size."""
    if len(set(y.tolist())) < 2:
        raise ValueError(f"training needs both kept and discarded candidates; all {len(y)} pairs have one label (gold "
                         "pages that no pool reaches, or an arbiter that kept nothing?)")
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
        key = (p.candidates[i].doc_id, p.candidates[i].page)
        seen[key] = seen.get(key, 0) | p.labels[i]
    return list(seen.values())


def choose_floor(pools: Sequence[LabeledPool], probs: Sequence[np.ndarray]) -> tuple[float, float]:
    """The not-found floor that maximises decision accuracy over the pools (an answerable question is right when a
    kept page is among its TOP_K best and its best p reaches the floor, an unanswerable one when its best p is
    below); the lowest such floor on ties. Returns (floor, accuracy)."""
    tops = [float(pr.max()) if len(pr) else 0.0 for pr in probs]
    served = [p.answerable and 1 in _ranked_pages(p, pr)[:TOP_K] for p, pr in zip(pools, probs)]
    best = (-1.0, DEFAULT_THRESHOLDS["floor"])
    for floor in FLOOR_GRID:
        right = sum((top >= floor and ok) if p.answerable else top < floor for p, top, ok in zip(pools, tops, served))
        if right / max(1, len(pools)) > best[0]:
            best = (right / max(1, len(pools)), floor)
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


def train_learned_arbiter(pools: Sequence[LabeledPool], *, kind: str = "logreg",
                          source: Mapping[str, Any] | None = None, folds: int = 4, seed: int = 0) -> TrainedArbiter:
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


def _write_json(path: Path, obj: Any) -> None:  # atomic: a reader sees the old file or the new one
    path.with_suffix(".tmp").write_text(json.dumps(obj, indent=2, sort_keys=True, default=str), encoding="utf-8")
    os.replace(path.with_suffix(".tmp"), path)


def save_artifact(trained: TrainedArbiter, models_dir: Path) -> dict[str, Any]:
    """Write ``learned-arbiter-<n>.joblib`` + ``.json`` (n = next version) and move the latest pointer to it."""
    import joblib
    import sklearn

    models_dir = Path(models_dir)
    models_dir.mkdir(parents=True, exist_ok=True)
    version = 1 + max([int(p.stem[len(PREFIX):]) for p in models_dir.glob(f"{PREFIX}*.joblib")
                       if p.stem[len(PREFIX):].isdigit()] or [0])
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
def relevance(p: float, floor: float) -> float:
    """p mapped onto [0, 1] with ``floor`` -> ANCHOR, linear on either side (monotone: the ranking is p's)."""
    p = min(1.0, max(0.0, p))
    return ANCHOR * p / floor if p < floor else ANCHOR + (1.0 - ANCHOR) * (p - floor) / max(1e-9, 1.0 - floor)


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

    def arbitrate(self, question: ParsedQuestion | Mapping[str, Any],
                  candidates: Sequence[CandidateBrief | Mapping[str, Any]]) -> ArbiterOutput:
        q = as_question(question)
        if not candidates:
            return ArbiterOutput(verdicts=[], not_found=True, not_found_reason="no candidate was proposed")
        feats = pool_features(q, candidates)
        probs = _proba(self.estimator, feats.matrix)
        t = self.thresholds
        order = sorted(range(len(probs)), key=lambda i: (-probs[i], -feats.candidates[i].rrf_score))
        best = float(probs[order[0]])
        not_found = best < t["floor"]
        rel = [round(relevance(float(p), t["floor"]), 3) for p in probs]
        roles: dict[int, str] = {}
        for rank, i in enumerate(order):  # the best is primary (unless not found), the rest by their own relevance
            kept = "primary" if rank == 0 or rel[i] >= t["primary"] else \
                "supporting" if rel[i] >= t["supporting"] else None
            roles[i] = kept if kept and not not_found else "tangential" if rel[i] >= t["tangential"] else "discarded"
        verdicts = []
        for i, c in enumerate(feats.candidates):
            role = roles[i]
            verdicts.append(CandidateVerdict(
                candidate_id=c.candidate_id, role=role, decision="discard" if role == "discarded" else "keep",
                reason=f"learned model {self.model}: p={probs[i]:.2f} ({feats.describe(i)})", relevance=rel[i],
                anchor_found=role == "primary" and (q.answer_shape == "text" or feats.value(i, "value_in_window") > 0)))
        reason = (f"no candidate scores above the floor {t['floor']:g} of {self.model} (best p={best:.2f})"
                  if not_found else None)
        return ArbiterOutput(verdicts=verdicts, not_found=not_found, not_found_reason=reason)

    def send(self, request: LLMRequest) -> ProviderReply:
        try:
            question, candidates = request.payload["question"], request.payload["candidates"]
        except KeyError as exc:
            raise ValueError(f"learned arbiter needs payload['question'] and payload['candidates'] (build the request "
                             f"with tasks.arbiter.brief.build_arbiter_request); missing {exc}") from None
        return ProviderReply(text=self.arbitrate(question, candidates).model_dump_json())
