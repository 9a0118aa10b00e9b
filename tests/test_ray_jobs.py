"""``xlsent embed`` and ``xlsent index`` with ``--engine ray`` on one local 2-CPU Ray session: the local engine's
files, and a run killed on one engine resumed on the other from its finished chunks."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from xlsent.embed_job import EmbedOptions

ray = pytest.importorskip("ray")

WORDS = ["the dog", "the cat", "barks", "runs", "der hund", "bellt", "a", "b"]
CHUNK = EmbedOptions(chunk_rows=16, progress=False)


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    """50 distinct lines and an empty one: four chunks of 16 rows."""
    lines = [f"{WORDS[i % 8]} {WORDS[(i * 3) % 8]} {i}" for i in range(50)]
    path = tmp_path / "corpus.txt"
    path.write_text("".join(line + "\n" for line in [*lines[:20], "", *lines[20:]]), encoding="utf-8")
    return path


def _sidecar(path: Path) -> dict[str, Any]:
    return json.loads(path.with_name(path.name + ".json").read_text(encoding="utf-8"))


class _Dies:
    """The tiny encoder, interrupted (as by Ctrl-C) on its ``dies_on``-th call."""

    def __init__(self, encoder: Any, dies_on: int) -> None:
        self.encoder, self.calls, self.dies_on = encoder, 0, dies_on

    def __getattr__(self, name: str) -> Any:
        return getattr(self.encoder, name)

    def encode(self, texts: Sequence[str], lang: str | None = None, **kw: Any) -> np.ndarray:
        self.calls += 1
        if self.calls == self.dies_on:
            raise KeyboardInterrupt
        return self.encoder.encode(texts, lang, **kw)


def test_embed_on_ray_writes_the_local_file_and_resumes_a_killed_local_run(
        local_ray: None, tmp_path: Path, tiny_model_dir: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import xlsent.api
    from xlsent.cluster import RayConfig

    options = {"model": str(tiny_model_dir), "backend": "torch", "options": CHUNK}
    local = xlsent.api.embed(corpus, tmp_path / "local.npy", **options)
    on_ray = xlsent.api.embed(corpus, tmp_path / "ray.npy", engine="ray", ray=RayConfig(), **options)
    assert (on_ray.rows, on_ray.encoded_rows, on_ray.empty_rows) == (local.rows, 51, [20])
    assert (tmp_path / "ray.npy").read_bytes() == (tmp_path / "local.npy").read_bytes()
    assert _sidecar(tmp_path / "ray.npy") == _sidecar(tmp_path / "local.npy")

    real = xlsent.api.load(str(tiny_model_dir), "torch")
    monkeypatch.setattr(xlsent.api, "load", lambda model, backend: _Dies(real, dies_on=3))
    with pytest.raises(KeyboardInterrupt):
        xlsent.api.embed(corpus, tmp_path / "resumed.npy", **options)
    assert len(list((tmp_path / "resumed.npy.parts").glob("*.npy"))) == 2, "the two chunks it finished are kept"
    resumed = xlsent.api.embed(corpus, tmp_path / "resumed.npy", engine="ray", ray=RayConfig(),
                               **{**options, "options": EmbedOptions(chunk_rows=16, progress=False, resume=True)})
    assert (resumed.resumed_chunks, resumed.encoded_rows) == (2, 51 - 32)
    assert (tmp_path / "resumed.npy").read_bytes() == (tmp_path / "local.npy").read_bytes()


def test_index_on_ray_builds_the_local_index(local_ray: None, tmp_path: Path, tiny_model_dir: Path,
                                             corpus: Path) -> None:
    import xlsent.api
    from xlsent.cluster import RayConfig
    from xlsent.mining.search_index import SentenceIndex

    options = {"model": str(tiny_model_dir), "backend": "torch", "kind": "flat", "progress": False}
    xlsent.api.index(corpus, tmp_path / "local", **options)
    xlsent.api.index(corpus, tmp_path / "ray", engine="ray", ray=RayConfig(), **options)
    for name in ("index.faiss", "texts.txt", "xlsent.json"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
    assert not (tmp_path / "ray.work").exists(), "the resumable embedding is removed once the index is written"
    assert len(SentenceIndex.open(tmp_path / "ray").texts) == 51


def test_warnings_of_the_encoder_actors_are_logged_as_a_local_run_logs_them(
        local_ray: None, tmp_path: Path, tiny_model_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    """An input longer than the model's window is split and averaged, with a warning saying so; on Ray the warning
    was logged in the actor's process, which the driver's log never shows."""
    import logging

    import xlsent.api
    from xlsent.cluster import RayConfig

    long = tmp_path / "long.txt"
    long.write_text("".join(f"{'the dog barks ' * 40}{i}\n" for i in range(3)), encoding="utf-8")
    options = {"model": str(tiny_model_dir), "backend": "torch", "options": CHUNK}
    for engine, ray_cfg in (("local", None), ("ray", RayConfig())):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="xlsent"):
            xlsent.api.embed(long, tmp_path / f"{engine}.npy", engine=engine, ray=ray_cfg, **options)
        assert "3 input(s) longer than 64 tokens were split into windows and averaged" in caplog.text, engine
