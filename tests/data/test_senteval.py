"""SentEval classification readers."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from xlsent.data.senteval import SENTEVAL_TASKS, TREC_LABELS, load_senteval
from xlsent.testing import dataset_or_skip


@pytest.fixture(scope="module")
def root() -> Path:
    return dataset_or_skip("senteval")


@pytest.mark.data
@pytest.mark.parametrize(("task", "n", "n_positive"), [
    ("MR", 10_662, 5331), ("SUBJ", 10_000, 5000), ("CR", 3771, 2405), ("MPQA", 10_603, 3311),
])
def test_cross_validated_tasks(root: Path, task: str, n: int, n_positive: int) -> None:
    data = load_senteval(task, root)
    assert data.task == task and data.test_texts is None and data.test_labels is None
    assert len(data.texts) == len(data.labels) == n and sum(data.labels) == n_positive
    assert len(data.label_names) == 2 and all(t and t == t.strip() for t in data.texts)


@pytest.mark.data
def test_mr_is_decoded_from_cp1252(root: Path) -> None:
    texts = load_senteval("MR", root).texts
    joined = "".join(texts)
    assert "é" in joined and "…" in joined and "\ufffd" not in joined and "\x85" not in joined
    assert texts[0].startswith("the rock is destined to be the 21st century's new")


@pytest.mark.data
def test_trec_coarse_labels(root: Path) -> None:
    data = load_senteval("TREC", root)
    assert len(data.texts) == 5452 and data.test_texts is not None and data.test_labels is not None
    assert len(data.test_texts) == len(data.test_labels) == 500
    assert data.label_names == list(TREC_LABELS)
    assert set(data.labels) == set(data.test_labels) == set(range(6))
    assert data.test_texts[0] == "How far is it from Denver to Aspen ?"
    assert data.label_names[data.test_labels[0]] == "NUM"
    assert Counter(data.test_labels)[TREC_LABELS.index("ABBR")] == 9


@pytest.mark.data
def test_sst2_senteval_splits(root: Path) -> None:
    data = load_senteval("SST2", root)
    assert len(data.texts) == len(data.labels) == 67_349 and sum(data.labels) == 37_569
    assert data.test_texts is not None and data.test_labels is not None
    assert len(data.test_texts) == 1821 and sum(data.test_labels) == 909
    assert data.texts[0] == "hide new secretions from the parental units"


def test_all_tasks_listed() -> None:
    assert SENTEVAL_TASKS[:4] == ("MR", "SUBJ", "TREC", "SST2") and set(SENTEVAL_TASKS) == {
        "MR", "SUBJ", "TREC", "SST2", "CR", "MPQA"}


def test_malformed_files_name_the_line(tmp_path: Path) -> None:
    raw = tmp_path / "senteval" / "harvardnlp_raw"
    raw.mkdir(parents=True)
    (raw / "TREC.train").write_bytes(b"NUM:date When ?\nWHAT:x Why ?\n")
    (raw / "TREC.test").write_bytes(b"NUM:date When ?\n")
    with pytest.raises(ValueError, match=r"TREC\.train:2: expected 'COARSE:fine question'"):
        load_senteval("TREC", tmp_path)
    sst = tmp_path / "senteval" / "SST2_senteval"
    sst.mkdir(parents=True)
    (sst / "sentiment-train").write_text("good \t1\nbad\t2\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"sentiment-train:2: label '2', expected 0 or 1"):
        load_senteval("SST2", tmp_path)
    with pytest.raises(ValueError, match="unknown SentEval task 'SST5'"):
        load_senteval("SST5", tmp_path)
    with pytest.raises(FileNotFoundError, match="rt-polarity.pos"):
        load_senteval("MR", tmp_path)


def raw_files(root: Path, files: dict[str, bytes]) -> None:
    """SentEval's ``harvardnlp_raw`` folder under ``root`` holding ``files`` (name: bytes)."""
    raw = root / "senteval" / "harvardnlp_raw"
    raw.mkdir(parents=True)
    for name, data in files.items():
        (raw / name).write_bytes(data)


def test_binary_task_from_legacy_files(tmp_path: Path) -> None:
    raw_files(tmp_path, {"subj.objective": b"a fact . \n\ncaf\xe9\n", "subj.subjective": b"i think\n"})
    data = load_senteval("SUBJ", tmp_path)
    assert data.texts == ["a fact .", "café", "i think"] and data.labels == [1, 1, 0]
    assert data.label_names[1] == "objective"


def test_binary_task_with_a_class_file_of_no_sentence_names_it(tmp_path: Path) -> None:
    raw_files(tmp_path, {"rt-polarity.pos": b"good\nfine\n", "rt-polarity.neg": b"\n  \n"})
    with pytest.raises(ValueError, match=r"rt-polarity\.neg: holds no sentence, and every negative example of MR"):
        load_senteval("MR", tmp_path)
