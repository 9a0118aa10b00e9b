"""XNLI zero-shot transfer (Artetxe & Schwenk 2019, section 4.1): an English-trained MLP on frozen embeddings.

Premise and hypothesis embeddings are combined as ``(p, h, p*h, |p-h|)`` and classified by a feed-forward network
with two hidden layers of 512 and 384 units trained with Adam on English only; the same classifier is then applied
to the test set of every language.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import math
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from xlsent.data.xnli import XNLI_LABELS, XNLI_LANGS, load_xnli
from xlsent.evaluation.task import EmbedFn, SubsetScore, Summary, Task, TaskMetadata

if TYPE_CHECKING:
    from torch import nn

log = logging.getLogger(__name__)

ACTIVATIONS: dict[str, str] = {"tanh": "Tanh", "relu": "ReLU"}
"""Activation name -> its ``torch.nn`` class (torch is imported only when a classifier is built)."""
LABEL_LANGS = ("sw", "ur")
"""The languages whose labelled test copies (and test files) give the test labels of every language."""

METADATA = TaskMetadata(
    name="xnli",
    description="XNLI zero-shot transfer: English-trained classifier on frozen embeddings, 15 languages",
    languages=XNLI_LANGS,
    data_files=("xnli/xtreme/dev-en.tsv", "xnli/xtreme/test-*.tsv",
                *(f"xnli/labels_en_sw_ur/output/{x}/{x}.genre.test.tsv" for x in LABEL_LANGS)),
    main_score="accuracy averaged over all 15 languages (over the languages run when a run covers fewer)",
    papers=("001 LASER",),
    reference="Conneau et al. (2018), XNLI: Evaluating Cross-lingual Sentence Representations (XTREME's copy); "
              "protocol of Artetxe & Schwenk (2019), section 4.1",
)


@dataclass(frozen=True)
class NliConfig:
    """Classifier and training settings.

    Defaults: the paper's hidden sizes and optimiser; activation, dropout, learning rate, batch size and the
    200-epoch budget from LASER's released ``tasks/xnli/xnli.sh`` (the paper does not state them). Training
    stops after ``patience`` epochs without a better held-out accuracy; the best epoch is kept.
    """

    hidden: tuple[int, ...] = (512, 384)
    activation: str = "tanh"
    dropout: float = 0.3
    lr: float = 1e-3
    batch_size: int = 128
    max_epochs: int = 200
    patience: int = 10
    held_out: float = 0.1
    seed: int = 0

    def __post_init__(self) -> None:
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, not {self.activation!r}")
        if not 0 < self.held_out < 1:
            raise ValueError(f"held_out must be a fraction in (0, 1), not {self.held_out}")
        if self.max_epochs < 1:
            raise ValueError(f"max_epochs must be at least 1, not {self.max_epochs}")


def nli_features(premises: np.ndarray, hypotheses: np.ndarray) -> np.ndarray:
    """The usual sentence-pair features ``[p, h, p*h, |p-h|]`` (one row per pair).

    >>> nli_features(np.array([[1.0, 2.0]]), np.array([[3.0, 1.0]])).tolist()
    [[1.0, 2.0, 3.0, 1.0, 3.0, 2.0, 2.0, 1.0]]
    """
    p = np.asarray(premises, dtype=np.float32)
    h = np.asarray(hypotheses, dtype=np.float32)
    if p.shape != h.shape:
        raise ValueError(f"premises {p.shape} and hypotheses {h.shape} must have the same shape")
    return np.concatenate([p, h, p * h, np.abs(p - h)], axis=1)


def build_classifier(in_dim: int, n_classes: int, config: NliConfig) -> nn.Sequential:
    """LASER's MLP: dropout on the input and after every hidden layer, then a linear output layer."""
    from torch import nn

    layers: list[nn.Module] = [nn.Dropout(config.dropout)]
    prev = in_dim
    for width in config.hidden:
        layers += [nn.Linear(prev, width), getattr(nn, ACTIVATIONS[config.activation])(), nn.Dropout(config.dropout)]
        prev = width
    layers.append(nn.Linear(prev, n_classes))
    return nn.Sequential(*layers)


@dataclass
class TrainedClassifier:
    """A trained classifier and how its training went."""

    model: nn.Sequential
    best_epoch: int
    epochs_run: int
    train_size: int
    heldout_size: int
    heldout_accuracy: float

    def predict(self, features: np.ndarray) -> np.ndarray:
        """Predicted class index per row."""
        import torch

        self.model.eval()
        with torch.no_grad():
            return self.model(torch.from_numpy(np.asarray(features, dtype=np.float32))).argmax(dim=1).numpy()


