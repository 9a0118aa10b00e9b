"""Mappings between sentence-embedding spaces: the linear-map method, and what every mapping method (ABSent too)
shares.

- :mod:`~xlsent.methods.mapping.config`: ``MappingConfig`` (backbone, inputs, pairs, corpus, parallel share) and
  the linear-map method's ``LinearMapConfig``;
- :mod:`~xlsent.methods.mapping.data`: the training bitext of each pair and its labelled / unlabelled / held-out
  rows (``PairData``);
- :mod:`~xlsent.methods.mapping.inputs`: the input vectors that get mapped (the backbone's, or static subword
  averages);
- :mod:`~xlsent.methods.mapping.training`: the steps around a method's fit (embed, fit, write);
- :mod:`~xlsent.methods.mapping.encoder`: the model directory and the encoder base class (language routing);
- :mod:`~xlsent.methods.mapping.linear`: the linear maps (least squares, Procrustes) and their retrieval rules.

``METHOD`` (the linear maps) registers with ``xlsent train`` and ``xlsent.load`` (entry point group
``xlsent.methods``)."""

from xlsent.methods.mapping.linear import METHOD

__all__ = ["METHOD"]
