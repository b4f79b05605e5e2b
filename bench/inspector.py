"""What the inspector costs a running program: rt run --inspect against plain python and an idle debugpy.

Run on demand (not part of the tests):  uv run python bench/inspector.py [--rounds 5]

The workload (written to a temporary folder) is call-heavy on purpose, the worst case for a tracing debugger:
a recursive function, a method called in a loop and a generator, in ``hot.py``; ``cold.py`` holds a function
that runs once. The program times its own workload with ``time.perf_counter`` and prints it, so interpreter
and inspector start-up are left out. Contenders, each in a fresh process, interleaved within every round:

- ``python``: plain ``python main.py``, the reference everything is divided by;
- ``rt run``: no inspector;
- ``--inspect, no client``: the inspector listening, nobody attached (the target is within 1.2x);
- ``client, no breakpoint``: a client attached and through the handshake, no breakpoint (the same target);
- ``breakpoint in cold.py``: a client with a breakpoint in the file that does not run the hot code: the global
  trace function sees each call, only frames of cold.py get line events;
- ``breakpoint in hot.py (never hit)``: a breakpoint on a line the workload never reaches, in the hot file:
  every frame of hot.py gets line events, the cost a breakpoint in the busy file has;
- ``debugpy idle``: ``python -m debugpy --listen 127.0.0.1:0 main.py``, no client (debugpy from PyPI).

Each process runs the workload ``--repeat`` times and reports its fastest run (the hot-file breakpoint runs it
once: it is slow enough). The ratio is a contender's time over plain python's in the same round; the median
over rounds is printed with the spread. The last column says whether a trace function was installed while the
workload ran (``sys.gettrace()``): with no client, or no breakpoint, there is none, so the program runs as fast
as without the inspector, whatever the noise of the machine says. The machine is shared: trust the ratios more than the milliseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# bench/ is sys.path[0] for this script, and bench/secrets.py would shadow the standard library's secrets
_HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent / "plugins/debug/tests"))
from inspector_client import Client, Program, rt_environ  # noqa: E402 - after the sys.path set-up above

HOT = """\
class Point:
    def __init__(self, x):
        self.x = x

    def moved(self, by):
        return Point(self.x + by)


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def numbers(n):
    for i in range(n):
        yield i * 2


def work():
    point = Point(0)
    for i in range(200_000):
        point = point.moved(1)
    total = sum(numbers(300_000))
    never = False
    if never:
        print("never reached")  # hot never line
    return fib(24) + point.x + total
"""

COLD = """\
def setup():
    value = 41  # cold line
    return value + 1
"""

MAIN = """\
import sys
import time

import cold
import hot

cold.setup()
timings = []
for _ in range(int(sys.argv[1])):
    start = time.perf_counter()
    hot.work()
    timings.append(time.perf_counter() - start)
print("elapsed", min(timings), flush=True)
print("tracing", sys.gettrace() is not None, flush=True)
"""


def _write(folder: Path) -> Path:
    (folder / "hot.py").write_text(HOT)
    (folder / "cold.py").write_text(COLD)
    main = folder / "main.py"
    main.write_text(MAIN)
    return main


TRACING: dict[str, bool] = {}  # contender -> was a trace function installed at the end of the workload


def _elapsed(stdout: str, name: str) -> float:
    TRACING[name] = "tracing True" in stdout
    for line in stdout.splitlines():
        if line.startswith("elapsed "):
            return float(line.split()[1])
    raise RuntimeError(f"no timing in the output: {stdout!r}")


def _run_plain(name: str, command: list[str], cwd: Path) -> float:
    result = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, env=rt_environ(), check=True, timeout=300
    )
    return _elapsed(result.stdout, name)


def _line(path: Path, marker: str) -> int:
    return next(i for i, text in enumerate(path.read_text().splitlines()) if marker in text)


def _run_with_client(name: str, main: Path, repeat: str, breakpoint_file: str | None, marker: str) -> float:
    program = Program(
        [sys.executable, "-m", "rt", "run", "--inspect-wait=127.0.0.1:0", str(main), repeat], main.parent
    )
    try:
        client = Client(program.url())
        for method in ("Inspector.enable", "Runtime.enable", "Debugger.enable"):
            client.call(method)
        client.call("Debugger.setBreakpointsActive", active=True)
        if breakpoint_file is not None:
            path = main.parent / breakpoint_file
            client.call(
                "Debugger.setBreakpointByUrl", url=str(path), lineNumber=_line(path, marker), columnNumber=0
            )
        client.call("Inspector.initialized")
        if breakpoint_file == "cold.py":  # it is hit once, before the timed part
            client.paused()
            client.call("Debugger.resume")
        program.wait(300)
        client.close()
        return _elapsed(program.stdout, name)
    finally:
        program.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3, help="workload runs per process; the fastest counts")
    options = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        script = _write(Path(tmp))
        cwd = script.parent
        n = str(options.repeat)
        contenders = {
            "python": lambda: _run_plain("python", [python, str(script), n], cwd),
            "rt run": lambda: _run_plain("rt run", [python, "-m", "rt", "run", str(script), n], cwd),
            "--inspect, no client": lambda: _run_plain(
                "--inspect, no client",
                [python, "-m", "rt", "run", "--inspect=127.0.0.1:0", str(script), n],
                cwd,
            ),
            "client, no breakpoint": lambda: _run_with_client("client, no breakpoint", script, n, None, ""),
            "breakpoint in cold.py": lambda: _run_with_client(
                "breakpoint in cold.py", script, n, "cold.py", "# cold line"
            ),
            "breakpoint in hot.py (never hit)": lambda: _run_with_client(
                "breakpoint in hot.py (never hit)", script, "1", "hot.py", "# hot never line"
            ),
            "debugpy idle": lambda: _run_plain(
                "debugpy idle", [python, "-m", "debugpy", "--listen", "127.0.0.1:0", str(script), n], cwd
            ),
        }
        times: dict[str, list[float]] = {name: [] for name in contenders}
        for round_number in range(options.rounds):
            for name, run in contenders.items():
                times[name].append(run())
            print(f"round {round_number + 1}/{options.rounds} done", file=sys.stderr)
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {options.rounds} rounds, "
        f"{time.strftime('%Y-%m-%d')}"
    )
    print(f"{'contender':36} {'median ms':>10} {'x python':>9} {'spread':>14}  trace function installed")
    for name, values in times.items():
        ratios = [value / base for value, base in zip(values, times["python"], strict=True)]
        print(
            f"{name:36} {statistics.median(values) * 1000:10.1f} {statistics.median(ratios):9.2f} "
            f"{min(ratios):6.2f}-{max(ratios):<6.2f}  {'yes' if TRACING.get(name) else 'no'}"
        )
    print(json.dumps({name: statistics.median(values) for name, values in times.items()}), file=sys.stderr)


if __name__ == "__main__":
    main()
