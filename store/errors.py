"""The one error hierarchy of convstore.

Library code raises only these. Each message says what was wrong and where
(format, message index, field path), so a command line can print it as one line.
"""

from __future__ import annotations

from collections.abc import Sequence


class ConvstoreError(Exception):
    """Base class of every error convstore raises."""


# --- bad input ---------------------------------------------------------------


class InputError(ConvstoreError):
    """The caller's input cannot be stored or converted."""


class UnknownFormatError(InputError):
    def __init__(self, name: str, known: Sequence[str]) -> None:
        self.name = name
        super().__init__(f"unknown format {name!r}; known formats: {', '.join(known)}")


class FormatDetectionError(InputError):
    """``format="auto"`` found no format, or several, that fit the input."""


class SchemaError(InputError):
    """A message does not match its format's schema.

    ``problems`` lists every ``(message index, field path, reason)`` found, so a
    user can fix a file in one pass; the message names the first few.
    """

    def __init__(self, format: str, problems: Sequence[tuple[int | None, str, str]]) -> None:
        self.format = format
        self.problems = list(problems)
        shown = "; ".join(_where(i, path) + reason for i, path, reason in self.problems[:3])
        more = f" (and {len(self.problems) - 3} more)" if len(self.problems) > 3 else ""
        super().__init__(f"invalid {format} input: {shown}{more}")

    @property
    def index(self) -> int | None:
        return self.problems[0][0] if self.problems else None


def _where(index: int | None, path: str) -> str:
    if index is None:
        return f"{path}: " if path else ""
    return f"message {index}" + (f", field {path}: " if path else ": ")


class DuplicateToolCallError(InputError):
    def __init__(self, call_id: str, index: int) -> None:
        self.call_id = call_id
        self.index = index
        super().__init__(
            f"message {index}: tool call id {call_id!r} is already used in this conversation; "
            "call ids must be unique within a conversation"
        )


class LossError(InputError):
    """Strict mode: a conversion would drop or approximate something."""


# --- lookups -----------------------------------------------------------------


class NotFoundError(ConvstoreError):
    """Something asked for by id does not exist (in this namespace)."""


class ConversationNotFoundError(NotFoundError):
    def __init__(self, conversation_id: str, namespace: str) -> None:
        self.conversation_id = conversation_id
        super().__init__(f"no conversation {conversation_id!r} in namespace {namespace!r}")


class ToolCallNotFoundError(NotFoundError):
    def __init__(self, call_id: str, where: str) -> None:
        self.call_id = call_id
        super().__init__(f"no tool call {call_id!r} {where}")


class AmbiguousToolCallError(ConvstoreError):
    def __init__(self, call_id: str, conversation_ids: Sequence[str], choose: str = "conversation_id") -> None:
        self.call_id = call_id
        self.conversation_ids = list(conversation_ids)
        super().__init__(
            f"tool call id {call_id!r} occurs in {len(conversation_ids)} conversations "
            f"({', '.join(conversation_ids[:5])}); pass {choose} to choose one"
        )


class SharedHistoryError(ConvstoreError):
    """A write would take away messages that forks of the conversation share (a delete, or a
    pop, replace or truncate reaching below a fork point): delete the forks first."""


# --- the database ------------------------------------------------------------


class DatabaseError(ConvstoreError):
    """The database could not be reached or used."""


class SchemaOutdatedError(DatabaseError):
    """The database is not at the schema revision this convstore needs.

    Made with a revision this convstore does not know, it is a :class:`SchemaTooNewError`
    (the database was written by a newer convstore), whichever code raises it."""

    def __new__(cls, url: str, current: str | None, head: str) -> SchemaOutdatedError:
        if cls is SchemaOutdatedError and current is not None and not _known_revision(current):
            cls = SchemaTooNewError
        return super().__new__(cls, url, current, head)

    def __init__(self, url: str, current: str | None, head: str) -> None:
        self.current = current
        self.head = head
        super().__init__(self._message(url, current, head))

    @staticmethod
    def _message(url: str, current: str | None, head: str) -> str:
        return (f"database {url} is at schema revision {current or 'unknown'}, this convstore needs {head}; "
                f"upgrade it with `convstore --db {url} db upgrade` (or `alembic upgrade head`)")


class SchemaTooNewError(SchemaOutdatedError):
    """The database is at a schema revision this convstore does not know: a newer
    convstore wrote it. Upgrading the database cannot help; upgrading convstore does."""

    @staticmethod
    def _message(url: str, current: str | None, head: str) -> str:
        return (f"database {url} is at schema revision {current}, which this convstore does not know "
                f"(its newest is {head}): a newer convstore wrote it; upgrade convstore "
                f"(`pip install -U convstore`) to use it")


def _known_revision(revision: str) -> bool:
    from .db import known_revisions  # imported here: store.db imports this module

    try:
        return revision in known_revisions()
    except ConvstoreError:  # no migrations to compare with: keep the plain refusal
        return True
