"""The model folders named by ``$XLSENT_MODELS`` (a path list, separated by ``os.pathsep``), for ``xlsent models``,
and for ``--model NAME``, which loads the first of them listed under that name (:func:`local_model_folders`).

Each entry is a model folder (xlsent's own, a sentence-transformers folder or a Hugging Face model folder) or a
folder holding such folders. Only JSON files are read, and the sizes of the files an xlsent manifest lists (no
checksums: those are checked on load); a folder that cannot be read or is corrupt (a bad manifest, a listed file
missing or of another size), an entry that is a file or cannot be expanded (``~user`` of no user) is listed with
the reason. A
folder named twice (an entry repeated, or a model folder named beside the folder holding it) is listed once, where it
first appears; a sentence index (``xlsent index``, whose manifest shares the models' name) is not a model.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from xlsent.encoders.model_dir import INDEX_TYPE, MANIFEST, ModelDirError, read_manifest

MODELS_ENV = "XLSENT_MODELS"


@dataclass(frozen=True)
class LocalModel:
    """A model folder on disk: its name (the folder's), kind, vector length (None where unknown) and path."""

    name: str
    kind: str
    dim: int | None
    path: Path
    problem: str = ""


def _json_object(path: Path) -> dict[str, object]:
    """The JSON object in ``path``; empty where the file is missing or holds something else."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _describe(path: Path) -> LocalModel | None:
    """``path`` as a model folder, or None where it is none."""
    from xlsent.encoders.st_folder import is_foreign_folder, read_folder

    if (path / MANIFEST).is_file():
        try:
            kind = read_manifest(path, verify="size")["type"]
        except (ModelDirError, OSError) as exc:  # refused, a sentence index included: that one is no model
            if _json_object(path / MANIFEST).get("type") == INDEX_TYPE:
                return None
            return LocalModel(path.name, "unreadable", None, path, str(exc))
        dim = _json_object(path / "config.json").get("hidden_size")
        return LocalModel(path.name, f"xlsent {kind}", dim if isinstance(dim, int) else None, path)
    if not is_foreign_folder(path):
        return None
    try:
        spec = read_folder(path)
    except ModelDirError as exc:
        return LocalModel(path.name, "unreadable", None, path, str(exc))
    return LocalModel(path.name, spec.kind, spec.dim, path)


def _entry_models(path: Path) -> list[LocalModel]:
    """The models of one entry: the folder itself, or the model folders in it; a problem as one listed entry."""
    try:
        if not path.is_dir():
            problem = "a file, not a folder" if path.exists() else "no such folder"
            return [LocalModel(path.name, "missing", None, path, problem)]
        own = _describe(path)
        if own:
            return [own]
        return [m for p in sorted(path.iterdir()) if _is_dir(p) and (m := _describe(p))]
    except OSError as exc:  # a folder that cannot be listed or read
        return [LocalModel(path.name, "unreadable", None, path, str(exc))]


def _is_dir(path: Path) -> bool:
    """Whether ``path`` is a folder that can be read (a folder of another user's process is none)."""
    try:
        return path.is_dir() and os.access(path, os.R_OK | os.X_OK)
    except OSError:
        return False


def local_models(value: str | None = None) -> list[LocalModel]:
    """The model folders that ``value`` (default ``$XLSENT_MODELS``) names, in its order, each folder's models
    sorted by name."""
    value = os.environ.get(MODELS_ENV, "") if value is None else value
    found: list[LocalModel] = []
    for entry in filter(None, value.split(os.pathsep)):
        try:
            found += _entry_models(Path(entry).expanduser())
        except RuntimeError as exc:  # ~user of no user
            found.append(LocalModel(Path(entry).name, "missing", None, Path(entry), f"cannot expand it ({exc})"))
    unique: dict[Path, LocalModel] = {}
    for model in found:
        unique.setdefault(model.path.resolve(), model)
    return list(unique.values())


def local_model_folders() -> list[LocalModel]:
    """The folders of ``$XLSENT_MODELS`` that are models (well formed or not), as ``xlsent models`` lists them,
    leaving out the entries that are missing or no folder."""
    return [m for m in local_models() if m.kind != "missing"]
