"""LASER: the BiLSTM encoder and decoder, corpus assembly, vocabulary, training, resume, save and reload."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sentencepiece as spm
import torch
from safetensors.torch import load_file
from torch import nn

import xlsent
from xlsent.data.bucc import newstest_dev_sentences
from xlsent.data.held_out import tatoeba_v1_sentences
from xlsent.data.tatoeba import load_tatoeba
from xlsent.data.user_bitext import BitextFile, load_user_bitext
from xlsent.encoders.backends import native_bf16
from xlsent.encoders.bilstm import UNK_ID, BiLstmSentenceEncoder, LaserEncoder, pad_batch
from xlsent.encoders.model_dir import ModelDirError
from xlsent.encoders.registry import load_encoder
from xlsent.methods.laser.config import LaserConfig
from xlsent.methods.laser.data import PairCorpus, build_corpus, corpus_counts, write_corpus
from xlsent.methods.laser.model import (
    METHOD,
    DevMiningSet,
    HeldOut,
    LaserDecoder,
    held_out_scores,
    tokenize_corpus,
    train_on,
)
from xlsent.methods.laser.vocab import covering_chars, train_vocab
from xlsent.training.config import ConfigError
from xlsent.training.record import TrainingRecord

pytestmark = pytest.mark.usefixtures("one_torch_thread", "xlsent_home")

TINY = ["vocab_size=60", "vocab_per_lang=500", "embed_dim=8", "hidden=8", "layers=2", "decoder_hidden=16",
        "decoder_embed_dim=8", "lang_embed_dim=4", "max_tokens=200", "max_sentence_tokens=40", "steps=30",
        "eval_every=0", "checkpoint_every=10", "log_every=5", "device=cpu", "languages=de", "targets=en,es",
        "save_dtype=float32", "dropout=0.1"]


def tiny_config(*sets: str) -> LaserConfig:
    cfg = METHOD.config(sets=[*TINY, *sets])
    assert isinstance(cfg, LaserConfig)
    return cfg


def toy_corpus(n: int = 60) -> list[PairCorpus]:
    """de -> en and de -> es toy pairs: words translate one to one ("hund" = "dog" = "perro", ...)."""
    rng = np.random.default_rng(0)
    de, en, es = (["hund", "katze", "haus", "baum", "rot", "blau"], ["dog", "cat", "house", "tree", "red", "blue"],
                  ["perro", "gato", "casa", "arbol", "rojo", "azul"])
    rows = [rng.choice(6, size=rng.integers(2, 5)) for _ in range(n)]

    def side(words: list[str]) -> list[str]:
        return [" ".join(words[i] for i in r) for r in rows]

    return [PairCorpus("de", "en", side(de), side(en)), PairCorpus("de", "es", side(de), side(es)),
            PairCorpus("en", "es", side(en), side(es))]


def test_max_pooling_ignores_padding() -> None:
    torch.manual_seed(0)
    net = BiLstmSentenceEncoder(vocab_size=30, embed_dim=6, hidden=5, layers=2, dropout=0.0).eval()
    alone = net(*pad_batch([[4, 5, 3]]))
    padded = net(*pad_batch([[4, 5, 3], [7, 8, 9, 10, 11, 12, 3]]))[:1]
    assert alone.shape == (1, 10)
    torch.testing.assert_close(alone, padded)


def test_padded_bilstm_equals_packed_sequences_and_ignores_its_batch() -> None:
    """The padded forward pass (oneDNN, bf16-capable) gives the packed-sequence LSTM's vectors, row by row."""
    torch.manual_seed(0)
    for layers in (1, 3):
        net = BiLstmSentenceEncoder(vocab_size=50, embed_dim=16, hidden=8, layers=layers, out_dim=6).eval()
        ids, lengths = pad_batch([[5, 9, 3], [4], [7, 8, 9, 10, 11, 12, 3], [6, 6, 3]])
        packed = nn.utils.rnn.pack_padded_sequence(net.embed(ids), lengths, batch_first=True, enforce_sorted=False)
        states, _ = nn.utils.rnn.pad_packed_sequence(net.lstm(packed)[0], batch_first=True,
                                                     padding_value=float("-inf"))
        assert net.project is not None
        torch.testing.assert_close(net(ids, lengths), net.project(states.max(dim=1).values), atol=1e-6, rtol=0)
        torch.testing.assert_close(net(*pad_batch([[7, 8, 9, 10, 11, 12, 3]]))[0], net(ids, lengths)[2])


