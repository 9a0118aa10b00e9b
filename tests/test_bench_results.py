"""The benchmarks' JSON records (results/bench/<bench>.json): written at toy sizes, read back, checked by hand."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from xlsent.testing import load_script

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name: str) -> ModuleType:
    return load_script(BENCHMARKS / f"{name}.py")


def test_mining_bench_writes_its_figures_at_toy_size(tmp_path: Path) -> None:
    bench = load("mining_bench")
    argv = ["--sizes", "300", "--methods", "faiss-2pass", "one-pass", "--approx-sizes", "1000", "--dim", "16",
            "--peak-size", "64", "--recall-sample", "100", "--approx-nprobe", "8", "--score-size", "300", "--out",
            str(tmp_path)]
    assert bench.main(argv) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["mining.json"]  # no temporary file left beside it
    record = json.loads((tmp_path / "mining.json").read_text(encoding="utf-8"))

    assert record["bench"] == "mining" and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", record["created"])
    assert record["command"].endswith("benchmarks/mining_bench.py " + " ".join(argv))
    assert record["arguments"]["sizes"] == [300] and record["arguments"]["dim"] == 16
    assert not {"worker", "pairs_out", "approx_worker", "out"} & record["arguments"].keys()
    machine = record["machine"]
    assert machine["cores"] == os.cpu_count() and machine["ram_gib"] > 0 and machine["cpu"]
    assert machine["packages"]["numpy"] == __import__("numpy").__version__
    assert any("RANDOM unit vectors (16-d" in n for n in record["notes"])
    assert any("SYNTHETIC" in n and "cosine 0.85" in n for n in record["notes"])

    exact, scored, approx = record["rows"]  # the baseline (faiss-2pass) is no row of its own
    assert exact["case"] == "exact N=300 one-pass" and exact["unit"] == "s"
    assert exact["baseline_case"].startswith("faiss-2pass")
    assert exact["ratio"] == pytest.approx(exact["ours"] / exact["baseline"])
    assert exact["checks"] == {"same pairs as baseline": True, "same pairs up to near-ties": True}
    assert exact["details"]["pairs"] > 150 and exact["ours"] == pytest.approx(
        exact["details"]["k-NN s"] + exact["details"]["margin s"])
    assert exact["details"]["x fp32 bound"] == pytest.approx(exact["ours"] / exact["details"]["fp32 bound s"])
    assert scored["case"] == "score N=300 vs LASER score mode"
    assert scored["checks"] == {"largest score difference <= 0.0001": True}
    assert scored["details"]["largest score difference"] < 1e-4
    assert approx["case"] == "approx N=1000 ivfbf16 nprobe=8"
    assert approx["baseline"] == pytest.approx(exact["ours"] * (1000 / 300) ** 2)  # one-pass scaled by (N/n)^2
    assert approx["ratio"] == pytest.approx(approx["ours"] / approx["baseline"])
    assert 0.9 <= approx["checks"]["recall planted"] <= 1 and approx["checks"]["targets"].startswith("-")
    assert approx["details"]["sampled"] == 100


def test_the_approximate_section_alone_is_a_record_of_its_own(tmp_path: Path) -> None:
    bench = load("mining_bench")
    argv = ["--sizes", "--approx-sizes", "1000", "--dim", "16", "--recall-sample", "100", "--approx-nprobe", "8",
            "--approx-index", "ivfpqfs", "--out", str(tmp_path)]
    assert bench.main(argv) == 0
    record = json.loads((tmp_path / "mining-approx.json").read_text(encoding="utf-8"))
    assert record["bench"] == "mining-approx" and [row["case"] for row in record["rows"]] == [
        "approx N=1000 ivfpqfs nprobe=8"]


def test_approx_row_without_an_exact_run_has_no_baseline() -> None:
    bench = load("mining_bench")
    stats = {"nlist": 50, "build_s": 1.0, "search_s": 2.0, "margin_s": 0.5, "total_s": 3.5, "rss_mib": 900.0,
             "pairs": 10, "eval_s": 4.0, "sampled": 20, "sampled_planted": 6, "recall_all": 0.5,
             "recall_planted": 0.99, "exact_is_planted": 1.0}
    row = bench.approx_row(10**6, "ivfsq", 64, stats, 7.0, {})
    assert row.baseline is None and row.ratio is None and row.baseline_case == ""
    assert row.checks == {"recall planted": 0.99, "recall all": 0.5, "targets": "PASS"}
    assert row.details["corpus written s"] == 7.0 and row.details["RSS MiB"] == 900.0
    scaled = bench.approx_row(10**6, "ivfsq", 64, stats, 7.0, {1000: 1.0, 10_000: 2.0})
    assert scaled.baseline == pytest.approx(2.0 * 100**2) and "N=10000" in scaled.baseline_case


def test_embed_bench_rows_from_fabricated_measurements(tmp_path: Path) -> None:
    bench = load("embed_bench")
    sentences, source = bench.bench_sentences(7)
    assert len(sentences) == 7 and "tatoeba." in source
    unit = np.eye(3, dtype=np.float32)
    tilted = np.array([[1, 0, 0], [0, 1, 0], [0.6, 0, 0.8]], dtype=np.float32)
    auto_model = {"encoder": "me5-small@8fdd+openvino-bf16", "backend": "openvino-bf16"}
    measured = [bench.Measured(bench.Contender("xlsent torch", "xlsent"), [100.0, 120.0, 110.0], unit, 900.0),
                bench.Measured(bench.Contender("xlsent auto", "xlsent", backend="auto"), [300.0, 280.0, 320.0],
                               tilted, 1200.0, cold_s=1.234, model=auto_model),
                bench.Measured(bench.Contender("sentence-transformers torch", "st"), [100.0, 90.0, 95.0], unit, 800.0),
                bench.Measured(bench.Contender("sentence-transformers onnx", "st", backend="onnx"), [150.0], unit, 1.0),
                bench.Measured(bench.Contender("mUSE", "muse", model="muse"), error="not installed")]
    rows = {r.case: r for r in bench.case_rows("tatoeba", measured, 7)}
    auto = rows["tatoeba: xlsent auto (7 sentences)"]
    assert auto.ours == 300.0 and auto.baseline == 150.0 and auto.ratio == 2.0
    assert auto.baseline_case == "fastest sentence-transformers: sentence-transformers onnx"
    assert auto.checks == {"min cosine to xlsent torch": 0.8}
    assert auto.details == {"lowest": 280.0, "highest": 320.0, "peak RSS MiB": 1200, "cold start s": 1.23}
    assert (auto.encoder, auto.backend) == ("me5-small@8fdd+openvino-bf16", "openvino-bf16")  # the model it timed
    assert not any("mUSE" in case for case in rows)  # not measured: no row (the bench notes it)


def test_embed_bench_foreign_case_sets_the_folder_against_sentence_transformers_on_it(tmp_path: Path) -> None:
    bench = load("embed_bench")
    contenders = bench.foreign_contenders(tmp_path / "st", ["torch", "onnx"], "me5-small@8fdd")
    assert {c.model for c in contenders} == {str(tmp_path / "st")}
    assert {c.model_id for c in contenders if c.kind == "st"} == {"me5-small@8fdd"}  # the weights it loads
    unit = np.eye(2, dtype=np.float32)
    measured = [bench.Measured(c, [100.0 * (i + 1)], unit) for i, c in enumerate(contenders)]
    rows = {r.case: r for r in bench.case_rows("foreign", measured, 2)}
    auto = rows["foreign: xlsent foreign folder auto (2 sentences)"]
    assert auto.ours == 200.0 and auto.baseline == 400.0
    assert auto.baseline_case == "fastest sentence-transformers: sentence-transformers onnx"
    assert rows["foreign: sentence-transformers onnx (2 sentences)"].checks == {"min cosine to xlsent torch": 1.0}



def test_backend_table_ranks_by_speed_guards_accuracy_and_keeps_other_cpus(tmp_path: Path) -> None:
    bench = load("backend_bench")
    embed = sys.modules["embed_bench"]
    from xlsent.encoders.backends import backend_choice

    measured = [embed.Measured(embed.Contender(f"xlsent {b}", "xlsent", backend=b), [rate])
                for b, rate in (("torch", 100.0), ("onnx-int8", 180.0), ("openvino", 130.0), ("onnx", 90.0))]
    scores = {"torch": {"tatoeba xtreme-36": 80.0, "sts17": 70.0},
              "onnx-int8": {"tatoeba xtreme-36": 79.2, "sts17": 70.1},  # loses 0.8 on Tatoeba: fails
              "openvino": {"tatoeba xtreme-36": 80.0, "sts17": 69.6},   # loses 0.4 on STS17: holds
              "onnx": {"tatoeba xtreme-36": 80.1, "sts17": 70.0}}
    rows = bench.table_rows(measured, scores, 0.5)
    assert [(r["backend"], r["guard"]) for r in rows] == [("onnx-int8", False), ("openvino", True), ("torch", True),
                                                         ("onnx", True)]
    table = tmp_path / "table.json"
    table.write_text(json.dumps({"avx512-amx": [{"backend": "openvino-int8", "guard": True}]}))
    bench.write_table(table, "avx2", rows)
    saved = json.loads(table.read_text())
    assert set(saved) == {"avx2", "avx512-amx"}
    assert backend_choice(saved, "avx2")[0] == "openvino"


def bench_file(folder: Path, bench: str, encoders: list[str | None], *, recorded: bool = True) -> Path:
    """A record ``<bench>.json`` in ``folder`` with one row per encoder id (no ``encoder`` key unless ``recorded``)."""
    rows = [{"case": f"case {i}", "unit": "s", "ours": 1.0, **({"encoder": e, "backend": "torch"} if recorded else {})}
            for i, e in enumerate(encoders)]
    path = folder / f"{bench}.json"
    path.write_text(json.dumps({"bench": bench, "rows": rows, "notes": []}), encoding="utf-8")
    return path


def test_a_model_timed_anew_drops_the_rows_of_its_old_weights_from_other_records(tmp_path: Path,
                                                                                capsys: pytest.CaptureFixture[str]
                                                                                ) -> None:
    record_module = load("bench_record")
    bench_file(tmp_path, "embed", ["laser-small@old", "laser-small@old+torch-bf16", "me5-small@m", None])
    bench_file(tmp_path, "serve", ["laser-small@old"])
    bench_file(tmp_path, "mining", ["laser-small@old"], recorded=False)  # an older record: its model is unknown
    record = record_module.BenchRecord("embed-trained", "t", "cmd", {}, {})
    record.rows = [record_module.BenchRow("trained", "sentences/s", 2.0, encoder="laser-small@new+torch-bf16",
                                          backend="torch-bf16")]
    record.write(tmp_path)

    embed = json.loads((tmp_path / "embed.json").read_text(encoding="utf-8"))
    assert [row["encoder"] for row in embed["rows"]] == ["me5-small@m", None]  # other models and none kept
    assert embed["notes"] == ["2 row(s) timing laser-small@old, laser-small@old+torch-bf16, dropped when "
                              "embed-trained.json timed laser-small@new"]
    assert not (tmp_path / "serve.json").exists()  # no row left
    assert len(json.loads((tmp_path / "mining.json").read_text(encoding="utf-8"))["rows"]) == 1  # not guessed
    written = json.loads((tmp_path / "embed-trained.json").read_text(encoding="utf-8"))
    assert written["rows"][0]["encoder"] == "laser-small@new+torch-bf16" and written["rows"][0]["backend"] == \
        "torch-bf16"
    assert "serve.json: 1 row(s) timing laser-small@old" in capsys.readouterr().out


def test_rows_name_the_encoder_they_timed() -> None:
    from xlsent.testing import LookupEncoder

    record_module = load("bench_record")
    assert record_module.timed(LookupEncoder({"a": [1.0]}, name="toy@1")) == {"encoder": "toy@1", "backend": None}
    row = record_module.BenchRow("synthetic vectors", "s", 1.0)
    assert (row.encoder, row.backend) == (None, None)  # a case that times no model says so


def test_bitext_bench_runs_readmes_command_on_an_empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bench = load("bitext_bench")
    calls: list[tuple[list[str], dict[str, str]]] = []
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "warm"))
    monkeypatch.setattr(bench.subprocess, "run", lambda command, check, env, cwd: calls.append((command, env)))
    seconds = bench.run_fresh(bench.train_command(tmp_path / "qaa-en.tsv", tmp_path / "m"), tmp_path / "home")
    (command, env), = calls
    assert Path(command[0]).name == "xlsent" and command[1:] == [
        "train", "distill", "--bitext", f"qaa={tmp_path / 'qaa-en.tsv'}", "--out", str(tmp_path / "m")]
    assert env["XLSENT_HOME"] == str(tmp_path / "home") and seconds >= 0  # not the caller's cache


def test_bitext_bench_scores_mined_pairs_against_each_lines_translation(tmp_path: Path) -> None:
    bench = load("bitext_bench")
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("1.1\ta\tA\n1.0\tb\tC\n", encoding="utf-8")  # one right, one wrong, two not mined
    assert bench.mined_scores(pairs, {"a": "A", "b": "B", "c": "C", "d": "D"}) == {
        "precision": 50.0, "recall": 25.0, "f1": 33.33}
    pairs.write_text("", encoding="utf-8")
    assert bench.mined_scores(pairs, {"a": "A"}) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
