"""What ``--inspect[=VALUE]``, ``--inspect-brk`` and ``--inspect-wait`` ask for.

VALUE is ``port``, ``host``, ``host:port``, ``host:port/prefix`` or a ``ws://`` URL of that shape (as in the
reference runtime). Without a path the WebSocket lives at a random UUID path: the path is a capability, so a
web page that guesses the port still cannot reach the debugger.
"""

from __future__ import annotations

import ipaddress
import uuid
from typing import Literal

import attrs

DEFAULT_HOST = "localhost"
DEFAULT_PORT = 6499
Mode = Literal["inspect", "brk", "wait"]
LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "ip6-localhost"})


class InspectValueError(ValueError):
    """A ``--inspect`` value that cannot be understood; its message is one line for the user."""


@attrs.frozen
class InspectAddress:
    host: str
    port: int
    path: str  # starts with "/"
    mode: Mode = "inspect"

    @property
    def is_loopback(self) -> bool:
        return is_loopback(self.host)


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_inspect_value(value: str, mode: Mode = "inspect") -> InspectAddress:
    """The address of ``--inspect=value`` (an empty value means all the defaults)."""
    text = value.strip()
    for scheme in ("ws://", "http://"):
        text = text.removeprefix(scheme)
    path = ""
    if "/" in text:
        text, path = text.split("/", 1)
        path = "/" + path
    host, port = DEFAULT_HOST, DEFAULT_PORT
    if text:
        if text.isdigit():
            port = _port(text, value)
        elif text.startswith("["):  # [::1]:6499
            closing = text.find("]")
            if closing < 0:
                raise InspectValueError(f"--inspect: bad IPv6 address in {value!r}")
            host = text[1:closing]
            rest = text[closing + 1 :]
            if rest:
                if not rest.startswith(":"):
                    raise InspectValueError(f"--inspect: expected host:port, got {value!r}")
                port = _port(rest[1:], value)
        elif text.count(":") == 1:
            host, port_text = text.split(":")
            port = _port(port_text, value)
            host = host or DEFAULT_HOST
        elif ":" in text:
            host = text  # a bare IPv6 address
        else:
            host = text
    if not path or path == "/":
        path = "/" + str(uuid.uuid4())
    if any(ch in path for ch in " ?#\\"):
        raise InspectValueError(f"--inspect: the path may not hold spaces, '?', '#' or '\\': {value!r}")
    return InspectAddress(host, port, path, mode)


def _port(text: str, value: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise InspectValueError(f"--inspect: the port must be a number from 0 to 65535, got {value!r}")
    return int(text)
