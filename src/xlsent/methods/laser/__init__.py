"""LASER (Artetxe & Schwenk 2019): BiLSTM encoder trained with an auxiliary decoder on parallel data.

``METHOD`` registers it with ``xlsent train`` and ``xlsent.load`` (entry point group ``xlsent.methods``)."""

from xlsent.methods.laser.model import METHOD

__all__ = ["METHOD"]
