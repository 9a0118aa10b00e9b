"""English sentence classification tasks of SentEval: MR, SUBJ, TREC, SST-2, CR, MPQA."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from xlsent.data._files import check_choice, dataset_path, read_legacy_lines, read_lines, split_fields

logger = logging.getLogger(__name__)

SENTEVAL_TASKS: tuple[str, ...] = ("MR", "SUBJ", "TREC", "SST2", "CR", "MPQA")

# Binary tasks evaluated by 10-fold cross-validation: task -> (file of class 1, file of class 0, label names).
# Class 1 is the first file, as in SentEval (SUBJ: objective = 1).
_BINARY: dict[str, tuple[str, str, list[str]]] = {
    "MR": ("rt-polarity.pos", "rt-polarity.neg", ["negative", "positive"]),
    "SUBJ": ("subj.objective", "subj.subjective", ["subjective", "objective"]),
    "CR": ("custrev.pos", "custrev.neg", ["negative", "positive"]),
    "MPQA": ("mpqa.pos", "mpqa.neg", ["negative", "positive"]),
}
TREC_LABELS: tuple[str, ...] = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")


@dataclass(frozen=True)
class ClassificationSet:
    """Texts with integer labels (indices into ``label_names``); ``test_*`` is None for cross-validated tasks."""

    task: str
    texts: list[str]
    labels: list[int]
    test_texts: list[str] | None
    test_labels: list[int] | None
    label_names: list[str]


def load_senteval(task: str, root: str | Path | None = None) -> ClassificationSet:
    """The data of SentEval ``task`` (one of :data:`SENTEVAL_TASKS`), texts stripped of surrounding whitespace.

    MR, SUBJ, CR, MPQA: all sentences in ``texts`` (10-fold cross-validation), from the original cp1252/latin-1
    files in ``senteval/harvardnlp_raw``; empty lines (4 in CR, 3 in MPQA; SentEval counts them) are dropped.
    TREC: ``TREC.train`` (5452) and ``TREC.test`` (500) with the coarse label (the part before ``:``).
    SST2: SentEval's splits, train (67,349 phrases and sentences) as ``texts`` and test (1821) as ``test_texts``;
    the dev split (872) is not returned.
    """
    check_choice(task, SENTEVAL_TASKS, "SentEval task")
    if task in _BINARY:
        positive, negative, names = _BINARY[task]
        texts: list[str] = []
        labels: list[int] = []
        for name, label in ((positive, 1), (negative, 0)):
            path = dataset_path(root, "senteval", "harvardnlp_raw", name)
            lines = [line.strip() for line in read_legacy_lines(path)]
            kept = [line for line in lines if line]
            if len(kept) < len(lines):
                logger.info("%s: dropped %d empty line(s)", path, len(lines) - len(kept))
            if not kept:
                raise ValueError(f"{path}: holds no sentence, and every {names[label]} example of {task} is read "
                                 "from it: restore the file from the release")
            texts += kept
            labels += [label] * len(kept)
        return ClassificationSet(task=task, texts=texts, labels=labels, test_texts=None, test_labels=None,
                                 label_names=names)
    if task == "TREC":
        train_texts, train_labels = _read_trec(dataset_path(root, "senteval", "harvardnlp_raw", "TREC.train"))
        test_texts, test_labels = _read_trec(dataset_path(root, "senteval", "harvardnlp_raw", "TREC.test"))
        return ClassificationSet(task=task, texts=train_texts, labels=train_labels, test_texts=test_texts,
                                 test_labels=test_labels, label_names=list(TREC_LABELS))
    train_texts, train_labels = _read_sst(dataset_path(root, "senteval", "SST2_senteval", "sentiment-train"))
    test_texts, test_labels = _read_sst(dataset_path(root, "senteval", "SST2_senteval", "sentiment-test"))
    return ClassificationSet(task=task, texts=train_texts, labels=train_labels, test_texts=test_texts,
                             test_labels=test_labels, label_names=["negative", "positive"])


def _read_trec(path: Path) -> tuple[list[str], list[int]]:
    """``COARSE:fine question`` lines -> (questions, coarse label indices)."""
    texts, labels = [], []
    for n, line in enumerate(read_legacy_lines(path), 1):
        label, _, text = line.partition(" ")
        coarse = label.partition(":")[0]
        if coarse not in TREC_LABELS or not text.strip():
            raise ValueError(f"{path}:{n}: expected 'COARSE:fine question' with COARSE one of "
                             f"{' '.join(TREC_LABELS)}, got {line[:60]!r}")
        texts.append(text.strip())
        labels.append(TREC_LABELS.index(coarse))
    return texts, labels


def _read_sst(path: Path) -> tuple[list[str], list[int]]:
    """``text TAB 0|1`` lines -> (texts, labels)."""
    texts, labels = [], []
    for n, line in enumerate(read_lines(path), 1):
        text, label = split_fields(line, path, n, 2)
        if label not in ("0", "1"):
            raise ValueError(f"{path}:{n}: label {label!r}, expected 0 or 1")
        texts.append(text.strip())
        labels.append(int(label))
    return texts, labels
