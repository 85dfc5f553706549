"""The ``convstore`` command line (also ``python -m store``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from itertools import chain, islice
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console

try:  # typer >= 0.29 vendors click; older releases use click itself
    from typer._click.exceptions import ClickException, UsageError
except ImportError:  # pragma: no cover
    from click.exceptions import ClickException, UsageError

from . import io, render, usage as usage_
from .errors import AmbiguousToolCallError, ConvstoreError, InputError
from .formats import FORMATS, Loss, convert as convert_messages, detect, read, write as write_messages
from .model import Page
from . import search as search_
from .toolcalls import DEFAULT_PAGE
from .repository import DEFAULT_NAMESPACE, ConversationStore

DEFAULT_DB = "sqlite:///convstore.db"
_FORMAT_NAMES = ", ".join(FORMATS)

app = typer.Typer(
    name="convstore",
    help="Store agent conversations from any framework's schema, find tool calls by id, replay them in another.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
db_app = typer.Typer(help="Schema migrations of the database (Alembic).", no_args_is_help=True)
app.add_typer(db_app, name="db")

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


class State:
    def __init__(self, db: str, namespace: str = DEFAULT_NAMESPACE) -> None:
        self.db = db
        self.namespace = namespace

    def store(self, **kwargs: Any) -> ConversationStore:
        s = ConversationStore(self.db, namespace=self.namespace, **kwargs)
        if s.created_schema:
            err.print(f"[dim]created convstore tables in {s.url}[/]")
        return s


@app.callback()
def main(
    ctx: typer.Context,
    db: Optional[str] = typer.Option(
        None, "--db", metavar="URL",
        help="Database URL. Default: $CONVSTORE_DB, else sqlite:///convstore.db in the working directory.",
    ),
    namespace: Optional[str] = typer.Option(
        None, "--namespace", metavar="NAME",
        help=f"The tenant every command reads and writes. Default: $CONVSTORE_NAMESPACE, else \"{DEFAULT_NAMESPACE}\".",
    ),
) -> None:
    if namespace is None:
        namespace = os.environ.get("CONVSTORE_NAMESPACE") or DEFAULT_NAMESPACE
    elif not namespace:  # as an empty $CONVSTORE_NAMESPACE is none: not a tenant of its own
        raise typer.BadParameter("a namespace cannot be empty", param_hint="--namespace")
    ctx.obj = State(db or os.environ.get("CONVSTORE_DB") or DEFAULT_DB, namespace)


def _format_names() -> str:
    return ", ".join(FORMATS)


def _report(losses: list[Loss]) -> None:
    for loss in losses:
        err.print(f"[yellow]loss:[/] {loss}", highlight=False)


def _emit(value: Any, output: Optional[Path]) -> None:
    text = io.dumps(value)
    if output is None:
        sys.stdout.write(text + "\n")
        return
    with _writable(output):
        output.write_text(text + "\n", encoding="utf-8")


@contextmanager
def _writable(output: Path) -> Iterator[None]:
    """Writing ``output``: a missing folder or a refused write is the user's to fix, in one line."""
    try:
        yield
    except FileNotFoundError:
        raise InputError(f"{output}: no such directory {str(output.parent)!r}") from None
    except IsADirectoryError:
        raise InputError(f"{output}: is a directory, not a file") from None
    except OSError as exc:
        raise InputError(f"{output}: {exc.strerror or exc}") from None


