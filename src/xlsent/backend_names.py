"""The inference backends' names, importable without torch (the CLI's start-up stays light)."""

BACKENDS = ("torch", "onnx", "onnx-int8", "openvino", "openvino-int8")
CHOICES = (*BACKENDS, "auto")
