"""Multilingual knowledge distillation and translation ranking on all of xlsent's bitext (Reimers & Gurevych 2020;
LaBSE, Feng et al. 2022): a LoRA student of the default encoder, for the languages it serves badly.

``METHOD`` registers it with ``xlsent train`` and ``xlsent.load`` (entry point group ``xlsent.methods``)."""

from xlsent.methods.distill.model import METHOD

__all__ = ["METHOD"]
