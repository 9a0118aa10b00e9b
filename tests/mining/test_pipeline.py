"""End-to-end mining with a deterministic toy encoder whose planted pairs are known (as in stopes)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from xlsent.cli import main
from xlsent.data.text_input import InputSpec
from xlsent.mining.config import Candidates, MineConfig
from xlsent.mining.engine import LocalEngine
from xlsent.mining.job import mine_files
from xlsent.mining.stages import mine_arrays, select_pairs
from xlsent.testing import LookupEncoder

N_PLANTED, N_SRC_NOISE, N_TGT_NOISE, DIM = 12, 25, 30, 48


def planted_corpus(tmp_path: Path) -> tuple[Path, Path, LookupEncoder, dict[str, str]]:
    """Source and target files with 12 translation pairs hidden among distractors, and an encoder that
    puts each pair close together (shared random direction + small noise) and distractors elsewhere."""
    rng = np.random.default_rng(7)
    table: dict[str, np.ndarray] = {}
    src, tgt, gold = [], [], {}
    for i in range(N_PLANTED):
        base = rng.normal(size=DIM)
        s, t = f"src planted {i}", f"tgt planted {i}"
        table[s] = base + 0.05 * rng.normal(size=DIM)
        table[t] = base + 0.05 * rng.normal(size=DIM)
        src.append(s)
        tgt.append(t)
        gold[s] = t
    for i in range(N_SRC_NOISE):
        table[f"src noise {i}"] = rng.normal(size=DIM)
        src.append(f"src noise {i}")
    for i in range(N_TGT_NOISE):
        table[f"tgt noise {i}"] = rng.normal(size=DIM)
        tgt.append(f"tgt noise {i}")
    src_order, tgt_order = rng.permutation(len(src)), rng.permutation(len(tgt))
    src_path, tgt_path = tmp_path / "src.txt", tmp_path / "tgt.txt"
    src_path.write_text("".join(src[i] + "\n" for i in src_order), encoding="utf-8")
    tgt_path.write_text("".join(tgt[i] + "\n" for i in tgt_order), encoding="utf-8")
    return src_path, tgt_path, LookupEncoder({k: list(v) for k, v in table.items()}, name="planted"), gold


def read_pairs(path: Path) -> list[tuple[float, str, str]]:
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
    return [(float(r[0]), r[1], r[2]) for r in rows]


@pytest.mark.parametrize("mode", ["forward", "backward", "max", "intersect"])
def test_planted_pairs_come_out_on_top_in_every_mode(tmp_path: Path, mode: str) -> None:
    src, tgt, enc, gold = planted_corpus(tmp_path)
    out = tmp_path / f"{mode}.tsv"
    mine_files(InputSpec(src), InputSpec(tgt), out, LocalEngine(enc), MineConfig(mode=mode), progress=False)
    pairs = read_pairs(out)
    top = pairs[:N_PLANTED]
    assert all(gold.get(s) == t for _, s, t in top), top
    assert all(score > 1.0 for score, _, _ in top)
    scores = [p[0] for p in pairs]
    assert scores == sorted(scores, reverse=True)


def test_scores_equal_reference_margin(tmp_path: Path) -> None:
    src, tgt, enc, gold = planted_corpus(tmp_path)
    x = enc.encode(src.read_text(encoding="utf-8").splitlines())
    y = enc.encode(tgt.read_text(encoding="utf-8").splitlines())
    cands = mine_arrays(x, y, MineConfig(mode="forward", k=3))
    sims = x @ y.T
    fwd = np.sort(sims, axis=1)[:, -3:].mean(1)
    bwd = np.sort(sims, axis=0)[-3:, :].mean(0)
    for s, t, score in zip(cands.src, cands.tgt, cands.score, strict=True):
        assert score == pytest.approx(sims[s, t] / ((fwd[s] + bwd[t]) / 2), rel=1e-5)


def test_threshold_dedup_ids_and_resume(tmp_path: Path) -> None:
    src, tgt, enc, gold = planted_corpus(tmp_path)
    lines = src.read_text(encoding="utf-8").splitlines()
    src.write_text("\n".join(lines + [lines[0], ""]) + "\n", encoding="utf-8")
    out = tmp_path / "pairs.tsv"
    cfg = MineConfig(threshold=1.75, with_ids=True, shard_rows=10)  # planted >= 1.82, noise <= 1.68
    mine_files(InputSpec(src), InputSpec(tgt), out, LocalEngine(enc), cfg, progress=False, keep_work=True)
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == N_PLANTED and all(float(r[0]) >= 1.75 for r in rows)
    assert len({r[1] for r in rows}) == len(rows)
    src_lines = src.read_text(encoding="utf-8").splitlines()
    assert all([n + 1 for n, line in enumerate(src_lines) if line == r[1]] == [int(n) for n in r[3].split(",")]
               for r in rows)  # every line of the sentence, the repeated one included
    first = out.read_bytes()
    shards = sorted((tmp_path / "pairs.tsv.work").glob("knn-*.npz"))
    assert len(shards) == 4
    shards[-1].unlink()
    out.unlink()
    mine_files(InputSpec(src), InputSpec(tgt), out, LocalEngine(enc), cfg, progress=False)
    assert out.read_bytes() == first
    assert not (tmp_path / "pairs.tsv.work").exists()


def test_cli_mine_with_tiny_model(tmp_path: Path, tiny_model_dir: Path) -> None:
    src = tmp_path / "de.txt"
    tgt = tmp_path / "en.txt"
    src.write_text("der hund bellt\nder hund\nb\n", encoding="utf-8")
    tgt.write_text("the dog barks\na cat runs\nthe cat\n", encoding="utf-8")
    out = tmp_path / "pairs.tsv"
    assert main(["mine", str(src), str(tgt), "-o", str(out), "--model", str(tiny_model_dir), "-q",
                 "--k", "2"]) == 0
    rows = out.read_text(encoding="utf-8").splitlines()
    assert 1 <= len(rows) <= 3 and all(len(r.split("\t")) == 3 for r in rows)


def test_index_and_search_cli(tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the dog barks\na cat runs\nder hund bellt\n", encoding="utf-8")
    index = tmp_path / "idx"
    assert main(["index", str(corpus), "-o", str(index), "--model", str(tiny_model_dir), "-q"]) == 0
    assert main(["search", str(index), "the dog barks", "-k", "2"]) == 0
    out = capsys.readouterr().out
    assert "1. 1.0000  [1] the dog barks" in out
    (index / "texts.txt").write_text("tampered\n", encoding="utf-8")
    assert main(["search", str(index), "x"]) == 2
    assert "corrupt" in capsys.readouterr().err


def with_repeated_target(tmp_path: Path, copies: int) -> tuple[Path, Path, LookupEncoder, str, str]:
    """The planted corpus with the target of one planted pair on ``copies`` lines (spread over the file)."""
    src, tgt, enc, gold = planted_corpus(tmp_path)
    s, t = next(iter(gold.items()))
    lines = [line for line in tgt.read_text(encoding="utf-8").splitlines() if line != t]
    step = len(lines) // copies
    for n in range(copies):
        lines.insert(n * (step + 1), t)
    tgt.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return src, tgt, enc, s, t


@pytest.mark.parametrize("copies", [4, 8])  # k and 2k
def test_pair_with_a_repeated_target_is_found_only_with_unify(tmp_path: Path, copies: int) -> None:
    src, tgt, enc, s, t = with_repeated_target(tmp_path, copies)
    found = {}
    for unify in (True, False):
        out = tmp_path / f"unify-{unify}.tsv"
        cfg = MineConfig(k=4, threshold=1.75, with_ids=True, unify=unify)  # planted >= 1.82, noise <= 1.68
        mine_files(InputSpec(src), InputSpec(tgt), out, LocalEngine(enc), cfg, progress=False)
        rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
        found[unify] = [r for r in rows if (r[1], r[2]) == (s, t)]
        assert len(rows) == N_PLANTED - (not unify)  # without unify, only the repeated pair is lost
    tgt_lines = tgt.read_text(encoding="utf-8").splitlines()
    (row,) = found[True]
    assert [int(n) for n in row[4].split(",")] == [n + 1 for n, line in enumerate(tgt_lines) if line == t]
    assert len(row[4].split(",")) == copies
    assert found[False] == []


@pytest.mark.parametrize("mode", ["forward", "max"])
def test_unify_changes_nothing_without_repeated_sentences(tmp_path: Path, mode: str) -> None:
    src, tgt, enc, _ = planted_corpus(tmp_path)
    outputs = []
    for unify in (True, False):
        out = tmp_path / f"unify-{unify}.tsv"
        cfg = MineConfig(mode=mode, with_ids=True, dedup=False, unify=unify, shard_rows=10)
        mine_files(InputSpec(src), InputSpec(tgt), out, LocalEngine(enc), cfg, progress=False)
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] and outputs[0]


def test_cli_summary_says_how_many_pairs_at_which_threshold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    src, tgt, enc, _ = planted_corpus(tmp_path)
    monkeypatch.setattr("xlsent.api.load", lambda model, backend="auto": enc)
    out = tmp_path / "pairs.tsv"
    assert main(["mine", str(src), str(tgt), "-o", str(out), "-q"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    written = len(out.read_text(encoding="utf-8").splitlines())
    assert err[-1].startswith(f"wrote {out}: {written} pairs out of ")
    said = re.search(r"pairs out of (\d+) candidates with no threshold: a candidate list, not a mined bitext "
                     r"\((?:dropped: (.+?); )?\d+ x \d+ lines", err[-1])
    assert said, err[-1]
    dropped = [int(reason.rsplit(" ", 1)[1]) for reason in said[2].split(", ")] if said[2] else []
    assert written + sum(dropped) == int(said[1])
    assert main(["mine", str(src), str(tgt), "-o", str(out), "-q", "--threshold", "1.75"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"wrote {out}: {N_PLANTED} pairs out of " in captured.err
    assert "candidates at threshold 1.75 (" in captured.err and "no threshold" not in captured.err


def test_mine_with_both_embeddings_does_not_load_the_encoder(tmp_path: Path, tiny_model_dir: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import xlsent.api

    src, tgt = tmp_path / "de.txt", tmp_path / "en.txt"
    src.write_text("der hund bellt\nder hund\nb\n", encoding="utf-8")
    tgt.write_text("the dog barks\na cat runs\nthe cat\n", encoding="utf-8")
    for side in (src, tgt):
        emb = side.with_suffix(".npy")
        assert main(["embed", str(side), "-o", str(emb), "--model", str(tiny_model_dir), "-q"]) == 0
    with_model = tmp_path / "with-model.tsv"
    assert main(["mine", str(src), str(tgt), "-o", str(with_model), "--model", str(tiny_model_dir), "-q"]) == 0

    def no_loading(name: object, backend: str = "auto") -> None:
        raise AssertionError(f"loaded the encoder {name}")

    monkeypatch.setattr(xlsent.api, "load", no_loading)
    given = tmp_path / "given.tsv"
    embs = ["--src-emb", str(src.with_suffix(".npy")), "--tgt-emb", str(tgt.with_suffix(".npy"))]
    assert main(["mine", str(src), str(tgt), "-o", str(given), "-q", *embs]) == 0
    assert given.read_bytes() == with_model.read_bytes()
    # a --model that no embedding is made with is an error, never silently ignored
    assert main(["mine", str(src), str(tgt), "-o", str(given), "--model", str(tmp_path / "no-such-model"), "-q",
                 *embs]) == 2
    with pytest.raises(AssertionError, match="loaded the encoder"):  # one side to embed: the encoder is needed
        main(["mine", str(src), str(tgt), "-o", str(given), "-q", "--src-emb", str(src.with_suffix(".npy"))])


def test_approximate_search_reads_memmaps_takes_nprobe_and_resumes_by_shard(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from xlsent.mining import stages

    src, tgt, enc, gold = planted_corpus(tmp_path)
    cfg = MineConfig(index="ivf", effort=1, shard_rows=10)  # 4 source shards, 5 target shards
    whole = tmp_path / "whole.tsv"
    mine_files(InputSpec(src), InputSpec(tgt), whole, LocalEngine(enc), cfg, progress=False)
    searched: list[tuple[type, str, int]] = []
    search = stages.search_rows

    def recorded(index: object, queries: np.ndarray, lo: int, hi: int, k: int) -> tuple[np.ndarray, np.ndarray]:
        if fail_after is not None and len(searched) == fail_after:
            raise RuntimeError("killed")
        searched.append((type(queries), Path(getattr(queries, "filename", "")).name, lo))
        return search(index, queries, lo, hi, k)  # type: ignore[arg-type]

    monkeypatch.setattr(stages, "search_rows", recorded)
    out, work = tmp_path / "pairs.tsv", tmp_path / "pairs.tsv.work"
    fail_after: int | None = 3
    with pytest.raises(RuntimeError, match="killed"):
        mine_files(InputSpec(src), InputSpec(tgt), out, LocalEngine(enc), cfg, progress=False)
    assert searched == [(np.memmap, "src.npy", lo) for lo in (0, 10, 20)]  # the work folder's embeddings, mapped
    finished = sorted(work.glob("knn-ivf-*.npz"))
    assert [p.name for p in finished] == [f"knn-ivf-fwd-0000{shard}.npz" for shard in range(3)]
    stamps = [(p.stat().st_ino, p.stat().st_mtime_ns) for p in finished]
    fail_after = None
    mine_files(InputSpec(src), InputSpec(tgt), out, LocalEngine(enc), cfg, progress=False, keep_work=True)
    assert searched[3:] == [(np.memmap, "src.npy", 30)] + [(np.memmap, "tgt.npy", lo) for lo in range(0, 50, 10)]
    assert [(p.stat().st_ino, p.stat().st_mtime_ns) for p in finished] == stamps  # reused, not searched again
    assert out.read_bytes() == whole.read_bytes()
    top = read_pairs(out)[:N_PLANTED]
    assert all(gold.get(s) == t for _, s, t in top)
    with pytest.raises(ValueError, match="need an IVF or HNSW --index"):
        MineConfig(index="exact", effort=4)


def test_index_auto_prints_its_choice_and_expected_recall(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from xlsent.mining import auto_index, faiss_index

    src, tgt, enc, gold = planted_corpus(tmp_path)
    exact = tmp_path / "exact.tsv"
    mine_files(InputSpec(src), InputSpec(tgt), exact, LocalEngine(enc), MineConfig(), progress=False)
    out = tmp_path / "auto.tsv"
    mine_files(InputSpec(src), InputSpec(tgt), out, LocalEngine(enc), MineConfig(index="auto", effort=1))
    assert "--index auto: exact for 37 x 42 distinct sentences; expected recall 1.0 (exact search)" in \
        capsys.readouterr().err
    assert out.read_bytes() == exact.read_bytes()
    monkeypatch.setattr(faiss_index, "AUTO_FLAT_MAX_ROWS", 40)  # the larger side is above: an IVF kind
    monkeypatch.setattr(auto_index, "measured_choice", lambda: "fp32")  # a CPU without bf16 matrix units
    mine_files(InputSpec(src), InputSpec(tgt), out, LocalEngine(enc), MineConfig(index="auto", effort=1),
               keep_work=True)
    err = capsys.readouterr().err
    assert "--index auto: ivfpqfs for 37 x 42 distinct sentences; expected recall " in err
    assert "this run: nprobe=1" in err and "index=ivfpqfs" in err
    assert any((tmp_path / "auto.tsv.work").glob("knn-ivfpqfs-fwd-*.npz"))
    top = read_pairs(out)[:N_PLANTED]
    assert all(gold.get(s) == t for _, s, t in top)
    monkeypatch.setattr(auto_index, "measured_choice", lambda: "bf16")  # one with them
    bf16 = tmp_path / "bf16.tsv"
    mine_files(InputSpec(src), InputSpec(tgt), bf16, LocalEngine(enc), MineConfig(index="auto", effort=1),
               keep_work=True)
    assert "--index auto: ivfbf16 for 37 x 42 distinct sentences" in capsys.readouterr().err
    assert (tmp_path / "bf16.tsv.work" / "ivfbf16-fwd.npz").is_file()
    assert bf16.read_bytes() == exact.read_bytes()  # one list, probed by every query: the exact lists


def test_index_auto_is_chosen_once_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from xlsent.mining import faiss_index, stages

    src, tgt, enc, _ = planted_corpus(tmp_path)
    monkeypatch.setattr(faiss_index, "AUTO_FLAT_MAX_ROWS", 40)
    choices: list[tuple[int, int]] = []
    choose = stages.choose_index
    monkeypatch.setattr(stages, "choose_index", lambda *rows: choices.append(rows) or choose(*rows))
    mine_files(InputSpec(src), InputSpec(tgt), tmp_path / "auto.tsv", LocalEngine(enc),
               MineConfig(index="auto", effort=1))
    assert choices == [(37, 42)] and capsys.readouterr().err.count("--index auto:") == 1
    x = np.eye(3, 8, dtype=np.float32)
    mine_arrays(x, x, MineConfig(k=1, index="auto"), progress=True)  # the library entry chooses too, once
    assert choices == [(37, 42), (3, 3)] and capsys.readouterr().err.count("--index auto: exact for 3 x 3") == 1


def test_selection_counts_what_each_rule_dropped() -> None:
    """Candidates with an empty side or a sentence already paired are dropped, and said so (not "every kept")."""
    cands = Candidates(np.array([0, 1, 2]), np.array([0, 0, 1]), np.array([3.0, 2.0, 1.0], np.float32))
    selected = select_pairs(cands, ["a", "b", " "], ["x", "y"], MineConfig())
    assert selected.pairs.src.tolist() == [0] and selected.pairs.tgt.tolist() == [0]
    assert selected.dropped == {"an empty side": 1, "a sentence already paired": 1}
    selected = select_pairs(cands, ["a", "b", "c"], ["x", "y"], MineConfig(threshold=1.5, dedup=False))
    assert selected.pairs.src.tolist() == [0, 1] and selected.dropped == {"under the threshold": 1}
