"""The `file` backend: encrypted, atomic, safe under two writing processes, clear on a wrong key."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import rt

pytestmark = pytest.mark.anyio

PASSPHRASE = "correct horse battery staple"


@pytest.fixture
def file_kernel(rt_make_kernel, tmp_path):
    def make(**environ: str):
        env = {"RT_SECRETS_BACKEND": "file", "RT_FILESECRETS_PATH": str(tmp_path / "secrets.bin"), **environ}
        return rt_make_kernel(environ=env)

    return make


async def test_round_trip_replace_delete_and_empty_value(file_kernel, tmp_path) -> None:
    with rt.use_kernel(file_kernel(RT_SECRETS_PASSPHRASE=PASSPHRASE)):
        assert await rt.secrets.get("svc", "alice") is None
        await rt.secrets.set("svc", "alice", "one")
        await rt.secrets.set(service="svc", name="alice", value="two\n🔑 \x00 秘密")
        await rt.secrets.set("svc", "bob", "bobs")
        assert await rt.secrets.get("svc", "alice") == "two\n🔑 \x00 秘密"
        assert await rt.secrets.delete("svc", "alice") is True
        assert await rt.secrets.delete("svc", "alice") is False
        await rt.secrets.set("svc", "bob", "")
        assert await rt.secrets.get("svc", "bob") is None
    # a new kernel (a new process, in effect) reads what was written
    with rt.use_kernel(file_kernel(RT_SECRETS_PASSPHRASE=PASSPHRASE)):
        await rt.secrets.set("svc", "carol", "persisted")
    with rt.use_kernel(file_kernel(RT_SECRETS_PASSPHRASE=PASSPHRASE)):
        assert await rt.secrets.get("svc", "carol") == "persisted"


async def test_file_is_encrypted_private_and_written_atomically(file_kernel, tmp_path) -> None:
    with rt.use_kernel(file_kernel(RT_SECRETS_PASSPHRASE=PASSPHRASE)):
        await rt.secrets.set("svc", "alice", "plaintext-canary")
    blob = (tmp_path / "secrets.bin").read_bytes()
    assert b"plaintext-canary" not in blob and b"alice" not in blob and b"svc" not in blob
    assert blob.startswith(b"RTSECv2\n\x01") and blob[9:12] == bytes([17, 8, 1])  # scrypt N=2**17, r=8, p=1
    assert stat.S_IMODE((tmp_path / "secrets.bin").stat().st_mode) == 0o600
    assert not list(tmp_path.glob(".secrets-*.tmp"))  # the temporary file was renamed into place


async def test_wrong_passphrase_is_a_clear_error(file_kernel) -> None:
    with rt.use_kernel(file_kernel(RT_SECRETS_PASSPHRASE=PASSPHRASE)):
        await rt.secrets.set("svc", "alice", "tok")
    with rt.use_kernel(file_kernel(RT_SECRETS_PASSPHRASE="wrong")), pytest.raises(rt.SecretsError) as info:
        await rt.secrets.get("svc", "alice")
        # a write with the wrong key must not replace the file either
        with pytest.raises(rt.SecretsError):
            await rt.secrets.set("svc", "mallory", "x")
    assert info.value.code == "ERR_SECRETS_AUTH_FAILED"
    assert "wrong passphrase" in str(info.value) and "RT_SECRETS_PASSPHRASE" in str(info.value)
    assert "wrong" not in str(info.value).split("wrong passphrase", 1)[1]  # the passphrase is not echoed
    with rt.use_kernel(file_kernel(RT_SECRETS_PASSPHRASE=PASSPHRASE)):
        assert await rt.secrets.get("svc", "alice") == "tok"
        assert await rt.secrets.get("svc", "mallory") is None


async def test_modified_file_is_detected(file_kernel, tmp_path) -> None:
    with rt.use_kernel(file_kernel(RT_SECRETS_PASSPHRASE=PASSPHRASE)):
        await rt.secrets.set("svc", "alice", "tok")
    path = tmp_path / "secrets.bin"
    blob = bytearray(path.read_bytes())
    blob[-1] ^= 1
    path.write_bytes(bytes(blob))
    with rt.use_kernel(file_kernel(RT_SECRETS_PASSPHRASE=PASSPHRASE)), pytest.raises(rt.SecretsError) as info:
        await rt.secrets.get("svc", "alice")
    assert info.value.code == "ERR_SECRETS_AUTH_FAILED"


async def test_key_file_mode(file_kernel, tmp_path) -> None:
    key = tmp_path / "key"
    key.write_bytes(os.urandom(32))
    key.chmod(0o644)
    with rt.use_kernel(file_kernel(RT_FILESECRETS_KEY_FILE=str(key))), pytest.raises(rt.SecretsError) as info:
        await rt.secrets.set("svc", "alice", "tok")
        assert info.value.code == "ERR_SECRETS_ACCESS_DENIED"
        assert "chmod 600" in str(info.value) and "0644" in str(info.value)
    key.chmod(0o600)
    with rt.use_kernel(file_kernel(RT_FILESECRETS_KEY_FILE=str(key))):
        await rt.secrets.set("svc", "alice", "tok")
        assert await rt.secrets.get("svc", "alice") == "tok"
    with rt.use_kernel(file_kernel(RT_SECRETS_PASSPHRASE=PASSPHRASE)):  # a passphrase cannot open it
        with pytest.raises(rt.SecretsError) as info:
            await rt.secrets.get("svc", "alice")
        assert info.value.code == "ERR_SECRETS_AUTH_FAILED" and "key file" in str(info.value)


async def test_the_first_set_creates_the_key_file_private_from_the_start(
    file_kernel, tmp_path, monkeypatch
) -> None:
    """os.open(O_CREAT | O_EXCL, 0o600): even under umask 000 the key is never readable by others, not even
    between creating the file and writing the key; the missing folder is created 0700."""
    key = tmp_path / "config" / "rt" / "secrets.key"
    modes_while_writing: list[int] = []
    real_write = os.write

    def write(fd: int, data: bytes) -> int:
        modes_while_writing.append(stat.S_IMODE(os.fstat(fd).st_mode))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)
    monkeypatch.setattr(os, "chmod", lambda *a, **k: pytest.fail("the mode must be right at creation"))
    old_umask = os.umask(0)
    try:
        with rt.use_kernel(file_kernel(RT_FILESECRETS_KEY_FILE=str(key))):
            await rt.secrets.set("svc", "alice", "tok")
    finally:
        os.umask(old_umask)
    monkeypatch.undo()
    assert modes_while_writing == [0o600]
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_bytes()) == 32
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    with rt.use_kernel(file_kernel(RT_FILESECRETS_KEY_FILE=str(key))):
        assert await rt.secrets.get("svc", "alice") == "tok"


async def test_a_missing_key_file_is_not_made_up_when_secrets_exist(file_kernel, tmp_path) -> None:
    key = tmp_path / "key"
    with rt.use_kernel(file_kernel(RT_FILESECRETS_KEY_FILE=str(key))):
        await rt.secrets.set("svc", "alice", "tok")
    key.unlink()
    with (
        rt.use_kernel(file_kernel(RT_FILESECRETS_KEY_FILE=str(key))),
        pytest.raises(rt.SecretsError, match="Cannot read the key file"),
    ):
        await rt.secrets.set("svc", "bob", "tok")
    assert not key.exists()


async def test_a_passphrase_and_a_key_file_together_are_refused(file_kernel, tmp_path) -> None:
    key = tmp_path / "key"
    key.write_bytes(os.urandom(32))
    key.chmod(0o600)
    with (
        rt.use_kernel(file_kernel(RT_SECRETS_PASSPHRASE=PASSPHRASE, RT_FILESECRETS_KEY_FILE=str(key))),
        pytest.raises(rt.SecretsError, match="two keys: RT_SECRETS_PASSPHRASE and the key file") as info,
    ):
        await rt.secrets.get("svc", "alice")
    assert info.value.code == "ERR_SECRETS_UNAVAILABLE" and "Set only one" in str(info.value)
    assert PASSPHRASE not in str(info.value)


async def test_a_version_1_file_is_read_and_upgraded_to_the_current_scrypt_cost(
    file_kernel, tmp_path
) -> None:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

    salt, nonce = os.urandom(16), os.urandom(12)
    head = b"RTSECv1\n\x01" + salt + nonce  # written by rt-filesecrets before this change: n=2**15
    key = Scrypt(salt=salt, length=32, n=2**15, r=8, p=1).derive(PASSPHRASE.encode())
    path = tmp_path / "secrets.bin"
    path.write_bytes(head + AESGCM(key).encrypt(nonce, b'{"svc":{"alice":"old"}}', head))
    with rt.use_kernel(file_kernel(RT_SECRETS_PASSPHRASE=PASSPHRASE)):
        assert await rt.secrets.get("svc", "alice") == "old"
        await rt.secrets.set("svc", "bob", "new")
    assert path.read_bytes()[:12] == b"RTSECv2\n\x01" + bytes([17, 8, 1])
    with rt.use_kernel(file_kernel(RT_SECRETS_PASSPHRASE=PASSPHRASE)):
        assert (await rt.secrets.get("svc", "alice"), await rt.secrets.get("svc", "bob")) == ("old", "new")
    blob = bytearray(path.read_bytes())
    blob[9] = 15  # an attacker lowering the cost in the header: authenticated, so it fails like a wrong key
    path.write_bytes(bytes(blob))
    with rt.use_kernel(file_kernel(RT_SECRETS_PASSPHRASE=PASSPHRASE)), pytest.raises(rt.SecretsError) as info:
        await rt.secrets.get("svc", "alice")
    assert info.value.code == "ERR_SECRETS_AUTH_FAILED"


async def test_short_key_file_is_refused(file_kernel, tmp_path) -> None:
    key = tmp_path / "key"
    key.write_bytes(b"short")
    key.chmod(0o600)
    with (
        rt.use_kernel(file_kernel(RT_FILESECRETS_KEY_FILE=str(key))),
        pytest.raises(rt.SecretsError, match="at least 32 random bytes"),
    ):
        await rt.secrets.set("svc", "alice", "tok")


async def test_no_key_says_what_to_set(file_kernel) -> None:
    with rt.use_kernel(file_kernel()), pytest.raises(rt.SecretsError) as info:
        await rt.secrets.get("svc", "alice")
    assert info.value.code == "ERR_SECRETS_UNAVAILABLE"
    assert "RT_SECRETS_PASSPHRASE" in str(info.value) and "key_file" in str(info.value)


async def test_passphrase_in_a_config_file_is_refused(rt_make_kernel, tmp_path) -> None:
    kernel = rt_make_kernel(
        f'[secrets]\nbackend = "file"\n[filesecrets]\npath = "{tmp_path}/s.bin"\npassphrase = "in-the-file"\n'
    )
    with rt.use_kernel(kernel), pytest.raises(rt.SecretsError) as info:
        await rt.secrets.get("svc", "alice")
    assert "RT_SECRETS_PASSPHRASE" in str(info.value) and "in-the-file" not in str(info.value)


def test_default_path_is_under_the_user_data_dir(monkeypatch, tmp_path) -> None:
    from rt_filesecrets.plugin import default_path

    if sys.platform.startswith("linux"):
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
        assert default_path() == str(tmp_path / "data" / "rt" / "secrets.bin")
    else:
        assert default_path().endswith("secrets.bin")


def test_value_limit_is_declared(rt_make_kernel) -> None:
    from rt_secrets.api import current_backend

    kernel = rt_make_kernel(environ={"RT_SECRETS_BACKEND": "file", "RT_SECRETS_PASSPHRASE": "x"})
    assert current_backend(kernel).max_value_bytes == 64 * 1024


WRITER = textwrap.dedent("""
    import sys, anyio, rt
    from rt.config import Config
    from rt.kernel import Kernel, use_kernel

    prefix, count = sys.argv[1], int(sys.argv[2])
    kernel = Kernel(Config.load())

    async def main():
        for i in range(count):
            await rt.secrets.set("shared", f"{prefix}-{i}", f"value-{prefix}-{i}")
        for i in range(0, count, 3):
            assert await rt.secrets.delete("shared", f"{prefix}-{i}")

    with use_kernel(kernel):
        anyio.run(main)
