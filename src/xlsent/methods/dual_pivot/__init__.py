"""Dual-pivot transfer: a frozen multilingual LM plus a light extraction module trained on one language pair.

``METHOD`` registers it with ``xlsent train`` and ``xlsent.load`` (entry point group ``xlsent.methods``)."""

from xlsent.methods.dual_pivot.model import METHOD

__all__ = ["METHOD"]
