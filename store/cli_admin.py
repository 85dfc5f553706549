"""The ``convstore`` commands that look after a database rather than its conversations:
``prune``, ``demo``, ``serve`` and ``db upgrade|current|downgrade`` (an upgrade to the head
also fills the stored documents of older rows: ``store.backfill``). Registered on the
application of :mod:`store.cli` when it imports this module."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Optional

import sqlalchemy as sa
import typer

from . import backfill, creation, db, render
from .cli import app, db_app, err, out

_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def _age(value: str) -> timedelta | datetime:
    """``30d``, ``12h``, ``90m``, ``2w``, ``45s``; or a date or time (ISO 8601, UTC unless it says)."""
    number, unit = value[:-1], value[-1:]
    if number.isascii() and number.isdigit() and unit in _UNITS:  # not "²d": int() refuses what isdigit takes
        try:
            age = timedelta(**{_UNITS[unit]: int(number)})
            datetime.now() - age  # an age before year 1 is no age either
            return age
        except OverflowError:
            raise typer.BadParameter(f"{value!r} is older than any date", param_hint="--older-than") from None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(f"{value!r} is neither an age (30d, 12h, 90m, 2w, 45s) nor a date "
                                 "(2026-10-01, 2026-10-01T12:00+02:00)", param_hint="--older-than") from None


@app.command()
def prune(
    ctx: typer.Context,
    older_than: Optional[str] = typer.Option(
        None, "--older-than", metavar="AGE|DATE",
        help="Also delete conversations not written to for this long (30d, 12h, 2w) or since this date."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Only count what would be deleted."),
) -> None:
    """Delete the namespace's expired conversations (and, with --older-than, those nobody has written
    to since then), with everything stored with them."""
    age = None if older_than is None else _age(older_than)
    with ctx.obj.store() as s:
        due = s.prune(age, dry_run=True)
        if dry_run:
            report = due
        else:
            with render.progress(due.conversations, "pruning", err) as advance:
                report = s.prune(due.cutoff, progress=advance)  # the cutoff just counted
    verb = "would delete" if dry_run else "deleted"
    which = "expired" if report.cutoff is None else f"expired or not written to since {report.cutoff:%Y-%m-%d %H:%M:%S} UTC"
    out.print(f"{verb} {render.plural(report.conversations, 'conversation')} "
              f"({render.plural(report.messages, 'message')}): {which}", highlight=False)


@app.command()
def demo(
    ctx: typer.Context,
    db: Optional[Path] = typer.Option(None, help="SQLite file for the demo (default: the --db database)."),
) -> None:
    """Store the bundled sample conversations (once), find a tool call, replay in every format."""
    from .demo import run

    run(f"sqlite:///{db}" if db is not None else ctx.obj.db, ctx.obj.namespace, out)


@app.command()
def serve(
    ctx: typer.Context,
    host: str = typer.Option("127.0.0.1", help="Address to bind (loopback by default)."),
    port: int = typer.Option(8765, min=1, max=65535, help="Port to listen on."),
    namespace: Optional[str] = typer.Option(None, "--namespace", metavar="NAME",
                                            help="The tenant to show (default: the global --namespace)."),
    allow_remote: bool = typer.Option(False, "--allow-remote",
                                      help="Allow a --host other than loopback (anyone who reaches it reads everything)."),
) -> None:
    """Browse conversations and tool calls in a web browser, read-only (needs the serve extra)."""
    from .web.command import serve as run_server

    run_server(ctx.obj.db, namespace or ctx.obj.namespace, host=host, port=port, allow_remote=allow_remote,
               console=err)


@contextmanager
def _engine(ctx: typer.Context) -> Iterator[sa.Engine]:
    engine = db.create_engine(ctx.obj.db)
    try:
        yield engine
    finally:
        engine.dispose()


@db_app.command("upgrade")
def db_upgrade(ctx: typer.Context, revision: str = typer.Argument("head")) -> None:
    """Bring the database to a revision (default: head)."""
    with _engine(ctx) as engine:
        db.upgrade(engine, revision)
        now = db.current_revision(engine)
        out.print(f"{engine.url.render_as_string(hide_password=True)} is at {now}")
        if now == db.head_revision() and (missing := backfill.pending(engine)):
            with render.progress(sum(missing.values()), "storing documents", err) as advance:
                written = backfill.fill(engine, missing, advance)
            out.print(f"stored the documents of {written} messages written before revision 0008 "
                      f"(in {len(missing)} conversation{'s' if len(missing) != 1 else ''}): they load faster")


@db_app.command("current")
def db_current(ctx: typer.Context) -> None:
    """Print the database's schema revision (and the one this convstore needs)."""
    with _engine(ctx) as engine:
        if creation.missing_file(engine.url):  # looked at, not made
            out.print(f"current: none (no file {engine.url.database})  head: {db.head_revision()}")
            return
        out.print(f"current: {db.current_revision(engine) or 'none'}  head: {db.head_revision()}")


@db_app.command("downgrade")
def db_downgrade(ctx: typer.Context, revision: str = typer.Argument(..., help="Target revision, or base.")) -> None:
    """Take the database back to a revision (base drops every convstore table)."""
    with _engine(ctx) as engine:
        db.downgrade(engine, revision)
        out.print(f"now at {db.current_revision(engine) or 'base'}")
