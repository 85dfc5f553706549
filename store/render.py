"""How the command line shows things to a person (Rich)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from .formats._common import dump_json
from .model import Block, Conversation, Message, ToolCallRecord, ToolResultBlock

ROLE_STYLE = {"system": "magenta", "user": "green", "assistant": "cyan", "tool": "yellow"}
STATUS_STYLE = {"pending": "yellow", "answered": "green", "error": "red"}


@contextmanager
def progress(total: int, label: str, console: Console) -> Iterator[Callable[[int], None]]:
    """A progress bar on a terminal; nothing at all when output is piped."""
    if not console.is_terminal or total < 1000:
        yield lambda n=1: None
        return
    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda n=1: bar.advance(task, n)


def _short(value: Any, width: int = 60) -> str:
    text = value if isinstance(value, str) else dump_json(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _output(result: str | list[Block] | None) -> str:
    if result is None:
        return ""
    if isinstance(result, str):
        return result
    return " ".join(block_summary(b) for b in result)


def tool_call(record: ToolCallRecord) -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    where = f"conversation {record.conversation_id}, message {record.call_position}"
    rows = [
        ("call", f"{record.name} ({record.call_id})"),
        ("status", Text(record.status, style=STATUS_STYLE[record.status])),
        ("arguments", record.arguments_raw if record.arguments_raw is not None else dump_json(record.arguments)),
        ("called at", where + (f", {record.call_created_at:%Y-%m-%d %H:%M:%S}" if record.call_created_at else "")),
    ]
    if record.result_position is not None:
        rows += [("result", _output(record.result)), ("answered at", f"message {record.result_position}")]
    for key, value in rows:
        grid.add_row(key, value)
    return grid


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _table(console: Console, title: str, headers: tuple[str, ...], rows: list[tuple[Any, ...]], ids: int) -> None:
    """A table on a terminal, with the first ``ids`` columns never cut (ids are for copying);
    tab-separated lines when output is piped, so scripts and narrow pipes get every id whole."""
    if not console.is_terminal:
        console.file.write("\t".join(headers) + "\n")
        for row in rows:
            console.file.write("\t".join(str(v).replace("\t", " ").replace("\n", " ") for v in row) + "\n")
        return
    table = Table(title=title)
    for index, header in enumerate(headers):
        if index < ids:
            width = max([len(header), *(len(str(row[index])) for row in rows)])
            table.add_column(header, no_wrap=True, min_width=width)
        else:
            table.add_column(header)
    for row in rows:
        table.add_row(*row)
    console.print(table)


def tool_call_table(records: list[ToolCallRecord], console: Console) -> None:
    rows = [(r.call_id, r.conversation_id, r.name, Text(r.status, style=STATUS_STYLE[r.status]),
             _short(r.arguments if r.arguments is not None else r.arguments_raw, 30), str(r.call_position))
            for r in records]
    headers = ("call id", "conversation", "tool", "status", "arguments", "msg")
    _table(console, plural(len(records), "tool call"), headers, rows, ids=2)


def usage_table(usage: Any, console: Console) -> None:
    """Token counts per model and in total (a ``store.usage.ConversationUsage``); nothing
    when no message recorded any."""
    if not usage.records:
        return
    rows = [(m.model or "(no model)", f"{m.input_tokens:,}", f"{m.output_tokens:,}", f"{m.total_tokens:,}",
             str(m.records)) for m in usage.by_model]
    rows.append(("total", f"{usage.input_tokens:,}", f"{usage.output_tokens:,}", f"{usage.total_tokens:,}",
                 str(usage.records)))
    headers = ("model", "input tokens", "output tokens", "total tokens", "calls")
    _table(console, "token usage", headers, rows, ids=0)


def conversation_table(infos: list[Any], console: Console) -> None:
    rows = [(i.id, i.title or "", i.source_format or "", str(i.message_count), f"{i.updated_at:%Y-%m-%d %H:%M}",
             ", ".join(i.tags)) for i in infos]
    headers = ("id", "title", "format", "messages", "updated", "tags")
    _table(console, plural(len(infos), "conversation"), headers, rows, ids=1)


def _highlighted(snippet: str, spans: list[tuple[int, int]]) -> Text:
    text = Text(snippet.replace("\n", " "))
    for start, end in spans:
        text.stylize("bold yellow", start, end)
    return text


def search_hits(hits: list[Any], console: Console) -> None:
    """Search hits, their matching words highlighted on a terminal."""
    rows = [(h.conversation_id, str(h.seq), h.role, h.kind, _highlighted(h.snippet, h.highlights)) for h in hits]
    headers = ("conversation", "msg", "role", "kind", "snippet")
    _table(console, plural(len(hits), "hit"), headers, rows, ids=2)


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} kB" if n < 1024**2 else f"{n / 1024**2:.1f} MB"


def block_summary(block: Block) -> str:
    """One line for a block that is not plain text (images as references)."""
    match block.kind:
        case "image" | "audio" | "video" | "file":
            ref = block.url or block.file_id or (f"{_size(len(block.data))} inline" if block.data else "")
            return f"[{block.kind} {block.media_type or ''} {ref}]".replace("  ", " ")
        case "text" | "refusal" | "reasoning":
            return block.text
        case "tool_call":
            return f"{block.name}({_short(block.arguments_raw or dump_json(block.arguments))})"
        case "tool_result":
            return _output(block.output)
        case _:
            return f"[{block.kind}]"


def _body(msg: Message, results: dict[str, ToolResultBlock]) -> list[Any]:
    parts: list[Any] = []
    for block in msg.content:
        if block.kind == "text":
            if block.text:
                parts.append(Text(block.text))
        elif block.kind == "refusal":
            parts.append(Text(f"(refused) {block.text}", style="red"))
        elif block.kind == "reasoning":
            parts.append(Text(f"(thinking) {block.text or '[redacted]'}", style="dim italic"))
        elif block.kind == "tool_call":
            result = results.get(block.call_id)
            line = Text(f"→ {block_summary(block)}", style="bold")
            line.append(f"  [{block.call_id}]", style="dim")
            if result is not None:
                line.append(f"\n  ⇐ {_short(_output(result.output), 200)}", style="red" if result.is_error else "")
            parts.append(line)
        elif block.kind != "tool_result":
            parts.append(Text(block_summary(block), style="blue"))
    return parts


def conversation(conv: Conversation, console: Console) -> None:
    """Each message as a panel: role and author, text, reasoning, tool calls with their results."""
    results = {b.call_id: b for m in conv.messages for b in m.content if isinstance(b, ToolResultBlock)}
    calls = {b.call_id for m in conv.messages for b in m.content if b.kind == "tool_call"}
    console.print(Text(f"{conv.title or conv.id}  ({plural(len(conv.messages), 'message')})", style="bold"))
    for index, msg in enumerate(conv.messages):
        body = _body(msg, results)
        # Results already shown under their call need no panel of their own.
        orphans = [b for b in msg.content if isinstance(b, ToolResultBlock) and b.call_id not in calls]
        body += [Text(f"⇐ {b.call_id}: {_short(_output(b.output), 200)}") for b in orphans]
        if not body:
            continue
        title = f"{index} {msg.source_role or msg.role}" + (f" · {msg.name}" if msg.name else "")
        style = ROLE_STYLE.get(msg.role, "white")
        console.print(Panel(Group(*body), title=title, title_align="left", border_style=style, width=min(console.width, 80)))
