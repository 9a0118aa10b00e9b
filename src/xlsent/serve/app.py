"""The FastAPI application of ``xlsent serve``: routes, middleware, lifespan.

>>> from xlsent.testing import LookupEncoder
>>> app = create_app({"toy": LookupEncoder({"a": [1.0, 0.0]})})
>>> sorted(r.path for r in app.routes if r.path.startswith("/v1"))  # doctest: +NORMALIZE_WHITESPACE
['/v1/align', '/v1/embeddings', '/v1/models', '/v1/models/{model:path}', '/v1/similarity']
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any

import numpy as np
from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from starlette.responses import HTMLResponse, Response

from xlsent.align.adaptive import lines_only
from xlsent.align.aligner import Doc, align_spans, plan_spans
from xlsent.align.config import AlignConfig
from xlsent.align.overlaps import span_texts
from xlsent.encoders.base import l2_normalize
from xlsent.mining.config import MineConfig
from xlsent.serve.align import align, cosine_matrix, document_sentences
from xlsent.serve.docs_page import docs_page
from xlsent.serve.engine import Engine, Job, ModelSource, ModelWorker
from xlsent.serve.errors import ApiError, install_error_handlers
from xlsent.serve.guards import ApiKeyGuard, BodyGuard
from xlsent.serve.inputs import (
    TokenCounts,
    check_document,
    check_texts,
    check_together,
    check_tokens,
    count_tokens,
    joined,
    on_rows,
    token_parts,
)
from xlsent.serve.metrics import CONTENT_TYPE, Metrics, RequestCounter
from xlsent.serve.schemas import (
    AlignRequest,
    AlignResponse,
    EmbeddingsRequest,
    EmbeddingsResponse,
    ErrorBody,
    Health,
    ModelCard,
    ModelList,
    Readiness,
    SimilarityRequest,
    SimilarityResponse,
)
from xlsent.serve.settings import ServeSettings, api_key
from xlsent.version import __version__

WINDOWED_HEADER = "X-Xlsent-Windowed"
WINDOWED_INPUTS_HEADER = "X-Xlsent-Windowed-Inputs"
LISTED_WINDOWED = 64
"""``X-Xlsent-Windowed`` counts the inputs longer than the model's window (encoded as averaged windows, nothing
cut); ``X-Xlsent-Windowed-Inputs`` lists the first 64 of them (0-based)."""

ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": description} for status, description in {
        400: "invalid JSON, a body that is not UTF-8, or an unusable text (empty, a NUL character, a lone surrogate)",
        401: "missing or incorrect API key (when the server has one)",
        404: "model not served",
        408: "the body was not received in time",
        413: "body, inputs, characters or tokens over the server's limits",
        415: "the body is not declared JSON (a form, text/plain, no Content-Type)",
        422: "the body does not fit the schema",
        429: "queue full: retry after Retry-After seconds",
        503: "model loading, overloaded past the request timeout, or shutting down",
    }.items()}
DESCRIPTION = """Embeddings (OpenAI's API) and cross-lingual alignment over xlsent's encoders.

Errors come in OpenAI's envelope `{"error": {"message", "type", "param", "code"}}`. When the environment variable
named by the server's `api_key_env` (default `XLSENT_API_KEY`) is set, `/v1/*` and `/embeddings` need
`Authorization: Bearer KEY`. Inputs longer than the model's window are encoded as averaged windows (never cut): the
`X-Xlsent-Windowed` response header counts them. `dimensions` keeps the first N dimensions and rescales the vector
to unit length (as OpenAI's shortened embeddings)."""


def _json(payload: dict[str, Any], headers: Mapping[str, str] | None = None) -> Response:
    return Response(json.dumps(payload, separators=(",", ":"), allow_nan=False), media_type="application/json",
                    headers=dict(headers or {}))


async def _answer(build: Callable[[], dict[str, Any]], headers: Mapping[str, str] | None = None) -> Response:
    """The JSON response of the payload ``build`` makes, made in a worker thread: the vectors or the matrix of a
    large answer take a second to turn into JSON (a 1024 x 1024 matrix: 20 MB), which on the event loop held every
    other request, ``/health`` included, as long."""
    return await asyncio.to_thread(lambda: _json(build(), headers))


def _usage(tokens: int) -> dict[str, int]:
    return {"prompt_tokens": tokens, "total_tokens": tokens}


def _window_headers(*counts: TokenCounts) -> dict[str, str]:
    windowed = joined(counts).windowed
    headers = {WINDOWED_HEADER: str(len(windowed))}
    if windowed:
        headers[WINDOWED_INPUTS_HEADER] = ",".join(map(str, windowed[:LISTED_WINDOWED]))
    return headers


def _encoded(vector: np.ndarray, encoding_format: str) -> list[float] | str:
    if encoding_format == "base64":
        return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")
    values: list[float] = vector.tolist()
    return values


def name_served_models(schema: dict[str, Any], names: list[str]) -> None:
    """Make the ``model`` field of every request body in the OpenAPI ``schema`` one of ``names`` (the served ones).

    >>> schema = {"components": {"schemas": {"AlignRequest": {"properties": {"model": {"anyOf": [
    ...     {"type": "string"}, {"type": "null"}]}}}}}}
    >>> name_served_models(schema, ["tiny"])
    >>> schema["components"]["schemas"]["AlignRequest"]["properties"]["model"]["anyOf"][0]
    {'type': 'string', 'enum': ['tiny']}
    """
    for title, body in schema.get("components", {}).get("schemas", {}).items():
        field = body.get("properties", {}).get("model")
        if field is None or not title.endswith("Request"):
            continue
        for branch in field.get("anyOf", [field]):
            if branch.get("type") == "string":
                branch["enum"] = list(names)


def create_app(models: Mapping[str, ModelSource], settings: ServeSettings | None = None) -> FastAPI:
    """The server's application for ``models`` (name clients use -> encoder or loader) under ``settings``.

    The models' workers start with the application's lifespan (loading and warming up in the background: ``/ready``
    says when they are done) and stop with it.
    """
    settings = settings or ServeSettings()
    metrics = Metrics()
    engine = Engine(models, settings, metrics)
    started = int(time.time())
    page = resources.files("xlsent.serve").joinpath("page.html").read_bytes()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine.start()
        try:
            yield
        finally:
            await asyncio.to_thread(engine.stop)

    app = FastAPI(title="xlsent serve", version=__version__, description=DESCRIPTION, lifespan=lifespan,
                  docs_url=None, redoc_url=None)
    app.state.engine = engine
    app.state.metrics = metrics
    app.state.settings = settings
    install_error_handlers(app)

    async def tokens_of(worker: ModelWorker, lists: Mapping[str, list[str]]) -> list[TokenCounts]:
        """Check the lists of texts of one request (param -> texts), each and together, and count their tokens, all
        before any work is queued."""
        encoder = worker.encoder()
        for param, texts in lists.items():
            check_texts(texts, param, settings)
        check_together({param: sum(map(len, texts)) for param, texts in lists.items()}, "characters",
                       settings.max_request_chars)
        counts = []
        for param, texts in lists.items():
            start = time.perf_counter()
            counts.append(await asyncio.to_thread(count_tokens, encoder, texts))
            metrics.tokenize_seconds.labels(worker.name).observe(time.perf_counter() - start)
            check_tokens(counts[-1], param, settings)
        check_together({param: c.total for param, c in zip(lists, counts, strict=True)}, "tokens",
                       settings.max_request_tokens)
        return counts

    async def encode_in_parts(worker: ModelWorker, texts: list[str], lang: str | None,
                              counts: TokenCounts) -> np.ndarray:
        """The vectors of ``texts`` queued part after part, each of at most ``max_request_tokens`` tokens (one text
        alone where it holds more), so that a document's spans, which may hold more tokens than a request may, are
        never refused by the queue as a job it could never take."""
        vectors = [await worker.encode(texts[a:b], lang, sum(counts.per_input[a:b]),
                                       None if counts.content is None else counts.content[a:b])
                   for a, b in token_parts(counts.per_input, settings.max_request_tokens)]
        return np.concatenate(vectors) if vectors else np.zeros((0, worker.encoder().dim), np.float32)

    async def paired(req: SimilarityRequest | AlignRequest
                     ) -> tuple[ModelWorker, np.ndarray, np.ndarray, TokenCounts, TokenCounts]:
        worker = engine.worker(req.model)
        cells = len(req.src) * len(req.tgt)
        if cells > settings.max_matrix_cells:
            raise ApiError(413, f"{len(req.src)} x {len(req.tgt)} sentences make {cells} pairs; at most "
                           f"{settings.max_matrix_cells} per request", code="too_many_pairs")
        src_counts, tgt_counts = await tokens_of(worker, {"src": req.src, "tgt": req.tgt})
        x, y = await worker.encode_jobs([Job(req.src, req.src_lang, src_counts.total, src_counts.content),
                                         Job(req.tgt, req.tgt_lang, tgt_counts.total, tgt_counts.content)])
        return worker, x, y, src_counts, tgt_counts

    @app.get("/", include_in_schema=False)
    async def index() -> HTMLResponse:
        return HTMLResponse(page)

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return HTMLResponse(docs_page(app.openapi()))

    @app.head("/health", include_in_schema=False)  # uptime checkers ask with HEAD
    @app.get("/health", response_model=Health, summary="liveness: the process answers")
    async def health() -> Response:
        return _json({"status": "ok"})

    @app.get("/ready", response_model=Readiness, summary="readiness: every model loaded and warmed up",
             responses={503: {"model": Readiness, "description": "a model is loading or failed"}})
    async def ready() -> Response:
        states = {name: ("ready" if w.ready else f"failed: {w.failure}" if w.failure else "loading")
                  for name, w in engine.workers.items()}
        status = ("ready" if engine.ready else
                  "failed" if any(w.failure for w in engine.workers.values()) else "loading")
        response = _json({"status": status, "models": states})
        response.status_code = 200 if status == "ready" else 503
        return response

    @app.get("/metrics", summary="Prometheus metrics", response_class=Response,
             responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}})
    async def prometheus() -> Response:
        return Response(metrics.render(), media_type=CONTENT_TYPE)

    def card(name: str, worker: ModelWorker) -> dict[str, Any]:
        dim = worker.encoder().dim if worker.ready else None
        return {"id": name, "object": "model", "created": started, "owned_by": "xlsent", "dim": dim,
                "ready": worker.ready}

    @app.get("/v1/models", response_model=ModelList, summary="the served models", responses=ERRORS)
    async def list_models() -> Response:
        return _json({"object": "list", "data": [card(name, w) for name, w in engine.workers.items()]})

    # a path: a model served under its directory's path (xlsent serve --model DIR) has slashes in its id
    @app.get("/v1/models/{model:path}", response_model=ModelCard, summary="one served model", responses=ERRORS)
    async def get_model(model: str) -> Response:
        return _json(card(model, engine.worker(model)))

    @app.post("/v1/embeddings", response_model=EmbeddingsResponse, summary="OpenAI embeddings", responses=ERRORS)
    @app.post("/embeddings", response_model=EmbeddingsResponse, include_in_schema=False)
    async def embeddings(req: EmbeddingsRequest) -> Response:
        worker = engine.worker(req.model)
        texts = [req.input] if isinstance(req.input, str) else req.input
        (counts,) = await tokens_of(worker, {"input": texts})
        dim = worker.encoder().dim
        if req.dimensions is not None and req.dimensions > dim:
            raise ApiError(400, f"dimensions {req.dimensions} is more than the model's {dim}",
                           code="invalid_dimensions", param="dimensions")
        vectors = await worker.encode(texts, None, counts.total, counts.content)
        if req.dimensions is not None and req.dimensions < dim:
            vectors = l2_normalize(vectors[:, : req.dimensions])
        return await _answer(lambda: {
            "object": "list", "model": req.model, "usage": _usage(counts.total),
            "data": [{"object": "embedding", "index": i, "embedding": _encoded(v, req.encoding_format)}
                     for i, v in enumerate(vectors)]}, _window_headers(counts))

    @app.post("/v1/similarity", response_model=SimilarityResponse, summary="cosine matrix of two lists",
              responses=ERRORS)
    async def similarity(req: SimilarityRequest) -> Response:
        worker, x, y, src_counts, tgt_counts = await paired(req)
        return await _answer(lambda: {"object": "similarity", "model": worker.name,
                                      "matrix": cosine_matrix(x, y).tolist(),
                                      "usage": _usage(src_counts.total + tgt_counts.total)},
                             _window_headers(src_counts, tgt_counts))

    @app.post("/v1/align", response_model=AlignResponse, responses=ERRORS,
              summary="margin-scored pairs of two lists (as `xlsent mine`)")
    async def align_pairs(req: AlignRequest) -> Response:
        if req.document:
            return await align_document(req)
        cfg = MineConfig(k=req.k, margin=req.margin, mode=req.mode, threshold=req.threshold, unify=req.unify,
                         dedup=req.dedup, one_to_one=req.one_to_one)
        worker, x, y, src_counts, tgt_counts = await paired(req)
        pairs = await asyncio.to_thread(align, req.src, req.tgt, x, y, cfg)
        return await _answer(lambda: {
            "object": "alignment", "model": worker.name,
            "pairs": [{"src": p.src, "tgt": p.tgt, "score": p.score, "cosine": p.cosine} for p in pairs],
            "matrix": cosine_matrix(x, y).tolist() if req.include_matrix else None,
            "usage": _usage(src_counts.total + tgt_counts.total)}, _window_headers(src_counts, tgt_counts))

    async def align_document(req: AlignRequest) -> Response:
        """Document mode of ``/v1/align``: the lines are checked as inputs; the lines, then the spans the alignment
        wants (:func:`~xlsent.align.aligner.plan_spans`) counted and embedded. The token limits and the windowed
        headers are those of what the client sent (its lines, or with ``split`` its sentences, named as
        ``src_sentences`` numbers them); the spans the alignment adds (a bounded multiple of the lines) count in
        ``usage`` only."""
        worker = engine.worker(req.model)
        cfg = AlignConfig(max_beads=req.max_beads)
        for lines, param in ((req.src, "src"), (req.tgt, "tgt")):
            check_document(lines, param, settings)  # an empty line is a null bead, as in `xlsent align`
        src_lines, tgt_lines, maps = list(req.src), list(req.tgt), None
        if req.split:
            maps = document_sentences(req)
            src_lines, tgt_lines = [s.text for s in maps[0]], [s.text for s in maps[1]]
        src, tgt = Doc.of(src_lines, cfg.overlaps), Doc.of(tgt_lines, cfg.overlaps)
        encoder = worker.encoder()
        spent: dict[str, list[TokenCounts]] = {"src": [], "tgt": []}
        units: dict[str, TokenCounts] = {}

        async def embed(wanted: tuple[np.ndarray, np.ndarray]) -> list[np.ndarray]:
            """The vectors of the spans ``wanted`` of each side, their tokens counted; the first call's (the lines)
            checked against the limits, row by row."""
            sides = []
            for doc, marks, lang, param in ((src, wanted[0], req.src_lang, "src"),
                                            (tgt, wanted[1], req.tgt_lang, "tgt")):
                texts = span_texts(doc.texts, marks)
                counts = await asyncio.to_thread(count_tokens, encoder, texts)
                if not spent[param]:
                    units[param] = on_rows(counts, doc.ids[np.flatnonzero(marks[0])].tolist(), len(doc.lines))
                    check_tokens(units[param], f"{param}_sentences" if req.split else param, settings)
                spent[param].append(counts)
                sides.append((texts, lang, counts))
            return [await encode_in_parts(worker, texts, lang, counts) for texts, lang, counts in sides]

        x_lines, y_lines = await embed((lines_only(src.ok), lines_only(tgt.ok)))
        plan = await asyncio.to_thread(plan_spans, src, tgt, x_lines, y_lines, cfg)
        if plan.count.embedded:
            plan.fill(*await embed(plan.wanted))
        beads = await asyncio.to_thread(align_spans, src, tgt, plan.x, plan.y, cfg)
        used = joined(spent["src"]).total + joined(spent["tgt"]).total
        payload: dict[str, Any] = {"object": "alignment", "model": worker.name, "pairs": [], "matrix": None,
                                   "beads": [{"src": list(b.src), "tgt": list(b.tgt), "cost": b.cost} for b in beads],
                                   "usage": _usage(used)}
        if maps is not None:
            payload.update({f"{side}_sentences": [{"row": s.paragraph, "start": s.start, "end": s.end, "text": s.text}
                                                   for s in sentences]
                            for side, sentences in zip(("src", "tgt"), maps, strict=True)})
        return await _answer(lambda: payload, _window_headers(units["src"], units["tgt"]))

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, description=app.description,
                                 routes=app.routes)
            name_served_models(schema, list(engine.workers))
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    known_paths = frozenset(r.path for r in app.routes if hasattr(r, "path") and "{" not in r.path)
    app.add_middleware(BodyGuard, max_bytes=settings.max_body_bytes, timeout_s=settings.body_timeout_s)
    app.add_middleware(ApiKeyGuard, key=api_key(settings.api_key_env))
    app.add_middleware(RequestCounter, metrics=metrics, paths=known_paths)
    return app
