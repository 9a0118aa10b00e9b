"""ABSent (Fu et al. 2020): bidirectional GAN mapping between languages' embedding spaces.

``METHOD`` registers it with ``xlsent train`` and ``xlsent.load`` (entry point group ``xlsent.methods``)."""

from xlsent.methods.absent.model import METHOD

__all__ = ["METHOD"]