def accuracy(predicted: np.ndarray, gold: np.ndarray) -> float:
    """Percentage of ``predicted`` equal to ``gold``.

    >>> accuracy(np.array([0, 1, 2, 2]), np.array([0, 1, 1, 2]))
    75.0
    """
    return float(np.mean(np.asarray(predicted) == np.asarray(gold))) * 100


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    """Run torch ops on one thread: for an MLP this small, intra-op threads on a busy machine only add waiting."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def train_classifier(features: np.ndarray, labels: np.ndarray, n_classes: int,
                     config: NliConfig | None = None) -> TrainedClassifier:
    """Train on a stratified ``1 - held_out`` share of the rows; keep the epoch best on the rest.

    Deterministic for a given ``config.seed``; the global torch random state is left untouched.
    """
    import torch
    from sklearn.model_selection import train_test_split
    from torch import nn

    config = config or NliConfig()
    x = np.asarray(features, dtype=np.float32)
    y = np.asarray(labels, dtype=np.int64)
    train_idx, held_idx = train_test_split(np.arange(len(y)), test_size=config.held_out, stratify=y,
                                           random_state=config.seed)
    x_train, y_train = torch.from_numpy(x[train_idx]), torch.from_numpy(y[train_idx])
    x_held, y_held = x[held_idx], y[held_idx]
    with torch.random.fork_rng(devices=[]), _one_thread():
        torch.manual_seed(config.seed)
        model = build_classifier(x.shape[1], n_classes, config)
        result = TrainedClassifier(model, 0, 0, len(train_idx), len(held_idx), -1.0)
        best_state: dict[str, torch.Tensor] = {}
        optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
        loss_fn = nn.CrossEntropyLoss()
        for epoch in range(1, config.max_epochs + 1):
            model.train()
            for batch in torch.randperm(len(y_train)).split(config.batch_size):
                optimizer.zero_grad()
                loss_fn(model(x_train[batch]), y_train[batch]).backward()
                optimizer.step()
            held_acc = accuracy(result.predict(x_held), y_held)
            result.epochs_run = epoch
            if held_acc >= result.heldout_accuracy:  # ties go to the later epoch, as in LASER's nli.py
                result.heldout_accuracy, result.best_epoch = held_acc, epoch
                best_state = copy.deepcopy(model.state_dict())
            elif epoch - result.best_epoch >= config.patience:
                break
    model.load_state_dict(best_state)
    log.info("NLI classifier: best held-out accuracy %.1f at epoch %d of %d", result.heldout_accuracy,
             result.best_epoch, result.epochs_run)
    return result


def label_indices(labels: Sequence[str], names: Sequence[str]) -> np.ndarray:
    """Class index of each label string, in the order of ``names``."""
    index = {name: i for i, name in enumerate(names)}
    unknown = sorted(set(labels) - index.keys())
    if unknown:
        raise ValueError(f"unknown NLI label(s) {unknown}; expected {list(names)}")
    return np.array([index[label] for label in labels], dtype=np.int64)


def check_training_labels(y: np.ndarray, held_out: float, path: Path) -> None:
    """``ValueError`` naming ``path`` unless its label indices ``y`` can train the classifier: every label of
    :data:`XNLI_LABELS` on two rows at least, and enough rows that both the ``held_out`` share and the rest hold one
    of each (the stratified split needs as much).

    >>> check_training_labels(np.array([0, 1, 2] * 10), 0.1, Path("dev-en.tsv"))
    >>> check_training_labels(np.array([0] * 30), 0.1, Path("dev-en.tsv"))
    Traceback (most recent call last):
    ...
    ValueError: dev-en.tsv: 30 rows (contradiction 30, entailment 0, neutral 0) cannot train the NLI classifier: \
