"""Linear maps and the mapping-method platform: exact answers, retrieval rules against brute force, static
subword averages, data hygiene, and a model directory round trip (tiny backbone)."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from xlsent.cli import main as cli_main
from xlsent.data.held_out import held_out_sentences
from xlsent.data.retrieval_pk import load_set
from xlsent.encoders.registry import load_encoder
from xlsent.encoders.static_average import StaticAverageEncoder, fit_idf
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.evaluation import retrieval_pk
from xlsent.evaluation.task import encoder_embed
from xlsent.methods.mapping import data as mapping_data
from xlsent.methods.mapping import linear as linear_maps
from xlsent.methods.mapping.config import LinearMapConfig
from xlsent.methods.mapping.data import PairData, split_rows
from xlsent.methods.mapping.inputs import fit_input_encoder, input_encoder
from xlsent.methods.mapping.linear import (
    METHOD,
    LinearMapEncoder,
    fit_isf_beta,
    fit_least_squares,
    fit_procrustes,
    globally_corrected,
    inverted_softmax,
)

pytestmark = pytest.mark.usefixtures("one_torch_thread")

# --- maps ------------------------------------------------------------------------------------------------------


def test_procrustes_recovers_an_exact_rotation() -> None:
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    x = rng.normal(size=(40, 6))
    np.testing.assert_allclose(fit_procrustes(x, x @ q), q, atol=1e-5)
    noisy = fit_procrustes(x, x @ q + rng.normal(scale=0.5, size=(40, 6)))
    np.testing.assert_allclose(noisy.T @ noisy, np.eye(6), atol=1e-5)  # always orthogonal
    with pytest.raises(ValueError, match="one dimension"):
        fit_procrustes(x, x[:, :3])


def test_least_squares_recovers_a_linear_map_and_ridge_shrinks_it() -> None:
    rng = np.random.default_rng(1)
    a = rng.normal(size=(6, 4))
    x = rng.normal(size=(30, 6))
    np.testing.assert_allclose(fit_least_squares(x, x @ a), a, atol=1e-5)
    # one dimension: w = sum(x y) / (sum(x^2) + ridge) = 10 / (5 + 1)
    assert fit_least_squares(np.array([[1.0], [2.0]]), np.array([[2.0], [4.0]]), ridge=1.0)[0, 0] == pytest.approx(
        10 / 6)
    assert linear_maps.fit_linear("lsq-gc", x, x @ a).shape == (6, 4)
    with pytest.raises(ValueError, match="unknown linear method"):
        linear_maps.fit_linear("cca", x, x)


# --- retrieval rules -------------------------------------------------------------------------------------------


def test_globally_corrected_ranks_match_brute_force_and_undo_a_hub() -> None:
    cos = np.array([[0.9, 0.8, 0.1], [0.85, 0.1, 0.7], [0.95, 0.3, 0.2]])  # target 0 is every query's nearest
    assert cos.argmax(axis=1).tolist() == [0, 0, 0]
    assert globally_corrected(cos).argmax(axis=1).tolist() == [1, 2, 0]
    rng = np.random.default_rng(2)
    cos = rng.uniform(-1, 1, size=(12, 9))
    for i in range(12):
        ranks = [sum(cos[m, j] > cos[i, j] for m in range(12)) for j in range(9)]  # rank of query i for target j
        best = min(range(9), key=lambda j: (ranks[j], -cos[i, j]))
        assert globally_corrected(cos)[i].argmax() == best


def test_inverted_softmax_matches_its_formula_and_beta_is_fitted_on_log_probabilities() -> None:
    rng = np.random.default_rng(3)
    cos = rng.uniform(-1, 1, size=(5, 4))
    got = inverted_softmax(cos, 7.0)
    for i in range(5):
        for j in range(4):
            expect = math.log(math.exp(7 * cos[i, j]) / sum(math.exp(7 * cos[m, j]) for m in range(5)))
            assert got[i, j] == pytest.approx(expect)
    assert fit_isf_beta(np.eye(4)) == max(linear_maps.ISF_BETAS)  # separated pairs: the sharpest softmax
    noisy = np.eye(6) * 0.1 + rng.uniform(0, 0.1, size=(6, 6))
    scores = {b: np.mean(np.diagonal(inverted_softmax(noisy, b))) for b in (1.0, 3.0)}
    assert fit_isf_beta(noisy, (1.0, 3.0)) == max(scores, key=lambda b: scores[b])


def test_retrieval_rules_by_name() -> None:
    cos = np.array([[0.9, 0.8], [0.95, 0.1]])
    assert linear_maps.retrieval_rule("nn")(cos) is cos
    np.testing.assert_allclose(linear_maps.retrieval_rule("csls")(cos), retrieval_pk.csls_rule(cos))
    np.testing.assert_allclose(linear_maps.retrieval_rule("isf", 3.0)(cos), inverted_softmax(cos, 3.0))
    with pytest.raises(ValueError, match="unknown retrieval rule"):
        linear_maps.retrieval_rule("mnn")


# --- data ------------------------------------------------------------------------------------------------------


def test_split_rows_partition_the_pairs() -> None:
    labelled, unlabelled, valid = split_rows(100, 0.2, 5, seed=3)
    assert (len(labelled), len(unlabelled), len(valid)) == (15, 80, 5)
    assert sorted([*labelled, *unlabelled, *valid]) == list(range(100))
    assert [r.tolist() for r in split_rows(100, 0.2, 5, seed=3)] == [labelled.tolist(), unlabelled.tolist(),
                                                                      valid.tolist()]
    assert split_rows(10, 1.0, 0, seed=0)[1].size == 0
    with pytest.raises(ValueError, match="at least 2"):
        split_rows(10, 0.2, 1, seed=0)


def test_pairs_without_english_are_joined_through_english() -> None:
    de_en = (["Hund", "Katze", "Haus"], ["dog", "cat", "house"])
    es_en = (["gato", "perro", "árbol", "perrito"], ["cat", "dog", "tree", "dog"])
    assert mapping_data._joined_through_english(de_en, es_en) == (["Katze", "Hund"], ["gato", "perro"])


def test_config_checks_the_pairs() -> None:
    assert LinearMapConfig(pairs=["de-en", "es-en"]).sources == ["de", "es"]
    assert any("one target" in p for p in LinearMapConfig(pairs=["de-en", "es-fr"]).problems())
    assert any("method must be" in p for p in LinearMapConfig(method="cca").problems())


@pytest.mark.data
def test_training_bitexts_leave_out_every_test_sentence(parallel_data: Path) -> None:
    held = held_out_sentences(parallel_data)
    short = mapping_data.corpus_bitext("de-en", "short", parallel_data, banned=held)
    long = mapping_data.corpus_bitext("es-en", "long", parallel_data, banned=held, max_pairs=500, seed=1)
    assert list(short.summary["sources"]) == ["tatoeba-challenge"] and len(short.src) > 15000
    assert sorted(long.summary["sources"]) == [f"newstest{y}" for y in (2008, 2009, 2010, 2011, 2013)]
    assert len(long.src) == 500
    for bitext in (short, long):
        assert not (set(bitext.src) | set(bitext.tgt)) & held
        assert len(set(zip(bitext.src, bitext.tgt, strict=True))) == len(bitext.src)
    news = load_set("news-de", parallel_data)
    assert set(news.x) <= held and set(load_set("deu", parallel_data).y) <= held


@pytest.mark.data
@pytest.mark.parametrize("pair", ["ar-en", "zh-en", "de-en"])
def test_ntrex_corpus_reads_the_ntrex_file_of_each_language(pair: str, parallel_data: Path) -> None:
    # NTREX-128 names Arabic arb and Chinese zho_Hans (not their Tatoeba-Challenge codes ara and zho)
    bitext = mapping_data.corpus_bitext(pair, "ntrex", parallel_data, banned=set())
    assert list(bitext.summary["sources"]) == ["ntrex128"] and 1900 < len(bitext.src) <= 1997
    assert (bitext.src_lang, bitext.tgt_lang) == tuple(pair.split("-"))


# --- static subword averages -----------------------------------------------------------------------------------


def test_static_average_is_the_weighted_sum_of_subword_vectors(tiny_encoder: TransformerEncoder) -> None:
    sentences = ["the dog barks", "der hund bellt the", ""]
    plain = StaticAverageEncoder(tiny_encoder)
    table = tiny_encoder.model.embeddings.word_embeddings.weight.detach().numpy()
    ids = [e.ids for e in tiny_encoder.tokenizer.encode_batch(sentences, add_special_tokens=False)]
    assert plain.token_ids(sentences) == ids and ids[2] == []
    idf = fit_idf(ids, table.shape[0])  # 3 documents, one of them empty
    assert idf[ids[0][0]] == pytest.approx(math.log((1 + 3) / (1 + sum(ids[0][0] in s for s in ids))) + 1)
    tfidf = StaticAverageEncoder(tiny_encoder, idf)
    for enc, weights in ((plain, np.ones_like(idf)), (tfidf, idf)):
        got = enc.encode(sentences, "de")
        for row, seq in enumerate(ids[:2]):
            expect = sum(weights[t] * table[t] for t in seq)
            np.testing.assert_allclose(got[row], expect / np.linalg.norm(expect), atol=1e-5)
        assert not got[2].any()
    assert plain.id != tfidf.id and plain.id.startswith(tiny_encoder.id)
    assert plain.token_ids(["  the dog barks \t"]) == ids[:1]  # surrounding whitespace is no token
    with pytest.raises(ValueError, match="one weight per vocabulary id"):
        StaticAverageEncoder(tiny_encoder, idf[:5])


# --- model directory -------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("xlsent_home")
@pytest.mark.parametrize("inputs", ["encoder", "tfidf"])
def test_model_directory_round_trip(inputs: str, tiny_encoder: TransformerEncoder, tiny_model_dir: Path,
                                    tmp_path: Path, toy_pair_data: Callable[..., PairData],
                                    caplog: pytest.LogCaptureFixture, request: pytest.FixtureRequest) -> None:
    config = METHOD.config(sets=[f"backbone={tiny_model_dir}", f"inputs={inputs}", "method=procrustes"])
    assert isinstance(config, LinearMapConfig)
    data = toy_pair_data()
    out = linear_maps.train_on(config, [data], tiny_encoder, tmp_path / "lin", progress=False)
    enc = load_encoder(out)
    assert isinstance(enc, LinearMapEncoder) and enc.retrieval_rule == "nn"
    inputs_enc, idf = fit_input_encoder(tiny_encoder, inputs, [data])
    x, y = inputs_enc.encode(data.bitext.src), inputs_enc.encode(data.bitext.tgt)
    w = fit_procrustes(x[data.labelled], y[data.labelled])
    expect = (x @ w) / np.linalg.norm(x @ w, axis=1, keepdims=True)
    np.testing.assert_allclose(enc.encode(data.bitext.src, "deu"), expect, atol=1e-5)
    np.testing.assert_allclose(enc.encode(data.bitext.tgt, "en"), y, atol=1e-6)
    assert not enc.encode([""], "de").any()
    with pytest.raises(ValueError, match=r"pass the language of the sentences \(xlsent embed --lang de(u)?; xlsent "
                                         r"mine, score or filter --src-lang/--tgt-lang; encode\(\.\.\., lang="):
        enc.encode(["the dog"])
    with caplog.at_level(logging.WARNING):
        np.testing.assert_allclose(enc.encode(data.bitext.src[:2], "fr"), x[:2], atol=1e-6)
    assert "neither" in caplog.text
    manifest = json.loads((out / "xlsent.json").read_text(encoding="utf-8"))
    assert manifest["languages"] == {"sources": ["de"], "target": "en"}
    assert ("idf.safetensors" in manifest["files"]) == (inputs == "tfidf") and (idf is None) == (inputs != "tfidf")
    assert load_encoder(out, "auto").id == enc.id  # the conftest's table: auto is OpenVINO fp32, or nothing (tfidf)
    if inputs == "tfidf":
        with pytest.raises(ValueError, match="transformer backbone's own vectors only"):
            load_encoder(out, "openvino")
        return
    bf16 = load_encoder(out, "openvino-bf16")
    assert bf16.id == f"{enc.id}+openvino-bf16"
    bf16_atol = request.getfixturevalue("bf16_atol")  # skips here on a CPU without bf16 matrix instructions
    difference = float(np.abs(bf16.encode(data.bitext.src, "deu") - expect).max())
    assert 1e-6 < difference <= bf16_atol  # bf16 did run (not fp32), and moved nothing beyond its rounding


@pytest.mark.data
@pytest.mark.usefixtures("xlsent_home")
def test_cli_trains_a_linear_map_that_xlsent_eval_scores(tiny_model_dir: Path, tmp_path: Path,
                                                         parallel_data: Path) -> None:
    out = tmp_path / "lsq"
    assert cli_main(["train", "linear-map", "--out", str(out), "--data", str(parallel_data), "-q", "--set",
                     f"backbone={tiny_model_dir}", "--set", "method=lsq-gc", "--set", "max_pairs=300",
                     "--set", "inputs=average"]) == 0
    manifest = json.loads((out / "xlsent.json").read_text(encoding="utf-8"))
    assert manifest["type"] == "linear-map" and manifest["mapping"]["retrieval"] == "gc"
    assert manifest["training"]["data"]["pairs"]["de-en"]["labelled"] == 300
    assert cli_main(["eval", "retrieval_pk", "--model", str(out), "--langs", "deu", "--data", str(parallel_data), "-q",
                     "--output", str(tmp_path / "results")]) == 0
    result = json.loads(next((tmp_path / "results").glob("retrieval_pk__*.json")).read_text(encoding="utf-8"))
    assert set(result["scores"]) == {"deu"}
    test, model = load_set("deu", parallel_data), load_encoder(out)
    cos = model.encode(test.x, test.x_lang) @ model.encode(test.y, test.y_lang).T
    hits = np.arange(len(cos))
    by_hand = 50 * (np.mean(cos.argmax(axis=1) == hits) + np.mean(cos.argmax(axis=0) == hits))
    assert result["main_score"] == pytest.approx(by_hand)  # the map's own P@1, counted here
    unmapped = retrieval_pk.evaluate(encoder_embed(input_encoder(TransformerEncoder(tiny_model_dir), "average")),
                                     encoder_id="average", langs=["deu"], root=parallel_data)
    assert result["main_score"] != pytest.approx(unmapped.main_score)  # what eval scored is the map, not its inputs
