"""The one rule for a text written as a field of a TSV that xlsent writes (``mine``, ``score``, ``filter``,
``align --format tsv``, the bitexts it builds): a tab would end the field, a line feed or a carriage return the row
(for readers that take ``\\r`` as a line end, as spreadsheets and Python's ``csv`` do), so each becomes a space.
Every other character is written as it is.
"""

from __future__ import annotations

FIELD_BREAKS = "\t\n\r"
"""The characters that cannot stay inside a TSV field: each is written as a space."""
_AS_SPACES = str.maketrans(dict.fromkeys(FIELD_BREAKS, " "))


def clean_cell(text: str) -> str:
    """``text`` as one TSV field: tabs, line feeds and carriage returns become spaces.

    >>> clean_cell("a\\tb\\nc\\rd")
    'a b c d'
    """
    return text.translate(_AS_SPACES)
