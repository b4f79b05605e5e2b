"""rt.secrets on the real Linux Secret Service against the reference runtime, same daemon, same run.

    uv run python bench/secret_store.py [--chains 200] [--rounds 3]

Each contender runs ``--chains`` concurrent chains of set, get, set, get, delete, get (six calls, the shape of
the test suite's concurrency test and of REFERENCE.md's "concurrent chains"), each on its own name, and checks
every answer (nothing lost). rt runs them as anyio tasks on asyncio; the reference runtime (bin/bun from
tools/reference-runtime) as promises under ``Promise.all``. Both talk to one private dbus-daemon and
gnome-keyring-daemon started here (HOME and XDG_* in a temporary directory; nothing touches a user keyring).
The contenders alternate within each round, so background load hits both alike; the ratio per round is
reference time / rt time (above 1: rt is faster), and the median of the rounds is printed.

gnome-keyring rewrites its keyring file on every change, so this measures the daemon as much as the clients;
a client is fast when it keeps several requests in flight and spends few round trips per call.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUN = ROOT / "tools/reference-runtime/node_modules/@oven/bun-linux-x64/bin/bun"

REFERENCE_CHAINS = """
const [n, service] = [Number(process.argv[2]), process.argv[3]];
async function chain(i) {
  const name = "user-" + i, seen = [];
  await Bun.secrets.set({ service, name, value: "v1-" + i });
  seen.push(await Bun.secrets.get({ service, name }));
  await Bun.secrets.set({ service, name, value: "v2-" + i });
  seen.push(await Bun.secrets.get({ service, name }));
  seen.push(await Bun.secrets.delete({ service, name }));
  seen.push(await Bun.secrets.get({ service, name }));
  return seen;
}
await Bun.secrets.get({ service, name: "warm-up" });
const start = performance.now();
const results = await Promise.all(Array.from({ length: n }, (_, i) => chain(i)));
const seconds = (performance.now() - start) / 1000;
const ok = results.every((s, i) => s[0] === "v1-" + i && s[1] === "v2-" + i && s[2] === true && s[3] === null);
console.log(JSON.stringify({ seconds, ok }));
"""

RT_CHAINS = """
import json, sys, time
import anyio
import rt

n, service = int(sys.argv[1]), sys.argv[2]

async def main():
    results = {}

    async def chain(i):
        name, seen = f"user-{i}", []
        await rt.secrets.set(service, name, f"v1-{i}")
        seen.append(await rt.secrets.get(service, name))
        await rt.secrets.set(service, name, f"v2-{i}")
        seen.append(await rt.secrets.get(service, name))
        seen.append(await rt.secrets.delete(service, name))
        seen.append(await rt.secrets.get(service, name))
        results[i] = seen

    await rt.secrets.get(service, "warm-up")
    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for i in range(n):
            tg.start_soon(chain, i)
    seconds = time.perf_counter() - start
    ok = results == {i: [f"v1-{i}", f"v2-{i}", True, None] for i in range(n)}
    print(json.dumps({"seconds": seconds, "ok": ok}))

anyio.run(main)
"""


def start_secret_service(root: Path) -> tuple[dict[str, str], list[subprocess.Popen[bytes]]]:
    """A private session bus and gnome-keyring-daemon, unlocked; the environment that reaches them."""
    for tool in ("dbus-daemon", "gnome-keyring-daemon"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is missing: install the Debian packages dbus and gnome-keyring")
    runtime = root / "run"
    runtime.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    for key, sub in (("HOME", "home"), ("XDG_DATA_HOME", "data"), ("XDG_CONFIG_HOME", "config"),
                     ("XDG_CACHE_HOME", "cache")):  # fmt: skip
        (root / sub).mkdir()
        env[key] = str(root / sub)
    env["XDG_RUNTIME_DIR"] = str(runtime)
    config = root / "bus.conf"
    config.write_text(
        "<!DOCTYPE busconfig PUBLIC '-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN'"
        " 'http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd'>"
        f"<busconfig><type>session</type><listen>unix:path={runtime / 'bus'}</listen><auth>EXTERNAL</auth>"
        "<policy context='default'><allow send_destination='*' eavesdrop='true'/><allow eavesdrop='true'/>"
        "<allow own='*'/></policy></busconfig>",
        encoding="utf-8",
    )
    bus = subprocess.Popen(["dbus-daemon", f"--config-file={config}", "--nofork", "--print-address=1"],
                           stdout=subprocess.PIPE, env=env)  # fmt: skip
    assert bus.stdout is not None
    env["DBUS_SESSION_BUS_ADDRESS"] = bus.stdout.readline().decode().strip()
    keyring = subprocess.Popen(
        ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    assert keyring.stdin is not None
    keyring.stdin.write(b"bench-keyring-password")
    keyring.stdin.close()
    deadline = time.monotonic() + 15
    while (
        subprocess.run(
            ["secret-tool", "search", "bench", "ready"], env=env, capture_output=True, check=False
        ).returncode
        > 1
    ):
        if time.monotonic() > deadline:  # secret-tool: 1 = nothing found, more = no service
            sys.exit("gnome-keyring-daemon did not start")
        time.sleep(0.1)
    return env, [keyring, bus]


def timed(command: list[str], env: dict[str, str]) -> float:
    result = subprocess.run(command, env=env, capture_output=True, timeout=900, check=False)
    if result.returncode != 0:
        sys.exit(f"{command[0]} failed:\n{result.stderr.decode(errors='replace')}")
    answer = json.loads(result.stdout.decode().strip().splitlines()[-1])
    if not answer["ok"]:
        sys.exit(f"{command[0]}: a chain lost or mixed up a value")
    return float(answer["seconds"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chains", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not BUN.is_file():
        sys.exit(f"{BUN} is missing: npm ci --prefix tools/reference-runtime")
    with tempfile.TemporaryDirectory(prefix="rt-bench-secrets-") as tmp:
        env, processes = start_secret_service(Path(tmp))
        try:
            script = Path(tmp) / "chains.mjs"
            script.write_text(REFERENCE_CHAINS, encoding="utf-8")
            times: dict[str, list[float]] = {"rt.secrets (keyring backend)": [], "reference runtime": []}
            for _ in range(args.rounds):
                service = f"bench-{uuid.uuid4().hex[:8]}"
                times["rt.secrets (keyring backend)"].append(
                    timed([sys.executable, "-c", RT_CHAINS, str(args.chains), service + "-rt"], env)
                )
                times["reference runtime"].append(
                    timed([str(BUN), str(script), str(args.chains), service], env)
                )
        finally:
            for process in processes:
                process.terminate()
                process.wait(10)
    ratios = [
        ref / ours for ours, ref in zip(times["rt.secrets (keyring backend)"], times["reference runtime"])
    ]
    load = os.getloadavg()[0]
    print(f"{args.chains} concurrent set/get/set/get/delete/get chains on gnome-keyring; {args.rounds} rounds; "
          f"{os.cpu_count()} cores, load average {load:.1f} at the end")  # fmt: skip
    for name, seconds in times.items():
        calls = 6 * args.chains
        print(f"  {name:<30} best {min(seconds):7.2f} s  median {statistics.median(seconds):7.2f} s  "
              f"({calls / min(seconds):6.0f} calls/s)")  # fmt: skip
    print(f"  reference time / rt time: median {statistics.median(ratios):.2f}x "
          f"({min(ratios):.2f}-{max(ratios):.2f}); above 1 means rt is faster, every answer checked")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
