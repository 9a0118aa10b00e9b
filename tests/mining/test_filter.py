"""``xlsent filter``: each filter on a toy encoder with known answers, the ``--scores`` file row for row, the cut
(auto, a number, ``--keep``), resumable work and outputs written only on success; the rules and the dev bitext."""

from __future__ import annotations

import logging
import zlib
from pathlib import Path

import numpy as np
import pytest

from xlsent.cli import main
from xlsent.data.noisy_bitext import DEV_PAIRS, NOISE_KINDS, build_noisy_bitext
from xlsent.data.text_input import InputSpec
from xlsent.evaluation.filter import keep_metrics
from xlsent.mining.filter_calibration import filter_threshold, save_filter_threshold
from xlsent.mining.filter_config import FilterConfig
from xlsent.mining.filtering import SCORE_COLUMNS, decide, pair_values
from xlsent.mining.langid import identify
from xlsent.mining.pair_rules import length, nontext, similarity
from xlsent.testing import LookupEncoder, dataset_or_skip

DIM = 32
NOUNS = [("Hund", "dog"), ("Katze", "cat"), ("Vogel", "bird"), ("Pferd", "horse"), ("Fisch", "fish"),
         ("Bauer", "farmer"), ("Lehrer", "teacher"), ("Koch", "cook"), ("Arzt", "doctor"), ("Nachbar", "neighbour"),
         ("Bruder", "brother"), ("Onkel", "uncle"), ("Junge", "boy"), ("König", "king"), ("Student", "student"),
         ("Fahrer", "driver")]
CLEAN = [(f"Der {de} schläft heute Abend ruhig im großen Garten hinter dem Haus.",
          f"The {en} is sleeping quietly in the big garden behind the house tonight.") for de, en in NOUNS]
WRONG = "Le chien dort tranquillement ce soir dans le grand jardin derrière la maison."
EXPECTED = [("", "")] * len(CLEAN) + [
    (CLEAN[0][0], CLEAN[5][1]),                      # misaligned: the margin drops it
    (CLEAN[1][0], WRONG),                            # a right translation in French: language ID drops it
    (CLEAN[2][0], CLEAN[2][0]),                      # untranslated copy
    ("https://www.example.com/de/index.html", "https://www.example.com/en/index.html"),  # boilerplate
    (CLEAN[3][0], CLEAN[3][1]),                      # a duplicate of row 4
    (CLEAN[4][0], ""),                               # an empty side
]
REASONS = [""] * len(CLEAN) + ["score", "language", "copy", "nontext", "duplicate", "empty"]


@pytest.fixture()
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The pairs above as a TSV, and ``--model`` loading an encoder that gives each translation (and the French
    one) its source's direction plus a little noise, and every other line its own."""
    rng = np.random.default_rng(3)
    table: dict[str, np.ndarray] = {}
    for de, en in CLEAN:
        base = rng.normal(size=DIM)
        table[de], table[en] = base + 0.2 * rng.normal(size=DIM), base + 0.2 * rng.normal(size=DIM)
    table[WRONG] = table[CLEAN[1][1]]
    table |= {line: rng.normal(size=DIM) for pair in EXPECTED for line in pair if line and line not in table}
    enc = LookupEncoder({k: list(v) for k, v in table.items()}, name="toy")
    monkeypatch.setattr("xlsent.api.load", lambda model, backend="auto": enc)
    pairs = CLEAN + EXPECTED[len(CLEAN):]
    path = tmp_path / "pairs.tsv"
    path.write_text("".join(f"{s}\t{t}\n" for s, t in pairs), encoding="utf-8")
    return path


def read_tsv(path: Path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]


