"""The ``routes`` table of ``rt.serve``: exact paths, ``:param`` segments, trailing ``*``, per-method.

A value is a ``Response`` (served as is, for every method), a handler ``(req, server)``, or a dict from method
names to either. Exact paths win over parameterised ones, which win over wildcards; among equals, table order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from rt_http.messages import Response

Handler = Callable[..., Any]
Target = Response | Handler


@attrs.frozen
class Route:
    pattern: str
    segments: tuple[str, ...]
    methods: Mapping[str, Target] | None  # None: `target` answers every method
    target: Target | None

    @property
    def rank(self) -> int:
        if any(s == "*" for s in self.segments):
            return 2
        return 1 if any(s.startswith(":") for s in self.segments) else 0

    def match(self, parts: list[str]) -> dict[str, str] | None:
        params: dict[str, str] = {}
        for index, segment in enumerate(self.segments):
            if segment == "*":
                return params
            if index >= len(parts):
                return None
            if segment.startswith(":"):
                if not parts[index]:
                    return None
                params[segment[1:]] = parts[index]
            elif segment != parts[index]:
                return None
        return params if len(parts) == len(self.segments) else None


@attrs.frozen
class RouteMatch:
    target: Target | None  # None with allowed set: the path exists but not for this method (405)
    params: dict[str, str]
    allowed: tuple[str, ...] = ()


def _split(path: str) -> list[str]:
    return path.strip("/").split("/") if path.strip("/") else []


def _check_target(pattern: str, target: object) -> None:
    if not isinstance(target, Response) and not callable(target):
        raise TypeError(
            f"route {pattern!r}: expected a Response or a handler function, got {type(target).__name__}"
        )
    if isinstance(target, Response) and target.is_streaming:
        # a static route answers every request with the same object: an iterator body would be empty after
        # the first one
        raise TypeError(f"route {pattern!r}: a static Response needs a str or bytes body, not a stream")


class Router:
    """Matches a request path and method to a route target."""

    def __init__(self, routes: Mapping[str, Any] | None) -> None:
        compiled: list[Route] = []
        for pattern, value in (routes or {}).items():
            if not isinstance(pattern, str) or not pattern.startswith("/"):
                raise ValueError(f"route paths must start with '/', got {pattern!r}")
            if isinstance(value, Mapping):
                methods = {method.upper(): target for method, target in value.items()}
                for target in methods.values():
                    _check_target(pattern, target)
                compiled.append(Route(pattern, tuple(_split(pattern)), methods, None))
            else:
                _check_target(pattern, value)
                compiled.append(Route(pattern, tuple(_split(pattern)), None, value))
        self._exact = {r.pattern.rstrip("/") or "/": r for r in compiled if r.rank == 0}
        self._patterns = sorted((r for r in compiled if r.rank), key=lambda r: r.rank)

    def __bool__(self) -> bool:
        return bool(self._exact or self._patterns)

    def match(self, method: str, path: str) -> RouteMatch | None:
        route = self._exact.get(path.rstrip("/") or "/")
        params: dict[str, str] | None = {}
        if route is None:
            parts = _split(path)
            for candidate in self._patterns:
                params = candidate.match(parts)
                if params is not None:
                    route = candidate
                    break
        if route is None or params is None:
            return None
        if route.methods is None:
            return RouteMatch(route.target, params)
        target = route.methods.get(method)
        if target is None and method == "HEAD":
            target = route.methods.get("GET")
        if target is None:
            return RouteMatch(None, params, tuple(route.methods))
        return RouteMatch(target, params)
