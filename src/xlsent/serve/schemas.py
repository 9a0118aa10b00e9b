"""Request and response bodies (pydantic), as the OpenAPI schema at ``/openapi.json`` publishes them.

``/v1/embeddings`` follows OpenAI's embeddings API; ``/v1/similarity`` and ``/v1/align`` are xlsent's own. The
schema says what a text must be (some non-blank character, no NUL), but the server checks that itself, so that
the error names the input at fault in words rather than quoting a pattern.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from xlsent.align.config import MAX_BEADS_RULE, MIN_BEADS, MOST_BEADS, AlignConfig
from xlsent.languages import CODE_PATTERN, check_lang
from xlsent.mining.margin import Margin, Mode
from xlsent.serve.settings import OPENAI_MAX_INPUTS

MAX_SIDE = 1024
"""Most sentences on each side of ``/v1/similarity`` and ``/v1/align``."""
TEXT_PATTERN = r"^[^\x00]*[^\s\x00][^\x00]*$"
Text = Annotated[str, Field(json_schema_extra={"minLength": 1, "pattern": TEXT_PATTERN})]
Texts = Annotated[list[Text], Field(min_length=1, max_length=OPENAI_MAX_INPUTS)]
Side = Annotated[list[Text], Field(min_length=1, max_length=MAX_SIDE)]
Lang = Annotated[str, AfterValidator(check_lang), Field(json_schema_extra={"pattern": CODE_PATTERN})]


def integral(value: object) -> object:
    """A JSON number with no fractional part (``47.0``) as the int it is, for an int field's before-validator: JSON
    Schema's ``integer`` admits it, and the models' strict mode would refuse it; anything else (strings, ``47.5``)
    is left to the field's own validation."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


class EmbeddingsRequest(BaseModel):
    """OpenAI's embeddings request (token-id inputs are not accepted: send text)."""

    model_config = ConfigDict(extra="ignore", strict=True)

    input: Text | Texts = Field(description="a string, or a list of 1-2048 strings; none may be empty")
    model: str = Field(description="a served model (GET /v1/models)")
    encoding_format: Literal["float", "base64"] = Field(
        "float", description="float: lists of numbers; base64: the little-endian float32 bytes, base64-encoded")
    dimensions: int | None = Field(
        None, ge=1, description="keep the first N dimensions and scale the vector back to unit length")
    user: str | None = Field(None, description="accepted and ignored")

    _integral_dimensions = field_validator("dimensions", mode="before")(integral)


class Embedding(BaseModel):
    object: Literal["embedding"] = "embedding"
    index: int
    embedding: list[float] | str


class Usage(BaseModel):
    prompt_tokens: int
    total_tokens: int


class EmbeddingsResponse(BaseModel):
    object: Literal["list"] = "list"
    data: list[Embedding]
    model: str
    usage: Usage


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "xlsent"
    dim: int | None = Field(None, description="vector dimensions (null while the model loads)")
    ready: bool


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]


class PairedRequest(BaseModel):
    """Two lists of sentences, e.g. in two languages."""

    model_config = ConfigDict(extra="forbid", strict=True)

    src: Side = Field(description="source sentences (1-1024)")
    tgt: Side = Field(description="target sentences (1-1024)")
    model: str | None = Field(None, description="a served model (default: the first one)")
    src_lang: Lang | None = Field(None, description="language code of src, for encoders that use it")
    tgt_lang: Lang | None = Field(None, description="language code of tgt, for encoders that use it")


class SimilarityRequest(PairedRequest):
    pass


class SimilarityResponse(BaseModel):
    object: Literal["similarity"] = "similarity"
    model: str
    matrix: list[list[float]] = Field(description="matrix[i][j]: cosine of src[i] and tgt[j]")
    usage: Usage


class AlignRequest(PairedRequest):
    """The options of ``xlsent mine``, with its defaults (Artetxe & Schwenk 2019: ratio margin, k=4, max)."""

    k: int = Field(4, ge=1, le=64, description="neighbours in the margin (a side of fewer sentences: all of them)")
    margin: Literal["ratio", "distance", "absolute"] = Field(Margin.RATIO.value)
    mode: Literal["forward", "backward", "max", "intersect"] = Field(Mode.MAX.value)
    threshold: float | None = Field(None, description="keep pairs scoring at least this (default: every candidate)")
    unify: bool = Field(True, description="score each distinct sentence once (pairs name its first row)")
    dedup: bool = Field(True, description="each source and target text in its best-scoring pair only")
    one_to_one: bool = Field(False, description="each sentence in one pair at most")
    include_matrix: bool = Field(False, description="also return the cosine matrix")
    document: bool = Field(False, description="document mode: src and tgt are a document and its translation, one "
                           "sentence each, aligned in order as `xlsent align` does (beads in document order instead of "
                           "pairs; an empty or blank line is a null bead of its own); the mining options above are "
                           "then unused")
    max_beads: int = Field(AlignConfig().max_beads, ge=MIN_BEADS, le=MOST_BEADS,
                           description=f"document mode: most lines (both sides) in one bead, {MAX_BEADS_RULE}")
    split: bool = Field(False, description="document mode: src and tgt are paragraphs; each is split into "
                        "sentences (as `xlsent split`, with src_lang and tgt_lang), the beads number sentences, and "
                        "src_sentences and tgt_sentences map each to its row and character span")

    _integral_ints = field_validator("k", "max_beads", mode="before")(integral)

    @model_validator(mode="after")
    def _document_options_need_document_mode(self) -> AlignRequest:
        given = ["split"] * self.split + ["max_beads"] * (self.max_beads != AlignConfig().max_beads)
        if given and not self.document:  # pair mode would ignore them
            raise ValueError(f"{' and '.join(given)}: option(s) of document mode only; set document to true")
        return self

    @field_validator("threshold")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError("threshold must be a finite number")
        return value


class AlignedPair(BaseModel):
    src: int = Field(description="row in src")
    tgt: int = Field(description="row in tgt")
    score: float = Field(description="margin score")
    cosine: float


class AlignedBead(BaseModel):
    src: list[int] = Field(description="consecutive rows of src (empty: the tgt rows have no counterpart)")
    tgt: list[int] = Field(description="consecutive rows of tgt (empty: the src rows have no counterpart)")
    cost: float = Field(description="lower is better; null beads cost the null cost, empty lines 0")


class SentenceSpan(BaseModel):
    row: int = Field(description="the paragraph's row in src or tgt")
    start: int = Field(description="the sentence's first character in that row (0-based)")
    end: int = Field(description="one past its last character")
    text: str


class AlignResponse(BaseModel):
    object: Literal["alignment"] = "alignment"
    model: str
    pairs: list[AlignedPair] = Field(description="best first (empty in document mode)")
    beads: list[AlignedBead] | None = Field(None, description="document mode: every row of both sides in one bead, "
                                            "in document order")
    src_sentences: list[SentenceSpan] | None = Field(None, description="with split: the sentences the beads number")
    tgt_sentences: list[SentenceSpan] | None = Field(None, description="with split: the sentences the beads number")
    matrix: list[list[float]] | None = None
    usage: Usage


class ErrorDetail(BaseModel):
    message: str
    type: str
    param: str | None
    code: str | None


class ErrorBody(BaseModel):
    error: ErrorDetail


class Health(BaseModel):
    status: Literal["ok"] = "ok"


class Readiness(BaseModel):
    status: Literal["ready", "loading", "failed"]
    models: dict[str, str] = Field(description="per model: ready, loading or failed: <why>")
