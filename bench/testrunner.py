"""Benchmark of `rt test` against pytest, run on demand (not part of the tests).

    uv run python bench/testrunner.py [--repeat 3] [--skip-pytest-asyncio] [--python .tox/testrunner/bin/python]

Cases (issue 6):
  (a) 5,000 trivial tests in 50 files         target: rt at most 0.35x pytest's wall time
  (b) one trivial test (start-up)             target: rt at most 0.5x pytest's wall time
  (c) 400 async tests each sleeping 50 ms     target: `rt test --concurrent` under 2 s
  (e) real projects' suites (bench/realsuites.py: toolz, itsdangerous, more-itertools, cachetools, pluggy from
      PyPI sdists; run it directly for --floor and --repeat)
                                              target: rt at most 0.33x pytest's wall time, identical outcomes
      (pytest runs them with pytest-asyncio, installed for this run only with `uv run --with`)
  (d) coverage cost (issue 16): 1,000 tests in 20 files calling code in 20 modules, each runner with and
      without coverage: `rt test --coverage` (coverage.py, text table) against `pytest --cov=pkg` (pytest-cov,
      term report), the same measurement scope; the overhead of each and rt --coverage / pytest --cov.
      `--cases d` runs only this one.

(a) and (b) use the very same files for both runners (`*_test.py` with plain `def test_*(): assert ...`).
Every command runs `--repeat` times as a fresh process (start-up: 3x as many); the best and the median wall
times are printed, and ratios and targets use the best: the machine is shared, and the best run is the one
least disturbed by other work. pytest is measured
twice: as installed in this environment (its entry-point plugins load: hypothesis, anyio, rt's fixtures) and
with PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 (bare pytest); ratios are given against both, and the targets are
judged against bare pytest, the stricter of the two.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

# output-changing variables, and PYTHONDONTWRITEBYTECODE: without .pyc files rt's own modules would be
# compiled on every start while pytest's (in site-packages) are not
SCRUBBED = ("AGENT", "CLAUDECODE", "REPL_ID", "GITHUB_ACTIONS", "PYTHONDONTWRITEBYTECODE")


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RT_") and k not in SCRUBBED}
    env.update(extra)
    return env


def wall_time(command: Sequence[str], cwd: Path, env: dict[str, str], expect_ok: bool = True) -> float:
    started = time.perf_counter()
    completed = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    elapsed = time.perf_counter() - started
    if expect_ok and completed.returncode != 0:
        raise SystemExit(
            f"command failed ({completed.returncode}): {' '.join(command)}\n"
            f"{completed.stdout[-2000:]}\n{completed.stderr[-2000:]}"
        )
    return elapsed


@dataclasses.dataclass
class Timing:
    best: float
    median: float


def timing(command: Sequence[str], cwd: Path, env: dict[str, str], repeat: int, cold: bool = False) -> Timing:
    """``cold``: delete rt's compiled-test-file cache before each run (pytest keeps its own .pyc cache)."""
    times = []
    for _ in range(repeat):
        if cold:
            for cached in cwd.glob("__pycache__/*rt-test*"):
                cached.unlink()
        times.append(wall_time(command, cwd, env))
    return Timing(min(times), statistics.median(times))


def write_many(directory: Path) -> None:
    for file_index in range(50):
        lines = []
        for test_index in range(100):
            lines.append(f"def test_{test_index}():\n    assert {test_index} + 1 == {test_index + 1}\n")
        (directory / f"mod{file_index:02d}_test.py").write_text("\n".join(lines))


def write_one(directory: Path) -> None:
    (directory / "one_test.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")


def write_async(rt_dir: Path, pytest_dir: Path) -> None:
    rt_lines = ["import anyio\n"]
    py_lines = ["import asyncio\n", "import pytest\n"]
    for index in range(400):
        rt_lines.append(f"async def test_sleep_{index}():\n    await anyio.sleep(0.05)\n")
        py_lines.append(
            f"@pytest.mark.asyncio\nasync def test_sleep_{index}():\n    await asyncio.sleep(0.05)\n"
        )
    (rt_dir / "sleep_test.py").write_text("\n".join(rt_lines))
    (pytest_dir / "sleep_test.py").write_text("\n".join(py_lines))


def write_coverage_suite(directory: Path) -> None:
    package = directory / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for index in range(20):
        (package / f"mod{index:02d}.py").write_text(
            "def work(n):\n    total = 0\n    for i in range(n):\n        if i % 3:\n            total += i\n"
            "        else:\n            total -= 1\n    return total\n\n\n"
            "def unused():\n    return [i * i for i in range(10)]\n"
        )
        tests = [f"from pkg import mod{index:02d} as m\n"]
        tests.extend(f"def test_{t}():\n    assert m.work({t % 50}) == m.work({t % 50})\n" for t in range(50))
        (directory / f"mod{index:02d}_test.py").write_text("\n".join(tests))


def coverage_case(
    rt_cmd: list[str], pytest_cmd: list[str], root: Path, env: dict[str, str], repeat: int
) -> str:
    directory = root / "d"
    directory.mkdir()
    write_coverage_suite(directory)
    wall_time(rt_cmd, directory, env)
    rt_plain = timing(rt_cmd, directory, env, repeat)
    rt_cov = timing([*rt_cmd, "--coverage"], directory, env, repeat)
    py_plain = timing(pytest_cmd, directory, env, repeat)
    py_cov = timing([*pytest_cmd, "--cov=pkg", "--cov-report=term"], directory, env, repeat)
    print("(d) coverage: 1,000 tests in 20 files over 20 modules")
    print(row("pytest", py_plain, {}))
    print(row("pytest --cov=pkg (pytest-cov)", py_cov, {"pytest": py_plain}))
    print(row("rt test", rt_plain, {"pytest": py_plain}))
    print(row("rt test --coverage", rt_cov, {"rt test": rt_plain, "pytest --cov": py_cov}))
    return (
        f"(d) coverage: rt --coverage {rt_cov.best:.3f} s = {rt_cov.best / py_cov.best:.3f}x pytest --cov "
        f"({py_cov.best:.3f} s); overhead of coverage: rt +{rt_cov.best - rt_plain.best:.3f} s, "
        f"pytest +{py_cov.best - py_plain.best:.3f} s"
    )


