"""``xlsent serve``: the OpenAI embeddings API and alignment endpoints over xlsent's encoders, with a page at ``/``.

>>> from xlsent.serve import ServeSettings, create_app, run   # doctest: +SKIP
>>> run({"me5-small": lambda: xlsent.load("me5-small")}, ServeSettings(port=8000))  # doctest: +SKIP
"""

from xlsent.serve.app import create_app
from xlsent.serve.server import Server, run
from xlsent.serve.settings import ServeSettings

__all__ = ["create_app", "run", "Server", "ServeSettings"]
