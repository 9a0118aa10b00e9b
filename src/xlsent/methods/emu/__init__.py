"""EMU (Chidambaram et al. 2019): semantic specialization of a multilingual encoder with a language discriminator.

``METHOD`` registers it with ``xlsent train`` and ``xlsent.load`` (entry point group ``xlsent.methods``)."""

from xlsent.methods.emu.model import METHOD

__all__ = ["METHOD"]
