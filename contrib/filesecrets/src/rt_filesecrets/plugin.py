"""Hook implementations of rt-filesecrets: the entry point `filesecrets` in group `rt` names this module.

Keep imports here light: the kernel imports this module when the first `rt.` name is used; `cryptography`
and `filelock` are imported only when the `file` backend is chosen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rt.hookspecs import hookimpl
from rt.interfaces import ConfigOption, SecretBackendError

if TYPE_CHECKING:
    from rt.config import Config
    from rt.interfaces import SecretBackend


def default_path() -> str:
    """``~/.local/share/rt/secrets.bin`` on Linux; the platform's user data directory elsewhere."""
    import platformdirs

    return str(platformdirs.user_data_path("rt", appauthor=False) / "secrets.bin")


@hookimpl
def rt_register_config_options(register: Callable[[ConfigOption], None]) -> None:
    register(
        ConfigOption(
            "filesecrets",
            "path",
            str,
            "",
            help="the encrypted secrets file (default: the user data dir, rt/secrets.bin)",
        )
    )
    register(
        ConfigOption(
            "filesecrets",
            "key_file",
            str,
            "",
            help="a file (mode 0600) of at least 32 random bytes used as the key",
        )
    )
    register(
        ConfigOption(
            "filesecrets",
            "passphrase",
            str,
            "",
            env="RT_SECRETS_PASSPHRASE",
            secret=True,
            help="the passphrase, from the environment only (never a file)",
        )
    )


def _file_backend(config: Config) -> SecretBackend:
    from pathlib import Path

    from rt_filesecrets.backend import FileSecretsBackend

    source = config.source("filesecrets.passphrase")
    if config.get("filesecrets.passphrase") and source != "RT_SECRETS_PASSPHRASE":
        raise SecretBackendError(
            f"The passphrase must come from the environment variable RT_SECRETS_PASSPHRASE, not from "
            f"{source}: a passphrase in a config file defeats the encryption.",
            "ERR_SECRETS_ACCESS_DENIED",
        )
    path = Path(config.get("filesecrets.path") or default_path()).expanduser()
    key_file = config.get("filesecrets.key_file")
    return FileSecretsBackend(
        path,
        passphrase=config.get("filesecrets.passphrase") or None,
        key_file=Path(key_file).expanduser() if key_file else None,
    )


@hookimpl
def rt_register_secret_backends(register: Callable[[str, Callable[[Config], SecretBackend]], None]) -> None:
    register("file", _file_backend)
