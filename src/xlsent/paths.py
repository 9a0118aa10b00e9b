"""Where xlsent keeps its cache and where it looks for the shared benchmark data."""

from __future__ import annotations

import os
from pathlib import Path


def xlsent_home() -> Path:
    """Cache directory for converted models and encodings: ``$XLSENT_HOME`` or ``~/.cache/xlsent``; a file there is
    a ``NotADirectoryError`` naming it (every use would fail on a path under it)."""
    env = os.environ.get("XLSENT_HOME")
    home = Path(env).expanduser() if env else Path.home() / ".cache" / "xlsent"
    if home.exists() and not home.is_dir():
        named = f"XLSENT_HOME={env}" if env else str(home)
        raise NotADirectoryError(f"{named}: is a file, but xlsent keeps its cache in a folder there; point "
                                 "XLSENT_HOME at a folder")
    return home


def data_root(root: str | os.PathLike[str] | None = None) -> Path:
    """Locate the benchmark data folder.

    Order: the ``root`` argument, ``$XLSENT_DATA``, ``./shared/data``, ``../shared/data`` (relative to the
    working directory, then to the source checkout). Raises ``FileNotFoundError`` naming what was tried.
    """
    candidates: list[Path] = []
    if root is not None:
        candidates.append(Path(root))
    elif os.environ.get("XLSENT_DATA"):
        candidates.append(Path(os.environ["XLSENT_DATA"]))
    else:
        checkout = Path(__file__).resolve().parents[2]
        for base in (Path.cwd(), checkout):
            candidates += [base / "shared" / "data", base.parent / "shared" / "data"]
    for cand in candidates:
        if cand.is_dir():
            return cand
    if root is not None and Path(root).exists():
        raise FileNotFoundError(f"{root}: is a file, not the benchmark data folder (--data); name the folder "
                                "holding the benchmark data")
    if root is not None:
        raise FileNotFoundError(f"{root}: no such benchmark data folder (--data); name the folder holding "
                                "the benchmark data")
    tried = ", ".join(str(c) for c in candidates)
    raise FileNotFoundError(f"benchmark data folder not found (tried {tried}); give --data /path/to/data or set "
                            "XLSENT_DATA=/path/to/data")
