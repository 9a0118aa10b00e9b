"""Mappings between embedding spaces: the linear-map method and what ABSent shares with it.

``METHOD`` registers it with ``xlsent train`` and ``xlsent.load`` (entry point group ``xlsent.methods``)."""

from xlsent.methods.mapping.linear import METHOD

__all__ = ["METHOD"]
