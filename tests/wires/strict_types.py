"""Strict validation of a JSON body against an official SDK's TypedDict request type.

pydantic validates `Iterable[...]` fields lazily (a generator nobody consumes checks nothing) and
TypedDicts ignore unknown keys. `strict(tp)` rebuilds the type: every TypedDict gets
`extra="forbid"` and requires exactly the keys the SDK marks required, every Iterable/Sequence
becomes a list (validated eagerly). Recursive TypedDicts
are left as they are on the back-edge (our requests never use those branches). SDK response
models that the param unions also admit (pydantic models with extra fields allowed) are dropped.
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any, Union

import pydantic
import typing_extensions as te
from pydantic import ConfigDict, TypeAdapter

_BUILT: dict[Any, Any] = {}
_BUILDING: set[Any] = set()
_LIST_ORIGINS = {list, collections.abc.Iterable, collections.abc.Sequence, typing.Iterable,
                 typing.Sequence, list}
_DICT_ORIGINS = {dict, collections.abc.Mapping, dict, typing.Mapping}


def _unwrap(tp: Any) -> Any:
    while te.get_origin(tp) in (te.Required, te.NotRequired, te.Annotated, typing.Annotated):
        tp = te.get_args(tp)[0]
    return tp


def _is_model(tp: Any) -> bool:
    """SDK response models (pydantic, extra allowed) that the SDKs also accept as input; a
    request body must use the TypedDict params, so they are dropped from unions."""
    if isinstance(tp, type) and issubclass(tp, pydantic.BaseModel):
        return True
    if te.get_origin(tp) in (Union, types.UnionType):
        return all(_is_model(a) for a in te.get_args(tp))
    return False


def _required_keys(tp: Any, hints: dict[str, Any]) -> set[str]:
    """The keys `tp` requires. `__required_keys__` misses `Required[...]` written in a module with
    postponed annotations (the SDKs' are): on Python 3.11 the class sees only strings. The
    evaluated hints keep the qualifier."""
    required = set(tp.__required_keys__)
    total = getattr(tp, "__total__", True)
    for key, hint in hints.items():
        origin = te.get_origin(hint)
        if origin is te.Required or (total and origin is not te.NotRequired):
            required.add(key)
    return required


def strict(tp: Any) -> Any:
    tp = _unwrap(tp)
    if te.is_typeddict(tp):
        if tp in _BUILT:
            return _BUILT[tp]
        if tp in _BUILDING:
            return tp
        _BUILDING.add(tp)
        try:
            hints = te.get_type_hints(tp, include_extras=True)
            required = _required_keys(tp, hints)
            fields = {
                key: (te.Required if key in required else te.NotRequired)[strict(value)]
                for key, value in hints.items()
            }
            rebuilt = te.TypedDict(f"Strict{tp.__name__}", fields, total=False)  # type: ignore[operator]
            rebuilt.__pydantic_config__ = ConfigDict(extra="forbid", arbitrary_types_allowed=True)  # type: ignore[attr-defined]
            _BUILT[tp] = rebuilt
            return rebuilt
        finally:
            _BUILDING.discard(tp)
    origin = te.get_origin(tp)
    args = te.get_args(tp)
    if origin in (Union, types.UnionType):
        members = [strict(a) for a in args]
        params = [m for m in members if not _is_model(m)] or members
        return Union[tuple(params)]  # type: ignore[return-value]  # noqa: UP007 (built at run time)
    if origin in _LIST_ORIGINS or getattr(origin, "__name__", "") == "SequenceNotStr":
        return list[strict(args[0])] if args else list
    if origin in _DICT_ORIGINS:
        return dict[args[0], strict(args[1])] if args else dict
    return tp


_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def validate_strict(tp: Any, value: object) -> None:
    """Raise pydantic.ValidationError unless `value` is exactly an instance of SDK type `tp`."""
    adapter = _ADAPTERS.get(tp)
    if adapter is None:
        adapter = _ADAPTERS[tp] = TypeAdapter(strict(tp))
    adapter.validate_python(value, strict=True)
