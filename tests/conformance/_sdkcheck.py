"""Helpers shared by the checkers that validate against an SDK's TypedDicts (openai, anthropic).

Run inside the isolated venvs next to the checker scripts (imported as a sibling module).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
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


MAX_ERRORS = 20


def check_list(value: Any, *, noun: str, shape_errors: Callable[[int, Any], list[str]],
               adapter: pydantic.TypeAdapter[Any], label: str,
               order_errors: Callable[[list[Any]], list[str]]) -> list[str]:
    """A JSON list checked element by element, then as the SDK's declared union (which must
    agree with the per-element checks), then for order; at most MAX_ERRORS problems."""
    if not isinstance(value, list):
        return [f"expected a JSON list of {noun}, got {type(value).__name__}"]
    errors: list[str] = []
    for index, element in enumerate(value):
        errors.extend(shape_errors(index, element))
    if not errors:
        try:
            materialize(adapter.validate_python(value), "", (), errors)
        except pydantic.ValidationError as exc:
            errors.extend(pydantic_errors(f"{label}: ", exc))
    errors.extend(order_errors(value))
    return errors[:MAX_ERRORS] + ([f"... and {len(errors) - MAX_ERRORS} more"] if len(errors) > MAX_ERRORS else [])


def serve(check: Callable[[Any], list[str]]) -> None:
    """The checker protocol: ``{case_id: value}`` on stdin, ``{case_id: [problems]}`` on stdout."""
    cases = json.load(sys.stdin)
    json.dump({case_id: check(value) for case_id, value in cases.items()}, sys.stdout)