@app.command("import")
def import_(
    ctx: typer.Context,
    files: list[str] = typer.Argument(..., help="JSON, JSON Lines, or - for standard input."),
    format: str = typer.Option("auto", "--format", "-f", help=f"Format: auto (detect it), {_FORMAT_NAMES}."),
    conversation: Optional[str] = typer.Option(None, "--conversation", "-c", help="Append to this conversation."),
    title: Optional[str] = typer.Option(None, help="Title of the new conversation."),
    tag: list[str] = typer.Option([], "--tag", help="A tag of the new conversations (repeatable)."),
) -> None:
    """Store each file as a new conversation (or append to one); print the conversation ids.

    Every file is read and validated before anything is written, and all are written in one
    transaction: a bad file writes nothing, the files before it included.
    A single JSON Lines file is streamed (read, checked and written chunk by chunk, in one
    transaction), so its size is not bounded by memory.
    """
    if len(files) == 1 and (stream := io.stream_json_lines(files[0])) is not None:
        _import_stream(ctx, files[0], *stream, format=format, conversation=conversation, title=title, tags=tag)
        return
    if format == "auto" and conversation:
        format = _stored_format(ctx, conversation)
    batches = []
    for name in files:
        data = io.single_message_as_list(io.load(name))
        try:
            batches.append((name, read(data, format if format != "auto" else detect(data))))
        except ConvstoreError as exc:
            raise InputError(f"{_display(name)}: {exc}") from None
    total = sum(len(messages) for _, messages in batches)
    with ctx.obj.store() as s, render.progress(total, "importing", err) as advance:
        if conversation:  # the files' messages in one append: all or nothing
            s.append(conversation, [m for _, messages in batches for m in messages], format="canonical",
                     progress=advance)
            ids = [conversation] * len(batches)
        else:
            ids = s.save_many([(messages, {"title": title or Path(name).stem, "tags": tag,
                                           "source_format": messages[0].source_format if messages else None})
                               for name, messages in batches], format="canonical", progress=advance)
    for cid in ids:
        out.print(cid, highlight=False)


def _import_stream(ctx: typer.Context, name: str, total: int, messages: Iterator[Any], *, format: str,
                   conversation: Optional[str], title: Optional[str], tags: list[str]) -> None:
    if format == "auto" and conversation:
        format = _stored_format(ctx, conversation)
    if format == "auto":  # detected on the first lines, so the conversation records it
        try:
            head = list(islice(messages, 1000))
        except InputError as exc:  # a bad line among them
            raise InputError(f"{_display(name)}: {exc}") from None
        format, messages = _detect(head, name), chain(head, messages)
    with ctx.obj.store() as s, render.progress(total, "importing", err) as advance:
        try:
            if conversation:
                s.append(conversation, messages, format=format, progress=advance)
                cid = conversation
            else:
                cid = s.save(messages, format=format, title=title or Path(name).stem, progress=advance, tags=tags)
        except InputError as exc:
            raise InputError(f"{_display(name)}: {exc}") from None
    out.print(cid, highlight=False)


def _stored_format(ctx: typer.Context, conversation: str) -> str:
    """Appending with --format auto: the format the conversation was stored in, if it says."""
    with ctx.obj.store() as s:
        return s.info(conversation).source_format or "auto"


def _display(name: str) -> str:
    return "standard input" if name == "-" else name


def _detect(data: Any, name: str) -> str:
    try:
        return detect(data)
    except ConvstoreError as exc:
        raise InputError(f"{_display(name)}: {exc}") from None