def test_each_filter_drops_its_noise_and_scores_follow_the_input(toy: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    kept, scores = tmp_path / "kept.tsv", tmp_path / "all.tsv"
    assert main(["filter", str(toy), "-o", str(kept), "--scores", str(scores), "--src-lang", "de", "--tgt-lang",
                 "en", "--threshold", "1.0", "-q"]) == 0
    rows = read_tsv(scores)
    assert rows[0] == list(SCORE_COLUMNS)
    lines = toy.read_text(encoding="utf-8").splitlines()
    assert len(rows) - 1 == len(lines)
    for row, line in zip(rows[1:], lines, strict=True):  # row i of --scores is input line i
        assert "\t".join(row[-2:]) == line
    assert [row[SCORE_COLUMNS.index("reason")] for row in rows[1:]] == REASONS
    assert [row[0] for row in rows[1:]] == ["1" if not r else "0" for r in REASONS]
    assert rows[1 + len(CLEAN) + 4][SCORE_COLUMNS.index("duplicate_of")] == "4"  # the 1-based line of its first copy
    assert read_tsv(kept) == [list(pair) for pair in CLEAN]
    said = capsys.readouterr().err
    assert f"kept {len(CLEAN)} of {len(lines)} pairs" in said
    assert "dropped: empty 1, nontext 1, copy 1, language 1, duplicate 1, score 1" in said


def test_keep_ratio_and_switches(toy: Path, tmp_path: Path) -> None:
    kept, scores = tmp_path / "kept.tsv", tmp_path / "all.tsv"
    assert main(["filter", str(toy), "-o", str(kept), "--scores", str(scores), "--src-lang", "de", "--tgt-lang",
                 "en", "--keep", "0.5", "--no-langid", "--no-copies", "-q"]) == 0
    reasons = [row[SCORE_COLUMNS.index("reason")] for row in read_tsv(scores)[1:]]
    passed_rules = sum(r in ("", "score") for r in reasons)
    assert reasons.count("") == round(0.5 * passed_rules)
    assert "language" not in reasons and "copy" not in reasons


def test_auto_threshold_takes_the_filter_cut(toy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    save_filter_threshold({"threshold": 1.0, "encoder": "toy", "margin": "ratio", "k": 4, "sets": ["de-en"]})
    assert main(["filter", str(toy), "-o", str(tmp_path / "k.tsv"), "--src-lang", "de", "--tgt-lang", "en"]) == 0
    said = capsys.readouterr().err
    assert "--threshold auto: 1, calibrated on de-en" in said
    assert f"kept {len(CLEAN)} of" in said


def test_an_interrupt_while_the_kept_pairs_are_written_leaves_the_earlier_run_whole(
        toy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The --scores file and -o were renamed into place one after the other, each as soon as written: an interrupt
    between them left this run's scores beside the earlier run's kept pairs."""
    from xlsent.mining import job

    kept, scores = tmp_path / "kept.tsv", tmp_path / "all.tsv"
    argv = ["filter", str(toy), "-o", str(kept), "--scores", str(scores), "--src-lang", "de", "--tgt-lang", "en",
            "--threshold", "1.0", "-q"]
    assert main(argv) == 0
    before = {p.name: p.read_bytes() for p in (kept, scores)}

    def interrupted(*args: object) -> list[str]:
        raise KeyboardInterrupt

    monkeypatch.setattr(job, "kept_rows", interrupted)
    assert main([*argv[:-3], "--threshold", "5", "-q"]) == 130  # a cut that keeps no pair: other scores rows
    assert {p.name: p.read_bytes() for p in (kept, scores)} == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_cut_applies_to_the_scores_it_was_made_for(toy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Three pairs and k=4: no margin, the scores are cosines; the auto cut is then the record's cosine cut, and a
    record without one is refused (its ratio cut of 1.0 would drop every pair, with exit 0). Distance margins are
    refused a ratio cut too."""
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    small, kept = tmp_path / "small.tsv", tmp_path / "k.tsv"
    small.write_text("".join(f"{de}\t{en}\n" for de, en in CLEAN[:3]), encoding="utf-8")
    record = {"threshold": 1.0, "encoder": "toy", "margin": "ratio", "k": 4, "sets": ["de-en"]}
    save_filter_threshold(record)
    argv = ["filter", str(small), "-o", str(kept), "--src-lang", "de", "--tgt-lang", "en", "-q"]
    assert main(argv) == 2
    said = capsys.readouterr().err
    assert "--threshold auto: 1 (from " in said
    assert "cuts ratio margins, but the scores of this run are cosines (" in said
    assert "fewer than k=4); lower --k for margins" in said and "xlsent calibrate --for filter" in said
    assert not kept.exists()
    save_filter_threshold({**record, "cosine_threshold": 0.5})
    assert main(argv) == 0
    said = capsys.readouterr().err
    assert "kept 3 of 3 pairs" in said and "score cut: 0.5 (auto, the cosine cut from " in said
    assert main([*argv, "--k", "2"]) == 0  # margins again: the ratio cut
    assert "score cut: 1 (auto, from " in capsys.readouterr().err
    assert main(["filter", str(toy), "-o", str(kept), "--margin", "distance", "-q"]) == 2
    assert "cuts ratio margins, but the scores of this run are distance margins" in capsys.readouterr().err


def test_settings_file_values_are_typed(tmp_path: Path) -> None:
    path = tmp_path / "f.toml"
    for text, message in (('copies = "no"\n', "copies = 'no': expected true or false, not a string"),
                          ("langid = 1\n", "langid = 1: expected true or false, not a whole number"),
                          ("ratio_min_length = 2.5\n", "expected a whole number, not a number with a fraction"),
                          ("max_ratio = nan\n", "max_ratio = nan: expected a finite number"),
                          ("max_ratio = 2\n[filter]\nlangid = false\n", "key(s) max_ratio outside [filter]"),
                          ("keep = 0.5\nthreshold = 1.0\n", "keep (0.5) and threshold (1.0) both set the score cut")):
        path.write_text(text, encoding="utf-8")
        with pytest.raises(ValueError, match="f.toml: ") as error:
            FilterConfig.from_toml(path)
        assert message in str(error.value)
    path.write_text("max_ratio = 2\nmax_length = 80\n", encoding="utf-8")
    assert FilterConfig.from_toml(path).max_ratio == 2.0 and FilterConfig.from_toml(path).max_length == 80


def test_two_files_resume_and_nothing_written_on_error(toy: Path, tmp_path: Path) -> None:
    pairs = read_tsv(toy)
    (tmp_path / "de.txt").write_text("".join(p[0] + "\n" for p in pairs), encoding="utf-8")
    (tmp_path / "en.txt").write_text("".join(p[1] + "\n" for p in pairs), encoding="utf-8")
    kept = tmp_path / "kept.tsv"
    argv = ["filter", str(tmp_path / "de.txt"), str(tmp_path / "en.txt"), "-o", str(kept), "--src-lang", "de",
            "--tgt-lang", "en", "--threshold", "1.0", "-q"]
    assert main(argv) == 0
    assert read_tsv(kept) == [list(pair) for pair in CLEAN]
    (tmp_path / "en.txt").write_text("one line\n", encoding="utf-8")
    kept.unlink()
    assert main(argv) == 2
    assert not kept.exists() and not (tmp_path / "kept.tsv.work").exists()


def test_histogram_is_a_png(toy: Path, tmp_path: Path) -> None:
    png = tmp_path / "scores.png"
    assert main(["filter", str(toy), "-o", str(tmp_path / "k.tsv"), "--histogram", str(png), "--threshold", "1.0",
                 "--src-lang", "de", "--tgt-lang", "en", "-q"]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_header_row_is_read_as_a_pair_with_a_warning(toy: Path, tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    with_header = tmp_path / "with_header.tsv"
    with_header.write_text("de\ten\n" + toy.read_text(encoding="utf-8"), encoding="utf-8")
    scores = tmp_path / "all.tsv"
    with caplog.at_level(logging.WARNING):
        assert main(["filter", str(with_header), "-o", str(tmp_path / "k.tsv"), "--scores", str(scores),
                     "--threshold", "1.0", "--src-lang", "de", "--tgt-lang", "en", "-q"]) == 0
    assert "looks like a header" in caplog.text
    rows = read_tsv(scores)
    assert len(rows) - 1 == len(with_header.read_text(encoding="utf-8").splitlines())
    assert rows[1][0] == "0"
    assert main(["filter", str(with_header), "--header", "-o", str(tmp_path / "k2.tsv"), "--scores",
                 str(tmp_path / "all2.tsv"), "--threshold", "1.0", "--src-lang", "de", "--tgt-lang", "en", "-q"]) == 0
    assert read_tsv(tmp_path / "all2.tsv")[1][-2:] == list(CLEAN[0])
    assert read_tsv(tmp_path / "all2.tsv")[1 + len(CLEAN) + 4][SCORE_COLUMNS.index("duplicate_of")] == "5"


def test_rules_know_their_answers() -> None:
    assert [nontext(t, min_letter_share=0.5, max_digit_share=0.25) for t in
            ("Wir sehen uns am Montag.", "info@example.org", "1.234.567", "12/03/2019", "Startseite » Shop » Kontakt",
             "« Oui », dit-il.", "Il a dit : « Non. »", "大约 16,700 人被疏散。", "नमस्ते, आप कैसे हैं?")] == [
                "", "url", "letters", "letters", "menu", "", "", "", ""]
    assert length("abc") == 3 and length("中文") == 6
    assert similarity("Guten Morgen!", "guten  morgen") == 1.0
    assert similarity("Guten Morgen!", "Good morning!") < 0.5


def test_language_id_finds_the_wrong_language() -> None:
    guess = identify(["Der Hund schläft im Garten.", "Le chien dort dans le jardin.", ""])
    assert guess.top == ["de", "fr", "und"]
    assert guess.prob_of("de")[1] < 0.05 < guess.prob_of("de")[0]


def test_chinese_is_a_macrolanguage_to_language_id() -> None:
    """Cantonese and Wu lines of a zh bitext (Tatoeba's zho holds them) are Chinese, not a wrong language; Japanese
    is not (the zh-en dev bitext's clean Cantonese pairs were dropped before)."""
    guess = identify(["呢個係我見過最靚嘅景。", "我窗帘拉开来个辰光，垃海落雪。",
                      "これは私が見た中で一番きれいな景色です。"])
    assert guess.top[:2] == ["yue", "wuu"]
    assert guess.prob_of("zh")[0] > 0.9 and guess.prob_of("zh")[1] > 0.9 and guess.prob_of("zh")[2] < 0.05


def test_invisible_lines_are_empty_to_language_id_and_the_filters() -> None:
    """A line of only zero-width, format or control characters is empty (xlsent.data.empty_text), not text."""
    invisible = "\u200b\u200c\ufeff\u00ad\x01"
    assert identify(["Der Hund schläft im Garten.", invisible]).top == ["de", "und"]
    cfg = FilterConfig(langid=False)
    src, tgt = ["Das ist ein Test.", "Ein ganz normaler Satz hier."], ["This is a test.", invisible]
    assert decide(pair_values(src, tgt, (None, None), cfg), np.array([2.0, 2.0]), cfg, threshold=1.0).reason == [
        "", "empty"]


def test_first_failing_filter_is_the_reason_and_duplicates_keep_the_first() -> None:
    cfg = FilterConfig(langid=False)
    src = ["Das ist ein Test.", "Das ist ein Test.", "https://x.org", "Kurz.", "Ein ganz normaler Satz hier."]
    tgt = ["This is a test.", "this is a test", "https://x.org", "This line is very much longer than its source.",
           "A perfectly normal sentence here."]
    got = decide(pair_values(src, tgt, (None, None), cfg), np.array([2.0, 2.0, 2.0, 2.0, 0.5]), cfg, threshold=1.0)
    assert got.reason == ["", "duplicate", "nontext", "length", "score"]
    assert got.counts() == {"nontext": 1, "length": 1, "duplicate": 1, "score": 1, "kept": 1}


def test_config_checks_and_toml(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="keep must be above 0 and at most 1"):
        FilterConfig(keep=1.5)
    path = tmp_path / "f.toml"
    path.write_text("max_ratio = 2.0\ncolour = 'red'\n", encoding="utf-8")
    with pytest.raises(ValueError, match="unknown filter setting"):
        FilterConfig.from_toml(path)


def test_filter_cut_lookup_falls_back_to_fp32(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    shipped = tmp_path / "cuts.json"
    save_filter_threshold({"threshold": 0.97, "encoder": "toy@1"}, ship=True, path=shipped)
    bf16 = LookupEncoder({"a": [1.0]}, name="toy@1+openvino-bf16")
    found = filter_threshold(bf16, path=shipped)
    assert found is not None and found[0]["threshold"] == 0.97
    assert filter_threshold(LookupEncoder({"a": [1.0]}, name="other@2"), path=shipped) is None


def test_keep_metrics() -> None:
    m = keep_metrics(np.array([True, False, True, False]), ["clean", "clean", "duplicate", "boilerplate"])
    assert (round(m["keep_f1"], 1), m["drop_duplicate"], m["drop_boilerplate"]) == (50.0, 0.0, 100.0)


@pytest.mark.data
def test_noisy_dev_bitext_is_deterministic_labelled_and_split() -> None:
    root = dataset_or_skip("parallel")
    a, b = build_noisy_bitext("de-en", root), build_noisy_bitext("de-en", root)
    assert (a.src, a.tgt, a.kind) == (b.src, b.tgt, b.kind)
    assert set(a.counts()) == {"clean", *NOISE_KINDS}
    tune = build_noisy_bitext("de-en", root, split="tune")
    clean = {(s, t) for s, t, k in zip(a.src, a.tgt, a.kind, strict=True) if k == "clean"}
    assert not clean & {(s, t) for s, t, k in zip(tune.src, tune.tgt, tune.kind, strict=True) if k == "clean"}
    firsts = {}
    for i, (s, t, k) in enumerate(zip(a.src, a.tgt, a.kind, strict=True)):
        if k == "duplicate" and (s, t) in firsts:
            assert firsts[(s, t)] < i
        firsts.setdefault((s, t), i)


@pytest.mark.data
def test_dev_evaluation_rows_and_baselines_on_an_oracle_encoder() -> None:
    """With vectors that make every clean pair (and every copy) a perfect match and noise a random one, the label-
    picked cosine baseline keeps copies, so only the filter drops untranslated pairs."""
    from xlsent.evaluation.filter import METHODS, Filter

    root = dataset_or_skip("parallel")
    bitexts = {pair: build_noisy_bitext(pair, root) for pair in DEV_PAIRS}
    truth = {line: i for bitext in bitexts.values() for i, (s, t, k) in enumerate(zip(
        bitext.src, bitext.tgt, bitext.kind, strict=True)) if k in ("clean", "untranslated") for line in (s, t)}

    def embed(sentences: list[str], lang: str | None) -> np.ndarray:
        rows = np.array([np.random.default_rng(truth.get(s, zlib.crc32(s.encode()) + 10**6)).normal(size=DIM)
                         for s in sentences])
        return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)

    result = Filter.evaluate(embed, encoder_id="oracle", root=root, threshold=1.0, scorer=None)
    assert list(result.scores) == [f"{pair}: {method}" for pair in DEV_PAIRS for method in METHODS]
    for pair in DEV_PAIRS:
        ours, cosine = result.scores[f"{pair}: xlsent filter"], result.scores[f"{pair}: best cosine threshold"]
        assert ours["drop_untranslated"] == 100.0 and cosine["drop_untranslated"] < 100.0
        assert ours == result.scores[f"{pair}: rules + margin cut"]  # no scorer: the filter is the rules and the cut
    assert len(result.dataset_files) > 4 and any("issue 60's bar" in note for note in result.notes)
    assert "no learned scorer" in result.notes[0]


def test_ray_engine_filters_as_this_process_does(local_ray: None, tmp_path: Path, tiny_model_dir: Path) -> None:
    from xlsent.api import filter as filter_pairs
    from xlsent.mining.distributed import RayConfig

    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("".join(f"{s}\t{t}\n" for s, t in [*CLEAN, *EXPECTED[len(CLEAN):]]), encoding="utf-8")
    sides = [InputSpec(pairs, column=c, header=False) for c in ("0", "1")]
    cfg = FilterConfig(threshold=1.0)
    local = filter_pairs(*sides, tmp_path / "local.tsv", scores=tmp_path / "local-all.tsv", model=str(tiny_model_dir),
                         config=cfg, src_lang="de", tgt_lang="en", progress=False)
    on_ray = filter_pairs(*sides, tmp_path / "ray.tsv", scores=tmp_path / "ray-all.tsv", model=str(tiny_model_dir),
                          config=cfg, src_lang="de", tgt_lang="en", engine="ray", ray=RayConfig(), progress=False)
    assert on_ray.counts == local.counts
    assert (tmp_path / "ray-all.tsv").read_bytes() == (tmp_path / "local-all.tsv").read_bytes()
    assert (tmp_path / "ray.tsv").read_bytes() == (tmp_path / "local.tsv").read_bytes()


@pytest.mark.data
def test_filter_calibration_records_a_cosine_cut_beside_the_margin_cut(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The cut of runs whose scores are cosines is calibrated as the margin cut is, on the cosines of the same tune
    pairs, and ``cut_for`` gives each scale its own."""
    from xlsent.mining.auto_threshold import AutoThreshold
    from xlsent.mining.filter_calibration import calibrate_filter

    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    root = dataset_or_skip("parallel")
    truth = {line: i for pair in DEV_PAIRS for bitext in [build_noisy_bitext(pair, root, split="tune")]
             for i, (s, t, k) in enumerate(zip(bitext.src, bitext.tgt, bitext.kind, strict=True)) if k == "clean"
             for line in (s, t)}

    class Oracle:
        """Every clean pair a perfect match, every other line a random direction."""

        name = id = "oracle"
        dim = DIM

        def encode(self, sentences: list[str], lang: str | None = None, **kw: object) -> np.ndarray:
            rows = np.array([np.random.default_rng(truth.get(s, zlib.crc32(s.encode()) + 10**6)).normal(size=DIM)
                             for s in sentences])
            return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)

    record = calibrate_filter(Oracle(), root=root)  # type: ignore[arg-type]
    cosines = [record["per_pair"][pair]["cosine_threshold"] for pair in DEV_PAIRS]
    assert record["cosine_threshold"] == pytest.approx(float(np.mean(cosines)))
    assert 0.5 < record["cosine_threshold"] <= 1.0 + 1e-6  # the clean pairs' cosine is 1, the noise's about 0
    cut = AutoThreshold(record["threshold"], record, "the test's record")
    assert cut.cut_for("absolute") == record["cosine_threshold"] and cut.cut_for("ratio") == record["threshold"]
