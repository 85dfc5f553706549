"""``convstore demo``: the bundled samples, stored, searched and replayed."""

from __future__ import annotations

import json
import shlex
from importlib import resources
from typing import Any

from rich.console import Console
from rich.table import Table

from . import render
from .formats import FORMATS, Loss
from .repository import DEFAULT_NAMESPACE, ConversationStore


SAMPLE = "convstore_sample"
"""The metadata key naming the format of a sample the demo stored."""


def samples() -> dict[str, Any]:
    """The bundled sample conversation of every registered format that has one."""
    folder = resources.files("store") / "samples"
    found = {}
    for name in FORMATS:
        sample = folder / f"{name}.json"
        if sample.is_file():
            found[name] = json.loads(sample.read_text(encoding="utf-8"))
    return found


def run(url: str, namespace: str, console: Console) -> None:
    """Store the samples in the database at ``url`` (once: a sample already there is reused),
    look a tool call up and replay a conversation in every format."""
    console.print(f"[bold]convstore demo[/] — the database at {url}\n")
    with ConversationStore(url, namespace=namespace) as store:
        if store.created_schema:
            console.print(f"[dim]created convstore tables in {store.url}[/]")
        stored = _import(store, console)
        first_format, first_id = next(iter(stored.items()))
        _lookup(store, first_id, console)
        _replay(store, first_format, first_id, console)
    where = f"--db {url}" + ("" if namespace == DEFAULT_NAMESPACE else f" --namespace {shlex.quote(namespace)}")
    console.print(f"\nExplore it yourself:\n  convstore {where} list\n"
                  f"  convstore {where} show {first_id}\n"
                  f"  convstore {where} tool-calls --status answered\n"
                  f"  convstore {where} search weather\n"
                  f"  convstore {where} serve      (in a browser: pip install 'convstore\\[serve]')")


def _import(store: ConversationStore, console: Console) -> dict[str, str]:
    table = Table("format", "conversation id", "messages", "tool calls", title="1. imported the samples")
    stored = {}
    for name, data in samples().items():
        mark = {SAMPLE: name}  # a second demo on the same database finds its samples instead of repeating them
        found = store.list_conversations(metadata=mark, limit=1)
        cid = found[0].id if found else store.save(data, format=name, title=f"{name} sample", metadata=mark)
        stored[name] = cid
        info = store.info(cid)
        table.add_row(name, cid, str(info.message_count), str(len(store.find_tool_calls(conversation_id=cid))))
    console.print(table)
    return stored


def _lookup(store: ConversationStore, conversation_id: str, console: Console) -> None:
    calls = store.find_tool_calls(conversation_id=conversation_id)
    if not calls:
        return
    record = store.get_tool_call(calls[0].call_id, conversation_id=conversation_id)
    console.print(f"\n[bold]2. looked up tool call {record.call_id!r} by id[/]")
    console.print(render.tool_call(record))


def _messages_of(value: Any) -> list[Any]:
    """The messages of an exported value: the list, or the object's list(s) of them."""
    if not isinstance(value, dict):
        return value
    if "input_messages" in value or "output_messages" in value:  # OTel GenAI: the two attributes
        return [*value.get("input_messages", []), *value.get("output_messages", [])]
    return value.get("messages", value.get("contents", value))


def _replay(store: ConversationStore, source: str, conversation_id: str, console: Console) -> None:
    table = Table("target", "messages", "carried", "approximated", "dropped",
                  title=f"\n3. replayed the {source} sample in every format (fields per kind of loss)")
    for target in FORMATS:
        losses: list[Loss] = []
        value = store.load(conversation_id, format=target, on_loss=losses.append)
        items = _messages_of(value)
        counts = {action: sum(1 for loss in losses if loss.action == action)
                  for action in ("carried", "approximated", "dropped")}
        table.add_row(target, str(len(items)), *(str(n) if n else "-" for n in counts.values()))
    console.print(table)
    console.print("carried: kept in the target's extension field, restored when read back; "
                  "`convstore export --strict` refuses any other loss.")
