"""``convstore serve``: run the viewer with uvicorn (the ``serve`` extra).

Nothing optional is imported at module level, so the CLI loads without the extra and
says how to install it when the command is used.
"""

from __future__ import annotations

import importlib
import ipaddress

from rich.console import Console

from ..errors import ConvstoreError, InputError

MISSING_EXTRA = "convstore serve needs the serve extra: pip install 'convstore[serve]'"
_NEEDS = ("starlette", "jinja2", "markdown_it", "uvicorn")


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (``localhost``, 127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def url_of(host: str, port: int) -> str:
    host = host.strip("[]")
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def _index(db_url: str, namespace: str, console: Console) -> None:
    """Bring the search index up to date before the viewer, which writes nothing, searches it;
    a database this user may not write to is served all the same."""
    from ..repository import ConversationStore

    try:
        with ConversationStore(db_url, namespace=namespace, create=False) as writable:
            if count := writable.index():
                console.print(f"indexed {count} conversation{'s' if count != 1 else ''} for search")
    except ConvstoreError as exc:
        console.print(f"[bold yellow]warning:[/] the search index was not brought up to date ({exc}); "
                      "the viewer searches what it holds")


def serve(db_url: str, namespace: str, *, host: str, port: int, allow_remote: bool, console: Console) -> None:
    """Serve the read-only viewer of ``db_url``'s ``namespace`` on ``host:port`` until
    interrupted. A host other than loopback needs ``allow_remote`` (there is no login:
    whoever reaches the port reads every conversation of the namespace)."""
    local = is_loopback(host)
    if not local and not allow_remote:
        raise InputError(f"--host {host} would let other machines read every conversation: "
                         "pass --allow-remote to mean it (there is no login)")
    try:
        for name in _NEEDS:
            importlib.import_module(name)
    except ImportError:
        raise InputError(MISSING_EXTRA) from None
    import uvicorn

    from .app import create_app
    from .data import open_store

    store = open_store(db_url, namespace)
    try:
        _index(db_url, namespace, console)
        if not local:
            console.print(f"[bold yellow]warning:[/] serving on {host}, reachable from other machines; "
                          "anyone who can reach it reads every conversation (no login)")
        console.print(f"convstore viewer of {store.url} (namespace {namespace}, read-only): "
                      f"open [bold]{url_of(host, port)}[/]  (Ctrl+C stops it)")
        uvicorn.run(create_app(store), host=host.strip("[]"), port=port, log_level="warning")
    finally:
        store.close()