def test_decoder_starts_from_the_sentence_and_reads_the_language() -> None:
    torch.manual_seed(0)
    dec = LaserDecoder(vocab_size=30, sentence_dim=10, n_langs=2, embed_dim=6, hidden=12, lang_dim=4,
                       dropout=0.0).eval()
    sentence = torch.randn(2, 10)
    prev = torch.tensor([[2, 5, 6], [2, 7, 0]])
    logits = dec(sentence, torch.tensor([0, 1]), prev)
    assert logits.shape == (2, 3, 30)
    assert not torch.allclose(logits, dec(sentence, torch.tensor([1, 0]), prev))
    assert not torch.allclose(logits, dec(sentence.flip(0), torch.tensor([0, 1]), prev))


def test_config_checks() -> None:
    with pytest.raises(ConfigError, match="max_sentence_tokens must be <= max_tokens"):
        tiny_config("max_tokens=10").check()
    with pytest.raises(ConfigError, match="targets"):
        tiny_config("targets=en,en").check()
    with pytest.raises(ConfigError, match="selection xsim needs eval_every"):
        tiny_config("selection=xsim").check()
    with pytest.raises(ConfigError, match="selection mining needs eval_every >= 1 and dev_mining"):
        tiny_config("selection=mining", "eval_every=5").check()
    with pytest.raises(ConfigError, match="dev_mining needs a training language with a BUCC-style dev set"):
        tiny_config("dev_mining=true", "languages=zh").check()


def test_a_vocabulary_too_small_for_the_alphabet_is_a_clear_error(tmp_path: Path) -> None:
    from xlsent.methods.laser.vocab import train_vocab

    with pytest.raises(ValueError, match="set vocab_size or character_coverage"):
        train_vocab({"el": ["αβγδεζηθικλμνξοπρστυφχψω " * 3]}, tmp_path / "spm.model", vocab_size=10, per_lang=9)


def test_over_long_pairs_are_left_out_and_counted() -> None:
    class Pieces:
        def encode(self, texts: list[str]) -> list[list[int]]:
            return [[5] * len(t.split()) for t in texts]

    corpus = [PairCorpus("de", "en", ["a b", "a b c d e f"], ["x y", "x"])]
    pairs, dropped = tokenize_corpus(Pieces(), corpus, ["en"], max_len=5)
    assert dropped == {"de-en": 1}
    assert pairs[0].src == [[5, 5, 3]] and pairs[0].tgt == [[2, 5, 5, 3]]


def test_training_learns_saves_and_reloads(tmp_path: Path) -> None:
    out = train_on(tiny_config("steps=80", "lr=0.01"), toy_corpus(), tmp_path / "m", progress=False)
    log = [json.loads(ln) for ln in (out / "train.jsonl").read_text().splitlines()]
    losses = [ln["losses"]["loss"] for ln in log if "losses" in ln]
    assert losses[-1] < 0.6 * losses[0]
    assert {"loss de-en", "loss de-es", "loss en-es", "tok/s"} <= set(log[-1]["losses"])
    assert not (out / "checkpoints").exists()
    assert not any("decoder" in k for k in load_file(out / "encoder.safetensors"))
    enc = xlsent.load(out)
    assert isinstance(enc, LaserEncoder) and enc.dim == 16
    vecs = enc.encode(["hund katze", "", "dog cat", "perro gato", "baum haus rot"])
    assert vecs.shape == (5, 16) and not vecs[1].any()
    assert vecs[0] @ vecs[2] > vecs[0] @ vecs[4]  # a translation is closer than an unrelated sentence
    manifest = json.loads((out / "xlsent.json").read_text())
    assert manifest["training"]["data"]["per_pair"]["de-es"]["pairs"] == 60
    assert json.loads((out / "data.json").read_text()) == TrainingRecord.from_json(manifest["training"]).data.details
    assert "60 pairs" in (out / "README.md").read_text() or "180 pairs" in (out / "README.md").read_text()


