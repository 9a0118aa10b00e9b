"""Every model type xlsent loads (the built-in directory types and the type of every method registered in the
``xlsent.methods`` entry-point group) refuses a flipped byte in any file of its model directory, and proves its
vectors at load.

The smallest model of each type (``xlsent.testing.smallest_models``: a method's own ``Method.smallest``) is built
once per session; a type registered without one fails :func:`test_every_registered_type_has_a_builder`, so a method
added later is covered as soon as it is registered.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from xlsent.encoders import registry
from xlsent.encoders.base import Encoder
from xlsent.encoders.model_dir import MANIFEST, ModelDirError, is_log, read_manifest
from xlsent.encoders.registry import load_encoder
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.testing import registered_model_types, smallest_models
from xlsent.training.model_card import CARD


def model_files(directory: Path) -> list[str]:
    """Every file a model is made of: all but the manifest, the model card and the training logs."""
    return sorted(p.name for p in directory.iterdir()
                  if p.is_file() and p.name not in (MANIFEST, CARD) and not is_log(p.name))


@pytest.fixture(scope="session")
def built_model(tmp_path_factory: pytest.TempPathFactory, tiny_encoder: TransformerEncoder
                ) -> Iterator[Callable[[str], Path]]:
    """``built_model(type)``: the smallest model of ``type``, built once per session (its own ``$XLSENT_HOME``)."""
    root = tmp_path_factory.mktemp("model-types")
    built: dict[str, Path] = {}

    def get(kind: str) -> Path:
        if kind not in built:
            built[kind] = smallest_models()[kind](root / kind / "model", tiny_encoder)
        return built[kind]

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XLSENT_HOME", str(root / "home"))
        yield get


def test_every_registered_type_has_a_builder() -> None:
    assert registered_model_types() == sorted(smallest_models()), "set Method.smallest of each new method"


def test_testing_and_encoders_import_no_method() -> None:
    """A method is added inside its own package (and the entry-point list): the helpers and the encoders never name
    one."""
    src = Path(__file__).resolve().parents[1] / "src" / "xlsent"
    for path in [src / "testing.py", *sorted((src / "encoders").rglob("*.py"))]:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(from|import) xlsent\.methods", text, flags=re.MULTILINE), path


@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.parametrize("kind", registered_model_types())
def test_a_flipped_byte_in_any_model_file_is_refused(kind: str, built_model: Callable[[str], Path],
                                                     tmp_path: Path) -> None:
    built = built_model(kind)
    assert read_manifest(built, verify="sha256")["type"] == kind
    load_encoder(built)
    files = model_files(built)
    assert any(name.endswith(".safetensors") or name.endswith(".pt") for name in files), files
    for name in files:
        copy = Path(shutil.copytree(built, tmp_path / name))
        data = bytearray((copy / name).read_bytes())
        data[len(data) // 2] ^= 0x01
        (copy / name).write_bytes(bytes(data))
        with pytest.raises(ModelDirError, match=re.escape(f"{name}: checksum differs")):
            load_encoder(copy)


@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.parametrize("kind", registered_model_types())
def test_every_type_proves_its_vectors_at_load(kind: str, built_model: Callable[[str], Path],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading a model of any type encodes the check sentence (:func:`xlsent.encoders.registry.check_output`), and a
    model whose vectors are not finite is refused, naming its folder, never used."""
    built = built_model(kind)
    checked: list[str] = []
    real = registry.check_output

    def recording(encoder: Encoder, where: str) -> Encoder:
        checked.append(where)
        return real(encoder, where)

    monkeypatch.setattr(registry, "check_output", recording)
    encoder = load_encoder(built)
    assert str(built) in checked
    monkeypatch.setattr(encoder, "encode", lambda sentences, lang=None, **kw: np.full((len(sentences), encoder.dim),
                                                                                      np.nan, np.float32))
    with pytest.raises(ModelDirError, match=re.escape(f"{built}: its vector for the check sentence")):
        real(encoder, str(built))


@pytest.mark.usefixtures("one_torch_thread")
def test_a_deleted_training_log_leaves_the_model_loadable(built_model: Callable[[str], Path], tmp_path: Path) -> None:
    copy = Path(shutil.copytree(built_model("dual-pivot"), tmp_path / "model"))
    assert "train.jsonl" not in read_manifest(copy)["files"]
    (copy / "train.jsonl").unlink()
    load_encoder(copy)
