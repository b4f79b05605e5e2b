"""A third-party compressor, installed as a real distribution (tests/fixtures/rt-lowmem-deflate) in a fresh
venv with rt-kernel and rt-http: found through its entry point and selected by its name in
``per_message_deflate``, for both directions of a real connection."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from rt.testing import clean_environ

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
PLUGIN = HERE / "fixtures" / "rt-lowmem-deflate"

SCRIPT = textwrap.dedent(
    """
    import json, anyio, rt, rt_lowmem_deflate

    async def main():
        def fetch(req, server):
            return None if server.upgrade(req) else rt.Response("no", status=400)

        handler = rt.WebSocketHandler(
            message=lambda ws, msg: ws.send(msg, True),
            per_message_deflate={"compress": "lowmem", "decompress": "lowmem"},
        )
        async with rt.serve(fetch=fetch, websocket=handler, port=0, hostname="127.0.0.1") as server:
            async with rt.WebSocket(f"ws://127.0.0.1:{server.port}/") as ws:
                await ws.send("lowmem " * 2000)
                echoed = await ws.receive()
                print(json.dumps({"echoed": echoed == "lowmem " * 2000, "extensions": ws.extensions,
                                  "calls": rt_lowmem_deflate.CALLS}))

    anyio.run(main)
    """
)


def _uv() -> list[str]:
    found = shutil.which("uv")
    return [found] if found else [sys.executable, "-m", "uv"]


def test_a_compressor_plugin_is_selected_by_name(tmp_path: Path) -> None:
    env = clean_environ({"VIRTUAL_ENV": str(tmp_path / "venv")})
    env.pop("UV_PROJECT_ENVIRONMENT", None)
    subprocess.run(
        [*_uv(), "venv", "--quiet", "--python", sys.executable, str(tmp_path / "venv")], check=True, env=env
    )
    python = tmp_path / "venv" / "bin" / "python"
    packages = [str(REPO / "kernel"), str(REPO / "plugins" / "http"), str(PLUGIN)]
    subprocess.run(
        [*_uv(), "pip", "install", "--quiet", "--python", str(python), *packages],
        check=True,
        env=env,
        cwd=tmp_path,
    )
    plugins = subprocess.run(
        [str(tmp_path / "venv" / "bin" / "rt"), "plugins", "--json"],
        capture_output=True,
        text=True,
        env=clean_environ(),
        check=True,
    )
    listed = {p["name"]: p for p in json.loads(plugins.stdout)}
    assert listed["lowmem"]["distribution"] == "rt-lowmem-deflate"
    done = subprocess.run(
        [str(python), "-c", SCRIPT],
        capture_output=True,
        text=True,
        env=clean_environ(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["echoed"] is True
    assert report["extensions"].startswith("permessage-deflate")
    # the server compressed its echo and inflated the client's message with the plugin's compressor
    assert report["calls"]["compress"] >= 1 and report["calls"]["decompress"] >= 1, report
