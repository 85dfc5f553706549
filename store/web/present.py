"""How stored values become HTML-safe text for the templates.

Nothing here returns markup built from stored text except :func:`markdown`, whose
renderer has raw HTML turned off (so ``<script>`` comes out as text) and refuses
``javascript:``-like link targets. Every other value is escaped by Jinja2's
autoescaping; URLs that end up in ``href`` go through :func:`safe_href` first.
"""

from __future__ import annotations

import hashlib
import json
import math
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markupsafe import Markup

# CommonMark with tables; html=False escapes any raw HTML in the text, and markdown-it's
# validateLink drops javascript:, vbscript:, file: and non-image data: link targets.
_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")

# Media types a browser may show inline from our origin. Anything else (HTML, SVG, XML,
# JavaScript, unknown) is sent as an attachment of type application/octet-stream, so a
# stored payload can never run as a page of the viewer.
INLINE_TYPES = frozenset({
    "image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp",
    "audio/wav", "audio/x-wav", "audio/mpeg", "audio/mp3", "audio/ogg", "audio/webm", "audio/flac", "audio/aac",
    "video/mp4", "video/webm", "video/ogg", "application/pdf",
})


def markdown(text: str | None) -> Markup:
    """Text as Markdown, its raw HTML escaped."""
    return Markup(_MARKDOWN.render(text or ""))


def pretty(value: Any) -> str:
    """A JSON value indented for reading (NaN and the infinities as Python writes them)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, default=_unjsonable)


def _unjsonable(value: Any) -> str:
    return f"<{len(value)} bytes>" if isinstance(value, bytes) else str(value)


def arguments(raw: str | None, parsed: Any) -> str:
    """A tool call's arguments: parsed and indented when they parse, else the raw text."""
    if parsed is not None or raw is None:
        return pretty(parsed)
    return raw


def safe_href(url: str | None) -> str | None:
    """``url`` when it is a web link (http, https), else None: a stored ``javascript:``
    or ``data:`` URL is shown as text, never put in an ``href``."""
    if not url:
        return None
    try:
        scheme = urlsplit(url.strip()).scheme.lower()
    except ValueError:
        return None
    return url if scheme in ("http", "https") else None


def highlighted(snippet: str, spans: list[tuple[int, int]] | None) -> list[tuple[str, bool]]:
    """A search snippet cut into (text, highlighted) pieces at its highlight offsets, for
    the template to wrap in ``<mark>`` while escaping every piece."""
    pieces, at = [], 0
    for start, end in sorted(spans or []):
        if start < at or end > len(snippet):
            continue  # overlapping or out of range: leave that stretch plain
        pieces += [(snippet[at:start], False), (snippet[start:end], True)]
        at = end
    return [p for p in [*pieces, (snippet[at:], False)] if p[0]]


def sha256(data: bytes) -> str:
    """The blob key of a media block's bytes (the store keeps payloads by SHA-256)."""
    return hashlib.sha256(data).hexdigest()


def call_anchor(call_id: str, kind: str = "call") -> str:
    """The element id of a tool call (or of its ``result``): derived from the call id by
    hash, so any page can link to it and no stored text ends up in an id or fragment."""
    return f"{kind}-{hashlib.sha256(call_id.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"


def when(value: datetime | None) -> str:
    """A time as people read it, to the second, with its offset when it has one."""
    if value is None:
        return ""
    return value.strftime("%Y-%m-%d %H:%M:%S") + (value.strftime(" %z") if value.tzinfo else "")


def size(n: int) -> str:
    """A byte count in B, KB or MB."""
    if n < 1024:
        return f"{n} B"
    exponent = min(int(math.log(n, 1024)), 2)
    return f"{n / 1024 ** exponent:.1f} {('B', 'KB', 'MB')[exponent]}"
