"""DuEAM (Goswami et al. 2021): anchor-learner dual encoder trained with Word Mover's Distance and cosine terms.

``METHOD`` registers it with ``xlsent train`` and ``xlsent.load`` (entry point group ``xlsent.methods``)."""

from xlsent.methods.dueam.model import METHOD

__all__ = ["METHOD"]
