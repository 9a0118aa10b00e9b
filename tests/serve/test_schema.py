"""Schemathesis against the server's own OpenAPI schema: generated requests, a bounded number per operation, sent to
a real server on 127.0.0.1, never get a 5xx, and every answer matches the schema (status, content type, body)."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.generation import GenerationMode

from xlsent.align.config import AlignConfig
from xlsent.data.empty_text import is_empty
from xlsent.serve import create_app
from xlsent.testing import LookupEncoder

EXAMPLES = 15
DIM = 32  # the tiny model's

# The schema does not depend on the model: it is the one the toy server publishes (checked below).
schema = schemathesis.openapi.from_dict(create_app({"tiny": LookupEncoder({"a": [1.0]})}).openapi())


def test_the_schema_is_the_servers(toy_server) -> None:
    import httpx

    assert httpx.get(toy_server.url + "/openapi.json").json() == schema.raw_schema


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_generated_requests_get_no_5xx_and_match_the_schema(case, toy_server) -> None:
    if isinstance(case.body, dict) and isinstance(case.body.get("dimensions"), int) and case.body["dimensions"] > DIM:
        case.body["dimensions"] = DIM  # more than the model has is a 400 that the schema cannot know (it is per model)
    positive = case.meta is None or case.meta.generation.mode == GenerationMode.POSITIVE
    if positive and isinstance(case.body, dict):  # negative cases stay as generated: they must be refused
        for key in ("input", "src", "tgt"):  # text of format or control characters only is empty text
            if isinstance(case.body.get(key), list):  # (xlsent.data.empty_text): a 400 the pattern cannot state
                case.body[key] = [("a" if isinstance(t, str) and is_empty(t) else t) for t in case.body[key]]
        if case.body.get("split") is True:  # split is document mode's, with both languages: a dependency the
            case.body.update(document=True, src_lang=case.body.get("src_lang") or "de",  # schema does not state
                             tgt_lang=case.body.get("tgt_lang") or "en")
        if case.body.get("max_beads", AlignConfig().max_beads) != AlignConfig().max_beads:  # document mode's too
            case.body["document"] = True
    case.call_and_validate(base_url=toy_server.url, timeout=30)


def test_integer_fields_take_every_json_integer_and_nothing_else() -> None:
    import pytest
    from pydantic import ValidationError

    from xlsent.serve.schemas import AlignRequest, EmbeddingsRequest

    pair = {"model": "tiny", "src": ["a"], "tgt": ["b"]}
    assert AlignRequest.model_validate(pair | {"k": 47.0, "max_beads": 3.0, "document": True}).k == 47  # JSON integer
    assert EmbeddingsRequest.model_validate({"model": "tiny", "input": "a", "dimensions": 8.0}).dimensions == 8
    for bad in ("47", 47.5, True):
        with pytest.raises(ValidationError):
            AlignRequest.model_validate(pair | {"k": bad})
