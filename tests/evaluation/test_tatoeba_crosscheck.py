"""Recompute a language's Tatoeba accuracy with plain numpy from `xlsent embed` files and compare with
`xlsent eval tatoeba` (real default model, real data)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from xlsent.cli import main
from xlsent.encoders.transformer import TransformerEncoder

pytestmark = [pytest.mark.integration, pytest.mark.data]


def test_eval_agrees_with_twenty_lines_of_numpy(tmp_path: Path, shared_data: Path,
                                                 default_encoder: TransformerEncoder,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLSENT_HOME", str(tmp_path / "home"))
    monkeypatch.setattr("xlsent.encoders.me5_convert.default_model_dir", lambda: default_encoder.model_dir)
    langs = ["swg"]  # one of the smallest sets (112 pairs): each side is encoded twice, by embed and by eval
    expected = {}
    for lang in langs:
        vecs = {}
        for side in (lang, "eng"):
            out = tmp_path / f"{lang}.{side}.npy"
            src = shared_data / "tatoeba_v1" / f"tatoeba.{lang}-eng.{side}"
            assert main(["embed", str(src), "-o", str(out), "--backend", "torch", "-q"]) == 0
            vecs[side] = np.load(out)
        sims = vecs[lang] @ vecs["eng"].T
        gold = np.arange(len(sims))
        expected[lang] = (100 * np.mean(sims.argmax(1) == gold), 100 * np.mean(sims.argmax(0) == gold))
    assert main(["eval", "tatoeba", "--langs", *langs, "--backend", "torch", "--out", str(tmp_path / "res"), "-q"]) == 0
    result = json.loads((tmp_path / "res" / "tatoeba__me5-small.json").read_text())
    for lang in langs:
        assert result["scores"][lang]["xx->en"] == pytest.approx(expected[lang][0])
        assert result["scores"][lang]["en->xx"] == pytest.approx(expected[lang][1])
