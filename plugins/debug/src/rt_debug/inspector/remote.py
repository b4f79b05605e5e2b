"""Python values as the protocol's ``RemoteObject`` s, and the table that keeps them alive by ``objectId``.

Primitives travel by value (``None`` as ``null``, ints and floats as numbers, ints past 2**53 as ``bigint``);
everything else gets an ``objectId`` that the client expands with ``Runtime.getProperties``. Objects stay in
the table until ``Runtime.releaseObject``/``releaseObjectGroup`` or the end of the pause that made them (group
``backtrace``), so a long session does not pin every value it ever showed.
"""

from __future__ import annotations

import inspect
import itertools
import json
import math
import reprlib
import threading
import types
from collections.abc import Mapping
from typing import Any

MAX_SAFE_INTEGER = 2**53 - 1
PREVIEW_PROPERTIES = 5
DESCRIPTION_LENGTH = 200
_repr = reprlib.Repr()
_repr.maxstring = 100
_repr.maxother = DESCRIPTION_LENGTH


class ObjectNotFound(KeyError):
    """An objectId that the table does not hold (released, or never given out)."""


class Scope:
    """The variables of one scope of a paused frame (locals, globals): expanded like an object's properties."""

    def __init__(self, kind: str, variables: Mapping[str, Any], name: str = "") -> None:
        self.kind = kind
        self.variables = variables
        self.name = name


def safe_repr(value: Any) -> str:
    """``repr`` that never raises and never grows past ``DESCRIPTION_LENGTH`` characters."""
    try:
        text = _repr.repr(value)
    except Exception as exc:  # noqa: BLE001 - a broken __repr__ must not break the debugger
        text = f"<{type(value).__name__} object (repr failed: {type(exc).__name__})>"
    return text if len(text) <= DESCRIPTION_LENGTH else text[: DESCRIPTION_LENGTH - 3] + "..."


def _primitive(value: Any) -> dict[str, Any] | None:
    if value is None:
        return {"type": "object", "subtype": "null", "value": None}
    if isinstance(value, bool):
        return {"type": "boolean", "value": value}
    if isinstance(value, int) and type(value).__repr__ is int.__repr__:
        if abs(value) > MAX_SAFE_INTEGER:
            return {"type": "bigint", "unserializableValue": f"{value}n", "description": str(value)}
        return {"type": "number", "value": value, "description": str(value)}
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            text = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
            return {"type": "number", "unserializableValue": text, "description": text}
        return {"type": "number", "value": value, "description": repr(value)}
    if isinstance(value, str):
        return {"type": "string", "value": value}
    return None


def _subtype(value: Any) -> str | None:
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, (dict, types.MappingProxyType)):
        return "map"
    if isinstance(value, (set, frozenset)):
        return "set"
    if isinstance(value, BaseException):
        return "error"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "typedarray"
    if inspect.isgenerator(value) or inspect.iscoroutine(value) or inspect.isasyncgen(value):
        return "iterator"
    return None


def _description(value: Any) -> str:
    if isinstance(value, BaseException):
        message = str(value)
        return f"{type(value).__name__}: {message}" if message else type(value).__name__
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        return f"{type(value).__name__}({len(value)})"
    if isinstance(value, type):
        return f"class {value.__qualname__}"
    if callable(value) and hasattr(value, "__qualname__"):
        try:
            signature = str(inspect.signature(value))
        except (TypeError, ValueError):
            signature = "(...)"
        return f"def {value.__qualname__}{signature}"
    return safe_repr(value)


def children(value: Any) -> list[tuple[str, Any]]:
    """(name, value) pairs that expanding ``value`` shows: items of containers, else its attributes."""
    if isinstance(value, Scope):
        return list(value.variables.items())
    if isinstance(value, (list, tuple)):
        return [(str(index), item) for index, item in enumerate(value)]
    if isinstance(value, (dict, types.MappingProxyType)):
        return [(key if isinstance(key, str) else safe_repr(key), item) for key, item in list(value.items())]
    if isinstance(value, (set, frozenset)):
        return [(str(index), item) for index, item in enumerate(value)]
    pairs: list[tuple[str, Any]] = []
    if isinstance(value, BaseException):
        pairs.extend([("message", str(value)), ("args", value.args)])
        notes = getattr(value, "__notes__", None)
        if notes:
            pairs.append(("__notes__", notes))
        if value.__cause__ is not None:
            pairs.append(("__cause__", value.__cause__))
        if value.__context__ is not None:
            pairs.append(("__context__", value.__context__))
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, Mapping) and not isinstance(value, (types.ModuleType, type)):
        pairs.extend((str(k), v) for k, v in list(attributes.items()))
    elif isinstance(value, (types.ModuleType, type)) and isinstance(attributes, Mapping):
        pairs.extend((str(k), v) for k, v in list(attributes.items()) if not str(k).startswith("__"))
    for slot in getattr(type(value), "__slots__", ()) if not isinstance(value, type) else ():
        if isinstance(slot, str) and hasattr(value, slot):
            pairs.append((slot, getattr(value, slot)))
    return pairs