def test_resume_after_a_kill_equals_the_uninterrupted_run(tmp_path: Path,
                                                           killed_run: Callable[..., AbstractContextManager[None]]
                                                           ) -> None:
    cfg = tiny_config()
    whole = train_on(cfg, toy_corpus(), tmp_path / "whole", progress=False)
    with killed_run(17):
        train_on(cfg, toy_corpus(), tmp_path / "part", progress=False)
    resumed = train_on(cfg, toy_corpus(), tmp_path / "part", resume=True, progress=False)
    a, b = load_file(whole / "encoder.safetensors"), load_file(resumed / "encoder.safetensors")
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_time_budget_stops_training(tmp_path: Path) -> None:
    out = train_on(tiny_config("steps=100000", "minutes=0.002"), toy_corpus(), tmp_path / "m", progress=False)
    training = json.loads((out / "xlsent.json").read_text())["training"]
    assert 1 <= training["steps_done"] < 100000 and training["time_budget_minutes"] == 0.002


def test_laser_backends_are_pytorch_fp32_and_bf16(tmp_path: Path) -> None:
    out = train_on(tiny_config("steps=5"), toy_corpus(), tmp_path / "m", progress=False)
    sentences = ["hund katze", "dog cat", "perro gato", "baum haus rot"]
    fp32 = load_encoder(out, "torch")
    assert "+" not in fp32.id
    if native_bf16():
        bf16 = load_encoder(out, "torch-bf16")
        assert bf16.id == f"{fp32.id}+torch-bf16"
        assert np.sum(bf16.encode(sentences) * fp32.encode(sentences), axis=1).min() > 0.99
    else:  # oneDNN has no bf16 LSTM kernel there: a clear refusal, not a RuntimeError from the first batch
        with pytest.raises(ValueError, match="torch-bf16 needs a CPU with native bf16"):
            load_encoder(out, "torch-bf16")
    auto = load_encoder(out, "auto")  # the suite's backend table measures no CPU class: lossless torch
    assert isinstance(auto, LaserEncoder) and auto.backend == auto.auto_backend() == "torch"
    with pytest.raises(ValueError, match="runs on torch or torch-bf16"):
        load_encoder(out, "openvino")


def test_laser_small_runs_the_shipped_table_s_auto_choice(shipped_backend_table: dict[str, Any],
                                                          multiscript: list[str]) -> None:
    """``auto`` as it ships (the measured table's LASER row for this CPU, which the rest of the suite replaces) for
    models/laser-small: the table's choice, close to fp32, and a measured row on the CPU class this project runs."""
    from xlsent.encoders import backends

    table = shipped_backend_table
    if backends.cpu_class() == "amx":
        assert backends.table_key("amx", "laser") in table
    model = Path(__file__).resolve().parents[2] / "models" / "laser-small"
    auto, fp32 = load_encoder(model, "auto"), load_encoder(model, "torch")
    assert auto.backend == backends.backend_choice(table, family="laser")[0]
    assert np.sum(auto.encode(multiscript) * fp32.encode(multiscript), axis=1).min() >= 0.999


def test_corrupt_model_directories_are_refused(tmp_path: Path) -> None:
    out = train_on(tiny_config("steps=2"), toy_corpus(), tmp_path / "m", progress=False)
    (out / "encoder.safetensors").write_bytes(b"junk")
    with pytest.raises(ModelDirError, match="encoder.safetensors"):
        LaserEncoder(out)


