"""The Ray engine on one local 2-CPU Ray session: the single-process pipeline's output, tasks held to their CPU
reservation, and a driver that fails mid-run resumes from the finished shards."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from xlsent.data.text_input import InputSpec
from xlsent.mining.config import MineConfig
from xlsent.testing import mine_on_ray

ray = pytest.importorskip("ray")

Lines = tuple[list[str], list[str]]
NumberedLines = Callable[[int, int], Lines]
WriteCorpus = Callable[[Path, list[str], list[str]], tuple[Path, Path]]
SingleProcess = Callable[[Path, Path, Path, MineConfig], bytes]


def test_ray_output_equals_single_process_with_tasks_held_to_their_cpus(
        local_ray: None, tmp_path: Path, tiny_model_dir: Path, distinct_lines: Lines, ray_chunk_rows: int,
        write_corpus: WriteCorpus, single_process: SingleProcess, caplog: pytest.LogCaptureFixture) -> None:
    """The single-process output, with lines repeated on both sides too; every task (one CPU each, the default) ran
    with one thread in each library."""
    from xlsent.mining.distributed import RayConfig

    src_lines, tgt_lines = distinct_lines
    corpora = {"distinct": (src_lines, tgt_lines),  # and with lines repeated on both sides:
               "repeated": (src_lines + src_lines[3:9] * 2, tgt_lines[:20] + [tgt_lines[4]] * 6)}
    for name, (src_side, tgt_side) in corpora.items():
        (tmp_path / name).mkdir()
        src, tgt = write_corpus(tmp_path / name, src_side, tgt_side)
        cfg = MineConfig(k=3, shard_rows=15, with_ids=True, dedup=False)
        single = single_process(src, tgt, tmp_path / name / "single.tsv", cfg)
        dist = tmp_path / name / "ray.tsv"
        caplog.clear()
        with caplog.at_level(logging.DEBUG, logger="xlsent.mining.distributed"):
            summary = mine_on_ray(InputSpec(src), InputSpec(tgt), dist, str(tiny_model_dir), cfg,
                                  RayConfig(chunk_rows=ray_chunk_rows), progress=False)
        assert (summary.src_rows, summary.tgt_rows) == (len(src_side), len(tgt_side))
        assert (summary.src_distinct, summary.tgt_distinct) == (40, 20 if name == "repeated" else 33)
        assert dist.read_bytes() == single
        assert ("," in dist.read_text(encoding="utf-8")) == (name == "repeated")  # all lines of a sentence
        assert not dist.with_name(dist.name + ".work").exists()
        if name == "distinct":
            _assert_one_thread_per_reserved_cpu(caplog)


def _assert_one_thread_per_reserved_cpu(caplog: pytest.LogCaptureFixture) -> None:
    """The encoder actors (embedding both sides in 3 chunks each) and the 3 k-NN tasks ran with one thread."""
    reports = {kind: [r.args[-1] for r in caplog.records if kind in r.getMessage()]  # type: ignore[index]
               for kind in ("embedded with threads", "ran with threads")}
    assert len(reports["embedded with threads"]) == 2 * 3 and len(reports["ran with threads"]) == 3
    for threads in reports["embedded with threads"]:  # the encoder actors run torch
        assert threads == {"blas": 1, "openmp": 1, "torch": 1, "knn": 1}
    for threads in reports["ran with threads"]:
        assert {name: count for name, count in threads.items() if name != "torch"} == {"blas": 1, "openmp": 1,
                                                                                    "knn": 1}
        assert threads["torch"] in (0, 1)  # 0: torch not imported by the k-NN task's worker


def test_failed_driver_resumes_from_finished_shards(local_ray: None, tmp_path: Path, tiny_model_dir: Path,
                                                    distinct_lines: Lines, ray_chunk_rows: int,
                                                    write_corpus: WriteCorpus, single_process: SingleProcess,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    from xlsent.mining import distributed, stages
    from xlsent.mining.stages import knn_shard_path

    src, tgt = write_corpus(tmp_path, *distinct_lines)
    cfg = MineConfig(k=3, shard_rows=15, with_ids=True)
    out, work = tmp_path / "pairs.tsv", tmp_path / "pairs.tsv.work"
    saved = stages.save_knn_shard

    def save_then_die(path: Path, part: stages.KnnResult) -> None:
        if any(work.glob("knn-*.npz")):
            raise RuntimeError("driver killed")
        saved(path, part)

    monkeypatch.setattr(stages, "save_knn_shard", save_then_die)
    ray_cfg = distributed.RayConfig(chunk_rows=ray_chunk_rows)
    with pytest.raises(RuntimeError, match="driver killed"):
        mine_on_ray(InputSpec(src), InputSpec(tgt), out, str(tiny_model_dir), cfg, ray_cfg,
                                   progress=False)
    assert not out.exists()
    (finished,) = work.glob("knn-*.npz")
    before = finished.stat()
    monkeypatch.setattr(stages, "save_knn_shard", saved)
    with caplog.at_level(logging.INFO, logger="xlsent.mining.stages"):
        mine_on_ray(InputSpec(src), InputSpec(tgt), out, str(tiny_model_dir), cfg, ray_cfg,
                                   keep_work=True, progress=False)
    assert "k-NN: reusing 1 of 3 finished shards" in caplog.text
    assert (finished.stat().st_ino, finished.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert sorted(work.glob("knn-*.npz")) == [knn_shard_path(work, shard) for shard in range(3)]
    assert out.read_bytes() == single_process(src, tgt, tmp_path / "single.tsv", cfg)


def test_ids_after_a_tsv_header_count_file_lines(local_ray: None, tmp_path: Path, tiny_model_dir: Path,
                                                  distinct_lines: Lines, ray_chunk_rows: int,
                                                  write_corpus: WriteCorpus, single_process: SingleProcess) -> None:
    from xlsent.mining.distributed import RayConfig

    src, tgt = write_corpus(tmp_path, *distinct_lines)
    headed = []
    for side in (src, tgt):
        path = side.with_suffix(".tsv")
        path.write_text("text\n" + side.read_text(encoding="utf-8"), encoding="utf-8")
        headed.append(path)
    cfg = MineConfig(k=3, shard_rows=15, with_ids=True)
    plain, with_header = tmp_path / "plain.tsv", tmp_path / "header.tsv"
    single_process(src, tgt, plain, cfg)  # the same output as the Ray engine's (test_ray_output_equals_single_process)
    mine_on_ray(InputSpec(headed[0], column="text", header=True), InputSpec(headed[1], column="text", header=True),
                   with_header, str(tiny_model_dir), cfg, RayConfig(chunk_rows=ray_chunk_rows), progress=False)

    def rows(path: Path) -> list[list[str]]:
        return [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]

    a, b = rows(plain), rows(with_header)
    assert len(a) == len(b) > 0
    id_columns = [i for i, v in enumerate(a[0]) if v.isdigit()]
    assert len(id_columns) == 2
    for ra, rb in zip(a, b, strict=True):
        assert [int(rb[i]) for i in id_columns] == [int(ra[i]) + 1 for i in id_columns]  # the header is line 1
        assert [v for i, v in enumerate(ra) if i not in id_columns] == [v for i, v in enumerate(rb)
                                                                         if i not in id_columns]


def test_ray_index_is_filled_and_searched_on_workers_with_the_single_process_output(
        local_ray: None, tmp_path: Path, tiny_model_dir: Path, ray_chunk_rows: int, write_corpus: WriteCorpus,
        numbered_lines: NumberedLines, single_process: SingleProcess, caplog: pytest.LogCaptureFixture,
        capsys: pytest.CaptureFixture[str]) -> None:
    from xlsent.mining.distributed import RayConfig

    src, tgt = write_corpus(tmp_path, *numbered_lines(240, 200))
    cases = {"ivf": MineConfig(k=3, shard_rows=50, index="ivf", effort=2, with_ids=True),  # 5 and 6 lists
             "ivfpqfs": MineConfig(k=3, shard_rows=50, index="ivfpqfs", effort=2, with_ids=True),  # merged as IVF-PQ
             "auto": MineConfig(k=3, shard_rows=50, index="auto", with_ids=True)}
    for name, cfg in cases.items():
        out = tmp_path / f"{name}-ray.tsv"
        caplog.clear()
        with caplog.at_level(logging.DEBUG, logger="xlsent.mining.distributed"):
            mine_on_ray(InputSpec(src), InputSpec(tgt), out, str(tiny_model_dir), cfg,
                           RayConfig(chunk_rows=ray_chunk_rows))
        assert out.read_bytes() == single_process(src, tgt, tmp_path / f"{name}-single.tsv", cfg)
        searches = [r.args[-1] for r in caplog.records if "search of shard" in r.getMessage()]  # type: ignore[index]
        assert len(searches) == (0 if name == "auto" else 5 + 4)  # source shards, then target shards, on workers
        fills = [r.args[-1] for r in caplog.records if "filled with threads" in r.getMessage()]  # type: ignore[index]
        assert len(fills) == (0 if name == "auto" else 4 + 5)  # target shards into the forward index, then sources
        assert all({n: c for n, c in threads.items() if n != "torch"} == {"blas": 1, "openmp": 1, "knn": 1}
                   for threads in searches + fills)
    err = capsys.readouterr().err
    assert err.count("--index auto: exact for 240 x 200 distinct sentences; expected recall 1.0") == 1  # chosen once


@pytest.mark.parametrize(("tasks", "index"), [(("_fill_task", "_search_task"), "ivf"), (("_knn_task",), "exact")])
def test_a_killed_worker_is_retried_and_the_output_is_unchanged(
        local_ray: None, tmp_path: Path, tiny_model_dir: Path, ray_chunk_rows: int, write_corpus: WriteCorpus,
        numbered_lines: NumberedLines, single_process: SingleProcess, monkeypatch: pytest.MonkeyPatch,
        tasks: tuple[str, ...], index: str) -> None:
    """The first attempt of each of ``tasks`` kills its worker process (one run kills a worker of each)."""
    from xlsent.mining import distributed

    src, tgt = write_corpus(tmp_path, *numbered_lines(120, 100))

    def die_on_first_attempt(task: str) -> Callable[..., object]:
        marker = tmp_path / f"killed-once{task}"

        def run(*args: object) -> object:
            """Runs on a worker: the first attempt of any shard kills its own process; later ones do the work."""
            import importlib
            import os
            import signal

            try:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                return getattr(importlib.import_module("xlsent.mining.distributed"), task)(*args)
            os.kill(os.getpid(), signal.SIGKILL)
            raise AssertionError("unreachable")

        return run

    for task in tasks:
        monkeypatch.setattr(distributed, task, die_on_first_attempt(task))
    cfg = MineConfig(k=3, shard_rows=40, index=index, effort=2 if index == "ivf" else None, with_ids=True)
    out = tmp_path / "ray.tsv"
    mine_on_ray(InputSpec(src), InputSpec(tgt), out, str(tiny_model_dir), cfg,
                               distributed.RayConfig(chunk_rows=ray_chunk_rows), progress=False)
    assert all((tmp_path / f"killed-once{task}").exists() for task in tasks)  # a worker process was killed in each
    assert out.read_bytes() == single_process(src, tgt, tmp_path / "single.tsv", cfg)


def test_failed_driver_resumes_the_index_search_from_finished_shards(
        local_ray: None, tmp_path: Path, tiny_model_dir: Path, ray_chunk_rows: int, write_corpus: WriteCorpus,
        numbered_lines: NumberedLines, single_process: SingleProcess, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    from xlsent.mining import distributed, stages

    src, tgt = write_corpus(tmp_path, *numbered_lines(120, 100))
    cfg = MineConfig(k=3, shard_rows=40, index="ivf", effort=2, with_ids=True)
    out, work = tmp_path / "pairs.tsv", tmp_path / "pairs.tsv.work"
    saved = stages.save_lists

    def save_then_die(path: Path, idx: object, sim: object) -> None:
        if len(list(work.glob("knn-ivf-*.npz"))) == 2:
            raise RuntimeError("driver killed")
        saved(path, idx, sim)  # type: ignore[arg-type]

    monkeypatch.setattr(stages, "save_lists", save_then_die)
    ray_cfg = distributed.RayConfig(chunk_rows=ray_chunk_rows)
    with pytest.raises(RuntimeError, match="driver killed"):
        mine_on_ray(InputSpec(src), InputSpec(tgt), out, str(tiny_model_dir), cfg, ray_cfg,
                                   progress=False)
    finished = sorted(work.glob("knn-ivf-*.npz"))
    assert len(finished) == 2 and not out.exists()
    stamps = [(p.stat().st_ino, p.stat().st_mtime_ns) for p in finished]
    monkeypatch.setattr(stages, "save_lists", saved)
    with caplog.at_level(logging.INFO, logger="xlsent.mining.stages"):
        mine_on_ray(InputSpec(src), InputSpec(tgt), out, str(tiny_model_dir), cfg, ray_cfg,
                                   keep_work=True, progress=False)
    assert "k-NN ivf fwd: reusing 2 of 3 finished shards" in caplog.text
    assert [(p.stat().st_ino, p.stat().st_mtime_ns) for p in finished] == stamps
    assert len(list(work.glob("knn-ivf-*.npz"))) == 3 + 3
    assert out.read_bytes() == single_process(src, tgt, tmp_path / "single.tsv", cfg)


def test_encoder_actors_load_the_model_on_the_asked_backend(tiny_model_dir: Path) -> None:
    from xlsent import cluster

    actor = cluster.EncoderActor(str(tiny_model_dir), 1024, "onnx")  # the class Ray runs as an actor
    assert actor.encoder.backend == "onnx"
    assert cluster.RayConfig().backend == "torch"
