"""Hook implementations of rt-secrets: the entry point `secrets` in group `rt` names this module.

Keep imports here light: the kernel imports this module when the first `rt.` name is used. Everything
heavy (anyio, keyring) is imported inside the callables registered below.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rt.hookspecs import hookimpl
from rt.interfaces import Command, ConfigOption, NamespaceEntry

if TYPE_CHECKING:
    import argparse

    from rt.config import Config
    from rt.interfaces import SecretBackend
    from rt.kernel import Kernel


def _load_secrets() -> Any:
    from rt_secrets.api import secrets

    return secrets


def _load_secrets_error() -> Any:
    from rt_secrets.errors import SecretsError

    return SecretsError


@hookimpl
def rt_register_namespace(register: Callable[[NamespaceEntry], None]) -> None:
    register(NamespaceEntry("secrets", _load_secrets))
    register(NamespaceEntry("SecretsError", _load_secrets_error))


@hookimpl
def rt_register_config_options(register: Callable[[ConfigOption], None]) -> None:
    register(ConfigOption(
        "secrets", "backend", str, "keyring",
        help="where rt.secrets keeps credentials: keyring (OS store), memory (tests), file (rt-filesecrets)",
    ))
    register(ConfigOption(
        "secrets", "max_threads", int, 4,
        help="worker threads rt.secrets uses at once for OS calls (per event loop)",
    ))


def _keyring_backend(config: Config) -> SecretBackend:
    from rt_secrets.backends.keyring_backend import KeyringBackend

    return KeyringBackend()


def _memory_backend(config: Config) -> SecretBackend:
    from rt_secrets.backends.memory import MemoryBackend

    return MemoryBackend()


@hookimpl
def rt_register_secret_backends(register: Callable[[str, Callable[[Config], SecretBackend]], None]) -> None:
    register("keyring", _keyring_backend)
    register("memory", _memory_backend)


def _configure_command(parser: argparse.ArgumentParser) -> None:
    from rt_secrets.cli import configure

    configure(parser)


def _run_command(args: argparse.Namespace, kernel: Kernel) -> int:
    from rt_secrets.cli import run

    return run(args, kernel)


@hookimpl
def rt_register_commands(register: Callable[[Command], None]) -> None:
    register(Command(
        "secrets", "store, read and delete secrets in the OS credential store (set|get|delete -s S -n N)",
        _configure_command, _run_command,
    ))
