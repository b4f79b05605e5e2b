"""The inspector's HTTP side, without sockets: which request gets what answer.

Checks come first, as in the reference runtime: a ``Host`` that is not the bound host, a loopback name or an IP
literal gets 400 (DNS rebinding: a page on evil.example resolving to 127.0.0.1 sends ``Host: evil.example``);
an ``Origin`` that is not local gets 403 (a web page may not drive the debugger). Then ``GET /json/version`` and
``/json/list`` (also ``/json``) answer JSON, the secret path upgrades to the WebSocket, and anything else is 404.
"""

from __future__ import annotations

import ipaddress
import json
from typing import Literal
from urllib.parse import urlsplit

import attrs

from rt_debug.inspector.address import InspectAddress, is_loopback

PROTOCOL_VERSION = "1.3"


@attrs.frozen
class Answer:
    kind: Literal["json", "upgrade", "status"]
    status: int = 200
    body: str = ""


def _host_name(host_header: str) -> str:
    """The name part of a ``Host`` value (``[::1]:6499`` -> ``::1``, ``a.b:80`` -> ``a.b``)."""
    value = host_header.strip()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    if value.count(":") == 1:
        return value.split(":", 1)[0]
    return value


def _is_ip_literal(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def host_allowed(host_header: str | None, bound_host: str) -> bool:
    """True for no Host (HTTP/1.0), the bound host, a loopback name or any IP literal."""
    if host_header is None:
        return True
    name = _host_name(host_header).lower().rstrip(".")
    return bool(name) and (name == bound_host.lower() or is_loopback(name) or _is_ip_literal(name))


def origin_allowed(origin: str | None) -> bool:
    """True for no Origin (a non-browser client), or a page served from a loopback host."""
    if origin is None:
        return True
    if origin == "null":  # a sandboxed frame or a file:// page: not a page of this machine's servers
        return False
    try:
        host = urlsplit(origin).hostname
    except ValueError:
        return False
    return host is not None and is_loopback(host)


def ws_url(address: InspectAddress, port: int) -> str:
    host = f"[{address.host}]" if ":" in address.host else address.host
    return f"ws://{host}:{port}{address.path}"


def targets(address: InspectAddress, port: int, title: str, script_url: str) -> list[dict[str, str]]:
    url = ws_url(address, port)
    return [
        {
            "description": "rt instance",
            "id": address.path.lstrip("/"),
            "title": title,
            "type": "node",
            "url": script_url,
            "webSocketDebuggerUrl": url,
            "devtoolsFrontendUrl": f"devtools://devtools/bundled/js_app.html?experiments=true&v8only=true&ws={url[5:]}",
        }
    ]


def version_info(rt_version: str, python_version: str) -> dict[str, str]:
    return {
        "Protocol-Version": PROTOCOL_VERSION,
        "Browser": "rt",
        "User-Agent": f"rt/{rt_version}",
        "rt-Version": rt_version,
        "Python-Version": python_version,
    }


def answer(
    method: str,
    path: str,
    headers: dict[str, str | None],
    *,
    address: InspectAddress,
    port: int,
    version: dict[str, str],
    title: str,
    script_url: str,
) -> Answer:
    """What to do with one request; ``headers`` holds ``host``, ``origin`` and ``upgrade`` (lower-case)."""
    if not host_allowed(headers.get("host"), address.host):
        return Answer("status", 400)
    if not origin_allowed(headers.get("origin")):
        return Answer("status", 403)
    if path == address.path:
        if (headers.get("upgrade") or "").lower() == "websocket" and method == "GET":
            return Answer("upgrade")
        return Answer("status", 426)
    if method != "GET":
        return Answer("status", 404)
    if path == "/json/version":
        return Answer("json", body=json.dumps(version))
    if path in ("/json", "/json/list"):
        return Answer("json", body=json.dumps(targets(address, port, title, script_url)))
    return Answer("status", 404)
