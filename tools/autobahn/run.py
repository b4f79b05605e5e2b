"""Run the Autobahn|Testsuite fuzzing client against ``rt.serve`` and fail on any FAILED or NON-STRICT case.

    uv run python tools/autobahn/run.py [--backend asyncio trio] [--deflate off on] [--cases ci|all|1.*,6.4.*]

For each backend and compression setting it starts ``echo_server.py``, points ``wstest -m fuzzingclient`` at
it, and reads the report (``index.json``): a case whose ``behavior`` or ``behaviorClose`` is ``FAILED`` or
``NON-STRICT`` makes the exit status 1, and each is printed. ``UNIMPLEMENTED`` is accepted only for 12.* and
13.* with compression off (the server then declines permessage-deflate, which those cases report so).

``--cases ci`` (the default, what .ci/run runs) is every case but 9.* (the long performance cases) and 12.*/13.*
except a subset: 12.1.1-12.1.6, 12.2.1-12.2.6, 13.1.1-13.1.6, 13.7.1-13.7.6. ``--cases all`` is every case.

wstest is the Autobahn|Testsuite, a Python 2.7 program. Found as ``$WSTEST``, else ``wstest`` on PATH, else
``~/.local/bin/wstest`` (``python2.7 -m pip install --user autobahntestsuite``); ``.ci/setup-extra`` installs it
where Python 2.7 can be had (pyenv). Without it this script says so and exits 2: it never passes silently.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BAD = ("FAILED", "NON-STRICT")
CI_SUBSET = [
    *[f"12.{group}.{n}" for group in (1, 2) for n in range(1, 7)],
    *[f"13.{group}.{n}" for group in (1, 7) for n in range(1, 7)],
]


def find_wstest() -> list[str] | None:
    """The command that runs wstest, or None."""
    explicit = os.environ.get("WSTEST")
    if explicit:
        return explicit.split()
    found = shutil.which("wstest")
    if found:
        return [found]
    local = Path.home() / ".local" / "bin" / "wstest"
    if local.exists():
        return [str(local)]
    return None


def case_lists(which: str, deflate: bool) -> tuple[list[str], list[str]]:
    """(cases, exclude-cases) for the spec."""
    if which == "all":
        return ["*"], []
    if which == "ci":
        return ["1.*", "2.*", "3.*", "4.*", "5.*", "6.*", "7.*", "10.*", *(CI_SUBSET if deflate else [])], []
    return [c.strip() for c in which.split(",") if c.strip()], []


def start_server(backend: str, deflate: bool) -> tuple[subprocess.Popen[str], int]:
    command = [sys.executable, str(HERE / "echo_server.py"), "--backend", backend]
    if deflate:
        command.append("--deflate")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("PORT "):
        process.kill()
        raise SystemExit(f"the echo server did not start (said {line!r})")
    return process, int(line.split()[1])


def run_one(
    wstest: list[str], backend: str, deflate: bool, which: str, outdir: Path
) -> dict[str, dict[str, str]]:
    """Run the fuzzing client against one server; the report's results for its agent."""
    agent = f"rt-{backend}-{'deflate' if deflate else 'plain'}"
    server, port = start_server(backend, deflate)
    try:
        cases, exclude = case_lists(which, deflate)
        spec = {
            "outdir": str(outdir),
            "servers": [{"agent": agent, "url": f"ws://127.0.0.1:{port}"}],
            "cases": cases,
            "exclude-cases": exclude,
            "exclude-agent-cases": {},
        }
        spec_path = outdir / f"{agent}.json"
        spec_path.write_text(json.dumps(spec, indent=2))
        started = time.monotonic()
        subprocess.run(
            [*wstest, "-m", "fuzzingclient", "-s", str(spec_path)],
            check=True,
            cwd=outdir,
            stdout=subprocess.DEVNULL,
        )
        print(f"{agent}: wstest ran in {time.monotonic() - started:.0f} s", flush=True)
    finally:
        server.kill()
        server.wait()
    report = json.loads((outdir / "index.json").read_text())
    return report[agent]


def judge(results: dict[str, dict[str, str]], deflate: bool) -> tuple[dict[str, int], list[str]]:
    """Counts per behaviour, and one line per bad case."""
    counts: dict[str, int] = {}
    bad: list[str] = []
    for case, result in sorted(results.items(), key=lambda item: [int(p) for p in item[0].split(".")]):
        behaviour, closing = result["behavior"], result["behaviorClose"]
        counts[behaviour] = counts.get(behaviour, 0) + 1
        unimplemented_ok = not deflate and case.split(".")[0] in ("12", "13")
        if behaviour in BAD or closing in BAD or (behaviour == "UNIMPLEMENTED" and not unimplemented_ok):
            bad.append(f"  {case}: {behaviour} (close: {closing})")
    return counts, bad


def report(label: str, results: dict[str, dict[str, str]], deflate: bool) -> bool:
    """Print one run's counts and its bad cases (shared with client_run.py); True when it has any."""
    counts, bad = judge(results, deflate)
    summary = ", ".join(f"{count} {name}" for name, count in sorted(counts.items()))
    print(f"{label}: {summary}", flush=True)
    if bad:
        print("\n".join(bad), flush=True)
    return bool(bad)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", nargs="+", default=["asyncio", "trio"], choices=["asyncio", "trio"])
    parser.add_argument("--deflate", nargs="+", default=["off", "on"], choices=["off", "on"])
    parser.add_argument("--cases", default="ci", help="ci (default), all, or a comma list such as 1.*,6.4.*")
    parser.add_argument("--report", type=Path, help="keep the HTML/JSON report in this directory")
    args = parser.parse_args()
    wstest = find_wstest()
    if wstest is None:
        print(
            "wstest (Autobahn|Testsuite) is not installed. It needs Python 2.7:\n"
            "  PYENV_VERSION=2.7.18 python -m pip install --user autobahntestsuite\n"
            "(.ci/setup-extra does this when pyenv has 2.7.18; Debian 12 itself has no Python 2.7).",
            file=sys.stderr,
        )
        return 2
    failed = False
    with tempfile.TemporaryDirectory(prefix="rt-autobahn-") as scratch:
        for backend in args.backend:
            for setting in args.deflate:
                deflate = setting == "on"
                outdir = (args.report or Path(scratch)) / f"{backend}-{setting}"
                outdir.mkdir(parents=True, exist_ok=True)
                results = run_one(wstest, backend, deflate, args.cases, outdir)
                failed |= report(f"rt.serve on {backend}, compression {setting}", results, deflate)
    print("FAIL: some cases are FAILED or NON-STRICT" if failed else "OK: no FAILED or NON-STRICT case")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
