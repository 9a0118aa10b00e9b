"""The sub-command action of the ``xlsent`` parser: commands whose options are built only when they are used."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

Handler = Callable[[argparse.Namespace], int]
"""What a command runs: the parsed arguments in, the exit status out."""


class Commands(argparse._SubParsersAction):
    """Sub-commands; those added with :meth:`add_lazy` get their arguments only when they are parsed, so that
    ``xlsent --help``, ``--version`` and the other commands skip the imports one command's options need."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pending: dict[str, Callable[[argparse.ArgumentParser], None]] = {}

    def add_lazy(self, name: str, add_arguments: Callable[[argparse.ArgumentParser], None], **kwargs: Any) -> None:
        """Add command ``name``, whose arguments ``add_arguments`` adds when the command is parsed."""
        self.add_parser(name, **kwargs)
        self.pending[name] = add_arguments

    def build(self, name: str) -> argparse.ArgumentParser:
        """The complete parser of command ``name``."""
        parser: argparse.ArgumentParser = self.choices[name]
        if name in self.pending:
            self.pending.pop(name)(parser)
        return parser

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        if values and values[0] in self.choices:
            self.build(values[0])
        super().__call__(parser, namespace, values, option_string)
