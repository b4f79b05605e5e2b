"""Fixtures of the rt-csrf tests. The helpers live in csrf_reference.py (a uniquely named module, since
pytest runs with --import-mode=importlib and every plugin's tests share one process)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def csrf(rt_kernel: Any) -> Any:
    """``rt.CSRF`` resolved through a fresh kernel with the installed plugins."""
    import rt

    return rt.CSRF
