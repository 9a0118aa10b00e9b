"""Toy parallel sentences: what every method's smallest model (:attr:`xlsent.training.method.Method.smallest`)
trains on, in two steps over a tiny backbone, so the tests can build one model of every type."""

from __future__ import annotations

TOY_EN = ["the dog barks", "a dog barks", "the dog runs", "dog barks", "the cat runs", "a cat runs", "cat runs",
          "the cat"]
TOY_DE = ["der hund bellt", "ein hund bellt", "der hund rennt", "hund bellt", "der katze rennt", "ein katze rennt",
          "katze rennt", "der katze"]
"""Row-aligned: ``TOY_DE[i]`` translates ``TOY_EN[i]``."""