@app.command()
def export(
    ctx: typer.Context,
    conversation_id: str = typer.Argument(...),
    format: str = typer.Option(..., "--format", "-f", help=f"Target format: {_FORMAT_NAMES}."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write here instead of standard output."),
    last: Optional[int] = typer.Option(None, help="Only the recent window of at least N messages."),
    strict: bool = typer.Option(False, help="Fail instead of dropping what the format cannot express."),
    jsonl: bool = typer.Option(False, "--jsonl", help="JSON Lines, one message a line, streamed "
                               "(the default when the output file ends in .jsonl)."),
) -> None:
    """Rebuild a stored conversation in a format."""
    losses: list[Loss] = []
    if jsonl or (output is not None and output.suffix == ".jsonl"):
        if last is not None:
            raise InputError("--last and JSON Lines do not go together: export the window as JSON")
        _export_lines(ctx, conversation_id, format, output, strict, losses)
        _report(losses)
        return
    with ctx.obj.store() as s:
        value = s.load(conversation_id, format=format, last=last, strict=strict, on_loss=losses.append)
    _report(losses)
    _emit(value, output)


def _export_lines(ctx: typer.Context, conversation_id: str, format: str, output: Optional[Path], strict: bool,
                  losses: list[Loss]) -> None:
    if not isinstance(write_messages([], format)[0], list):  # {system, messages} and the like: no lines
        raise InputError(f"{format} exports one object, not a list of messages: export it as JSON "
                         "(without --jsonl, to a file not ending in .jsonl)")
    with ctx.obj.store() as s:
        total = s.info(conversation_id).message_count
        with render.progress(total, "exporting", err) as advance, _binary_out(output) as sink:
            for n, message in enumerate(s.export(conversation_id, format, strict=strict, on_loss=losses.append), 1):
                sink.write(io.dumps_line(message))
                if n % 1000 == 0:
                    advance(1000)


@contextmanager
def _binary_out(output: Optional[Path]) -> Iterator[Any]:
    """Where a stream goes: standard output, or a file in its folder that becomes ``output`` once the
    stream is whole (a failure midway leaves a file already there as it was, and makes none)."""
    if output is None:
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    partial = output.with_name(f".{output.name}.{os.getpid()}.partial")
    with _writable(output):
        if output.is_dir():
            raise IsADirectoryError(output)
        f = open(partial, "wb")
    try:
        with f:
            yield f
        with _writable(output):
            os.replace(partial, output)
    finally:
        partial.unlink(missing_ok=True)


@app.command()
def convert(
    file: str = typer.Argument(..., help="JSON, JSON Lines, or - for standard input."),
    from_: str = typer.Option("auto", "--from", help=f"Source format: auto, {_FORMAT_NAMES}."),
    to: str = typer.Option(..., "--to", help=f"Target format: {_FORMAT_NAMES}."),
    output: Optional[Path] = typer.Option(None, "--output", "-o"),
    strict: bool = typer.Option(False, help="Fail instead of dropping what the format cannot express."),
) -> None:
    """Convert a file between formats without a database."""
    data = io.single_message_as_list(io.load(file))  # one message, as import takes it
    losses: list[Loss] = []
    source = _detect(data, file) if from_ == "auto" else from_
    value = convert_messages(data, from_=source, to=to, strict=strict, on_loss=losses.append)
    _report(losses)
    _emit(value, output)


@app.command("tool-call")
def tool_call(
    ctx: typer.Context,
    call_id: str = typer.Argument(...),
    conversation: Optional[str] = typer.Option(None, "--conversation", "-c"),
    json: bool = typer.Option(False, "--json", help="Print the record as JSON."),
) -> None:
    """Show a tool call by id: arguments, status, result and where it happened."""
    with ctx.obj.store() as s:
        try:
            record = s.get_tool_call(call_id, conversation_id=conversation)
        except AmbiguousToolCallError as exc:
            raise AmbiguousToolCallError(exc.call_id, exc.conversation_ids, choose="--conversation ID") from None
    if json:
        _emit(record.model_dump(mode="json"), None)
    else:
        out.print(render.tool_call(record))


@app.command("tool-calls")
def tool_calls(
    ctx: typer.Context,
    name: Optional[str] = typer.Option(None, help="Tool name."),
    status: Optional[str] = typer.Option(None, help="pending, answered or error."),
    conversation: Optional[str] = typer.Option(None, "--conversation", "-c"),
    limit: int = typer.Option(DEFAULT_PAGE, "--limit", help="At most this many calls (a page)."),
    cursor: Optional[str] = typer.Option(None, "--cursor", help="Where the page starts: the cursor the "
                                         "previous page printed (with the same filters)."),
    json: bool = typer.Option(False, "--json"),
) -> None:
    """List tool calls, filtered by name, status or conversation, a page at a time.

    When more follow, the cursor of the next page is printed on standard error
    (``next page: --cursor ...``), with --json too (standard output stays a JSON list).
    """
    with ctx.obj.store() as s:
        records = s.find_tool_calls(name=name, status=status, conversation_id=conversation,  # type: ignore[arg-type]
                                    limit=limit, cursor=cursor)
    _page_out(records, json, render.tool_call_table)


def _page_out(page: Page[Any], json: bool, table: Callable[[Any, Console], None]) -> None:
    """A page as a table (or a JSON list); the next page's cursor, if any, on standard error."""
    if json:
        _emit([item.model_dump(mode="json") for item in page], None)
    else:
        table(page, out)
    if page.next_cursor is not None:
        err.print(f"next page: --cursor {page.next_cursor}", highlight=False)


def _meta(pairs: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` filters: true/false and integers as such, anything else (or a JSON string) text."""
    found: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--meta")
        parsed: Any = {"true": True, "false": False}.get(value, value)
        if value.lstrip("-").isascii() and value.lstrip("-").isdigit():  # not "²": int() refuses it
            parsed = int(value)
        elif value.startswith('"') and value.endswith('"') and len(value) > 1:
            parsed = value[1:-1]
        found[key] = parsed
    return found


def _when(value: Optional[str], option: str) -> Optional[datetime]:
    try:
        return None if value is None else datetime.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not a date or time (2026-10-01, 2026-10-01T12:00+02:00)",
                                 param_hint=option) from None


@app.command("list")
def list_(
    ctx: typer.Context,
    json: bool = typer.Option(False, "--json"),
    key: Optional[str] = typer.Option(None, "--key", help="The conversation with this key."),
    tag: list[str] = typer.Option([], "--tag", help="Only conversations with this tag (repeat: all of them)."),
    meta: list[str] = typer.Option([], "--meta", metavar="KEY=VALUE",
                                   help='Metadata equality (repeatable); 42 and true are typed, "42" is text.'),
    source_format: Optional[str] = typer.Option(None, "--source-format", help="Stored from this format."),
    created_after: Optional[str] = typer.Option(None, help="ISO date or time (UTC unless it says)."),
    created_before: Optional[str] = typer.Option(None),
    updated_after: Optional[str] = typer.Option(None),
    updated_before: Optional[str] = typer.Option(None),
    sort: str = typer.Option("created", "--sort", help="created or updated."),
    oldest_first: bool = typer.Option(False, "--oldest-first"),
    limit: Optional[int] = typer.Option(None, "--limit", help="Conversations a page (default: all)."),
    cursor: Optional[str] = typer.Option(None, "--cursor", help="The next page, as the last one printed it."),
) -> None:
    """List the stored conversations, newest first, filtered and paged."""
    if sort not in ("created", "updated"):
        raise typer.BadParameter(f"{sort!r}: created or updated", param_hint="--sort")
    filters = {"key": key, "tags": tag or None, "metadata": _meta(meta) or None, "source_format": source_format,
               "created_after": _when(created_after, "--created-after"),
               "created_before": _when(created_before, "--created-before"),
               "updated_after": _when(updated_after, "--updated-after"),
               "updated_before": _when(updated_before, "--updated-before")}
    with ctx.obj.store() as s:
        infos = s.list_conversations(**filters, order_by=f"{sort}_at", descending=not oldest_first,
                                     limit=limit, cursor=cursor)
    _page_out(infos, json, render.conversation_table)


@app.command()
def fork(
    ctx: typer.Context,
    conversation_id: str = typer.Argument(...),
    at: Optional[int] = typer.Option(None, "--at", metavar="N",
                                     help="Share the first N messages (default: all of them)."),
    key: Optional[str] = typer.Option(None, "--key", help="The fork's own key."),
    title: Optional[str] = typer.Option(None, "--title", help="The fork's title (default: the parent's)."),
    allow_pending: bool = typer.Option(False, "--allow-pending",
                                       help="Fork after a tool call whose result comes later or not at all."),
) -> None:
    """Fork a conversation: a new one sharing its first N messages (not copied); prints its id."""
    with ctx.obj.store() as s:
        fork_id = s.fork(conversation_id, at, key=key, allow_pending=allow_pending,
                         **({"title": title} if title is not None else {}))
    out.print(fork_id, highlight=False)


@app.command()
def search(
    ctx: typer.Context,
    query: str = typer.Argument(..., help='Words (all must match), "a phrase", prefix*, -excluded.'),
    role: Optional[str] = typer.Option(None, help="system, user, assistant or tool."),
    kind: Optional[str] = typer.Option(None, help="Block kind: text, reasoning, tool_call, tool_result, ..."),
    conversation: Optional[str] = typer.Option(None, "--conversation", "-c"),
    meta: list[str] = typer.Option([], "--meta", metavar="KEY=VALUE", help="Conversation metadata equality."),
    limit: int = typer.Option(search_.DEFAULT_PAGE, "--limit", help="At most this many hits (a page)."),
    cursor: Optional[str] = typer.Option(None, "--cursor", help="The next page, as the last one printed it."),
    json: bool = typer.Option(False, "--json"),
) -> None:
    """Full-text search of message text, tool names, arguments and results, best first."""
    with ctx.obj.store() as s:
        hits = s.search(query, role=role, kind=kind, conversation_id=conversation, metadata=_meta(meta) or None,
                        limit=limit, cursor=cursor)
    _page_out(hits, json, render.search_hits)


@app.command()
def index(ctx: typer.Context) -> None:
    """Bring the search index up to date now (a search does it first): after a large import."""
    done = 0

    def step(n: int, _total: int) -> None:  # index() reports a running count, the bar takes steps
        nonlocal done
        advance(n - done)
        done = n
    with ctx.obj.store() as s, render.progress(s.index_pending(), "indexing", err) as advance:
        count = s.index(progress=step)
    out.print(f"indexed {count} conversation(s)")


@app.command()
def show(ctx: typer.Context, conversation_id: str = typer.Argument(...)) -> None:
    """Render a conversation for a person to read, with its token usage."""
    with ctx.obj.store() as s:
        conversation = s.get_conversation(conversation_id)
    render.conversation(conversation, out)
    render.usage_table(usage_.of_messages(conversation_id, conversation.messages), out)


@app.command()
def usage(ctx: typer.Context, conversation_id: str = typer.Argument(...),
          json: bool = typer.Option(False, "--json")) -> None:
    """Token usage of a conversation, in total and per model."""
    with ctx.obj.store() as s:
        summary = s.usage(conversation_id)
    if json:
        _emit(summary.model_dump(mode="json"), None)
    else:
        if not summary.records:
            out.print("no token usage recorded")
        render.usage_table(summary, out)


from . import cli_admin  # noqa: E402,F401  (registers prune, demo, serve and the db commands)


def run() -> None:
    """Console entry point: every error is one line on standard error, never a traceback:
    usage mistakes exit 2, library errors 1, an interrupt 130."""
    try:
        code = app(standalone_mode=False)  # an interrupt comes back as exit code 130, not an exception
        if code == 130:
            raise KeyboardInterrupt
        if isinstance(code, int):
            sys.exit(code)
    except UsageError as exc:
        if not exc.format_message():  # no command given: the help it printed says it all
            sys.exit(2)
        sub = exc.ctx.command_path[len(exc.ctx.find_root().command_path):].split() if exc.ctx is not None else []
        hint = f" (see `{' '.join(['convstore', *sub])} --help`)"  # also under `python -m store`
        err.print(f"[red]error:[/] {exc.format_message()}{hint}", highlight=False)
        sys.exit(2)
    except ConvstoreError as exc:
        err.print(f"[red]error:[/] {exc}", highlight=False)
        sys.exit(1)
    except (KeyboardInterrupt, typer.Abort):
        err.print("interrupted: nothing more was written (a write under way was undone)")
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except ClickException as exc:
        err.print(f"[red]error:[/] {exc.format_message()}", highlight=False)
        sys.exit(exc.exit_code)
    except Exception as exc:  # a bug of ours: still one line, the traceback on request
        if os.environ.get("CONVSTORE_DEBUG"):
            raise
        err.print(f"[red]internal error:[/] {type(exc).__name__}: {exc} (set CONVSTORE_DEBUG=1 for a traceback)",
                  highlight=False)
        sys.exit(2)


__all__ = ["app", "run"]