@pytest.mark.data
def test_corpus_assembly_is_reproducible_and_leaves_tatoeba_out(parallel_data: Path, tmp_path: Path) -> None:
    corpus = build_corpus(["de", "it"], ["en", "es"], parallel_data, max_pairs=300, seed=0)
    assert [c.name for c in corpus] == ["de-en", "de-es", "it-en", "it-es", "en-es", "es-en"]
    counts = corpus_counts(corpus)
    assert counts["per_pair"]["de-en"]["pairs"] == 300
    assert {"tatoeba-challenge", "multi30k-train", "ntrex128"} <= set(counts["per_pair"]["de-en"]["sources"])
    banned = tatoeba_v1_sentences(parallel_data)
    assert not any(s in banned for c in corpus for s in (*c.src, *c.tgt))
    dev = newstest_dev_sentences(["de", "it", "en", "es"], parallel_data)
    assert len(dev) > 8000
    full = build_corpus(["de"], ["en"], parallel_data)
    assert any(s in dev for c in full for s in c.src)
    without_dev = build_corpus(["de"], ["en"], parallel_data, dev_held_out=True)
    assert not any(s in dev for c in without_dev for s in (*c.src, *c.tgt))
    assert len(full[0].src) - len(without_dev[0].src) >= 2990
    first, second = write_corpus(corpus, tmp_path / "a"), write_corpus(
        build_corpus(["de", "it"], ["en", "es"], parallel_data, max_pairs=300, seed=0), tmp_path / "b")
    assert all((first / p.name).read_bytes() == (second / p.name).read_bytes() for p in first.iterdir())
    with pytest.raises(ValueError, match="no training pairs for xx"):
        build_corpus(["xx"], ["en"], parallel_data)


@pytest.mark.data
def test_cli_trains_validates_and_evaluates(parallel_data: Path, tmp_path: Path) -> None:
    from xlsent.cli import main
    from xlsent.evaluation import tatoeba
    from xlsent.evaluation.task import encoder_embed

    out = tmp_path / "laser"
    extra = ["vocab_size=400", "max_pairs=200", "eval_every=10", "valid_pairs=40", "steps=20"]
    sets = [a for s in [*TINY, *extra] for a in ("--set", s)]
    assert main(["train", "laser", "--out", str(out), "-q", *sets]) == 0
    validation = json.loads((out / "xlsent.json").read_text())["training"]["validation"]
    logged = [v["validation"] for v in map(json.loads, (out / "train.jsonl").read_text().splitlines())
              if "validation" in v]
    assert len(logged) == 2 and validation["last"] == logged[-1] and set(logged[-1]) == {"xsim", "xsim/de"}
    assert validation["best"]["score"] == min(v["xsim"] for v in logged)  # an error rate: the lowest is the best
    encoder = xlsent.load(out)
    result = tatoeba.evaluate(encoder_embed(encoder), encoder_id="laser", langs=["deu"])
    xx, en = load_tatoeba("deu")
    cos = encoder.encode(xx) @ encoder.encode(en).T
    hits = np.arange(len(cos))
    by_hand = 50 * (np.mean(cos.argmax(axis=1) == hits) + np.mean(cos.argmax(axis=0) == hits))
    assert result.main_score == pytest.approx(by_hand)  # the trained model's own retrievals, counted here


def test_dev_mining_scores_f1_in_percent() -> None:
    """Each sentence mined against itself: every gold pair is found, F1 100 (not 1, not 10000)."""
    torch.manual_seed(0)
    net = BiLstmSentenceEncoder(vocab_size=40, embed_dim=8, hidden=8, layers=1).eval()
    rng = np.random.default_rng(0)
    ids = [[*map(int, rng.integers(4, 40, size=int(rng.integers(2, 8)))), 3] for _ in range(30)]
    held_out = HeldOut([], [DevMiningSet("de", ids, ids, {(i, i) for i in range(30)})])
    scores = held_out_scores(net, torch.device("cpu"), held_out)
    assert scores == {"mining": 100.0, "mining/de": 100.0}


