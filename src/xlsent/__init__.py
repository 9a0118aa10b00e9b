"""xlsent: cross-lingual sentence embeddings.

>>> import xlsent
>>> enc = xlsent.load("me5-small")          # doctest: +SKIP
>>> enc.encode(["Hallo Welt", "Hello world"]).shape  # doctest: +SKIP
(2, 384)
"""

from xlsent.version import __version__

API = ("load", "encode", "embed", "index", "mine", "score", "filter", "split", "calibrate", "calibrate_filter",
       "export_sentence_transformers", "train_filter", "train")
"""The functions of :mod:`xlsent.api` that ``xlsent.NAME`` reaches (every command's library form but ``align``:
``xlsent.align`` is the alignment package, so ``xlsent.api.align``)."""

__all__ = ["__version__", *API]


def __getattr__(name: str):  # lazy: importing xlsent must not import torch
    if name in API:
        from xlsent import api

        return getattr(api, name)
    raise AttributeError(name)
