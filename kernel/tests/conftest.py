"""Shared helpers for the kernel's tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def run_python(tmp_path: Path):
    """Run Python code in a fresh interpreter (same environment), in an empty directory; returns the result."""

    def run(
        code: str, env: dict[str, str] | None = None, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        from rt.testing import clean_environ

        return subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            cwd=cwd or tmp_path,
            env=clean_environ(env),
            timeout=60,
        )

    return run
