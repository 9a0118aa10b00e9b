"""Checks of a request's texts before any work (characters, then tokens), and their token counts.

Token counts are those of the model's own tokenizer where the encoder has one (``content_ids``, as the transformer
encoders): the prefix and sentence tokens plus ``<s>`` and ``</s>`` per window, an input longer than the model's
window counting one window per ``max_tokens - 2`` content tokens, as :func:`~xlsent.encoders.batching.split_windows`
cuts it for encoding. An encoder that tokenizes whole sentences (``token_ids``, as LASER's SentencePiece) counts its
ids; encoders without a tokenizer (e.g. mUSE) count whitespace-separated words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xlsent.data.empty_text import is_empty
from xlsent.data.text_input import lone_surrogate
from xlsent.encoders.base import Encoder, WholeSentenceTokens, Windowed
from xlsent.encoders.batching import split_windows
from xlsent.serve.errors import ApiError
from xlsent.serve.settings import ServeSettings


@dataclass(frozen=True)
class TokenCounts:
    """Tokens of each input, the inputs encoded as several windows (averaged, nothing cut), and each input's token
    ids where the encoder has a tokenizer (the worker encodes those, not the texts again)."""

    per_input: list[int]
    windowed: list[int]
    content: list[list[int]] | None = None

    @property
    def total(self) -> int:
        return sum(self.per_input)


def joined(parts: Sequence[TokenCounts]) -> TokenCounts:
    """The counts of several lists of inputs as one list, in order.

    >>> joined([TokenCounts([3], [0]), TokenCounts([5, 2], [1])]).windowed
    [0, 2]
    """
    windowed: list[int] = []
    offset = 0
    for part in parts:
        windowed += [offset + i for i in part.windowed]
        offset += len(part.per_input)
    contents = [part.content for part in parts]
    content = None if any(c is None for c in contents) else [ids for c in contents for ids in c or []]
    return TokenCounts([n for part in parts for n in part.per_input], windowed, content)


def on_rows(counts: TokenCounts, rows: Sequence[int], n: int) -> TokenCounts:
    """The counts of texts that are rows ``rows`` of a list of ``n`` (the other rows: none, 0 tokens), numbered by
    their rows (a document's non-empty lines, of all its lines); without token ids.

    >>> on_rows(TokenCounts([3, 9], [1]), [0, 2], 4)
    TokenCounts(per_input=[3, 0, 9, 0], windowed=[2], content=None)
    """
    per_row = [0] * n
    for row, tokens in zip(rows, counts.per_input, strict=True):
        per_row[row] = tokens
    return TokenCounts(per_row, [int(rows[i]) for i in counts.windowed])


def token_parts(per_input: Sequence[int], most: int) -> list[tuple[int, int]]:
    """``(start, stop)`` of consecutive runs of inputs holding at most ``most`` tokens together (an input of more
    alone), covering every input in order.

    >>> token_parts([3, 4, 2, 9, 1], 7)
    [(0, 2), (2, 3), (3, 4), (4, 5)]
    """
    parts: list[tuple[int, int]] = []
    start, held = 0, 0
    for i, tokens in enumerate(per_input):
        if i > start and held + tokens > most:
            parts.append((start, i))
            start, held = i, 0
        held += tokens
    if start < len(per_input):
        parts.append((start, len(per_input)))
    return parts


def _bad_character(text: str) -> str | None:
    """What makes ``text`` unencodable: a NUL character or a lone surrogate (None when it has neither)."""
    if "\x00" in text:
        return f"a NUL character at position {text.index(chr(0))}"
    return lone_surrogate(text)


def _where(param: str, i: int, n: int) -> str:
    """How a message names text ``i`` of ``n`` in ``param``: ``input`` alone for OpenAI's single input, else
    ``param[i]``."""
    return param if n == 1 and param == "input" else f"{param}[{i}]"


def check_texts(texts: Sequence[str], param: str, settings: ServeSettings, *, empty_lines: bool = False) -> None:
    """Raise :class:`ApiError` for an empty, blank or unencodable text (400) or one over the character limits (413);
    with ``empty_lines`` (the lines of a document), an empty text (:func:`~xlsent.data.empty_text.is_empty`) is
    allowed.

    >>> check_texts(["ok", " "], "input", ServeSettings())
    Traceback (most recent call last):
    ...
    xlsent.serve.errors.ApiError: input[1] is empty or blank: every input needs some text
    """
    if len(texts) > settings.max_inputs:
        raise ApiError(413, f"{len(texts)} inputs in {param}; at most {settings.max_inputs} per request",
                       code="too_many_inputs", param=param)
    total = 0
    for i, text in enumerate(texts):
        where = _where(param, i, len(texts))
        if len(text) > settings.max_input_chars:
            raise ApiError(413, f"{where} has {len(text)} characters; at most {settings.max_input_chars} per input",
                           code="input_too_long", param=where)
        total += len(text)
        if is_empty(text) and not empty_lines:
            raise ApiError(400, f"{where} is empty or blank: every input needs some text", code="empty_input",
                           param=where)
        bad = _bad_character(text)
        if bad:
            raise ApiError(400, f"{where} contains {bad}", code="invalid_text", param=where)
    if total > settings.max_request_chars:
        raise ApiError(413, f"{param} has {total} characters in all; at most {settings.max_request_chars} per request",
                       code="request_too_long", param=param)


def check_together(amounts: Mapping[str, int], unit: str, most: int) -> None:
    """Raise :class:`ApiError` (413) when the lists of one request (param -> their ``unit``) hold more than ``most``
    together (``param``: the last list, the one whose amount passes the limit).

    >>> check_together({"src": 20, "tgt": 20}, "tokens", 30)
    Traceback (most recent call last):
    ...
    xlsent.serve.errors.ApiError: src and tgt have 40 tokens in all (20 + 20); at most 30 per request
    """
    total = sum(amounts.values())
    if total > most:
        raise ApiError(413, f"{' and '.join(amounts)} have {total} {unit} in all "
                       f"({' + '.join(map(str, amounts.values()))}); at most {most} per request",
                       code="request_too_long", param=list(amounts)[-1])


def check_document(lines: Sequence[str], param: str, settings: ServeSettings) -> None:
    """Raise :class:`ApiError` for the lines of a document (``/v1/align`` document mode) as :func:`check_texts` does,
    but an empty line is a line of the document (a null bead of its own, as ``xlsent align`` makes it): only a
    document without text (400) is refused.

    >>> check_document(["", "\u200b"], "src", ServeSettings())
    Traceback (most recent call last):
    ...
    xlsent.serve.errors.ApiError: src has no text (2 line(s), every one empty or blank): there is nothing to align
    """
    check_texts(lines, param, settings, empty_lines=True)
    if all(is_empty(line) for line in lines):
        raise ApiError(400, f"{param} has no text ({len(lines)} line(s), every one empty or blank): there is nothing "
                       "to align", code="empty_input", param=param)


def count_tokens(encoder: Encoder, texts: Sequence[str]) -> TokenCounts:
    """The tokens ``encoder`` runs for each of ``texts`` (see the module's docstring)."""
    if not isinstance(encoder, Windowed):
        if isinstance(encoder, WholeSentenceTokens):  # a whole-sentence tokenizer (LASER's SentencePiece): no windows
            return TokenCounts([len(ids) for ids in encoder.token_ids(list(texts))], [])
        return TokenCounts([len(t.split()) for t in texts], [])
    content = encoder.content_ids(list(texts))
    windows, _ = split_windows(content, encoder.max_tokens - 2)
    per_input = [0] * len(texts)
    pieces = [0] * len(texts)
    for window in windows:
        per_input[window.sentence] += len(window.ids) + 2
        pieces[window.sentence] += 1
    return TokenCounts(per_input, [i for i, n in enumerate(pieces) if n > 1], content)


def check_tokens(counts: TokenCounts, param: str, settings: ServeSettings) -> None:
    """Raise :class:`ApiError` (413) for an input or a request over the token limits."""
    for i, n in enumerate(counts.per_input):
        if n > settings.max_input_tokens:
            where = _where(param, i, len(counts.per_input))
            raise ApiError(413, f"{where} has {n} tokens; at most {settings.max_input_tokens} per input",
                           code="input_too_long", param=where)
    if counts.total > settings.max_request_tokens:
        raise ApiError(413, f"{param} has {counts.total} tokens in all; at most {settings.max_request_tokens} per "
                       "request", code="request_too_long", param=param)
