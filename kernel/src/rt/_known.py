"""First-party names, so that a missing plugin gives an error that says which distribution to install.

This table is the only place the kernel knows about particular plugins; everything else it learns from the
hooks. Third-party names are not listed: without their plugin they are simply unknown attributes.
"""

from __future__ import annotations

NAME_TO_DISTRIBUTION: dict[str, dict[str, str]] = {
    "rt": {
        "CSRF": "rt-csrf",
        "secrets": "rt-secrets",
        "SecretsError": "rt-secrets",
        "serve": "rt-http",
        "fetch": "rt-http",
        "FetchError": "rt-http",
        "WebSocket": "rt-http",
        "WebSocketError": "rt-http",
        "WebSocketHandler": "rt-http",
        "Request": "rt-http",
        "Response": "rt-http",
        "Headers": "rt-http",
        "Server": "rt-http",
        "ServerWebSocket": "rt-http",
        "inspect": "rt-debug",
        "Error": "rt-debug",
        "CallSite": "rt-debug",
    },
    "rt.test": {
        name: "rt-testrunner"
        for name in (
            "test",
            "it",
            "describe",
            "expect",
            "mock",
            "spy_on",
            "before_all",
            "before_each",
            "after_each",
            "after_all",
        )
    },
}

SECTION_TO_DISTRIBUTION: dict[str, str] = {
    "serve": "rt-http",
    "secrets": "rt-secrets",
    "test": "rt-testrunner",
    "debug": "rt-debug",
    "redis": "rt-redis",
    "filesecrets": "rt-filesecrets",
}

COMMAND_TO_DISTRIBUTION: dict[str, str] = {
    "test": "rt-testrunner",
    "secrets": "rt-secrets",
    "run": "rt-debug",
}
