"""Where the OpenAPI document is served (``/schema``): as JSON and YAML, built from the running app once, and as
Swagger UI, every file of it served by the service itself under a Content-Security-Policy that allows no inline
script and no other origin."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import swagger_ui  # type: ignore[import-untyped]
from litestar import Litestar, Request, Response, Router, get
from litestar.datastructures import CacheControlHeader
from litestar.exceptions import NotFoundException
from litestar.openapi.plugins import JsonRenderPlugin, OpenAPIRenderPlugin, SwaggerRenderPlugin, YamlRenderPlugin
from litestar.params import FromPath
from litestar.response import File

from pyramide.service.http.openapi import Webhooks, build_document
from pyramide.service.http.schema_delivery import SchemaDelivery


class ServiceDocument:
    """:func:`build_document` of the app serving it, built on its first request and kept."""

    def __init__(self, webhooks: Webhooks) -> None:
        self._document: dict[str, Any] | None = None
        self._webhooks = webhooks

    def of(self, app: Litestar) -> dict[str, Any]:
        if self._document is None:
            self._document = build_document(app, self._webhooks)
        return self._document


class DocumentJson(JsonRenderPlugin):
    """``/schema/openapi.json``: the service's document, not Litestar's own."""

    def __init__(self, source: ServiceDocument) -> None:
        super().__init__()
        self.source = source

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:  # noqa: ARG002
        return super().render(request, self.source.of(request.app))


class DocumentYaml(YamlRenderPlugin):
    """``/schema/openapi.yaml``: the same document as YAML."""

    def __init__(self, source: ServiceDocument) -> None:
        super().__init__()
        self.source = source

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:  # noqa: ARG002
        return super().render(request, self.source.of(request.app))


PAGE_SECURITY_HEADERS: Final = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none';"
    " frame-ancestors 'none'; object-src 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
"""The headers of the service's own pages (``/play``, ``/schema``): they load and call nothing but this origin, run
no inline script, and are framed by no one; files are taken only as the type they are served as."""


DOCS_ASSETS: Final = "/schema-assets"
"""Where the interactive page's scripts, styles and icon are served from: the service itself, with no network."""


SWAGGER_UI: Final = Path(swagger_ui.__file__).parent / "static"
"""Swagger UI's files, as the ``swagger-ui-py`` package ships them."""


DOCS_FILES: Final = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui-standalone-preset.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon-32x32.png": "image/png",
}


DOCS_SCRIPT: Final = b"""SwaggerUIBundle({
  url: "/schema/openapi.json",
  dom_id: "#swagger-container",
  deepLinking: true,
  showExtensions: true,
  showCommonExtensions: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
});
"""
"""The page's one script of its own, served as a file (``swagger-init.js``) so that the policy needs no inline
script; ``validatorUrl: null``: no badge fetched from swagger.io."""


DOCS_PAGE: Final = f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Pyramide API</title>
  <link rel="icon" type="image/png" href="{DOCS_ASSETS}/favicon-32x32.png">
  <link rel="stylesheet" href="{DOCS_ASSETS}/swagger-ui.css">
  <script src="{DOCS_ASSETS}/swagger-ui-bundle.js"></script>
  <script src="{DOCS_ASSETS}/swagger-ui-standalone-preset.js"></script>
</head>
<body>
  <div id="swagger-container"></div>
  <script src="{DOCS_ASSETS}/swagger-init.js"></script>
</body>
</html>
""".encode()


class DocumentPage(SwaggerRenderPlugin):
    """``/schema``: Swagger UI over the service's document (``/schema/openapi.json``), every file served by the
    service itself. Litestar's page inlines its start-up script and the whole document; this one loads both, so
    that its Content-Security-Policy allows no inline script."""

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:  # noqa: ARG002
        return DOCS_PAGE


def render_plugins(webhooks: Webhooks) -> list[OpenAPIRenderPlugin]:
    """The schema's endpoints: the document as JSON and YAML, and the interactive page at ``/schema``."""
    source = ServiceDocument(webhooks)
    return [DocumentJson(source), DocumentYaml(source), DocumentPage(path=["/", "/swagger"])]


def docs_router() -> Router:
    """Where ``render_plugins`` are served, ``/schema``: Litestar's own router for them, with the pages' security
    headers on every answer, and the documents with an ETag and gzip (``schema_delivery``)."""
    return Router(
        "/schema", route_handlers=[], include_in_schema=False, dto=None, return_dto=None,
        response_headers=PAGE_SECURITY_HEADERS, middleware=[SchemaDelivery],
    )  # fmt: skip


@get(
    f"{DOCS_ASSETS}/{{name:str}}",
    include_in_schema=False,
    exclude_from_auth=True,
    cache_control=CacheControlHeader(max_age=86400, public=True),
    response_headers={"X-Content-Type-Options": "nosniff"},
)
async def docs_asset(name: FromPath[str]) -> File | Response[bytes]:
    """One of :data:`DOCS_FILES`, or the page's own script; 404 for any other name."""
    if name == "swagger-init.js":
        return Response(DOCS_SCRIPT, media_type="text/javascript")
    if name not in DOCS_FILES:
        raise NotFoundException()
    return File(SWAGGER_UI / name, media_type=DOCS_FILES[name], content_disposition_type="inline")
