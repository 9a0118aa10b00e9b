"""The training platform shared by every method: losses, the loop, configuration, batching, method registry.

A layer beneath ``methods/``: each method module holds only what its paper adds and builds on
:mod:`xlsent.training.losses` (one ``nn.Module`` per loss), :mod:`xlsent.training.loop` (device, schedules,
checkpoints with every RNG state, validation with best-checkpoint selection, ``train.jsonl``),
:mod:`xlsent.training.config` (TOML defaults, ``--set key=value``, fingerprints) and
:mod:`xlsent.training.method` (the protocol ``xlsent train METHOD`` drives, the opening every run shares and the
manifest it writes); :mod:`xlsent.training.record` types what the manifest says of the training, which
:mod:`xlsent.training.model_card` renders; :mod:`xlsent.training.finetuned` saves and loads fine-tuned transformers
(full weights or LoRA adapters) for the methods that fine-tune one.

``train.jsonl`` (written by the loop into the output folder, one JSON object a line, plotted by ``xlsent report``)::

    {"step": 500, "elapsed_s": 41.2, "lr": {"module": 0.001}, "losses": {"sup": 0.41, "loss": 0.41}}
    {"step": 500, "elapsed_s": 44.0, "validation": {"tatoeba-deu": 95.1}, "criterion": "tatoeba-deu", "best": true}

A ``losses`` key that starts with :data:`DRAW_PREFIX` (``"batches de"``) is not a loss: it is the share of a step's
pairs drawn from that language, present on the lines whose interval drew it; the report counts these keys instead
of plotting them.
"""

DRAW_PREFIX = "batches "
"""The start of a ``train.jsonl`` ``losses`` key that records a language's share of a step's batch."""
