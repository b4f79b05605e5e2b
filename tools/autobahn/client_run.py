"""Run the Autobahn|Testsuite fuzzing server against ``rt.WebSocket`` and fail on any FAILED or NON-STRICT case.

    uv run python tools/autobahn/client_run.py [--backend asyncio uvloop trio] [--deflate off on]
                                               [--cases ci|all|1.*,6.4.*] [--report DIR]

``wstest -m fuzzingserver`` listens on a free loopback port; ``echo_client.py`` (rt's client, one process per
backend and compression setting) runs every case against it; the report (``index.json``) is judged as
``run.py`` judges the server's: a FAILED or NON-STRICT case, or an UNIMPLEMENTED one outside 12.*/13.* with
compression off, makes the exit status 1. ``--cases ci`` is what .ci/run runs: everything but the long 9.* and
the compression cases (12.*, 13.*), with compression off.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from run import find_wstest, report

HERE = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def cases_for(which: str) -> list[str]:
    if which == "all":
        return ["*"]
    if which == "ci":
        return ["1.*", "2.*", "3.*", "4.*", "5.*", "6.*", "7.*", "10.*"]
    return [c.strip() for c in which.split(",") if c.strip()]


def wait_listening(server: subprocess.Popen[bytes], port: int, seconds: float = 60) -> bool:
    """True once wstest listens on ``port``; False if it exited first (another process took the free port
    between our probe and its bind, as happens on a machine running other tests)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            return False
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                time.sleep(0.5)  # a listener that was not wstest's leaves wstest to fail its bind meanwhile
                return server.poll() is None
        time.sleep(0.2)
    raise SystemExit(f"wstest's fuzzing server did not listen on port {port} within {seconds:.0f} s")


def start_fuzzing_server(wstest: list[str], which: str, outdir: Path) -> tuple[subprocess.Popen[bytes], int]:
    for _attempt in range(5):
        port = free_port()
        spec = {
            "url": f"ws://127.0.0.1:{port}",
            "outdir": str(outdir),
            "cases": cases_for(which),
            "exclude-cases": [],
            "exclude-agent-cases": {},
        }
        spec_path = outdir / "fuzzingserver.json"
        spec_path.write_text(json.dumps(spec, indent=2))
        server = subprocess.Popen(
            [*wstest, "-m", "fuzzingserver", "-s", str(spec_path)],
            cwd=outdir,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if wait_listening(server, port):
            return server, port
        server.kill()
        server.wait()
    raise SystemExit("wstest's fuzzing server exited before listening, five times (is wstest working?)")


def run_all(
    wstest: list[str], runs: list[tuple[str, bool]], which: str, outdir: Path
) -> dict[str, dict[str, dict[str, str]]]:
    server, port = start_fuzzing_server(wstest, which, outdir)
    try:
        for backend, deflate in runs:
            agent = f"rt-client-{backend}-{'deflate' if deflate else 'plain'}"
            command = [
                sys.executable,
                str(HERE / "echo_client.py"),
                "--url",
                f"ws://127.0.0.1:{port}",
                "--agent",
                agent,
                "--backend",
                backend,
            ]
            if deflate:
                command.append("--deflate")
            started = time.monotonic()
            subprocess.run(
                command, check=True, timeout=3 * 3600
            )  # bounds a hang: a full run on a loaded machine takes over an hour
            print(f"{agent}: ran in {time.monotonic() - started:.0f} s", flush=True)
    finally:
        server.terminate()
        server.wait()
    index: dict[str, dict[str, dict[str, str]]] = json.loads((outdir / "index.json").read_text())
    return index


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend", nargs="+", default=["asyncio", "uvloop", "trio"], choices=["asyncio", "uvloop", "trio"]
    )
    parser.add_argument("--deflate", nargs="+", default=["off", "on"], choices=["off", "on"])
    parser.add_argument("--cases", default="ci", help="ci (default), all, or a comma list such as 1.*,6.4.*")
    parser.add_argument("--report", type=Path, help="keep the HTML/JSON report in this directory")
    args = parser.parse_args()
    wstest = find_wstest()
    if wstest is None:
        print("wstest (Autobahn|Testsuite) is not installed: see tools/autobahn/run.py", file=sys.stderr)
        return 2
    runs = [(backend, setting == "on") for backend in args.backend for setting in args.deflate]
    with tempfile.TemporaryDirectory(prefix="rt-autobahn-client-") as scratch:
        outdir = args.report or Path(scratch)
        outdir.mkdir(parents=True, exist_ok=True)
        reports = run_all(wstest, runs, args.cases, outdir)
    failed = False
    for agent, results in sorted(reports.items()):
        failed |= report(agent, results, deflate=agent.endswith("-deflate"))
    print("FAIL: some cases are FAILED or NON-STRICT" if failed else "OK: no FAILED or NON-STRICT case")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
