"""``rt test`` on pytest-style suites: discovery, fixtures, marks, unittest, capture, outcomes (issue 15).

Each test writes a small project into a temporary directory and runs ``rt test`` on it as a user would.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import attrs

_SCRUBBED = ("AGENT", "CLAUDECODE", "REPL_ID", "GITHUB_ACTIONS", "NO_COLOR", "FORCE_COLOR", "PYTEST_ADDOPTS")


@attrs.frozen
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_rt_test(cwd: Path, *args: str, timeout: float = 120) -> Result:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("RT_") and k not in _SCRUBBED}
    completed = subprocess.run(
        [sys.executable, "-m", "rt", "test", *args], cwd=cwd, env=environ, capture_output=True, text=True,
        timeout=timeout, stdin=subprocess.DEVNULL, check=False,
    )
    return Result(completed.returncode, completed.stdout, completed.stderr)

SUMMARY = re.compile(r"^ (\d+) (pass|fail|skip|todo|error|xfail|xpass)$", re.MULTILINE)


def project(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def counts(result: Result) -> dict[str, int]:
    return {kind: int(number) for number, kind in SUMMARY.findall(result.stderr) if int(number)}


def test_system_exit_and_argparse_errors_are_failed_tests(tmp_path: Path) -> None:
    project(tmp_path, {"test_exit.py": """
        import argparse, sys

        def test_exit_zero():
            sys.exit(0)

        def test_argparse():
            argparse.ArgumentParser().parse_args(["--nope"])

        def test_after():
            pass
    """})
    result = run_rt_test(tmp_path)
    assert result.code == 1, result.output
    assert counts(result) == {"pass": 1, "fail": 2}, result.output
    assert "SystemExit" in result.stderr


def test_keyboard_interrupt_stops_the_run_with_a_summary_and_reports(tmp_path: Path) -> None:
    project(tmp_path, {"test_stop.py": """
        def test_first():
            pass

        def test_interrupt():
            raise KeyboardInterrupt

        def test_never_runs():
            pass
    """})
    result = run_rt_test(tmp_path, "--reporter=junit", "--reporter-outfile=out.xml")
    assert result.code == 1, result.output
    assert counts(result) == {"pass": 1, "fail": 1}, result.output
    assert "Interrupted" in result.stderr
    assert "test_never_runs" not in result.stderr
    suites = ET.parse(tmp_path / "out.xml").getroot()
    assert suites.get("tests") == "2"
