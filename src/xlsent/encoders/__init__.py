"""Encoders: text -> L2-normalised vectors."""

from xlsent.encoders.base import Encoder, HiddenStateEncoder

__all__ = ["Encoder", "HiddenStateEncoder"]
