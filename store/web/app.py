"""The viewer's ASGI application: every route is a GET that only reads.

Pages: the conversations (``/``), one conversation (``/c/{id}``) paged by
:data:`PAGE_SIZE` messages, its export in any format with the loss report
(``/c/{id}/export/{format}``) and the download, its binary payloads
(``/c/{id}/blob/{sha256}``), and the tool calls (``/tool-calls``).
Every response forbids scripts (Content-Security-Policy): stored text is escaped by
the templates, and even a payload that slipped through could not run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp, Message as ASGIMessage, Receive, Scope, Send

from .. import io
from ..errors import InputError, NotFoundError
from ..formats import FORMATS, Loss, get_format
from ..streaming import STREAM_WRITES
from ..repository import ConversationStore
from . import data, present
from .pages import conversation_page, page_start

HERE = Path(__file__).parent
LIST_PAGE = 50
"""Conversations (and tool calls) on one page of their lists."""
SEARCH_PAGE = 20
"""Search hits shown above the list."""
EXPORT_CHUNK = 5000
"""Messages read at a time by a streamed export download."""
STATUSES = ("pending", "answered", "error")
_SHA256 = re.compile(r"[0-9a-f]{64}")

# No script may run on any page: the viewer needs none, and a stored payload that escaped
# escaping would still be inert. Images and media come only from the viewer itself.
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'none'; img-src 'self'; media-src 'self'; style-src 'self'; "
                               "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}


class SecurityHeaders:
    """ASGI middleware adding :data:`SECURITY_HEADERS` to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_secured(message: ASGIMessage) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, send_secured if scope["type"] == "http" else send)


def create_app(store: ConversationStore) -> Starlette:
    """The viewer over ``store`` (open it with :func:`store.web.data.open_store` so that
    its connections refuse writes)."""
    views = _Views(store, _templates())
    routes = [
        Route("/", views.conversations, name="conversations"),
        Route("/c/{cid}", views.conversation, name="conversation"),
        Route("/c/{cid}/blob/{sha256}", views.blob, name="blob"),
        Route("/c/{cid}/export/{format}", views.export, name="export"),
        Route("/c/{cid}/export/{format}/download", views.download, name="download"),
        Route("/tool-calls", views.tool_calls, name="tool_calls"),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    handlers = {NotFoundError: views.error, InputError: views.error}
    return Starlette(routes=routes, middleware=[Middleware(SecurityHeaders)], exception_handlers=handlers)


def _templates() -> Jinja2Templates:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(markdown=present.markdown, pretty=present.pretty, when=present.when,
                       size=present.size, sha256=present.sha256, anchor=present.call_anchor)
    env.globals.update(safe_href=present.safe_href, highlighted=present.highlighted, arguments=present.arguments,
                       formats=list(FORMATS), inline_types=present.INLINE_TYPES, page_of=page_start)
    return Jinja2Templates(env=env)


def _int(request: Request, name: str, default: int | None = None, *, low: int = 0) -> int | None:
    value = request.query_params.get(name)
    if value in (None, ""):
        return default
    try:
        number = int(value)
    except ValueError:
        raise InputError(f"{name} must be a whole number, got {value!r}") from None
    if number < low:
        raise InputError(f"{name} must be >= {low}, got {number}")
    return number


def _json_array(items: Iterator[Any]) -> Iterator[bytes]:
    """A JSON array written item by item (numbers exactly as ``store.io.dumps`` writes them)."""
    yield b"["
    for i, item in enumerate(items):
        yield (b",\n" if i else b"\n") + io.dumps(item).encode()
    yield b"\n]\n"


class _Views:
    """The route handlers. They are plain functions, which Starlette runs in its thread
    pool: the store's calls block."""

    def __init__(self, store: ConversationStore, templates: Jinja2Templates) -> None:
        self.store = store
        self.templates = templates

    def _page(self, request: Request, name: str, status_code: int = 200, **context: Any) -> Response:
        return self.templates.TemplateResponse(request, name, {"namespace": self.store.namespace, **context},
                                               status_code=status_code)

    async def error(self, request: Request, exc: Exception) -> Response:
        status = 404 if isinstance(exc, NotFoundError) else 400
        return self._page(request, "error.html", status_code=status, status=status, message=str(exc))

    def conversations(self, request: Request) -> Response:
        params = request.query_params
        source_format = params.get("format") or None
        query, hits, problem, behind = params.get("q", "").strip(), None, None, 0
        if query:
            try:  # the viewer writes nothing: what the index holds (convstore serve indexes first)
                hits = self.store.search(query, limit=SEARCH_PAGE, index=False)
                behind = self.store.index_pending()
            except InputError as exc:  # a query with nothing to find: said beside the box
                problem = str(exc)
        page = self.store.list_conversations(source_format=source_format, order_by="updated_at",
                                             limit=LIST_PAGE, cursor=params.get("cursor") or None)
        counts = data.tool_call_counts(self.store, [c.id for c in page])
        return self._page(request, "conversations.html", page=page, counts=counts, source_format=source_format,
                          query=query, hits=hits, problem=problem, behind=behind)

    def conversation(self, request: Request) -> Response:
        last = _int(request, "last", low=1)
        context = conversation_page(self.store, request.path_params["cid"], start=_int(request, "start", 0),
                                    last=last)
        return self._page(request, "conversation.html", **context)

    def blob(self, request: Request) -> Response:
        cid, sha = request.path_params["cid"], request.path_params["sha256"]
        found = data.blob(self.store, cid, sha) if _SHA256.fullmatch(sha) else None
        if found is None:
            return self._page(request, "error.html", status_code=404, status=404, message="no such payload")
        payload, stored_type = found
        media_type = next((t for t in (stored_type, request.query_params.get("type"))
                           if t in present.INLINE_TYPES), None)
        headers = {"cache-control": "private, max-age=86400"}  # a payload never changes: it is named by its hash
        if media_type is None:
            headers["content-disposition"] = f'attachment; filename="{sha[:16]}.bin"'
        return Response(payload, media_type=media_type or "application/octet-stream", headers=headers)

    def export(self, request: Request) -> Response:
        cid, target = request.path_params["cid"], get_format(request.path_params["format"]).name
        info = self.store.info(cid)
        losses: list[Loss] = []
        self.store.load(info.id, format=target, on_loss=losses.append)  # only for its loss report
        return self._page(request, "export.html", info=info, target=target, losses=losses)

    def download(self, request: Request) -> Response:
        cid, target = request.path_params["cid"], get_format(request.path_params["format"]).name
        info = self.store.info(cid)
        headers = {"content-disposition": f'attachment; filename="{info.id}.{target}.json"'}  # checked: no quotes
        if target in STREAM_WRITES:  # a list of messages: streamed part by part, in bounded memory
            parts = _json_array(self.store.export(info.id, format=target, chunk=EXPORT_CHUNK))
            return StreamingResponse(parts, media_type="application/json", headers=headers)
        return Response(io.dumps(self.store.load(info.id, format=target)), media_type="application/json",
                        headers=headers)

    def tool_calls(self, request: Request) -> Response:
        params = request.query_params
        filters = {name: params.get(name, "").strip() or None for name in ("call_id", "name", "status")}
        if filters["status"] is not None and filters["status"] not in STATUSES:
            raise InputError(f"status must be one of {', '.join(STATUSES)}, got {filters['status']!r}")
        page = self.store.find_tool_calls(**filters, limit=LIST_PAGE, cursor=params.get("cursor") or None)
        return self._page(request, "tool_calls.html", page=page, filters=filters, statuses=STATUSES)
