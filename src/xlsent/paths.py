"""Where xlsent keeps its cache and where it looks for the shared benchmark data."""

from __future__ import annotations

import os
from pathlib import Path


def xlsent_home() -> Path:
    """Cache directory for converted models and encodings: ``$XLSENT_HOME`` or ``~/.cache/xlsent``, made on first
    use; a file there, or a folder that cannot be made there (a path below a file, a dangling link, a place that
    takes no folder), is a ``NotADirectoryError`` naming it (every use would fail on a path under it)."""
    env = os.environ.get("XLSENT_HOME")
    home = Path(env).expanduser() if env else Path.home() / ".cache" / "xlsent"
    named = f"XLSENT_HOME={env}" if env else str(home)
    if home.exists() and not home.is_dir():
        raise NotADirectoryError(f"{named}: is a file, but xlsent keeps its cache in a folder there; point "
                                 "XLSENT_HOME at a folder")
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NotADirectoryError(f"{named}: cannot make the cache folder there ({exc.strerror or exc}); point "
                                 "XLSENT_HOME at a folder you can write") from exc
    return home


def data_root(root: str | os.PathLike[str] | None = None) -> Path:
    """Locate the benchmark data folder.

    Order: the ``root`` argument, ``$XLSENT_DATA``, ``./shared/data``, ``../shared/data`` (relative to the
    working directory, then to the source checkout). Raises ``FileNotFoundError`` naming what was tried.
    """
    env = os.environ.get("XLSENT_DATA")
    candidates: list[Path] = []
    if root is not None or env:
        candidates.append(Path(root) if root is not None else Path(str(env)))
    else:
        checkout = Path(__file__).resolve().parents[2]
        for base in (Path.cwd(), checkout):
            candidates += [base / "shared" / "data", base.parent / "shared" / "data"]
    for cand in candidates:
        if cand.is_dir():
            return cand
    if root is not None or env:
        what = "is a file, not the benchmark data folder" if candidates[0].exists() else "no such benchmark data folder"
        if root is not None:
            raise FileNotFoundError(f"{root}: {what} (--data); name the folder holding the benchmark data")
        raise FileNotFoundError(f"XLSENT_DATA={env}: {what}; point XLSENT_DATA at the folder holding the benchmark "
                                "data (or give --data)")
    tried = ", ".join(str(c) for c in candidates)
    raise FileNotFoundError(f"benchmark data folder not found (tried {tried}); give --data /path/to/data or set "
                            "XLSENT_DATA=/path/to/data")