""")


def test_two_processes_writing_at_once_lose_nothing(tmp_path) -> None:
    count = 40
    environ = {k: v for k, v in os.environ.items() if not k.startswith("RT_")}
    environ.update(
        RT_SECRETS_BACKEND="file",
        RT_FILESECRETS_PATH=str(tmp_path / "secrets.bin"),
        RT_SECRETS_PASSPHRASE=PASSPHRASE,
    )
    script = tmp_path / "writer.py"
    script.write_text(WRITER, encoding="utf-8")
    writers = [
        subprocess.Popen(
            [sys.executable, str(script), prefix, str(count)],
            env=environ,
            cwd=tmp_path,
            stderr=subprocess.PIPE,
        )
        for prefix in ("a", "b")
    ]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err.decode()

    from rt_filesecrets.backend import FileSecretsBackend

    backend = FileSecretsBackend(tmp_path / "secrets.bin", passphrase=PASSPHRASE)
    stored = backend._read()["shared"]
    expected = {f"{p}-{i}": f"value-{p}-{i}" for p in ("a", "b") for i in range(count) if i % 3}
    assert stored == expected
    assert not list(Path(tmp_path).glob(".secrets-*.tmp"))


def test_repr_shows_no_key_material(tmp_path) -> None:
    from rt_filesecrets.backend import FileSecretsBackend

    backend = FileSecretsBackend(tmp_path / "s.bin", passphrase="hunter2-passphrase")
    assert "hunter2" not in repr(backend) and "hunter2" not in str(vars(backend).get("_key_source"))


def test_passphrase_is_redacted_from_configuration_dumps(rt_make_kernel):
    kernel = rt_make_kernel(environ={"RT_SECRETS_PASSPHRASE": "correct horse battery"})
    assert kernel.config["filesecrets.passphrase"] == "correct horse battery"
    assert kernel.config.as_dict()["filesecrets.passphrase"] == "<redacted>"


async def test_unusable_directory_is_a_secrets_error(rt_make_kernel, tmp_path) -> None:
    not_a_directory = tmp_path / "plain-file"
    not_a_directory.write_text("")
    env = {
        "RT_SECRETS_BACKEND": "file",
        "RT_FILESECRETS_PATH": str(not_a_directory / "secrets.bin"),
        "RT_SECRETS_PASSPHRASE": PASSPHRASE,
    }
    # not a bare OSError from deep inside
    with rt.use_kernel(rt_make_kernel(environ=env)), pytest.raises(rt.SecretsError) as info:
        await rt.secrets.set("svc", "alice", "canary-value-123")
    assert info.value.code == "ERR_SECRETS_PLATFORM_ERROR"
    assert "Cannot write" in str(info.value) and "canary-value-123" not in str(info.value)
