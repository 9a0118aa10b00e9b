"""xlsent: cross-lingual sentence embeddings.

>>> import xlsent
>>> enc = xlsent.load("me5-small")          # doctest: +SKIP
>>> enc.encode(["Hallo Welt", "Hello world"]).shape  # doctest: +SKIP
(2, 384)
"""

from xlsent.version import __version__

__all__ = ["__version__", "load", "encode", "mine", "score", "filter", "calibrate"]


def __getattr__(name: str):  # lazy: importing xlsent must not import torch
    if name in ("load", "encode", "mine", "score", "filter", "calibrate"):
        from xlsent import api

        return getattr(api, name)
    raise AttributeError(name)
