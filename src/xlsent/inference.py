"""Names and defaults of inference, importable without torch (the CLI's start-up stays light)."""

BACKENDS = ("torch", "torch-bf16", "onnx", "onnx-int8", "openvino", "openvino-bf16", "openvino-int8")
CHOICES = (*BACKENDS, "auto")
LOSSY = ("-bf16", "-int8")
"""Suffixes of the backends that change the vectors (bf16 or int8 matrix work)."""
DEFAULT_BATCH_TOKENS = 1024
"""Padded tokens per forward pass. On a 2-core AVX2 machine, me5-small encoded 256-sentence calls of Tatoeba text
at 141/121 sentences/s (openvino/torch) with 1024 against 129/98 with 2048 and 139/127 with 512."""


def id_suffix(backend: str) -> str:
    """What running on ``backend`` adds to an encoder's id: ``+backend`` where it changes the vectors, else nothing
    (embedding files of two such backends are never mixed).

    >>> id_suffix("openvino-bf16"), id_suffix("openvino")
    ('+openvino-bf16', '')
    """
    return f"+{backend}" if backend.endswith(LOSSY) else ""


def fp32_id(encoder_id: str) -> str:
    """The id of the same weights on an fp32 backend (``encoder_id`` without what :func:`id_suffix` added).

    >>> fp32_id("me5-small@8fdd+openvino-bf16"), fp32_id("me5-small@8fdd")
    ('me5-small@8fdd', 'me5-small@8fdd')
    """
    return encoder_id.partition("+")[0]