def row(label: str, measured: Timing, versus: dict[str, Timing]) -> str:
    ratios = "  ".join(f"{measured.best / other.best:6.3f}x {name}" for name, other in versus.items())
    return f"  {label:<42} best {measured.best:7.3f} s  median {measured.median:7.3f} s  {ratios}"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-pytest-asyncio", action="store_true", help="(c): measure rt only")
    parser.add_argument("--cases", default="abcd", help="which cases to run (default abcd)")
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="interpreter of the environment to measure (default: this one, the editable workspace); e.g. "
        ".tox/testrunner/bin/python after `uv run tox -e testrunner --notest` for rt as a user installs it",
    )
    options = parser.parse_args()
    if options.repeat < 1:
        parser.error("--repeat must be 1 or more")
    python = os.path.abspath(options.python)  # not resolve(): a venv's python is a symlink out of the venv
    # the `rt` console script, as users run it (`python -m rt` adds runpy's start-up on top)
    script = Path(python).with_name("rt")
    rt_cmd = [str(script), "test"] if script.exists() else [python, "-m", "rt", "test"]
    pytest_cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    env = environment()
    bare = environment(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    print(
        f"rt test vs pytest -- {options.repeat} fresh processes per command; {os.cpu_count()} CPUs; "
        "numbers taken while other work may be running on the machine"
    )
    verdicts: list[str] = []
    if "e" in options.cases:
        sys.path.insert(0, str(Path(__file__).parent))
        import realsuites

        print("(e) real suites")
        status = realsuites.main(["--repeat", str(options.repeat)])
        verdicts.append(f"(e) real suites: outcomes {'identical' if status == 0 else 'DIFFER'}")
    with tempfile.TemporaryDirectory(prefix="rt-bench-") as tmp:
        root = Path(tmp)
        if "d" in options.cases:
            verdicts.append(coverage_case(rt_cmd, pytest_cmd, root, env, options.repeat))
        for case, writer, target, repeat in (
            (c, w, t, r)
            for c, w, t, r in (
                ("(a) 5,000 trivial tests in 50 files", write_many, 0.35, options.repeat),
                ("(b) one trivial test (start-up)", write_one, 0.5, options.repeat * 3),
            )
            if c[1] in options.cases
        ):
            directory = root / case[1]
            directory.mkdir()
            writer(directory)
            wall_time(rt_cmd, directory, env)  # warm the file-system cache and bytecode of rt itself
            rt_time = timing(rt_cmd, directory, env, repeat)
            py_time = timing(pytest_cmd, directory, env, repeat)
            bare_time = timing(pytest_cmd, directory, bare, repeat)
            print(case)
            print(row("pytest (installed plugins)", py_time, {}))
            print(row("pytest (PYTEST_DISABLE_PLUGIN_AUTOLOAD=1)", bare_time, {}))
            print(row("rt test", rt_time, {"pytest": py_time, "bare pytest": bare_time}))
            if writer is write_many:
                cold = timing(rt_cmd, directory, env, repeat, cold=True)
                print(
                    row(
                        "rt test, no compiled-file cache", cold, {"pytest": py_time, "bare pytest": bare_time}
                    )
                )
            else:
                floor = timing([*rt_cmd[:-1], "--version"], directory, env, repeat)
                print(row("rt --version (kernel start-up alone)", floor, {"bare pytest": bare_time}))
            for name, other in (("pytest as installed", py_time), ("bare pytest", bare_time)):
                ratio = rt_time.best / other.best
                verdicts.append(
                    f"{case}: {ratio:.3f}x {name} (target <= {target}x) "
                    f"{'MET' if ratio <= target else 'MISSED'}"
                )
        if "c" not in options.cases:
            print("\n".join(["", *verdicts]))
            return 0
        rt_dir, py_dir = root / "c-rt", root / "c-pytest"
        rt_dir.mkdir()
        py_dir.mkdir()
        write_async(rt_dir, py_dir)
        rt_time = timing([*rt_cmd, "--concurrent"], rt_dir, env, options.repeat)
        print("(c) 400 async tests sleeping 50 ms")
        versus: dict[str, Timing] = {}
        uv = shutil.which("uv")
        if not options.skip_pytest_asyncio and uv is not None:
            command = [
                uv,
                "run",
                "--quiet",
                "--with",
                "pytest-asyncio",
                "python",
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
            ]
            project_env = environment(UV_PROJECT=str(Path(__file__).resolve().parents[1]))
            wall_time(command, py_dir, project_env)  # let uv build its overlay environment once
            py_time = timing(command, py_dir, project_env, 1)
            print(row("pytest + pytest-asyncio (sequential)", py_time, {}))
            versus["pytest-asyncio"] = py_time
        print(row("rt test --concurrent", rt_time, versus))
        verdicts.append(
            f"(c) 400 async tests: best {rt_time.best:.3f} s, median {rt_time.median:.3f} s "
            f"(target < 2 s) {'MET' if rt_time.best < 2 else 'MISSED'}"
        )
    print("\n".join(["", *verdicts]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
