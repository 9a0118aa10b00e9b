"""Errors in OpenAI's envelope ``{"error": {"message", "type", "param", "code"}}``, for every failure the server
answers: its own checks, request validation, unknown paths and methods, and anything unexpected."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import Response

log = logging.getLogger(__name__)

ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 404: "invalid_request_error",
               405: "invalid_request_error", 408: "timeout_error", 413: "invalid_request_error",
               415: "invalid_request_error", 422: "invalid_request_error", 429: "rate_limit_error",
               500: "server_error", 503: "server_error"}
SEND_JSON = "send a JSON object with the header Content-Type: application/json"
FORM_TYPES = frozenset({"application/x-www-form-urlencoded", "multipart/form-data"})


class ApiError(Exception):
    """A request the server answers with ``status`` and an error envelope (``headers`` added, e.g. Retry-After)."""

    def __init__(self, status: int, message: str, *, code: str | None = None, param: str | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.param = param
        self.headers = dict(headers or {})


def error_body(status: int, message: str, code: str | None = None, param: str | None = None) -> bytes:
    """The JSON envelope of an error.

    >>> error_body(404, "no model x", "model_not_found", "model").decode()  # doctest: +NORMALIZE_WHITESPACE
    '{"error": {"message": "no model x", "type": "invalid_request_error", "param": "model",
                "code": "model_not_found"}}'
    """
    error = {"message": message, "type": ERROR_TYPES.get(status, "invalid_request_error"), "param": param,
             "code": code}
    return json.dumps({"error": error}).encode()


def error_response(error: ApiError) -> Response:
    """``error`` as a JSON response."""
    return Response(error_body(error.status, error.message, error.code, error.param), status_code=error.status,
                    media_type="application/json", headers=error.headers)


def _parts(loc: Any) -> list[str | int]:
    """A validation error's location without ``body`` and the type tags of a union's alternatives."""
    return [part for part in loc
            if part != "body" and not (isinstance(part, str) and ("[" in part or part in ("str", "list")))]


def _loc(loc: Any) -> str:
    """A validation error's location as a parameter path, e.g. ``input[3]`` (``body`` and type tags dropped)."""
    out = ""
    for part in _parts(loc):
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def media_type_error(content_type: str | None) -> ApiError | None:
    """A 415 naming a request body that is not declared JSON (``content_type``: its Content-Type header), or None when
    it is JSON.

    >>> media_type_error("application/x-www-form-urlencoded").message  # doctest: +NORMALIZE_WHITESPACE
    'the body is a form (Content-Type application/x-www-form-urlencoded, as HTML forms and curl -d or -F send one),
     not JSON: send a JSON object with the header Content-Type: application/json'
    >>> media_type_error("application/json; charset=utf-8") is None
    True
    """
    media = (content_type or "").partition(";")[0].strip().lower()
    if media == "application/json" or media.endswith("+json"):
        return None
    if media in FORM_TYPES:
        what = f"is a form (Content-Type {media}, as HTML forms and curl -d or -F send one), not JSON"
    else:
        what = f"has Content-Type {media}, not application/json" if media else "has no Content-Type, so it is not JSON"
    return ApiError(415, f"the body {what}: {SEND_JSON}", code="unsupported_media_type")


def _token_ids(value: Any) -> bool:
    """Whether ``value`` is token-id input as OpenAI's API allows it: a list of integers, or a list of such lists."""
    def ints(items: Any) -> bool:
        return isinstance(items, list) and bool(items) and all(
            isinstance(i, int) and not isinstance(i, bool) for i in items)

    return ints(value) or (isinstance(value, list) and bool(value) and all(ints(v) for v in value))


