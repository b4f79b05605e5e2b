"""``Headers``: the fetch-style, case-insensitive, order-keeping multi-map of HTTP header fields.

Written by hand because the fetch API's semantics (``get`` joins repeated fields with ", ", ``append`` vs
``set``, iteration in lower case) differ from every mapping the standard library or h11 offers, and the class
is small.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Union

HeadersInit = Union["Headers", Mapping[str, str], Iterable[tuple[str, str]], None]

_FORBIDDEN_VALUE_CHARS = ("\r", "\n", "\0")
_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"})


def _check(name: str, value: str) -> tuple[str, str]:
    if not isinstance(name, str) or not isinstance(value, str):
        raise TypeError(
            f"header name and value must be str, got {type(name).__name__}: {type(value).__name__}"
        )
    if not name or any(c in name for c in " \t\r\n:\0"):
        raise ValueError(f"invalid header name {name!r}")
    if any(c in value for c in _FORBIDDEN_VALUE_CHARS):
        raise ValueError(f"invalid value for header {name!r}: it contains CR, LF or NUL")
    return name.lower(), value.strip(" \t")


class Headers:
    """Header fields in arrival order; names compare case-insensitively and are kept in lower case."""

    __slots__ = ("_items",)

    def __init__(self, init: HeadersInit = None) -> None:
        self._items: list[tuple[str, str]] = []
        if init is None:
            return
        if isinstance(init, Headers):
            self._items = list(init._items)
            return
        pairs = init.items() if isinstance(init, Mapping) else init
        for name, value in pairs:
            self.append(name, value)

    @classmethod
    def _trusted(cls, items: list[tuple[str, str]]) -> Headers:
        """Wrap pairs already validated by the HTTP parser (lower-case names), without re-checking them."""
        headers = cls.__new__(cls)
        headers._items = items
        return headers

    def append(self, name: str, value: str) -> None:
        self._items.append(_check(name, value))

    def set(self, name: str, value: str) -> None:
        key, value = _check(name, value)
        self._items = [(k, v) for k, v in self._items if k != key]
        self._items.append((key, value))

    def delete(self, name: str) -> None:
        key = name.lower()
        self._items = [(k, v) for k, v in self._items if k != key]

    def get(self, name: str, default: str | None = None) -> str | None:
        key = name.lower()
        values = [v for k, v in self._items if k == key]
        return ", ".join(values) if values else default

    def get_all(self, name: str) -> list[str]:
        key = name.lower()
        return [v for k, v in self._items if k == key]

    def get_set_cookie(self) -> list[str]:
        return self.get_all("set-cookie")

    def has(self, name: str) -> bool:
        key = name.lower()
        return any(k == key for k, _ in self._items)

    def items(self) -> list[tuple[str, str]]:
        return list(self._items)

    def keys(self) -> list[str]:
        return list(dict.fromkeys(k for k, _ in self._items))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.has(name)

    def __getitem__(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __setitem__(self, name: str, value: str) -> None:
        self.set(name, value)

    def __delitem__(self, name: str) -> None:
        self.delete(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Headers) and sorted(self._items) == sorted(other._items)

    def __repr__(self) -> str:
        """Credentials are masked: a logged request or an assertion message must not leak them."""
        shown = [(k, "<redacted>" if k in _SECRET_HEADERS else v) for k, v in self._items]
        return f"Headers({shown!r})"

    def has_token(self, name: str, token: str) -> bool:
        """Whether a comma-separated header (``Connection: keep-alive, Upgrade``) lists ``token``."""
        token = token.lower()
        return any(part.strip().lower() == token for value in self.get_all(name) for part in value.split(","))
