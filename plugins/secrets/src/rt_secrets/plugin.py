"""Hook implementations of rt-secrets: the entry point `secrets` in group `rt` names this module.

Keep imports here light: the kernel imports this module when the first `rt.` name is used. Everything
heavy (anyio, keyring) is imported inside the callables registered below.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rt.hookspecs import hookimpl
from rt.interfaces import Command, ConfigOption, KernelView, NamespaceEntry

if TYPE_CHECKING:
    from rt.config import Config
    from rt.interfaces import SecretBackend


def _load_secrets(kernel: KernelView) -> Any:
    """``rt.secrets`` bound to the kernel resolving it: its configuration picks the backend."""
    from rt_secrets.api import Secrets

    return Secrets(kernel)


@hookimpl
def rt_register_namespace(register: Callable[[NamespaceEntry], None]) -> None:
    register(NamespaceEntry("secrets", _load_secrets))
    register(NamespaceEntry.lazy("SecretsError", "rt_secrets.errors:SecretsError"))


@hookimpl
def rt_register_config_options(register: Callable[[ConfigOption], None]) -> None:
    register(
        ConfigOption(
            "secrets",
            "backend",
            str,
            "keyring",
            help="where rt.secrets keeps credentials: keyring (OS store), memory (tests), file (rt-filesecrets)",
        )
    )
    register(
        ConfigOption(
            "secrets",
            "schema",
            str,
            "keyring",
            choices=("keyring", "reference"),
            help="the Secret Service item schema the keyring backend writes on Linux: keyring (the keyring "
            "package's) or reference (the reference runtime's); reads find items under either",
        )
    )
    register(
        ConfigOption(
            "secrets",
            "max_threads",
            int,
            8,
            help="worker threads rt.secrets uses at once for OS calls (per event loop)",
        )
    )


def _keyring_backend(config: Config) -> SecretBackend:
    from rt_secrets.backends.keyring_backend import KeyringBackend

    return KeyringBackend(schema=config.get("secrets.schema") or "keyring")


def _memory_backend(config: Config) -> SecretBackend:
    from rt_secrets.backends.memory import MemoryBackend

    return MemoryBackend()


@hookimpl
def rt_register_secret_backends(register: Callable[[str, Callable[[Config], SecretBackend]], None]) -> None:
    register("keyring", _keyring_backend)
    register("memory", _memory_backend)


@hookimpl
def rt_register_commands(register: Callable[[Command], None]) -> None:
    register(
        Command.lazy(
            "secrets",
            "store, read and delete secrets in the OS credential store (set|get|delete -s S -n N)",
            "rt_secrets.cli:configure",
            "rt_secrets.cli:run",
        )
    )
