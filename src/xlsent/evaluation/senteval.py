"""SentEval-style transfer tasks (MR, SUBJ, TREC, SST-2): logistic regression on frozen English embeddings.

MR and SUBJ have no official split and are scored by stratified 10-fold cross-validation; TREC and SST-2 use
their train/test splits. The regularisation strength C is always tuned by an inner cross-validation on the
training part only.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from xlsent.data.senteval import SENTEVAL_TASKS, ClassificationSet, load_senteval
from xlsent.evaluation.task import EmbedFn, SubsetScore, Summary, Task, TaskMetadata

if TYPE_CHECKING:
    from sklearn.model_selection import GridSearchCV

log = logging.getLogger(__name__)

C_GRID = (0.25, 1.0, 4.0, 16.0, 64.0, 256.0)
"""Inverse L2 strengths tried: SentEval's scikit-learn grid (2^-2..2^3) widened upwards for unit-length embeddings."""
PAPER_TASKS = ("MR", "SUBJ", "TREC", "SST2")
"""The tasks DuEAM reports (Table 6), run by default and averaged as ``all-4``; CR and MPQA run on request."""
TASK_FILES: dict[str, tuple[str, ...]] = {
    "MR": ("harvardnlp_raw/rt-polarity.pos", "harvardnlp_raw/rt-polarity.neg"),
    "SUBJ": ("harvardnlp_raw/subj.objective", "harvardnlp_raw/subj.subjective"),
    "TREC": ("harvardnlp_raw/TREC.train", "harvardnlp_raw/TREC.test"),
    "SST2": ("SST2_senteval/sentiment-train", "SST2_senteval/sentiment-test"),
    "CR": ("harvardnlp_raw/custrev.pos", "harvardnlp_raw/custrev.neg"),
    "MPQA": ("harvardnlp_raw/mpqa.pos", "harvardnlp_raw/mpqa.neg"),
}
"""Files under ``<data>/senteval`` that each task is read from (for the result's checksums)."""

METADATA = TaskMetadata(
    name="senteval",
    description="SentEval MR, SUBJ, TREC, SST-2 with logistic regression on frozen embeddings",
    languages=("en",),
    data_files=tuple(f"senteval/{rel}" for files in TASK_FILES.values() for rel in files),
    main_score="accuracy averaged over MR, SUBJ, TREC and SST-2 (over the tasks run when a run covers others)",
    papers=("000 DuEAM",),
    reference="Conneau & Kiela (2018), SentEval: An Evaluation Toolkit for Universal Sentence Representations",
)


