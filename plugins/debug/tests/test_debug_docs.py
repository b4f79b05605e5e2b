"""docs/debugging.md cannot drift: its examples run, and print what the page says they print."""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "debugging.md"
DOC_HOME = "/home/me"


def _blocks() -> list[tuple[str, str]]:
    """(language, text) of every fenced block, in order."""
    return re.findall(r"```(\w+)\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL)


def _python_block_starting(marker: str) -> tuple[str, str | None]:
    """The Python block containing ``marker`` and the ``text`` block right after it, if any."""
    blocks = _blocks()
    for index, (language, text) in enumerate(blocks):
        if language == "python" and marker in text:
            following = blocks[index + 1] if index + 1 < len(blocks) else None
            return text, following[1] if following and following[0] in ("text", "console") else None
    raise AssertionError(f"no python block with {marker!r} in {DOC}")


def _run(code: str, directory: Path, *args: str, name: str = "app.py") -> subprocess.CompletedProcess[str]:
    script = directory / name
    script.write_text(code, encoding="utf-8")
    others = sorted({ep.name for ep in importlib.metadata.entry_points(group="rt")} - {"debug"})
    environ = {k: v for k, v in os.environ.items() if not k.startswith("RT_")}
    environ.update({"RT_DISABLE_PLUGINS": ",".join(others), "NO_COLOR": "1"})
    return subprocess.run(
        [sys.executable, "-m", "rt", name, *args],
        cwd=directory,
        capture_output=True,
        text=True,
        check=False,
        env=environ,
        timeout=60,
    )


def _commented_output(code: str) -> str:
    return "".join(line[2:] + "\n" for line in code.splitlines() if line.startswith("# "))


@pytest.mark.parametrize("marker", ["def parse(text):", "class ApiError(Exception):"])
def test_stack_examples_print_what_their_comments_say(tmp_path: Path, marker: str) -> None:
    code, _ = _python_block_starting(marker)
    result = _run(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.replace(str(tmp_path), DOC_HOME) == _commented_output(code)


@pytest.mark.parametrize("marker", ["class Point:", "def load(path):"])
def test_inspect_examples_print_the_block_shown_after_them(tmp_path: Path, marker: str) -> None:
    code, shown = _python_block_starting(marker)
    assert shown is not None
    result = _run(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.replace(str(tmp_path), DOC_HOME) == shown


def test_rt_run_error_report_example(tmp_path: Path) -> None:
    code, shown = _python_block_starting("def divide(a, b):")
    assert shown is not None
    result = _run(code, tmp_path, "1", "0", name="calc.py")
    assert result.returncode == 1
    expected = shown.split("$ rt calc.py 1 0\n", 1)[1].split("$ echo", 1)[0]
    assert result.stderr.replace(str(tmp_path), DOC_HOME) == expected