def undecodable_body(exc: UnicodeDecodeError) -> ApiError:
    """A 400 naming a body that is not UTF-8 (``exc``: the decoding error), e.g. latin-1 text.

    >>> undecodable_body(UnicodeDecodeError("utf-8", b'"caf\\xe9"', 4, 5, "invalid continuation byte")).message
    'the body is not UTF-8 (byte 0xe9 at offset 4; latin-1 or cp1252 text?): encode the JSON as UTF-8'
    """
    byte = exc.object[exc.start] if exc.start < len(exc.object) else None
    where = f"byte 0x{byte:02x} at offset {exc.start}" if byte is not None else f"offset {exc.start}"
    return ApiError(400, f"the body is not UTF-8 ({where}; latin-1 or cp1252 text?): encode the JSON as UTF-8",
                    code="invalid_encoding")


def validation_error(exc: RequestValidationError) -> ApiError:
    """A request body that is not JSON (400) or does not fit the schema (422), naming the first problem.

    A value that fits none of a field's alternatives (``input``: a string or a list of strings) reports the
    alternatives' problems together, or the one that is not a type mismatch (an empty list: the list's length),
    or, where one alternative got further into the value (a list with a bad item), that one's problem (the item);
    token ids as ``input`` (OpenAI's API allows them) are named as such.
    """
    errors = [dict(e) for e in exc.errors()] or [{"type": "", "loc": (), "msg": "invalid request"}]
    field = _parts(errors[0]["loc"])[:1]
    alternatives = [e for e in errors if _parts(e["loc"])[:1] == field]
    first: dict[str, Any] = max(alternatives, key=lambda e: len(_parts(e["loc"])))  # the first of the deepest
    shallower = [e for e in alternatives if len(_parts(e["loc"])) < len(_parts(first["loc"]))]
    if isinstance(exc.body, dict) and _token_ids(exc.body.get("input")):
        return ApiError(422, "input: token ids are not accepted, as xlsent tokenizes the text itself: send the text "
                        "as a string or a list of strings", code="invalid_type", param="input")
    if first["type"] == "json_invalid":
        detail = first.get("ctx", {}).get("error", "")
        return ApiError(400, f"the body is not valid JSON ({detail})" if detail else "the body is not valid JSON",
                        code="invalid_json")
    param = _loc(first["loc"])
    if first["type"] == "missing" and not param:
        return ApiError(422, "the body is missing: send a JSON object", code="invalid_type")
    same = [e for e in errors if _loc(e["loc"]) == param]
    mismatches = [e for e in same if e["type"].endswith("_type")]
    if len(same) > 1 and len(mismatches) == len(same):
        message = "; or ".join(e["msg"] for e in same)
    else:
        first = next((e for e in same if not e["type"].endswith("_type")), first)
        message = first["msg"]
    rest = len(errors) - len(same) - len(shallower)
    more = f" (and {rest} more problem(s))" if rest else ""
    return ApiError(422, f"{param or 'body'}: {message}{more}",
                    code="invalid_type" if first["type"].endswith("_type") else "invalid_value", param=param or None)


def install_error_handlers(app: FastAPI) -> None:
    """Answer every error of ``app`` in the envelope."""

    async def api_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return error_response(exc)

    async def invalid(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        unread = isinstance(exc.body, bytes) and bool(exc.body)  # a body FastAPI did not read as JSON
        wrong_type = media_type_error(request.headers.get("content-type")) if unread else None
        return error_response(wrong_type or validation_error(exc))

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if isinstance(exc.__cause__, UnicodeDecodeError):  # FastAPI's "There was an error parsing the body"
            return error_response(undecodable_body(exc.__cause__))
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "invalid_request")
        message = {404: f"no such path: {request.url.path}",
                   405: f"{request.method} is not allowed on {request.url.path}"}.get(exc.status_code, str(exc.detail))
        return error_response(ApiError(exc.status_code, message, code=code, headers=exc.headers))

    async def unexpected(request: Request, exc: Exception) -> Response:
        log.exception("%s %s failed", request.method, request.url.path, exc_info=exc)
        return error_response(ApiError(500, "internal error; the server log has the details", code="internal_error"))

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, unexpected)