def tuned_logreg(*, c_grid: Sequence[float] = C_GRID, inner_folds: int = 5, seed: int = 0) -> GridSearchCV:
    """An L2 logistic regression whose C is picked from ``c_grid`` by stratified inner CV (the grid's fits run
    on all cores), then refit on all."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    return GridSearchCV(LogisticRegression(max_iter=2000), {"C": list(c_grid)}, scoring="accuracy",
                        cv=StratifiedKFold(inner_folds, shuffle=True, random_state=seed), n_jobs=-1)


def cv_accuracy(x: np.ndarray, y: np.ndarray, *, folds: int = 10, c_grid: Sequence[float] = C_GRID,
                inner_folds: int = 5, seed: int = 0) -> float:
    """Mean test accuracy (%) over stratified ``folds``-fold CV, C tuned inside each training part.

    >>> x = np.array([[0.0], [1.0]] * 10); y = np.array([0, 1] * 10)
    >>> cv_accuracy(x, y, folds=2, inner_folds=2, c_grid=[1.0, 10.0])
    100.0
    """
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    model = tuned_logreg(c_grid=c_grid, inner_folds=inner_folds, seed=seed)
    outer = StratifiedKFold(folds, shuffle=True, random_state=seed)
    return float(np.mean(cross_val_score(model, x, y, cv=outer, scoring="accuracy"))) * 100


def split_accuracy(x: np.ndarray, y: np.ndarray, x_test: np.ndarray, y_test: np.ndarray, *,
                   c_grid: Sequence[float] = C_GRID, inner_folds: int = 5, seed: int = 0) -> tuple[float, float]:
    """Test accuracy (%) of the tuned model fitted on the training split, and the C it chose."""
    model = tuned_logreg(c_grid=c_grid, inner_folds=inner_folds, seed=seed).fit(x, y)
    return float(model.score(x_test, y_test)) * 100, float(model.best_params_["C"])


def check_class_sizes(data: ClassificationSet, folds: int, files: Sequence[Path]) -> None:
    """``ValueError`` naming the task's ``files`` unless its training labels hold two classes or more, each with at
    least ``folds`` examples: stratified ``folds``-fold cross-validation needs as many (scikit-learn warns, or fails,
    with fewer)."""
    counts = {data.label_names[label]: n for label, n in sorted(Counter(data.labels).items())}
    small = [f"{name} ({n})" for name, n in counts.items() if n < folds]
    if len(counts) >= 2 and not small:
        return
    problem = (f"the class(es) {', '.join(small)} have fewer than {folds} training examples, too few for its "
               f"{folds}-fold cross-validation" if small else
               f"its training examples are all of one class ({', '.join(counts) or 'none'}), and a classifier needs "
               "two")
    raise ValueError(f"senteval {data.task}: {problem}: check {', '.join(map(str, files))} (restore them from the "
                     "release)")


class SentEval(Task):
    """Accuracy on MR, SUBJ, TREC and SST-2 (or the tasks in ``langs``, e.g. ``["MR", "CR"]``) and their average.

    ``folds``-fold CV where a task has no test split; C from ``c_grid`` by ``inner_folds``-fold CV; ``seed`` for
    every split.
    """

    metadata = METADATA
    subset_kind = "SentEval task"
    subset_metric = "accuracy"
    unit = "task"

    def __init__(self, embed: EmbedFn, base: Path, *, folds: int = 10, inner_folds: int = 5,
                 c_grid: Sequence[float] = C_GRID, seed: int = 0) -> None:
        super().__init__(embed, base)
        self.folds, self.inner_folds, self.c_grid, self.seed = folds, inner_folds, c_grid, seed

    def known_subsets(self) -> list[str]:
        return list(SENTEVAL_TASKS)

    def default_subsets(self) -> list[str]:
        return list(PAPER_TASKS)

    def score(self, subset: str) -> SubsetScore:
        data = load_senteval(subset, self.base)
        folds = self.folds if data.test_texts is None else self.inner_folds
        check_class_sizes(data, folds, [self.base / "senteval" / rel for rel in TASK_FILES[subset]])
        x, y = self.embed(data.texts, "en"), np.asarray(data.labels)
        c_grid, inner_folds, seed = self.c_grid, self.inner_folds, self.seed
        if data.test_texts is None or data.test_labels is None:
            acc = cv_accuracy(x, y, folds=self.folds, c_grid=c_grid, inner_folds=inner_folds, seed=seed)
            metrics = {"accuracy": acc, "examples": float(len(y)), "folds": float(self.folds)}
        else:
            x_test, y_test = self.embed(data.test_texts, "en"), np.asarray(data.test_labels)
            acc, c = split_accuracy(x, y, x_test, y_test, c_grid=c_grid, inner_folds=inner_folds, seed=seed)
            metrics = {"accuracy": acc, "train": float(len(y)), "test": float(len(y_test)), "C": c}
        log.info("senteval %s: %.2f", subset, acc)
        return SubsetScore(metrics)

    def summarise(self, scores: dict[str, dict[str, float]]) -> Summary:
        averages = {"all-4": float(np.mean([scores[t]["accuracy"] for t in PAPER_TASKS]))} \
            if all(t in scores for t in PAPER_TASKS) else {}
        grid = ", ".join(f"{c:g}" for c in self.c_grid)
        folds, inner, seed = self.folds, self.inner_folds, self.seed
        return Summary(
            dataset="SentEval " + ", ".join(scores) + " (English)",
            main_score=averages.get("all-4", float(np.mean([s["accuracy"] for s in scores.values()]))),
            main_metric="accuracy", averages=averages,
            options={"classifier": "sklearn LogisticRegression (L2, lbfgs)", "c_grid": list(self.c_grid),
                     "inner_folds": inner, "folds": folds, "seed": seed, "main": "all-4" if averages else "tasks"},
            notes=[
                f"logistic regression on frozen embeddings; C chosen from {{{grid}}} by stratified {inner}-fold "
                "CV on the training part only, then refit on the whole training part",
                f"tasks without a test split (MR, SUBJ, CR, MPQA): stratified {folds}-fold CV (shuffled, seed "
                f"{seed}), mean fold accuracy; TREC and SST-2: official train/test split (SST-2 dev unused)",
                "SentEval (whose numbers DuEAM reports) tunes MR, SUBJ and TREC the same way but selects the SST-2 "
                "model on the dev split, and by default trains its classifier in PyTorch: close, not identical",
            ],
            files=[self.base / "senteval" / rel for name in scores for rel in TASK_FILES.get(name, ())],
        )


evaluate = SentEval.evaluate
