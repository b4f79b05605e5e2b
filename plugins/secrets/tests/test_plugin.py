"""The plugin's shape: light to import, names on rt., the command, the config option."""

from __future__ import annotations

import subprocess
import sys

import rt


def test_importing_the_plugin_module_stays_light() -> None:
    """The kernel imports plugin.py for every `rt.` name; keyring and anyio load only when used."""
    code = (
        "import sys, rt_secrets.plugin\n"
        "heavy = [m for m in ('keyring', 'anyio', 'secretstorage', 'jeepney') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == ""


def test_names_on_rt(rt_kernel) -> None:
    assert {"secrets", "SecretsError"} <= set(rt_kernel.names("rt"))
    from rt_secrets.errors import SecretsError

    assert rt.SecretsError is SecretsError
    assert issubclass(rt.SecretsError, rt.RtError)
    error = rt.SecretsError("store unavailable", "ERR_SECRETS_UNAVAILABLE")
    assert error.code == "ERR_SECRETS_UNAVAILABLE"
    assert repr(error) == "SecretsError('store unavailable', code='ERR_SECRETS_UNAVAILABLE')"
    assert repr(rt.secrets) == "<rt.secrets>"


def test_from_rt_import_secrets(rt_kernel) -> None:
    from rt import secrets

    assert secrets is rt.secrets


def test_command_and_option_are_registered(rt_kernel) -> None:
    assert rt_kernel.host.commands()["secrets"].plugin == "secrets"
    options = rt_kernel.host.config_options()
    assert options["secrets.backend"].value.default == "keyring"
    assert options["secrets.backend"].value.env_name == "RT_SECRETS_BACKEND"


def test_memory_backend_repr_hides_values() -> None:
    from rt_secrets.backends.memory import MemoryBackend

    backend = MemoryBackend()
    backend.set("svc", "alice", "repr-canary")
    assert "repr-canary" not in repr(backend) and "alice" not in repr(backend)


def test_rt_help_lists_the_command() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "rt", "secrets", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0
    assert "--service" in result.stdout and "--name" in result.stdout
    assert "--value" not in result.stdout
