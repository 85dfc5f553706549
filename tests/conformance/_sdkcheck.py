"""Helpers shared by the checkers that validate against an SDK's TypedDicts (openai, anthropic).

Run inside the isolated venvs next to the checker scripts (imported as a sibling module).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pydantic


def where(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc)


def pydantic_errors(prefix: str, exc: pydantic.ValidationError, loc: tuple[Any, ...] = ()) -> list[str]:
    return [f"{prefix}{where(loc + tuple(e['loc']))}: {e['msg']}" for e in exc.errors(include_url=False)]


def materialize(value: Any, prefix: str, loc: tuple[Any, ...], errors: list[str]) -> Any:
    """``value`` with every lazy pydantic ``ValidatorIterator`` consumed (errors collected)."""
    if isinstance(value, dict):
        return {k: materialize(v, prefix, (*loc, k), errors) for k, v in value.items()}
    if isinstance(value, list):
        return [materialize(v, prefix, (*loc, i), errors) for i, v in enumerate(value)]
    if isinstance(value, Iterator):
        try:
            items = list(value)
        except pydantic.ValidationError as exc:
            errors.extend(pydantic_errors(prefix, exc, loc))
            return []
        return [materialize(v, prefix, (*loc, i), errors) for i, v in enumerate(items)]
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json", exclude_unset=True)
    return value


def unknown_keys(given: Any, kept: Any, prefix: str, loc: tuple[Any, ...], errors: list[str], *, sdk: str) -> None:
    """Keys of ``given`` that validation dropped: the SDK type has no such field."""
    if isinstance(given, dict) and isinstance(kept, dict):
        for key, value in given.items():
            if key not in kept:
                errors.append(f"{prefix}{where((*loc, key))}: unknown key (not a field of the {sdk} SDK type)")
            else:
                unknown_keys(value, kept[key], prefix, (*loc, key), errors, sdk=sdk)
    elif isinstance(given, list) and isinstance(kept, list) and len(given) == len(kept):
        for i, (g, k) in enumerate(zip(given, kept)):
            unknown_keys(g, k, prefix, (*loc, i), errors, sdk=sdk)
