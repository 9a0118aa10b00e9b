"""The protocol every training method follows, and the registry ``xlsent train METHOD`` reads.

A method module defines one :class:`Method`: its config dataclass (a :class:`~xlsent.training.config.TrainConfig`
with the paper's defaults in ``xlsent/configs/<defaults>``), ``train(config, out, *, resume, data, progress)``
writing a model directory whose ``xlsent.json`` has ``type: <name>``, and the Encoder class that loads such a
directory. It registers itself through the ``xlsent.methods`` entry-point group in ``pyproject.toml``::

    [project.entry-points."xlsent.methods"]
    dual-pivot = "xlsent.methods.dual_pivot:METHOD"

so neither the CLI nor :func:`xlsent.load` names a method module, and a package outside xlsent can add one.
See ``docs/adding-a-method.md``.

>>> sorted(available_methods())                                     # doctest: +SKIP
['dual-pivot']
>>> get_method("dual-pivot").config(sets=["steps=10"]).steps         # doctest: +SKIP
10
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from importlib import metadata, resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import torch

from xlsent.atomic import check_folder_output
from xlsent.data.user_bitext import as_recorded, parse_bitext_option
from xlsent.encoders.base import Encoder
from xlsent.encoders.model_dir import MANIFEST, read_manifest, write_manifest
from xlsent.training.bitext_config import UserBitextConfig
from xlsent.training.config import ConfigError, TrainConfig, build_config, read_layers
from xlsent.training.loop import resolve_device
from xlsent.training.model_card import write_card
from xlsent.training.record import TrainingRecord
from xlsent.training.run_folder import is_training_run, left_as_it_was_on_failure

if TYPE_CHECKING:
    from xlsent.encoders.transformer import TransformerEncoder

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "xlsent.methods"
C = TypeVar("C", bound=TrainConfig)


SmallestModel = Callable[[Path, "TransformerEncoder"], Path]
"""``smallest(out, backbone) -> model directory``: a method's smallest model, trained in seconds."""


class TrainFn(Protocol):
    """``train(config, out, *, resume, data, progress) -> model directory``."""

    def __call__(self, config: Any, out: Path, *, resume: bool = False, data: str | Path | None = None,
                 progress: bool = True) -> Path: ...


@dataclass(frozen=True)
class Method:
    """A trainable method: name (= the model-directory type it writes), config, defaults, train, encoder, and
    ``smallest``: ``smallest(out, backbone)`` writes its smallest model (a tiny transformer ``backbone``, a couple of
    steps on :mod:`xlsent.training.toy`) for the tests that build one model of every type."""

    name: str
    summary: str
    config_class: type[TrainConfig]
    defaults: str
    train: TrainFn
    encoder: Callable[[Path], Encoder]
    modes: tuple[str, ...] = ()
    smallest: SmallestModel | None = None

    @property
    def model_type(self) -> str:
        return self.name

    def defaults_text(self) -> str:
        """The packaged TOML defaults (documented key by key)."""
        return (resources.files("xlsent") / "configs" / self.defaults).read_text(encoding="utf-8")

    def config(self, files: Sequence[str | Path] = (), sets: Sequence[str] = (), mode: str | None = None,
               **overrides: Any) -> TrainConfig:
        """The effective configuration: packaged defaults, then ``files``, then ``key=value`` ``sets`` (the
        command line's), then typed ``overrides`` (``steps=200``: what a study fixes)."""
        return self._build(files, sets, mode, overrides)

    def command_config(self, files: Sequence[str | Path], sets: Sequence[str], mode: str | None,
                       bitext: Sequence[str], bitext_only: bool) -> TrainConfig:
        """The configuration of ``xlsent train``: :meth:`config` of ``files``, ``sets`` and ``mode`` with the
        ``--bitext`` entries and ``--bitext-only`` added (:func:`add_user_bitext`), checked once they are."""
        return self._build(files, sets, mode, {}, adjust=lambda config: add_user_bitext(config, bitext, bitext_only,
                                                                                     self.name))

    def _build(self, files: Sequence[str | Path], sets: Sequence[str], mode: str | None,
               overrides: dict[str, Any], adjust: Callable[[TrainConfig], TrainConfig] | None = None
               ) -> TrainConfig:
        """The configuration of :meth:`config`, ``adjust`` applied before its values are checked."""
        if mode is not None and mode not in self.modes:
            known = f"modes: {', '.join(self.modes)}" if self.modes else f"{self.name} has no modes: drop --mode"
            raise ValueError(f"{self.name}: unknown mode {mode!r}; {known}")
        layers = read_layers(self.defaults_text(), files, self.modes)
        for path, layer in zip(files, layers[1:], strict=True):
            own = self.is_model_config(Path(path))
            layer.update(self.keys_before(Path(path), layer) if own else
                         self.config_class.file_values(layer, Path(path)))
        return build_config(self.config_class, layers, sets=sets, mode=mode, overrides=overrides, adjust=adjust,
                            what=self.name)

    def is_model_config(self, path: Path) -> bool:
        """Whether ``path`` is a trained model's own ``config.toml`` (beside an ``xlsent.json`` of this method): its
        values are the model's as trained (its bitext paths as that run was given them), not a file's of its own
        folder (:meth:`TrainConfig.file_values`)."""
        return (path.name == "config.toml" and (path.parent / MANIFEST).is_file()
                and read_manifest(path.parent, verify="none").get("type") == self.name)

    def keys_before(self, path: Path, layer: dict[str, Any]) -> dict[str, Any]:
        """The keys added after the trained model's own ``config.toml`` ``path`` (:meth:`is_model_config`) was
        written, at the values it was trained with (``LATER_KEYS``): ``--config MODEL/config.toml`` then retrains
        that model, not the packaged defaults' values of the newer keys."""
        before = {k: v for k, v in self.config_class.LATER_KEYS.items() if k not in layer}
        if before:
            log.info("%s: keys added after the model was trained, at the values it was trained with: %s", path,
                     ", ".join(f"{k} = {v!r}" for k, v in before.items()))
        return before


