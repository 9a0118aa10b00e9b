"""The training methods of the five papers, one package each, all of one shape (``docs/adding-a-method.md``):

- ``__init__.py``: ``METHOD``, what ``xlsent train`` and ``xlsent.load`` find through the ``xlsent.methods``
  entry points;
- ``config.py``: the config dataclass and its constants (``NAME``, ``DEFAULTS``, ``MODES``, ...);
- ``model.py``: the networks, the training (``fit``, ``train_on``, ``train``) and the encoder of a model directory;
- ``data.py``: the method's own training data, where it has any;
- ``study.py``: the paper's tables reproduced (``python -m xlsent.methods.<method>.study``);
- helpers of that method alone (``laser/vocab.py``, ``laser/corpus.py``, ``dueam/wmd.py``).

``laser``, ``dueam``, ``emu``, ``absent``, ``dual_pivot`` import none of each other; what two of them share sits a
layer beneath: ``mapping/`` (ABSent and the linear maps), ``xlsent.data`` (the bitext catalogue, the held-out
sentences), ``xlsent.training`` (the loop, losses, configs, the method protocol).
"""
