"""A saved result is reused for exactly its encoder id on unchanged dataset files."""

from __future__ import annotations

from pathlib import Path

from xlsent.evaluation.results import TaskResult, file_checksums, recorded_result


def test_a_saved_result_is_reused_only_for_its_encoder_on_unchanged_files(tmp_path: Path) -> None:
    data, out = tmp_path / "data", tmp_path / "results"
    data.mkdir()
    (data / "a.txt").write_text("one\n", encoding="utf-8")
    result = TaskResult(task="sts", encoder="enc@1", dataset="d", main_score=1.0, main_metric="m",
                        scores={"x": {"m": 1.0}}, dataset_files=file_checksums([data / "a.txt"], data))
    result.save(out)
    assert recorded_result(out, "sts", "enc@1", data) == result
    assert recorded_result(out, "sts", "enc@1+openvino-bf16", data) is None  # another backend: other vectors
    assert recorded_result(out, "tatoeba", "enc@1", data) is None
    (data / "a.txt").write_text("changed\n", encoding="utf-8")
    assert recorded_result(out, "sts", "enc@1", data) is None
    (data / "a.txt").unlink()
    assert recorded_result(out, "sts", "enc@1", data) is None