@pytest.mark.data
def test_dev_mining_validation_picks_the_best_dev_f1(parallel_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "laser"
    corpus = build_corpus(["de"], ["en"], parallel_data, max_pairs=150, seed=0, dev_held_out=True)
    cfg = tiny_config("vocab_size=300", "eval_every=5", "valid_pairs=20", "steps=10", "targets=en",
                      "objective=translate", "dev_mining=true", "selection=mining")
    train_on(cfg, corpus, out, progress=False, data=parallel_data)
    validation = json.loads((out / "xlsent.json").read_text())["training"]["validation"]
    assert set(validation["last"]) == {"xsim", "xsim/de", "mining", "mining/de"}
    assert validation["criterion"].startswith("mean F1")
    scores = [v["validation"]["mining"] for v in map(json.loads, (out / "train.jsonl").read_text().splitlines())
              if "validation" in v]
    assert len(scores) == 2 and validation["best"]["score"] == max(scores)
    assert validation["last"]["mining"] == scores[-1]
    assert validation["restored"] is not None


def test_depth_verdicts_and_paper_rows() -> None:
    from xlsent.methods.laser.study import claims_depth, paper_row, tatoeba_code, trained_tatoeba

    row = {"tatoeba trained": 50.0, "bucc mean": 60.0, "xnli xx": 40.0, "xnli en": 55.0}
    verdicts = claims_depth({"3 layers": row, "1 layer": {**row, "bucc mean": 70.0, "xnli en": 50.0}}, "", "")
    assert [v.held for v in verdicts] == [False, False, False, True]
    assert verdicts[1].evidence == "60.0 vs 70.0" and "92.3 vs 90.0" in verdicts[1].claim  # the paper's Table 6
    assert [tatoeba_code(x) for x in ("zh", "de", "fa", "es")] == ["cmn", "deu", "pes", "spa"]
    assert trained_tatoeba(tiny_config("languages=de,zh")) == ["deu", "cmn", "spa"]
    paper = paper_row(["deu", "spa", "xxx"])
    assert paper["tatoeba trained"] == pytest.approx((99.0 + 98.0) / 2)  # deu and spa; xxx is not reported
    assert paper["xnli en"] == 73.9 and paper["bucc de-en"] == 96.19


def test_depth_verdicts_are_inconclusive_while_a_row_is_still_learning() -> None:
    from xlsent.methods.laser.study import DEV_GAIN, STILL_LEARNING, claims_depth

    row = {"tatoeba trained": 50.0, "bucc mean": 60.0, "xnli xx": 40.0, "xnli en": 55.0}
    settled = {**row, DEV_GAIN: STILL_LEARNING / 2}
    learning = {**row, "tatoeba trained": 2.0, DEV_GAIN: STILL_LEARNING + 5.0}
    verdicts = claims_depth({"3 layers": learning, "1 layer": settled}, "", "")
    assert [v.held for v in verdicts] == [None] * 4
    assert "inconclusive: 3 layers gained 6.0 dev F1 points" in verdicts[0].evidence
    assert verdicts[0].evidence.startswith("2.0 vs 50.0")
    decided = claims_depth({"3 layers": {**learning, DEV_GAIN: 0.2}, "1 layer": settled}, "", "")
    assert [v.held for v in decided] == [False, False, False, False]


def test_objective_verdicts_are_xlsent_checks_of_each_column() -> None:
    from xlsent.methods.laser.study import claims_objective

    row = {"tatoeba trained": 50.0, "bucc mean": 60.0}
    rows = {"translate": {**row, "tatoeba trained": 1.0}, "distill": row, "both": {**row, "bucc mean": 65.0}}
    verdicts = claims_objective(rows, "", "")
    assert [v.held for v in verdicts] == [True, False, False, True]  # ties do not hold
    assert {v.source for v in verdicts} == {"xlsent"}
    assert verdicts[0].evidence == "50.0 vs 1.0" and "translation objective" in verdicts[0].claim
    ranked = claims_objective({**rows, "distill, MSE alone": {**row, "tatoeba trained": 40.0}}, "", "")
    assert [v.held for v in ranked] == [True, False, True, False, True, False]
    assert "in-batch ranking" in ranked[2].claim and ranked[2].evidence == "50.0 vs 40.0"
    both = claims_objective({**rows, "distill, MSE alone": {**row, "tatoeba trained": 40.0},
                             "distill, no teacher ranking": {**row, "tatoeba trained": 45.0}}, "", "")
    assert [v.held for v in both] == [True, False, True, True, False, True, False, False]
    assert "teacher ranking" in both[2].claim and both[2].evidence == "50.0 vs 45.0"
    assert both[3].evidence == "45.0 vs 40.0"  # in-batch ranking: the row without teacher ranking vs MSE alone


def test_objective_study_rows_drop_the_terms_they_name(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from xlsent.methods.laser import study

    layer = Path(xlsent.__file__).parent / "configs" / "laser-small.toml"
    lab = study.Lab(study.Settings(configs=(str(layer),), models_dir=tmp_path), tmp_path)
    monkeypatch.setattr(study.Lab, "model", lambda self, out, **overrides: (out.name, self.config(**overrides)))
    rows = {drop: lab.timed("distill", 1, drop=drop) for drop in ("", "teacher ranking", "ranking")}
    translate = lab.timed("translate", 1)
    weights = {name: (cfg.ranking_weight, cfg.teacher_ranking_weight, cfg.minutes)
               for name, cfg in (*rows.values(), translate)}
    assert weights == {"distill-1layer-5min": (1.0, 1.0, 5.0),
                       "distill-1layer-no-teacher-ranking-5min": (1.0, 0.0, 5.0),
                       "distill-1layer-no-ranking-5min": (0.0, 0.0, 5.0),
                       "translate-1layer-5min": (0.0, 0.0, 5.0)}
    name, cfg = lab.stepped("distill", 3, 400)  # the depth study: equal steps, no time budget
    assert (name, cfg.layers, cfg.steps, cfg.minutes, cfg.eval_every) == ("distill-3layer-400steps", 3, 400, 0.0, 200)


def test_a_rare_script_of_the_users_keeps_its_characters_in_the_vocabulary(tmp_path: Path) -> None:
    """A few sentences of a new script among many of another: the joint coverage would drop its characters."""
    rng = np.random.default_rng(0)
    common = {"en": [" ".join(rng.choice(["the", "dog", "barks", "at", "a", "cat", "red", "house"], 12))
                     for _ in range(3000)]}
    user = ["ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ ᎠᏍᎦᏯ", "ᎠᏂᏴᏫ ᎤᏛᏅ ᏣᎳᎩ"]
    per_language = {**common, "chr": user}
    unknown = {}
    for required in ("", covering_chars(user, 0.9995, 100)):
        path = train_vocab(per_language, tmp_path / f"v{len(required)}.model", vocab_size=80, per_lang=5000,
                           character_coverage=0.9995, required_chars=required)
        sp = spm.SentencePieceProcessor(model_file=str(path))
        unknown[bool(required)] = sum(i == UNK_ID for ids in sp.encode(user) for i in ids)
    assert unknown[False] > 0 and unknown[True] == 0


def test_user_bitext_joins_the_corpus_is_validated_and_recorded(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    en = ["dog", "cat", "house", "tree", "red", "blue"]
    rows = [rng.choice(6, size=rng.integers(2, 5)) for _ in range(120)]
    path = tmp_path / "qx.tsv"
    path.write_text("".join(" ".join(en[i][::-1] for i in r) + f" {k}\t" + " ".join(en[i] for i in r) + f" {k}\n"
                            for k, r in enumerate(rows)), encoding="utf-8")
    user = load_user_bitext([BitextFile("qx", str(path))], hold_out=True, seed=0)
    out = train_on(tiny_config("eval_every=10", "valid_pairs=0"), toy_corpus(), tmp_path / "m", progress=False,
                   user=user)
    manifest = json.loads((out / "xlsent.json").read_text())
    training = manifest["training"]
    assert training["data"]["per_pair"]["qx-en"]["pairs"] == user.records[0]["pairs"] == 70
    assert training["user_unknown_pieces_percent"] == {"qx": 0.0}
    assert set(training["validation"]["last"]) == {"xsim", "xsim/qx"}
    assert "qx" in manifest["languages"]["trained"]
    assert json.loads((out / "data.json").read_text())["user_bitext"] == user.records


def test_the_service_counts_a_laser_models_own_pieces_not_words(tmp_path: Path) -> None:
    """A word repeated 2000 times without a space is one whitespace word but thousands of SentencePiece pieces."""
    from xlsent.serve.inputs import count_tokens

    out = train_on(tiny_config("steps=2"), toy_corpus(), tmp_path / "m", progress=False)
    encoder = LaserEncoder(out)
    texts = ["hund katze", "katze" * 2000]
    counts = count_tokens(encoder, texts).per_input
    assert counts == [len(ids) for ids in encoder.token_ids(texts)] and counts[1] > 1_000


def test_resume_without_a_checkpoint_trains_the_vocabulary_of_the_config_given_now(
        tmp_path: Path, killed_run: Callable[..., AbstractContextManager[None]]) -> None:
    with killed_run(3):
        train_on(tiny_config("checkpoint_every=1000", "log_every=1"), toy_corpus(), tmp_path / "m", progress=False)
    assert (tmp_path / "m" / "spm.model").is_file() and not list(tmp_path.glob("m/checkpoints/ckpt-*"))
    out = train_on(tiny_config("vocab_size=40", "steps=2"), toy_corpus(), tmp_path / "m", resume=True,
                   progress=False)
    fresh = train_on(tiny_config("vocab_size=40", "steps=2"), toy_corpus(), tmp_path / "fresh", progress=False)
    assert (out / "spm.model").read_bytes() == (fresh / "spm.model").read_bytes()
    assert LaserEncoder(out).sp.get_piece_size() == LaserEncoder(fresh).sp.get_piece_size()  # architecture as spm


def test_a_checkpoint_keeps_its_vocabulary_and_an_unreadable_one_is_named(
        tmp_path: Path, killed_run: Callable[..., AbstractContextManager[None]]) -> None:
    with killed_run(12):
        train_on(tiny_config(), toy_corpus(), tmp_path / "m", progress=False)
    vocab = tmp_path / "m" / "spm.model"
    with pytest.raises(ValueError, match="config keys differ: vocab_size 60 -> 40"):
        train_on(tiny_config("vocab_size=40"), toy_corpus(), tmp_path / "m", resume=True, progress=False)
    kept = vocab.read_bytes()
    vocab.write_bytes(b"")
    with pytest.raises(ValueError, match=rf"^{vocab}: not a readable SentencePiece vocabulary \(.+\); delete it and "
                                         "--resume trains it again"):
        train_on(tiny_config(), toy_corpus(), tmp_path / "m", resume=True, progress=False)
    vocab.unlink()
    train_on(tiny_config(), toy_corpus(), tmp_path / "m", resume=True, progress=False)
    assert vocab.read_bytes() == kept  # the same configuration trains the same vocabulary, which the checkpoint checks


def test_a_teacher_that_does_not_load_leaves_no_output(tmp_path: Path) -> None:
    path = tmp_path / "qx.tsv"
    path.write_text("".join(f"hund {k}\tdog {k}\n" for k in range(60)), encoding="utf-8")
    user = load_user_bitext([BitextFile("qx", str(path))], hold_out=False, seed=0)
    with pytest.raises(ValueError, match="unknown model"):
        train_on(tiny_config("objective=distill", f"teacher={tmp_path / 'nonexistent'}"), toy_corpus(),
                 tmp_path / "m", progress=False, user=user)
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("resume", [True, False])
def test_a_run_killed_before_its_first_log_line_trains_again_into_the_same_folder(
        tmp_path: Path, killed_run: Callable[..., AbstractContextManager[None]], resume: bool) -> None:
    """Killed after its vocabulary, before any log line or checkpoint: the folder is a training run's, not foreign."""
    with killed_run(1):
        train_on(tiny_config("checkpoint_every=1000", "log_every=1000"), toy_corpus(), tmp_path / "m", progress=False)
    assert (tmp_path / "m" / "spm.model").is_file() and not (tmp_path / "m" / "train.jsonl").exists()
    out = train_on(tiny_config("steps=2"), toy_corpus(), tmp_path / "m", resume=resume, progress=False)
    assert LaserEncoder(out).encode(["hund"]).shape[0] == 1
