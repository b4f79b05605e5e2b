"""Backends come from rt_register_secret_backends and are chosen by config or RT_SECRETS_BACKEND."""

from __future__ import annotations

import pytest

import rt
from rt.hookspecs import hookimpl
from rt.interfaces import SecretBackend, SecretBackendError

pytestmark = pytest.mark.anyio


def test_both_backends_are_registered_by_this_plugin(rt_kernel) -> None:
    backends = rt_kernel.host.secret_backends()
    assert backends["keyring"].plugin == "secrets"
    assert backends["memory"].plugin == "secrets"
    for name in ("keyring", "memory"):
        backend = backends[name].value(rt_kernel.config)
        assert isinstance(backend, SecretBackend)
        assert backend.name == name


def test_config_option_default_is_keyring(rt_kernel) -> None:
    assert rt_kernel.config.get("secrets.backend") == "keyring"
    from rt_secrets.api import current_backend

    assert current_backend(rt_kernel).name == "keyring"


def test_config_file_selects_backend(rt_make_kernel) -> None:
    from rt_secrets.api import current_backend

    kernel = rt_make_kernel('[secrets]\nbackend = "memory"\n')
    assert current_backend(kernel).name == "memory"


def test_env_var_wins_over_file(rt_make_kernel) -> None:
    from rt_secrets.api import current_backend

    kernel = rt_make_kernel('[secrets]\nbackend = "keyring"\n', environ={"RT_SECRETS_BACKEND": "memory"})
    assert current_backend(kernel).name == "memory"


async def test_unknown_backend_lists_the_known_ones(rt_make_kernel) -> None:
    kernel = rt_make_kernel(environ={"RT_SECRETS_BACKEND": "vault"}, load_entry_points=True)
    with rt.use_kernel(kernel), pytest.raises(rt.SecretsError) as info:
        await rt.secrets.get("svc", "n")
    message = str(info.value)
    assert info.value.code == "ERR_SECRETS_UNKNOWN_BACKEND"
    assert "'vault'" in message and "RT_SECRETS_BACKEND" in message
    assert "keyring" in message and "memory" in message


async def test_third_party_backend_errors_become_secrets_error(rt_kernel, rt_register) -> None:
    class Broken:
        name = "broken"
        max_value_bytes = None

        def get(self, service, name):
            raise SecretBackendError(
                "the vault is sealed: run `vault operator unseal`", "ERR_SECRETS_UNAVAILABLE"
            )

        set = delete = get

    class Plugin:
        @hookimpl
        def rt_register_secret_backends(self, register):
            register("broken", lambda config: Broken())

    rt_register(Plugin(), "broken-plugin")
    rt_kernel.with_overrides({"secrets.backend": "broken"})
    with pytest.raises(rt.SecretsError) as info:
        await rt.secrets.get("svc", "n")
    assert info.value.code == "ERR_SECRETS_UNAVAILABLE"
    assert "vault operator unseal" in str(info.value)
    assert info.value.__cause__ is None  # the backend error is replaced, not chained


async def test_value_over_backend_limit_is_refused_before_the_backend(rt_kernel, rt_register) -> None:
    calls: list[int] = []

    class Small:
        name = "small"
        max_value_bytes = 8

        def get(self, service, name):
            return None

        def set(self, service, name, value):
            calls.append(len(value))

        def delete(self, service, name):
            return False

    class Plugin:
        @hookimpl
        def rt_register_secret_backends(self, register):
            register("small", lambda config: Small())

    rt_register(Plugin(), "small-plugin")
    rt_kernel.with_overrides({"secrets.backend": "small"})
    await rt.secrets.set("svc", "n", "12345678")
    with pytest.raises(rt.SecretsError) as info:
        await rt.secrets.set("svc", "n", "ééééé")  # 5 characters, 10 UTF-8 bytes
    assert isinstance(info.value, ValueError)
    assert info.value.code == "ERR_SECRETS_VALUE_TOO_LONG"
    assert "10 bytes" in str(info.value) and "at most 8" in str(info.value)
    assert "é" not in str(info.value)
    assert calls == [8]


def test_platform_limits_are_documented_values() -> None:
    from rt_secrets import limits
    from rt_secrets.backends.keyring_backend import KeyringBackend

    # the Secret Service takes large values (the reference stores 1 MiB there too); the Keychain 64 KiB
    assert KeyringBackend(platform="linux").max_value_bytes == 1024 * 1024
    assert KeyringBackend(platform="darwin").max_value_bytes == 64 * 1024
    # Windows: the exact check is the 2560-byte UTF-16 blob (below); no fitting value has more UTF-8 bytes
    assert KeyringBackend(platform="win32").max_value_bytes == 3 * 1280
    assert limits.utf16_units("a🔑") == 3 and limits.windows_blob_bytes("a🔑") == 6


@pytest.mark.parametrize(
    ("value", "fits"),
    [("x" * 1280, True), ("x" * 1281, False), ("秘" * 1280, True), ("秘" * 1281, False), ("🔑" * 640, True),
     ("🔑" * 641, False)],
)  # fmt: skip
def test_windows_blob_limit_is_checked_exactly_before_the_os(value: str, fits: bool) -> None:
    """Credential Manager keeps the value as UTF-16 in a blob of at most 2560 bytes: 1280 CJK characters (3840
    UTF-8 bytes) fit, which the earlier 2048-UTF-8-byte rule refused; the error names the limit."""
    from rt_secrets.backends.keyring_backend import KeyringBackend

    stored: list[int] = []

    class Impl:  # stands in for keyring's Windows backend
        def set_password(self, service: str, name: str, value: str) -> None:
            stored.append(len(value))

    backend = KeyringBackend(Impl(), platform="win32")  # type: ignore[arg-type]
    if fits:
        backend.set("svc", "n", value)
        assert stored == [len(value)]
        return
    with pytest.raises(SecretBackendError) as info:
        backend.set("svc", "n", value)
    assert info.value.code == "ERR_SECRETS_VALUE_TOO_LONG" and not stored
    assert "at most 2560 bytes" in str(info.value) and "Windows Credential Manager" in str(info.value)


async def test_backend_value_too_long_is_a_value_error_too(rt_kernel, rt_register) -> None:
    """A backend's own ERR_SECRETS_VALUE_TOO_LONG (Windows' UTF-16 check) reaches callers as the API's check does."""

    class Refusing:
        name = "refusing"
        max_value_bytes = None

        def set(self, service: str, name: str, value: str) -> None:
            raise SecretBackendError("The value is 9999 UTF-16 code units long", "ERR_SECRETS_VALUE_TOO_LONG")

    class Plugin:
        @hookimpl
        def rt_register_secret_backends(self, register):
            register("refusing", lambda config: Refusing())

    rt_register(Plugin(), "refusing-plugin")
    rt_kernel.with_overrides({"secrets.backend": "refusing"})
    with pytest.raises(rt.SecretsError) as info:
        await rt.secrets.set("svc", "n", "long")
    assert isinstance(info.value, ValueError) and info.value.code == "ERR_SECRETS_VALUE_TOO_LONG"
