"""Secrets shared with the reference runtime, live: both talk to the same real gnome-keyring (conftest.py).

The reference runtime (tools/reference-runtime, `Bun.secrets`) stores items under the schema
`com.oven-sh.bun.Secret` with attributes service/account; `keyring` uses service/username. rt reads either,
and with `[secrets] schema = "reference"` writes the reference's, so each reads what the other stored.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import uuid
from pathlib import Path

import anyio
import pytest

import rt

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux Secret Service only"),
]

BUN = Path(__file__).resolve().parents[3] / "tools/reference-runtime/node_modules/@oven/bun-linux-x64/bin/bun"
VALUE = 'from the other runtime: 秘密 🔑\nline two "quoted"'

REFERENCE = """
const [action, service, name] = process.argv.slice(2);
if (action === "set") await Bun.secrets.set({ service, name, value: await Bun.stdin.text() });
if (action === "get") console.log(JSON.stringify(await Bun.secrets.get({ service, name })));
"""


async def reference(tmp_path: Path, *args: str, stdin: str = "") -> str:
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("the reference runtime in tools/reference-runtime is a Linux x86-64 build")
    if not BUN.is_file():
        pytest.fail(f"{BUN} is missing: run `npm ci --prefix tools/reference-runtime` (.ci/setup-extra does)",
                    pytrace=False)  # fmt: skip
    script = tmp_path / "secrets.mjs"
    script.write_text(REFERENCE, encoding="utf-8")
    done = await anyio.to_thread.run_sync(lambda: subprocess.run([str(BUN), str(script), *args], input=stdin.encode(), capture_output=True,
                          env=dict(os.environ), timeout=60, check=False))  # fmt: skip
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout.decode()


@pytest.fixture
def service(secret_service) -> str:
    return f"rt-interop-{uuid.uuid4().hex[:12]}"


async def test_rt_reads_and_deletes_what_the_reference_stored(service, rt_make_kernel, tmp_path) -> None:
    await reference(tmp_path, "set", service, "alice", stdin=VALUE)
    with rt.use_kernel(rt_make_kernel()):  # the default schema, "keyring": reads find both
        assert await rt.secrets.get(service, "alice") == VALUE
        assert await rt.secrets.delete(service, "alice") is True
        assert await rt.secrets.get(service, "alice") is None
    assert json.loads(await reference(tmp_path, "get", service, "alice")) is None


async def test_the_reference_reads_what_rt_stored_with_the_reference_schema(
    service, rt_make_kernel, tmp_path
) -> None:
    with rt.use_kernel(rt_make_kernel('[secrets]\nschema = "reference"\n')):
        await rt.secrets.set(service, "bob", VALUE)
        assert await rt.secrets.get(service, "bob") == VALUE
    assert json.loads(await reference(tmp_path, "get", service, "bob")) == VALUE
    lookup = await anyio.to_thread.run_sync(lambda: subprocess.run(
        ["secret-tool", "search", "--all", "service", service], capture_output=True, timeout=20, check=False
    ))  # fmt: skip
    shown = lookup.stdout + lookup.stderr  # secret-tool prints the attributes on stderr
    assert b"schema = com.oven-sh.bun.Secret" in shown and b"attribute.account = bob" in shown


async def test_the_keyring_schema_is_the_default_and_keyring_reads_it(
    service, rt_make_kernel, tmp_path
) -> None:
    import keyring

    with rt.use_kernel(rt_make_kernel()):
        await rt.secrets.set(service, "carol", VALUE)
    assert keyring.get_password(service, "carol") == VALUE
    assert (
        json.loads(await reference(tmp_path, "get", service, "carol")) is None
    )  # not the reference's schema


def test_an_unknown_schema_is_refused(rt_make_kernel) -> None:
    with pytest.raises(Exception, match="'keyring', 'reference'"):
        rt_make_kernel(environ={"RT_SECRETS_SCHEMA": "bun"})
