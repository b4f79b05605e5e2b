"""rt.secrets on the real Linux Secret Service against the reference runtime, same daemon, same run.

    uv run python bench/secret_store.py [--chains 200] [--rounds 3]

Each contender runs ``--chains`` concurrent chains of set, get, set, get, delete, get (six calls, the shape of
the test suite's concurrency test and of REFERENCE.md's "concurrent chains"), each on its own name, and checks
every answer (nothing lost). rt runs them as anyio tasks on asyncio; the reference runtime (bin/bun from
tools/reference-runtime) as promises under ``Promise.all``. Both talk to one private dbus-daemon and
gnome-keyring-daemon started here (HOME and XDG_* in a temporary directory; nothing touches a user keyring).
The contenders alternate within each round (and who goes first alternates too), so background load hits both
alike; the ratio per round is reference time / rt time (above 1: rt is faster), and the median of the rounds
is printed. It also prints the CPU time of each client process (start-up included) and of
gnome-keyring-daemon during each contender's run: those do not depend on the machine's load, so they compare
the work each client does, and makes the daemon do, even when the wall times are noisy.

gnome-keyring rewrites its keyring file on every change, so this measures the daemon as much as the clients;
a client is fast when it keeps several requests in flight and spends few round trips per call.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(command: list[str], env: dict[str, str], daemon: int) -> tuple[float, float, float]:
    """(wall seconds of the chains, CPU seconds of the client process, CPU seconds of gnome-keyring-daemon).

    The CPU times do not depend on how busy the machine is, so they compare the work each client does and
    makes the daemon do even when the wall times are noisy."""
    daemon_before = cpu_seconds(daemon)
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(command, env=env, capture_output=True, timeout=900, check=False)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        sys.exit(f"{command[0]} failed:\n{result.stderr.decode(errors='replace')}")
    answer = json.loads(result.stdout.decode().strip().splitlines()[-1])
    if not answer["ok"]:
        sys.exit(f"{command[0]}: a chain lost or mixed up a value")
    client = (children.ru_utime - children_before.ru_utime) + (children.ru_stime - children_before.ru_stime)
    return float(answer["seconds"]), client, cpu_seconds(daemon) - daemon_before


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
            rt_name, ref_name = "rt.secrets (keyring backend)", "reference runtime"
            runs: dict[str, list[tuple[float, float, float]]] = {rt_name: [], ref_name: []}
            for round_number in range(args.rounds):
                service = f"bench-{uuid.uuid4().hex[:8]}"
                commands = {
                    rt_name: [sys.executable, "-c", RT_CHAINS, str(args.chains), service + "-rt"],
                    ref_name: [str(BUN), str(script), str(args.chains), service],
                }
                order = [rt_name, ref_name] if round_number % 2 == 0 else [ref_name, rt_name]
                for name in order:  # alternating who goes first
                    runs[name].append(timed(commands[name], env, processes[0].pid))
        finally:
            for process in processes:
                process.terminate()
                process.wait(10)
    ratios = [ref[0] / ours[0] for ours, ref in zip(runs[rt_name], runs[ref_name], strict=True)]
    load = os.getloadavg()[0]
    print(f"{args.chains} concurrent set/get/set/get/delete/get chains on gnome-keyring; {args.rounds} rounds; "
          f"{os.cpu_count()} cores, load average {load:.1f} at the end")  # fmt: skip
    print(f"  {'':<30} {'wall: best':>11} {'median':>9}   CPU (median): client  gnome-keyring-daemon")
    for name, measured in runs.items():
        walls = [m[0] for m in measured]
        print(f"  {name:<30} {min(walls):9.2f} s {statistics.median(walls):7.2f} s   "
              f"{statistics.median(m[1] for m in measured):14.2f} s {statistics.median(m[2] for m in measured):10.2f} s")  # fmt: skip
    print(f"  reference time / rt time: median {statistics.median(ratios):.2f}x "
          f"({min(ratios):.2f}-{max(ratios):.2f}); above 1 means rt is faster, every answer checked")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