def available_methods() -> dict[str, Method]:
    """Every registered method by name (imports each method module)."""
    out: dict[str, Method] = {}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        method = ep.load()
        if not isinstance(method, Method) or method.name != ep.name:
            raise TypeError(f"entry point {ep.name} = {ep.value} is not a Method named {ep.name!r}")
        out[ep.name] = method
    return dict(sorted(out.items()))


def method_names() -> list[str]:
    """Registered method names, without importing any method module."""
    return sorted(ep.name for ep in metadata.entry_points(group=ENTRY_POINT_GROUP))


def get_method(name: str) -> Method:
    """The method registered as ``name``; an unknown name lists the known ones."""
    eps = {ep.name: ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}
    if name not in eps:
        raise ValueError(f"unknown method {name!r}; methods: {', '.join(sorted(eps)) or '(none installed)'}")
    method = eps[name].load()
    if not isinstance(method, Method):
        raise TypeError(f"entry point {name} = {eps[name].value} is not a Method")
    return method


def with_user_bitext(config: C, bitext: Sequence[str], bitext_only: bool) -> C:
    """``config`` with the ``--bitext`` entries added (:func:`add_user_bitext`), checked."""
    add_user_bitext(config, bitext, bitext_only).check()
    return config


def add_user_bitext(config: C, bitext: Sequence[str], bitext_only: bool, method: str | None = None) -> C:
    """``config`` with the ``--bitext`` entries added to its ``bitext`` (and ``bitext_only`` set); an error naming the
    ``method`` (by default the config's class) for one that does not learn from user bitext."""
    if bitext or bitext_only:
        if not isinstance(config, UserBitextConfig):
            raise ConfigError(f"--bitext: {method or type(config).__name__} takes no user bitext; the methods that "
                              "do are those whose config has a bitext key (distill, laser)")
        config.bitext = [*config.bitext, *(parse_bitext_option(b) for b in bitext)]
        config.bitext_only = config.bitext_only or bitext_only
    return config


