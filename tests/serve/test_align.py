"""``/v1/similarity`` and ``/v1/align``: the cosine matrix of the encoder's vectors, and the same pairs as
``xlsent mine`` on the same lines (its mining function run on files holding them)."""

from __future__ import annotations

from pathlib import Path

import httpx
import numpy as np
import pytest

from xlsent.data.text_input import InputSpec
from xlsent.mining.config import MineConfig
from xlsent.mining.engine import LocalEngine
from xlsent.mining.job import mine_files
from xlsent.testing import LookupEncoder

N_SRC, N_TGT, DIM = 40, 33, 16


@pytest.fixture(scope="module")
def corpus() -> tuple[list[str], list[str], LookupEncoder]:
    """Sources and targets with planted translations (a noisy copy of a source's vector), distractors, and repeated
    lines on both sides."""
    rng = np.random.default_rng(7)
    src_vecs = rng.standard_normal((N_SRC, DIM))
    table = {f"quelle {i}": src_vecs[i] for i in range(N_SRC)}
    tgt = []
    for j in range(N_TGT):
        text = f"target {j}"
        table[text] = src_vecs[j] + 0.6 * rng.standard_normal(DIM) if j < 25 else rng.standard_normal(DIM)
        tgt.append(text)
    src = [f"quelle {i}" for i in rng.permutation(N_SRC)]
    src += ["quelle 3", "quelle 3", "quelle 11"]
    tgt += ["target 5", "target 30"]
    return src, tgt, LookupEncoder(table, name="planted")


@pytest.fixture(scope="module")
def align_server(serve, corpus):
    with serve({"planted": corpus[2]}) as live:
        yield live


def mined(tmp_path: Path, src: list[str], tgt: list[str], encoder: LookupEncoder, cfg: MineConfig
          ) -> list[tuple[str, str, float]]:
    (tmp_path / "src.txt").write_text("\n".join(src) + "\n", encoding="utf-8")
    (tmp_path / "tgt.txt").write_text("\n".join(tgt) + "\n", encoding="utf-8")
    out = tmp_path / f"pairs-{cfg.mode}-{cfg.margin}-{cfg.unify}-{cfg.threshold}.tsv"
    mine_files(InputSpec(tmp_path / "src.txt"), InputSpec(tmp_path / "tgt.txt"), out, LocalEngine(encoder), cfg,
               progress=False)
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    return [(s, t, float(score)) for score, s, t in rows]


@pytest.mark.parametrize("options", [{}, {"mode": "intersect"}, {"mode": "forward", "margin": "distance"},
                                     {"mode": "backward", "k": 2}, {"threshold": 1.05, "one_to_one": True},
                                     {"unify": False, "dedup": False}, {"margin": "absolute", "k": 8}])
def test_align_gives_the_pairs_of_xlsent_mine(align_server, corpus, tmp_path: Path, options: dict) -> None:
    src, tgt, encoder = corpus
    r = httpx.post(align_server.url + "/v1/align", json={"src": src, "tgt": tgt, **options})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["object"] == "alignment" and body["model"] == "planted" and body["matrix"] is None
    got = [(src[p["src"]], tgt[p["tgt"]], p["score"]) for p in body["pairs"]]
    want = mined(tmp_path, src, tgt, encoder, MineConfig(**options))
    assert len(want) > 5
    assert [(s, t) for s, t, _ in got] == [(s, t) for s, t, _ in want]
    np.testing.assert_allclose([sc for *_, sc in got], [sc for *_, sc in want], atol=2e-6)
    x, y = encoder.encode(src), encoder.encode(tgt)
    for p in body["pairs"]:
        assert p["cosine"] == pytest.approx(float(x[p["src"]] @ y[p["tgt"]]), abs=1e-6)
        assert src.index(src[p["src"]]) == p["src"] and tgt.index(tgt[p["tgt"]]) == p["tgt"]  # first rows


def test_align_finds_the_planted_pairs(align_server, corpus) -> None:
    src, tgt, _ = corpus
    body = httpx.post(align_server.url + "/v1/align", json={"src": src, "tgt": tgt, "include_matrix": True}).json()
    found = {(src[p["src"]].split()[1], tgt[p["tgt"]].split()[1]) for p in body["pairs"][:20]}
    assert sum(a == b for a, b in found) >= 18
    assert np.asarray(body["matrix"]).shape == (len(src), len(tgt))


def test_similarity_is_the_cosine_matrix(align_server, corpus) -> None:
    src, tgt, encoder = corpus
    r = httpx.post(align_server.url + "/v1/similarity", json={"src": src[:5], "tgt": tgt[:7], "model": "planted"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["object"] == "similarity" and body["usage"]["total_tokens"] == 2 * 12
    np.testing.assert_allclose(body["matrix"], encoder.encode(src[:5]) @ encoder.encode(tgt[:7]).T, atol=1e-6)


def test_a_short_request_clips_k_without_a_warning(align_server, corpus, tmp_path: Path, caplog) -> None:
    """Fewer sentences than k: the pairs of `xlsent mine` (k clipped to each side), and no warning in the service's
    log, which would otherwise hold one for every short request."""
    src, tgt, encoder = corpus
    src, tgt = src[:3], tgt[:2]
    with caplog.at_level("WARNING", logger="xlsent"):
        r = httpx.post(align_server.url + "/v1/align", json={"src": src, "tgt": tgt, "k": 4})
    assert r.status_code == 200, r.text
    assert not [rec for rec in caplog.records if "exceeds the corpus size" in rec.getMessage()]
    got = [(src[p["src"]], tgt[p["tgt"]]) for p in r.json()["pairs"]]
    assert got == [(s, t) for s, t, _ in mined(tmp_path, src, tgt, encoder, MineConfig(k=4))] and got
    assert [rec for rec in caplog.records if "exceeds the corpus size" in rec.getMessage()]  # the file job warns
