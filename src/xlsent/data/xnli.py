"""XNLI 1.0 (XTREME copy): premise/hypothesis pairs in 15 languages, dev (2490) and test (5010) splits."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from xlsent.data._files import check_choice, dataset_path, read_lines, split_fields

XNLI_LANGS: tuple[str, ...] = (
    "ar", "bg", "de", "el", "en", "es", "fr", "hi", "ru", "sw", "th", "tr", "ur", "vi", "zh",
)
XNLI_LABELS: tuple[str, ...] = ("contradiction", "entailment", "neutral")
XNLI_SPLITS: tuple[str, ...] = ("dev", "test")
TEST_SIZE = 5010

# Labelled copies of the sw and ur test sets; their rows are the XNLI test rows in XNLI order.
_LABEL_SOURCES = ("sw", "ur")


@dataclass(frozen=True)
class NliSet:
    """Premise/hypothesis pairs with their labels (one of :data:`XNLI_LABELS`)."""

    lang: str
    split: str
    premises: list[str]
    hypotheses: list[str]
    labels: list[str]


def load_xnli(lang: str, split: str = "dev", root: str | Path | None = None) -> NliSet:
    """XNLI ``split`` in ``lang`` from ``xnli/xtreme``.

    The XTREME test files carry no labels. Row i of every language's test file is the same XNLI item, and its
    label is the label of row i of ``labels_en_sw_ur/output/{sw,ur}/*.genre.test.tsv``; both labelled files are
    checked to match ``test-sw.tsv`` / ``test-ur.tsv`` row by row on text (ignoring surrounding whitespace) and
    to agree on every label.
    """
    check_choice(lang, XNLI_LANGS, "XNLI language")
    check_choice(split, XNLI_SPLITS, "XNLI split")
    path = dataset_path(root, "xnli", "xtreme", f"{split}-{lang}.tsv")
    lines = read_lines(path)
    if split == "dev":
        rows = [split_fields(line, path, n, 3) for n, line in enumerate(lines, 1)]
        for n, row in enumerate(rows, 1):
            _check_label(row[2], path, n)
        labels = [row[2] for row in rows]
    else:
        rows = [split_fields(line, path, n, 2) for n, line in enumerate(lines, 1)]
        if len(rows) != TEST_SIZE:
            raise ValueError(f"{path}: {len(rows)} rows, expected the {TEST_SIZE} XNLI test items")
        labels = list(_test_labels(path.parent.parent))
    return NliSet(lang=lang, split=split, premises=[r[0] for r in rows], hypotheses=[r[1] for r in rows],
                  labels=labels)


def _check_label(label: str, path: Path, line_no: int) -> None:
    """``ValueError`` naming the file and line unless ``label`` is one of :data:`XNLI_LABELS`."""
    if label not in XNLI_LABELS:
        raise ValueError(f"{path}:{line_no}: label {label!r}, expected one of {', '.join(XNLI_LABELS)}")


@functools.lru_cache(maxsize=4)
def _test_labels(xnli_dir: Path) -> tuple[str, ...]:
    """The 5010 XNLI test labels in XNLI row order, verified against the sw and ur test files."""
    found: dict[str, list[str]] = {}
    for lang in _LABEL_SOURCES:
        label_path = xnli_dir / "labels_en_sw_ur" / "output" / lang / f"{lang}.genre.test.tsv"
        test_path = xnli_dir / "xtreme" / f"test-{lang}.tsv"
        for p in (label_path, test_path):
            if not p.is_file():
                raise FileNotFoundError(f"{p} not found (needed for the XNLI test labels)")
        labelled = read_lines(label_path)[1:]  # header: genre label sentence1 sentence2
        test = read_lines(test_path)
        if len(labelled) != TEST_SIZE or len(test) != TEST_SIZE:
            raise ValueError(f"{label_path} has {len(labelled)} rows and {test_path} {len(test)}; "
                             f"expected {TEST_SIZE} each")
        labels = []
        for n, (line, test_line) in enumerate(zip(labelled, test, strict=True), 2):
            _, label, premise, hypothesis = split_fields(line, label_path, n, 4)
            _check_label(label, label_path, n)
            test_premise, test_hypothesis = split_fields(test_line, test_path, n - 1, 2)
            if premise.strip() != test_premise.strip() or hypothesis.strip() != test_hypothesis.strip():
                raise ValueError(f"{label_path}:{n}: text differs from {test_path}:{n - 1}; the files are not "
                                 "row-aligned, so the test labels cannot be joined")
            labels.append(label)
        found[lang] = labels
    first, *others = _LABEL_SOURCES
    for other in others:
        disagree = sum(a != b for a, b in zip(found[first], found[other], strict=True))
        if disagree:
            raise ValueError(f"XNLI test labels: {first} and {other} label files disagree on {disagree} rows")
    return tuple(found[first])