def prepare_output(out: str | Path, resume: bool, config: TrainConfig | None = None, *, warn: bool = True) -> bool:
    """Check ``config`` and the output folder before training; True when it already holds a finished model (and
    ``resume``) trained with the same configuration.

    A finished model resumed with another configuration (``steps`` included: a finished run is not extended) is an
    error naming the keys that differ, and one of another registered method an error naming its type, as is a folder
    holding files that are neither a model nor a training run. ``resume`` where there is nothing to resume (no
    folder, or one without a training run) trains from scratch, and says so in a warning (unless ``warn`` is False).
    """
    if config is not None:
        config.check()
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise FileExistsError(f"{path} exists and is not a folder; choose another --out")
    check_folder_output(path, "--out")
    if (path / MANIFEST).is_file():
        if not resume:
            raise FileExistsError(f"{path} already holds a model; choose another --out")
        manifest = read_manifest(path, verify="none")
        other = manifest.get("type")
        if config is not None and other in method_names() and type(config) is not get_method(other).config_class:
            raise ConfigError(f"{path} holds a {other} model, not one of the method trained now; --resume continues "
                              f"a run of the same method only: train into a new --out, or resume with `xlsent train "
                              f"{other}`")
        saved = manifest.get("config")
        differ = config.differing_keys(saved) if config is not None and isinstance(saved, dict) else []
        if differ:
            raise ConfigError(f"{path} is a finished model trained with another configuration ("
                              f"{', '.join(differ)}); --resume continues a killed run with its own configuration "
                              "only: train into a new --out")
        log.info("%s is already a trained model; nothing to resume", path)
        return True
    if path.is_dir() and not is_training_run(path):
        foreign = sorted(p.name for p in path.iterdir() if not p.name.startswith("."))
        if foreign:
            shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
            raise FileExistsError(f"{path} holds files that are neither an xlsent model nor a training run "
                                  f"({shown}); choose an empty or new --out")
    if warn and resume and not (path.is_dir() and is_training_run(path)):
        log.warning("--resume: %s %s, so there is nothing to resume; training from scratch", path,
                    "holds no training run" if path.is_dir() else "does not exist")
    return False


def checked_train(config_class: type[C], body: Callable[..., Path]) -> TrainFn:
    """A method's ``train`` (what ``xlsent train`` calls): check that the config is a ``config_class``, the output
    folder (:func:`prepare_output`: a finished model is returned as it is when resuming) and the device
    (:func:`~xlsent.training.loop.resolve_device`: ``cuda`` without a GPU is an error), then return
    ``body(config, out, resume=..., data=..., progress=...)``, which builds the data and trains; where it fails having
    trained nothing, the output folder is left as it was (:func:`left_as_it_was_on_failure`). Resuming, ``--bitext``
    files with the bytes the run recorded are spelled as it recorded them
    (:func:`~xlsent.data.user_bitext.as_recorded`)."""

    def train(config: TrainConfig, out: str | Path, *, resume: bool = False, data: str | Path | None = None,
              progress: bool = True) -> Path:
        if not isinstance(config, config_class):
            raise TypeError(f"expected a config of type {config_class.__name__}, got {type(config).__name__}")
        if resume and isinstance(config, UserBitextConfig):  # the files the run started with, given by another path
            config = replace(config, bitext=as_recorded(Path(out), config.bitext))
        if prepare_output(out, resume, config):
            return Path(out)
        resolve_device(config.device)
        with left_as_it_was_on_failure(Path(out)):
            return body(config, Path(out), resume=resume, data=data, progress=progress)

    train.__doc__ = body.__doc__
    return train


def model_manifest(method: str, config: TrainConfig, training: TrainingRecord, **fields: Any) -> dict[str, Any]:
    """The common part of a trained model's ``xlsent.json``: type, config and its fingerprint, ``fields``, the
    training record and no metrics yet."""
    return {"type": method, "config": config.to_dict(), "fingerprint": config.fingerprint(), **fields,
            "training": training.to_json(), "metrics": {}}


def write_trained_manifest(out: Path, method: str, config: TrainConfig, training: TrainingRecord,
                           **fields: Any) -> Path:
    """Write the ``xlsent.json`` of a model ``out`` whose weights are written (:func:`model_manifest`, the files
    checksummed) and its card."""
    write_manifest(out, model_manifest(method, config, training, **fields))
    write_card(out)
    return out


@dataclass(frozen=True)
class TrainingStart:
    """A training command under way: its output folder and the clock's reading when it started."""

    out: Path
    started: float

    def seconds(self) -> float:
        """Seconds since the start."""
        return time.perf_counter() - self.started


def begin_training(out_dir: str | Path, resume: bool, config: TrainConfig) -> TrainingStart | None:
    """The opening every method's ``train_on`` shares: check the config and the output folder
    (:func:`prepare_output`; its warning that there is nothing to resume is :func:`checked_train`'s, which runs
    first), seed torch with ``config.seed`` and start the clock. None when ``out_dir`` already holds the finished
    model (``resume``): the caller returns it as it is."""
    out = Path(out_dir)
    if prepare_output(out, resume, config, warn=False):
        return None
    torch.manual_seed(config.seed)
    return TrainingStart(out, time.perf_counter())
