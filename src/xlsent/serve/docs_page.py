"""``GET /docs`` of ``xlsent serve``: the API's routes and the schema's address on a page with nothing to load.

FastAPI's Swagger UI loads its scripts and styles from a CDN, so offline (where xlsent is meant to run) it is a blank
page. This page lists every route of the OpenAPI schema with its summary, and points at ``/openapi.json`` for the
rest (load it into any OpenAPI viewer).
"""

from __future__ import annotations

from html import escape
from typing import Any

METHODS = ("get", "post", "put", "patch", "delete")


def docs_page(schema: dict[str, Any]) -> str:
    """The HTML of ``/docs`` for the OpenAPI ``schema``: its title, description, a table of routes, the schema link.

    >>> page = docs_page({"info": {"title": "t", "version": "1"}, "paths": {"/health": {"get": {"summary": "up"}}}})
    >>> "<td>GET</td><td><code>/health</code></td><td>up</td>" in page and "/openapi.json" in page
    True
    """
    info = schema.get("info", {})
    rows = "\n".join(
        f"<tr><td>{method.upper()}</td><td><code>{escape(path)}</code></td>"
        f"<td>{escape(str(operation.get('summary', '')))}</td></tr>"
        for path, operations in schema.get("paths", {}).items()
        for method, operation in operations.items() if method in METHODS)
    title = escape(f"{info.get('title', 'API')} {info.get('version', '')}".strip())
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}: API</title>
<style>body{{font-family:sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}}
td{{padding:.2rem .8rem .2rem 0;vertical-align:top}}</style></head>
<body><h1>{title}</h1>
<p>The schema of every request and response is at <a href="/openapi.json"><code>/openapi.json</code></a>: load it
into any OpenAPI viewer or client generator. (The interactive Swagger UI is not served: it loads its scripts from a
CDN, which an offline machine cannot reach.)</p>
<p>{escape(str(info.get('description', '')))}</p>
<table><tr><th>Method</th><th>Path</th><th>What</th></tr>
{rows}
</table></body></html>
"""