def _preview_value(value: Any) -> dict[str, Any]:
    primitive = _primitive(value)
    if primitive is not None:
        kind = primitive["type"]
        shown = "null" if value is None else primitive.get("description", primitive.get("value"))
        entry = {"type": kind, "value": str(shown) if kind != "string" else value}
        if value is None:
            entry["subtype"] = "null"
        return entry
    entry = {
        "type": "function" if callable(value) and not isinstance(value, type) else "object",
        "value": _description(value),
    }
    subtype = _subtype(value)
    if subtype:
        entry["subtype"] = subtype
    return entry


def preview(value: Any) -> dict[str, Any]:
    """The ``ObjectPreview`` of ``value``: its first few properties, each shown as a short string."""
    try:
        pairs = children(value)
    except Exception:  # noqa: BLE001 - an object whose attributes raise is previewed as empty
        pairs = []
    shown = pairs[:PREVIEW_PROPERTIES]
    result: dict[str, Any] = {
        "type": "object",
        "description": _description(value) if not isinstance(value, Scope) else value.kind,
        "lossless": len(pairs) <= PREVIEW_PROPERTIES and all(_primitive(v) is not None for _, v in shown),
        "overflow": len(pairs) > PREVIEW_PROPERTIES,
        "properties": [{"name": name, **_preview_value(item)} for name, item in shown],
    }
    subtype = _subtype(value)
    if subtype:
        result["subtype"] = subtype
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        result["size"] = len(value)
    return result


class RemoteObjects:
    """objectId -> (object, group). Shared by the inspector thread and the paused main thread, hence the lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._objects: dict[str, tuple[Any, str]] = {}
        self._ids = itertools.count(1)

    def _add(self, value: Any, group: str) -> str:
        object_id = json.dumps({"injectedScriptId": 1, "id": next(self._ids)}, separators=(",", ":"))
        with self._lock:
            self._objects[object_id] = (value, group)
        return object_id

    def get(self, object_id: str) -> Any:
        with self._lock:
            try:
                return self._objects[object_id][0]
            except KeyError:
                raise ObjectNotFound(object_id) from None

    def release(self, object_id: str) -> None:
        with self._lock:
            self._objects.pop(object_id, None)

    def release_group(self, group: str) -> None:
        with self._lock:
            for object_id in [k for k, (_, g) in self._objects.items() if g == group]:
                del self._objects[object_id]

    def release_all(self) -> None:
        with self._lock:
            self._objects.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._objects)

    def scope(self, scope: Scope, group: str) -> dict[str, Any]:
        return {
            "type": "object",
            "objectId": self._add(scope, group),
            "className": "DebuggerScope",
            "description": scope.kind,
        }

    def wrap(
        self, value: Any, group: str = "console", *, by_value: bool = False, with_preview: bool = False
    ) -> dict[str, Any]:
        """The RemoteObject for ``value``; containers and objects are kept in the table under ``group``."""
        primitive = _primitive(value)
        if primitive is not None:
            return primitive
        if by_value:
            try:
                return {"type": "object", "value": json.loads(json.dumps(value, default=safe_repr))}
            except (TypeError, ValueError):
                pass
        is_function = (callable(value) and not isinstance(value, type)) or inspect.isclass(value)
        remote: dict[str, Any] = {
            "type": "function" if is_function else "object",
            "objectId": self._add(value, group),
            "className": type(value).__name__ if not isinstance(value, type) else "type",
            "description": _description(value),
        }
        subtype = _subtype(value)
        if subtype and not is_function:
            remote["subtype"] = subtype
        if isinstance(value, (list, tuple, dict, set, frozenset)):
            remote["size"] = len(value)
        if with_preview and not is_function:
            remote["preview"] = preview(value)
        return remote

    def properties(self, object_id: str, group: str, *, with_preview: bool = False) -> list[dict[str, Any]]:
        """``Runtime.getProperties``: the children of an object, each a property descriptor."""
        value = self.get(object_id)
        return [
            {
                "name": name,
                "value": self.wrap(item, group, with_preview=with_preview),
                "writable": True,
                "enumerable": True,
                "configurable": True,
                "isOwn": True,
            }
            for name, item in children(value)
        ]
