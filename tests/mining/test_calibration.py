"""Calibrated mining thresholds: calibration on a toy BUCC-style set, where records are looked up, the shipped file."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from xlsent.cli import main
from xlsent.data.bucc import newstest_bucc_dev
from xlsent.encoders.registry import REGISTERED, ModelInfo
from xlsent.mining import calibration
from xlsent.mining.calibration import calibrate, load_calibration, load_threshold, save_threshold, ship_threshold
from xlsent.testing import LookupEncoder
from xlsent.version import __version__

DIM, N_GOLD = 48, 12
ROOT = Path(__file__).resolve().parents[2]


class CountingEncoder(LookupEncoder):
    """A :class:`LookupEncoder` counting the sentences it encodes."""

    def __init__(self, table: dict[str, Sequence[float]], name: str) -> None:
        super().__init__(table, name=name)
        self.encoded = 0

    def encode(self, sentences: Sequence[str], lang: str | None = None, *, batch_tokens: int = 2048,
               progress: bool = False) -> np.ndarray:
        self.encoded += len(sentences)
        return super().encode(sentences, lang, batch_tokens=batch_tokens, progress=progress)


def toy_newstest(root: Path) -> CountingEncoder:
    """A data folder with the newstest files of a toy de-en BUCC-style *dev* set (12 gold pairs among distractors,
    the years of ``DEV_YEARS``; no newstest2012, the test sets' year), and an encoder putting each gold pair close
    together and the distractors elsewhere."""
    rng = np.random.default_rng(3)
    table: dict[str, Sequence[float]] = {}
    files: dict[tuple[int, str], list[str]] = {}
    for i in range(N_GOLD):
        base = rng.normal(size=DIM)
        files.setdefault((2011, "de"), []).append(f"de gold {i}")
        files.setdefault((2011, "en"), []).append(f"en gold {i}")
        table[f"de gold {i}"] = list(base + 0.05 * rng.normal(size=DIM))
        table[f"en gold {i}"] = list(base + 0.05 * rng.normal(size=DIM))
    for year, lang in [(2013, "de"), (2009, "en"), (2010, "en")]:
        files[year, lang] = [f"{lang} distractor {year} {i}" for i in range(8)]
        table.update({line: list(rng.normal(size=DIM)) for line in files[year, lang]})
    for (year, lang), lines in files.items():
        path = root / "parallel" / "wmt_newstest" / str(year) / f"newstest{year}.{lang}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return CountingEncoder(table, name="planted")


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty ``$XLSENT_HOME`` and shipped thresholds file: a fresh install."""
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(calibration, "SHIPPED", tmp_path / "shipped" / "thresholds.json")
    return tmp_path / "home"


def test_calibrate_shows_progress_per_set_and_reuses_cached_embeddings(tmp_path: Path, home: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    enc = toy_newstest(tmp_path / "data")
    first = calibrate(enc, langs=["de"], root=tmp_path / "data", progress=True)
    assert "calibrate" in capsys.readouterr().err
    bucc = newstest_bucc_dev("de", tmp_path / "data")
    assert enc.encoded == len(set(bucc.src)) + len(set(bucc.tgt))
    second = calibrate(enc, langs=["de"], root=tmp_path / "data")
    assert enc.encoded == len(set(bucc.src)) + len(set(bucc.tgt))  # nothing encoded again
    assert second["threshold"] == first["threshold"] and capsys.readouterr().err == ""
    assert first["per_set"]["de-en"]["f1"] == 100.0 and first["threshold"] > 1.0
    assert {k: first[k] for k in ("encoder", "margin", "k", "sets", "xlsent_version")} == {
        "encoder": "planted", "margin": "ratio", "k": 4, "sets": ["de-en"], "xlsent_version": __version__}
    assert first["date"] and first["per_set"]["de-en"]["description"] == bucc.description


def test_shipped_threshold_makes_auto_work_on_a_fresh_install(tmp_path: Path, home: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    enc = toy_newstest(tmp_path / "data")
    monkeypatch.setattr("xlsent.api.load", lambda model, backend="auto": enc)
    monkeypatch.setitem(REGISTERED, "planted", ModelInfo("planted", DIM, "toy", "a toy encoder"))
    assert main(["calibrate", "--model", "planted", "--data", str(tmp_path / "data"), "--langs", "de", "--ship",
                 "-q"]) == 0
    assert capsys.readouterr().err == ""  # -q: no progress
    shipped = json.loads(calibration.SHIPPED.read_text(encoding="utf-8"))["thresholds"]
    assert list(shipped) == ["planted"] and shipped["planted"]["sets"] == ["de-en"]

    # a fresh install: no cache, no model directory; the shipped record alone
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "fresh"))
    bucc = newstest_bucc_dev("de", tmp_path / "data")
    src, tgt, out = tmp_path / "de.txt", tmp_path / "en.txt", tmp_path / "pairs.tsv"
    src.write_text("".join(s + "\n" for s in bucc.src), encoding="utf-8")
    tgt.write_text("".join(t + "\n" for t in bucc.tgt), encoding="utf-8")
    assert main(["mine", str(src), str(tgt), "-o", str(out), "--threshold", "auto"]) == 0
    pairs = {tuple(line.split("\t")[1:3]) for line in out.read_text(encoding="utf-8").splitlines()}
    assert pairs == {(f"de gold {i}", f"en gold {i}") for i in range(N_GOLD)}
    err = capsys.readouterr().err
    assert f"--threshold auto: {shipped['planted']['threshold']:.6g}, calibrated on de-en" in err
    assert "the thresholds shipped with xlsent" in err and f"{N_GOLD} pairs out of" in err

    enc.id = "planted@other-weights"  # another version of the encoder never uses that threshold
    with pytest.raises(FileNotFoundError, match="no calibrated threshold for planted@other-weights .* which cover "
                       "planted\\); run `xlsent calibrate --model planted`"):
        load_threshold(enc)
    record = {**shipped["planted"], "encoder": enc.id}
    ship_threshold(enc, record)  # and shipping it replaces the record of the earlier version
    assert json.loads(calibration.SHIPPED.read_text(encoding="utf-8"))["thresholds"] == {enc.id: record}


def test_lookup_order_model_directory_then_cache_then_shipped(tmp_path: Path, home: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    enc = LookupEncoder({"a": [1.0]}, name="planted")
    enc.model_dir = tmp_path / "model"  # type: ignore[attr-defined]
    enc.model_dir.mkdir()  # type: ignore[attr-defined]
    manifest = enc.model_dir / "xlsent.json"  # type: ignore[attr-defined]
    manifest.write_text(json.dumps({"type": "toy"}), encoding="utf-8")
    monkeypatch.setitem(REGISTERED, "planted", ModelInfo("planted", 1, "toy", "a toy encoder"))
    ship_threshold(enc, {"threshold": 1.3, "encoder": "planted"})
    assert load_threshold(enc) == 1.3
    save_threshold(enc, {"threshold": 1.2, "encoder": "planted"})  # the cache and the model directory
    assert load_calibration(enc) == ({"threshold": 1.2, "encoder": "planted"}, str(manifest))
    manifest.write_text(json.dumps({"type": "toy", "mining": {"threshold": 1.1, "encoder": "planted"}}),
                        encoding="utf-8")
    assert load_threshold(enc) == 1.1
    manifest.write_text(json.dumps({"type": "toy", "mining": {"threshold": 1.1, "encoder": "planted@old"}}),
                        encoding="utf-8")
    assert load_calibration(enc)[1] == str(home / "calibration" / "planted.json")  # a stale record is skipped
    (home / "calibration" / "planted.json").unlink()
    assert load_calibration(enc) == ({"threshold": 1.3, "encoder": "planted"},
                                     f"the thresholds shipped with xlsent {__version__}")


def test_a_lossy_backend_uses_the_threshold_of_the_same_weights(tmp_path: Path, home: Path,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    """`auto` on an AMX CPU is OpenVINO bf16 (id ``...+openvino-bf16``): `--threshold auto` must still find the
    threshold calibrated for the same weights, unless the backend has one of its own."""
    fp32 = LookupEncoder({"a": [1.0]}, name="toy@abc")
    bf16 = LookupEncoder({"a": [1.0]}, name="toy@abc+openvino-bf16")
    save_threshold(fp32, {"threshold": 1.2, "encoder": "toy@abc"})
    with caplog.at_level("INFO", logger="xlsent.mining.calibration"):
        assert load_calibration(bf16) == ({"threshold": 1.2, "encoder": "toy@abc"},
                                          str(home / "calibration" / "toy@abc.json"))
    assert "same weights on fp32 (toy@abc)" in caplog.text
    save_threshold(bf16, {"threshold": 1.25, "encoder": "toy@abc+openvino-bf16"})
    assert load_threshold(bf16) == 1.25
    with pytest.raises(FileNotFoundError, match="no calibrated threshold for other@abc\\+onnx-int8"):
        load_calibration(LookupEncoder({"a": [1.0]}, name="other@abc+onnx-int8"))


def test_the_model_directory_comes_before_the_cache_record_of_another_copy(tmp_path: Path, home: Path) -> None:
    """Two copies of the same weights, on a lossy backend: calibrating one (into the cache and its own directory)
    must not override the threshold recorded in the other copy's directory, which comes first."""
    def copy(name: str) -> LookupEncoder:
        enc = LookupEncoder({"a": [1.0]}, name="toy@abc+openvino-bf16")
        enc.model_dir = tmp_path / name  # type: ignore[attr-defined]
        enc.model_dir.mkdir()  # type: ignore[attr-defined]
        (enc.model_dir / "xlsent.json").write_text(json.dumps(  # type: ignore[attr-defined]
            {"type": "toy", "mining": {"threshold": 1.1, "encoder": "toy@abc"}}), encoding="utf-8")
        return enc

    shipped, mine = copy("shipped"), copy("mine")
    save_threshold(mine, {"threshold": 1.3, "encoder": "toy@abc+openvino-bf16"})
    assert load_calibration(shipped) == ({"threshold": 1.1, "encoder": "toy@abc"},
                                         str(tmp_path / "shipped" / "xlsent.json"))
    assert load_calibration(mine) == ({"threshold": 1.3, "encoder": "toy@abc+openvino-bf16"},
                                      str(tmp_path / "mine" / "xlsent.json"))
    assert "the model directory first" in (calibration.__doc__ or "") + (load_calibration.__doc__ or "")


def test_calibration_on_too_few_gold_pairs_is_logged_and_recorded(tmp_path: Path, home: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    enc = toy_newstest(tmp_path / "data")  # 12 gold pairs
    with caplog.at_level("WARNING", logger="xlsent.mining.calibration"):
        record = calibrate(enc, langs=["de"], root=tmp_path / "data")
    assert record["per_set"]["de-en"]["gold_pairs"] == N_GOLD
    assert record["warning"].startswith(f"calibrated on too few gold pairs (de-en: {N_GOLD}; at least "
                                        f"{calibration.MIN_GOLD_PAIRS} a set")
    assert record["warning"] in caplog.text
    save_threshold(enc, record)
    from xlsent.mining.auto_threshold import auto_threshold

    with caplog.at_level("WARNING", logger="xlsent.mining.auto_threshold"):
        auto_threshold(enc, margin="ratio", k=4)
    assert "the calibration record" in caplog.text and "warns: calibrated on too few gold pairs" in caplog.text


def test_ship_refuses_an_unregistered_encoder(tmp_path: Path, home: Path) -> None:
    enc = LookupEncoder({"a": [1.0]}, name="my-model")
    with pytest.raises(ValueError, match="registered encoders"):
        ship_threshold(enc, {"threshold": 1.1, "encoder": "my-model"})
    assert not calibration.SHIPPED.exists()


def test_shipped_thresholds_file_is_package_data_of_registered_encoder_ids() -> None:
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert "mining/thresholds.json" in package_data["package-data"]["xlsent"]
    assert calibration.SHIPPED.is_file()
    for key, record in calibration.shipped_records().items():
        assert key.partition("@")[0] in REGISTERED and record["encoder"] == key
        assert {"threshold", "margin", "k", "sets", "date", "xlsent_version"} <= record.keys()


@pytest.mark.integration
@pytest.mark.parametrize("name", list(REGISTERED))
def test_every_registered_encoder_has_a_shipped_threshold(name: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from xlsent.encoders.registry import load_encoder

    encoder = load_encoder(name)
    monkeypatch.setattr(encoder, "model_dir", None, raising=False)  # neither the model directory's nor the cache's
    monkeypatch.setattr(calibration, "xlsent_home", lambda: tmp_path)
    assert load_calibration(encoder)[1].startswith("the thresholds shipped with xlsent")


def test_train_prints_the_calibrate_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "my model"
    monkeypatch.setattr("xlsent.api.train", lambda *args, **kwargs: out)
    assert main(["train", "linear-map", "--out", str(out), "-q"]) == 0
    assert f"xlsent calibrate --model '{out}'" in capsys.readouterr().out
    assert main(["train", "--help"]) == 0
    assert "xlsent calibrate" in capsys.readouterr().out.replace("\n", " ")


def test_every_shipped_model_and_filter_cut_is_calibrated_for_its_fp32_weights() -> None:
    """A record of the fp32 id serves every backend of the same weights; one made on openvino-bf16 would leave an
    fp32-only machine without a threshold (models/me5-distill v2 was first calibrated on bf16)."""
    from xlsent.mining.filter_calibration import SHIPPED

    repo = Path(__file__).resolve().parents[2]
    records = {p.parent.name: json.loads(p.read_text(encoding="utf-8")).get("mining")
               for p in (repo / "models").glob("*/xlsent.json")}
    mining = {name: r["encoder"] for name, r in records.items() if r}
    assert "me5-distill" in mining and all("+" not in key for key in mining.values()), mining
    cuts = json.loads(SHIPPED.read_text(encoding="utf-8"))["thresholds"]
    assert all("+" not in key and r["encoder"] == key for key, r in cuts.items()), list(cuts)
