"""``convstore serve``: a read-only web viewer of a convstore database.

Needs the ``serve`` extra (``pip install 'convstore[serve]'``): Starlette, Jinja2,
uvicorn and markdown-it-py. :func:`store.web.app.create_app` builds the ASGI
application over a store opened by :func:`store.web.data.open_store`;
:func:`store.web.command.serve` runs it.
"""