it needs each label on 2 rows at least, and enough rows that its held-out 10% holds one of each (21 rows at least): \
restore the file from the release
    """
    counts = np.bincount(y, minlength=len(XNLI_LABELS))
    need = next(n for n in range(len(XNLI_LABELS), 10**6)
                if min(math.ceil(held_out * n), n - math.ceil(held_out * n)) >= len(XNLI_LABELS))
    if counts.min() >= 2 and len(y) >= need:
        return
    shown = ", ".join(f"{name} {n}" for name, n in zip(XNLI_LABELS, counts, strict=True))
    raise ValueError(f"{path}: {len(y)} rows ({shown}) cannot train the NLI classifier: it needs each label on 2 rows "
                     f"at least, and enough rows that its held-out {held_out:.0%} holds one of each ({need} rows at "
                     "least): restore the file from the release")


class Xnli(Task):
    """Train on English XNLI dev (held-out split for model selection), test on every language's XNLI test.

    The options are :class:`NliConfig` fields (e.g. ``seed=1``, ``activation="relu"``).
    """

    metadata = METADATA
    subset_kind = "XNLI language"
    subset_metric = "accuracy"

    def __init__(self, embed: EmbedFn, base: Path, **config: Any) -> None:
        super().__init__(embed, base)
        self.config = NliConfig(**config)

    def known_subsets(self) -> list[str]:
        return list(XNLI_LANGS)

    def features(self, lang: str, split: str) -> tuple[np.ndarray, np.ndarray]:
        """The pair features and gold label indices of one language's ``split``; the labels of the dev set, which
        trains the classifier, are checked before it is embedded (:func:`check_training_labels`)."""
        nli = load_xnli(lang, split, self.base)
        y = label_indices(nli.labels, XNLI_LABELS)
        if split == "dev":
            check_training_labels(y, self.config.held_out, self.base / "xnli" / "xtreme" / f"dev-{lang}.tsv")
        return nli_features(self.embed(nli.premises, lang), self.embed(nli.hypotheses, lang)), y

    @cached_property
    def classifier(self) -> TrainedClassifier:
        """The classifier trained on English dev (trained when first needed)."""
        return train_classifier(*self.features("en", "dev"), len(XNLI_LABELS), self.config)

    def score(self, subset: str) -> SubsetScore:
        clf = self.classifier
        x, y = self.features(subset, "test")
        return SubsetScore({"accuracy": accuracy(clf.predict(x), y), "pairs": float(len(y))})

    def summarise(self, scores: dict[str, dict[str, float]]) -> Summary:
        config, clf = self.config, self.classifier
        groups = {"all-15": list(XNLI_LANGS), "zero-shot-14": [lang for lang in XNLI_LANGS if lang != "en"]}
        averages = {name: float(np.mean([scores[lang]["accuracy"] for lang in group]))
                    for name, group in groups.items() if all(lang in scores for lang in group)}
        xtreme = self.base / "xnli" / "xtreme"
        label_files = [p for x in LABEL_LANGS for p in (self.base / "xnli" / "labels_en_sw_ur" / "output" / x /
                                                        f"{x}.genre.test.tsv", xtreme / f"test-{x}.tsv")]
        return Summary(
            dataset="XNLI 1.0 (XTREME copy), test labels joined by row",
            main_score=averages.get("all-15", float(np.mean([s["accuracy"] for s in scores.values()]))),
            main_metric="accuracy", averages=averages,
            options={**asdict(config), "train_pairs": clf.train_size, "heldout_pairs": clf.heldout_size,
                     "heldout_accuracy": clf.heldout_accuracy, "best_epoch": clf.best_epoch,
                     "epochs_run": clf.epochs_run, "main": "all-15" if "all-15" in averages else "langs"},
            notes=[
                "zero-shot transfer: one classifier trained on English only and applied unchanged to every language",
                f"MultiNLI is not available here: the classifier is trained on {clf.train_size} pairs of the English "
                f"XNLI dev set and the best epoch is chosen on the other {clf.heldout_size} (stratified split, seed "
                f"{config.seed}); the paper trains on MultiNLI and tunes on the whole English dev set, so expect "
                "lower absolute accuracy than published",
                "features (p, h, p*h, |p-h|) of frozen embeddings; MLP hidden sizes and Adam as in the paper; "
                f"{config.activation}, dropout {config.dropout}, lr {config.lr}, batch {config.batch_size} from "
                f"LASER's released xnli.sh; at most {config.max_epochs} epochs, early stop after {config.patience} "
                "epochs without held-out improvement",
                "test labels: XNLI rows are in the same order in every language; labels come from the labelled sw/ur "
                "test copies (checked row by row against test-sw/test-ur)",
            ],
            files=[xtreme / "dev-en.tsv", *(xtreme / f"test-{lang}.tsv" for lang in scores), *label_files],
        )


evaluate = Xnli.evaluate
