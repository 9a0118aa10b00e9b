"""The benchmark scripts' options: counts and sizes refused by argparse, and a model that does not load refused as a
usage error, before anything is timed (no benchmark runs here)."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import ModuleType

import pytest

from xlsent.testing import load_script, make_tiny_model_dir

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name: str) -> ModuleType:
    return load_script(BENCHMARKS / f"{name}.py")


REFUSED = [
    ("backend_bench", "--sentences", "-5"), ("backend_bench", "--rounds", "0"), ("backend_bench", "--max-loss", "-1"),
    ("align_bench", "--sizes", "-1"), ("align_bench", "--embed-max", "-1"), ("align_bench", "--repeats", "0"),
    ("serve_bench", "--clients", "0"), ("serve_bench", "--seconds", "-1"), ("serve_bench", "--seconds", "nan"),
    ("serve_bench", "--rounds", "0"), ("serve_bench", "--warmup-seconds", "-1"), ("serve_bench", "--max-inputs", "0"),
    ("mining_bench", "--sizes", "-5"), ("mining_bench", "--k", "0"), ("mining_bench", "--dim", "0"),
    ("mining_bench", "--score-size", "0"), ("mining_bench", "--baseline-max-size", "-1"),
    ("mining_bench", "--repeats", "0"), ("mining_bench", "--nprobe", "0"), ("mining_bench", "--peak-size", "0"),
    ("mining_bench", "--approx-sizes", "0"), ("mining_bench", "--approx-nprobe", "0"),
    ("mining_bench", "--recall-sample", "0"), ("mining_bench", "--seed", "-1"),
    ("filter_bench", "--pairs", "-1"),
    ("invariance_bench", "--sentences", "-1"), ("invariance_bench", "--chunk-rows", "0"),
    ("invariance_bench", "--alone", "0"),
    ("langid_compare", "--per-language", "-1"), ("split_compare", "--paragraphs", "-1"),
    ("embed_bench", "--rounds", "-1"), ("embed_bench", "--sentences", "0"), ("embed_bench", "--threads", "-1"),
    ("embed_bench", "--threads", "two"), ("bitext_bench", "--pairs", "0"),
]


@pytest.mark.parametrize(("bench", "option", "value"), REFUSED)
def test_a_count_that_means_nothing_is_refused_before_any_work(bench: str, option: str, value: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        load(bench).build_parser().parse_args([option, value])
    assert exited.value.code == 2
    assert f"error: argument {option}: must be a " in capsys.readouterr().err


@pytest.mark.parametrize(("bench", "argv", "parsed"), [
    ("align_bench", ["--embed-max", "0"], {"embed_max": 0}),  # every size on planted embeddings
    ("embed_bench", ["--threads", "0"], {"threads": 0}),  # physical cores
    ("mining_bench", ["--sizes", "--approx-sizes", "--baseline-max-size", "0", "--seed", "0"],
     {"sizes": [], "approx_sizes": [], "baseline_max_size": 0, "seed": 0}),  # none: a section skipped
    ("serve_bench", ["--warmup-seconds", "0", "--seconds", "0.5"], {"warmup_seconds": 0.0, "seconds": 0.5}),
    ("backend_bench", ["--max-loss", "0"], {"max_loss": 0.0}),
])
def test_zero_is_taken_where_the_help_gives_it_a_meaning(bench: str, argv: list[str], parsed: dict[str, object]
                                                         ) -> None:
    args = vars(load(bench).build_parser().parse_args(argv))
    assert {key: args[key] for key in parsed} == parsed


FIRST_WORK = {"backend_bench": "bench_sentences", "serve_bench": "bench_sentences", "filter_bench": "bench_pairs",
              "align_bench": "case_row", "invariance_bench": "sentences"}


@pytest.mark.parametrize("bench", sorted(FIRST_WORK))
def test_a_model_that_does_not_load_is_a_usage_error_before_any_timing(
        bench: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    module = load(bench)

    def timed(*args: object, **kwargs: object) -> None:
        raise AssertionError("the benchmark started before checking its model")

    monkeypatch.setattr(module, FIRST_WORK[bench], timed)
    argv = ["--model", str(tmp_path / "nosuch"), "--out", str(tmp_path / "out")]
    argv += {"backend_bench": ["--table", str(tmp_path / "table.json"), "--backends", "torch"],
             "align_bench": ["--no-textberg"], "invariance_bench": ["--backends", "torch"]}.get(bench, [])
    with pytest.raises(SystemExit) as exited:
        module.main(argv)
    assert exited.value.code == 2
    assert f"error: --model {tmp_path / 'nosuch'}: unknown model" in capsys.readouterr().err
    assert not (tmp_path / "out").exists() and not (tmp_path / "table.json").exists()


def test_a_model_that_loads_passes_the_check(tmp_path: Path) -> None:
    model = make_tiny_model_dir(tmp_path / "tiny")
    encoder = load("bench_record").load_model(argparse.ArgumentParser(), str(model), "torch")
    assert encoder.encode(["a b"]).shape[0] == 1


def test_bitext_bench_runs_its_commands_from_the_repository_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                 ) -> None:
    bench = load("bitext_bench")
    calls: list[dict[str, object]] = []
    monkeypatch.chdir(tmp_path)  # README's commands name models/... from the root, wherever the bench is started
    monkeypatch.setattr(bench.subprocess, "run", lambda command, **kwargs: calls.append(kwargs))
    bench.run_fresh(["calibrate"], tmp_path / "home")
    assert calls[0]["cwd"] == BENCHMARKS.parent and calls[0]["check"] is True
    assert bench.from_root("models/me5-distill") == str(BENCHMARKS.parent / "models" / "me5-distill")
    assert bench.from_root(str(tmp_path)) == str(tmp_path)


@pytest.mark.parametrize("bench", ["serve_bench", "filter_bench"])
def test_an_unknown_backend_is_refused_by_argparse(bench: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        load(bench).build_parser().parse_args(["--backend", "nosuch"])
    assert exited.value.code == 2 and "argument --backend: invalid choice: 'nosuch'" in capsys.readouterr().err


def test_mining_bench_with_both_sections_skipped_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                            ) -> None:
    with pytest.raises(SystemExit) as exited:
        load("mining_bench").main(["--sizes", "--approx-sizes", "--out", str(tmp_path)])
    assert exited.value.code == 2 and "--sizes and --approx-sizes are both empty" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
