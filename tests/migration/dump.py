"""Fill a database and dump what it holds, through the public API of whichever convstore
is importable: run with the code of an older revision (PYTHONPATH) or with today's.

    python dump.py fill URL   # create the schema, save every sample and some edits, then dump
    python dump.py dump URL   # dump only

The dump (JSON on stdout): every conversation's info, its export in its own format and
in canonical form, a window, every tool-call record, and every blob's bytes.
"""

from __future__ import annotations

import base64
import json
import sys

import sqlalchemy as sa

from store import ConversationStore
from store.demo import samples
from store.formats import FORMATS

NAMESPACES = ("default", "Tenant")


def fill(url: str) -> None:
    for namespace in NAMESPACES:
        with ConversationStore(url, namespace=namespace) as s:
            for name, sample in samples().items():
                cid = s.save(sample, name, title=f"{name} in {namespace}")
                if name == "openai":  # edited after saving: popped, then appended to
                    s.pop(cid, 2)
                    s.append(cid, [{"role": "user", "content": "again"}], name)


def dump(url: str) -> dict:
    out: dict = {"conversations": {}, "tool_calls": {}, "blobs": []}
    for namespace in NAMESPACES:
        with ConversationStore(url, namespace=namespace, create=False) as s:
            for info in s.list_conversations():
                own = info.source_format if info.source_format in FORMATS else "openai"
                out["conversations"][info.id] = {
                    # (tags and expires_at came with 0005: none before it)
                    "info": info.model_dump(mode="json", exclude={"updated_at", "tags", "expires_at", "usage", "parent_id",
                                                                 "fork_seq"}),
                    "export": s.load(info.id, own),
                    "canonical": [m.model_dump(mode="json") for m in s.load_messages(info.id)],
                    "last3": [m.model_dump(mode="json") for m in s.load_messages(info.id, last=3)],
                }
            out["tool_calls"][namespace] = [r.model_dump(mode="json") for r in s.find_tool_calls(limit=None)]
            engine = s.engine
            with engine.connect() as conn:
                rows = conn.execute(sa.text(
                    "SELECT conversation_id, sha256, media_type, size, data FROM blobs "
                    "ORDER BY conversation_id, sha256")).all()
            out["blobs"] = [[str(c), h, m, n, base64.b64encode(bytes(d)).decode()] for c, h, m, n, d in rows]
    return out


if __name__ == "__main__":
    action, url = sys.argv[1], sys.argv[2]
    if action == "fill":
        fill(url)
    json.dump(dump(url), sys.stdout, sort_keys=True)
